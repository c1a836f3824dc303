"""Memory costs from a user's memory table (cost_table): exact rows, interpolation chosen by the user,
the figures marked in the results, and one-line errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from zigzag.errors import InputError
from zigzag.io.loaders import load_accelerator, read_accelerator
from support import TESTS

DATA = TESTS / "data" / "cacti"
TABLE = DATA / "memory_table.csv"


def _accelerator(tmp_path: Path, **sram_8kb) -> Path:
    """eyeriss_like_cacti.yaml with no CACTI memory, its sram_8KB (one 128-bit read_write port) changed."""
    data = yaml.safe_load((DATA / "eyeriss_like_cacti.yaml").read_text())
    for memory in data["memories"].values():
        if memory.pop("auto_cost_extraction", False):
            memory.update(r_cost=1.0, w_cost=1.0, area=0.0)
    memory = data["memories"]["sram_8KB"]
    for key in ("r_cost", "w_cost", "area"):
        memory.pop(key)
    memory.update(sram_8kb)
    (tmp_path / "tables").mkdir(exist_ok=True)
    (tmp_path / "tables" / "mem.csv").write_text(TABLE.read_text())
    path = tmp_path / "acc.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_an_exact_row_gives_the_memorys_figures(tmp_path):
    memory = load_accelerator(_accelerator(tmp_path, cost_table="tables/mem.csv")).memory[
        "sram_8KB"
    ]
    assert (memory.r_cost, memory.w_cost, memory.area) == (
        3.0,
        4.0,
        0.02,
    )  # the 1rw row, not the 1r1w one
    assert memory.cost_source == "table"
    assert "row size 65536, width 128" in memory.cost_note and "mem.csv" in memory.cost_note


@pytest.mark.parametrize(
    "method, expected_read",
    [
        ("linear", 3.0 + (131072 - 65536) / (262144 - 65536) * 3.0),
        ("log2", 3.0 + 0.5 * 3.0),  # 2^17 is half-way between 2^16 and 2^18 in log2
    ],
)
def test_interpolation_is_the_users_explicit_choice_and_is_recorded(
    tmp_path, method, expected_read
):
    path = _accelerator(
        tmp_path, size=131072, cost_table="tables/mem.csv", cost_interpolation=method
    )
    memory = load_accelerator(path).memory["sram_8KB"]
    assert math.isclose(memory.r_cost, expected_read)
    assert memory.cost_note.endswith(
        f"{method} interpolation between sizes 65536 and 262144, width 128"
    )


def test_the_parse_step_keeps_the_source_for_the_results(tmp_path):
    document = read_accelerator(_accelerator(tmp_path, cost_table="tables/mem.csv"))
    assert document["memories"]["sram_8KB"]["cost_source"] == "table"
    assert "cost_source" not in document["memories"]["dram"]


@pytest.mark.parametrize(
    "change, where, words",
    [
        (
            dict(size=131072, cost_table="tables/mem.csv"),
            "memories.sram_8KB.cost_table",
            "no row of size 131072 and width 128; add one, or choose cost_interpolation",
        ),
        (
            dict(size=4194304, cost_table="tables/mem.csv", cost_interpolation="linear"),
            "memories.sram_8KB.cost_table",
            "cannot interpolate size 4194304 .*no extrapolation",
        ),
        (
            dict(cost_table="tables/missing.csv"),
            "memories.sram_8KB.cost_table",
            "cannot read the memory table",
        ),
        (
            dict(cost_table="tables/mem.csv", r_cost=2.0),
            "memories.sram_8KB.r_cost",
            "remove r_cost or the cost_table",
        ),
        (
            dict(r_cost=1.0, w_cost=1.0, area=1.0, cost_interpolation="linear"),
            "memories.sram_8KB.cost_interpolation",
            "no cost_table",
        ),
        (
            dict(cost_table="tables/mem.csv", cost_interpolation="cubic"),
            "memories.sram_8KB.cost_interpolation",
            "none, linear, log2",
        ),
    ],
)
def test_bad_table_settings_are_one_line_errors(tmp_path, change, where, words):
    with pytest.raises(InputError, match=f"acc.yaml: {where}: .*{words}") as error:
        load_accelerator(_accelerator(tmp_path, **change))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    "text, words",
    [
        (
            "size,width,read_energy,write_energy\n1,1,1,1\n",
            "it needs size, width, read_energy, write_energy, area",
        ),
        (
            "size,width,read_energy,write_energy,area\n65536,128,x,1,1\n",
            "row 2: read_energy 'x' is not a number",
        ),
        (
            "size,width,read_energy,write_energy,area,ports\n65536,128,1,1,1,2q\n",
            "ports '2q' is not of the form",
        ),
        ("size,width,read_energy,write_energy,area\n", "has no rows"),
    ],
)
def test_bad_tables_are_one_line_errors(tmp_path, text, words):
    path = _accelerator(tmp_path, cost_table="tables/mem.csv")
    (tmp_path / "tables" / "mem.csv").write_text(text)
    with pytest.raises(InputError, match=f"memories.sram_8KB.cost_table: .*{words}"):
        load_accelerator(path)


def test_rows_without_ports_fit_any_memory_and_other_widths_are_named(tmp_path):
    path = _accelerator(tmp_path, cost_table="tables/mem.csv")
    (tmp_path / "tables" / "mem.csv").write_text(
        "size,width,read_energy,write_energy,area\n65536,64,1,2,3\n"
    )
    with pytest.raises(
        InputError, match="no row of width 128 with ports 1rw .*widths with these ports: 64"
    ):
        load_accelerator(path)


def test_the_workflow_reparses_when_a_named_table_changes(tmp_path):
    from zigzag.io.memory_costs import memory_tables

    path = _accelerator(tmp_path, cost_table="tables/mem.csv")
    assert memory_tables(path) == [str(tmp_path / "tables" / "mem.csv")]
    (
        tmp_path / "tables" / "mem.csv"
    ).unlink()  # a missing table is the parse step's error, not an input
    assert memory_tables(path) == []
