"""Bytes of weights, of the KV cache and of a recurrent state in a workload's layers, from their operands' roles.

A layer may name each operand's role (``Layer.operand_roles``: ``weight``, ``activation``, ``kv_cache`` or
``state``; layers made from a model configuration or an LLM export do). A KV cache grows by the tokens each step
appends; a state (a state-space model's) is updated in place and keeps its size. A layer without roles
counts its operand ``W`` as weights when no other layer produces it (an ONNX initializer, or
``operand_source`` pointing at the layer itself in a workload file), and has no KV cache.
"""

from __future__ import annotations

from dataclasses import dataclass


def operand_role(layer, operand: str) -> str | None:
    """``weight``, ``activation``, ``kv_cache``, ``state`` or None (unknown) for one operand of ``layer``."""
    roles = getattr(layer, "operand_roles", None)
    if roles:
        return roles.get(operand)
    if operand == "W" and operand != layer.output and operand in layer.constant_operands:
        return "weight"
    return None


def operand_bytes(layer, operand: str) -> float:
    """Bytes of the whole operand (its footprint over the layer's loops, at its precision; the
    output at its final precision, as it is stored)."""
    if operand == layer.output:
        return layer.operand_size_elem(operand) * layer.final_output_precision / 8
    return layer.operand_size_bit(operand) / 8


@dataclass(frozen=True)
class Footprint:
    """Weights read, KV cache read and written, and state read and written by a list of layers, in bytes."""

    weights: float
    kv_read: float
    kv_written: float
    state_read: float = 0.0
    state_written: float = 0.0


def footprint(layers) -> Footprint:
    """Sum over ``layers``: weight inputs, kv_cache inputs (reads) and outputs (appends), state inputs and
    outputs (in-place updates)."""
    weights = kv_read = kv_written = state_read = state_written = 0.0
    for layer in layers:
        for operand in layer.inputs:
            role = operand_role(layer, operand)
            if role == "weight":
                weights += operand_bytes(layer, operand)
            elif role == "kv_cache":
                kv_read += operand_bytes(layer, operand)
            elif role == "state":
                state_read += operand_bytes(layer, operand)
        out = operand_role(layer, layer.output)
        if out == "kv_cache":
            kv_written += operand_bytes(layer, layer.output)
        elif out == "state":
            state_written += operand_bytes(layer, layer.output)
    return Footprint(weights, kv_read, kv_written, state_read, state_written)


def kv_bytes_per_token(fp: Footprint, inference: dict) -> float | None:
    """KV-cache bytes one token adds (all layers): the appends' bytes over the tokens they write
    (batch x tokens); without appends, the cache read over the positions it spans (batch x
    (context + tokens)); None when no operand is a KV cache."""
    if fp.kv_written > 0:
        return fp.kv_written / (inference["batch"] * inference["tokens"])
    if fp.kv_read > 0:
        return fp.kv_read / (inference["batch"] * (inference["context"] + inference["tokens"]))
    return None


def state_bytes(fp: Footprint) -> float | None:
    """Bytes of the recurrent state a step holds (all layers, all sequences): what it reads of it, each
    state read once per step whatever the context; None when no operand is a state."""
    return fp.state_read if fp.state_read > 0 or fp.state_written > 0 else None
