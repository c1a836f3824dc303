"""Issue 45, items 1, 2, 3 and 5: the latency model of sweeps, the physical bound of every LLM
step (memories, ports, compute; the term that binds), the whole step's capacity and the
assumptions stated in every output (precision, latency model, positions, logits)."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from support import REPO
from support.llm_steps import block_workload, inference
from zigzag.errors import InputError
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_mapping
from zigzag.io.validation import validate_accelerator
from zigzag.mapping_search.capacity import CapacityError
from zigzag.mapping_search.network import evaluate_network
from zigzag.mapping_search.options import SearchOptions
from zigzag.sweep import read_sweep
from zigzag.tokens import per_token_figures
from zigzag.tokens.columns import bound_columns
from zigzag.tokens.figures import summary_lines
from zigzag.workload.inference import Inference

EYERISS = REPO / "inputs" / "hardware" / "flow_eyeriss_14x12.yaml"
EYERISS_MAPPING = REPO / "inputs" / "mapping" / "flow_eyeriss_14x12.yaml"
TPU = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
TPU_MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
TINY_LLAMA = REPO / "tests" / "data" / "llm" / "llama_tiny.config.json"
#: the Eyeriss-like decode step on which ZigZag's latency model beats the DRAM bound (test_tokens.py)
EYERISS_CASE = {"batch": 1, "context": 1, "d": 128, "heads": 4, "kv_heads": 4, "ffn": 256}


def _eyeriss(dram_bits: int = 32, dram_bytes: int | None = None):
    document = yaml.safe_load(EYERISS.read_text())
    dram = document["memories"]["dram"]
    for port in dram["ports"]:
        port["bandwidth_max"] = dram_bits
        port["bandwidth_min"] = min(port["bandwidth_min"], dram_bits)
    if dram_bytes is not None:
        dram["size"] = dram_bytes * 8
    return accelerator_from_dict(validate_accelerator(copy.deepcopy(document), "eyeriss"))


def _llm_step(shape: dict, mapping=EYERISS_MAPPING):
    """The tests' Llama-style block as an LLM step (its inference metadata set)."""
    workload = block_workload(load_mapping(str(mapping)), **shape)
    step = inference(**shape)
    workload.inference = Inference(model="block", layers=1, **step)
    return workload


@pytest.fixture(scope="module")
def eyeriss_runs():
    """The Eyeriss-like case under the default latency model and under ZigZag's, chosen."""
    runs = {}
    for name, options in (
        ("default", SearchOptions(lpf_limit=4)),
        ("zigzag", SearchOptions(lpf_limit=4, latency_model="zigzag")),
    ):
        result = evaluate_network(_llm_step(EYERISS_CASE), _eyeriss(), options, show_progress=False)
        runs[name] = (result, per_token_figures(result, clock_ghz=1.0))
    return runs


# ----- item 1: the latency model of single-core sweeps ---------------------------------------
def _sweep_section(**more):
    return {
        "name": "s",
        "base": str(TPU),
        "vary": {"memories.unified_buffer.size": ["512KiB", "3MiB"]},
        "workloads": [str(REPO / "inputs" / "workload" / "resnet18.onnx")],
        "mapping": str(TPU_MAPPING),
        **more,
    }


@pytest.mark.parametrize("model", ["zigzag", "bandwidth_bound", "auto"])
def test_a_single_core_sweep_takes_a_latency_model(model):
    assert read_sweep(_sweep_section(latency_model=model)).options["latency_model"] == model


@pytest.mark.slow
def test_the_sweep_command_line_takes_a_latency_model():
    from zigzag.cli import build_parser
    from zigzag.sweep.flags import sweep_from_args

    args = build_parser().parse_args(
        ["sweep", "--base", str(TPU), "--workload", "w.onnx", "--mapping", str(TPU_MAPPING)]
        + ["--vary", "memories.unified_buffer.size=[512KiB]", "--latency-model", "bandwidth_bound"]
    )
    # as cmd_sweep does: the search flags given on top of the sweep entry
    section = {**sweep_from_args(args), "name": "s", "latency_model": args.latency_model}
    assert read_sweep(section).options["latency_model"] == "bandwidth_bound"


def test_a_bad_latency_model_is_one_line():
    with pytest.raises(InputError) as error:
        read_sweep(_sweep_section(latency_model="roofline"))
    assert "latency_model" in str(error.value) and "\n" not in str(error.value)
    assert "auto" in str(error.value) and "bandwidth_bound" in str(error.value)


