"""Figures and loop-nest text of zigzag.plots."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from support import REPO, reference_input
from zigzag import plots
from zigzag.cost.result import CumulativeResult, sum_results
from zigzag.plots.memory import _layered_layout

_reference = reference_input


def assert_readable_image(path: Path, *, min_width: int = 400, min_height: int = 300) -> np.ndarray:
    """The file is a decodable image of a sensible size with real content (not blank)."""
    assert path.exists() and path.stat().st_size > 5_000, path
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"))
    height, width, _ = pixels.shape
    assert width >= min_width and height >= min_height, (width, height)
    assert width <= 8000 and height <= 8000, (width, height)
    non_white = np.any(pixels < 245, axis=2).mean()
    assert 0.01 < non_white < 0.95, non_white  # drawn, but not a solid block
    packed = (
        (pixels[..., 0].astype(np.int32) << 16)
        | (pixels[..., 1].astype(np.int32) << 8)
        | pixels[..., 2]
    )
    assert len(np.unique(packed)) > 20  # text, lines and fills
    return pixels


# ---------------------------------------------------------------------------------------------
# results to draw
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gemm_results():
    """Best results of the gemm layer on the two gemm accelerators (each found in < 1 s)."""
    from zigzag.io.loaders import load_inputs
    from zigzag.mapping_search.layer_search import search_layer
    from zigzag.mapping_search.options import SearchOptions

    results = []
    for accelerator in ("gemm_l1", "gemm_l1_l3"):
        workload, hardware = load_inputs(
            _reference("workload", "gemm_layer.yaml"),
            _reference("hardware", f"{accelerator}.yaml"),
            _reference("mapping", f"{accelerator}.yaml"),
        )
        best, _ = search_layer(
            workload.layers[0], hardware, SearchOptions(lpf_limit=3), show_progress=False
        )
        results.append(best)
    return results


@pytest.fixture(scope="module")
def network(gemm_results):
    """A made-up 'network' of several layers with varied energies and latencies."""
    a, b = gemm_results
    layers = []
    for i in range(6):
        base = a if i % 2 == 0 else b
        scale = 1 + i
        layers.append(
            dataclasses.replace(
                base,
                layer_id=i,
                layer_name=f"conv{i}",
                mac_energy=base.mac_energy * scale,
                mem_energy_breakdown={
                    op: tuple(e * scale for e in v) for op, v in base.mem_energy_breakdown.items()
                },
                energy_total=base.energy_total * scale,
            )
        )
    return layers


def tpu_layer2_result(template):
    """The loop-nest example of docs/models/mapping-search.md#outputs (resnet18 layer 2 on tpu_like) as a result."""
    return dataclasses.replace(
        template,
        layer_name="Layer2",
        memory_names={
            "O": ("rf_2B", "sram_2MB", "dram"),
            "I": ("sram_2MB", "dram"),
            "W": ("rf_128B", "dram"),
        },
        temporal_mapping_stationary={
            "O": ((("C", 2), ("FY", 3), ("FX", 3)), (("OY", 56), ("OX", 56), ("K", 2)), ()),
            "W": ((("C", 2), ("FY", 3), ("FX", 3), ("OY", 56), ("OX", 56), ("K", 2)), ()),
            "I": ((("C", 2), ("FY", 3), ("FX", 3), ("OY", 56), ("OX", 56), ("K", 2)), ()),
        },
        spatial_mapping_int={
            "O": ((("K", 32),), (("C", 32),), (), ()),
            "I": ((("K", 32), ("C", 32)), (), ()),
            "W": ((("K", 32), ("C", 32)), ()),
        },
    )


# ---------------------------------------------------------------------------------------------
# components
# ---------------------------------------------------------------------------------------------


def test_energy_components_add_up_and_are_labelled(gemm_results):
    result = gemm_results[1]  # gemm_l1_l3: O in reg_O / l1 / l3
    parts = plots.energy_components(result)
    assert list(parts)[0] == "MAC"
    assert {"O@reg_O", "O@l1", "O@l3", "I@l1", "I@l3", "W@l1", "W@l3"} <= set(parts)
    assert math.isclose(sum(parts.values()), result.energy_total, rel_tol=1e-12)
    assert parts["O@reg_O"] == result.mem_energy_breakdown["O"][0]


