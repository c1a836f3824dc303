"""Whether a whole LLM step fits the memory that holds it (docs/models/per-token.md#capacity-the-whole-step-must-fit).

A layer whose operands do not fit a memory is refused by its mapping search; a step can fit layer by
layer and still not as a whole. Its weights, its KV cache at the step's context and batch and the
activations alive at once all live in the outermost memory of their operands (DRAM in the
examples) for the whole step:

* weights: every weight input, once;
* KV cache: the bytes one token adds (the appends' outputs) times batch x (context + tokens), or,
  without appends, the cache attention reads; a state-space model's recurrent state (role ``state``) is
  held beside it at its fixed size (what the step reads of it), whatever the context;
* activations: the largest sum, over one layer, of its activation inputs and output (what is alive
  while that layer runs).

:func:`step_holdings` gives these per outermost memory; :func:`check_capacity` raises a
:class:`CapacityError` when their sum exceeds the memory's size (all instances).
"""

from __future__ import annotations

from dataclasses import dataclass

from zigzag.errors import InputError
from zigzag.workload.footprint import (
    footprint,
    kv_bytes_per_token,
    operand_bytes,
    operand_role,
    state_bytes,
)


class CapacityError(InputError):
    """A step whose weights, KV cache and activations do not fit the memory that holds them."""


@dataclass(frozen=True)
class Holding:
    """What one outermost memory holds during the step, in bytes, and its size."""

    memory: str
    capacity_bytes: float
    weights_bytes: float
    kv_cache_bytes: float
    activations_bytes: float
    #: a state-space model's recurrent state (fixed size, updated in place)
    state_bytes: float = 0.0

    @property
    def needed_bytes(self) -> float:
        return self.weights_bytes + self.kv_cache_bytes + self.activations_bytes + self.state_bytes

    @property
    def fits(self) -> bool:
        return self.needed_bytes <= self.capacity_bytes


def _top(accelerator, layer, operand) -> str:
    return accelerator.top_memory(layer.memory_operand(operand)).name


def step_holdings(layers, accelerators, inference: dict) -> tuple[Holding, ...]:
    """Per outermost memory holding part of the step: its weights, KV cache and live activations.
    ``accelerators``: layer id -> accelerator; ``inference``: batch, tokens, context."""
    weights: dict[str, float] = {}
    kv_memory: str | None = None
    state_memory: str | None = None
    live: dict[str, float] = {}
    for layer in layers:
        accelerator = accelerators[layer.id]
        alive: dict[str, float] = {}
        for operand in (*layer.inputs, layer.output):
            role = operand_role(layer, operand)
            name = _top(accelerator, layer, operand)
            if role == "weight" and operand != layer.output:
                weights[name] = weights.get(name, 0.0) + operand_bytes(layer, operand)
            elif role == "kv_cache":
                kv_memory = kv_memory or name
            elif role == "state":
                state_memory = state_memory or name
            else:
                alive[name] = alive.get(name, 0.0) + operand_bytes(layer, operand)
        for name, size in alive.items():
            live[name] = max(live.get(name, 0.0), size)
    fp = footprint(layers)
    per_token = kv_bytes_per_token(fp, inference)
    state = state_bytes(fp) or 0.0
    kv_total = 0.0
    if per_token is not None and kv_memory is not None:
        kv_total = per_token * inference["batch"] * (inference["context"] + inference["tokens"])
    accelerator = next(iter(accelerators.values()))
    names = [
        m.name for m in accelerator.memories if m.name in {*weights, *live, kv_memory, state_memory}
    ]
    return tuple(
        Holding(
            name,
            accelerator.memory[name].size * accelerator.unroll_count(accelerator.memory[name]) / 8,
            weights.get(name, 0.0),
            kv_total if name == kv_memory else 0.0,
            live.get(name, 0.0),
            state if name == state_memory else 0.0,
        )
        for name in names
    )


def format_bytes(value: float) -> str:
    """``14.96 GiB``: bytes in the largest binary unit below them."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value:.4g} B"


def check_capacity(layers, accelerators, inference: dict, *, source: str | None = None) -> None:
    """A :class:`CapacityError` naming the model, the bytes needed and the memory's size when a
    memory cannot hold what the step keeps in it."""
    for held in step_holdings(layers, accelerators, inference):
        if held.fits:
            continue
        model = inference.get("model") or "the model"
        raise CapacityError(
            source,
            f"memories.{held.memory}.size",
            f"{model} ({inference['phase']}, batch {inference['batch']}, context "
            f"{inference['context']}) needs {format_bytes(held.needed_bytes)} in {held.memory} "
            f"(weights {format_bytes(held.weights_bytes)}, "
            + (  # a state-space step without a KV cache names its state only
                f"KV cache {format_bytes(held.kv_cache_bytes)}, "
                if held.kv_cache_bytes or not held.state_bytes
                else ""
            )
            + (f"state {format_bytes(held.state_bytes)}, " if held.state_bytes else "")
            + f"activations {format_bytes(held.activations_bytes)}) but {held.memory} holds "
            f"{format_bytes(held.capacity_bytes)}; use fewer bits (llm.precision), fewer layers, "
            f"a smaller batch or context, or a larger {held.memory}",
        )
