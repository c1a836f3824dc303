"""ZigZag's ``zigzag.cost_model`` package: the names of its cost-model results."""
