"""Stream's stage modules (``stream.stages.<group>.<module>``), over :mod:`zigzag.multicore.stages`."""