def test_latency_components_add_up_to_latency_total2(gemm_results, network):
    for result in [*gemm_results, *network]:
        parts = plots.latency_components(result)
        assert tuple(parts) == plots.LATENCY_COMPONENTS
        assert math.isclose(sum(parts.values()), result.latency_total2, rel_tol=1e-12)
        assert parts["ideal computation"] == result.ideal_cycle
        assert parts["memory stalls"] == result.latency_total0 - result.ideal_temporal_cycle


# ---------------------------------------------------------------------------------------------
# per-layer figures
# ---------------------------------------------------------------------------------------------


def test_energy_breakdown_png(network, tmp_path):
    path = plots.plot_energy_breakdown(network, tmp_path / "energy.png")
    assert path == tmp_path / "energy.png"
    assert_readable_image(path)


def test_latency_breakdown_png(network, tmp_path):
    assert_readable_image(plots.plot_latency_breakdown(network, tmp_path / "latency.png"))


@pytest.mark.slow
def test_breakdowns_of_many_layers_stay_readable(network, tmp_path):
    many = [
        dataclasses.replace(network[i % len(network)], layer_name=f"layer_{i}") for i in range(90)
    ]
    energy = assert_readable_image(plots.plot_energy_breakdown(many, tmp_path / "energy.png"))
    latency = assert_readable_image(plots.plot_latency_breakdown(many, tmp_path / "latency.png"))
    assert energy.shape[1] < 7000 and latency.shape[1] < 7000


def test_negative_latency_parts_are_drawn_below_zero(gemm_results, tmp_path):
    odd = dataclasses.replace(
        gemm_results[0], latency_total1=gemm_results[0].latency_total0 - 100.0
    )
    assert plots.latency_components(odd)["on-loading"] == -100.0
    assert_readable_image(
        plots.plot_latency_breakdown([odd, gemm_results[1]], tmp_path / "latency.png")
    )


@pytest.mark.parametrize("fmt, magic", [("svg", b"<svg"), ("pdf", b"%PDF")])
def test_vector_formats(network, tmp_path, fmt, magic):
    path = plots.plot_energy_breakdown(network, tmp_path / f"energy.{fmt}")
    assert magic in path.read_bytes()[:2000]
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind


def test_temporal_mapping_breakdowns(gemm_results, tmp_path):
    candidates = [dataclasses.replace(gemm_results[i % 2], layer_name="Layer0") for i in range(75)]
    pixels = assert_readable_image(
        plots.plot_temporal_mapping_breakdowns(candidates, tmp_path / "tm.png")
    )
    assert pixels.shape[0] > pixels.shape[1] / 3  # two stacked panels


# ---------------------------------------------------------------------------------------------
# loop nest text
# ---------------------------------------------------------------------------------------------

TPU_LAYER2_LOOP_NEST = """\
Loop ordering for Layer2
============================================================================
Temporal Loops                       O            W            I            
============================================================================
for K in [0, 2):                     sram_2MB     rf_128B      sram_2MB     
----------------------------------------------------------------------------
  for OX in [0, 56):                 sram_2MB     rf_128B      sram_2MB     
----------------------------------------------------------------------------
    for OY in [0, 56):               sram_2MB     rf_128B      sram_2MB     
----------------------------------------------------------------------------
      for FX in [0, 3):              rf_2B        rf_128B      sram_2MB     
----------------------------------------------------------------------------
        for FY in [0, 3):            rf_2B        rf_128B      sram_2MB     
----------------------------------------------------------------------------
          for C in [0, 2):           rf_2B        rf_128B      sram_2MB     
----------------------------------------------------------------------------
============================================================================
Spatial Loops                                                               
============================================================================
            parfor C in [0, 32):                                            
----------------------------------------------------------------------------
            parfor K in [0, 32):                                            
----------------------------------------------------------------------------

"""


def test_loop_nest_text_matches_print_mapping_format(gemm_results):
    result = tpu_layer2_result(gemm_results[0])
    assert plots.loop_nest_text(result, ["O", "W", "I"]) == TPU_LAYER2_LOOP_NEST


