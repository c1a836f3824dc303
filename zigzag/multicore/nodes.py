"""Computation nodes (CNs) of one layer, as arrays (docs/models/multi-core.md#computation-nodes).

A layer with outer-CN loops ``((d1, n1), (d2, n2), ...)`` is cut into ``N = ∏ ni`` CNs; CN ``t``
takes loop value ``(t // ∏_{j<i} nj) mod ni`` of loop ``i`` (the first loop varies fastest). All
per-CN quantities of a layer are numpy arrays indexed by sub id.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.tiling import TiledLayer
from zigzag.workload.layer import Layer

OPERANDS = ("O", "W", "I")
"""Column order of per-operand arrays; an edge's operand code indexes it."""
INTRA = -1
"""Operand code of an intra-layer edge."""


@dataclass(frozen=True, eq=False)
class LayerCNs:
    """The CNs of one layer.

    ``dims`` = the layer's loop dims followed by its partially relevant dims (``IX``, ``IY``);
    ``start``/``stop`` are ``(N, len(dims))`` int arrays of half-open ranges (pr ranges include
    padding and halo, so they may start below 0). ``tensor_bits[op]`` is Stream's tensor size
    (unclamped ranges, ``O`` at ``O_final``); ``tensor_key[op]`` numbers the distinct tensors of
    the layer (CNs with equal ranges share one tensor, e.g. a conv's weights across row CNs).
    """

    tiled: TiledLayer
    span: dict[str, int]
    outer_loops: tuple[tuple[str, int], ...]
    dims: tuple[str, ...]
    start: np.ndarray
    stop: np.ndarray
    group: np.ndarray
    core: np.ndarray
    produces_final_output: np.ndarray
    tensor_bits: dict[str, np.ndarray]
    tensor_key: dict[str, np.ndarray]
    base_priority: dict[str, int]
    data_produced_unique: np.ndarray
    cn_layer: Layer

    @property
    def id(self) -> int:
        return self.tiled.layer.id

    @property
    def count(self) -> int:
        return len(self.group)

    def column(self, dim: str) -> int:
        return self.dims.index(dim)

    def operand_boxes(self, operand: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(dims, start, stop) of ``operand`` per CN, dims in the operand's equation order."""
        dims = list(self.tiled.layer.operand_dims[operand])
        cols = [self.column(d) for d in dims]
        return dims, self.start[:, cols], self.stop[:, cols]


def generate_cns(tiled: TiledLayer) -> LayerCNs:
    """All CNs of a tiled layer (ranges, group, core, tensors, sizes)."""
    slayer = tiled.layer
    layer = slayer.layer
    loops = tiled.outer_loops()
    span = dict(tiled.sizes)
    for dim, factor in loops:
        span[dim] = span[dim] // factor  # an inter-core remainder is dropped, as Stream does
    count = math.prod(f for _, f in loops)
    sub = np.arange(count, dtype=np.int64)
    pr_dims = tuple(rel.data_dim for rel in layer.relations)
    dims = tuple(tiled.sizes) + pr_dims
    start = np.zeros((count, len(dims)), dtype=np.int64)
    stride = 1
    for i, (dim, factor) in enumerate(loops):
        earlier_same = math.prod(f for d, f in loops[:i] if d == dim)
        value = (sub // stride) % factor
        start[:, dims.index(dim)] += value * span[dim] * earlier_same
        stride *= factor
    stop = start.copy()
    for j, dim in enumerate(tiled.sizes):
        stop[:, j] += span[dim]
    for rel in layer.relations:
        begin = layer.padding.get(rel.data_dim, (0, 0))[0]
        a, b = dims.index(rel.dim_a), dims.index(rel.dim_b)
        j = dims.index(rel.data_dim)
        start[:, j] = -begin + rel.coef_a * start[:, a] + rel.coef_b * start[:, b]
        stop[:, j] = -begin + rel.coef_a * (stop[:, a] - 1) + rel.coef_b * (stop[:, b] - 1) + 1

    group = _groups(tiled, dims, start, stop)
    core = _cores(tiled, group)
    out_ir = slayer.output_ir_dims()
    final = np.ones(count, dtype=bool)
    for dim in out_ir:
        final &= stop[:, dims.index(dim)] >= tiled.sizes[dim]

    tensor_bits, tensor_key = {}, {}
    cache = {entry[0]: entry[1:] for entry in slayer.cache_operands}
    for op, op_dims in layer.operand_dims.items():
        precision = layer.final_output_precision if op == layer.output else layer.precision[op]
        cols = [dims.index(d) for d in op_dims]
        extent = stop[:, cols] - start[:, cols]
        tensor_bits[op] = np.prod(extent, axis=1, dtype=np.int64) * precision
        if op in cache:  # the past cache's part of the operand: what is fetched
            tensor_bits[op] = _cache_bits(
                op_dims, start[:, cols], stop[:, cols], precision, *cache[op]
            )
        boxes = np.concatenate([start[:, cols], stop[:, cols]], axis=1)
        tensor_key[op] = _first_seen_ids(boxes)
    base_priority = {
        op: math.prod(f for d, f in loops if d in layer.irrelevant[op])
        for op in slayer.fetched_operands
    }
    cn_layer = replace(layer, loop_sizes=dict(span))
    produced = int(cn_layer.operand_size_elem(layer.output) * layer.final_output_precision)
    return LayerCNs(
        tiled=tiled,
        span=span,
        outer_loops=tuple(loops),
        dims=dims,
        start=start,
        stop=stop,
        group=group,
        core=core,
        produces_final_output=final,
        tensor_bits=tensor_bits,
        tensor_key=tensor_key,
        base_priority=base_priority,
        data_produced_unique=np.full(count, produced, dtype=np.int64),
        cn_layer=cn_layer,
    )


def _first_seen_ids(rows: np.ndarray) -> np.ndarray:
    """Number equal rows 0, 1, 2 ... in order of first appearance."""
    if len(rows) == 0 or (rows == rows[0]).all():
        return np.zeros(len(rows), dtype=np.int64)
    if len(rows) == len(np.unique(rows[:, 0])):
        return np.arange(len(rows), dtype=np.int64)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse.reshape(-1)].astype(np.int64)


def _groups(tiled: TiledLayer, dims, start, stop) -> np.ndarray:
    """Group id per CN (docs/models/multi-core.md#computation-nodes): CNs with equal inter-core-tiled ranges (mod the intra split) share one."""
    slayer = tiled.layer
    count = len(start)
    if (
        tiled.inter_is_wildcard
        or not tiled.inter_core_tiling
        or (not slayer.constant_operands and len(slayer.mapping.core_allocation) == 1)
    ):
        return np.zeros(count, dtype=np.int64)
    columns = []
    for dim, _ in tiled.inter_core_tiling:
        intra = next((f for d, f in tiled.intra_core_tiling if d == dim), 1)
        period = tiled.sizes[dim] // intra
        j = dims.index(dim)
        columns += [start[:, j] % period, stop[:, j] % period]
    return _first_seen_ids(np.stack(columns, axis=1))


def _cores(tiled: TiledLayer, group: np.ndarray) -> np.ndarray:
    """Core per CN: fixed allocations by group, a single candidate core, else -1 (to be allocated)."""
    entry = tiled.layer.mapping
    if entry.core_allocation_is_fixed:
        if len(group) and group.max() >= entry.nb_fixed_groups:
            raise InputError(
                None,
                f"mapping entry '{entry.name}' core_allocation",
                f"layer {tiled.layer.id} has {group.max() + 1} groups but the fixed allocation lists "
                f"{entry.nb_fixed_groups}; list one core (or one tuple of cores) per group",
            )
        lookup = np.array(
            [entry.core_of_group(g) for g in range(int(group.max()) + 1 if len(group) else 0)]
        )
        return lookup[group] if len(group) else group.copy()
    if len(entry.core_allocation) == 1:
        return np.full(len(group), entry.core_allocation[0], dtype=np.int64)
    return np.full(len(group), -1, dtype=np.int64)


def _cache_bits(
    op_dims,
    start: np.ndarray,
    stop: np.ndarray,
    precision: int,
    share: float,
    token_dim: str,
    past: int,
    total: int,
) -> np.ndarray:
    """Bits of the past KV cache in each CN's range of an operand reading it: the range's tokens
    before ``past`` (of ``total``) along ``token_dim``, times the cache's share of the other dims
    (below 1 with grouped-query heads); the range's elements times ``share`` when the token dim is
    not known."""
    extent = np.maximum(stop - start, 0)
    if not token_dim:
        return np.round(np.prod(extent, axis=1) * precision * share).astype(np.int64)
    j = op_dims.index(token_dim)
    tokens = np.clip(stop[:, j], 0, past) - np.clip(start[:, j], 0, past)
    other = np.prod(np.delete(extent, j, axis=1), axis=1)
    return np.round(other * tokens * precision * (share * total / past)).astype(np.int64)
