"""One evaluation path for a network: the API, a sweep point and the workflow's steps all plan the
network with ``plan_network`` and give the same layer results; the job result file the workflow
and the sweeps share; the accelerator and mapping checks the loaders and the sweeps share."""

from __future__ import annotations

import json

import pytest

from support import DATA, REPO
from zigzag.errors import InputError, MappingError
from zigzag.io.loaders import checked_accelerator, checked_mapping, load_inputs
from zigzag.io.yaml_files import load_yaml
from zigzag.io.sealed import DamagedFile, sealed_text
from zigzag.mapping_search.jobs import job_result_text, read_job_result
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.network import evaluate_network, plan_network
from zigzag.mapping_search.options import SearchOptions

ACCELERATOR = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
OPTIONS = {"lpf_limit": 3}


def figures(results) -> list[tuple]:
    return [(r.layer_name, r.energy_total, r.latency_total2) for r in results]


@pytest.fixture(scope="module")
def api_results():
    workload, accelerator = load_inputs(WORKLOAD, ACCELERATOR, MAPPING)
    return evaluate_network(workload, accelerator, SearchOptions(**OPTIONS))


def test_plan_names_each_layer_its_accelerator_and_needs_the_graph_for_locality():
    workload, accelerator = load_inputs(WORKLOAD, ACCELERATOR, MAPPING)
    plan = plan_network(workload.layers, accelerator)
    assert [layer.name for layer, _ in plan.layers] == [layer.name for layer in workload.layers]
    assert (
        all(a is accelerator for _, a in plan.layers) and plan.uncosted == () and plan.note is None
    )
    local = SearchOptions(exploit_data_locality=True)
    with pytest.raises(ValueError, match="needs the workload's graph"):
        plan_network(workload.layers, accelerator, local)
    trimmed = plan_network(workload.layers, accelerator, local, workload=workload)
    assert [layer.id for layer, _ in trimmed.layers] == [layer.id for layer, _ in plan.layers]


def test_search_is_called_once_per_distinct_layer(api_results):
    workload, accelerator = load_inputs(WORKLOAD, ACCELERATOR, MAPPING)
    options = SearchOptions(**OPTIONS)
    calls = []

    def search(layer, layer_accelerator):
        calls.append(layer.name)
        return search_layer(layer, layer_accelerator, options, show_progress=False)[0]

    network = evaluate_network(workload, accelerator, options, search=search)
    assert len(calls) == len(
        {json.dumps(layer.signature(), sort_keys=True, default=str) for layer in workload.layers}
    )
    assert figures(r for _, r in network.layers) == figures(r for _, r in api_results.layers)


def test_api_sweep_and_workflow_steps_give_the_same_layers(api_results, tmp_path):
    from zigzag.steps.parse import parse_accelerator, parse_workload
    from zigzag.steps.pipeline import evaluate_chunk, load_plan_results, plan_chunks, split_layers
    from zigzag.sweep import run_sweep

    expected = figures(r for _, r in api_results.layers)
    parse_workload(str(WORKLOAD), str(MAPPING), tmp_path / "w.json")
    parse_accelerator(str(ACCELERATOR), tmp_path / "a.json")
    experiment = {
        "name": "x",
        "workload": str(WORKLOAD),
        "accelerator": str(ACCELERATOR),
        "mapping": str(MAPPING),
        "options": SearchOptions(**OPTIONS).to_dict(),
    }
    cache = tmp_path / "cache"
    plan = split_layers(
        experiment, tmp_path / "w.json", tmp_path / "a.json", cache, tmp_path / "plan.json"
    )
    for chunk in plan_chunks(tmp_path / "plan.json"):
        evaluate_chunk(tmp_path / "plan.json", cache, chunk, tmp_path / f"{chunk}.json")
    assert figures(r for _, r in load_plan_results(plan, cache)) == expected
    # a sweep whose one variant is the accelerator itself: the same layers and totals
    dram = load_yaml(ACCELERATOR)["memories"]["dram"]["r_cost"]
    rows = run_sweep(
        {
            "name": "one",
            "base": str(ACCELERATOR),
            "vary": {"memories.dram.r_cost": [dram]},
            "workloads": [str(WORKLOAD)],
            "mapping": str(MAPPING),
            **OPTIONS,
        },
        tmp_path / "sweep",
        cache=cache,
    )
    assert rows[0]["status"] == "ok" and rows[0]["layers"] == len(expected)
    assert (rows[0]["energy_pJ"], rows[0]["latency_cycles"]) == (
        api_results.energy,
        api_results.latency,
    )


def test_job_result_file_round_trip_and_failure_record(api_results, tmp_path):
    layer, accelerator = (
        api_results.layers[0][0],
        api_results.accelerators[api_results.layers[0][0].id],
    )
    result, stats = search_layer(layer, accelerator, SearchOptions(**OPTIONS), show_progress=False)
    path = tmp_path / "result.json"
    path.write_text(job_result_text(result, stats, "k1"))
    assert read_job_result(path, "k1") == result
    with pytest.raises(DamagedFile, match="computed for key 'k1', not for 'k2'"):
        read_job_result(path, "k2")
    path.write_text(
        sealed_text({"failed": {"step": "evaluate_layer", "reason": "no spatial mapping fits"}})
    )
    with pytest.raises(MappingError, match="no spatial mapping fits"):
        read_job_result(path)


def test_checked_accelerator_and_mapping_of_documents_are_one_line_errors():
    document = load_yaml(ACCELERATOR)
    data = checked_accelerator(document, "variant-a")
    assert checked_mapping(load_yaml(MAPPING), data, "m.yaml")
    with pytest.raises(InputError, match=r"^variant-a: "):
        checked_accelerator({**document, "memories": "none"}, "variant-a")
    bad = [
        {
            "name": "default",
            "spatial_mapping": {"D4": {"K": 2}},
            "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
        }
    ]
    with pytest.raises(InputError, match=r"^m\.yaml: .*D4"):
        checked_mapping(bad, data, "m.yaml")
