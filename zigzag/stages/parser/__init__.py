"""ZigZag's module paths for the input parser stages (``zigzag.stages.parser.*``)."""
