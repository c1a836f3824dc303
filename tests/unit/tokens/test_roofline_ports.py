"""Where a prefill product's half rate goes, and the roofline label following what binds
(docs/models/per-token.md#why-a-prefill-product-can-reach-half-the-peak).

On the TPU-like example a weight-stationary product keeps one weight per MAC for the whole token loop,
so its partial sum changes every cycle: the per-MAC ``acc_reg`` reads it to the MAC and up to the
accumulators, and writes it back from both, through one read and one write port, each transfer a cycle.
ZigZag (zigzag-dse 3.9.1, same layer, accelerator and mapping) gives the same computation cycles.
"""

from __future__ import annotations

import copy

import pytest
import yaml

from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.network import evaluate_network
from zigzag.mapping_search.options import SearchOptions
from zigzag.tokens.roofline import binding_line, roofline_rows
from zigzag.workload.workload import Workload, build_layer
from support import REPO

pytestmark = pytest.mark.slow  # each searches a layer (about 3 s)

TPU = REPO / "inputs/hardware/flow_tpu_32x32.yaml"
ENTRY = MappingEntry.from_dict(
    {
        "name": "default",
        "spatial_mapping": {"D1": ["K, 32"], "D2": ["C, 32"]},
        "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
    }
)


def _product(tokens: int = 256, width: int = 512) -> Workload:
    """A prefill projection: ``tokens`` rows through a ``width`` x ``width`` weight, 8-bit operands."""
    spec = {
        "id": 0,
        "name": "proj",
        "operator_type": "Gemm",
        "equation": "O[b][d][k]+=I[b][d][c]*W[c][k]",
        "dimension_relations": [],
        "loop_dims": ["B", "D", "C", "K"],
        "loop_sizes": [1, tokens, width, width],
        "operand_precision": {"W": 8, "I": 8, "O": 16, "O_final": 8},
        "operand_source": {"I": 0, "W": 0},
    }
    return Workload([build_layer(spec, [ENTRY])])


def _tpu(edit=None):
    document = yaml.safe_load(TPU.read_text())
    if edit is not None:
        edit(document["memories"])
    return accelerator_from_dict(validate_accelerator(copy.deepcopy(document), str(TPU)))


@pytest.mark.parametrize("model", ["zigzag", "bandwidth_bound"])
def test_a_prefill_product_reaches_half_the_peak_bound_by_the_partial_sum_register(model):
    result = evaluate_network(_product(), _tpu(), SearchOptions(lpf_limit=6, latency_model=model))
    ((layer, cost),) = result.layers
    assert cost.ideal_cycle == 256 * 512 * 512 // 1024 == 65_536
    # each MAC cycle: the register's read port carries the partial sum to the MAC and to the accumulators
    assert cost.port_stall_slack["acc_reg.r_port_1"] == 65_534
    assert (
        cost.ideal_cycle + cost.stall_slack_comb == 131_070
    )  # zigzag-dse 3.9.1: "computation" 131,070
    (row,) = roofline_rows(result)
    assert (row.bound, row.bound_port) == ("acc_reg", "acc_reg.r_port_1")
    assert row.attainable == 512  # half the peak: the register's traffic over its two ports
    assert row.achieved <= row.attainable and row.achieved > 0.98 * row.attainable
    # what a run prints under the per-token figures
    assert binding_line([row]) == "layers bound by (share of the step): acc_reg.r_port_1 100%"


def test_doubling_the_registers_ports_does_not_help():
    """Each transfer takes at least a cycle: a wider port carries the 16-bit partial sum no faster."""

    def double(memories):
        for port in memories["acc_reg"]["ports"]:
            port["bandwidth_min"] = port["bandwidth_max"] = 2 * port["bandwidth_max"]

    result = evaluate_network(_product(), _tpu(double), SearchOptions(lpf_limit=6))
    ((_, cost),) = result.layers
    assert cost.port_stall_slack["acc_reg.r_port_1"] == 65_534


def test_the_label_names_the_port_that_binds_not_a_roof_the_layer_never_reaches():
    """A narrow activation read port of the unified buffer (64 of its 4 x 512 bit/cycle): the memory as a
    whole has bandwidth to spare, the port does not. The label is that port, the attainable rate is what the
    layer reaches (issue 45: it read acc_reg at 512 ops/cycle while the layer did 254)."""

    def narrow(memories):
        memories["unified_buffer"]["ports"][0]["bandwidth_max"] = 64

    result = evaluate_network(_product(), _tpu(narrow), SearchOptions(lpf_limit=6))
    (row,) = roofline_rows(result)
    assert (row.bound, row.bound_port) == ("unified_buffer", "unified_buffer.r_port_1")
    assert row.achieved <= row.attainable and row.achieved > 0.98 * row.attainable


def test_separate_ports_for_the_partial_sum_recover_the_peak():
    """One port per direction (to the MAC, to the accumulators, from each): the array runs near its peak."""

    def split(memories):
        memories["acc_reg"]["ports"] = [
            {"name": f"{kind[0]}_port_{i}", "type": kind, "bandwidth_min": 32, "bandwidth_max": 32}
            | {"allocation": [f"O, {direction}"]}
            for kind, directions in (("read", ("tl", "th")), ("write", ("fl", "fh")))
            for i, direction in enumerate(directions, 1)
        ]

    result = evaluate_network(_product(), _tpu(split), SearchOptions(lpf_limit=6))
    (row,) = roofline_rows(result)
    assert row.latency_cycles == 67_587 and row.achieved > 0.96 * row.peak
