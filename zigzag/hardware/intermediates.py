"""Intermediates of an LLM step kept on chip (docs/models/per-token.md#intermediates-kept-on-chip).

Without data locality every layer reads its inputs from, and writes its output to, the top memory of
its hierarchy (DRAM). In a transformer block most layers only feed the next one: a projection feeds the
rotary embedding or the activation function, a softmax's steps feed each other. For layers whose
operands carry roles (an LLM step: generated from a configuration, or an ONNX export imported with every
operator), an activation passed from a layer to the layer processed right after it stays in the
on-chip memory just below the top that both hold it in, when one of the two runs on the vector unit
and it fits there (size x instances, one instance for a memory the vector unit shares), whole with
every other operand of the reading or writing layer that passes through that memory: the reader is
searched without the memories above it for that operand, and the writer too when every reader reads
it there. Weights, the
KV cache, the step's first inputs and its outputs still come from and go to the top memory; so does an
activation read later again (the residual stream), and one passed between two matrix products. This is
ZigZag's inter-layer data locality (``zigzag.hardware.data_locality``) restricted to consecutive layers
around the vector unit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from zigzag.hardware.accelerator import Accelerator, Memory
from zigzag.hardware.vector import VECTOR_UNIT, compute_unit, on_vector_unit
from zigzag.workload.layer import Layer

ACTIVATION = "activation"


@dataclass(frozen=True)
class KeptTensor:
    """An activation read on chip: ``reader``'s ``operand``, written by ``writer``, held in ``memory``."""

    writer: int
    reader: int
    operand: str
    memory: str
    bits: int


def _hierarchy(layer: Layer, accelerator: Accelerator, operand: str) -> list[Memory]:
    """The memories holding ``operand`` of ``layer`` on the unit it runs on, innermost first."""
    if compute_unit(layer, accelerator) == VECTOR_UNIT:
        layer, accelerator = on_vector_unit(layer, accelerator)
    memory_operand = layer.memory_operand(operand)
    return [m for m in accelerator.memories if memory_operand in m.operands]


def _capacity(accelerator: Accelerator, name: str) -> int:
    """Bits ``name`` holds for a tensor: its size times its instances, or its size alone when the vector
    unit shares it (the vector view sees one instance serving all lanes)."""
    memory = accelerator.memory[name]
    unit = accelerator.vector_unit
    if unit is not None and name in unit.memories:
        return memory.size
    return memory.size * accelerator.unroll_count(memory)


def _needs(layer: Layer, accelerator: Accelerator, memory: str) -> int:
    """Bits of every operand of ``layer`` passing through ``memory``, whole: what it must hold when its
    trimmed operands live there whole and the others pass through (a bound that leaves their tiles room)."""
    bits = 0
    for operand in layer.operands:
        if memory in {m.name for m in _hierarchy(layer, accelerator, operand)}:
            output = operand == layer.output
            bits += _output_bits(layer) if output else layer.operand_size_bit(operand)
    return bits


def _output_bits(layer: Layer) -> int:
    return layer.operand_size_elem(layer.output) * layer.final_output_precision


def kept_tensors(layers: Sequence[Layer], accelerator: Accelerator) -> list[KeptTensor]:
    """The activations passed between consecutive ``layers`` (processing order) that stay on chip."""
    by_id = {layer.id: layer for layer in layers}
    kept = []
    for previous, layer in zip(layers, layers[1:]):
        if not layer.operand_roles or not previous.operand_roles:
            continue
        if previous.operand_roles.get(previous.output) != ACTIVATION:
            continue
        if VECTOR_UNIT not in (
            compute_unit(previous, accelerator),
            compute_unit(layer, accelerator),
        ):
            continue  # two matrix products: each reads and writes its top memory, as in ZigZag
        for operand, source in layer.input_operand_source.items():
            if source != previous.id or layer.operand_roles.get(operand) != ACTIVATION:
                continue
            reads, writes = (
                _hierarchy(layer, accelerator, operand),
                _hierarchy(previous, accelerator, previous.output),
            )
            if len(reads) < 2 or len(writes) < 2 or reads[-1].name != writes[-1].name:
                continue
            memory = reads[-2].name
            bits = max(layer.operand_size_bit(operand), _output_bits(previous))
            if (
                memory in accelerator.memory
                and memory in {m.name for m in writes[:-1]}
                and bits <= _capacity(accelerator, memory)
            ):
                kept.append(KeptTensor(previous.id, layer.id, operand, memory, bits))
    return _fitting(kept, by_id, accelerator)