def test_a_workflow_experiment_takes_a_latency_model():
    from zigzag.steps.experiments import resolve_experiment

    files = {"workload": "w.onnx", "accelerator": "a.yaml", "mapping": "m.yaml"}
    experiment = resolve_experiment(
        {"name": "e", **files, "latency_model": "bandwidth_bound"}, {}, "experiments[0]"
    )
    assert experiment["options"]["latency_model"] == "bandwidth_bound"


def test_auto_is_bandwidth_bound_for_llm_steps_only():
    assert SearchOptions().latency_model == "auto"
    assert SearchOptions().resolved(llm=True).latency_model == "bandwidth_bound"
    assert SearchOptions().resolved(llm=False).latency_model == "zigzag"
    assert SearchOptions(latency_model="zigzag").resolved(llm=True).latency_model == "zigzag"
    # unresolved, auto is ZigZag's model: the job keys (and cached results) of other workloads stay
    from zigzag.mapping_search.jobs import layer_job

    layer = next(iter(_llm_step(EYERISS_CASE).layers))
    accelerator = _eyeriss()
    assert layer_job(layer, accelerator, SearchOptions()) == layer_job(
        layer, accelerator, SearchOptions(latency_model="zigzag")
    )


# ----- item 2: never below the bound, and said when a chosen model is -------------------------
def test_the_default_model_of_an_llm_step_honours_the_bound(eyeriss_runs):
    result, figures = eyeriss_runs["default"]
    assert result.latency_model == "bandwidth_bound"
    assert figures.bound.ratio >= 1 and figures.dram.ratio >= 1
    assert figures.bound.note() == ""
    assert figures.step_cycles >= max(t.cycles for t in figures.bound.terms)


def test_zigzags_model_chosen_says_how_far_below_the_bound(eyeriss_runs):
    _, figures = eyeriss_runs["zigzag"]
    bound = figures.bound
    assert bound.latency_model == "zigzag" and bound.ratio < 1
    assert bound.cycles == max(t.cycles for t in bound.terms)
    assert f"{bound.below:.1%} below the {bound.binding} bound" in bound.note()
    text = "\n".join(summary_lines(figures))
    assert "below the physical bound by" in text and "latency model zigzag" in text
    columns = bound_columns(figures)
    assert columns["bound_ratio"] == bound.ratio and columns["bound_note"] == bound.note()
    assert columns["bound_term"] == bound.binding and columns["latency_model"] == "zigzag"


def test_the_bound_names_memories_ports_and_compute(eyeriss_runs):
    _, figures = eyeriss_runs["default"]
    kinds = {t.kind for t in figures.bound.terms}
    assert kinds == {"memory", "port", "compute"}
    names = {t.name for t in figures.bound.terms}
    assert "dram" in names and "compute" in names and any(n.startswith("dram.") for n in names)
    # a decode step at batch 1 reads its weights once: the DRAM binds, far above the compute term
    assert figures.bound.binding.startswith("dram")
    assert figures.bound.memory_cycles > 10 * figures.bound.compute_cycles


# ----- item 3: the whole step fits the memory that holds it ---------------------------------
def test_a_step_larger_than_its_dram_is_refused_in_one_line():
    with pytest.raises(CapacityError) as error:
        evaluate_network(
            _llm_step(EYERISS_CASE), _eyeriss(dram_bytes=64 * 1024), SearchOptions(lpf_limit=4)
        )
    message = str(error.value)
    assert "\n" not in message and "block" in message and "needs" in message
    assert "dram holds 64 KiB" in message and "weights" in message and "KV cache" in message


def test_llama_3_8b_at_16_bits_does_not_fit_8_gib():
    """The issue's case: 14.96 GiB of 16-bit weights on the 8 GiB DRAM of the TPU-like example."""
    from zigzag.api import run

    document = {"llm": {"model": "llama-3-8b", "phase": "decode", "context": 4095, "precision": 16}}
    hardware = REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml"
    with pytest.raises(
        CapacityError,
        match=r"accelerator 'flow_tpu_32x32_vector': memories.dram.size: llama-3-8b .* needs 14.48 GiB in dram \(weights 13.98 GiB.* holds 8 GiB",
    ):
        run(document, str(hardware), str(TPU_MAPPING), SearchOptions(lpf_limit=4))


@pytest.mark.slow
def test_a_sweep_point_that_does_not_fit_is_an_invalid_row(tmp_path, monkeypatch):
    from zigzag.sweep import run_sweep

    def load(workload, changes, entries, options):
        return _llm_step(EYERISS_CASE, EYERISS_MAPPING)

    monkeypatch.setattr("zigzag.sweep.point.load_point_workload", load)
    path = tmp_path / "tiny.llm.yaml"
    path.write_text(yaml.safe_dump({"llm": {"model": str(TINY_LLAMA), "phase": "decode"}}))
    rows = run_sweep(
        {
            "base": str(EYERISS),
            "vary": {"memories.dram.size": [8 * 64 * 1024]},
            "workloads": [str(path)],
            "mapping": str(EYERISS_MAPPING),
            "lpf_limit": 4,
        },
        tmp_path / "out",
    )
    assert [row["status"] for row in rows] == ["invalid"]
    assert "needs" in rows[0]["reason"] and "dram holds 64 KiB" in rows[0]["reason"]


