"""ZigZag's module paths for the result stages (``zigzag.stages.results.*``)."""
