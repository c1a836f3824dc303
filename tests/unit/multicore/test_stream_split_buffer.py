"""Cores whose weights and activations sit in separate top memories (split-buffer cores): a tensor
moved from one of a core's top memories to another goes through the core's own memories (no
link), so such cores schedule in every mode, run, search, workflow and sweep alike; and the
figures of one multi-core design agree between tables (area, DRAM traffic, utilisation); names and
files a user reads (variant names from core names, a trace that is valid JSON)."""

from __future__ import annotations

import json
import math
import shutil

import pytest
import yaml

from support import REPO
from zigzag.cli import main
from zigzag.cost.array import accelerator_area_um2
from zigzag.errors import InputError
from zigzag.io.loaders import load_accelerator
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.mapping import load_stream_mapping
from zigzag.multicore.summaries import multicore_rows, summarize_run
from zigzag.multicore.pipeline import run_stream
from zigzag.multicore.schedule.trace import load_trace
from zigzag.sweep import read_sweep, run_sweep, variants_of
from zigzag.variants.expansion import value_label

DATA = REPO / "tests" / "data"
SMALL = DATA / "reference" / "stream" / "small"
STREAM_HW = REPO / "inputs" / "stream" / "hardware"
SPLIT_MESH = STREAM_HW / "split_buffer_mesh_2x2.yaml"
SPLIT_CORE = STREAM_HW / "cores" / "split_buffer_16x16.yaml"
ROLES_MAPPING = REPO / "inputs" / "stream" / "mapping" / "mesh_all_cores.yaml"
RESNET = REPO / "inputs" / "stream" / "workload" / "resnet18.onnx"
SMALL_3CONV = REPO / "inputs" / "stream" / "workload" / "small_3conv.onnx"


def test_a_move_within_a_core_goes_through_its_own_memories(tmp_path):
    """asym.onnx on the testing cores: the Mul on core 0 reads the MatMul output a0 (its own
    output, in sram_128K_A, which holds I1 and O) as its I2 operand, held in sram_128K_W. By
    hand: a0 is 2 x 4 x 16 values of 8 bits = 1024 bits; reading 128 bits a cycle and writing
    128 bits a cycle take 8 cycles each, so the move takes 8 cycles and costs
    8 x 26.01 + 8 x 23.65 = 397.28 pJ, on no link. (Stream ed4e12e stops on this move: it asks
    for the slowest link of an empty route.)"""
    result = run_stream(
        SMALL / "dual_testing_core_offchip_v2.yaml",
        DATA / "stream" / "asym.onnx",
        SMALL / "mapping_plain.yaml",
        "lbl",
        cache=tmp_path / "cache",
        cwd=str(SMALL.parent),
    )
    moves = [t for t in result.transfers if t.kind == "within_core"]
    assert len(moves) == 1
    move = moves[0]
    assert (move.sender, move.receiver) == (0, 0) and result.problem.tensor_size[
        move.tensor
    ] == 1024
    assert move.end - move.start == 8 and move.link_energy == 0
    assert move.memory_energy == pytest.approx(8 * 26.01 + 8 * 23.65)
    # nothing else moves between cores: the core-to-core terms are this move's alone
    assert result.totals.total_core_to_core_memory_energy == pytest.approx(397.28)
    assert result.totals.total_core_to_core_link_energy == 0
    mul = int(result.problem.nb_cns) - 1  # the last layer's only CN
    assert result.start[mul] >= move.end


def test_the_split_buffer_core_area_is_what_zigzag_run_gives(tmp_path, capsys):
    """One area for single- and multi-core: every memory counted once per instance (256 weight
    registers, 16 input and 16 output registers), the file's um2."""
    mapping = tmp_path / "map.yaml"
    mapping.write_text(
        yaml.safe_dump(
            [
                {
                    "name": "default",
                    "spatial_mapping": {"D1": ["K, 16"], "D2": ["C, 16"]},
                    "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
                }
            ]
        )
    )
    assert (
        main(
            [
                "run",
                "--workload",
                str(SMALL / "small_3conv.onnx"),
                "--accelerator",
                str(SPLIT_CORE),
                "--mapping",
                str(mapping),
                "--output",
                str(tmp_path / "run"),
                "--quiet",
            ]
        )
        == 0
    )
    single = json.loads((tmp_path / "run" / "summary.json").read_text())["area"]
    core = load_accelerator(SPLIT_CORE)
    assert accelerator_area_um2(core) == pytest.approx(single)
    buffers = core.memory["weight_buffer"].area + core.memory["activation_buffer"].area
    by_hand = 256 * 100 + 256 * 2 + 16 * 2 + 16 * 4 + buffers
    assert single == pytest.approx(by_hand)


