"""A sweep tells its input notes once and counts its unrolling reductions (zigzag/sweep/notes.py),
in one process (``evaluate_points``, as ``zigzag sweep`` runs it) and through the workflow's batch
and collect steps (their figures, tested in test_sweep.py, are left out here)."""

from __future__ import annotations

import logging
from pathlib import Path

from onnx import TensorProto, helper

from support import REPO
from support.bad_inputs import onnx_file, warnings_of
from zigzag.io.sealed import read_step_file
from zigzag.notes import collected_warnings
from zigzag.sweep.config import read_sweep
from zigzag.sweep.runner import evaluate_points, variants_of
from zigzag.sweep.workflow import (
    collect_points,
    evaluate_point_file,
    write_point_files,
    write_sweep_settings,
)

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_array.yaml"  # unrollings follow the array
RELU = "1 Relu node not evaluated (no cost model; kept as dependencies)"
POOL = "1 MaxPool node not evaluated (--evaluate-all-operators evaluates them)"


def conv_relu_pool(path: Path) -> str:
    """A convolution of 3 input channels (fewer than any array's C unrolling), a Relu and a MaxPool."""
    weights = helper.make_tensor("w", TensorProto.FLOAT, [8, 3, 3, 3], [0.0] * 216)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    ]
    return onnx_file(path, nodes, {"x": [1, 3, 8, 8]}, {"y": [1, 8, 4, 4]}, [weights])


def sweep_section(workload: str) -> dict:
    return {
        "name": "notes",
        "base": str(BASE),
        "params": {"D1": "operational_array.sizes[0]"},
        "vary": {
            "D1": [16, 32, 64]
        },  # the mapping follows the array: each variant reads the workload
        "workloads": [workload],
        "mapping": str(MAPPING),
        "batch_size": 2,
    }


def told(lines: list[str], note: str) -> int:
    return sum(line.endswith(note) for line in lines)


def test_a_sweep_tells_each_input_note_once(tmp_path, caplog):
    workload = conv_relu_pool(tmp_path / "net.onnx")
    caplog.set_level(logging.WARNING)
    sweep = read_sweep(sweep_section(workload), "test")
    rows = evaluate_points(sweep, variants_of(sweep), tmp_path / "cache")
    assert [r["status"] for r in rows] == ["ok"] * 3
    lines = warnings_of(caplog)
    assert told(lines, f"{workload}: {RELU}") == 1 and told(lines, f"{workload}: {POOL}") == 1
    fitted = [line for line in lines if "spatial unrolling" in line]
    assert len(fitted) == 1 and fitted[0].startswith(
        "spatial unrolling fitted to the array on 3 of 3 points (e.g. "
    )
    assert "-D1_16: conv: spatial unrolling " in fitted[0] and " reduced to " in fitted[0]


def test_workflow_batches_hold_their_notes_for_the_collect_step(tmp_path, caplog, monkeypatch):
    """The batch jobs show neither note (their logs keep every line); the collect job tells each once."""
    monkeypatch.setattr("zigzag.sweep.runner.write_figures", lambda *args, **kwargs: {})
    workload = conv_relu_pool(tmp_path / "net.onnx")
    sweep = read_sweep(sweep_section(workload), "test")
    files = write_point_files(sweep, variants_of(sweep), tmp_path / "batches")
    assert len(files) == 2  # 2 + 1 variants
    caplog.set_level(logging.WARNING)
    points = []
    for name, batch in files.items():
        points.append(tmp_path / f"{name}.points.json")
        with collected_warnings() as logged:  # what the batch's log file gets
            evaluate_point_file(batch, tmp_path / "cache", points[-1])
        assert told(logged, RELU) == told(logged, POOL) == len(read_step_file(points[-1])["rows"])
        assert any(" reduced to " in line for line in logged)
    assert warnings_of(caplog) == []  # nothing on the console
    assert read_step_file(points[0])["notes"]["fitted"] == 2
    settings = write_sweep_settings(sweep, tmp_path / "batches")
    rows = collect_points(settings, points, tmp_path / "out")
    assert len(rows) == 3
    lines = warnings_of(caplog)
    assert told(lines, f"{workload}: {RELU}") == 1 and told(lines, f"{workload}: {POOL}") == 1
    assert [line for line in lines if "spatial unrolling" in line][0].startswith(
        "spatial unrolling fitted to the array on 3 of 3 points"
    )


def test_a_guided_search_tells_each_input_note_once(tmp_path, caplog):
    """The search's points hold their notes (in this process or a worker's) and the search tells
    them once when it ends."""
    from zigzag.sweep.hardware_search import search
    from zigzag.sweep.config import SearchBudget

    workload = conv_relu_pool(tmp_path / "net.onnx")
    caplog.set_level(logging.WARNING)
    sweep = read_sweep(sweep_section(workload), "test")
    found = search(sweep, SearchBudget(population=4, generations=1, workers=1), tmp_path / "cache")
    assert found.evaluations == 3  # the whole grid
    lines = warnings_of(caplog)
    assert told(lines, f"{workload}: {RELU}") == 1 and told(lines, f"{workload}: {POOL}") == 1
    fitted = [line for line in lines if "spatial unrolling" in line]
    assert len(fitted) == 1 and fitted[0].startswith(
        "spatial unrolling fitted to the array on 3 of 3 points (e.g. "
    )
