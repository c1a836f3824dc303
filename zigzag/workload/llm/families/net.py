"""The builder of one step's layers: the step, and the blocks every family uses (projections, norms,
embeddings, element-wise layers); the attention variants, MLPs and family recipes build on it."""

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
    routing: str | tuple[float, ...] = "uniform"  # uniform | balanced | a load share per expert
    mla: str = ""  # absorbed | naive ("": absorbed for a decode step, naive for a prefill)


class Net:
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

    def norm(self, name: str, source: int, dims: dict | None = None, gain: bool = True) -> int:
        """The model's norm over the last of ``dims`` (default: the hidden width of every token);
        ``gain=False``: without its gain (an L2 norm)."""
        build = ops.layernorm if self.cfg.norm == "layernorm" else ops.rmsnorm
        made = build(
            self.next,
            name,
            dims or self.rows(self.cfg.hidden),
            source,
            precision=self.step.precision,
        )
        return self.add(made if gain else made[:-1])

    def embedding(self, name: str, width: int, batch: int | None = None) -> int:
        dims = self.rows(width) | ({"B": batch} if batch is not None else {})
        return self.add(
            ops.gather(self.next, f"{name}/Gather", dims, precision=self.step.precision)
        )

    def position_dims(self) -> tuple[str, ...]:
        """The dims a [1, tokens, width] position table spans in a [B, tokens, width] sum."""
        return ("B", "D", "K") if self.step.batch == 1 else ("D", "K")
