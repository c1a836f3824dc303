"""The interactive HTML report (zigzag.report): its data per results folder, its size, the
workflow and command that write it, and the page itself in headless Chromium (Selenium driving
the system's chromium and chromedriver): no console error, sorting, filtering, an axis change, a
hover, and a non-blank screenshot of every view."""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import DATA, REPO
from support.browser import browser, check_views, console_errors, open_report
from zigzag.errors import InputError
from zigzag.report import write_report, write_reports
from zigzag.report.gather import gather
from zigzag.sweep import run_sweep

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_array.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
STREAM_REF = DATA / "reference" / "stream"
STREAM_SMALL = DATA / "stream" / "small_schedule_reference.json"


# ---------------------------------------------------------------------------------------------
# results folders of each kind
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def experiments(tmp_path_factory):
    """Two gemm experiments through every workflow step, with their memory-hierarchy figures."""
    from support.steps import gemm_experiment, run_steps
    from zigzag.steps.report import plot_accelerator

    config = {
        "experiments": [
            gemm_experiment("gemm_l1", "gemm_l1"),
            gemm_experiment("gemm_l1_l3", "gemm_l1_l3", opt="energy"),
        ]
    }
    results = run_steps(config, tmp_path_factory.mktemp("experiments") / "results")
    for parsed in sorted((results / ".cache" / "parsed" / "accelerators").glob("*.json")):
        plot_accelerator(parsed, results / "accelerators" / parsed.stem / "memory_hierarchy.png")
    write_reports(results)
    return results


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Array shape x unified buffer on two small workloads, with an area limit that excludes some."""
    out = tmp_path_factory.mktemp("sweep") / "sweep"
    two = out.parent / "small_convs_b.yaml"
    shutil.copy(WORKLOAD, two)
    run_sweep(
        {
            "name": "shapes",
            "base": str(BASE),
            "params": {"D1": "operational_array.sizes[0]", "ub": "memories.unified_buffer.size"},
            "vary": {"D1": [16, 32], "ub": ["256KiB", "1MiB"]},
            "derive": {"memories.unified_buffer.area": "0.7 * ub"},
            "workloads": [str(WORKLOAD), str(two)],
            "mapping": str(MAPPING),
            "clock_ghz": 1,
            "constraints": ["area <= 5 mm2"],
            "ranking": {"method": "sum", "weights": {"small_convs_b": 2}},
        },
        out,
    )
    write_reports(out)
    return out


@pytest.fixture(scope="module")
def multicore(tmp_path_factory):
    """A small multi-core run (two cores) with its pictures and the multi-core table."""
    from zigzag.steps.experiments import write_experiment_spec
    from zigzag.steps.stream import resolve_stream_experiments, results
    from zigzag.multicore.plots import plot_run
    from zigzag.multicore.pipeline import run_stream

    root = tmp_path_factory.mktemp("multicore") / "stream"
    case = next(
        c
        for c in json.loads(STREAM_SMALL.read_text())["cases"]
        if c["case"] == "ksplit_fused_prefetch_W"
    )
    inputs = {
        k: str(STREAM_REF / v)
        for k, v in case["inputs"].items()
        if k in ("hardware", "workload", "mapping")
    }
    run_stream(
        inputs["hardware"],
        inputs["workload"],
        inputs["mapping"],
        "fused",
        layer_stacks=[[0, 1, 2]],
        cache=root / "cache",
        output=root / "small",
    )
    plot_run(root / "small", name="small", plotly_js=root / "plotly.min.js")
    config = {
        "stream_experiments": [
            {
                "name": "small",
                "accelerator": inputs["hardware"],
                "workload": inputs["workload"],
                "mapping": inputs["mapping"],
                "mode": "fused",
                "layer_stacks": "0-2",
            }
        ]
    }
    spec = write_experiment_spec(root / "specs", resolve_stream_experiments(config)["small"])
    results(
        [f"{spec}={root / 'small'}"],
        root / "multicore.csv",
        root / "multicore.html",
        root / "multicore_pareto.png",
        root / "multicore_metrics.png",
    )
    write_reports(root)
    return root


@pytest.fixture(scope="module")
def multicore_sweep(tmp_path_factory):
    """Two mesh shapes of the multi-core example, each scheduled layer by layer and fused."""
    stream = REPO / "inputs" / "stream"
    out = tmp_path_factory.mktemp("mc_sweep") / "sweep"
    run_sweep(
        {
            "name": "mesh",
            "kind": "multicore",
            "base": str(stream / "hardware" / "tpu_like_mesh_pooling.yaml"),
            "params": {"rows": "mesh.rows", "cols": "mesh.cols"},
            "zip": [{"rows": [1, 2], "cols": [2, 2]}],
            "workloads": [str(stream / "workload" / "small_3conv.onnx")],
            "mapping": str(stream / "mapping" / "mesh_all_cores.yaml"),
            "modes": ["lbl", "fused"],
        },
        out,
    )
    write_reports(out)
    return out


# ---------------------------------------------------------------------------------------------
# data and files (no browser)
# ---------------------------------------------------------------------------------------------


def _column(data: dict, key: str) -> dict:
    return next(c for c in data["columns"] if c["key"] == key)


def test_experiments_data(experiments):
    data = gather(experiments)
    assert data["kind"] == "experiments" and data["n"] == 2
    assert (
        data["objectives"]["energy"] == "energy_pJ"
        and data["objectives"]["latency"] == "latency_cycles"
    )
    assert (
        _column(data, "energy_pJ")["unit"] == "pJ"
        and _column(data, "edp_pJ_cycles")["unit"] == "pJ·cycles"
    )
    assert _column(data, "mac_utilization")["fmt"] == "percent"
    assert not _column(data, "lpf_limit")["shown"]  # search options are there, hidden by default
    assert data["target"] == "mapping search: energy, latency"
    detail = data["details"]["gemm_l1_l3"]["gemm_layer"]
    assert detail["layers"][0]["energy_pJ"] > 0 and detail["layers"][0]["memory_energy_pJ"]
    assert detail["hierarchyImage"].endswith("memory_hierarchy.png")
    assert (experiments / detail["hierarchyImage"]).exists()


def test_sweep_data_sizes_as_written_and_limits(sweep):
    data = gather(sweep)
    assert data["kind"] == "sweep" and data["n"] == 8
    ub = _column(data, "ub")
    assert ub["role"] == "param" and ub["fmt"] == "label"
    assert sorted(set(ub["labels"].values())) == ["1MiB", "256KiB"]
    derived = _column(data, "memories.unified_buffer.area")
    assert (
        derived["role"] == "param" and not derived["shown"]
    )  # a derived path: shown only on request
    assert data["limits"] == [
        {"column": "area_mm2", "value": 5.0, "op": "<=", "text": "area <= 5 mm2"}
    ]
    assert data["objectives"]["seconds"] == "latency_s" and data["objectives"]["J·s"] == "edp_Js"
    assert data["target"] == "mapping search: latency"
    assert data["ranking"] == {
        "method": "sum",
        "objective": "energy",
        "weights": {"small_convs_b": 2.0},
    }
    statuses = set(data["rows"]["status"])
    assert statuses == {"ok", "out"}, statuses
    assert len(set(data["group"])) == 2  # two workloads: the ranking aggregates over them
    details = sorted((sweep / "details").glob("*.js"))
    assert len(details) == 4
    text = details[0].read_text()
    assert text.startswith("zigzagDetail(")
    payload = json.loads(text[len("zigzagDetail(") : -3])
    groups = payload["groups"]
    assert set(groups) == {"small_convs", "small_convs_b"}
    layers = groups["small_convs"]["layers"]
    assert layers and {"stall_cycles", "ideal_cycles", "mac_utilization"} <= set(layers[0])
    assert all(
        layer["port_stall_slack"] for layer in layers
    )  # each memory port's stall or slack: what bounds it
    assert [m["name"] for m in groups["small_convs"]["hierarchy"]][-1] == "dram"
    assert "_detail" not in (sweep / "variants.csv").read_text()


def test_sweep_figures_in_user_units(sweep):
    plots = sorted(p.name for p in (sweep / "plots").glob("*.png"))
    assert plots == ["pareto.png", "vs_D1.png", "vs_ub.png"]  # no figure for the derived path


def test_units_and_paper_figures(sweep, tmp_path):
    """Sizes in the unit a person writes them; the PNG/SVG figures name it, grey the excluded
    variants, draw the limit and name the variants on each front."""
    from zigzag.sweep.figures import plot_metrics_vs_parameter, plot_pareto_projections
    from zigzag.plots.units import axis_label, size_label, size_unit
    from zigzag.report.tables import read_table

    assert (
        size_label(262144) == "32KiB"
        and size_label(3 * 8 * 2**20) == "3MiB"
        and size_label(12) == "12b"
    )
    assert size_unit([2**21, 2**23]) == ("KiB", 8192.0) and size_unit([7]) == ("bits", 1.0)
    assert axis_label("edp_Js") == "edp (J·s)" and axis_label("cores_area") == "cores area"
    _, rows = read_table(sweep / "variants.csv")
    svg = plot_metrics_vs_parameter(rows, "ub", tmp_path / "vs_ub.svg", size=True).read_text()
    assert "ub (KiB)" in svg
    svg = plot_pareto_projections(
        rows, tmp_path / "pareto.svg", constraints=["area <= 5 mm2"]
    ).read_text()
    out = sum(r["status"] == "out" for r in rows if r["workload"] == "small_convs")
    assert f"excluded ({out})" in svg and "area &lt;= 5 mm2" in svg
    front = [r["variant"] for r in rows if r["status"] == "ok"]
    assert any(name in svg for name in front)


def test_multicore_data_links_the_gantt(multicore):
    data = gather(multicore)
    assert data["kind"] == "multicore"
    detail = data["details"]["small"][data["group"][0]]
    assert (
        detail["gantt"] == "small/plots/gantt.html" and "small/plots/memory.png" in detail["images"]
    )
    gantt = multicore / detail["gantt"]
    assert gantt.stat().st_size < 1_000_000  # the shared script is not copied into the page
    assert '<script charset="utf-8" src="../../plotly.min.js"></script>' in gantt.read_text()
    assert (multicore / "plotly.min.js").stat().st_size > 1_000_000


def test_multicore_sweep_data(multicore_sweep):
    data = gather(multicore_sweep)
    assert data["kind"] == "sweep" and data["n"] == 4
    assert data["target"] == "allocation search where the mapping leaves cores to choose: latency"
    assert sorted(set(data["group"])) == ["small_3conv (fused)", "small_3conv (lbl)"]
    assert _column(data, "rows")["role"] == "param" and data["objectives"]["area"] in (
        "area_mm2",
        "cores_area",
    )
    detail = data["details"][data["rows"]["variant_id"][0]][data["group"][0]]
    assert (
        detail["energy_terms"] and detail["cores"]
    )  # from the row's own columns, whatever they are


@pytest.mark.slow
def test_guided_search_report(tmp_path):
    """A guided search's folder: its evaluated variants, the search's note, its front's table linked."""
    out = tmp_path / "search"
    run_sweep(
        {
            "name": "s",
            "base": str(BASE),
            "lpf_limit": 3,
            "params": {"D1": "operational_array.sizes[0]", "ub": "memories.unified_buffer.size"},
            "vary": {"D1": [8, 16, 32], "ub": ["256KiB", "1MiB"]},
            "workloads": [str(WORKLOAD)],
            "mapping": str(MAPPING),
            "search": {"population": 4, "generations": 1, "workers": 1},
        },
        out,
    )
    page = write_reports(out)[0]
    data = gather(out)
    assert data["title"] == "Guided search s" and data["note"].startswith("guided search: ")
    assert "search_front.csv" in [link["text"] for link in data["links"]]
    assert data["detailFiles"] and page.exists()
    assert "_detail" not in (out / "search_front.csv").read_text()


