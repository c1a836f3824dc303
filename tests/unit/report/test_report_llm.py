"""The report page of an LLM sweep: rows compared per workload point (batch 1 and 8),
per-token objectives on every axis and in the ranking, the varied workload fields shown, units,
the "why" view of every row, ids kept as text; checked in headless Chromium view by view."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from support import REPO
from support.browser import browser, check_views, console_errors, open_report
from zigzag.report import write_reports
from zigzag.report.gather import gather
from zigzag.report.tables import read_table
from zigzag.sweep import run_sweep

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
#: a small Llama-shaped model (the widths of a toy, the structure of Llama: GQA, SwiGLU, RMSNorm)
TOY = {
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 1,
    "vocab_size": 1000,
    "max_position_embeddings": 2048,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False,
}


@pytest.fixture(scope="module")
def llm_sweep(tmp_path_factory):
    """Two array widths x batch 1 and 8 of one decode step: 4 rows, 2 workload points."""
    folder = tmp_path_factory.mktemp("llm_sweep")
    (folder / "toy.config.json").write_text(json.dumps(TOY))
    workload = folder / "toy.llm.yaml"
    workload.write_text(
        yaml.safe_dump(
            {"llm": {"model": "toy.config.json", "phase": "decode", "context": 256, "batch": 1}}
        )
    )
    out = folder / "sweep"
    run_sweep(
        {
            "name": "llm",
            "base": str(BASE),
            "params": {"D1": "operational_array.sizes[0]"},
            "vary": {"D1": [16, 32]},
            "workloads": [str(workload)],
            "mapping": str(MAPPING),
            "clock_ghz": 1.0,
            "lpf_limit": 3,
            "workload_vary": {"batch": [1, 8]},
        },
        out,
    )
    write_reports(out)
    return out


def _column(data: dict, key: str) -> dict:
    return next(c for c in data["columns"] if c["key"] == key)


@pytest.mark.slow
def test_rows_are_compared_per_workload_point(llm_sweep):
    data = gather(llm_sweep)
    assert sorted(set(data["group"])) == ["toy batch=1", "toy batch=8"]
    assert data["groupWorkload"] == {"toy batch=1": "toy", "toy batch=8": "toy"}
    # the varied field is shown, the point's label (which repeats it) is not
    batch = _column(data, "batch")
    assert batch["role"] == "point" and batch["shown"]
    assert not _column(data, "workload_point")["shown"]


@pytest.mark.slow
def test_per_token_objectives_and_units(llm_sweep):
    data = gather(llm_sweep)
    assert data["objectives"]["time per token"] == "tpot_s"
    assert data["objectives"]["energy per token"] == "energy_per_token_J"
    assert data["objectives"]["tokens/s"] == "tokens_per_s" and data["maximise"] == ["tokens/s"]
    rate = _column(data, "tokens_per_s")
    assert (rate["name"], rate["unit"]) == ("tokens per second", "tokens/s")
    tpot = _column(data, "tpot_s")
    assert (tpot["name"], tpot["unit"], tpot["shown"]) == ("time per output token", "s", True)
    assert _column(data, "energy_per_token_J")["unit"] == "J"


@pytest.mark.slow
def test_every_row_has_its_why(llm_sweep):
    """The details of a variant are keyed by its workload point, as the page looks them up."""
    data = gather(llm_sweep)
    for variant_id, group in zip(data["rows"]["variant_id"], data["group"]):
        text = (llm_sweep / "details" / f"{variant_id}.js").read_text()
        payload = json.loads(text[len("zigzagDetail(") : -3])
        assert payload["groups"][group]["layers"], group


def test_ids_stay_text(tmp_path):
    table = tmp_path / "variants.csv"
    table.write_text("variant,variant_id,workload,energy_pJ\nv,2638490507e3,w,1e3\n")
    _, rows = read_table(table)
    assert rows[0]["variant_id"] == "2638490507e3" and rows[0]["energy_pJ"] == 1000


def _front_rows(folder: Path, group: str) -> set[int]:
    """Row numbers of pareto_energy_latency in variants.csv for one workload point."""
    rows = list(csv.DictReader((folder / "variants.csv").open()))
    return {
        i
        for i, r in enumerate(rows)
        if f"{r['workload']} {r['workload_point']}" == group
        and r["pareto_energy_latency"] == "True"
    }


@pytest.mark.slow
def test_llm_sweep_report_in_chromium(llm_sweep, tmp_path):
    """The page view by view: per-token axes by default, one front per batch point circling the
    rows pareto.csv flags, a ranking per point and on tokens/s (largest first), the why view."""
    from selenium.webdriver.support.ui import Select, WebDriverWait

    shots = tmp_path / "shots"
    shots.mkdir()
    driver = browser(tmp_path / "profile")
    try:
        open_report(driver, llm_sweep / "report.html")
        assert not console_errors(driver)
        headers = [
            th.text
            for th in driver.find_elements("css selector", "#results-table thead tr:first-child th")
        ]
        assert "batch" in headers and "tokens per second [tokens/s]" in headers
        assert "time per output token [s]" in headers and "energy per token [J]" in headers
        check_views(driver, shots, "llm")
        driver.find_element("id", "tab-pareto").click()
        WebDriverWait(driver, 30).until(
            lambda d: d.find_elements("css selector", "#pareto-plot .main-svg")
        )
        assert (
            Select(driver.find_element("id", "pareto-x")).first_selected_option.get_attribute(
                "value"
            )
            == "tpot_s"
        )
        assert (
            Select(driver.find_element("id", "pareto-y")).first_selected_option.get_attribute(
                "value"
            )
            == "energy_per_token_J"
        )
        for group in ("toy batch=1", "toy batch=8"):
            Select(driver.find_element("id", "pareto-group")).select_by_value(group)
            circled = driver.execute_script(
                "return document.getElementById('pareto-plot').data[2].customdata"
            )
            assert set(circled) == _front_rows(llm_sweep, group), group
        # every point's front drawn at once
        Select(driver.find_element("id", "pareto-group")).select_by_value("")
        names = driver.execute_script(
            "return document.getElementById('pareto-plot').data.map(t => t.name)"
        )
        assert "front toy batch=1" in names and "front toy batch=8" in names
        # the ranking on one point, by tokens/s: the largest first
        driver.find_element("id", "tab-ranking").click()
        Select(driver.find_element("id", "rank-objective")).select_by_value("tokens_per_s")
        Select(driver.find_element("id", "rank-group")).select_by_value("toy batch=8")
        rows = list(csv.DictReader((llm_sweep / "variants.csv").open()))
        fastest = max(
            (r for r in rows if r["batch"] == "8"), key=lambda r: float(r["tokens_per_s"])
        )
        first = driver.find_elements("css selector", "#ranking-table tbody tr")[0]
        assert fastest["variant"] in first.text
        assert "rank on toy batch=1" not in driver.find_element("id", "ranking-table").text
        (shots / "llm_ranking_tokens.png").write_bytes(driver.get_screenshot_as_png())
        # the why view of every row: its per-layer table
        driver.find_element("id", "tab-why").click()
        for i in range(len(rows)):
            Select(driver.find_element("id", "why-design")).select_by_value(str(i))
            WebDriverWait(driver, 30).until(
                lambda d: d.find_elements("css selector", "#why-bounds tbody tr")
            )
            assert "bound by" in driver.find_element("id", "why-bounds").text
        (shots / "llm_why_last.png").write_bytes(driver.get_screenshot_as_png())
        assert not console_errors(driver)
    finally:
        driver.quit()