def test_the_figures_say_what_each_memory_holds(eyeriss_runs):
    _, figures = eyeriss_runs["default"]
    (dram,) = figures.holdings
    assert dram.memory == "dram" and dram.fits
    assert dram.weights_bytes == pytest.approx(figures.weights_bytes)
    assert dram.kv_cache_bytes == pytest.approx(figures.kv_cache_bytes)
    assert dram.activations_bytes > 0
    assert all(fit.activations is not None for fit in figures.fits)
    text = "\n".join(summary_lines(figures))
    assert "dram (1 GiB) holds" in text and "activations" in text


# ----- item 5: assumptions visible, bad values refused ---------------------------------------
def test_precision_and_latency_model_are_in_every_output(eyeriss_runs):
    _, figures = eyeriss_runs["default"]
    assert figures.precision == {"activation": [8], "kv_cache": [8], "weight": [8]}
    assert figures.to_dict()["precision"] == figures.precision
    assert figures.to_dict()["bound"]["latency_model"] == "bandwidth_bound"
    assert bound_columns(figures)["precision"] == "a8 kv8 w8"
    assert (
        "precision: activations 8, KV cache 8, weights 8 bits; latency model: bandwidth_bound"
        in (summary_lines(figures))[1]
    )


def test_a_prefill_gives_both_bounds_and_the_binding_one():
    shape = {"tokens": 64, "context": 0, "batch": 2}
    result = evaluate_network(
        _llm_step(shape), _eyeriss(dram_bits=1024), SearchOptions(lpf_limit=4), show_progress=False
    )
    figures = per_token_figures(result, clock_ghz=1.0)
    bound = figures.bound
    # the compute term: every MAC at the 14 x 12 array's peak
    macs = sum(layer.total_macs for layer, _ in result.layers)
    assert bound.compute_cycles == pytest.approx(macs / 168)
    # with a 1024-bit DRAM port the prefill is bound neither by DRAM nor by the array but by an
    # on-chip port: the partial sums' scratchpad read port (47,040 cycles against 34,328 of compute)
    assert (bound.kind, bound.binding) == ("port", "psum_spad.r_port_1")
    assert bound.memory_cycles == bound.cycles > bound.compute_cycles and bound.ratio >= 1
    lines = "\n".join(summary_lines(figures))
    assert "compute bound:" in lines and "memory bound:" in lines and "step bound:" in lines
    assert f"({bound.binding})" in lines


@pytest.mark.parametrize(
    "section, field, fix",
    [
        (
            {"model": "llama-3-8b", "phase": "decode", "context": 200000},
            "llm.context",
            "at most 8191",
        ),
        ({"model": "llama-3-8b", "phase": "prefill", "tokens": 9000}, "llm.tokens", "at most 8192"),
        ({"model": "gpt2", "phase": "decode", "context": 2000}, "llm.context", "1024 learned"),
    ],
)
def test_a_context_beyond_the_models_positions_is_one_line(section, field, fix):
    from zigzag.io.llm_workloads import llm_workload_specs

    with pytest.raises(InputError) as error:
        llm_workload_specs({"llm": section}, "w.llm.yaml")
    assert error.value.where == field and fix in str(error.value)
    assert "\n" not in str(error.value)