def test_loop_nest_text_default_operand_order_and_indent(gemm_results):
    result = tpu_layer2_result(gemm_results[0])
    text = plots.loop_nest_text(result, indent=4)
    lines = text.splitlines()
    assert lines[2].split() == ["Temporal", "Loops", "O", "I", "W"]
    assert lines[6].startswith("    for OX in [0, 56):  ")
    assert "                        parfor C in [0, 32):" in text  # 6 loops deep x 4 spaces


def test_loop_nest_text_of_a_search_result(gemm_results):
    result = gemm_results[1]
    text = plots.loop_nest_text(result)
    lines = text.splitlines()
    assert lines[0] == "Loop ordering for Layer0"
    temporal = [l for l in lines if l.lstrip().startswith("for ")]
    spatial = [l for l in lines if l.lstrip().startswith("parfor ")]
    nest = [loop for level in result.temporal_mapping_stationary["O"] for loop in level]
    assert len(temporal) == len(nest)
    assert temporal[0].startswith(f"for {nest[-1][0]} in [0, {nest[-1][1]}):")  # outermost first
    assert len(spatial) == sum(len(level) for level in result.spatial_mapping_int["O"])
    # every memory named for a loop is a memory of that operand
    operands = list(result.memory_names)
    for line in temporal:
        holders = line.split("):", 1)[1].split()
        assert len(holders) == len(operands)
        for op, name in zip(operands, holders):
            assert name in result.memory_names[op]
    # rules as wide as the header row
    widths = {len(l) for l in lines if l and set(l) <= {"=", "-"}}
    assert len(widths) == 1 and len(lines[2]) == widths.pop()


def test_network_sum_can_be_drawn_beside_its_layers(gemm_results, tmp_path):
    total = sum_results(gemm_results)
    assert math.isclose(
        sum(plots.energy_components(total).values()), total.energy_total, rel_tol=1e-12
    )
    assert math.isclose(
        sum(plots.latency_components(total).values()), total.latency_total2, rel_tol=1e-12
    )
    assert_readable_image(
        plots.plot_energy_breakdown([*gemm_results, total], tmp_path / "energy.png")
    )


def test_loop_nest_text_of_network_sum_is_empty(gemm_results):
    assert plots.loop_nest_text(sum_results(gemm_results)) == ""
    assert plots.loop_nest_text(CumulativeResult()) == ""


# ---------------------------------------------------------------------------------------------
# memory hierarchy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["tpu_like", "eyeriss_like", "ascend_like", "gemm_l1", "gemm_l1_l3"]
)
def test_memory_hierarchy(name, tmp_path):
    from zigzag.io.loaders import load_accelerator

    accelerator = load_accelerator(_reference("hardware", f"{name}.yaml"))
    assert_readable_image(
        plots.plot_memory_hierarchy(accelerator, tmp_path / "hierarchy.png"), min_height=400
    )


def test_layered_layout_routes_long_links_around_rows():
    rows = [["array"], ["a", "b"], ["c"], ["d"]]
    edges = [("array", "a"), ("array", "b"), ("a", "c"), ("b", "d"), ("c", "d")]
    position, routes = _layered_layout(rows, edges)
    assert {n: position[n][1] for n in ("array", "a", "b", "c", "d")} == {
        "array": 0,
        "a": 1,
        "b": 1,
        "c": 2,
        "d": 3,
    }
    long_route = routes[edges.index(("b", "d"))]
    assert [p[1] for p in long_route] == [1.0, 2.0, 3.0]  # one bend point in the row it crosses
    assert abs(long_route[1][0] - position["c"][0]) >= 0.7  # beside c's box, not through it
    for names in rows:
        xs = sorted(position[n][0] for n in names)
        assert all(b - a >= 0.99 for a, b in zip(xs, xs[1:]))


# ---------------------------------------------------------------------------------------------
# experiments
# ---------------------------------------------------------------------------------------------


def _table(points):
    return pd.DataFrame([{"experiment": n, "energy": e, "latency": l} for n, e, l in points])