def test_report_pages_share_one_script(experiments, sweep, multicore, multicore_sweep):
    """Multi-core runs' folders keep plotly.min.js (their Gantt pages load it); the others get it
    packed, a third of its size."""
    for folder in (experiments, sweep, multicore, multicore_sweep):
        page = (folder / "report.html").read_text()
        script = "plotly.min.js" if folder == multicore else "plotly.gz.js"
        assert f'<script id="plotly-script" src="{script}" async></script>' in page
        assert "cdn.plot.ly" not in page and "https://" not in page.split("<script>", 1)[0]
        assert (folder / script).exists()
    packed, plain = (
        (sweep / "plotly.gz.js").stat().st_size,
        (multicore / "plotly.min.js").stat().st_size,
    )
    assert packed < 0.45 * plain


@pytest.mark.parametrize(
    "ranking, message",
    [
        ({"method": "median"}, "ranking.method"),
        ({"weights": {"a": -1}}, "ranking.weights"),
        ({"wieghts": {}}, "ranking.wieghts"),
        ("sum", "is not a mapping"),
    ],
)
def test_a_bad_ranking_is_a_one_line_error(ranking, message):
    from zigzag.sweep.config import read_sweep

    with pytest.raises(InputError, match=message):
        read_sweep(
            {
                "name": "s",
                "base": str(BASE),
                "vary": {"memories.dram.r_cost": [1]},
                "workloads": [str(WORKLOAD)],
                "mapping": str(MAPPING),
                "ranking": ranking,
            },
            "config",
        )


