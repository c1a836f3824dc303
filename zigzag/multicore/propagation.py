"""Dependencies through reshaping nodes: element maps pushed through Flatten/Reshape/... (docs/models/multi-core.md#dependencies).

Instead of arrays of CN sets, the producer's output elements are numbered ``0 .. E-1`` and that
index array is pushed through the reshaping nodes, so every position of the consumer's input
knows which producer element it holds (``-1`` = no producer, e.g. a concatenated constant).
Edges then join "producer CN covers element e" with "consumer CN reads element e" — not element
by element but over the cells of the consumer's operand on which the owning producer CN is constant
(:meth:`ElementMaps.read_pairs`).
"""

from __future__ import annotations

import math

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.nodes import OPERANDS, LayerCNs
from zigzag.multicore.vector_layers import PropagationNode

EMPTY = -1


class ShapeMismatch(Exception):
    """The propagated producer data does not have the consumer operand's shape."""


def operand_shape(cns: LayerCNs, operand: str) -> tuple[int, ...]:
    """Full shape of a layer operand: loop sizes, and the input size for pr dims."""
    layer = cns.tiled.layer.layer
    sizes = dict(cns.tiled.sizes) | layer.given_pr_sizes
    return tuple(sizes[d] if d in sizes else layer.pr_sizes[d] for d in layer.operand_dims[operand])


def _unpadded_shape(cns: LayerCNs, operand: str) -> tuple[int, ...]:
    """An operand's shape with the layer's own loop sizes (not rounded up to whole tiles)."""
    layer = cns.tiled.layer.layer
    sizes = dict(layer.loop_sizes) | layer.given_pr_sizes
    padded = operand_shape(cns, operand)
    return tuple(min(sizes.get(d, p), p) for d, p in zip(layer.operand_dims[operand], padded))


