"""What an LLM workload computes, for per-token figures: phase, batch, tokens and context."""

from __future__ import annotations

from dataclasses import asdict, dataclass

PHASES = ("prefill", "decode")


@dataclass(frozen=True)
class Inference:
    """One inference step of a language model.

    ``tokens``: new tokens per sequence (the prompt length S in prefill, 1 in decode);
    ``context``: tokens already in the KV cache before the step (0 in prefill, C in decode);
    ``layers``: the model's transformer blocks in this workload.
    """

    model: str
    phase: str
    batch: int
    tokens: int
    context: int
    layers: int

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Inference":
        return cls(
            **{key: data[key] for key in ("model", "phase", "batch", "tokens", "context", "layers")}
        )
