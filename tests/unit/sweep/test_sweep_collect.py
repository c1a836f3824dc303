"""The workflow's collect step on several cores (zigzag/sweep/forked.py): batches read and figures
drawn by forked processes give the same files as one process; a batch job's per-layer figures
travel as JSON text and land in the same ``details/<id>.js`` as figures read back as data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from onnx import TensorProto, helper

from support import REPO
from support.bad_inputs import onnx_file
from zigzag.errors import InputError
from zigzag.io.sealed import read_step_file, write_sealed
from zigzag.sweep.config import read_sweep
from zigzag.sweep.describe import DETAIL_KEY, detail_as_text, split_details, write_details
from zigzag.sweep.forked import run_pieces
from zigzag.sweep.runner import variants_of
from zigzag.sweep.workflow import (
    collect_points,
    evaluate_point_file,
    write_point_files,
    write_sweep_settings,
)

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_array.yaml"


def _pid_and(value):
    return os.getpid(), value


def test_pieces_run_in_other_processes_and_come_back_in_order():
    pieces = [lambda i=i: _pid_and(i * i) for i in range(5)]  # closures: never pickled
    alone = run_pieces(pieces, 1)
    assert [value for _, value in alone] == [0, 1, 4, 9, 16]
    assert {pid for pid, _ in alone} == {os.getpid()}
    forked = run_pieces(pieces, 3)
    assert [value for _, value in forked] == [0, 1, 4, 9, 16]
    assert os.getpid() not in {pid for pid, _ in forked}
    assert run_pieces([], 4) == []


def test_a_piece_s_input_error_is_the_same_one_line_in_the_parent():
    def bad():
        raise InputError("sweep.yaml", "vary.D1", "the value 'x' cannot be used")

    with pytest.raises(InputError) as caught:
        run_pieces([lambda: 1, bad], 2)
    assert str(caught.value) == "sweep.yaml: vary.D1: the value 'x' cannot be used"


def test_details_written_from_text_equal_those_written_from_data(tmp_path):
    detail = {"layers": [{"name": "conv", "energy_pJ": 1.5e3, "ratio": 0.1}], "hierarchy": []}
    rows = [
        {"variant": "a", "variant_id": "7", "workload": "w1", DETAIL_KEY: detail},
        {"variant": "a", "variant_id": "7", "workload": "wé", DETAIL_KEY: {**detail, "x": None}},
    ]
    as_text = [detail_as_text(row) for row in rows]
    assert all(isinstance(row[DETAIL_KEY], str) for row in as_text)
    assert detail_as_text(as_text[0]) == as_text[0]  # already text
    for name, chosen in (("data", rows), ("text", as_text)):
        write_details(split_details(chosen)[1], tmp_path / name)
    text = (tmp_path / "text" / "7.js").read_text()
    assert text == (tmp_path / "data" / "7.js").read_text()
    groups = {"w1": detail, "wé": {**detail, "x": None}}
    expected = json.dumps({"id": "7", "groups": groups}, separators=(",", ":"))
    assert text == f"zigzagDetail({expected});\n"


def _conv(path: Path) -> str:
    """One small convolution (the sweep's workload: its layer searches take little time)."""
    weights = helper.make_tensor("w", TensorProto.FLOAT, [16, 8, 3, 3], [0.0] * 1152)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=[3, 3])
    return onnx_file(path, [node], {"x": [1, 8, 10, 10]}, {"y": [1, 16, 8, 8]}, [weights])


@pytest.mark.slow  # two collect steps drawing their figures (~5 s)
def test_collect_on_two_cores_writes_the_files_of_one(tmp_path):
    section = {
        "name": "s",
        "base": str(BASE),
        "vary": {"operational_array.sizes[0]": [8, 16, 32]},
        "workloads": [_conv(tmp_path / "conv.onnx")],
        "mapping": str(MAPPING),
        "batch_size": 2,
    }
    sweep = read_sweep(section, "test")
    files = write_point_files(sweep, variants_of(sweep), tmp_path / "batches")
    points = []
    for name, batch in files.items():
        points.append(tmp_path / "points" / f"{name}.json")
        evaluate_point_file(batch, tmp_path / "cache", points[-1])
    settings = write_sweep_settings(sweep, tmp_path / "batches")
    # a batch written before the per-layer figures were kept as text collects the same
    old = read_step_file(points[0])
    old["rows"] = [
        {**row, DETAIL_KEY: json.loads(row[DETAIL_KEY])} if DETAIL_KEY in row else row
        for row in old["rows"]
    ]
    write_sealed(points[0], old)
    outputs = {}
    for workers in (1, 2):
        folder = tmp_path / f"out{workers}"
        rows = collect_points(settings, points, folder, workers=workers)
        assert [r["status"] for r in rows] == ["ok"] * 3
        outputs[workers] = {
            str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        }
    assert outputs[1] == outputs[2]
    assert {"variants.csv", "pareto.csv", "best.csv", "sweep.json", "plots/pareto.png"} <= set(
        outputs[1]
    )
    assert len([name for name in outputs[1] if name.startswith("details/")]) == 3
