"""A sweep in which no variant is ``ok`` ends with one line and a non-zero exit status: the count
of each status, and, when the rows are only ``out``, the constraint that excludes the most rows
(``zigzag sweep``, its guided search and the workflow's sweep steps; the workflow's case is in
tests/integration/test_workflow_errors.py)."""

from __future__ import annotations

import pytest

from support import DATA, REPO
from zigzag.cli import main
from zigzag.sweep.config import read_constraints
from zigzag.sweep.steps import nothing_ok_line

CONSTRAINTS = read_constraints(["area <= 2 mm2", "energy <= 5 pJ"], "test")


def row(status, **figures):
    return {
        "variant": "v",
        "workload": "w",
        "status": status,
        "reason": figures.pop("reason", ""),
        **figures,
    }


def test_a_sweep_with_an_ok_row_has_no_summary():
    assert (
        nothing_ok_line(
            [row("ok", area_mm2=1.0, energy_pJ=1.0), row("invalid", reason="bad")], CONSTRAINTS
        )
        is None
    )


def test_rows_that_did_not_run_are_counted_with_an_example_reason():
    rows = [
        row("invalid", reason="acc: memories.sb.size: must be positive"),
        row("infeasible", reason="too small"),
        row("invalid", reason="other"),
    ]
    assert nothing_ok_line(rows, CONSTRAINTS) == (
        "no variant is ok (2 invalid, 1 infeasible of 3 rows); "
        "e.g. v on w: acc: memories.sb.size: must be positive"
    )


def test_out_rows_name_the_constraint_that_excludes_the_most():
    rows = [
        row("out", area_mm2=1.0, energy_pJ=9.0, reason="breaks 'energy <= 5 pJ'"),
        row("out", area_mm2=3.0, energy_pJ=9.0, reason="breaks 'area <= 2 mm2'"),
        row("out", area_mm2=1.0, energy_pJ=7.0, reason="breaks 'energy <= 5 pJ'"),
        row("failed", reason="RuntimeError: x"),
    ]
    assert nothing_ok_line(rows, CONSTRAINTS) == (
        "no variant is ok (3 out, 1 failed of 4 rows); constraint 'energy <= 5 pJ' "
        "excludes the most: 3 of the 3 out rows; relax it"
    )


def test_an_empty_sweep_says_so():
    assert nothing_ok_line([], CONSTRAINTS) == "the sweep has no rows"


@pytest.mark.slow
def test_a_guided_search_without_an_ok_variant_exits_non_zero(tmp_path, capsys):
    status = main(
        [
            "sweep",
            "--base",
            str(REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"),
            "--vary",
            "memories.unified_buffer.size=[64KiB,128KiB,256KiB,512KiB]",
            "--workload",
            str(DATA / "workflow" / "small_convs.yaml"),
            "--mapping",
            str(REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"),
            "--constraint",
            "area <= 0.000001 mm2",
            "--lpf-limit",
            "3",
            "--search",
            "--population",
            "4",
            "--generations",
            "1",
            "--workers",
            "1",
            "--seed",
            "1",
            "--output",
            str(tmp_path / "out"),
            "--quiet",
        ]
    )
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert status == 1
    assert len(err) == 1 and err[0].startswith("error: sweep: no variant is ok (")
    assert (
        err[0].endswith("out rows; relax it")
        and "constraint 'area <= 0.000001 mm2' excludes the most" in err[0]
    )
