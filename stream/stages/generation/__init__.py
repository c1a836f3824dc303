"""Generation stages: layer stacks, tiling, the tiled (CN) workload, the scheduling order."""