def test_pareto_front():
    table = _table(
        [
            ("a", 1.0, 10.0),  # front (lowest energy)
            ("b", 2.0, 5.0),  # front
            ("c", 3.0, 5.0),  # dominated by b (same latency, more energy)
            ("d", 4.0, 1.0),  # front (lowest latency)
            ("e", 5.0, 6.0),  # dominated by b and d
            ("f", 2.0, 5.0),  # equal to b: kept
            ("g", float("nan"), 1.0),  # incomplete: left out
        ]
    )
    front = plots.pareto_front(table)
    assert list(front["experiment"]) == ["a", "b", "f", "d"]  # by energy, then latency
    assert list(front.index) == [0, 1, 2, 3]
    assert list(front.columns) == ["experiment", "energy", "latency"]


def test_pareto_front_edge_cases():
    assert list(plots.pareto_front(_table([("only", 3.0, 4.0)]))["experiment"]) == ["only"]
    assert plots.pareto_front(pd.DataFrame(columns=["experiment", "energy", "latency"])).empty
    same = _table([("x", 1.0, 1.0), ("y", 1.0, 1.0)])
    assert list(plots.pareto_front(same)["experiment"]) == ["x", "y"]
    chain = _table([(f"p{i}", float(i), float(10 - i)) for i in range(10)])
    assert len(plots.pareto_front(chain)) == 10
    custom = chain.rename(columns={"energy": "E", "latency": "T"})
    assert len(plots.pareto_front(custom, energy="E", latency="T")) == 10


def test_pareto_front_against_brute_force():
    rng = np.random.default_rng(7)
    table = _table(
        [
            (f"r{i}", float(e), float(l))
            for i, (e, l) in enumerate(rng.integers(1, 12, size=(60, 2)))
        ]
    )
    expected = {
        row.experiment
        for row in table.itertuples()
        if not any(
            (o.energy <= row.energy and o.latency <= row.latency)
            and (o.energy < row.energy or o.latency < row.latency)
            for o in table.itertuples()
        )
    }
    assert set(plots.pareto_front(table)["experiment"]) == expected


@pytest.mark.parametrize("spread", ["narrow", "wide"])
def test_experiments_comparison(tmp_path, spread):
    factor = 1.3 if spread == "narrow" else 40.0
    points = [(f"exp{i}", 1e6 * factor ** (i % 4), 5e4 * factor ** ((7 - i) % 5)) for i in range(8)]
    assert_readable_image(plots.plot_experiments_comparison(_table(points), tmp_path / "cmp.png"))


def test_experiments_comparison_single_experiment(tmp_path):
    assert_readable_image(
        plots.plot_experiments_comparison(_table([("solo", 2e6, 3e4)]), tmp_path / "cmp.png")
    )


# ---------------------------------------------------------------------------------------------
# figures of the workflow: per-layer (50-200 layers), per-workload fronts, sizes and bandwidths
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [3, 53, 200])
def test_layer_breakdowns_grow_with_the_layers(network, tmp_path, count):
    import time

    many = [
        dataclasses.replace(
            network[i % len(network)], layer_name=f"/block{i // 3}/conv{i % 3}/Conv"
        )
        for i in range(count)
    ]
    started = time.process_time()
    pixels = assert_readable_image(plots.plot_layer_breakdowns(many, tmp_path / "layers.png"))
    elapsed = time.process_time() - started
    height, width, _ = pixels.shape
    assert width == 1300  # 13 inch at 100 dpi, whatever the count
    rows = 16 if count <= 80 else 12  # pixels per layer
    assert height >= rows * count
    assert elapsed < 30  # a sanity bound only (the benchmark measures it)


def test_layer_breakdowns_note_negative_onloading(gemm_results, tmp_path):
    odd = dataclasses.replace(
        gemm_results[0], latency_total1=gemm_results[0].latency_total0 - 100.0
    )
    path = plots.plot_layer_breakdowns([odd, gemm_results[1]], tmp_path / "layers.svg")
    text = path.read_text()
    assert "negative on-loading" in text
    clean = plots.plot_layer_breakdowns(gemm_results, tmp_path / "clean.svg").read_text()
    assert "negative on-loading" not in clean


