"""A state-space model's decode step updates its recurrent state in place: the per-token figures report the
state at its fixed size, never as KV-cache growth (docs/models/per-token.md#the-figures)."""

from __future__ import annotations

import pytest

from support import REPO
from zigzag.io.loaders import build_workload, load_accelerator, load_mapping
from zigzag.mapping_search.network import evaluate_network
from zigzag.mapping_search.options import SearchOptions
from zigzag.tokens import per_token_figures
from zigzag.tokens.figures import summary_lines
from zigzag.workload.footprint import footprint, kv_bytes_per_token, state_bytes

HARDWARE = REPO / "inputs" / "hardware" / "flow_tpu_32x32_vector.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"


def _step(model: str, layers: int, **llm):
    return build_workload(model, load_mapping(MAPPING), layers=layers, **llm)


def _inference(workload) -> dict:
    i = workload.inference
    return {"batch": i.batch, "tokens": i.tokens, "context": i.context}


@pytest.mark.parametrize("context", [10, 1000, 100_000])
def test_mamba_state_does_not_grow_with_the_context(context):
    """Mamba-130m, 2 blocks, batch 3, 8-bit: per block the state (inner 1536 x state 16) and the convolution
    window (1536 x 4) of each sequence, read once; no KV cache: 2 x 3 x 1536 x (16 + 4) = 184,320 bytes at
    any context (the state writes are 2 x 3 x 1536 x (16 + 1), the window's new column included)."""
    workload = _step("mamba-130m", 2, phase="decode", context=context, batch=3)
    fp = footprint(workload.layers)
    assert kv_bytes_per_token(fp, _inference(workload)) is None
    assert state_bytes(fp) == 2 * 3 * 1536 * (16 + 4)
    assert fp.state_written == 2 * 3 * 1536 * (16 + 1)


def test_jamba_grows_only_its_attention_cache():
    """Jamba-v0.1, 8 blocks (block 4 attends: 8 KV heads of 128; the other 7 are Mamba mixers of inner 8192,
    state 16, window 4), one token after 1,000: the cache grows by K and V of the attention block only,
    2 x 8 x 128 = 2,048 bytes per token; the state is 7 x 8192 x (16 + 4) = 1,146,880 bytes."""
    workload = _step("jamba-v0.1", 8, phase="decode", context=1000)
    fp = footprint(workload.layers)
    assert kv_bytes_per_token(fp, _inference(workload)) == 2 * 8 * 128
    assert state_bytes(fp) == 7 * 8192 * (16 + 4)


@pytest.fixture(scope="module")
def mamba_figures():
    """The per-token figures of a Mamba-130m decode step (2 blocks, context 1,000) on the TPU-like example."""
    workload = _step("mamba-130m", 2, phase="decode", context=1000)
    return per_token_figures(
        evaluate_network(workload, load_accelerator(HARDWARE), SearchOptions(lpf_limit=2))
    )


def test_a_mamba_decode_run_reports_its_state(mamba_figures):
    """The run's per-token figures and lines: no KV cache, the state once, held in DRAM with the weights."""
    figures = mamba_figures
    assert figures.kv_cache_bytes_per_token is None and figures.kv_cache_bytes is None
    assert figures.state_bytes == 2 * 1536 * (16 + 4)
    (dram,) = [h for h in figures.holdings if h.state_bytes]
    assert dram.state_bytes == figures.state_bytes and dram.kv_cache_bytes == 0
    lines = "\n".join(summary_lines(figures))
    assert "state: 60 KiB for 1 sequence, updated in place" in lines
    assert "KV cache:" not in lines
    assert figures.to_dict()["state_bytes"] == figures.state_bytes


def test_the_state_has_its_own_label_in_fit_lines_bound_line_and_columns(mamba_figures):
    """Every line and column that names the KV cache names the state apart: the fit lines say whether each
    fits on its own, the bound line reads "weights and state" (a Mamba step has no KV cache), and a step
    with both (a hybrid: the Mamba step given a KV cache) keeps them apart, each compared with the memory."""
    from dataclasses import replace

    from zigzag.tokens.columns import bound_columns
    from zigzag.tokens.figures import memory_fits

    accelerator = load_accelerator(HARDWARE)
    figures = mamba_figures
    lines = summary_lines(figures)
    assert not any("KV cache" in line for line in lines)
    assert any("dram bound:" in line and "of weights and state at" in line for line in lines)
    fits = {fit.memory: fit for fit in figures.fits}
    for fit in fits.values():
        assert fit.kv_cache is None and fit.state == (figures.state_bytes <= fit.capacity_bytes)
    assert "state" in bound_columns(figures)["unified_buffer_fits"]  # 60 KiB in 3 MiB

    # a hybrid step: a KV cache larger than every on-chip memory beside the state that fits some
    kv = 4 * max(fit.capacity_bytes for fit in figures.fits)
    live = max((h.activations_bytes for h in figures.holdings), default=0.0)
    hybrid = replace(
        figures,
        kv_cache_bytes_per_token=kv / 1001,
        kv_cache_bytes=kv,
        fits=memory_fits(accelerator, figures.weights_bytes, kv, live, figures.state_bytes),
    )
    text = "\n".join(summary_lines(hybrid))
    assert "unified_buffer (3 MiB): weights do not fit, KV cache does not fit, state fits" in text
    assert "of weights, KV cache and state at" in text
    columns = bound_columns(hybrid)
    assert "state" in columns["unified_buffer_fits"]
    assert "KV cache" not in columns["unified_buffer_fits"]


def test_a_mamba_step_too_large_names_its_state_not_a_kv_cache():
    from zigzag.mapping_search.capacity import CapacityError, check_capacity

    workload = _step("mamba-130m", 2, phase="decode", context=1000, batch=200_000)
    accelerator = load_accelerator(HARDWARE)
    inference = {"model": "mamba-130m", "phase": "decode", **_inference(workload)}
    with pytest.raises(CapacityError) as err:
        check_capacity(
            workload.layers, dict.fromkeys((l.id for l in workload.layers), accelerator), inference
        )
    assert "state " in str(err.value) and "KV cache" not in str(err.value)
