"""The operator model's vocabulary: the operation classes of vector layers, what an operand holds,
the bits per role, the loop dims of a vector layer by its output's rank, ONNX broadcasting over
them, and how a causal attention's rows split into blocks (docs/models/operators.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

#: Operation classes of vector layers (the vector unit declares a cost per class).
VECTOR_OPS = (
    "add",
    "sub",
    "mul",
    "max",
    "neg",
    "where",
    "div",
    "exp",
    "tanh",
    "erf",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "sin",
    "cos",
    "pow",
    "reduce_sum",
    "reduce_max",
    "reduce_mean",
    "gather",
    "copy",
)
#: What an operand holds, for per-token figures (weight bytes, KV-cache bytes): ``state`` is a state-space
#: model's recurrent state, held and read like a KV cache but updated in place (its size does not grow).
ROLES = ("weight", "activation", "kv_cache", "state")
#: Loop dims of a vector layer by the rank of its output.
VECTOR_DIMS = {
    1: ("K",),
    2: ("D", "K"),
    3: ("B", "D", "K"),
    4: ("B", "H", "D", "K"),
    5: ("B", "H", "G", "D", "K"),
}

Dims = Mapping[str, int]


@dataclass(frozen=True)
class Precision:
    """Bits per operand role; partial sums of matrix products and reductions are twice the activations."""

    weights: int = 8
    activations: int = 8
    kv_cache: int = 8

    def bits(self, role: str) -> int:
        """A recurrent state is stored at the KV cache's bits."""
        return {
            "weight": self.weights,
            "activation": self.activations,
            "kv_cache": self.kv_cache,
            "state": self.kv_cache,
        }[role]


DEFAULT_PRECISION = Precision()


def vector_dims(shape: list[int] | tuple[int, ...]) -> dict[str, int]:
    """The loop dims of a vector layer whose output has ``shape`` (unknown sizes read as 1)."""
    if len(shape) not in VECTOR_DIMS:
        raise ValueError(
            f"tensor rank {len(shape)} ({list(shape)}): vector layers take ranks 1 to 5"
        )
    return {dim: size or 1 for dim, size in zip(VECTOR_DIMS[len(shape)], shape)}


def broadcast_dims(shape: list[int] | tuple[int, ...], dims: Dims) -> tuple[str, ...]:
    """The dims of ``dims`` (an output's, in order) that an input of ``shape`` spans under ONNX
    (right-aligned) broadcasting: those where its size equals the output's."""
    names, sizes = list(dims), list(dims.values())
    offset = len(names) - len(shape)
    return tuple(
        names[offset + i]
        for i, size in enumerate(shape)
        if offset + i >= 0 and (size or 1) == sizes[offset + i]
    )


def operator_type(op: str) -> str:
    """The operator type of a vector layer of class ``op`` (``reduce_max`` -> ``ReduceMax``): ``Add``, ``Sub``
    and ``Mul`` are the element-wise types ZigZag knows."""
    return "".join(part.capitalize() for part in op.split("_"))


def causal_split(
    tokens: int, blocks: int, past: int = 0, window: int | None = None
) -> list[tuple[int, int]]:
    """(query rows, keys attended) per block of a causal attention over ``tokens`` new tokens after ``past``
    cached ones: rows split into ``blocks`` near-equal blocks; block i attends every key up to its last row,
    and with a sliding ``window`` (a query attends itself and the ``window - 1`` keys before it) none before
    the window of its first row."""
    count = max(1, min(blocks, tokens))
    sizes = [tokens // count + (1 if i < tokens % count else 0) for i in range(count)]
    ends = [sum(sizes[: i + 1]) for i in range(count)]
    firsts = [
        max(0, past + end - size - window + 1) if window else 0 for size, end in zip(sizes, ends)
    ]
    return [(size, past + end - first) for size, end, first in zip(sizes, ends, firsts)]
