"""The computation-node (CN) graph: every CN and dependency edge as flat numpy arrays.

``build_cn_graph`` runs Stream's generation steps (layer stacks, tiling, CNs, edges) on a
parsed workload; ``save_cn_graph`` / ``load_cn_graph`` store it as one ``.npz`` file, so the
workflow can hand it from rule to rule.

Indexing: CN ``i`` (``0 <= i < len(graph)``) is sorted by ``(layer, sub id)``; edge ``e`` runs
``edge_src[e] -> edge_dst[e]`` (CN indices). See ``CNGraph`` for every field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import networkx as nx
import numpy as np

from zigzag.errors import InputError
from zigzag.io.atomic import atomic_target
from zigzag.notes import grouped_layer_warnings
from zigzag.mapping.entry import MappingEntry as CoreMappingEntry
from zigzag.multicore.edges import inter_layer_edges, intra_layer_edges
from zigzag.multicore.nodes import INTRA, OPERANDS, LayerCNs, generate_cns
from zigzag.multicore.cn_limit import check_cn_count
from zigzag.multicore.tiling import SeedTiling, TiledLayer, layer_stacks, tile_layer
from zigzag.multicore.workload import StreamWorkload
from zigzag.workload.layer import Layer
from zigzag.workload.workload import build_layer

FORMAT = "zigzag-stream-cn-graph/1"


@dataclass(frozen=True)
class LayerInfo:
    """What the CNs of one computation layer share (all plain data, stored in the file).

    ``sizes`` are the layer's loop sizes after tiling (a non-dividing intra-core factor rounds
    a size up), ``span`` the loop sizes of each CN, ``dims`` the loop dims then the partially
    relevant dims (``IX``/``IY``), ``zigzag_operand_bits`` ZigZag's operand sizes of one CN
    (pr dims clamped to the input, ``O`` at partial-sum precision: used for capacity checks),
    ``cn_layer_spec`` the workload-YAML form of one CN as a single-core layer.
    ``constant_operands`` are the operands fetched from where constants live: the layer's own, then
    its ``cache_operands`` (operand -> share of its elements that are a decode step's past KV cache,
    read from where the cache lives; the rest, the new token, comes from the operand's source);
    ``gathered_operands``: those of them that are expert weights gathered per (token, expert) pair, not a
    KV cache (their share: the distinct experts; they are weights in the DRAM-read split).
    """

    id: int
    name: str
    op_type: str
    type: str
    dims: tuple[str, ...]
    sizes: dict[str, int]
    span: dict[str, int]
    operand_dims: dict[str, tuple[str, ...]]
    precision: dict[str, int]
    constant_operands: tuple[str, ...]
    input_operand_source: dict[str, int]
    core_allocation: tuple[int, ...]
    core_allocation_is_fixed: bool
    intra_core_tiling: tuple
    inter_core_tiling: tuple
    outer_loops: tuple
    stack: int
    base_priority: dict[str, int]
    zigzag_operand_bits: dict[str, int]
    cn_layer_spec: dict
    cache_operands: dict[str, float] = field(default_factory=dict)
    gathered_operands: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, data: dict) -> "LayerInfo":
        data = dict(data)
        for key in ("dims", "constant_operands", "core_allocation"):
            data[key] = tuple(data[key])
        data["gathered_operands"] = tuple(data.get("gathered_operands", ()))
        for key in ("intra_core_tiling", "inter_core_tiling", "outer_loops"):
            data[key] = tuple(tuple(x) for x in data[key])
        data["operand_dims"] = {k: tuple(v) for k, v in data["operand_dims"].items()}
        data["input_operand_source"] = {k: int(v) for k, v in data["input_operand_source"].items()}
        return cls(**data)


@dataclass(frozen=True, eq=False)
class CNGraph:
    """Computation nodes and their dependencies, as arrays.

    Per CN (length N, sorted by layer then sub id):
      ``layer``, ``sub_id``, ``group``, ``core`` (fixed or single allowed core; -1 = to be
      allocated), ``produces_final_output``, ``data_produced_unique`` (bits an out-edge carries),
      ``nb_real_predecessors`` (in-edges from other layers, duplicates counted),
      ``node_order`` (position in Stream's graph insertion order: decides representatives),
      ``start``/``stop`` ``(N, len(dims))`` half-open loop ranges over the global ``dims``
      (a dim the layer lacks reads ``(0, 0)``), ``tensor_bits``/``tensor_id`` ``(N, 3)`` per
      ``OPERANDS`` column (Stream's tensor sizes; -1 id where the layer lacks the operand).
    Per tensor (shared by the CNs of a layer whose ranges are equal): ``tensor_layer``,
      ``tensor_operand`` (column in ``OPERANDS``), ``tensor_size`` (bits), ``tensor_base_priority``
      (constant operands: number of CNs reusing it; else 0).
    Per edge (Stream's insertion order, one per CN pair): ``edge_src``, ``edge_dst`` (CN
      indices), ``edge_bits``, ``edge_operand`` (consumer's operand column, ``INTRA`` = -1).
    ``layers``: ``LayerInfo`` per computation layer id; ``stacks``: the layer stacks; ``mode``.
    Helpers: ``index(layer, sub)``, ``loop_ranges(i)``, ``operand_sizes(i)``, ``cn_layer(layer)``
    (a CN as a single-core ``Layer``), ``unique_nodes()``, ``cost_node()``, ``to_networkx()``.
    """

    dims: tuple[str, ...]
    layer: np.ndarray
    sub_id: np.ndarray
    group: np.ndarray
    core: np.ndarray
    produces_final_output: np.ndarray
    data_produced_unique: np.ndarray
    nb_real_predecessors: np.ndarray
    node_order: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    tensor_bits: np.ndarray
    tensor_id: np.ndarray
    tensor_layer: np.ndarray
    tensor_operand: np.ndarray
    tensor_size: np.ndarray
    tensor_base_priority: np.ndarray
    edge_src: np.ndarray
    edge_dst: np.ndarray
    edge_bits: np.ndarray
    edge_operand: np.ndarray
    layers: dict[int, LayerInfo]
    stacks: tuple[tuple[int, ...], ...]
    mode: str

    ARRAYS = (
        "layer",
        "sub_id",
        "group",
        "core",
        "produces_final_output",
        "data_produced_unique",
        "nb_real_predecessors",
        "node_order",
        "start",
        "stop",
        "tensor_bits",
        "tensor_id",
        "tensor_layer",
        "tensor_operand",
        "tensor_size",
        "tensor_base_priority",
        "edge_src",
        "edge_dst",
        "edge_bits",
        "edge_operand",
    )

    def __len__(self) -> int:
        return len(self.layer)

    @property
    def nb_edges(self) -> int:
        return len(self.edge_src)

    @property
    def nb_intra_layer_edges(self) -> int:
        return int(np.count_nonzero(self.edge_operand == INTRA))

    @cached_property
    def _index(self) -> dict[tuple[int, int], int]:
        return {
            (a, b): i for i, (a, b) in enumerate(zip(self.layer.tolist(), self.sub_id.tolist()))
        }

    def index(self, layer: int, sub_id: int) -> int:
        """CN index of ``(layer, sub id)``; KeyError if that CN is not in the graph."""
        return self._index[(layer, sub_id)]

    def loop_ranges(self, i: int) -> dict[str, tuple[int, int]]:
        """``{dim: (start, stop)}`` of CN ``i`` over its layer's dims."""
        info = self.layers[int(self.layer[i])]
        cols = [self.dims.index(d) for d in info.dims]
        return {d: (int(self.start[i, c]), int(self.stop[i, c])) for d, c in zip(info.dims, cols)}

    def operand_sizes(self, i: int) -> dict[str, int]:
        """Stream's tensor sizes (bits) of CN ``i`` by layer operand."""
        info = self.layers[int(self.layer[i])]
        return {op: int(self.tensor_bits[i, OPERANDS.index(op)]) for op in info.operand_dims}

    def cn_layer(self, layer: int) -> Layer:
        """One CN of ``layer`` as a single-core layer (loop sizes = the CN's span) for the cost model."""
        spec = self.layers[layer].cn_layer_spec
        return build_layer(spec, [CoreMappingEntry.from_dict(spec["mapping"])])

    def unique_nodes(self) -> np.ndarray:
        """CN indices of the distinct CNs, in node order (docs/models/multi-core.md#cost-table): the first CN of each
        (layer, group, ``nb_real_predecessors``) class; all other CNs of a class cost the same."""
        order = np.argsort(self.node_order, kind="stable")
        keys = np.stack(
            [self.layer[order], self.group[order], self.nb_real_predecessors[order]], axis=1
        )
        _, first = np.unique(keys, axis=0, return_index=True)
        return order[np.sort(first)]

    def cost_node(self) -> np.ndarray:
        """Per CN, the unique node whose cost it uses: the first one of its layer with the same
        ``nb_real_predecessors``, whatever its group (docs/models/multi-core.md#cost-table, Stream's ``equal_node``)."""
        unique = self.unique_nodes()
        result = np.full(len(self), -1, dtype=np.int64)
        lookup: dict[tuple[int, int], int] = {}
        for i in unique.tolist():
            lookup.setdefault((int(self.layer[i]), int(self.nb_real_predecessors[i])), i)
        for i, key in enumerate(zip(self.layer.tolist(), self.nb_real_predecessors.tolist())):
            result[i] = lookup[key]
        return result

    def to_networkx(self) -> nx.DiGraph:
        """A DiGraph on CN indices in Stream's node order, edges with ``bits`` and ``operand``."""
        graph = nx.DiGraph()
        graph.add_nodes_from(np.argsort(self.node_order).tolist())
        for s, d, b, o in zip(
            self.edge_src.tolist(),
            self.edge_dst.tolist(),
            self.edge_bits.tolist(),
            self.edge_operand.tolist(),
        ):
            graph.add_edge(s, d, bits=b, operand=None if o == INTRA else OPERANDS[o])
        return graph


def build_cn_graph(
    workload: StreamWorkload,
    mode: str,
    stacks: list[tuple[int, ...]] | None = None,
    *,
    seed: SeedTiling | None = None,
    weight_capacity: int | None = None,
    stack_cutoff: int | None = None,
    stack_cutoffs: list[int] | None = None,
) -> CNGraph:
    """Stacks -> tiling -> CNs -> edges (docs/models/multi-core.md#computation-nodes) for a parsed
    workload. The CN count is checked before any CN is built (:func:`check_cn_count`)."""
    final_stacks = layer_stacks(
        workload,
        mode,
        stacks,
        stack_cutoff=stack_cutoff,
        stack_cutoffs=stack_cutoffs,
        weight_capacity=weight_capacity,
    )
    stack_of = {}
    for index, stack in enumerate(final_stacks):
        for layer_id in stack:
            stack_of.setdefault(layer_id, index)
    graph = workload.graph()
    order = list(nx.topological_sort(graph))
    tiled: dict[int, TiledLayer] = {}
    with grouped_layer_warnings():
        for node_id in order:
            node = workload.nodes[node_id]
            if node_id not in stack_of or not hasattr(node, "layer"):
                continue
            tiled[node_id] = tile_layer(node, len(final_stacks[stack_of[node_id]]), mode, seed)
        check_cn_count(tiled)
        cns: dict[int, LayerCNs] = {node_id: generate_cns(t) for node_id, t in tiled.items()}
    blocks = [b for node_id in order if node_id in cns for b in intra_layer_edges(cns[node_id])]
    blocks += inter_layer_edges(workload, graph, order, cns)
    edges = np.concatenate(blocks) if blocks else np.zeros((0, 6), dtype=np.int64)
    return _assemble(cns, edges, final_stacks, stack_of, mode)


def _assemble(cns, edges, stacks, stack_of, mode) -> CNGraph:
    ids = sorted(cns)
    offset, total = {}, 0
    for layer_id in ids:
        offset[layer_id] = total
        total += cns[layer_id].count
    layer_offset = np.zeros(max(ids, default=0) + 1, dtype=np.int64)
    layer_offset[ids] = [offset[i] for i in ids]
    table = np.stack(
        [
            layer_offset[edges[:, 0]] + edges[:, 1],
            layer_offset[edges[:, 2]] + edges[:, 3],
            edges[:, 5],
            edges[:, 4],
        ],
        axis=1,
    )
    src_all, dst_all = table[:, 0], table[:, 1]
    layer_all = (
        np.concatenate([np.full(cns[i].count, i) for i in ids]) if ids else np.zeros(0, np.int64)
    )
    inter = table[:, 3] != INTRA
    real_preds = np.bincount(dst_all[inter], minlength=total)
    # Node order = first appearance in the edge list (u before v), then the CNs without any edge
    # (a one-CN layer with no neighbouring layer) in id order: Stream drops those, which would
    # leave their layer out of the schedule and its totals.
    appearance = np.stack([src_all, dst_all], axis=1).reshape(-1)
    seen, first = np.unique(appearance, return_index=True)
    isolated = np.setdiff1d(np.arange(total), seen)
    keep = np.concatenate([seen[np.argsort(first)], isolated]).astype(np.int64)
    node_order = np.full(total, -1, dtype=np.int64)
    node_order[keep] = np.arange(len(keep))
    # One edge per CN pair: position of the first, data of the last (networkx semantics).
    key = src_all * max(total, 1) + dst_all
    uniq, first_pos, inverse = np.unique(key, return_index=True, return_inverse=True)
    last_pos = np.zeros(len(uniq), dtype=np.int64)
    last_pos[inverse] = np.arange(len(key))
    order = np.argsort(first_pos)
    chosen = table[last_pos[order]]
    in_graph = node_order >= 0
    new_index = np.cumsum(in_graph) - 1

    dims = tuple(dict.fromkeys(d for i in ids for d in cns[i].dims))
    start = np.zeros((total, len(dims)), dtype=np.int64)
    stop = np.zeros_like(start)
    bits = np.zeros((total, len(OPERANDS)), dtype=np.int64)
    tid = np.full((total, len(OPERANDS)), -1, dtype=np.int64)
    t_layer, t_op, t_size, t_prio = [], [], [], []
    infos = {}
    for layer_id in ids:
        c = cns[layer_id]
        rows = slice(offset[layer_id], offset[layer_id] + c.count)
        cols = [dims.index(d) for d in c.dims]
        start[rows, cols] = c.start
        stop[rows, cols] = c.stop
        for op, col in ((op, OPERANDS.index(op)) for op in c.tensor_bits):
            bits[rows, col] = c.tensor_bits[op]
            base = len(t_layer)
            tid[rows, col] = base + c.tensor_key[op]
            nb = int(c.tensor_key[op].max()) + 1
            firsts = np.unique(c.tensor_key[op], return_index=True)[1]
            t_layer += [layer_id] * nb
            t_op += [col] * nb
            t_size += c.tensor_bits[op][firsts].tolist()
            t_prio += [c.base_priority.get(op, 0)] * nb
        infos[layer_id] = _layer_info(c, stack_of[layer_id])

    def concat(name):
        return (
            np.concatenate([getattr(cns[i], name) for i in ids]) if ids else np.zeros(0, np.int64)
        )

    subs = np.concatenate([np.arange(cns[i].count) for i in ids]) if ids else np.zeros(0, np.int64)
    return CNGraph(
        dims=dims,
        layer=layer_all[in_graph],
        sub_id=subs[in_graph],
        group=concat("group")[in_graph],
        core=concat("core")[in_graph],
        produces_final_output=concat("produces_final_output")[in_graph],
        data_produced_unique=concat("data_produced_unique")[in_graph],
        nb_real_predecessors=real_preds[in_graph],
        node_order=node_order[in_graph],
        start=start[in_graph],
        stop=stop[in_graph],
        tensor_bits=bits[in_graph],
        tensor_id=tid[in_graph],
        tensor_layer=np.array(t_layer, dtype=np.int64),
        tensor_operand=np.array(t_op, dtype=np.int64),
        tensor_size=np.array(t_size, dtype=np.int64),
        tensor_base_priority=np.array(t_prio, dtype=np.int64),
        edge_src=new_index[chosen[:, 0]],
        edge_dst=new_index[chosen[:, 1]],
        edge_bits=chosen[:, 2].copy(),
        edge_operand=chosen[:, 3].copy(),
        layers=infos,
        stacks=tuple(tuple(s) for s in stacks),
        mode=mode,
    )


def _layer_info(c: LayerCNs, stack: int) -> LayerInfo:
    slayer = c.tiled.layer
    layer = slayer.layer
    spec = c.cn_layer.to_spec()
    return LayerInfo(
        id=slayer.id,
        name=slayer.name,
        op_type=slayer.op_type,
        type=slayer.type,
        dims=c.dims,
        sizes=dict(c.tiled.sizes),
        span=dict(c.span),
        operand_dims=dict(layer.operand_dims),
        precision=dict(layer.precision),
        constant_operands=tuple(slayer.fetched_operands),
        input_operand_source=dict(slayer.input_operand_source),
        core_allocation=tuple(slayer.mapping.core_allocation),
        core_allocation_is_fixed=slayer.mapping.core_allocation_is_fixed,
        intra_core_tiling=tuple(c.tiled.intra_core_tiling),
        inter_core_tiling=tuple(c.tiled.inter_core_tiling),
        outer_loops=tuple(c.outer_loops),
        stack=stack,
        base_priority=dict(c.base_priority),
        zigzag_operand_bits={op: c.cn_layer.operand_size_bit(op) for op in layer.operand_dims},
        cn_layer_spec=spec,
        cache_operands={entry[0]: entry[1] for entry in slayer.cache_operands},
        gathered_operands=tuple(entry[0] for entry in slayer.cache_operands if not entry[2]),
    )


def save_cn_graph(graph: CNGraph, path: str | Path, notes: list[str] = ()) -> None:
    """Write the graph as one compressed ``.npz`` (arrays + a JSON ``meta`` string), atomically;
    ``notes``: the warnings about its inputs, for the results made from it (:func:`cn_graph_notes`)."""
    meta = {
        "format": FORMAT,
        "dims": list(graph.dims),
        "mode": graph.mode,
        "stacks": [list(s) for s in graph.stacks],
        "layers": [info.to_dict() for info in graph.layers.values()],
        "notes": list(notes),
    }
    arrays = {name: getattr(graph, name) for name in CNGraph.ARRAYS}
    with atomic_target(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, meta=np.array(json.dumps(meta)), **arrays)


def cn_graph_notes(path: str | Path) -> list[str]:
    """The notes saved with a graph by :func:`save_cn_graph`."""
    with np.load(path, allow_pickle=False) as data:
        return list(json.loads(str(data["meta"])).get("notes", []))


def load_cn_graph(path: str | Path) -> CNGraph:
    """Read a graph written by ``save_cn_graph``."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            arrays = {name: data[name] for name in CNGraph.ARRAYS}
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(
            path, None, f"not a CN graph file ({exc}); make it with 'zigzag multicore nodes'"
        ) from None
    if meta.get("format") != FORMAT:
        raise InputError(
            path, "meta.format", f"unknown format {meta.get('format')!r}; expected {FORMAT}"
        )
    layers = {int(d["id"]): LayerInfo.from_dict(d) for d in meta["layers"]}
    return CNGraph(
        dims=tuple(meta["dims"]),
        layers=layers,
        stacks=tuple(tuple(s) for s in meta["stacks"]),
        mode=meta["mode"],
        **arrays,
    )