def _fitting(kept: list[KeptTensor], by_id: dict, accelerator: Accelerator) -> list[KeptTensor]:
    """``kept`` without the tensors of a reader whose on-chip operands together overflow the memory, or
    share a memory operand with an operand that is not on chip (both would leave the top memory)."""
    result = []
    by_reader: dict[int, list[KeptTensor]] = {}
    for k in kept:
        by_reader.setdefault(k.reader, []).append(k)
    for reader, mine in by_reader.items():
        layer = by_id[reader]
        on_chip = {k.operand for k in mine}
        linked = {layer.memory_operand(k.operand) for k in mine}
        shared = [op for op in layer.inputs if layer.memory_operand(op) in linked]
        memories = {k.memory for k in mine}
        if set(shared) <= on_chip and all(
            _needs(layer, accelerator, m) <= _capacity(accelerator, m) for m in memories
        ):
            result.extend(mine)
    return result


def on_chip_accelerators(
    layers: Sequence[Layer], accelerator: Accelerator
) -> tuple[dict[int, Accelerator], list[KeptTensor]]:
    """Layer id -> the accelerator it is searched on (``accelerator`` itself unless some operand stays on
    chip; layers trimmed alike share one object), and the tensors kept on chip."""
    kept = kept_tensors(layers, accelerator)
    by_id = {layer.id: layer for layer in layers}
    tops: dict[int, dict[str, str]] = {}  # layer id -> memory operand -> its new top memory
    for k in kept:
        reader = by_id[k.reader]
        tops.setdefault(k.reader, {})[reader.memory_operand(k.operand)] = k.memory
    readers: dict[int, set[int]] = {}  # layer id -> the layers reading its output
    for other in layers:
        for source in other.input_operand_source.values():
            readers.setdefault(source, set()).add(other.id)
    by_writer: dict[int, list[KeptTensor]] = {}
    for k in kept:
        by_writer.setdefault(k.writer, []).append(k)
    for writer, mine in by_writer.items():
        layer = by_id[writer]
        memory_operand = layer.memory_operand(layer.output)
        inputs_there = [op for op in layer.inputs if layer.memory_operand(op) == memory_operand]
        memory = mine[0].memory
        if (
            len(mine) == len(readers.get(writer, set()) - {writer})
            and not inputs_there
            and _needs(layer, accelerator, memory) <= _capacity(accelerator, memory)
        ):
            tops.setdefault(writer, {})[memory_operand] = memory
    result = {}
    for layer in layers:
        key = tuple(sorted(tops.get(layer.id, {}).items()))
        result[layer.id] = _trimmed(accelerator, key) if key else accelerator
    return result, kept


@lru_cache(maxsize=256)
def _trimmed(accelerator: Accelerator, tops: tuple[tuple[str, str], ...]) -> Accelerator:
    """``accelerator`` with each memory operand of ``tops`` ((memory operand, its top memory) pairs) removed
    from the memories above its top; one object per pair list, so that layers trimmed alike, in this step
    and in the next one evaluated (a context sweep), share their searches."""
    tops = dict(tops)
    memories = []
    for memory in accelerator.memories:
        drop = {
            op
            for op, top in tops.items()
            if op in memory.operands and _above(accelerator, memory.name, top, op)
        }
        if drop and len(drop) < len(memory.operands):
            memory = _without(memory, drop)
        memories.append(memory)
    return dataclasses.replace(accelerator, memories=tuple(memories))


def _above(accelerator: Accelerator, name: str, top: str, memory_operand: str) -> bool:
    names = [m.name for m in accelerator.memories if memory_operand in m.operands]
    return names.index(name) > names.index(top)


def _without(memory: Memory, operands: set[str]) -> Memory:
    ports = tuple(
        dataclasses.replace(port, allocation=kept)
        for port in memory.ports
        if (kept := tuple(a for a in port.allocation if a[0] not in operands))
    )
    return dataclasses.replace(
        memory, operands=tuple(op for op in memory.operands if op not in operands), ports=ports
    )
