"""Pictures of a Stream run: trace file, Gantt (HTML in a real browser, PNG), memory, energy, front, perfetto."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from zigzag.errors import InputError
from zigzag.multicore.plots import plot_run, read_summary
from zigzag.multicore.plots.charts import ENERGY_GROUPS, energy_groups, pareto_front_png, read_front
from zigzag.multicore.plots.gantt import Rows, dependency_segments, gantt_figure, link_event_kinds
from zigzag.multicore.plots.perfetto import trace_events
from zigzag.multicore.schedule.trace import load_trace
from support import TESTS

REF = TESTS / "data" / "reference" / "stream"
SMALL = TESTS / "data" / "stream" / "small_schedule_reference.json"


def assert_image(path: Path) -> None:
    with Image.open(path) as image:
        pixels = np.asarray(image.convert("RGB"))
    assert pixels.shape[0] > 150 and pixels.shape[1] > 300, path
    assert 0.01 < np.any(pixels < 245, axis=2).mean() < 0.95, path  # something drawn, not all ink


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``zigzag stream run --plots`` on a small case: conv0 K-split over two cores, weights prefetched."""
    out = tmp_path_factory.mktemp("run")
    ref = next(
        c for c in json.loads(SMALL.read_text())["cases"] if c["case"] == "ksplit_fused_prefetch_W"
    )
    inputs = ref["inputs"]
    command = [
        sys.executable,
        "-m",
        "zigzag",
        "stream",
        "run",
        "--accelerator",
        inputs["hardware"],
        "--workload",
        inputs["workload"],
        "--mapping",
        inputs["mapping"],
        "--mode",
        "fused",
        "--layer-stacks",
        "0-2",
        "--prefetch",
        "W",
        "--cache",
        str(out / "cache"),
        "--output",
        str(out / "run"),
        "--plots",
    ]
    done = subprocess.run(command, cwd=REF, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return out / "run"


def test_trace_holds_the_schedule(run):
    trace = load_trace(run)
    rows = list(csv.DictReader((run / "schedule.csv").open()))
    assert trace.nb_cns == len(rows) == 32
    by_id = {
        (int(lay), int(sub)): (s, e)
        for lay, sub, s, e in zip(
            trace.cn["layer"], trace.cn["sub"], trace.cn["start"], trace.cn["end"]
        )
    }
    assert all(
        by_id[(int(r["layer_id"]), int(r["sub_id"]))] == (float(r["start"]), float(r["end"]))
        for r in rows
    )
    summary = read_summary(run)
    assert trace.latency == summary["latency"] and trace.energy == pytest.approx(
        summary["energy"], rel=1e-12
    )
    assert trace.layer_names == {0: "/conv0/Conv", 1: "/conv1/Conv", 2: "/conv2/Conv"}
    assert {m.label: m.peak for m in trace.memories} == summary["peak_memory_bits"]
    assert len(trace.transfers["kind"]) == summary["nb_transfers"]


def test_run_writes_every_picture(run):
    plots = run / "plots"
    for name in ("gantt.png", "memory.png", "energy.png"):
        assert_image(plots / name)
    # works offline: it loads one shared copy of plotly.js beside it instead of carrying its own
    assert (plots / "gantt.html").stat().st_size < 1_000_000
    assert (plots / "plotly.min.js").stat().st_size > 1_000_000
    assert (
        '<script charset="utf-8" src="plotly.min.js"></script>'
        in (plots / "gantt.html").read_text()
    )
    assert "cdn.plot.ly" not in (plots / "gantt.html").read_text()[:3000]


def test_gantt_rows_kinds_and_dependencies(run):
    trace = load_trace(run)
    rows = Rows(trace)
    assert rows.labels[:2] == ["Core 0", "Core 1"]
    assert any(label.startswith("DRAM link") for label in rows.labels)
    kinds = [k for per_link in link_event_kinds(trace) for k in per_link]
    assert {"off-chip to core", "core to core"} <= set(kinds)
    assert len(kinds) == sum(len(lk.start) for lk in trace.links)
    xs, ys, total = dependency_segments(trace, rows)
    cn, src, dst = trace.cn, trace.edges["src"], trace.edges["dst"]
    assert total == int(np.count_nonzero(cn["core"][src] != cn["core"][dst])) > 0
    assert np.all(xs[:, 0] <= xs[:, 1])  # a consumer starts after its producer ends
    fig = gantt_figure(trace)
    arrows = len(fig.data) - 1
    assert fig.data[arrows].visible is False and len(fig.data[arrows].x) == 3 * total
    button = fig.layout.updatemenus[0].buttons[0]
    assert button.label == "dependencies" and button.args == ({"visible": True}, (arrows,))
    assert button.args2 == ({"visible": False}, (arrows,))
    bars = [t for t in fig.data if t.type == "bar"]
    assert sum(len(t.x) for t in bars) == trace.nb_cns + len(kinds)
    assert "CN %{customdata[0]:.0f}" in bars[0].hovertemplate and "energy" in bars[0].hovertemplate


def _chromium() -> str | None:
    return next(
        (
            shutil.which(n)
            for n in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(n)
        ),
        None,
    )


@pytest.mark.slow
def test_gantt_html_renders_in_a_real_browser(run, tmp_path):
    binary = _chromium()
    if binary is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    args = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=10000",
    ]
    dom = subprocess.run(
        [
            *args,
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            (run / "plots" / "gantt.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert dom.returncode == 0, dom.stderr[-3000:]
    errors = [
        line
        for line in dom.stderr.splitlines()
        if "CONSOLE" in line and re.search(r"Uncaught|Error", line)
    ]
    assert not errors, errors
    trace = load_trace(run)
    html = dom.stdout
    assert 'class="main-svg"' in html  # plotly drew its SVG
    layers = len(set(trace.cn["layer"].tolist()))
    kinds = len({k for per_link in link_event_kinds(trace) for k in per_link})
    assert (
        html.count('class="trace bars"') == layers + kinds
    )  # one bar trace per layer and per link-event kind
    assert len(re.findall(r'class="point"', html)) >= trace.nb_cns  # every CN drawn as a bar
    assert "dependencies" in html and 'class="updatemenu-button"' in html
    shot = tmp_path / "gantt.png"
    done = subprocess.run(
        [
            *args,
            "--window-size=1200,600",
            f"--screenshot={shot}",
            (run / "plots" / "gantt.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0 and shot.exists(), done.stderr[-3000:]
    assert_image(shot)


def test_perfetto_trace_event_format(run):
    doc = json.loads((run / "plots" / "perfetto.json").read_text())
    events = doc["traceEvents"]
    trace = load_trace(run)
    threads = {
        e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"
    }
    assert list(threads.values()) == Rows(trace).labels
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == trace.nb_cns + sum(len(lk.start) for lk in trace.links)
    for e in events:
        assert (
            {"ph", "pid", "tid", "ts", "name"} <= set(e)
            and isinstance(e["pid"], int)
            and isinstance(e["tid"], int)
        )
    for e in complete:
        assert e["dur"] >= 0 and e["tid"] in threads and e["ts"] + e["dur"] <= trace.latency
    assert sum(1 for e in complete if e["cat"] == "compute") == trace.nb_cns
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert counters == {f"{m.label} usage (KiB)" for m in trace.memories if not m.offchip}
    assert trace_events(trace) == doc  # the file is what the function gives


def test_energy_groups_add_up(run):
    summary = read_summary(run)
    groups = energy_groups(summary)
    assert list(groups) == list(ENERGY_GROUPS)
    assert sum(groups.values()) == pytest.approx(summary["energy"], rel=1e-12)
    with pytest.raises(InputError, match="total_cn_onchip_energy"):
        energy_groups({"energy": 1.0})


def test_pareto_front_from_a_search_folder(run, tmp_path):
    folder = tmp_path / "search"
    shutil.copytree(run, folder, ignore=shutil.ignore_patterns("plots"))
    (folder / "front.csv").write_text(
        "energy,latency,allocation\n1000.0,30.0,0:0=0 1:0=1\n"
        "900.0,40.0,0:0=1 1:0=1\n800.0,55.5,0:0=1 1:0=0\n"
    )
    summary = read_summary(folder)
    summary["search"] = {"energy": 900.0, "latency": 40.0, "choose": "edp"}
    (folder / "summary.json").write_text(json.dumps(summary))
    written = plot_run(folder, fmt="png")
    assert folder / "plots" / "pareto.png" in written
    assert_image(folder / "plots" / "pareto.png")
    assert [r["latency"] for r in read_front(folder / "front.csv")] == [30.0, 40.0, 55.5]
    (tmp_path / "bad.csv").write_text("energy;latency\n1;2\n")
    with pytest.raises(InputError, match="columns energy, latency"):
        read_front(tmp_path / "bad.csv")
    with pytest.raises(InputError, match="empty"):
        pareto_front_png([], tmp_path / "p.png")


def test_plot_command_errors_are_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "zigzag", "stream", "plot", "--run", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and "no schedule trace here" in done.stderr
    (tmp_path / "schedule_trace.json").write_text("{}")
    with pytest.raises(InputError, match="format"):
        load_trace(tmp_path)
