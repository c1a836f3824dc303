"""The third round of bad inputs (issue 48): each kind is one line naming the field and the fix."""

from __future__ import annotations

from conftest import REPO
from zigzag.cli import main

STREAM_INPUTS = REPO / "inputs" / "stream"


def test_a_layer_stack_naming_a_layer_that_does_not_exist(tmp_path, capsys):
    """Ids beyond the workload were dropped without a word (overlapping stacks were refused)."""
    status = main(
        [
            "stream", "run",
            "--accelerator", str(STREAM_INPUTS / "hardware" / "tpu_like_quad_core.yaml"),
            "--workload", str(STREAM_INPUTS / "workload" / "small_3conv.onnx"),
            "--mapping", str(STREAM_INPUTS / "mapping" / "tpu_like_quad_core.yaml"),
            "--mode", "fused", "--layer-stacks", "0-1;7-9", "--output", str(tmp_path / "out"),
        ]
    )  # fmt: skip
    assert status == 2
    assert capsys.readouterr().err.strip() == (
        "error: layer_stacks: layer 7 does not exist (the workload's ids run 0-2); "
        "give ids of its layers"
    )
    assert not (tmp_path / "out").exists()