@pytest.mark.parametrize("mode", ["lbl", pytest.param("fused", marks=pytest.mark.slow)])
def test_a_split_buffer_mesh_runs_with_the_role_mapping(tmp_path, capsys, mode):
    """`zigzag stream run` on the 2 x 2 split-buffer mesh with Add/Relu on the mesh cores
    (the mapping names cores by role)."""
    out = tmp_path / mode
    assert (
        main(
            [
                "stream",
                "run",
                "--accelerator",
                str(SPLIT_MESH),
                "--workload",
                str(RESNET),
                "--mapping",
                str(ROLES_MAPPING),
                "--mode",
                mode,
                "--output",
                str(out),
                "--cache",
                str(tmp_path / "cache"),
            ]
        )
        == 0
    )
    trace = json.loads((out / "schedule_trace.json").read_text())
    assert "within_core" in trace["transfers"]["kind"]
    row = multicore_rows([summarize_run(out, SPLIT_MESH, workload=RESNET, mode=mode)])[0]
    assert row["compute_cores"] == 4 and row["latency_cycles"] > 0
    assert row["dram_moved_bits"] + row["dram_streamed_bits"] == pytest.approx(
        row["dram_traffic_bits"]
    )


def test_stream_run_reads_core_roles_of_the_mesh_the_mapping_was_written_for(tmp_path):
    result = run_stream(
        STREAM_HW / "tpu_like_mesh_pooling.yaml",
        SMALL_3CONV,
        ROLES_MAPPING,
        "lbl",
        cache=tmp_path / "cache",
    )
    mesh = load_multicore_accelerator(STREAM_HW / "tpu_like_mesh_pooling.yaml").document
    mapping = load_stream_mapping(ROLES_MAPPING, STREAM_HW / "tpu_like_mesh_pooling.yaml")
    cores = len([c for c in mesh["cores"]]) - 1  # the mesh cores and the pooling core
    assert mapping.entries["Conv"].core_allocation == tuple(range(cores))
    assert set(result.problem.core.tolist()) == set(range(cores))


def test_the_allocation_search_reads_core_roles(tmp_path):
    """A mapping that leaves the layers to any mesh core (by role) is searched; the fixed mapping
    it writes names core ids."""
    mapping = tmp_path / "flexible.yaml"
    mapping.write_text(
        yaml.safe_dump(
            [
                {"name": "default", "core_allocation": "mesh"},
                {"name": "MaxPool", "core_allocation": "pooling", "core_allocation_is_fixed": True},
            ]
        )
    )
    out = tmp_path / "search"
    assert (
        main(
            [
                "stream",
                "search",
                "--accelerator",
                str(STREAM_HW / "tpu_like_mesh_pooling.yaml"),
                "--workload",
                str(SMALL_3CONV),
                "--mapping",
                str(mapping),
                "--mode",
                "lbl",
                "--individuals",
                "4",
                "--generations",
                "1",
                "--output",
                str(out),
                "--cache",
                str(tmp_path / "cache"),
                "--quiet",
            ]
        )
        == 0
    )
    fixed = yaml.safe_load((out / "allocation.yaml").read_text())
    assert fixed[0]["core_allocation"] == [0, 1, 2, 3]
    assert all(isinstance(core, int) for entry in fixed for core in entry["core_allocation"])


def test_a_role_mapping_without_its_accelerator_says_so():
    with pytest.raises(InputError) as error:
        load_stream_mapping(ROLES_MAPPING)
    assert "names core roles" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.slow
