"""Parsing stages: accelerator and ONNX model."""
