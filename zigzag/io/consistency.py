"""Checks across a workload and its mapping, once both are loaded.

* A mapping names a dimension that no layer of the workload has and that is no usual loop
  dimension either (``KK`` for ``K``): an error. A usual dimension some layers lack (``K`` in the
  ``default`` entry, for a pooling layer) stays a per-layer warning in the search, as in ZigZag,
  since one entry serves layers of different shapes (and the reference's own mapping files rely
  on it).
* A mapping entry names no node and no operator type of the workload (``/conv1/Cnv``): no layer
  uses it, a warning naming the closest layer names.
* A layer reads an operand whose size differs from its producer's output (``C=32`` after a
  producer with ``K=64``): a warning naming both layers.
"""

from __future__ import annotations

import logging
import math

from zigzag.errors import InputError
from zigzag.mapping.entry import MappingEntry, unmatched_entry_warnings
from zigzag.workload.layer import Layer
from zigzag.workload.workload import Workload

logger = logging.getLogger(__name__)

#: Loop dimensions of the layer kinds ZigZag and its ONNX import write (convolution, pooling,
#: element-wise, matrix products); a mapping may name them for layers that lack them.
USUAL_DIMENSIONS = frozenset({"B", "K", "C", "G", "OX", "OY", "FX", "FY", "D", "H"})


def check_mapping_dimensions(
    workload: Workload, entries: list[MappingEntry], mapping_file: str | None
) -> None:
    """Reject a dimension named by a used mapping entry that no layer of the workload has (unless usual)."""
    layers = workload.layers
    workload_dims = {dim for layer in layers for dim in layer.loop_sizes}
    known = workload_dims | USUAL_DIMENSIONS
    used = {layer.mapping.name for layer in layers}
    for entry in entries:
        if entry.name not in used:
            continue
        where = f"mapping entry '{entry.name}'"
        named = [
            (f"spatial_mapping.{oa}[{i}]", [dim])
            for oa, pairs in (entry.spatial_mapping or {}).items()
            for i, (dim, _) in enumerate(pairs)
        ]
        named += [
            (f"temporal_ordering[{i}]", [dim])
            for i, (dim, _) in enumerate(entry.temporal_ordering)
            if dim != "*"
        ]
        named += [
            (f"spatial_mapping_hint.{oa}", list(dims))
            for oa, dims in entry.spatial_mapping_hint.items()
        ]
        for place, dims in named:
            if not known.intersection(dims):
                text = "' / '".join(dims)
                raise InputError(
                    mapping_file,
                    f"{where}.{place}",
                    f"'{text}' is not a dimension of any layer of the workload (their dimensions: "
                    f"{', '.join(sorted(workload_dims))}); use one of those",
                )


def warn_unmatched_entries(
    workload: Workload, entries: list[MappingEntry], mapping_file: str | None
) -> None:
    """Warn about each mapping entry that no node of the workload can use (see unmatched_entry_warnings)."""
    nodes = list(workload.graph.nodes)
    types = [node.operator_type if isinstance(node, Layer) else node.type for node in nodes]
    for line in unmatched_entry_warnings(
        [e.name for e in entries], [node.name for node in nodes], types
    ):
        logger.warning("%s: %s", mapping_file or "<mapping>", line)


def warn_size_mismatches(workload: Workload, file: str | None) -> None:
    """Warn when a layer's input operand and the output of the layer producing it differ in size.

    Positions of the two index lists are compared (same rank only); sliding-window positions
    (``iy = oy + fy``) are left out, as padding and strides make them differ legitimately, and so are
    the operator model's partial writes and reads: vector layers (a KV-cache append writes only the new
    tokens, a rotary half is joined to the other half by a Concat) and the query blocks of a causal
    attention (names ending ``/causal<i>``), which each cover some rows.
    """
    by_id = {layer.id: layer for layer in workload.layers}
    for consumer in workload.layers:
        for operand, source in consumer.input_operand_source.items():
            producer = by_id.get(source)
            if producer is None or _partial(producer) or _partial(consumer):  # see the docstring
                continue
            mismatch = _mismatch(producer, consumer, operand)
            if mismatch:
                logger.warning(
                    "%s: layer '%s' (id %d) reads %s from layer '%s' (id %d) with %s, but '%s' produces %s; "
                    "check the loop_sizes of both layers",
                    file or "<workload>",
                    consumer.name,
                    consumer.id,
                    operand,
                    producer.name,
                    producer.id,
                    mismatch[1],
                    producer.name,
                    mismatch[0],
                )


def _partial(layer: Layer) -> bool:
    """Is the layer part of the operator model, whose layers may write or read part of a tensor: a cache
    append writes the new tokens only, a causal block some rows, a rotary half is joined to the other half
    by a Concat?"""
    return layer.vector_op is not None or "/causal" in layer.name


def _mismatch(producer: Layer, consumer: Layer, operand: str) -> tuple[str, str] | None:
    """(producer's sizes, consumer's sizes) as text when they differ, else None."""
    produced = producer.operand_dims[producer.output]
    read = consumer.operand_dims[operand]
    if len(produced) != len(read):
        return None
    pairs = [
        (p, r)
        for p, r in zip(produced, read)
        if p not in producer.pr_map and r not in consumer.pr_map
    ]
    if math.prod(producer.size(p) for p, _ in pairs) == math.prod(
        consumer.size(r) for _, r in pairs
    ):
        return None
    return (
        ", ".join(f"{p}={producer.size(p)}" for p, _ in pairs),
        ", ".join(f"{r}={consumer.size(r)}" for _, r in pairs),
    )
