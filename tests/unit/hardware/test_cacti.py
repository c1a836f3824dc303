"""Memory costs from CACTI 7 (auto_cost_extraction): the reference's figures, per memory and per network,
through the API, the CLI and the workflow's parse step; the results cache; one-line errors.

The first test to need CACTI builds it into the per-user cache folder (about 40 s, once per machine);
every later test and run reuses that build.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from zigzag.errors import InputError
from zigzag.hardware.memory_costs import extraction
from zigzag.hardware.memory_costs.cacti import CactiRequest, request_for_memory
from zigzag.hardware.memory_costs.cacti_build import CactiUnavailable, package_sources
from zigzag.io.loaders import load_accelerator, read_accelerator
from support import REPO, TESTS

DATA = TESTS / "data" / "cacti"
ROOT = REPO
EYERISS = DATA / "eyeriss_like_cacti.yaml"
ORACLE = json.loads((DATA / "oracle.json").read_text())["cases"]


def _cacti_available() -> bool:
    try:
        package_sources()
    except CactiUnavailable:
        return False
    return True


needs_cacti = pytest.mark.skipif(
    not _cacti_available(), reason="hwcomponents-cacti is not installed (Python < 3.12)"
)


def test_ci_has_cacti():
    """CI (CI=true) runs on the Python the repository's .python-version names, which has CACTI."""
    if os.environ.get("CI") == "true":
        assert _cacti_available()


@needs_cacti
def test_extracted_figures_equal_the_reference_to_six_decimals():
    expected = yaml.safe_load((DATA / "expected.yaml").read_text())["memories"]
    memories = load_accelerator(EYERISS).memory
    for name, figures in expected.items():
        memory = memories[name]
        got = {"r_cost": memory.r_cost, "w_cost": memory.w_cost, "area": memory.area}
        assert {k: round(v, 6) for k, v in got.items()} == pytest.approx(figures, abs=5e-7), name
        assert memory.cost_source == "cacti"


@needs_cacti
def test_extraction_replaces_the_files_figures_and_says_so(caplog):
    memories = load_accelerator(EYERISS).memory
    rf = memories["rf_64B_A"]  # the file gives r_cost 1.0, w_cost 1.5, area 0.3
    assert (rf.r_cost, rf.w_cost, rf.area) != (1.0, 1.5, 0.3)
    assert "replaced the file's r_cost 1, w_cost 1.5, area 0.3" in rf.cost_note
    assert "128 times larger SRAM" in rf.cost_note
    assert memories["rf_64B_W"].cost_source == "file" and memories["rf_64B_W"].r_cost == 1.0


@needs_cacti
@pytest.mark.parametrize("case", sorted(ORACLE))
def test_network_totals_equal_the_reference_through_the_api(case, tmp_path):
    from zigzag.api import get_hardware_performance_zigzag

    oracle = ORACLE[case]
    energy, latency, cmes = get_hardware_performance_zigzag(
        str(ROOT / oracle["workload"]),
        str(ROOT / oracle["accelerator"]),
        str(ROOT / oracle["mapping"]),
        dump_folder=tmp_path,
        loma_show_progress_bar=False,
        **oracle["options"],
    )
    assert energy == pytest.approx(oracle["energy"], rel=1e-6)
    assert latency == pytest.approx(oracle["latency"], rel=1e-6)
    memories = load_accelerator(ROOT / oracle["accelerator"]).memory
    for name, figures in oracle["memories"].items():
        memory = memories[name]
        assert (memory.r_cost, memory.w_cost, memory.area) == pytest.approx(
            (figures["r_cost"], figures["w_cost"], figures["area"]), rel=1e-12
        ), name


@needs_cacti
def test_cli_run_prints_the_reference_totals_and_the_area_unit(tmp_path):
    case = "eyeriss_cacti__resnet18_convs_b__latency"
    oracle = ORACLE[case]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            oracle["workload"],
            "--accelerator",
            oracle["accelerator"],
            "--mapping",
            oracle["mapping"],
            "--opt",
            oracle["options"]["opt"],
            "--output",
            str(tmp_path),
            "--quiet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    assert float(lines["total energy"].split()[0]) == pytest.approx(oracle["energy"], rel=1e-6)
    assert float(lines["total latency"].split()[0]) == pytest.approx(oracle["latency"], rel=1e-6)
    assert "CACTI memories in mm2" in lines["area"]  # the file states no area_unit


