"""ZigZag's seed-era (2022-23) module paths, ``zigzag.classes.*``, kept so that scripts written
from that era's documentation run unchanged (docs/compat/zigzag.md)."""
