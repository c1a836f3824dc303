"""The compiled latency (zigzag/mapping_search/batched/kernels.py) against the scalar model's own
functions, candidate by candidate, on data movements drawn at random (seeded): transfers once,
repeated or absent, windows short of their periods (the timeline union), figures past float64's
exact integers, both latency models."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from support import DATA, REPO
from zigzag.cost.model.latency import double_buffer_flags, stall_slack, transfer_cycles
from zigzag.cost.model.loading import (
    offloading_cycles,
    onloading_cycles,
    port_bound_cycles,
    port_loading,
)
from zigzag.cost.model.movement import NO_FLOW, Flow, memory_utilization
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search.batched import candidate_loops, kernels
from zigzag.mapping_search.batched.candidates import ordering_chunks
from zigzag.mapping_search.batched.latency import _latencies, batch_latency
from zigzag.mapping_search.batched.siblings import memory_set
from zigzag.hardware.accelerator import DIRECTIONS
from zigzag.mapping_search.batched.model import BatchCostModel, Packed, _Movement
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"


def _model(seed: int, latency_model: str):
    """A model of a small convolution on the 32x32 example (a unified buffer of 8 KiB to 1 MiB,
    random port bandwidths) and its first allocated candidates."""
    rng = np.random.default_rng(seed)
    document = yaml.safe_load(BASE.read_text())
    document["memories"]["unified_buffer"]["size"] = int(rng.choice([8, 64, 1024])) * 8 * 1024
    for memory in ("unified_buffer", "accumulators"):
        for port in document["memories"][memory]["ports"]:
            port["bandwidth_max"] = int(rng.choice([64, 256, 1024]))
    accelerator = accelerator_from_dict(validate_accelerator(document, "kernels"))
    mapping = yaml.safe_load((REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml").read_text())
    layers = load_workload(str(WORKLOAD), [MappingEntry.from_dict(e) for e in mapping]).layers
    layer = layers[seed % len(layers)]
    array_mapping = generate_spatial_mappings(layer, accelerator, nb_mappings=1)[0]
    fractional, integer = spatial_mapping.convert(array_mapping, layer, accelerator)
    _, loops, assigner = candidate_loops(layer, accelerator, fractional, lpf_limit=4, even=False)
    ids = next(ordering_chunks(loops, 8192))[:120]
    alive, cuts = assigner.assign(ids)
    model = BatchCostModel(
        layer, accelerator, fractional, integer, loops, latency_model=latency_model
    )
    return model, ids[alive], {op: c[alive] for op, c in cuts.items()}


def _drawn(model, movement: dict, n: int, rng) -> dict:
    """``movement`` with every flow (and the figures the latency reads) drawn at random."""

    def pick(values, weights):
        return rng.choice(values, n, p=weights)

    packed = next(iter(movement.values())).packed
    flows = np.zeros_like(packed.flows)  # the last slot: where no data moves
    for slot in flows[:-1]:
        period = pick([1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0], None)
        window = np.minimum(period, pick([0.0, 1.0, 2.0, 3.0, 5.0], None))
        count = pick([0.0, 1.0, 2.0, 3.0, 9.0, 1e6], [0.02, 0.35, 0.25, 0.15, 0.22, 0.01])
        amount = pick([0.0, 1.0, 17.0, 512.0, 2.0**50], [0.2, 0.3, 0.2, 0.29, 0.01])
        precision = np.full(n, float(rng.choice([8, 16, 24])))
        bw_aver = rng.uniform(0, 300, n).round()
        slot[:] = (period, count, amount, precision, bw_aver, window)
    bits = packed.bits.copy()
    for op in movement:
        bits[model.bits_row[op] + 1] = pick([8.0, 100.0, 1e4], None)
    eff_bits = np.array([pick([0.0, 1e3, 1e5, 3e6, 3e7], None) for _ in packed.eff_bits])
    drawn_packed = Packed(flows, bits, eff_bits)
    drawn = {}
    for op, m in movement.items():
        at, levels = model.bits_row[op], len(m.slots)
        drawn[op] = _Movement(
            bits[at : at + levels + 1], eff_bits[at : at + levels + 1], m.slots, drawn_packed
        )
    return drawn


def _scalar(movement: dict, i: int) -> dict:
    """Candidate ``i`` of a batched movement, as the scalar model's functions read one."""

    def flow(m, slot):
        return Flow._make(float(v) for v in m.packed.flows[slot, :, i]) if slot >= 0 else NO_FLOW

    return {
        op: SimpleNamespace(
            bits=[float(b[i]) for b in m.bits],
            eff_bits=[float(b[i]) for b in m.eff_bits],
            flows=[{d: flow(m, s) for d, s in zip(DIRECTIONS, level)} for level in m.slots],
        )
        for op, m in movement.items()
    }


