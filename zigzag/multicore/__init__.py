"""Stream: multi-core accelerators, computation nodes, their per-core cost and their schedule."""