def coverage(
    cns: LayerCNs, operand: str, only_final: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(flat element index, CN sub id, new elements per CN) of the CNs' windows on ``operand``.

    Windows are clamped to the operand's shape; CNs are visited in sub-id order and ``new``
    counts the elements a CN is the first to cover.
    """
    shape = operand_shape(cns, operand)
    _, start, stop = cns.operand_boxes(operand)
    start = np.clip(start, 0, None)
    stop = np.minimum(stop, np.array(shape))
    covered = np.zeros(shape, dtype=bool)
    numbers = np.arange(math.prod(shape), dtype=_index_type(math.prod(shape))).reshape(
        shape
    )  # flat indices
    elements, owners = [], []
    new = np.zeros(cns.count, dtype=np.int64)
    for sub in range(cns.count):
        if only_final and not cns.produces_final_output[sub]:
            continue
        window = tuple(slice(a, b) for a, b in zip(start[sub], stop[sub]))
        seen = covered[window]
        if seen.size == 0:
            continue
        new[sub] = seen.size - np.count_nonzero(seen)
        seen[...] = True
        flat = numbers[window].reshape(-1)
        elements.append(flat)
        owners.append(np.full(len(flat), sub, dtype=np.int64))
    if not elements:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), new
    return np.concatenate(elements), np.concatenate(owners), new


def reshaped(cns: LayerCNs, operand: str, array: np.ndarray) -> np.ndarray:
    """Apply the layer's operand reshape (conv/pool: ``(B, -1, X, Y)``), a pure reshape."""
    shape = (cns.tiled.layer.reshape or {}).get(operand)
    return array.reshape(shape) if shape else array


def push_through(
    node: PropagationNode, array: np.ndarray, came_from: int, going_to: int | None = None
) -> np.ndarray:
    """The element map after one reshaping node (``going_to``: the next node on the path, which
    picks the output of a node with several)."""
    if node.kind == "onnx":
        return _run_moving_node(node, array, going_to)
    if node.kind == "reshape":
        return array.reshape(node.attrs["shape"]) if node.attrs["shape"] else array
    if node.kind == "flatten":
        axis = node.attrs["axis"]
        if axis == 0:
            return array.reshape(1, -1)
        lead = math.prod(array.shape[:axis]) if axis is not None else array.size
        return array.reshape(lead, -1)
    if node.kind == "transpose":
        perm = node.attrs["perm"]
        return np.transpose(array, perm) if perm is not None else array.T
    if node.kind == "gather":
        return np.take(array, node.attrs["indices"], axis=node.attrs["axis"])
    if node.kind == "concat":
        axis = node.attrs["axis"] % array.ndim
        inputs, shapes = node.attrs["inputs"], node.attrs["shapes"]
        if sum(source is not None for source in inputs) == 1:
            # Stream's case (one produced input): the constant blocks always go first.
            order = [i for i, s in enumerate(inputs) if s is None] + [
                i for i, s in enumerate(inputs) if s is not None
            ]
            inputs, shapes = [inputs[i] for i in order], [shapes[i] for i in order]
        blocks = []
        for source, shape in zip(inputs, shapes):
            if source == came_from and not any(b is array for b in blocks):
                blocks.append(array)
            elif len(shape) == array.ndim and shape[axis] == 0:
                continue  # an empty input (Phi-3's rotary joins the rotated half with a pass-through of 0)
            else:
                blocks.append(np.full(tuple(shape), EMPTY, dtype=array.dtype))
        try:
            return np.concatenate(blocks, axis=axis)
        except ValueError:
            raise ShapeMismatch from None
    return array


def _run_moving_node(node: PropagationNode, array: np.ndarray, going_to: int | None) -> np.ndarray:
    """A data-moving ONNX node (Slice, Split, Expand, ...) evaluated on the element map."""
    from onnx.reference import ReferenceEvaluator

    proto, values = node.attrs["proto"], node.attrs["values"]
    feeds = {proto.input[0]: array} | {name: values[name] for name in proto.input[1:] if name}
    outputs = ReferenceEvaluator(proto, opsets=node.attrs["opsets"]).run(None, feeds)
    return np.asarray(outputs[node.attrs["output_for"].get(going_to, 0)], dtype=array.dtype)


def _index_type(largest: int):
    """The narrowest integer type of the element maps holding numbers up to ``largest``."""
    return np.int32 if largest < 2**31 - 1 else np.int64


def _windows(cns: LayerCNs, operand: str, only_final: bool):
    """(operand shape, sub ids with a non-empty window, window starts, stops) as in :func:`coverage`."""
    shape = operand_shape(cns, operand)
    _, start, stop = cns.operand_boxes(operand)
    start, stop = np.clip(start, 0, None), np.minimum(stop, np.array(shape))
    subs = np.flatnonzero(cns.produces_final_output) if only_final else np.arange(cns.count)
    return shape, subs[np.all(stop[subs] > start[subs], axis=1)], start, stop


def _ranked_owners(covered: tuple[np.ndarray, np.ndarray], nb_elements: int, nb_cns: int) -> tuple:
    """Owner maps from :func:`coverage`'s (element, CN) lists: map ``k`` holds the ``k``-th CN
    (in sub-id order) covering each element."""
    elem, cn = covered
    order = np.argsort(elem, kind="stable")
    elem, cn = elem[order], cn[order]
    rank = np.arange(len(elem)) - np.searchsorted(elem, elem, side="left")
    maps = []
    for k in range(int(rank.max()) + 1 if len(rank) else 0):
        owner = np.full(nb_elements, EMPTY, dtype=_index_type(nb_cns))
        sel = rank == k
        owner[elem[sel]] = cn[sel]
        maps.append(owner)
    return tuple(maps)


class ElementMaps:
    """What the pairs of one graph share: per layer, the CNs' new output counts; for the producer
    at hand (pairs come producer by producer; a new producer drops the previous one's arrays, which
    are as large as its output), the CNs' :func:`coverage` of an operand, the producer's element
    numbering and its owner maps (element -> CN covering it; one map for the first CN covering each
    element, one for the second, ...); and the CN pairs found for each (producer, consumer, paths)
    (a pair reached again is not joined again)."""

    def __init__(self):
        self._coverage: dict = {}
        self._new: dict = {}
        self._owners: dict = {}
        self._index: dict = {}
        self._producer = None
        self.joined: dict = {}

    def _serve(self, producer: LayerCNs) -> None:
        """Keep the large arrays of ``producer`` only."""
        if producer is not self._producer:
            self._coverage.clear(), self._owners.clear(), self._index.clear()
            self._producer = producer

    def coverage(self, cns: LayerCNs, operand: str, only_final: bool):
        key = (cns, operand, only_final)
        if key not in self._coverage:
            self._coverage[key] = coverage(cns, operand, only_final)
        return self._coverage[key]

    def new_outputs(self, cns: LayerCNs) -> np.ndarray:
        """Per CN, the final output elements it is the first to cover (:func:`coverage`'s ``new``)."""
        if cns not in self._new:
            shape, subs, start, stop = _windows(cns, cns.tiled.layer.layer.output, True)
            covered = np.zeros(shape, dtype=bool)
            new = np.zeros(cns.count, dtype=np.int64)
            for sub in subs:
                seen = covered[tuple(slice(a, b) for a, b in zip(start[sub], stop[sub]))]
                new[sub] = seen.size - np.count_nonzero(seen)
                seen[...] = True
            self._new[cns] = new
        return self._new[cns]

    def index(self, producer: LayerCNs) -> np.ndarray:
        """The producer's output elements numbered 0..E-1, in the layer's operand shape."""
        self._serve(producer)
        if producer not in self._index:
            out_op = producer.tiled.layer.layer.output
            shape = operand_shape(producer, out_op)
            numbers = np.arange(math.prod(shape), dtype=_index_type(math.prod(shape))).reshape(
                shape
            )
            real = _unpadded_shape(producer, out_op)
            if real != shape:  # tiles rounded a loop up: only the layer's real elements move on
                numbers = numbers[tuple(slice(0, r) for r in real)]
            self._index[producer] = reshaped(producer, out_op, numbers)
        return self._index[producer]

    def owners(self, producer: LayerCNs) -> tuple[np.ndarray, ...]:
        """Element -> CN maps of the producer's final outputs (one per CN rank on an element)."""
        self._serve(producer)
        if producer not in self._owners:
            out_op = producer.tiled.layer.layer.output
            shape, subs, start, stop = _windows(producer, out_op, True)
            if self.new_outputs(producer).sum() == np.prod(stop[subs] - start[subs], axis=1).sum():
                # no element is covered twice: one map, each window written with its CN
                owner = np.full(shape, EMPTY, dtype=_index_type(producer.count))
                for sub in subs:
                    owner[tuple(slice(a, b) for a, b in zip(start[sub], stop[sub]))] = sub
                self._owners[producer] = (owner.reshape(-1),) if len(subs) else ()
            else:
                self._owners[producer] = _ranked_owners(
                    self.coverage(producer, out_op, True)[:2], math.prod(shape), producer.count
                )
        return self._owners[producer]

    def read_pairs(
        self, producer: LayerCNs, consumer: LayerCNs, operand: str, held: np.ndarray
    ) -> np.ndarray:
        """Distinct (producer CN, consumer CN) pairs, rows sorted, of the consumer CNs reading a
        position of ``operand`` that holds an element of ``producer``'s final outputs; ``held``: the
        producer element at each flat position of the operand (EMPTY: none).

        Not element by element: the work is cut to the box around the held positions (a KV cache
        holding one new token), and that box into cells on which the producer CN owning each
        position does not change and no consumer window starts or stops (see :func:`_cells`); a
        consumer CN then reads each of its cells once."""
        owners = self.owners(producer)
        shape = operand_shape(consumer, operand)
        present = (held != EMPTY).reshape(shape)
        if not owners or not present.any():
            return np.zeros((0, 2), dtype=np.int64)
        lo, hi = np.zeros(len(shape), dtype=np.int64), np.array(shape)
        dense = present.all()
        for axis in range(len(shape) if not dense else 0):  # the box around the held positions
            hit = np.flatnonzero(present.any(axis=tuple(a for a in range(len(shape)) if a != axis)))
            lo[axis], hi[axis] = hit[0], hit[-1] + 1
        window = tuple(slice(a, b) for a, b in zip(lo, hi))
        box = held.reshape(shape)[window]
        # (rank, *box): the producer CN owning each position
        own = (
            owners[0][box][None] if len(owners) == 1 else np.stack([owner[box] for owner in owners])
        )
        if not dense:
            own[:, ~present[window]] = EMPTY
        _, start, stop = consumer.operand_boxes(operand)
        start, stop = np.clip(start - lo, 0, hi - lo), np.clip(stop - lo, 0, hi - lo)  # in the box
        subs = np.flatnonzero(np.all(stop > start, axis=1))
        cells, first, last = _cells(own, start[subs], stop[subs])
        found = []
        for i, sub in enumerate(subs):
            values = np.unique(
                cells[(slice(None),) + tuple(slice(a, b) for a, b in zip(first[i], last[i]))]
            )
            found.append(values[values != EMPTY].astype(np.int64) * consumer.count + sub)
        keys = np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)
        return np.stack([keys // consumer.count, keys % consumer.count], axis=1)


def _cells(
    own: np.ndarray, start: np.ndarray, stop: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut the positions of ``own`` (axis 0: ranks) along each axis where any value changes or a
    window (``start``/``stop`` rows) starts or stops: every cell then holds one value per rank.
    Returns the value of each cell and each window's first and last (exclusive) cell per axis."""
    cuts = []
    for axis in range(own.ndim - 1):
        size = own.shape[axis + 1]
        ahead = [slice(None)] * own.ndim
        behind = list(ahead)
        ahead[axis + 1], behind[axis + 1] = slice(1, None), slice(None, -1)
        others = tuple(a for a in range(own.ndim) if a != axis + 1)
        changes = np.flatnonzero(np.any(own[tuple(ahead)] != own[tuple(behind)], axis=others)) + 1
        cuts.append(np.unique(np.concatenate([[0, size], changes, start[:, axis], stop[:, axis]])))
    cells = own[(slice(None),) + np.ix_(*[cut[:-1] for cut in cuts])]
    first = np.stack([np.searchsorted(cut, start[:, a]) for a, cut in enumerate(cuts)], axis=1)
    last = np.stack([np.searchsorted(cut, stop[:, a]) for a, cut in enumerate(cuts)], axis=1)
    return cells, first, last


def complex_pair_edges(
    producer: LayerCNs,
    consumer: LayerCNs,
    paths: list[list],
    file=None,
    maps: ElementMaps | None = None,
) -> list[np.ndarray]:
    """Edges of a pair joined through reshaping nodes, one block of edge rows per path (see
    ``zigzag.multicore.edges``); raises the producer's and consumer's ``data_produced_unique`` as
    Stream does (once per pair). ``maps`` shares the layers' element maps across pairs."""
    maps = ElementMaps() if maps is None else maps
    for cns in (producer, consumer):
        cns.data_produced_unique[:] += (
            maps.new_outputs(cns) * cns.tiled.layer.layer.final_output_precision
        )
    key = (producer.id, consumer.id, tuple(tuple(node.id for node in path) for path in paths))
    joined = maps.joined.get(key)
    if joined is None:
        joined = maps.joined[key] = [
            _path_pairs(maps, producer, consumer, path, file) for path in paths
        ]
    edges = []
    for operand, pairs in joined:
        block = np.empty((len(pairs), 6), dtype=np.int64)
        block[:, 0], block[:, 1], block[:, 2], block[:, 3] = (
            producer.id,
            pairs[:, 0],
            consumer.id,
            pairs[:, 1],
        )
        block[:, 4], block[:, 5] = (
            OPERANDS.index(operand),
            producer.data_produced_unique[pairs[:, 0]],
        )
        edges.append(block)
    return edges


def _path_pairs(
    maps: ElementMaps, producer: LayerCNs, consumer: LayerCNs, path: list, file
) -> tuple:
    """(consumer operand, sorted CN pairs) of one path from ``producer`` to ``consumer``."""
    array, previous, opaque = maps.index(producer), producer.id, False
    try:
        for node, after in zip(path[1:-1], path[2:]):
            if node.kind == "dummy" and node.attrs.get("out_shape", array.shape) != array.shape:
                # an operator the floor does not place, shaped unlike its input (a reduction, top-k):
                # each of its outputs may depend on all of its input
                opaque, array = True, np.zeros(node.attrs["out_shape"], dtype=array.dtype)
            else:
                array = push_through(node, array, previous, after.id)
            previous = node.id
    except ShapeMismatch:
        raise InputError(
            file,
            f"layers {producer.id} -> {consumer.id}",
            f"the data of layer {producer.id} does "
            f"not fit the other inputs of Concat node {node.id}; check the shapes",
        ) from None
    operand = next(
        op for op, src in consumer.tiled.layer.input_operand_source.items() if src == previous
    )
    candidates = [operand] + [
        op for op in consumer.tiled.layer.input_operand_source if op != operand
    ]
    pairs = None
    for op in candidates:
        target = _consumer_shape(consumer, op)
        matched = (
            array
            if array.shape == target
            else (
                _extend_for_concat(array, target, path)
                if _has_concat(path)
                else _pad_to(array, target)
            )
        )
        if matched is None:
            continue
        if opaque:
            pairs = _all_pairs(maps, producer, consumer, op)
            break
        pairs = maps.read_pairs(producer, consumer, op, matched.reshape(-1))
        break
    if pairs is None:
        raise InputError(
            file,
            f"layers {producer.id} -> {consumer.id}",
            f"the data of layer {producer.id} ({array.shape} after reshaping) does not fit the input of layer "
            f"{consumer.id} {_consumer_shape(consumer, operand)}; check the Reshape/Flatten shapes",
        )
    return operand, pairs


def _all_pairs(
    maps: ElementMaps, producer: LayerCNs, consumer: LayerCNs, operand: str
) -> np.ndarray:
    """Every (producer CN with final outputs, consumer CN reading ``operand``) pair, rows sorted."""
    _, owners, _ = maps.coverage(producer, producer.tiled.layer.layer.output, True)
    _, readers, _ = maps.coverage(consumer, operand, False)
    prod, cons = np.unique(owners), np.unique(readers)
    return np.stack([np.repeat(prod, len(cons)), np.tile(cons, len(prod))], axis=1).astype(np.int64)


def _consumer_shape(consumer: LayerCNs, operand: str) -> tuple[int, ...]:
    shape = operand_shape(consumer, operand)
    return reshaped(consumer, operand, np.empty(shape, dtype=np.int8)).shape


def _has_concat(path) -> bool:
    return any(getattr(n, "kind", "") == "concat" for n in path[1:-1])


def _pad_to(array: np.ndarray, target: tuple[int, ...]) -> np.ndarray | None:
    """The map padded with empty positions up to ``target``, the consumer's operand rounded up to
    whole tiles (a tiling factor not dividing a loop); the same elements with unit dims dropped or
    added (a broadcast input indexed by the dims it spans) are reshaped; None otherwise."""
    if [d for d in array.shape if d != 1] == [d for d in target if d != 1]:
        return array.reshape(target)
    if len(target) != array.ndim or any(t < a for t, a in zip(target, array.shape)):
        return None
    padded = np.full(target, EMPTY, dtype=array.dtype)
    padded[tuple(slice(0, a) for a in array.shape)] = array
    return padded


def _extend_for_concat(array: np.ndarray, target: tuple[int, ...], path) -> np.ndarray | None:
    """Stream's second fall-back: a Concat on the path may have fixed a smaller shape; pad it."""
    if len(target) != array.ndim or not any(getattr(n, "kind", "") == "concat" for n in path[1:-1]):
        return None
    axes = [i for i in range(array.ndim) if array.shape[i] != target[i]]
    if len(axes) != 1 or target[axes[0]] < array.shape[axes[0]]:
        return None
    axis = axes[0]
    pad = list(array.shape)
    pad[axis] = target[axis] - array.shape[axis]
    return np.concatenate([array, np.full(pad, EMPTY, dtype=array.dtype)], axis=axis)
