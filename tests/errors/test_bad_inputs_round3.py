"""The third round of bad inputs (issue 48): each kind is one line naming the field and the fix."""

from __future__ import annotations

import pytest

from support import REPO
from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.steps.experiments import expand_sweep
from zigzag.io.llm_workloads import llm_layer_specs
from zigzag.workload.llm import precision_of
from zigzag.workload.llm.config import config_from_hf

STREAM_INPUTS = REPO / "inputs" / "stream"


def test_a_layer_stack_naming_a_layer_that_does_not_exist(tmp_path, caplog):
    """Ids beyond the workload were dropped without a word; Stream ignores them (its scripts give
    ranges past the last layer), so they are named in a warning and the run goes on."""
    status = main(
        [
            "stream", "nodes",
            "--accelerator", str(STREAM_INPUTS / "hardware" / "tpu_like_quad_core.yaml"),
            "--workload", str(STREAM_INPUTS / "workload" / "small_3conv.onnx"),
            "--mapping", str(STREAM_INPUTS / "mapping" / "tpu_like_quad_core.yaml"),
            "--mode", "fused", "--layer-stacks", "0-1;7-9", "--output", str(tmp_path / "out"),
            "--quiet",
        ]
    )  # fmt: skip
    assert status == 0
    assert "layer_stacks: layers 7-9 not in the workload (its ids run 0-2); ignored" in caplog.text


def test_a_sweep_name_pattern_that_collides_names_the_axis_it_leaves_out():
    """It was blamed on 'name used twice' (experiment names must be unique)."""
    sweep = {
        "name": "{workload}",
        "workload": ["a.onnx", "b.onnx"],
        "accelerator": ["x.yaml", "y.yaml"],
    }
    with pytest.raises(InputError) as err:
        expand_sweep(sweep, "sweeps[0]")
    assert str(err.value) == (
        "config: sweeps[0].name: the pattern '{workload}' names two points 'a' (they differ in "
        "accelerator); add {accelerator} to it"
    )


def test_a_bad_batch_flag_names_the_flag(capsys):
    """It named a placeholder '<workload>' and the LLM file's field llm.batch."""
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--workload", "w", "--accelerator", "a", "--mapping", "m", "--batch", "0"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        "zigzag run: error: argument --batch: must be a whole number of at least 1, got '0'; "
        "see 'zigzag run --help'\n"
    )


@pytest.mark.parametrize("given, bits", [("int8", "8"), ("fp16", "16"), ("BF16", "16")])
def test_a_precision_given_as_a_type_name_asks_for_its_bits(given, bits):
    with pytest.raises(InputError) as err:
        precision_of(given, "llama.llm.yaml", "llm.precision")
    assert str(err.value) == (
        f"llama.llm.yaml: llm.precision: is given as '{given}'; give its bits as a number, "
        f"e.g. {bits}"
    )


def test_more_blocks_than_the_model_has_is_refused():
    """llm.layers beyond the model's blocks was costed as a deeper model that does not exist."""
    with pytest.raises(InputError, match=r"layers: 40 blocks, but .* has 32; give at most 32"):
        llm_layer_specs("llama-3-8b", phase="decode", context=16, layers=40)


def test_a_width_the_heads_do_not_divide_is_refused():
    """Llama-type files had their head width rounded down (4001 / 32 -> 125)."""
    data = {
        "model_type": "llama",
        "hidden_size": 4001,
        "num_attention_heads": 32,
        "num_hidden_layers": 2,
        "vocab_size": 100,
        "intermediate_size": 100,
    }
    with pytest.raises(InputError, match="num_attention_heads: the width 4001 is not a multiple"):
        config_from_hf(data, "f.json")
    assert config_from_hf({**data, "head_dim": 128}, "f.json").head_dim == 128
