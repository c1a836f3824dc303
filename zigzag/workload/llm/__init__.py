"""Language-model workloads built from a model configuration (no export needed)."""
