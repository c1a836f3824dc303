"""Small LLM steps built by hand for the per-token tests: one Llama-style block (grouped-query
attention, SwiGLU MLP) as workload-YAML layers, prefill or decode, with operand roles.

Only the matrix products are written (what every accelerator costs); the K and V caches are
operands read from memory (``operand_source`` the layer itself) with the role ``kv_cache``.
"""

from __future__ import annotations

from zigzag.io.loaders import load_workload

PRECISION = {"W": 8, "I": 8, "O": 16, "O_final": 8}


def _matmul(i, name, equation, dims, sizes, sources, roles):
    return {"id": i, "name": name, "operator_type": "Gemm", "equation": equation, "loop_dims": dims,
            "loop_sizes": sizes, "operand_precision": dict(PRECISION), "operand_source": sources, "roles": roles}


def block_specs(*, batch=1, tokens=1, context=64, d=64, heads=4, kv_heads=2, ffn=128):
    """Layer dicts (with a ``roles`` entry each) of one block; tokens=1 with context C: a decode
    step reading C + 1 cached positions; context 0: a prefill over ``tokens``."""
    hd, rows, group = d // heads, batch * tokens, heads // kv_heads
    keys = context + tokens
    w = {"I": "activation", "W": "weight", "O": "activation"}
    kv = {"I": "activation", "W": "kv_cache", "O": "activation"}
    linear = "O[b][k]+=W[k][c]*I[b][c]"
    attention = "O[b][g][h][s][k]+=W[b][g][k][c]*I[b][g][h][s][c]"
    specs = [
        _matmul(0, "q_proj", linear, ["B", "K", "C"], [rows, d, d], {"I": 0, "W": 0}, w),
        _matmul(1, "k_proj", linear, ["B", "K", "C"], [rows, kv_heads * hd, d], {"I": 0, "W": 1},
                {**w, "O": "kv_cache"}),
        _matmul(2, "v_proj", linear, ["B", "K", "C"], [rows, kv_heads * hd, d], {"I": 0, "W": 2},
                {**w, "O": "kv_cache"}),
        # scores: per sequence b, kv-head g, query head h of its group and query s: keys K over the head dim C
        _matmul(3, "qk", attention, ["B", "G", "H", "S", "K", "C"], [batch, kv_heads, group, tokens, keys, hd],
                {"I": 0, "W": 3}, kv),
        # outputs: the head dim K, summed over the keys C
        _matmul(4, "pv", attention, ["B", "G", "H", "S", "K", "C"], [batch, kv_heads, group, tokens, hd, keys],
                {"I": 3, "W": 4}, kv),
        _matmul(5, "o_proj", linear, ["B", "K", "C"], [rows, d, heads * hd], {"I": 4, "W": 5}, w),
        _matmul(6, "gate", linear, ["B", "K", "C"], [rows, ffn, d], {"I": 5, "W": 6}, w),
        _matmul(7, "up", linear, ["B", "K", "C"], [rows, ffn, d], {"I": 5, "W": 7}, w),
        _matmul(8, "down", linear, ["B", "K", "C"], [rows, d, ffn], {"I": 7, "W": 8}, w),
    ]
    return specs


def block_workload(mapping, **shape):
    """The block as a Workload whose layers carry ``operand_roles``."""
    specs = block_specs(**shape)
    roles = {s["name"]: s.pop("roles") for s in specs}
    workload = load_workload(specs, mapping)
    for layer in workload.layers:
        if getattr(layer, "operand_roles", None) is None:  # the field comes with the operator model
            object.__setattr__(layer, "operand_roles", roles[layer.name])
    return workload


def inference(*, batch=1, tokens=1, context=64, **_):
    return {"phase": "decode" if context else "prefill", "batch": batch, "tokens": tokens, "context": context}