def test_bad_folder_is_one_line(tmp_path, capsys):
    from zigzag.cli import main

    with pytest.raises(InputError, match="no experiments.csv, variants.csv or multicore.csv"):
        gather(tmp_path)
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and str(tmp_path) in err and "\n" not in err


def test_index_page_links_the_sub_reports(tmp_path, sweep):
    shutil.copytree(sweep, tmp_path / "results" / "hardware_sweeps" / "shapes")
    pages = write_reports(tmp_path / "results")
    assert [p.relative_to(tmp_path).as_posix() for p in pages] == [
        "results/report.html",
        "results/hardware_sweeps/shapes/report.html",
    ]
    assert 'href="hardware_sweeps/shapes/report.html"' in pages[0].read_text()


def synthetic_sweep(
    folder: Path, variants: int = 500, workloads=("resnet18", "mobilenetv2")
) -> Path:
    """A results folder shaped like the 1,000-row benchmark sweep (bench_hw_sweep.py): random
    figures, the columns a real sweep writes (parameters, derived paths, per-memory energies)."""
    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    memories = ["w_reg", "acc_reg", "accumulators", "unified_buffer", "dram"]
    columns = [
        "sweep",
        "variant",
        "variant_id",
        "workload",
        "status",
        "reason",
        "D1",
        "D2",
        "ub",
        "wb",
        "memories.unified_buffer.r_cost",
        "memories.unified_buffer.w_cost",
        "memories.unified_buffer.area",
        "layers",
        "energy_pJ",
        "latency_cycles",
        "edp_pJ_cycles",
        "mac_energy_pJ",
        "memory_energy_pJ",
        "ideal_cycles",
        "computation_cycles",
        "onloading_cycles",
        "offloading_cycles",
        "mac_utilization",
        "tclk_ns",
        "latency_ns",
        "area_mm2",
        "clock_ghz",
        "latency_s",
        "edp_Js",
        "utilization",
        *[f"{m}_energy_pJ" for m in memories],
        "pareto",
        "pareto_energy_latency",
        "pareto_energy_area",
        "pareto_latency_area",
    ]
    sizes = [2**k * 8 * 1024 for k in range(5, 15)]
    out = io.StringIO()
    writer = csv.DictWriter(out, columns)
    writer.writeheader()
    for v in range(variants):
        d1, ub, wb = rng.choice([8, 16, 32, 64]), rng.choice(sizes), rng.choice(sizes)
        for workload in workloads:
            energy, latency, area = (
                rng.uniform(1e9, 5e10),
                rng.uniform(1e6, 3e7),
                rng.uniform(1, 40),
            )
            row = {
                "sweep": "bench",
                "variant": f"v{v:04d}",
                "variant_id": f"{v:012x}",
                "workload": workload,
                "status": "ok" if area <= 30 else "out",
                "reason": "" if area <= 30 else "breaks 'area <= 30 mm2'",
                "D1": d1,
                "D2": 1024 // d1,
                "ub": ub,
                "wb": wb,
                "memories.unified_buffer.r_cost": rng.uniform(5, 60),
                "memories.unified_buffer.w_cost": rng.uniform(5, 60),
                "memories.unified_buffer.area": 0.7 * ub,
                "layers": 21,
                "energy_pJ": energy,
                "latency_cycles": latency,
                "edp_pJ_cycles": energy * latency,
                "mac_energy_pJ": energy / 5,
                "memory_energy_pJ": energy * 0.8,
                "ideal_cycles": latency / 3,
                "computation_cycles": latency * 0.9,
                "onloading_cycles": 1000,
                "offloading_cycles": 2000,
                "mac_utilization": rng.random(),
                "tclk_ns": "",
                "latency_ns": "",
                "area_mm2": area,
                "clock_ghz": 1,
                "latency_s": latency * 1e-9,
                "edp_Js": energy * 1e-12 * latency * 1e-9,
                "utilization": rng.random(),
                **{f"{m}_energy_pJ": energy / 8 for m in memories},
                "pareto": False,
                "pareto_energy_latency": False,
                "pareto_energy_area": False,
                "pareto_latency_area": False,
            }
            writer.writerow(
                {k: (f"{x:.10g}" if isinstance(x, float) else x) for k, x in row.items()}
            )
    (folder / "variants.csv").write_text(out.getvalue())
    parameters = [
        {"name": n, "path": p, "role": r, "labels": {}, "named": r != "derived", "size": s}
        for n, p, r, s in (
            ("D1", "operational_array.sizes[0]", "varied", False),
            ("D2", "operational_array.sizes[1]", "derived", False),
            ("ub", "memories.unified_buffer.size", "varied", True),
            ("wb", "memories.weight_buffer.size", "varied", True),
            ("memories.unified_buffer.r_cost", "memories.unified_buffer.r_cost", "derived", False),
            ("memories.unified_buffer.w_cost", "memories.unified_buffer.w_cost", "derived", False),
            ("memories.unified_buffer.area", "memories.unified_buffer.area", "derived", False),
        )
    ]
    parameters[1]["named"] = True
    (folder / "sweep.json").write_text(
        json.dumps(
            {
                "name": "bench",
                "kind": "single",
                "parameters": parameters,
                "constraints": ["area <= 30 mm2"],
                "clock_ghz": 1,
                "target": "mapping search: latency",
                "ranking": {},
            }
        )
    )
    return folder


