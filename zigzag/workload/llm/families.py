"""The layers of one inference step of a transformer, per family, built from its configuration.

Every layer comes from the canonical constructors of ``zigzag.workload.operators``, in the order and with
the shapes the ONNX importer (``operators="all"``) gives for the torch export of the same model, so that a
generated workload and an export compare layer for layer. Families: ``gpt2`` (LayerNorm, tanh-GELU, fused
QKV, learned positions), ``bert`` (encoder, erf-GELU, post-norm, pooler) and ``llama`` (RMSNorm, SwiGLU,
rotary positions, grouped-query attention; Mistral and Qwen2 too; Mixtral adds a mixture of experts).
"""

from __future__ import annotations

from dataclasses import dataclass

from zigzag.workload import operators as ops
from zigzag.workload.llm.config import ModelConfig


@dataclass(frozen=True)
class Step:
    """What one step computes: ``tokens`` new tokens per sequence after ``past`` cached ones, for ``batch``
    sequences; ``logits``: ``all`` positions (as a model's forward) or the ``last`` one."""

    batch: int
    tokens: int
    past: int
    precision: ops.Precision
    causal_blocks: int = 8
    logits: str = "all"


class _Net:
    """The layers built so far; ``add`` appends constructor output and returns the id of its last layer."""

    def __init__(self, cfg: ModelConfig, step: Step):
        self.cfg = cfg
        self.step = step
        self.layers: list[dict] = []

    @property
    def next(self) -> int:
        return len(self.layers)

    def add(self, made: dict | list[dict]) -> int:
        made = made if isinstance(made, list) else [made]
        self.layers.extend(made)
        return made[-1]["id"]

    # ----- building blocks ------------------------------------------------------------------------
    def rows(self, width: int) -> dict[str, int]:
        """Dims of a per-token tensor: batch, tokens, features."""
        return {"B": self.step.batch, "D": self.step.tokens, "K": width}

    def elementwise(
        self,
        name: str,
        op: str,
        dims: dict,
        source: int | None,
        w_dims=None,
        w_source=None,
        w_role: str = "activation",
        i_role: str = "activation",
    ) -> int:
        sources = {k: v for k, v in (("I", source), ("W", w_source)) if v is not None}
        roles = {"I": i_role} | ({"W": w_role} if w_dims is not None else {})
        return self.add(
            ops.elementwise(
                self.next,
                name,
                op,
                dims,
                w_dims=w_dims,
                roles=roles,
                sources=sources,
                precision=self.step.precision,
            )
        )

    def linear(
        self, name: str, source: int, reduction: int, cols: int, *, bias: bool, gemm: bool = False
    ) -> int:
        """A projection of every token: ``Gemm`` on the flattened tokens (GPT-2's Conv1D, bias included) or a
        ``MatMul`` on [B, tokens, width] with its bias as an ``add`` layer."""
        b, t = self.step.batch, self.step.tokens
        if gemm:
            return self.add(
                ops.matmul(
                    self.next,
                    f"{name}/Gemm",
                    rows=b * t,
                    reduction=reduction,
                    cols=cols,
                    sources={"I": source},
                    precision=self.step.precision,
                    operator_type="Gemm",
                )
            )
        out = self.add(
            ops.matmul(
                self.next,
                f"{name}/MatMul",
                rows=t,
                reduction=reduction,
                cols=cols,
                batch=b,
                sources={"I": source},
                precision=self.step.precision,
            )
        )
        if bias:
            out = self.elementwise(
                f"{name}/Add", "add", self.rows(cols), out, w_dims=("K",), w_role="weight"
            )
        return out

    def norm(self, name: str, source: int) -> int:
        build = ops.layernorm if self.cfg.norm == "layernorm" else ops.rmsnorm
        return self.add(
            build(
                self.next, name, self.rows(self.cfg.hidden), source, precision=self.step.precision
            )
        )

    def embedding(self, name: str, width: int, batch: int | None = None) -> int:
        dims = self.rows(width) | ({"B": batch} if batch is not None else {})
        return self.add(
            ops.gather(self.next, f"{name}/Gather", dims, precision=self.step.precision)
        )

    def position_dims(self) -> tuple[str, ...]:
        """The dims a [1, tokens, width] position table spans in a [B, tokens, width] sum."""
        return ("B", "D", "K") if self.step.batch == 1 else ("D", "K")

    # ----- attention ----------------------------------------------------------------------------------
    def attention(
        self, name: str, q: int, k: int, v: int, *, rotary: tuple[int, int] | None = None
    ) -> int:
        """Scaled dot-product attention of the step's tokens (sdpa as exported, its key scale folded into the
        query's; the additive mask, softmax, P.V), with the KV-cache appends of a decode step and causal blocks
        in a causal prefill. ``q``, ``k``, ``v``: the layers giving them; ``rotary``: (cos, sin) layers.
        Returns the last P.V layer."""
        cfg, step, p = self.cfg, self.step, self.step.precision
        heads, kv, hd, b, t = cfg.heads, cfg.kv_heads, cfg.head_dim, step.batch, step.tokens
        groups = heads // kv
        if (
            rotary is not None
        ):  # the cos / sin tables are [1, 1, tokens, head_dim], broadcast as ONNX does
            q_dims, k_dims = (
                {"B": b, "H": heads, "D": t, "K": hd},
                {"B": b, "H": kv, "D": t, "K": hd},
            )
            q = self.add(
                ops.rotary(
                    self.next,
                    f"{name}/rotary_q",
                    q_dims,
                    q,
                    cos_source=rotary[0],
                    sin_source=rotary[1],
                    table_dims=ops.broadcast_dims((1, 1, t, hd), q_dims),
                    precision=p,
                )
            )
            k = self.add(
                ops.rotary(
                    self.next,
                    f"{name}/rotary_k",
                    k_dims,
                    k,
                    cos_source=rotary[0],
                    sin_source=rotary[1],
                    table_dims=ops.broadcast_dims((1, 1, t, hd), k_dims),
                    precision=p,
                )
            )
        cached = step.past > 0
        if cached:
            k = self.add(
                ops.cache_append(
                    self.next,
                    f"{name}/cache_k",
                    {"B": b, "H": kv, "D": t, "K": hd},
                    sources={"I": k},
                    precision=p,
                )
            )
            v = self.add(
                ops.cache_append(
                    self.next,
                    f"{name}/cache_v",
                    {"B": b, "H": kv, "D": t, "K": hd},
                    sources={"I": v},
                    precision=p,
                )
            )
        keys = attended_keys(cfg, step)
        kv_role = "kv_cache" if cached else "activation"
        # sdpa scales q and k each by the fourth root of the head width; both scales are applied to the query
        # (as deployed kernels do): scaling k would read and rewrite the whole cache every step
        q = self.elementwise(f"{name}/scale_q", "mul", {"B": b, "H": heads, "D": t, "K": hd}, q)
        blocks = _blocks(cfg, step, keys)
        suffix = (lambda i: f"/causal{i}") if len(blocks) > 1 else (lambda i: "")
        gqa = {"heads": kv, "groups": groups} if groups > 1 else {"heads": heads}
        scores = [
            self.add(
                ops.matmul(
                    self.next,
                    f"{name}/MatMul{suffix(i)}",
                    rows=r,
                    reduction=hd,
                    cols=n,
                    batch=b,
                    w_role=kv_role,
                    sources={"I": q, "W": k},
                    precision=p,
                    **gqa,
                )
            )
            for i, (r, n) in enumerate(blocks)
        ][-1]
        masked = [
            self.elementwise(
                f"{name}/mask{suffix(i)}",
                "add",
                {"B": b, "H": heads, "D": r, "K": n},
                scores,
                w_dims=ops.broadcast_dims((b, 1, r, n), {"B": b, "H": heads, "D": r, "K": n}),
            )
            for i, (r, n) in enumerate(blocks)
        ][-1]  # the mask is [B, 1, rows, keys]
        probs = masked
        for i, (r, n) in enumerate(blocks):
            made = ops.softmax(
                self.next,
                f"{name}/Softmax",
                {"B": b, "H": heads, "D": r, "K": n},
                masked,
                precision=p,
            )
            for layer in made:
                layer["name"] += suffix(i)
            probs = self.add(made)
        return [
            self.add(
                ops.matmul(
                    self.next,
                    f"{name}/MatMul_1{suffix(i)}",
                    rows=r,
                    reduction=n,
                    cols=hd,
                    batch=b,
                    w_role=kv_role,
                    sources={"I": probs, "W": v},
                    precision=p,
                    **gqa,
                )
            )
            for i, (r, n) in enumerate(blocks)
        ][-1]


