"""The automatic mapping's split of a layer with no G or K loop > 1: the gathered-experts MatMul of
the Qwen3-MoE prefill export (weights first: O[b][d][k] with K = 1) is split along its largest
output loop, D; a layer whose output loops are all 1 stays whole on one core
(docs/models/multi-core.md#constraint-optimisation-allocation)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import yaml

from zigzag.multicore.tiling import default_split_dim
from support import DATA

MOE = DATA / "llm" / "qwen3_moe_prefill.onnx"
QUAD = DATA / "stream2" / "hardware" / "tpu_like_quad_core.yaml"
BATCHED = SimpleNamespace(operand_dims={"O": ("B", "D", "K"), "I": ("B", "D", "C")})


def test_g_then_k_then_the_largest_output_loop():
    assert default_split_dim(BATCHED, {"B": 128, "D": 1536, "K": 2, "C": 2048}) == "K"
    assert default_split_dim(BATCHED, {"G": 2, "B": 128, "D": 1536, "K": 2, "C": 8}) == "G"
    assert default_split_dim(BATCHED, {"B": 128, "D": 1536, "K": 1, "C": 2048}) == "D"
    assert default_split_dim(BATCHED, {"B": 128, "D": 1, "K": 1, "C": 2048}) == "B"
    assert (
        default_split_dim(BATCHED, {"B": 4, "D": 4, "K": 1, "C": 2048}) == "B"
    )  # a tie: O's order


def test_a_layer_whose_output_loops_are_all_one_has_no_split():
    assert default_split_dim(BATCHED, {"B": 1, "D": 1, "K": 1, "C": 2048}) is None


@pytest.mark.slow
def test_the_constraint_optimisation_splits_the_expert_products_over_the_cores(tmp_path):
    """Without a mapping (the automatic one) and with the zigzag latency model (no DRAM-link
    bound), each expert product is split four ways along D on the four cores, and the split is
    what the schedule runs."""
    from zigzag.multicore.pipeline.calls import optimize_co

    run = optimize_co(
        QUAD, MOE, None, "lbl", time_limit=60, cache=tmp_path / "cache", latency_model="zigzag"
    )
    written = {e["name"]: e for e in yaml.safe_load(run.allocated.allocation_yaml())}
    experts = [name for name in written if name.endswith("/experts/MatMul")]
    assert len(experts) == 2
    for name in experts:
        assert written[name]["inter_core_tiling"] == ["D, 4"]
        assert written[name]["core_allocation"] == [0, 1, 2, 3]
    rows = run.schedule.cn_rows()
    layers = {int(row["layer_id"]) for row in rows}
    names = {lay: run.allocated.graph.layers[lay].name for lay in layers}
    parts = [(row["layer_id"], row["core"]) for row in rows if names[row["layer_id"]] in experts]
    assert sorted(core for _, core in parts) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert run.schedule.latency > 0 and run.schedule.energy > 0


@pytest.mark.slow
def test_parts_queued_on_the_one_dram_link_are_not_worth_a_split(tmp_path):
    """With the bandwidth bound (the LLM default), the expert products stream their weights over
    the one DRAM link the four cores share: four parts would hold it as long as one whole product,
    so the solver keeps each product whole, and the schedule is no slower than the four-way split
    the model chose when it counted each part's bits on a link of its own."""
    from zigzag.multicore.pipeline.calls import optimize_co, run_stream

    run = optimize_co(QUAD, MOE, None, "lbl", time_limit=60, cache=tmp_path / "cache")
    written = yaml.safe_load(run.allocated.allocation_yaml())
    experts = [e for e in written if e["name"].endswith(("/experts/MatMul", "/experts/MatMul_1"))]
    assert len(experts) == 4
    assert all(len(e["core_allocation"]) == 1 for e in experts)
    for e in experts:  # the same allocation with every expert product split D, 4 over the cores
        e.update(core_allocation=[0, 1, 2, 3], inter_core_tiling=["D, 4"])
    split = tmp_path / "split.yaml"
    split.write_text(yaml.safe_dump(written, sort_keys=False))
    four = run_stream(QUAD, MOE, split, "lbl", cache=tmp_path / "cache")
    assert run.schedule.latency <= four.latency and run.schedule.energy <= four.energy
