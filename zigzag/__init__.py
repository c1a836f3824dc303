"""ZigZag-compatible analytical cost model and mapping search for DNN accelerators."""

__version__ = "0.1.0"
