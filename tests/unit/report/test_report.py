"""Plotting steps (zigzag.steps.plots), their commands, and the Snakemake HTML report."""

from __future__ import annotations

import argparse
import base64
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from support import REPO, reference_input
from support.steps import gemm_experiment, run_steps
from zigzag.errors import InputError

EXPERIMENT_FILES = ("layers.{fmt}", "loop_nests.txt")
_reference = reference_input


def _assert_image(data: bytes) -> None:
    with Image.open(io.BytesIO(data)) as image:
        pixels = np.asarray(image.convert("RGB"))
    assert pixels.shape[0] > 200 and pixels.shape[1] > 300
    assert 0.01 < np.any(pixels < 245, axis=2).mean() < 0.95


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """Two gemm experiments run through every step (parse ... compare)."""
    config = {
        "experiments": [
            gemm_experiment("gemm_l1", "gemm_l1"),
            gemm_experiment("gemm_l1_l3", "gemm_l1_l3", opt="energy"),
        ]
    }
    return run_steps(config, tmp_path_factory.mktemp("collected") / "results")


# ---------------------------------------------------------------------------------------------
# steps as functions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_plot_experiment(collected, tmp_path, fmt):
    from zigzag.steps.plots import plot_experiment

    written = plot_experiment(collected / "gemm_l1_l3" / "results.json", tmp_path / "plots", fmt)
    assert sorted(p.name for p in written.values()) == sorted(
        f.format(fmt=fmt) for f in EXPERIMENT_FILES
    )
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(
        p.name for p in written.values()
    )
    for kind, path in written.items():
        data = path.read_bytes()
        if kind == "loop_nests":
            text = data.decode()
            assert text.startswith("Loop ordering for Layer0\n")
            # columns in the mapping's memory_operand_links order (O, W, I), as ZigZag prints them
            assert text.splitlines()[2].split() == ["Temporal", "Loops", "O", "W", "I"]
            assert "parfor" in text
        elif fmt == "png":
            _assert_image(data)
        else:
            assert b"<svg" in data[:2000]


def test_plot_accelerator_from_parsed_json_and_yaml(collected, tmp_path):
    from zigzag.steps.plots import plot_accelerator

    parsed = sorted((collected / ".cache" / "parsed" / "accelerators").glob("gemm_l1-*.json"))
    assert len(parsed) == 1
    _assert_image(plot_accelerator(parsed[0], tmp_path / "a.png").read_bytes())
    _assert_image(
        plot_accelerator(_reference("hardware", "gemm_l1.yaml"), tmp_path / "b.png").read_bytes()
    )


def test_plot_experiment_errors(collected, tmp_path):
    from zigzag.steps.plots import plot_experiment

    with pytest.raises(InputError, match="not one of png, svg, pdf"):
        plot_experiment(collected / "gemm_l1" / "results.json", tmp_path, "bmp")
    with pytest.raises(InputError, match="run the experiment's sum step first"):
        plot_experiment(tmp_path / "nothing_here" / "results.json", tmp_path / "out", "png")


def test_plot_comparison(collected, tmp_path):
    from zigzag.steps.plots import plot_comparison

    message = plot_comparison(
        collected / "experiments.csv", tmp_path / "comparison.png", tmp_path / "pareto.csv"
    )
    assert message == "2 experiments, Pareto fronts per workload: gemm_layer: gemm_l1"
    _assert_image((tmp_path / "comparison.png").read_bytes())
    front = pd.read_csv(tmp_path / "pareto.csv")
    table = pd.read_csv(collected / "experiments.csv")
    assert list(front.columns) == list(table.columns)
    assert list(front["experiment"]) == [
        "gemm_l1"
    ]  # lower energy and lower latency than gemm_l1_l3


def test_plot_comparison_default_pareto_path_and_errors(collected, tmp_path):
    from zigzag.steps.plots import plot_comparison

    table = tmp_path / "experiments.csv"
    shutil.copy(collected / "experiments.csv", table)
    plot_comparison(table, tmp_path / "comparison.svg")
    assert (tmp_path / "pareto.csv").exists()
    assert b"<svg" in (tmp_path / "comparison.svg").read_bytes()[:2000]
    bad = tmp_path / "bad.csv"
    bad.write_text("experiment,energy_pJ\nx,1\n")
    with pytest.raises(InputError, match="missing column"):
        plot_comparison(bad, tmp_path / "c.png")


# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------


def _report_parser() -> argparse.ArgumentParser:
    from zigzag.cli import build_parser

    return build_parser()


