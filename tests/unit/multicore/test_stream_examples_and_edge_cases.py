"""Multi-core examples and edge cases: every shipped example schedules (mesh links of infinite bandwidth included),
distinct front points, DRAM inside a compute core, core order in pictures, everything under
``--output``, empty layer stacks, and the CN-graph edges of Concat-heavy networks."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import fields
from pathlib import Path

import networkx as nx
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.multicore import edges as edges_module
from zigzag.multicore.allocation.front import distinct_points, front_csv
from zigzag.multicore.allocation.genes import Gene
from zigzag.multicore.allocation.nsga import FrontPoint
from zigzag.multicore.pipeline import search_allocation
from zigzag.multicore.cn_graph import build_cn_graph
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.mapping import parse_stream_mapping
from zigzag.multicore.plots.charts import read_front
from zigzag.multicore.plots.gantt import Rows
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.schedule.trace import load_trace
from zigzag.multicore.workload import StreamLayer
from zigzag.multicore.workload_onnx import read_stream_workload
from support import REPO
from support.cn_graphs import PlainMaps

ROOT = REPO
INPUTS = ROOT / "inputs" / "stream"
HARDWARE = INPUTS / "hardware"
RESNET = INPUTS / "workload" / "resnet18.onnx"
SMALL = INPUTS / "workload" / "small_3conv.onnx"
RESNET_FIXED = INPUTS / "mapping" / "tpu_like_quad_core_resnet18_fixed_split.yaml"
MESH = HARDWARE / "tpu_like_mesh_2x2.yaml"
#: shipped files with TPU-like roles (cores 0-3 compute, 4 pooling, 5 SIMD): ResNet-18, fixed split
SIX_CORE = {
    "tpu_like_quad_core.yaml",
    "tpu_like_mesh_2x2.yaml",
    "eyeriss_like_quad_core.yaml",
    "simba.yaml",
}
ONE_CORE_MAPPING = "- name: default\n  core_allocation: [0]\n  intra_core_tiling:\n    - OY, all\n"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("stream-cost-cache")


def _example(hardware: Path, tmp: Path) -> tuple[Path, Path]:
    if hardware.name in SIX_CORE:
        return RESNET, RESNET_FIXED
    mapping = tmp / "one_core.yaml"
    mapping.write_text(ONE_CORE_MAPPING)
    return SMALL, mapping


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["lbl", "fused"])
@pytest.mark.parametrize("hardware", sorted(HARDWARE.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_multicore_example_schedules(hardware, mode, cache, tmp_path):
    workload, mapping = _example(hardware, tmp_path)
    result = run_stream(hardware, workload, mapping, mode, cache=cache, output=tmp_path / "run")
    assert 0 < result.latency < math.inf and 0 < result.energy < math.inf
    assert np.all(np.isfinite(result.end)) and np.all(
        np.asarray(result.end) >= np.asarray(result.start)
    )
    assert (
        json.loads((tmp_path / "run" / "summary.json").read_text())["nb_cns"]
        == result.problem.nb_cns
    )


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["lbl", "fused"])
@pytest.mark.parametrize(
    "hardware, workload, mapping",
    [
        ("dual_testing_core.yaml", SMALL, "dual_testing_core.yaml"),
        ("tpu_like_quad_core.yaml", RESNET, "tpu_like_quad_core.yaml"),
        ("tpu_like_mesh_2x2.yaml", RESNET, "tpu_like_quad_core.yaml"),
    ],
    ids=["dual", "quad", "mesh"],
)
def test_shipped_flexible_mappings_search_on_every_fitting_example(
    hardware, workload, mapping, mode, cache, tmp_path
):
    found = search_allocation(
        HARDWARE / hardware,
        workload,
        INPUTS / "mapping" / mapping,
        mode,
        individuals=4,
        generations=1,
        seed=0,
        cache=cache,
        output=tmp_path,
    )
    rows = list(csv.DictReader((tmp_path / "front.csv").open()))
    assert rows and all(0 < float(r["latency"]) < math.inf for r in rows)
    assert found.fixed_schedule().latency > 0


def test_mesh_links_of_infinite_bandwidth_take_no_time_and_stay_idle(cache):
    accelerator = load_multicore_accelerator(MESH)
    free = {link.id for link in accelerator.links if math.isinf(link.bandwidth)}
    assert free, "the mesh shorthand gives the SIMD core links of infinite bandwidth"
    result = run_stream(MESH, RESNET, RESNET_FIXED, "lbl", cache=cache)
    routes = accelerator.routes
    only_free = [
        t
        for t in result.transfers
        if routes[(t.sender, t.receiver)]
        and {lk.id for lk in routes[(t.sender, t.receiver)]} <= free
    ]
    assert only_free, "some tensors travel on the SIMD core's free links"
    assert all(t.end == t.start and t.link_energy == 0 for t in only_free)
    position = {lk.id: i for i, lk in enumerate(accelerator.links)}
    assert all(event.activity == 0 for lk in free for event in result.link_events[position[lk]])


# ----- allocation-search fronts -----------------------------------------------------------------
def test_front_csv_lists_each_distinct_point_once_with_its_allocation_count(tmp_path):
    genes = (Gene(0, 0, (0, 1)), Gene(1, 0, (0, 1)))
    front = [
        FrontPoint(5.0, 10.0, (0, 0)),
        FrontPoint(5.0, 10.0, (0, 1)),
        FrontPoint(5.0, 10.0, (1, 0)),
        FrontPoint(7.0, 8.0, (1, 1)),
    ]
    assert [(p.cores, n) for p, n in distinct_points(front)] == [((0, 0), 3), ((1, 1), 1)]
    path = tmp_path / "front.csv"
    path.write_text(front_csv(genes, front))
    rows = list(csv.DictReader(path.open()))
    assert [(r["energy"], r["latency"], r["allocations"], r["allocation"]) for r in rows] == [
        ("5.0", "10.0", "3", "0:0=0 1:0=0"),
        ("7.0", "8.0", "1", "0:0=1 1:0=1"),
    ]
    assert [(p["energy"], p["latency"]) for p in read_front(path)] == [(5.0, 10.0), (7.0, 8.0)]


def test_search_front_file_has_no_repeated_point(cache, tmp_path):
    found = search_allocation(
        HARDWARE / "dual_testing_core.yaml",
        SMALL,
        INPUTS / "mapping" / "dual_testing_core.yaml",
        "lbl",
        individuals=8,
        generations=2,
        seed=0,
        cache=cache,
        output=tmp_path,
    )
    rows = list(csv.DictReader((tmp_path / "front.csv").open()))
    points = [(r["energy"], r["latency"]) for r in rows]
    assert len(points) == len(set(points)) == found.front_size
    assert sum(int(r["allocations"]) for r in rows) == len(found.front)
    summary = json.loads((tmp_path / "summary.json").read_text())["search"]
    assert (summary["front_size"], summary["front_allocations"]) == (len(rows), len(found.front))


# ----- DRAM inside a compute core ----------------------------------------------------------------
def test_a_compute_core_holding_a_dram_is_refused_in_one_line(tmp_path):
    core = (
        ROOT / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
    )  # a single-core file: its top memory is a DRAM
    top = tmp_path / "with_dram.yaml"
    top.write_text(
        f"name: two\ncores:\n  0: {core}\n  1: {core}\noffchip_core: {HARDWARE / 'cores' / 'offchip.yaml'}\n"
        "bandwidth: 32\nunit_energy_cost: 0\ncore_connectivity:\n  - 0, 1\n"
    )
    with pytest.raises(InputError) as caught:
        load_multicore_accelerator(top)
    message = str(caught.value)
    assert "\n" not in message and "memories.dram" in message and "offchip_core" in message
    assert str(core) in message


def test_the_offchip_core_may_hold_the_dram():
    accelerator = load_multicore_accelerator(HARDWARE / "tpu_like_quad_core.yaml")
    assert accelerator.offchip_core.top_memories[0].name == "dram"


# ----- pictures, output folder, layer stacks -----------------------------------------------------
def test_stream_run_writes_only_under_output_and_pictures_order_cores_by_id(tmp_path, monkeypatch):
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    monkeypatch.chdir(work)
    assert (
        main(
            [
                "stream",
                "run",
                "--accelerator",
                str(MESH),
                "--workload",
                str(RESNET),
                "--mapping",
                str(RESNET_FIXED),
                "--mode",
                "lbl",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    assert list(work.iterdir()) == []
    assert any((out / ".cache").rglob("*.json"))
    trace = load_trace(out / "schedule_trace.json")
    assert trace.cores == sorted(trace.cores) == [0, 1, 2, 3, 4, 5]
    assert Rows(trace).cores == [0, 1, 2, 3, 4, 5]
    first_core = [m.cores[0] for m in trace.memories if not m.offchip]
    assert first_core == sorted(first_core) == [0, 1, 2, 3, 4, 5]


def test_stream_search_writes_only_under_output(tmp_path, monkeypatch):
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    monkeypatch.chdir(work)
    assert (
        main(
            [
                "stream",
                "search",
                "--accelerator",
                str(HARDWARE / "dual_testing_core.yaml"),
                "--workload",
                str(SMALL),
                "--mapping",
                str(INPUTS / "mapping" / "dual_testing_core.yaml"),
                "--mode",
                "lbl",
                "--individuals",
                "2",
                "--generations",
                "1",
                "--quiet",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    assert (
        list(work.iterdir()) == []
        and any((out / ".cache").rglob("*.json"))
        and (out / "front.csv").exists()
    )


def test_stream_run_cache_option_puts_the_cost_cache_where_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shared = tmp_path / "shared-cache"
    assert (
        main(
            [
                "stream",
                "run",
                "--accelerator",
                str(HARDWARE / "dual_testing_core.yaml"),
                "--workload",
                str(SMALL),
                "--mapping",
                str(RESNET_FIXED.parent / "dual_testing_core.yaml"),
                "--mode",
                "lbl",
                "--output",
                str(tmp_path / "out"),
                "--cache",
                str(shared),
            ]
        )
        == 2
    )  # flexible mapping: refused
    mapping = tmp_path / "one_core.yaml"
    mapping.write_text(ONE_CORE_MAPPING)
    assert (
        main(
            [
                "stream",
                "run",
                "--accelerator",
                str(HARDWARE / "dual_testing_core.yaml"),
                "--workload",
                str(SMALL),
                "--mapping",
                str(mapping),
                "--mode",
                "lbl",
                "--output",
                str(tmp_path / "out"),
                "--cache",
                str(shared),
            ]
        )
        == 0
    )
    assert any(shared.rglob("*.json")) and not (tmp_path / "out" / ".cache").exists()
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("command", ["run", "search", "nodes"])
def test_empty_layer_stacks_is_a_one_line_error(command, tmp_path, capsys):
    code = main(
        [
            "stream",
            command,
            "--accelerator",
            str(HARDWARE / "dual_testing_core.yaml"),
            "--workload",
            str(SMALL),
            "--mapping",
            str(INPUTS / "mapping" / "dual_testing_core.yaml"),
            "--mode",
            "fused",
            "--layer-stacks",
            "",
            "--output",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--layer-stacks" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_empty_layer_stacks_in_a_workflow_experiment_is_an_error():
    from zigzag.steps.multicore import _stacks

    with pytest.raises(InputError, match="layer-stacks"):
        _stacks("")
    assert _stacks(None) is None


# ----- CN graph of a Concat-heavy network --------------------------------------------------------
def dense_block(path: Path, layers: int = 5, growth: int = 4, size: int = 8) -> Path:
    """A DenseNet-like block: every conv reads the Concat of the stem's and all earlier convs' outputs."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])
    nodes, inits, infos, features = [], [], [], []

    def conv(name: str, source: str, channels_in: int, channels_out: int) -> str:
        inits.append(
            helper.make_tensor(
                f"{name}.w",
                TensorProto.FLOAT,
                [channels_out, channels_in, 3, 3],
                [0.0] * (channels_out * channels_in * 9),
            )
        )
        nodes.append(
            helper.make_node(
                "Conv",
                [source, f"{name}.w"],
                [f"{name}.y"],
                name=f"/{name}/Conv",
                pads=[1, 1, 1, 1],
                kernel_shape=[3, 3],
            )
        )
        infos.append(
            helper.make_tensor_value_info(
                f"{name}.y", TensorProto.FLOAT, [1, channels_out, size, size]
            )
        )
        return f"{name}.y"

    features.append(conv("stem", "x", 3, growth))
    for i in range(layers):
        joined = f"cat{i}.y"
        nodes.append(
            helper.make_node("Concat", list(features), [joined], name=f"/cat{i}/Concat", axis=1)
        )
        infos.append(
            helper.make_tensor_value_info(
                joined, TensorProto.FLOAT, [1, growth * len(features), size, size]
            )
        )
        features.append(conv(f"conv{i}", joined, growth * len(features), growth))
    last = infos[-1]
    graph = helper.make_graph(nodes, "dense", [x], [last], initializer=inits, value_info=infos[:-1])
    onnx.save(helper.make_model(graph), path)
    return path


