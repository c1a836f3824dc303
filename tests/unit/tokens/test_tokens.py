"""Per-token figures, the roofline per layer and the physical limit of a DRAM-bound decode step
(zigzag/tokens, docs/models/per-token.md), on small Llama-style blocks built in tests/llm_steps.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.llm_steps import block_workload, inference
from zigzag.errors import InputError
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_accelerator, load_mapping
from zigzag.io.validation import validate_accelerator
from zigzag.mapping_search.network import evaluate_network
from zigzag.mapping_search.options import SearchOptions
from zigzag.tokens import per_token_figures, read_inference, roofline_rows

HARDWARE = "inputs/hardware/{}.yaml"
MAPPING = "inputs/mapping/{}.yaml"
OPTIONS = SearchOptions(lpf_limit=4)
CONSERVING = SearchOptions(lpf_limit=4, latency_model="bandwidth_bound")
#: every example accelerator of inputs/hardware and its mapping
EXAMPLES = {
    "flow_tpu_32x32": "flow_tpu_32x32",
    "flow_tpu_32x32_vector": "flow_tpu_32x32",
    "flow_edgetpu_4x4x8x8": "flow_edgetpu_4x4x8x8",
    "flow_eyeriss_14x12": "flow_eyeriss_14x12",
    "aimc": "default_imc",
    "dimc": "default_imc",
}
#: the Eyeriss-like decode step on which ZigZag's latency model beats the DRAM bound
EYERISS_CASE = {"batch": 1, "context": 1, "d": 128, "heads": 4, "kv_heads": 4, "ffn": 256}


def _step(name="flow_tpu_32x32", accelerator=None, options=OPTIONS, **shape):
    mapping = load_mapping(MAPPING.format(EXAMPLES.get(name, name)))
    accelerator = accelerator or load_accelerator(HARDWARE.format(name))
    return evaluate_network(
        block_workload(mapping, **shape), accelerator, options, show_progress=False
    )


@pytest.fixture(scope="module")
def decode():
    shape = {"batch": 4, "context": 200}
    return shape, _step(**shape)


def test_decode_figures_follow_from_the_step(decode):
    shape, result = decode
    figures = per_token_figures(result, inference(**shape), clock_ghz=0.5)
    cycles = result.total.latency_total2
    assert figures.phase == "decode" and figures.ttft_s is None
    assert figures.tpot_s == pytest.approx(cycles / 0.5e9)
    assert figures.tokens_per_s == pytest.approx(4 / figures.tpot_s)
    assert figures.energy_per_token_pJ == pytest.approx(result.total.energy_total / 4)
    assert figures.energy_per_token_J == pytest.approx(figures.energy_per_token_pJ * 1e-12)
    # d 64, 2 kv heads of 16, ffn 128, 8-bit: q,o 64x64; k,v 64x32; gate, up, down 64x128
    assert figures.weights_bytes == 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128
    assert (
        figures.kv_cache_bytes_per_token == 2 * 2 * 16
    )  # K and V, 2 kv heads, head dim 16, 1 byte
    assert figures.kv_cache_bytes == 64 * 4 * 201
    fits = {f.memory: f for f in figures.fits}
    assert set(fits) == {
        "w_reg",
        "acc_reg",
        "accumulators",
        "unified_buffer",
    }  # dram is the outermost
    assert fits["unified_buffer"].weights and fits["unified_buffer"].kv_cache
    assert not fits["w_reg"].weights and fits["w_reg"].capacity_bytes == 2 * 1024
    data = json.loads(json.dumps(figures.to_dict()))
    assert data["fits"]["accumulators"]["capacity_bytes"] == 512 * 1024
    assert data["dram"]["memory"] == "dram"


def test_prefill_gives_time_to_first_token():
    shape = {"tokens": 32, "context": 0}
    result = _step(**shape)
    figures = per_token_figures(result, inference(**shape), clock_ghz=1.0)
    assert figures.phase == "prefill" and figures.tpot_s is None
    assert figures.ttft_s == pytest.approx(result.total.latency_total2 * 1e-9)
    assert figures.tokens_per_s == pytest.approx(32 / figures.ttft_s)
    assert (
        figures.kv_cache_bytes_per_token == 64
    )  # the same cache as the decode step's, from the appends
    assert figures.kv_cache_bytes == 64 * 32


def test_without_a_clock_the_figures_stay_in_cycles(decode):
    shape, result = decode
    figures = per_token_figures(result, inference(**shape))
    assert figures.tpot_s is None and figures.tokens_per_s is None and figures.dram.bound_s is None
    assert figures.tpot_cycles == result.total.latency_total2


@pytest.mark.parametrize(
    "given, where",
    [
        ({"phase": "generate"}, "phase"),
        ({"phase": "decode"}, "context"),
        ({"phase": "prefill"}, "tokens"),
        ({"phase": "decode", "context": 8, "batch": 0}, "batch"),
        ({"batch": 2}, "phase"),
        ({"seq": 2}, "seq"),
    ],
)
def test_bad_metadata_is_one_line(given, where):
    with pytest.raises(InputError) as error:
        read_inference(None, given, source="zigzag run")
    assert error.value.where == where and "\n" not in str(error.value)


def test_metadata_from_the_workload_and_overrides():
    class Step:  # the configuration generator's record answers to_dict()
        def to_dict(self):
            return {
                "model": "tiny",
                "phase": "decode",
                "batch": 1,
                "tokens": 1,
                "context": 128,
                "layers": 2,
            }

    assert read_inference(Step(), {"batch": 8})["batch"] == 8
    assert read_inference(Step())["context"] == 128
    assert read_inference(None) is None


def test_roofline_names_what_bounds_each_layer(decode):
    _, result = decode
    rows = roofline_rows(result)
    assert [r.layer for r in rows] == [layer.name for layer, _ in result.layers]
    for row in rows:
        memories = {m.memory: m for m in row.memories}
        assert row.peak == 1024  # the 32 x 32 array
        assert row.bound in {"compute", *memories}
        assert row.attainable == min(
            [row.peak] + [m.roof for m in row.memories if m.roof is not None]
        )
        dram = memories["dram"]
        assert dram.bandwidth_bytes_per_cycle == 8  # one 64-bit port
        assert dram.intensity == pytest.approx(row.ops / dram.bytes)
    # a decode step's products are matrix-vector: DRAM bounds them on this accelerator
    assert {r.bound for r in rows} == {"dram"}


def _with_offchip_bandwidth(name: str, bits: int):
    document = yaml.safe_load(open(HARDWARE.format(name)))
    offchip = next(m for n, m in document["memories"].items() if "dram" in n.lower())
    for port in offchip["ports"]:
        port["bandwidth_max"] = bits
        port["bandwidth_min"] = min(port["bandwidth_min"], bits)
    return accelerator_from_dict(validate_accelerator(copy.deepcopy(document), name))


@pytest.mark.slow
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    name=st.sampled_from(list(EXAMPLES)),
    bits=st.sampled_from([32, 64, 128, 256, 1024]),
    batch=st.sampled_from([1, 2, 4, 8]),
    context=st.integers(1, 2048),
    d=st.sampled_from([32, 64, 128]),
    kv_heads=st.sampled_from([1, 2, 4]),
)
def test_a_decode_step_never_beats_the_offchip_bandwidth(name, bits, batch, context, d, kv_heads):
    """Every weight and KV-cache byte is read from DRAM once per decode step at least, so the
    step cannot take less than those bytes over DRAM's read bandwidth: with the bandwidth-conserving
    latency model, on every example accelerator."""
    shape = {
        "batch": batch,
        "context": context,
        "d": d,
        "heads": 4,
        "kv_heads": kv_heads,
        "ffn": 2 * d,
    }
    result = _step(name, _with_offchip_bandwidth(name, bits), CONSERVING, **shape)
    figures = per_token_figures(result, inference(**shape))
    bound = figures.dram
    assert bound.read_bits_per_cycle == bits
    assert bound.bytes == pytest.approx(figures.weights_bytes + figures.kv_cache_bytes)
    assert result.total.latency_total2 >= bound.bound_cycles
    assert bound.ratio >= 1
    # and the whole bound: every memory port's bits and the compute (issue 45)
    assert figures.bound.ratio >= 1


def test_zigzags_latency_model_can_beat_the_bound():
    """The case a search with ZigZag's latency model found on the Eyeriss-like example: its on-loading
    estimate credits the DRAM port with spare capacity while the port carries the global buffer's
    weights, and the step comes out below the physical limit (ratio 0.994); ``zigzag run`` says so."""
    result = _step(
        "flow_eyeriss_14x12", _with_offchip_bandwidth("flow_eyeriss_14x12", 32), **EYERISS_CASE
    )
    assert per_token_figures(result, inference(**EYERISS_CASE)).dram.ratio < 1
    gate = next(layer_result for layer, layer_result in result.layers if layer.name == "gate")
    # the gate product alone: 128 x 256 weights of 8 bits through a 32-bit port take 8,192 cycles
    assert gate.latency_total2 < 128 * 256 * 8 / 32


def test_the_bandwidth_bound_latency_model_keeps_the_eyeriss_like_step_above_the_bound():
    """The same step with ``latency_model: bandwidth_bound``: no port carries more bits than its
    bandwidth allows in the layer's time, so every product and the step stay above the bound."""
    accelerator = _with_offchip_bandwidth("flow_eyeriss_14x12", 32)
    result = _step("flow_eyeriss_14x12", accelerator, CONSERVING, **EYERISS_CASE)
    assert per_token_figures(result, inference(**EYERISS_CASE)).dram.ratio >= 1
    for _, layer_result in result.layers:
        detail = layer_result.cost_detail
        assert detail.latency_model == "bandwidth_bound"
        assert layer_result.latency_total2 >= detail.port_bound_cycle
        assert layer_result.latency_total2 == (
            layer_result.latency_total0
            + layer_result.data_onloading_cycle
            + layer_result.data_offloading_cycle
        )