def test_report_commands(collected, tmp_path):
    parser = _report_parser()
    args = parser.parse_args(
        [
            "step",
            "plot-experiment",
            str(collected / "gemm_l1" / "results.json"),
            "--output",
            str(tmp_path / "plots"),
            "--format",
            "png",
            "--log",
            str(tmp_path / "e.log"),
        ]
    )
    assert args.func(args) == 0
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(
        f.format(fmt="png") for f in EXPERIMENT_FILES
    )
    assert "wrote" in (tmp_path / "e.log").read_text()

    args = parser.parse_args(
        [
            "step",
            "plot-comparison",
            str(collected / "experiments.csv"),
            "--output",
            str(tmp_path / "cmp.png"),
            "--pareto",
            str(tmp_path / "front.csv"),
            "--log",
            str(tmp_path / "c.log"),
        ]
    )
    assert args.func(args) == 0
    assert (tmp_path / "cmp.png").exists() and (tmp_path / "front.csv").exists()
    assert "gemm_layer: gemm_l1" in (tmp_path / "c.log").read_text()


def test_report_command_bad_input_is_one_line(tmp_path, capsys):
    parser = _report_parser()
    args = parser.parse_args(
        [
            "step",
            "plot-comparison",
            str(tmp_path / "missing.csv"),
            "--output",
            str(tmp_path / "c.png"),
            "--log",
            str(tmp_path / "c.log"),
        ]
    )
    assert args.func(args) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "missing.csv" in err and "\n" not in err
    with pytest.raises(SystemExit):
        parser.parse_args(["step", "plot-experiment", "x", "--output", "y", "--format", "gif"])


# ---------------------------------------------------------------------------------------------
# the workflow and its HTML report
# ---------------------------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _chromium_args(binary: str, profile: Path) -> list[str]:
    return [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
    ]