@needs_cacti
def test_memory_levels_table_and_plot_mark_cacti_figures(tmp_path):
    from zigzag.api import run
    from zigzag.cost.result import CostResult
    from zigzag.plots import plot_memory_hierarchy
    from zigzag.plots.memory import cost_text
    from zigzag.mapping_search.options import resolve_options
    from zigzag.io import tables

    oracle = ORACLE["eyeriss_cacti__resnet18_convs_b__latency"]
    options, _ = resolve_options(oracle["options"])
    result = run(
        str(ROOT / oracle["workload"]),
        str(EYERISS),
        str(ROOT / oracle["mapping"]),
        options,
        show_progress=False,
    )
    layer, cost = result.layers[0]
    entry = {"key": "k", "id": layer.id, "name": layer.name, "operator_type": "Conv", "spec": {}}
    accelerator = load_accelerator(EYERISS)
    rows = tables.memory_level_rows(
        {}, [(entry, CostResult.from_dict(cost.to_dict()))], {"k": accelerator}
    )
    by_memory = {row["memory"]: row for row in rows}
    assert (
        by_memory["sram_64KB"]["cost_source"] == "cacti"
        and by_memory["dram"]["cost_source"] == "file"
    )
    assert by_memory["sram_64KB"]["r_cost_pJ"] == accelerator.memory["sram_64KB"].r_cost
    assert plot_memory_hierarchy(accelerator, tmp_path / "hierarchy.png").stat().st_size > 0
    assert cost_text(accelerator.memory["sram_64KB"]) == "r 11.3 w 12.5 pJ (CACTI)"
    assert cost_text(accelerator.memory["dram"]) == "r 1e+03 w 1e+03 pJ"


@needs_cacti
def test_workflow_steps_give_the_reference_totals_and_mark_the_sources(tmp_path):
    import csv

    from support.steps import run_steps

    case = "eyeriss_cacti__resnet18_convs_b__latency"
    oracle = ORACLE[case]
    experiment = {
        "name": "cacti",
        "workload": str(ROOT / oracle["workload"]),
        "accelerator": str(ROOT / oracle["accelerator"]),
        "mapping": str(ROOT / oracle["mapping"]),
        **oracle["options"],
    }
    results = run_steps({"experiments": [experiment]}, tmp_path / "results")
    summary = json.loads((results / "cacti" / "summary.json").read_text())
    assert summary["energy"] == pytest.approx(oracle["energy"], rel=1e-6)
    assert summary["latency"] == pytest.approx(oracle["latency"], rel=1e-6)
    with open(results / "memory_levels.csv") as handle:
        rows = list(csv.DictReader(handle))
    sources = {row["memory"]: row["cost_source"] for row in rows}
    assert sources["sram_1M"] == "cacti" and sources["dram"] == "file"
    assert {round(float(row["r_cost_pJ"]), 6) for row in rows if row["memory"] == "sram_1M"} == {
        142.11
    }


@needs_cacti
def test_a_rerun_makes_no_cacti_call_and_duplicates_run_once(tmp_path, monkeypatch):
    requests = [
        CactiRequest(1024, 32, "ram"),
        CactiRequest(2048, 32, "ram"),
        CactiRequest(1024, 32, "ram"),
    ]
    first = extraction.extract(requests, results=tmp_path)
    assert len(list(tmp_path.glob("*.out"))) == 2
    assert first[0] == first[2]

    def no_cacti():
        raise AssertionError("CACTI must not run for cached inputs")

    monkeypatch.setattr(extraction, "cacti_executable", no_cacti)
    assert extraction.extract(requests, results=tmp_path) == first


def test_request_follows_the_reference_rules():
    read_write = [{"type": "read_write", "bandwidth_max": 384}]
    assert request_for_memory(8388608, "sram", read_write) == CactiRequest(1048576, 384, "ram")
    ports = [
        {"type": "write", "bandwidth_max": 16},
        {"type": "read", "bandwidth_max": 24},
        {"type": "read", "bandwidth_max": 8},
    ]
    assert request_for_memory(128, "rf", ports) == CactiRequest(2048, 24, "ram")
    assert request_for_memory(1024, "dram", read_write).cache_type == "main memory"