def attended_keys(cfg: ModelConfig, step: Step) -> int:
    """Keys each new token attends at most: the cached and new tokens, within a sliding window if any."""
    keys = step.past + step.tokens
    if cfg.sliding_window and step.past:
        keys = min(keys, cfg.sliding_window)
    return keys


def _blocks(cfg: ModelConfig, step: Step, keys: int) -> list[tuple[int, int]]:
    """(query rows, keys) per causal block (one block when not a causal prefill)."""
    if not (cfg.causal and step.tokens > 1 and step.causal_blocks > 0):
        return [(step.tokens, keys)]
    return ops.causal_split(step.tokens, step.causal_blocks, step.past, cfg.sliding_window or None)


# ----- families ---------------------------------------------------------------------------------------
def build_layers(cfg: ModelConfig, step: Step) -> list[dict]:
    """The layer dicts of one step of ``cfg`` (ids in processing order)."""
    net = _Net(cfg, step)
    {"gpt2": _gpt2, "bert": _bert, "llama": _llama}[cfg.family](net)
    return net.layers


def _lm_head(net: _Net, source: int) -> None:
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


def _gpt2(net: _Net) -> None:
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
        attn = net.attention(f"{name}/attn", qkv, qkv, qkv)
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
    _lm_head(net, net.norm("ln_f", x))


def _bert(net: _Net) -> None:
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
        attn = net.attention(f"{name}/attention/self", q, k, v)
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