def test_memory_sizes_and_bandwidths():
    from zigzag.io.loaders import load_accelerator
    from zigzag.plots.memory import bandwidth_text, size_text

    assert [size_text(b) for b in (16, 8 * 128, 8 * 2**21, 8 * 3 * 2**20, 8 * 2**30 * 1.5, 12)] == [
        "2 B",
        "128 B",
        "2 MiB",
        "3 MiB",
        "1.5 GiB",
        "12 b",
    ]
    hardware = load_accelerator(str(REPO / "inputs/hardware/flow_tpu_32x32.yaml"))
    assert bandwidth_text(hardware.memory["unified_buffer"]) == "r 2x512, w 2x512 b/cycle"
    assert bandwidth_text(hardware.memory["dram"]) == "rw 64 b/cycle"
    assert bandwidth_text(hardware.memory["w_reg"]) == "r 8, w 8 b/cycle"


def test_memory_hierarchy_labels_show_sizes_and_bandwidths(tmp_path):
    from zigzag.io.loaders import load_accelerator

    hardware = load_accelerator(str(REPO / "inputs/hardware/flow_tpu_32x32.yaml"))
    svg = plots.plot_memory_hierarchy(hardware, tmp_path / "h.svg").read_text()
    for text in (
        "3 MiB x1",
        "512 KiB x1",
        "2 B x1024",
        "r 2x512, w 2x512 b/cycle",
        "rw 64 b/cycle",
    ):
        assert text in svg, text


def _experiments(points):
    return pd.DataFrame(
        [
            {
                "experiment": f"{w}-{a}-{o}",
                "workload": w,
                "accelerator": a,
                "opt": o,
                "energy_pJ": e,
                "latency_cycles": l,
            }
            for w, a, o, e, l in points
        ]
    )


def test_pareto_fronts_are_per_workload():
    table = _experiments(
        [
            ("resnet", "big", "latency", 10.0, 5.0),
            ("resnet", "small", "latency", 8.0, 9.0),
            ("resnet", "small", "energy", 9.0, 10.0),  # dominated by resnet-small-latency
            ("tiny", "big", "latency", 1.0, 1.0),  # would dominate every resnet point in one front
            ("tiny", "small", "energy", 2.0, 0.5),
        ]
    )
    fronts = plots.pareto_fronts(table)
    assert list(fronts["experiment"]) == [
        "resnet-small-latency",
        "resnet-big-latency",
        "tiny-big-latency",
        "tiny-small-energy",
    ]
    assert list(
        plots.pareto_front(table, energy="energy_pJ", latency="latency_cycles")["experiment"]
    ) == ["tiny-big-latency", "tiny-small-energy"]


def test_plot_pareto_per_workload(tmp_path):
    rng = np.random.default_rng(3)
    points = [
        (w, a, o, float(rng.uniform(1, 50) * 1e9), float(rng.uniform(1, 50) * 1e6))
        for w in ("resnet18", "mobilenetv2", "alexnet")
        for a in ("acc_a", "acc_b", "acc_c")
        for o in ("latency", "energy")
    ]
    path = plots.plot_pareto_per_workload(_experiments(points), tmp_path / "fronts.svg")
    svg = path.read_text()
    for text in (
        "resnet18:",
        "mobilenetv2:",
        "alexnet:",
        "acc_c",
        "opt energy",
        "Pareto front of the workload",
    ):
        assert text in svg, text
    assert_readable_image(
        plots.plot_pareto_per_workload(_experiments(points), tmp_path / "fronts.png")
    )


def test_layer_labels_drop_the_scopes_onnx_names_repeat():
    from zigzag.plots.breakdowns import _short_label

    assert (
        _short_label("/features/features.1/conv/conv.0/conv.0.0/Conv") == "features.1/conv.0.0/Conv"
    )
    assert _short_label("/classifier/classifier.1/Gemm") == "classifier.1/Gemm"
    assert _short_label("/blocks.0/attn/MatMul_1") == "blocks.0/attn/MatMul_1"
    assert _short_label("conv_a") == "conv_a"
    assert _short_label("x" * 50) == "\u2026" + "x" * 41