@pytest.fixture(scope="module")
def workflow_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("workflow")
    config = {
        "experiments": [
            gemm_experiment("gemm_l1", "gemm_l1"),
            gemm_experiment("gemm_l1_l3", "gemm_l1_l3", opt="energy"),
        ],
        "outputs": {"plot_format": "png"},
    }
    (root / "config.yaml").write_text(json.dumps(config, indent=2))  # JSON is YAML
    snakemake = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(root),
        "--configfile",
        str(root / "config.yaml"),
    ]
    run = subprocess.run([*snakemake, "--cores", "2"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    report = subprocess.run(
        [*snakemake, "--report", str(root / "report.html")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert report.returncode == 0, report.stderr[-4000:]
    return root


@pytest.mark.slow
def test_workflow_writes_the_plots(workflow_run):
    results = workflow_run / "results"
    for name in ("gemm_l1", "gemm_l1_l3"):
        for file in EXPERIMENT_FILES:
            path = results / name / "plots" / file.format(fmt="png")
            assert path.exists(), path
            if path.suffix == ".png":
                _assert_image(path.read_bytes())
        assert (
            (results / name / "plots" / "loop_nests.txt")
            .read_text()
            .startswith("Loop ordering for Layer0")
        )
    _assert_image((results / "comparison.png").read_bytes())
    assert list(pd.read_csv(results / "pareto.csv")["experiment"]) == ["gemm_l1"]
    hierarchies = sorted((results / "accelerators").glob("*/memory_hierarchy.png"))
    assert [p.parent.name.rsplit("-", 1)[0] for p in hierarchies] == ["gemm_l1", "gemm_l1_l3"]
    for path in hierarchies:
        _assert_image(path.read_bytes())


@pytest.mark.slow
def test_html_report_embeds_the_plots(workflow_run):
    html = (workflow_run / "report.html").read_text()
    figures = [f"results/{name}/plots/layers.png" for name in ("gemm_l1", "gemm_l1_l3")]
    figures += [
        str(p.relative_to(workflow_run))
        for p in (workflow_run / "results" / "accelerators").glob("*/*.png")
    ]
    assert len(figures) == 4
    for figure in figures:
        key = f'"{figure}"'
        assert key in html, key
        entry = html[html.index(key) :]
        uri = re.search(r'"data_uri":\s*"data:image/png;[^"]*?base64,([A-Za-z0-9+/=]+)"', entry)
        assert uri, f"{key} has no embedded image"
        _assert_image(base64.b64decode(uri.group(1)))
    for name in ("gemm_l1", "gemm_l1_l3"):
        assert f'"results/{name}/plots/loop_nests.txt"' in html
        # the layer table, as an HTML view embedded in the report
        key = f'"results/{name}/layers.html"'
        assert key in html, key
        uri = re.search(
            r'"data_uri":\s*"data:text/html;[^"]*?base64,([A-Za-z0-9+/=]+)"',
            html[html.index(key) :],
        )
        table = base64.b64decode(uri.group(1)).decode()
        assert "<th>energy_pJ</th>" in table and "<td>Layer0</td>" in table
    key = '"results/experiments.html"'
    assert key in html
    uri = re.search(
        r'"data_uri":\s*"data:text/html;[^"]*?base64,([A-Za-z0-9+/=]+)"', html[html.index(key) :]
    )
    table = base64.b64decode(uri.group(1)).decode()
    assert "<th>edp_pJ_cycles</th>" in table and "<td>gemm_l1_l3</td>" in table
    assert '"results/comparison.png"' in html and '"results/pareto.csv"' in html
    assert "ZigZag design-space exploration" in html  # workflow description
    assert "Pareto front" in html  # a caption
    assert (
        "Negative on-loading" in html and "hidden behind" in html
    )  # the per-layer figure's caption


@pytest.mark.slow
def test_html_report_renders_in_chromium(workflow_run, tmp_path):
    binary = _chromium()
    if binary is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    url = (workflow_run / "report.html").resolve().as_uri()
    dom = subprocess.run(
        [
            *_chromium_args(binary, tmp_path / "profile"),
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert dom.returncode == 0, dom.stderr[-3000:]
    page_errors = [
        line
        for line in dom.stderr.splitlines()
        if "CONSOLE" in line and re.search(r"Uncaught|ERROR:CONSOLE|Error:", line)
    ]
    assert not page_errors, page_errors
    # what the report's JavaScript rendered (the static page only says "Loading Snakemake Report...")
    rendered = re.sub(r"<(script|style)\b.*?</\1>", " ", dom.stdout, flags=re.S | re.I)
    text = " ".join(re.sub(r"<[^>]+>", " ", rendered).split())
    for expected in ("ZigZag design-space exploration", "Comparison", "Experiments", "Workflow"):
        assert expected in text, (expected, text[:2000])

    shot = tmp_path / "report.png"
    screenshot = subprocess.run(
        [
            *_chromium_args(binary, tmp_path / "profile2"),
            "--window-size=1280,900",
            f"--screenshot={shot}",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert screenshot.returncode == 0 and shot.exists(), screenshot.stderr[-3000:]
    _assert_image(shot.read_bytes())


def test_tables_name_the_users_accelerator_with_data_locality(tmp_path):
    """Data locality searches each layer on a trimmed copy of the accelerator ('<name>-removing-nouse-mem'
    in ZigZag's per-layer JSON); the tables and the results read by the plots keep the user's name."""
    config = {"experiments": [gemm_experiment("local", "gemm_l1_l3", exploit_data_locality=True)]}
    results = run_steps(config, tmp_path / "results")
    layer_json = next((results / "local" / "layers").glob("*.json")).read_text()
    assert (
        "gemm_l1_l3-removing-nouse-mem" in layer_json
    )  # ZigZag's complete JSON, as ZigZag writes it
    for table in (
        "experiments.csv",
        "layers.csv",
        "memory_levels.csv",
        "local/summary.csv",
        "local/memory_levels.csv",
    ):
        assert set(pd.read_csv(results / table)["accelerator"]) == {"gemm_l1_l3"}, table
    document = json.loads((results / "local" / "results.json").read_text())
    assert {layer["result"]["accelerator_name"] for layer in document["layers"]} == {"gemm_l1_l3"}


@pytest.mark.slow
def test_the_workflow_writes_the_report_page_last(workflow_run, tmp_path):
    """The workflow's last rule writes results/report.html beside one packed plotly.js; in Chromium
    every view of it draws without a console error."""
    from support.browser import browser, check_views, open_report

    page = workflow_run / "results" / "report.html"
    assert '<script id="plotly-script" src="plotly.gz.js" async></script>' in page.read_text()
    assert (workflow_run / "results" / "plotly.gz.js").exists()
    assert (
        "wrote results/report.html"
        in (workflow_run / "results" / "logs" / "report_page.log").read_text()
    )
    driver = browser(tmp_path / "profile")
    try:
        open_report(driver, page)
        assert "gemm_l1_l3" in driver.find_element("id", "results-table").text
        check_views(driver, tmp_path, "workflow")
    finally:
        driver.quit()
