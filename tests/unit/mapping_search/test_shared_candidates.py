"""Variants that differ only in memory costs share mapping candidates (zigzag/mapping_search/batched/shared.py):
the shared path gives the unshared path's rows and layer results, bit for bit."""

from __future__ import annotations

import json

import pytest
import yaml

from support import DATA, REPO
from support.sharing import tpu32_mapping_entries
from zigzag.mapping_search.batched.shared import SharedCandidates, cost_free_job
from zigzag.cost.result import CostResult
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_accelerator, load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping_search.jobs import job_key, layer_job
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.sweep.config import read_sweep
from zigzag.sweep.runner import evaluate_points, point_row, variants_of

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_array.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"


def sweep_of(opt: str, *, lpf_limit: int = 4):
    """2 shapes x 3 buffer sizes (structure; the smallest too small for a layer) x 2 DRAM x 2
    buffer energies (costs only); the DRAM cost is an int in the base file (the exactness check
    of integer costs runs)."""
    return read_sweep(
        {
            "name": "costs",
            "base": str(BASE),
            "params": {
                "D1": "operational_array.sizes[0]",
                "D2": "operational_array.sizes[1]",
                "ub": "memories.unified_buffer.size",
                "dram": "memories.dram.r_cost",
                "ube": "memories.unified_buffer.r_cost",
            },
            "zip": [{"D1": [16, 32], "D2": [64, 32]}],
            "vary": {"ub": ["4KiB", "1MiB", "2MiB"], "dram": [1950, 1.5], "ube": [200.0, 1567.67]},
            "derive": {
                "memories.unified_buffer.w_cost": "ube",
                "memories.accumulators.ports[0].bandwidth_max": "D1 * 16",
            },
            "workloads": [str(WORKLOAD)],
            "mapping": str(MAPPING),
            "opt": opt,
            "lpf_limit": lpf_limit,
        },
        "test",
    )


@pytest.mark.parametrize("opt", ["latency", "energy", "EDP"])
def test_shared_rows_equal_unshared_rows(tmp_path, opt):
    sweep = sweep_of(opt)
    variants = variants_of(sweep)
    assert len(variants) == 24
    unshared = evaluate_points(sweep, variants, tmp_path / "unshared", share=False)
    shared = SharedCandidates()
    rows = [
        point_row(sweep, v, w, tmp_path / "with_sharing", shared=shared)
        for v in variants
        for w in sweep.workloads
    ]
    assert sorted(r["status"] for r in rows) == ["infeasible"] * 8 + ["ok"] * 16
    assert json.dumps(rows, sort_keys=True) == json.dumps(unshared, sort_keys=True)
    # 6 structures x the layers' spatial mappings were searched; the 3 cost siblings of each re-scored
    assert shared.built > 0 and shared.reused == 3 * shared.built
    # winners kept by several cost siblings were re-costed, not evaluated again by the scalar model
    assert (
        sum(len(table.winners) for table in shared.tables.values()) < shared.built + shared.reused
    )
    # the layer-result files hold to_dict()'s form, read back to the same result
    files = sorted((tmp_path / "with_sharing" / "results").glob("*.json"))
    assert files
    for path in files:
        written = json.loads(path.read_text())["result"]
        assert CostResult.from_dict(written).to_dict() == written


def test_rescoring_can_change_the_winner_and_stays_exact():
    """Under opt=energy the best mapping of a layer moves when memory energies do; the shared
    path, fed the other variant's candidates, finds each variant's own winner."""
    options = SearchOptions(opt="energy", lpf_limit=4)
    network = load_workload(str(WORKLOAD), tpu32_mapping_entries())
    cheap = load_accelerator(str(BASE))
    document = yaml.safe_load(BASE.read_text())
    document["memories"]["dram"]["r_cost"] = document["memories"]["dram"]["w_cost"] = 1.0
    document["memories"]["acc_reg"]["r_cost"] = document["memories"]["acc_reg"]["w_cost"] = 1000.0
    dear = accelerator_from_dict(validate_accelerator(document, "dear"))
    moved = 0
    for layer in network.layers:
        jobs = [layer_job(layer, a, options) for a in (cheap, dear)]
        assert job_key(jobs[0]) != job_key(jobs[1])
        assert job_key(cost_free_job(jobs[0])) == job_key(cost_free_job(jobs[1]))
        shared = SharedCandidates()
        key = job_key(cost_free_job(jobs[0]))
        for accelerator in (cheap, dear):
            alone, _ = search_layer(layer, accelerator, options, show_progress=False)
            together, _ = search_layer(
                layer, accelerator, options, show_progress=False, shared=(shared, key)
            )
            assert together.to_dict() == alone.to_dict()
        assert shared.reused >= 1
        first, _ = search_layer(layer, cheap, options, show_progress=False)
        second, _ = search_layer(layer, dear, options, show_progress=False)
        moved += first.to_dict().get("temporal_mapping") != second.to_dict().get("temporal_mapping")
    assert moved >= 1, "no layer's winner moved: the test does not exercise re-scoring"


def test_cost_free_key_keeps_everything_but_costs():
    options = SearchOptions(lpf_limit=4)
    accelerator = load_accelerator(str(BASE))
    layer = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers[0]
    job = layer_job(layer, accelerator, options)
    bigger = json.loads(json.dumps(job))
    bigger["accelerator"]["memories"]["unified_buffer"]["size"] *= 2
    assert job_key(cost_free_job(bigger)) != job_key(cost_free_job(job))
    dearer = json.loads(json.dumps(job))
    dearer["accelerator"]["memories"]["unified_buffer"]["r_cost"] *= 2
    dearer["accelerator"]["memories"]["unified_buffer"]["area"] *= 2
    assert job_key(cost_free_job(dearer)) == job_key(cost_free_job(job))
    faster = json.loads(json.dumps(job))
    faster["accelerator"]["memories"]["unified_buffer"]["ports"][0]["bandwidth_max"] *= 2
    assert job_key(cost_free_job(faster)) != job_key(cost_free_job(job))


def test_tables_beyond_the_memory_budget_are_used_once_not_kept():
    options = SearchOptions(lpf_limit=4)
    accelerator = load_accelerator(str(BASE))
    layer = load_workload(str(WORKLOAD), tpu32_mapping_entries()).layers[0]
    alone, _ = search_layer(layer, accelerator, options, show_progress=False)
    tiny = SharedCandidates(budget=1)
    for _ in range(2):
        together, _ = search_layer(
            layer, accelerator, options, show_progress=False, shared=(tiny, "key")
        )
        assert together.to_dict() == alone.to_dict()
    assert (tiny.built, tiny.reused, len(tiny.tables), tiny.nbytes) == (2, 0, 0, 0)
    roomy = SharedCandidates()
    for _ in range(2):
        search_layer(layer, accelerator, options, show_progress=False, shared=(roomy, "key"))
    assert (roomy.built, roomy.reused, len(roomy.tables)) == (
        1,
        1,
        1,
    ) and 0 < roomy.nbytes <= roomy.budget
