"""An LLM workload (``*.llm.yaml`` naming a model configuration file) in the workflow: it runs like any
workload, gives the API's totals, and a changed configuration file is parsed and evaluated again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import REPO
from support.workflow import jobs, snakemake, write_yaml

pytestmark = pytest.mark.slow

MODEL = {
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 2,
    "vocab_size": 100,
}


def test_llm_workload_in_the_workflow(tmp_path: Path):
    from zigzag.api import run
    from zigzag.mapping_search.options import SearchOptions

    (tmp_path / "tiny.json").write_text(json.dumps(MODEL))
    (tmp_path / "tiny_decode.llm.yaml").write_text(
        "llm: {model: tiny.json, phase: decode, context: 15}\n"
    )
    hardware = REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml"
    mapping = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
    write_yaml(
        tmp_path / "config.yaml",
        {
            "experiments": [
                {
                    "name": "tiny",
                    "workload": "tiny_decode.llm.yaml",
                    "accelerator": str(hardware),
                    "mapping": str(mapping),
                    "lpf_limit": 3,
                }
            ]
        },
    )
    snakemake(tmp_path)
    summary = json.loads((tmp_path / "results" / "tiny" / "summary.json").read_text())
    expected = run(
        str(tmp_path / "tiny_decode.llm.yaml"),
        hardware,
        mapping,
        SearchOptions(lpf_limit=3),
        show_progress=False,
    )
    assert summary["energy"] == pytest.approx(expected.energy, rel=1e-12)

    (tmp_path / "tiny.json").write_text(json.dumps(MODEL | {"intermediate_size": 256}))
    output = snakemake(tmp_path)
    assert jobs(output, "parse_workload") == 1 and jobs(output, "evaluate_layers") > 0
    assert (
        json.loads((tmp_path / "results" / "tiny" / "summary.json").read_text())["energy"]
        > summary["energy"]
    )
