"""ZigZag's result printing and plotting helpers (``zigzag.visualization.results.*``)."""
