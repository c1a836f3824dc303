"""Small LLM steps built for the per-token tests: one Llama-style block (grouped-query attention,
SwiGLU MLP), prefill or decode, made with the canonical constructors (zigzag/workload/operators/).

The matrix products and the two KV-cache appends are written (norms, softmax and the other vector
layers are left out: the tests are about products, caches and weights); attention reads the K and
V caches (role ``kv_cache``), which hold ``context + tokens`` positions after the appends.
"""

from __future__ import annotations

from zigzag.workload import operators
from zigzag.workload.workload import Workload, build_layer


def block_specs(
    *, batch=1, tokens=1, context=64, d=64, heads=4, kv_heads=2, ffn=128, precision=None
):
    """Layer dicts of one block: ``context`` 0 is a prefill over ``tokens``, else a decode step."""
    p = precision or operators.Precision()
    hd, rows, keys, group = d // heads, batch * tokens, context + tokens, heads // kv_heads
    mm = operators.matmul
    attention = {
        "batch": batch,
        "heads": kv_heads,
        "groups": group,
        "w_role": "kv_cache",
        "precision": p,
    }
    new_kv = {"B": batch, "H": kv_heads, "D": tokens, "K": hd}
    return [
        mm(0, "q_proj", rows=rows, reduction=d, cols=d, sources={}, precision=p),
        mm(1, "k_proj", rows=rows, reduction=d, cols=kv_heads * hd, sources={}, precision=p),
        mm(2, "v_proj", rows=rows, reduction=d, cols=kv_heads * hd, sources={}, precision=p),
        operators.cache_append(3, "k_append", new_kv, sources={"I": 1}, precision=p),
        operators.cache_append(4, "v_append", new_kv, sources={"I": 2}, precision=p),
        mm(5, "qk", rows=tokens, reduction=hd, cols=keys, sources={"I": 0, "W": 3}, **attention),
        mm(6, "pv", rows=tokens, reduction=keys, cols=hd, sources={"I": 5, "W": 4}, **attention),
        mm(7, "o_proj", rows=rows, reduction=d, cols=d, sources={"I": 6}, precision=p),
        mm(8, "gate", rows=rows, reduction=d, cols=ffn, sources={"I": 7}, precision=p),
        mm(9, "up", rows=rows, reduction=d, cols=ffn, sources={"I": 7}, precision=p),
        mm(10, "down", rows=rows, reduction=ffn, cols=d, sources={"I": 9}, precision=p),
    ]


def block_workload(mapping, **shape):
    """The block as a Workload (layers with their ``operand_roles``)."""
    return Workload([build_layer(spec, mapping) for spec in block_specs(**shape)])


def inference(*, batch=1, tokens=1, context=64, **_):
    return {
        "phase": "decode" if context else "prefill",
        "batch": batch,
        "tokens": tokens,
        "context": context,
    }
