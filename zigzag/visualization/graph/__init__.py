"""ZigZag's graph drawing helpers (``zigzag.visualization.graph.*``)."""
