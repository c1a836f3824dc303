"""Every YAML file is read strictly: a key given twice is an error naming both lines (except ZigZag's
repeated memory ``ports``, warned), numbers as YAML 1.2 and JSON write them, overflow and tabs named."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys

import pytest

from support import REPO, reference_input
from zigzag.errors import InputError
from zigzag.io.loaders import read_accelerator
from zigzag.io.yaml_files import load_yaml, parse_yaml, with_strict_numbers


def test_a_key_given_twice_names_it_and_both_lines():
    with pytest.raises(InputError) as err:
        parse_yaml("a: 1\nb:\n  c: 2\n  c: 3\n", "f.yaml")
    assert str(err.value) == (
        "f.yaml: line 4, column 3: key 'c' is given twice with different values (lines 3 and 4); "
        "keep the one you mean"
    )


def test_a_key_repeated_with_the_same_value_is_warned(caplog):
    """Stream's shipped tpu_like_quad_core_resnet18_fixed_split.yaml repeats a line."""
    with caplog.at_level(logging.WARNING):
        assert parse_yaml("a: [1, 2]\nb: 0\na: [1, 2]\n", "f.yaml") == {"a": [1, 2], "b": 0}
    assert "f.yaml: line 3: 'a' is given twice (lines 1 and 3, the same value)" in caplog.text


def test_merge_keys_are_not_duplicates():
    assert parse_yaml("b: &b {x: 1}\nk:\n  <<: *b\n  x: 2\n", "f.yaml")["k"] == {"x": 2}


def test_a_core_id_given_twice_is_refused(tmp_path):
    """The multi-core case of the issue: YAML kept the last core silently."""
    path = tmp_path / "mc.yaml"
    path.write_text("name: x\ncores:\n  0: a.yaml\n  1: b.yaml\n  0: c.yaml\n")
    with pytest.raises(
        InputError, match=r"key '0' is given twice with different values \(lines 3 and 5\)"
    ):
        load_yaml(path)


def test_zigzags_repeated_ports_are_noted_and_the_second_used(caplog):
    """The reference's tpu_like.yaml gives sram_2MB's ports twice; ZigZag uses the second."""
    with caplog.at_level(logging.INFO):
        document = read_accelerator(reference_input("hardware", "tpu_like.yaml"))
    assert "'ports' is given twice (lines 67 and 74); the second is used" in caplog.text
    ports = document["memories"]["sram_2MB"]["ports"]
    assert [p["name"] for p in ports] == ["r_port_1", "w_port_1"]


@pytest.mark.parametrize(
    "text, value",
    [("1.95e3", 1950.0), ("1e-5", 1e-5), ("-2E+2", -200.0), ("1.5", 1.5), ("12", 12), (".5", 0.5)],
)
def test_numbers_as_yaml_12_and_json_write_them(text, value):
    read = parse_yaml(f"v: {text}\n", "f.yaml")["v"]
    assert read == value and type(read) is type(value)


def test_quoted_numbers_stay_text():
    assert parse_yaml("v: '1e3'\n", "f.yaml")["v"] == "1e3"


def test_an_overflowing_number_says_so():
    with pytest.raises(InputError, match=r"line 2, column 6: the number 1e400 is too large"):
        parse_yaml("x:\n  a: 1e400\n", "f.yaml")


@pytest.mark.parametrize("text", ["a:\n\t- 1\n", "a:\n  b: 1\n \tc: 2\n"])
def test_a_tab_in_the_indentation_is_named(text):
    with pytest.raises(InputError, match="a tab character; YAML indents with spaces only"):
        parse_yaml(text, "f.yaml")


def test_snakemakes_config_gets_the_strict_numbers():
    loaded = {"a": "1.95e3", "b": ["1e3", "x"], "c": {"d": "word"}}
    strict = {"a": 1950.0, "b": [1000.0, "x"], "c": {"d": "word"}}
    assert with_strict_numbers(loaded, strict) == {
        "a": 1950.0,
        "b": [1000.0, "x"],
        "c": {"d": "word"},
    }


@pytest.mark.slow
def test_the_workflow_config_is_read_strictly(tmp_path):
    for name in ("Snakefile", "workflow", "inputs", "profiles", "config.yaml"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    config = tmp_path / "bad.yaml"
    config.write_text(
        "experiments:\n  - name: a\n    workload: inputs/workload/resnet18.onnx\n"
        "    workload: inputs/workload/alexnet.onnx\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", str(config)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0
    assert "key 'workload' is given twice with different values (lines 3 and 4)" in run.stderr
    assert "Traceback" not in run.stderr