@pytest.mark.slow
def test_zigzag_run_prints_and_writes_the_figures(tmp_path, capsys):
    from support.llm_steps import block_specs

    from zigzag.cli import main

    # a workload file: the products only, without roles (the caches become constant operands W)
    specs = [
        {k: v for k, v in spec.items() if k not in ("kind", "operand_roles") and v is not None}
        for spec in block_specs(batch=2, context=100)
        if "vector_op" not in spec
    ]
    ids = {spec["id"] for spec in specs}
    for spec in specs:
        spec["operand_source"] = {
            op: src if src in ids else spec["id"] for op, src in spec["operand_source"].items()
        }
        spec["operator_type"] = "Gemm"  # the workload file's name for a matrix product
    workload = tmp_path / "block.yaml"
    workload.write_text(yaml.safe_dump(specs))
    out = tmp_path / "out"
    argv = [
        "run",
        "--workload",
        str(workload),
        "--accelerator",
        HARDWARE.format("flow_tpu_32x32"),
        "--mapping",
        MAPPING.format("flow_tpu_32x32"),
        "--output",
        str(out),
        "--quiet",
        "--lpf-limit",
        "4",
    ]
    assert (
        main(argv + ["--phase", "decode", "--batch", "2", "--context", "100", "--clock-ghz", "2"])
        == 0
    )
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    figures = summary["per_token"]
    assert figures["tpot_s"] == pytest.approx(summary["latency"] / 2e9)
    assert f"time per output token: {figures['tpot_s'] * 1e3:.6g} ms" in printed
    assert "step / bound = " in printed and "tokens/s at batch 2" in printed
    # without roles the K and V caches (constant operands of the file) count as weights
    assert (
        figures["weights_bytes"] == 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128 + 2 * 2 * 2 * 101 * 16
    )
    assert figures["kv_cache_bytes"] is None
    rows = (out / "roofline.csv").read_text().splitlines()
    assert rows[0].startswith("id,name,operator_type,compute_unit,ops,") and len(rows) == 1 + len(
        specs
    )
    assert (out / "roofline.png").stat().st_size > 0
    # a workload without metadata and no --phase: no per-token figures, and a clock alone is refused
    assert main(argv) == 0 and "per_token" not in json.loads((out / "summary.json").read_text())
    assert main(argv + ["--clock-ghz", "1"]) == 2
    assert "--clock-ghz" in capsys.readouterr().err


