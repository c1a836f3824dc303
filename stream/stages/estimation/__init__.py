"""Estimation stages: the per-(CN, core) cost table."""
