"""Allocation stages: the genetic search and the constraint optimisation."""