def test_an_export_says_which_step_it_is():
    from zigzag.io.loaders import load_workload

    mapping = MAPPING.format("flow_tpu_32x32")
    decode = load_workload("tests/data/llm/llama_tiny_decode.onnx", mapping, operators="all")
    prefill = load_workload(
        "tests/data/llm/llama_tiny_prefill.onnx", mapping, operators="all"
    ).inference
    assert (decode.inference.phase, decode.inference.tokens, decode.inference.context) == (
        "decode",
        1,
        127,
    )
    assert prefill.phase == "prefill" and prefill.context == 0 and prefill.tokens > 1
    # every operator imported: the figures read the KV cache from the roles the import gives
    result = evaluate_network(
        decode,
        load_accelerator(HARDWARE.format("flow_tpu_32x32_vector")),
        OPTIONS,
        show_progress=False,
    )
    figures = per_token_figures(result)
    assert not figures.uncosted_layers
    # TinyLlama widths: 2 layers x (K and V) x 4 kv heads x 64 x 1 byte
    assert figures.kv_cache_bytes_per_token == 2 * 2 * 4 * 64
    assert figures.dram.ratio >= 1


def test_the_workflow_steps_give_an_llm_experiment_its_figures(tmp_path):
    """parse -> split -> evaluate every chunk -> sum -> save, as the workflow's rules run them:
    the experiment's summary.json and summary.csv carry the step's per-token figures."""
    from zigzag.steps.cli import main as step
    from zigzag.steps.experiments import expand_experiments
    from zigzag.steps.parse import parse_accelerator, parse_workload
    from zigzag.steps.pipeline import plan_chunks, save_experiment, split_layers, sum_experiment
    from zigzag.io.tables import read_csv as read_rows

    workload = tmp_path / "tiny.llm.yaml"
    workload.write_text(
        yaml.safe_dump(
            {
                "llm": {
                    "model": str(Path("tests/data/llm/llama_tiny.config.json").resolve()),
                    "phase": "decode",
                    "context": 32,
                    "batch": 2,
                    "layers": 1,
                }
            }
        )
    )
    experiment = expand_experiments(
        {
            "experiments": [
                {
                    "name": "tiny",
                    "workload": str(workload),
                    "accelerator": HARDWARE.format("flow_tpu_32x32_vector"),
                    "mapping": MAPPING.format("flow_tpu_32x32"),
                    "lpf_limit": 4,
                }
            ]
        }
    )[0]
    parse_workload(experiment["workload"], experiment["mapping"], tmp_path / "w.json")
    parse_accelerator(experiment["accelerator"], tmp_path / "a.json")
    cache = tmp_path / "cache"
    plan = split_layers(
        experiment, tmp_path / "w.json", tmp_path / "a.json", cache, tmp_path / "plan.json"
    )
    assert plan["chunks"] >= 1
    for chunk in plan_chunks(tmp_path / "plan.json"):
        command = ["evaluate-layers", str(tmp_path / "plan.json"), "--chunk", chunk]
        assert step([*command, "--cache", str(cache), "--output", str(tmp_path / chunk)]) == 0
    sum_experiment(tmp_path / "plan.json", cache, tmp_path / "results.json")
    summary = save_experiment(tmp_path / "results.json", cache, tmp_path / "out")
    figures = summary["per_token"]
    assert summary["inference"]["context"] == 32 and figures["batch"] == 2
    assert figures["tpot_cycles"] == summary["latency"]
    assert figures["energy_per_token_pJ"] == pytest.approx(summary["energy"] / 2)
    assert figures["kv_cache_bytes_per_token"] == 2 * 4 * 64  # one block, 4 kv heads of 64
    (row,) = read_rows(tmp_path / "out" / "summary.csv")
    assert float(row["energy_per_token_J"]) == pytest.approx(figures["energy_per_token_J"])
    assert float(row["dram_bound_ratio"]) >= 1
    # issue 45: the experiment's latency model resolved for the LLM step, its precision and bound
    assert plan["experiment"]["options"]["latency_model"] == "bandwidth_bound"
    assert figures["precision"] == {"activation": [8], "kv_cache": [8], "weight": [8]}
    assert figures["bound"]["latency_model"] == "bandwidth_bound"
    assert figures["bound"]["ratio"] >= 1 and row["bound_term"] == figures["bound"]["binding"]
    assert row["precision"] == "a8 kv8 w8" and float(row["bound_ratio"]) >= 1


