"""Allocation stages: the genetic search (the constraint optimisation is not available)."""