def _scalar_latency(model, movement, movement_int) -> float:
    """``latency_total2`` of one candidate by the scalar model's functions."""
    setup = model.setup
    _, _, eff, eff_sh = memory_utilization(setup, movement)
    db = double_buffer_flags(setup, eff, eff_sh)
    real, allowed = transfer_cycles(setup, movement_int, db)
    ss_comb, _ = stall_slack(setup, movement_int, real, allowed)
    loading, offloading, _, _ = port_loading(setup, movement_int, real, ss_comb, model.total_cycle)
    onload, _ = onloading_cycles(setup, loading)
    offload, _ = offloading_cycles(setup, offloading)
    latency = model.total_cycle * model.cpo + ss_comb + onload + offload
    if model.latency_model == "bandwidth_bound":
        latency = max(latency, port_bound_cycles(setup, movement))
    return latency


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("latency_model", ["zigzag", "bandwidth_bound"])
def test_sets_repeating_bandwidths_give_each_sets_own_latencies(seed, latency_model):
    """Memory sets that repeat an earlier set's bandwidths under other sizes (the pass takes the
    earlier set's figures where a candidate's double buffering is the same) give, set by set,
    the latencies and exactness flags of that set computed alone, bit for bit."""
    model, ids, cuts = _model(seed, latency_model)
    movement, movement_int, _ = model.movements(ids, cuts, True)
    n = len(ids)
    rng = np.random.default_rng(200 + seed)
    drawn_int = _drawn(model, movement_int, n, rng)
    drawn = _drawn(model, movement, n, rng) if seed % 2 else movement
    sizes, duties, ports = memory_set(model)

    def scaled(values, factor):
        return tuple(None if v is None else v * factor for v in values)

    sets = [
        (scaled(sizes, size), scaled(duties, bandwidth), scaled(ports, bandwidth))
        for size in (1.0, 0.01, 100.0, 1.0)
        for bandwidth in (1, 4)
    ]
    latency, exact = _latencies(model, drawn, drawn_int, sets)
    assert latency.shape == exact.shape == (len(sets), n)
    for k, one in enumerate(sets):
        alone = _latencies(model, drawn, drawn_int, [one])
        assert latency[k].tobytes() == alone[0][0].tobytes(), k
        assert exact[k].tobytes() == alone[1][0].tobytes(), k
    assert latency[:2].tobytes() == latency[6:].tobytes()  # the same sets again


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("latency_model", ["zigzag", "bandwidth_bound"])
def test_compiled_latency_is_the_scalar_models(seed, latency_model):
    model, ids, cuts = _model(seed, latency_model)
    movement, movement_int, _ = model.movements(ids, cuts, True)
    n = len(ids)
    rng = np.random.default_rng(100 + seed)
    drawn_int = _drawn(model, movement_int, n, rng)
    drawn = _drawn(model, movement, n, rng) if seed % 2 else movement
    latency, exact = batch_latency(model, drawn, drawn_int, n)
    assert 0 < exact.sum() < n  # both kinds drawn
    for i in np.nonzero(exact)[0]:
        expected = _scalar_latency(model, _scalar(drawn, i), _scalar(drawn_int, i))
        assert latency[i] == expected, i


def test_timeline_union_is_the_scalar_models():
    from zigzag.cost.model.latency import PortActivity, marked_slots

    for periods, allowed, horizon in (([4, 8], [1, 3], 8), ([3, 8], [2, 5], 8), ([6], [0], 6)):
        acts = [PortActivity("", 0, "", 0, a, p, 0) for p, a in zip(periods, allowed)]
        got = kernels.timeline_union(np.array(periods), np.array(allowed), horizon)
        assert got == marked_slots(acts, horizon)


def test_reduce_balanced_leaves_a_surplus_not_above_zero_alone():
    for surplus in (0.0, -1.0, math.nan):
        current = np.array([5.0, 9.0])
        kernels.reduce_balanced(current, np.zeros(2), 2, surplus, np.empty(2, dtype=np.int64))
        assert current.tolist() == [5.0, 9.0]