def test_a_split_buffer_sweep_gives_ok_rows_with_the_same_figures_as_the_workflow(tmp_path):
    """A multi-core sweep over the split-buffer mesh (lbl and fused): ok rows whose area is the sum
    of the cores' areas as `zigzag run` gives them, and the same area, DRAM traffic and utilisation
    as the workflow's table gives for the variant's files run by `zigzag stream run`."""
    entry = {
        "kind": "multicore",
        "base": str(SPLIT_MESH),
        "vary": {"bandwidth": [64]},
        "workloads": [str(RESNET)],
        "mapping": str(ROLES_MAPPING),
        "modes": ["lbl", "fused"],
    }
    rows = run_sweep(entry, tmp_path / "sweep", cache=tmp_path / "cache")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    hardware = load_multicore_accelerator(SPLIT_MESH)
    by_core_file = sum(
        accelerator_area_um2(load_accelerator(c.file)) for c in hardware.compute_cores
    )
    assert rows[0]["area_mm2"] == pytest.approx(by_core_file * 1e-6)
    folder = tmp_path / "sweep" / "variants"
    for row in rows:
        name = row["variant"]
        out = tmp_path / f"{name}-{row['mode']}"
        run_stream(
            folder / f"{name}.yaml",
            RESNET,
            folder / f"{name}.mapping.yaml",
            row["mode"],
            cache=tmp_path / "cache",
            output=out,
        )
        table = multicore_rows(
            [summarize_run(out, folder / f"{name}.yaml", workload=RESNET, mode=row["mode"])]
        )[0]
        for column in (
            "latency_cycles",
            "energy_pJ",
            "area_mm2",
            "compute_utilization",
            "dram_moved_bits",
            "dram_streamed_bits",
            "dram_traffic_bits",
            "util_mesh_r1c1",
            "util_simd",
        ):
            assert math.isclose(table[column], row[column], rel_tol=1e-12), column


def test_link_and_router_areas_are_optional_and_counted(tmp_path):
    shutil.copytree(STREAM_HW / "cores", tmp_path / "cores")
    top = tmp_path / "noc.yaml"
    top.write_text(SPLIT_MESH.read_text() + "link_area: 1000\nrouter_area: 500\n")
    with_noc = load_multicore_accelerator(top)
    assert load_multicore_accelerator(SPLIT_MESH).interconnect_area_um2 == 0
    links = sum(
        1 for link in with_noc.links if with_noc.offchip_core_id not in (link.sender, link.receiver)
    )
    assert (
        links == 26
    )  # one-way links: 4 mesh neighbour pairs, 4 pooling and 4 SIMD pairs, SIMD-pooling
    assert with_noc.interconnect_area_um2 == 1000 * 26 + 500 * 6
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPLIT_MESH.read_text() + "link_area: -1\n")
    with pytest.raises(InputError) as error:
        load_multicore_accelerator(bad)
    assert error.value.where == "link_area" and "zero or more" in str(error.value)


def test_variant_names_use_core_names_not_file_names():
    assert value_label(["tpu_like.yaml", "cores/eyeriss_like.yaml"]) == "tpu_likexeyeriss_like"
    assert value_label({"name": "split_buffer_16x16", "memories": {}}) == "split_buffer_16x16"
    entry = {
        "kind": "multicore",
        "base": str(STREAM_HW / "tpu_like_mesh_pooling.yaml"),
        "params": {"core": "mesh.core"},
        "vary": {"core": [["tpu_like.yaml", "eyeriss_like.yaml"]]},
        "workloads": [str(SMALL_3CONV)],
        "mapping": str(ROLES_MAPPING),
    }
    assert [v.name for v in variants_of(read_sweep({"name": "s", **entry}))] == [
        "tpu_like_mesh-coretpu_likexeyeriss_like"
    ]


def test_the_schedule_trace_is_valid_json_with_infinite_links(tmp_path):
    """The 2 x 2 TPU mesh's SIMD links have infinite bandwidth: written as null, read back as inf."""
    out = tmp_path / "run"
    run_stream(
        STREAM_HW / "tpu_like_mesh_2x2.yaml",
        SMALL_3CONV,
        ROLES_MAPPING,
        "lbl",
        cache=tmp_path / "cache",
        output=out,
    )

    def no_constants(name):
        raise ValueError(f"{name} is not JSON")

    data = json.loads((out / "schedule_trace.json").read_text(), parse_constant=no_constants)
    assert None in [link["bandwidth"] for link in data["links"]]
    assert math.inf in [link.bandwidth for link in load_trace(out).links]


def test_a_sweep_reads_clock_ns_as_clock_ghz_with_a_warning(caplog):
    entry = {
        "name": "s",
        "kind": "multicore",
        "base": str(SPLIT_MESH),
        "vary": {"bandwidth": [64]},
        "workloads": [str(RESNET)],
        "mapping": str(ROLES_MAPPING),
    }
    with caplog.at_level("WARNING"):
        assert read_sweep({**entry, "clock_ns": 2}).clock_ghz == 0.5
    assert "clock_ns is read as clock_ghz" in caplog.text
    with pytest.raises(InputError, match="give clock_ghz only"):
        read_sweep({**entry, "clock_ns": 2, "clock_ghz": 1})
