"""Family recipes: the blocks of GPT-2, BERT and Llama-style models, in the order of their exports."""

from __future__ import annotations

from zigzag.workload import operators as ops
from zigzag.workload.llm.families.attention import attention
from zigzag.workload.llm.families.mlp import experts, swiglu
from zigzag.workload.llm.families.net import Net


def lm_head(net: Net, source: int) -> None:
    cfg, step = net.cfg, net.step
    if cfg.head != "lm":
        return
    if step.logits == "last" and step.tokens > 1:
        source = net.add(
            ops.gather(
                net.next,
                "last_token/Gather",
                {"B": step.batch, "D": 1, "K": cfg.hidden},
                table_role="activation",
                sources={"I": source},
                precision=step.precision,
            )
        )
    rows = 1 if step.logits == "last" else step.tokens
    net.add(
        ops.matmul(
            net.next,
            "lm_head/MatMul",
            rows=rows,
            reduction=cfg.hidden,
            cols=cfg.vocab,
            batch=step.batch,
            sources={"I": source},
            precision=step.precision,
        )
    )


def gpt2(net: Net) -> None:
    cfg, d = net.cfg, net.cfg.hidden
    tokens = net.embedding("wte", d)
    positions = net.embedding("wpe", d, batch=1)
    x = net.elementwise(
        "Add", "add", net.rows(d), tokens, w_dims=net.position_dims(), w_source=positions
    )
    for index in range(cfg.layers):
        name = f"h.{index}"
        h = net.norm(f"{name}/ln_1", x)
        qkv = net.linear(f"{name}/attn/c_attn", h, d, 3 * d, bias=True, gemm=True)
        attn = attention(net, f"{name}/attn", qkv, qkv, qkv)
        out = net.linear(f"{name}/attn/c_proj", attn, d, d, bias=True, gemm=True)
        x = net.elementwise(
            f"{name}/Add", "add", net.rows(d), out, w_dims=("B", "D", "K"), w_source=x
        )
        h = net.norm(f"{name}/ln_2", x)
        up = net.linear(f"{name}/mlp/c_fc", h, d, cfg.intermediate, bias=True, gemm=True)
        form = "erf" if cfg.activation == "gelu" else "tanh"
        act = net.add(
            ops.gelu(
                net.next,
                f"{name}/mlp/act",
                net.rows(cfg.intermediate),
                up,
                form=form,
                precision=net.step.precision,
            )
        )
        down = net.linear(f"{name}/mlp/c_proj", act, cfg.intermediate, d, bias=True, gemm=True)
        x = net.elementwise(
            f"{name}/Add_1", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=down
        )
    lm_head(net, net.norm("ln_f", x))


def bert(net: Net) -> None:
    cfg, d, step = net.cfg, net.cfg.hidden, net.step
    words = net.embedding("embeddings/word_embeddings", d)
    types = net.embedding("embeddings/token_type_embeddings", d)
    x = net.elementwise(
        "embeddings/Add", "add", net.rows(d), words, w_dims=("B", "D", "K"), w_source=types
    )
    positions = net.embedding("embeddings/position_embeddings", d, batch=1)
    x = net.elementwise(
        "embeddings/Add_1", "add", net.rows(d), x, w_dims=net.position_dims(), w_source=positions
    )
    x = net.norm("embeddings/LayerNorm", x)
    for index in range(cfg.layers):
        name = f"encoder/layer.{index}"
        q = net.linear(f"{name}/attention/self/query", x, d, d, bias=True)
        k = net.linear(f"{name}/attention/self/key", x, d, d, bias=True)
        v = net.linear(f"{name}/attention/self/value", x, d, d, bias=True)
        attn = attention(net, f"{name}/attention/self", q, k, v)
        out = net.linear(f"{name}/attention/output/dense", attn, d, d, bias=True)
        out = net.elementwise(
            f"{name}/attention/output/Add",
            "add",
            net.rows(d),
            out,
            w_dims=("B", "D", "K"),
            w_source=x,
        )
        x = net.norm(f"{name}/attention/output/LayerNorm", out)
        up = net.linear(f"{name}/intermediate/dense", x, d, cfg.intermediate, bias=True)
        act = net.add(
            ops.gelu(
                net.next,
                f"{name}/intermediate/intermediate_act_fn",
                net.rows(cfg.intermediate),
                up,
                form="erf",
                precision=step.precision,
            )
        )
        down = net.linear(f"{name}/output/dense", act, cfg.intermediate, d, bias=True)
        out = net.elementwise(
            f"{name}/output/Add", "add", net.rows(d), down, w_dims=("B", "D", "K"), w_source=x
        )
        x = net.norm(f"{name}/output/LayerNorm", out)
    if cfg.head == "pooler":
        first = net.add(
            ops.gather(
                net.next,
                "pooler/Gather",
                {"D": step.batch, "K": d},
                table_role="activation",
                sources={"I": x},
                precision=step.precision,
            )
        )
        dense = net.add(
            ops.matmul(
                net.next,
                "pooler/dense/Gemm",
                rows=step.batch,
                reduction=d,
                cols=d,
                sources={"I": first},
                precision=step.precision,
                operator_type="Gemm",
            )
        )
        net.elementwise("pooler/activation/Tanh", "tanh", {"D": step.batch, "K": d}, dense)
    elif (
        cfg.head == "lm"
    ):  # BertForMaskedLM: a transform (dense, GELU, LayerNorm), then the decoder and its bias
        out = net.linear("cls/predictions/transform/dense", x, d, d, bias=True)
        out = net.add(
            ops.gelu(
                net.next,
                "cls/predictions/transform/transform_act_fn",
                net.rows(d),
                out,
                form="erf",
                precision=step.precision,
            )
        )
        out = net.norm("cls/predictions/transform/LayerNorm", out)
        net.linear("cls/predictions/decoder", out, d, cfg.vocab, bias=True)


def llama(net: Net) -> None:
    cfg, d, step = net.cfg, net.cfg.hidden, net.step
    x = net.embedding("embed_tokens", d)
    table = {"B": 1 if step.batch > 1 else step.batch, "D": step.tokens, "K": cfg.head_dim}
    cos = net.elementwise("rotary_emb/Cos", "cos", table, None, i_role="weight")
    sin = net.elementwise("rotary_emb/Sin", "sin", table, None, i_role="weight")
    kv_width = cfg.kv_heads * cfg.head_dim
    for index in range(cfg.layers):
        name = f"layers.{index}"
        h = net.norm(f"{name}/input_layernorm", x)
        q = net.linear(
            f"{name}/self_attn/q_proj", h, d, cfg.heads * cfg.head_dim, bias=cfg.qkv_bias
        )
        k = net.linear(f"{name}/self_attn/k_proj", h, d, kv_width, bias=cfg.qkv_bias)
        v = net.linear(f"{name}/self_attn/v_proj", h, d, kv_width, bias=cfg.qkv_bias)
        attn = attention(net, f"{name}/self_attn", q, k, v, rotary=(cos, sin))
        out = net.linear(
            f"{name}/self_attn/o_proj", attn, cfg.heads * cfg.head_dim, d, bias=cfg.out_bias
        )
        x = net.elementwise(
            f"{name}/Add", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=out
        )
        h = net.norm(f"{name}/post_attention_layernorm", x)
        mlp = experts(net, f"{name}/mlp", h) if cfg.experts else swiglu(net, f"{name}/mlp", h)
        x = net.elementwise(
            f"{name}/Add_1", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=mlp
        )
    lm_head(net, net.norm("norm", x))