@pytest.fixture(scope="module")
def dense_workload(tmp_path_factory):
    path = dense_block(tmp_path_factory.mktemp("dense") / "dense.onnx")
    return read_stream_workload(
        path, parse_stream_mapping([{"name": "default", "core_allocation": [0]}])
    )


def _filtered_simple_paths(workload, graph, producer, consumer):
    """The definition the fast walk must meet: all simple paths with non-computation inner nodes."""
    return [
        path
        for path in nx.all_simple_paths(graph, producer, consumer)
        if all(not isinstance(workload.nodes[n], StreamLayer) for n in path[1:-1])
    ]


def test_propagation_paths_equal_the_filtered_simple_paths_in_order(dense_workload):
    graph = dense_workload.graph()
    layers = [n for n in graph if isinstance(dense_workload.nodes[n], StreamLayer)]
    checked = 0
    for producer in layers:
        for consumer in layers:
            if producer != consumer:
                expected = _filtered_simple_paths(dense_workload, graph, producer, consumer)
                assert (
                    edges_module.propagation_paths(dense_workload, graph, producer, consumer)
                    == expected
                )
                checked += bool(expected)
    assert checked >= 15  # each conv reaches every later conv through one Concat


@pytest.mark.parametrize("mode", ["lbl", "fused"])
def test_concat_heavy_cn_graph_equals_the_one_from_the_plain_definitions(
    dense_workload, mode, monkeypatch
):
    fast = build_cn_graph(dense_workload, mode, weight_capacity=1 << 30)
    monkeypatch.setattr(edges_module, "propagation_paths", _filtered_simple_paths)
    monkeypatch.setattr(edges_module, "ElementMaps", PlainMaps)
    plain = build_cn_graph(dense_workload, mode, weight_capacity=1 << 30)
    assert len(fast) == len(plain) and fast.nb_edges == plain.nb_edges > len(fast)
    arrays = [f.name for f in fields(fast) if isinstance(getattr(fast, f.name), np.ndarray)]
    assert "edge_src" in arrays and "data_produced_unique" in arrays
    for name in arrays:
        assert np.array_equal(getattr(fast, name), getattr(plain, name)), name
