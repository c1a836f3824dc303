"""Multi-core accelerators (Stream): computation nodes, cost table, scheduler."""