def _llama(net: _Net) -> None:
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
        attn = net.attention(f"{name}/self_attn", q, k, v, rotary=(cos, sin))
        out = net.linear(
            f"{name}/self_attn/o_proj", attn, cfg.heads * cfg.head_dim, d, bias=cfg.out_bias
        )
        x = net.elementwise(
            f"{name}/Add", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=out
        )
        h = net.norm(f"{name}/post_attention_layernorm", x)
        mlp = _experts(net, f"{name}/mlp", h) if cfg.experts else _swiglu(net, f"{name}/mlp", h)
        x = net.elementwise(
            f"{name}/Add_1", "add", net.rows(d), x, w_dims=("B", "D", "K"), w_source=mlp
        )
    _lm_head(net, net.norm("norm", x))


def _swiglu(net: _Net, name: str, h: int) -> int:
    cfg, d = net.cfg, net.cfg.hidden
    gate = net.linear(f"{name}/gate_proj", h, d, cfg.intermediate, bias=cfg.mlp_bias)
    act = net.add(
        ops.silu(
            net.next,
            f"{name}/act_fn",
            net.rows(cfg.intermediate),
            gate,
            precision=net.step.precision,
        )
    )
    up = net.linear(f"{name}/up_proj", h, d, cfg.intermediate, bias=cfg.mlp_bias)
    both = net.elementwise(
        f"{name}/Mul", "mul", net.rows(cfg.intermediate), act, w_dims=("B", "D", "K"), w_source=up
    )
    return net.linear(f"{name}/down_proj", both, cfg.intermediate, d, bias=cfg.mlp_bias)


def expert_loads(cfg: ModelConfig, step: Step) -> list[int]:
    """Tokens per active expert in one step: the batch's tokens x top-k assignments spread as evenly as
    possible over the experts (balanced routing); experts with no token are left out."""
    assignments = step.batch * step.tokens * cfg.experts_per_token
    active = min(cfg.experts, assignments)
    return [assignments // active + (1 if e < assignments % active else 0) for e in range(active)]


def _experts(net: _Net, name: str, h: int) -> int:
    """Mixture of experts: the router (logits, softmax, top-k, its weights renormalised), then every active
    expert's SwiGLU MLP over the tokens routed to it (gathered, weighted by their routing weight), and
    the per-token sum of its top-k experts' outputs."""
    cfg, step, p = net.cfg, net.step, net.step.precision
    d, inter, k = cfg.hidden, cfg.intermediate, cfg.experts_per_token
    n = step.batch * step.tokens
    logits = net.add(
        ops.matmul(
            net.next,
            f"{name}/gate/MatMul",
            rows=n,
            reduction=d,
            cols=cfg.experts,
            sources={"I": h},
            precision=p,
        )
    )
    probs = net.add(
        ops.softmax(
            net.next, f"{name}/gate/Softmax", {"D": n, "K": cfg.experts}, logits, precision=p
        )
    )
    top = net.add(
        ops.top_k(
            net.next,
            f"{name}/gate/TopK",
            {"D": n, "K": cfg.experts},
            k,
            sources={"I": probs},
            precision=p,
        )
    )
    total = net.add(
        ops.reduction(
            net.next,
            f"{name}/gate/ReduceSum",
            "reduce_sum",
            {"D": n, "C": k},
            sources={"I": top},
            precision=p,
        )
    )
    weights = net.elementwise(
        f"{name}/gate/Div", "div", {"D": n, "K": k}, top, w_dims=("D",), w_source=total
    )
    outputs = []
    for e, rows in enumerate(expert_loads(cfg, step)):
        ex = f"{name}/experts.{e}"
        tokens = net.add(
            ops.gather(
                net.next,
                f"{ex}/Gather",
                {"D": rows, "K": d},
                table_role="activation",
                sources={"I": h},
                precision=p,
            )
        )
        gate = net.add(
            ops.matmul(
                net.next,
                f"{ex}/gate_proj/MatMul",
                rows=rows,
                reduction=d,
                cols=inter,
                sources={"I": tokens},
                precision=p,
            )
        )
        act = net.add(
            ops.silu(net.next, f"{ex}/act_fn", {"D": rows, "K": inter}, gate, precision=p)
        )
        up = net.add(
            ops.matmul(
                net.next,
                f"{ex}/up_proj/MatMul",
                rows=rows,
                reduction=d,
                cols=inter,
                sources={"I": tokens},
                precision=p,
            )
        )
        both = net.elementwise(
            f"{ex}/Mul", "mul", {"D": rows, "K": inter}, act, w_dims=("D", "K"), w_source=up
        )
        down = net.add(
            ops.matmul(
                net.next,
                f"{ex}/down_proj/MatMul",
                rows=rows,
                reduction=inter,
                cols=d,
                sources={"I": both},
                precision=p,
            )
        )
        outputs.append(
            net.elementwise(
                f"{ex}/Mul_1", "mul", {"D": rows, "K": d}, down, w_dims=("D",), w_source=weights
            )
        )
    return net.add(
        ops.reduction(
            net.next,
            f"{name}/experts/ReduceSum",
            "reduce_sum",
            {"B": step.batch, "D": step.tokens, "K": d, "C": k},
            sources={"I": outputs[-1]},
            precision=p,
        )
    )
