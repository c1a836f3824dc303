"""CN graphs for the multi-core tests: the Stream reference's cases, and the plain (slow)
definitions of the CN dependencies that the fast path is checked against."""

from __future__ import annotations

import numpy as np
import yaml

from support import TESTS
from zigzag.multicore import propagation
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.inputs import cn_graph_from_files

REF = TESTS / "data" / "reference" / "stream"
REFERENCE_CASES = {
    case["case"]: case for case in yaml.safe_load((REF / "expected.yaml").read_text())
}


def build_reference_graph(case: dict) -> CNGraph:
    """The CN graph of a case of the Stream reference's expected.yaml."""
    inputs, options = case["inputs"], case["options"]
    stacks = [tuple(s) for s in options["layer_stacks"]] if options.get("layer_stacks") else None
    return cn_graph_from_files(
        REF / inputs["hardware"],
        REF / inputs["workload"],
        REF / inputs["mapping"],
        options["mode"],
        stacks,
        cwd=str(REF),
    )


def element_read_pairs(maps, producer, consumer, operand, held):
    """The plain definition of a pair's dependencies: every (position, CN) of the consumer's
    coverage holding a producer element, joined with every final-output CN of the producer
    covering that element (distinct pairs, rows sorted)."""
    elements, readers, _ = maps.coverage(consumer, operand, False)
    found = held[elements]
    keep = found != propagation.EMPTY
    found, readers = found[keep], readers[keep]
    p_elem, p_cn, _ = maps.coverage(producer, producer.tiled.layer.layer.output, True)
    order = np.argsort(p_elem, kind="stable")
    p_elem, p_cn = p_elem[order], p_cn[order]
    first = np.searchsorted(p_elem, found, "left")
    count = np.searchsorted(p_elem, found, "right") - first
    at = np.repeat(first - (np.cumsum(count) - count), count) + np.arange(count.sum())
    keys = np.unique(p_cn[at].astype(np.int64) * consumer.count + np.repeat(readers, count))
    return np.stack([keys // consumer.count, keys % consumer.count], axis=1)


class _Forgetful(dict):
    """A memo that keeps nothing: every pair is joined again."""

    def __setitem__(self, key, value):
        pass


class PlainMaps(propagation.ElementMaps):
    """The element maps with the plain definitions: element-by-element joins, coverage counts from
    :func:`propagation.coverage`, no memo of joined pairs."""

    def __init__(self):
        super().__init__()
        self.joined = _Forgetful()

    def new_outputs(self, cns):
        return self.coverage(cns, cns.tiled.layer.layer.output, True)[2]

    read_pairs = element_read_pairs