def test_a_1000_row_sweep_report_stays_small(tmp_path):
    folder = synthetic_sweep(tmp_path / "bench")
    page = write_report(folder)
    data = gather(folder)
    assert data["n"] == 1000
    assert _column(data, "wb")["labels"]["2097152"] == "256KiB"  # bits as the size a person writes
    assert (
        page.stat().st_size + (page.parent / "plotly.gz.js").stat().st_size < 5_000_000
    )  # the folder


def test_a_cut_sweep_json_is_one_line(tmp_path):
    folder = synthetic_sweep(tmp_path / "cut", variants=5)
    text = (folder / "sweep.json").read_text()
    (folder / "sweep.json").write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match=r"sweep.json: line \d+: is not valid JSON \(cut"):
        write_report(folder)


@pytest.mark.parametrize("cut", ["mid-row", "mid-line"])
def test_a_table_cut_while_written_is_not_shown_as_whole(tmp_path, cut):
    """A variants.csv cut mid-row was shown as if whole."""
    folder = synthetic_sweep(tmp_path / "cut", variants=5)
    text = (folder / "variants.csv").read_text()
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    keep = text[: len(text) - len(last) // 2 - 1]
    (folder / "variants.csv").write_text(keep if cut == "mid-line" else keep + "\n")
    with pytest.raises(InputError, match="the table was cut"):
        write_report(folder)


def test_the_report_of_a_missing_folder_or_a_file(tmp_path):
    with pytest.raises(InputError, match="does not exist; give a results folder"):
        write_report(tmp_path / "nothere")
    (tmp_path / "a.csv").write_text("x\n")
    with pytest.raises(InputError, match="is a file; give the results folder holding it"):
        write_report(tmp_path / "a.csv")


# ---------------------------------------------------------------------------------------------
# in a real browser
# ---------------------------------------------------------------------------------------------


def _table_values(driver, key: str) -> list[str]:
    index = [
        th.get_attribute("data-key")
        for th in driver.find_elements("css selector", "#results-table thead tr:first-child th")
    ].index(key)
    return [
        row.find_elements("tag name", "td")[index].text
        for row in driver.find_elements("css selector", "#results-table tbody tr")
    ]


@pytest.mark.slow
def test_sweep_report_in_chromium(sweep, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver = browser(tmp_path / "profile")
    try:
        open_report(driver, sweep / "report.html")
        assert not console_errors(driver)
        # sorting: by energy, then reversed
        header = driver.find_element("css selector", "#results-table th[data-key=energy_pJ]")
        header.click()
        energies = [
            float(r["energy_pJ"])
            for r in csv.DictReader((sweep / "variants.csv").open())
            if r["energy_pJ"]
        ]
        first = _table_values(driver, "variant")[0]
        best = min(
            csv.DictReader((sweep / "variants.csv").open()), key=lambda r: float(r["energy_pJ"])
        )
        assert first == best["variant"] and len(energies) == 8
        driver.find_element("css selector", "#results-table th[data-key=energy_pJ]").click()
        assert (
            _table_values(driver, "variant")[0]
            == max(
                csv.DictReader((sweep / "variants.csv").open()), key=lambda r: float(r["energy_pJ"])
            )["variant"]
        )
        # sizes as written
        assert set(_table_values(driver, "ub")) == {"256KiB", "1MiB"}
        # filtering: a column filter and the status filter
        box = driver.find_element("css selector", "input.colfilter[data-key=ub]")
        box.send_keys("256KiB")
        assert set(_table_values(driver, "ub")) == {"256KiB"}
        assert driver.find_element("id", "table-count").text == "4 of 8 rows"
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(Keys.DELETE)  # (clear() fires no input event)
        assert driver.find_element("id", "table-count").text == "8 of 8 rows"
        Select(driver.find_element("id", "table-status")).select_by_value("out")
        assert set(_table_values(driver, "status")) == {"out"}
        Select(driver.find_element("id", "table-status")).select_by_value("")
        # the Pareto view: an axis change and a hover
        driver.find_element("id", "tab-pareto").click()
        WebDriverWait(driver, 30).until(
            lambda d: d.find_elements("css selector", "#pareto-plot .main-svg")
        )
        Select(driver.find_element("id", "pareto-x")).select_by_value("area_mm2")
        title = driver.execute_script(
            "return document.getElementById('pareto-plot').layout.xaxis.title.text"
        )
        assert title == "area [mm²]"
        shapes = driver.execute_script(
            "return document.getElementById('pareto-plot').layout.shapes.length"
        )
        assert shapes == 1  # the area limit, drawn on the area axis
        excluded = driver.execute_script(
            "return document.getElementById('pareto-plot').data[0].x.length"
        )
        assert excluded >= 1  # excluded rows are drawn (greyed), not hidden
        point = driver.find_elements(
            "css selector", "#pareto-plot .scatterlayer .trace:nth-child(2) .point"
        )[0]
        ActionChains(driver).move_to_element(point).perform()
        WebDriverWait(driver, 10).until(
            lambda d: d.find_elements("css selector", ".hoverlayer .hovertext")
        )
        hover = driver.find_element("css selector", ".hoverlayer .hovertext").text
        assert "ub = " in hover and "D1 = " in hover
        # ranking over both workloads, and the per-layer why of a design
        driver.find_element("id", "tab-ranking").click()
        rows = driver.find_elements("css selector", "#ranking-table tbody tr")
        assert rows and "rank on small_convs_b" in driver.find_element("id", "ranking-table").text
        assert (
            driver.find_element(
                "css selector", ".rank-weight[data-group=small_convs_b]"
            ).get_attribute("value")
            == "2"
        )
        assert (
            "sum of energy" in driver.find_element("id", "ranking-table").text
        )  # the config's ranking
        driver.find_element("id", "tab-why").click()
        WebDriverWait(driver, 30).until(
            lambda d: d.find_elements("css selector", "#why-bounds tbody tr")
        )
        assert "bound by" in driver.find_element("id", "why-bounds").text
        check_views(driver, tmp_path, "sweep")
    finally:
        driver.quit()


@pytest.mark.slow
def test_experiments_and_multicore_reports_in_chromium(
    experiments, multicore, multicore_sweep, tmp_path
):
    from selenium.webdriver.support.ui import WebDriverWait

    driver = browser(tmp_path / "profile")
    try:
        open_report(driver, experiments / "report.html")
        check_views(driver, tmp_path, "experiments")
        assert driver.find_elements("css selector", "#why-side img")
        open_report(driver, multicore / "report.html")
        check_views(driver, tmp_path, "multicore")
        link = driver.find_element("id", "why-gantt")
        link.click()
        WebDriverWait(driver, 30).until(lambda d: d.find_elements("css selector", ".main-svg"))
        assert not console_errors(driver)
        open_report(driver, multicore_sweep / "report.html")
        check_views(driver, tmp_path, "multicore_sweep")
        assert driver.find_elements("css selector", "#why-terms .main-svg")
    finally:
        driver.quit()


def test_the_report_command_and_step(sweep, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(sweep, target)
    (target / "report.html").unlink()
    done = subprocess.run(
        [sys.executable, "-m", "zigzag", "report", str(target)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {target / 'report.html'}"
    from zigzag.cli import build_parser

    args = build_parser().parse_args(
        ["step", "report", str(target), "--log", str(tmp_path / "r.log")]
    )
    assert args.func(args) == 0
    assert "report.html" in (tmp_path / "r.log").read_text()