def test_rope_scaling_stretches_the_positions():
    from zigzag.workload.llm.config import config_from_hf

    base = json.loads(TINY_LLAMA.read_text())
    assert config_from_hf(base, "c.json").position_limit == 2048
    scaled = {**base, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    assert config_from_hf(scaled, "c.json").position_limit == 8192
    llama3 = {
        **base,
        "max_position_embeddings": 131072,
        "rope_scaling": {"factor": 8.0, "original_max_position_embeddings": 8192},
    }
    assert config_from_hf(llama3, "c.json").position_limit == 131072
    with pytest.raises(InputError, match="rope_scaling: must be a mapping with factor"):
        config_from_hf({**base, "rope_scaling": {"factor": "big"}}, "c.json")


def test_logits_varies_in_a_sweep(tmp_path):
    path = tmp_path / "tiny.llm.yaml"
    path.write_text(
        yaml.safe_dump({"llm": {"model": str(TINY_LLAMA), "phase": "prefill", "tokens": 16}})
    )
    section = {
        **_sweep_section(),
        "workloads": [str(path)],
        "workload_vary": {"logits": ["last", "all"]},
    }
    assert read_sweep(section).workload_axes == (("logits", ("last", "all")),)
    with pytest.raises(InputError, match=r"workload_vary.logits: .*'first'.*all, last"):
        read_sweep({**section, "workload_vary": {"logits": ["first"]}})


def _eyeriss_with_table(entries):
    document = yaml.safe_load(EYERISS.read_text())
    document["operational_array"]["unit_energy_per_precision"] = entries
    return accelerator_from_dict(validate_accelerator(copy.deepcopy(document), "eyeriss"))


@pytest.mark.slow
def test_the_mac_energy_follows_the_files_per_precision_table():
    from zigzag.workload.operators import Precision

    shape = {"batch": 1, "context": 8, "d": 32, "heads": 2, "kv_heads": 2, "ffn": 64}
    table = [{"bits": 8, "unit_energy": 0.25}, {"bits": 16, "unit_energy": 1.0}]
    runs = {}
    for bits in (8, 16):
        workload = block_workload(
            load_mapping(str(EYERISS_MAPPING)), precision=Precision(bits, bits, bits), **shape
        )
        workload.inference = Inference(model="block", layers=1, **inference(**shape))
        result = evaluate_network(
            workload, _eyeriss_with_table(table), SearchOptions(lpf_limit=4), show_progress=False
        )
        runs[bits] = result
        for layer, cost in result.layers:
            assert cost.mac_energy == pytest.approx(layer.total_macs * (0.25 if bits == 8 else 1.0))
    figures = per_token_figures(runs[16])
    assert figures.mac_energy == "unit_energy_per_precision (16 bits: 1 pJ)"
    assert "  MAC energy: unit_energy_per_precision (16 bits: 1 pJ)" in summary_lines(figures)
    # without a table: unit_energy whatever the bits, as ZigZag (and said so)
    plain = evaluate_network(
        _llm_step(shape), _eyeriss(), SearchOptions(lpf_limit=4), show_progress=False
    )
    assert per_token_figures(plain).mac_energy == "unit_energy 0.842 pJ per MAC at any precision"


def test_a_precision_the_table_lacks_is_one_line():
    from zigzag.workload.operators import Precision

    shape = {"batch": 1, "context": 8, "d": 32, "heads": 2, "kv_heads": 2, "ffn": 64}
    workload = block_workload(
        load_mapping(str(EYERISS_MAPPING)), precision=Precision(16, 16, 16), **shape
    )
    with pytest.raises(InputError) as error:
        evaluate_network(
            workload, _eyeriss_with_table([{"bits": 8, "unit_energy": 0.25}]), SearchOptions()
        )
    assert error.value.where == "operational_array.unit_energy_per_precision"
    assert "no entry for 16-bit operands" in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(
        InputError, match=r"unit_energy_per_precision\[1\].bits: 8 bits are listed twice"
    ):
        _eyeriss_with_table([{"bits": 8, "unit_energy": 0.25}, {"bits": 8, "unit_energy": 1}])


@pytest.mark.slow
def test_the_stage_api_resolves_the_latency_model_for_an_llm_step(tmp_path):
    """WorkloadStage gives an LLM step the bandwidth-conserving model unless the pipeline names one."""
    from zigzag.stages import (
        AcceleratorParserStage,
        CostModelStage,
        MainStage,
        MinimalLatencyStage,
        SpatialMappingGeneratorStage,
        SumStage,
        TemporalMappingGeneratorStage,
        WorkloadParserStage,
        WorkloadStage,
    )

    path = tmp_path / "tiny.llm.yaml"
    section = {"model": str(TINY_LLAMA), "phase": "decode", "context": 16, "layers": 1}
    path.write_text(yaml.safe_dump({"llm": {**section, "operators": "zigzag"}}))

    def models(**kwargs):
        ((_, cmes),) = MainStage(
            [
                WorkloadParserStage,
                AcceleratorParserStage,
                SumStage,
                WorkloadStage,
                MinimalLatencyStage,
                SpatialMappingGeneratorStage,
                MinimalLatencyStage,
                TemporalMappingGeneratorStage,
                CostModelStage,
            ],
            workload=str(path),
            accelerator=str(TPU),
            mapping=str(TPU_MAPPING),
            loma_lpf_limit=2,
            **kwargs,
        ).run()
        return {result.latency_model for result, _ in cmes}

    assert models() == {"bandwidth_bound"}
    assert models(latency_model="zigzag") == {"zigzag"}