def _eyeriss_with(tmp_path: Path, change) -> Path:
    data = yaml.safe_load(EYERISS.read_text())
    change(data["memories"])
    path = tmp_path / "acc.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_missing_cacti_is_a_one_line_error_naming_file_memory_and_fix(tmp_path, monkeypatch):
    def unavailable():
        raise CactiUnavailable(
            "the hwcomponents-cacti package, which provides CACTI 7, is not installed; install it"
        )

    monkeypatch.setattr(extraction, "cacti_executable", unavailable)
    monkeypatch.setattr(extraction, "results_folder", lambda: tmp_path / "empty-cache")
    path = _eyeriss_with(tmp_path, lambda memories: None)
    with pytest.raises(InputError) as error:
        load_accelerator(path)
    text = str(error.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: memories.rf_64B_A.auto_cost_extraction: CACTI is needed")
    assert "auto_cost_extraction: false" in text


@needs_cacti
def test_cacti_failing_on_a_memory_is_a_one_line_error(tmp_path):
    def tiny(memories):
        memories["sram_8KB"]["size"] = 64  # 8 bytes: CACTI needs at least 64

    path = _eyeriss_with(tmp_path, tiny)
    with pytest.raises(
        InputError,
        match=r"memories\.sram_8KB\.auto_cost_extraction: CACTI found no result .*"
        r"Cache size must >=64.*change the memory's size",
    ):
        load_accelerator(path)


def test_a_memory_too_large_for_cacti_is_a_one_line_error(tmp_path):
    def huge(memories):
        memories["dram"].update(auto_cost_extraction=True, mem_type="dram", size=8 * 2**33)

    with pytest.raises(
        InputError, match=r"memories\.dram\.size: is 8589934592 bytes .* more than the 4294967295"
    ):
        load_accelerator(_eyeriss_with(tmp_path, huge))


@pytest.mark.parametrize(
    "change, where, words",
    [
        (
            lambda m: m["sram_8KB"]["ports"][0].update(type="write", allocation=["O, fh", "O, fl"]),
            "memories.sram_8KB.ports",
            "no read or read_write port",
        ),
        (lambda m: m["sram_8KB"].update(size=65535), "memories.sram_8KB.size", "multiple of 8"),
        (
            lambda m: m["sram_8KB"].update(cost_table="t.csv"),
            "memories.sram_8KB.cost_table",
            "keep one of them",
        ),
    ],
)
def test_bad_extraction_settings_are_rejected_before_cacti_runs(tmp_path, change, where, words):
    with pytest.raises(InputError, match=f"{where}: .*{words}"):
        read_accelerator(_eyeriss_with(tmp_path, change))


@needs_cacti
def test_an_area_unit_of_um2_converts_cactis_mm2(tmp_path):
    path = _eyeriss_with(tmp_path, lambda memories: None)
    data = yaml.safe_load(path.read_text())
    data["area_unit"] = "um2"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    in_um2 = load_accelerator(path)
    in_mm2 = load_accelerator(EYERISS)
    assert in_um2.area_unit == "um2"
    assert math.isclose(in_um2.memory["sram_1M"].area, in_mm2.memory["sram_1M"].area * 1e6)
    assert in_um2.memory["dram"].area == in_mm2.memory["dram"].area  # the file's own figures stay
    assert "converted from mm2 to um2" in in_um2.memory["sram_1M"].cost_note


@needs_cacti
def test_multi_core_core_files_get_the_same_figures(tmp_path):
    import shutil

    from zigzag.multicore.topology import load_multicore_accelerator

    core_file = yaml.safe_load(EYERISS.read_text())
    del core_file["memories"]["dram"]  # a multi-core core stops at on-chip memory
    (tmp_path / "core.yaml").write_text(yaml.safe_dump(core_file, sort_keys=False))
    shutil.copy(
        ROOT / "inputs" / "stream" / "hardware" / "cores" / "offchip.yaml",
        tmp_path / "offchip.yaml",
    )
    (tmp_path / "top.yaml").write_text(
        "name: one_core\ncores:\n  0: core.yaml\noffchip_core: offchip.yaml\n"
        "core_connectivity: []\nbandwidth: 32\nunit_energy_cost: 0\n"
    )
    core = load_multicore_accelerator(tmp_path / "top.yaml").cores[0].accelerator.memory
    single = load_accelerator(EYERISS).memory
    for name in ("rf_64B_A", "sram_1M"):
        assert (core[name].r_cost, core[name].w_cost, core[name].area, core[name].cost_source) == (
            single[name].r_cost,
            single[name].w_cost,
            single[name].area,
            "cacti",
        )


@needs_cacti
def test_an_unknown_memory_type_is_costed_as_main_memory_with_a_warning(tmp_path, caplog):
    """ZigZag's rule for a type other than sram and rf, said in a warning; a slip of a known type
    (srma) is an error before CACTI runs."""

    def figures(mem_type):
        data = yaml.safe_load(EYERISS.read_text())
        data["memories"]["sram_64KB"]["mem_type"] = mem_type
        path = tmp_path / f"{mem_type}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        memory = load_accelerator(path).memory["sram_64KB"]
        return memory.r_cost, memory.w_cost, memory.area

    with caplog.at_level("WARNING"):
        hbm = figures("hbm")
    assert (
        "memory sram_64KB: mem_type 'hbm' is not one CACTI extraction knows (sram, rf, dram), so it is "
        "costed as main memory" in caplog.text
    )
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert figures("dram") == hbm != figures("sram")
    assert "mem_type" not in caplog.text
    with pytest.raises(
        InputError,
        match=r"memories.sram_64KB.mem_type: unknown memory type 'srma' "
        r"\(did you mean 'sram'\?\)",
    ):
        figures("srma")