def test_the_cost_model_pages_worked_example():
    """docs/models/cost-model.md#a-bandwidth-conserving-latency: the gate product of the Eyeriss-like
    case, on the mapping ZigZag's model keeps, under both latency models."""
    from zigzag.cost.model import analyse

    result = _step(
        "flow_eyeriss_14x12", _with_offchip_bandwidth("flow_eyeriss_14x12", 32), **EYERISS_CASE
    )
    gate = next(layer_result for layer, layer_result in result.layers if layer.name == "gate")
    mapping = (gate.spatial_mapping, gate.spatial_mapping_int, gate.temporal_mapping)
    zigzag = analyse(gate.layer, gate.accelerator, *mapping).result
    conserving = analyse(gate.layer, gate.accelerator, *mapping, latency_model="bandwidth_bound")
    assert (zigzag.latency_total0, zigzag.data_onloading_cycle, zigzag.data_offloading_cycle) == (
        3648,
        4448,
        68,
    )
    assert zigzag.latency_total2 == 8164
    # the DRAM port: 32,768 weights, 128 inputs and 256 outputs of 8 bits at 32 bit/cycle
    assert conserving.port_bound_cycle == (32768 + 128 + 256) * 8 // 32 == 8288
    assert (
        conserving.result.latency_total2 == 8288
        and conserving.result.data_onloading_cycle == 4448 + 124
    )
    assert conserving.result.latency_total0 == zigzag.latency_total0
    assert conserving.result.energy_total == zigzag.energy_total
