"""The columns a table row of an LLM step carries besides its totals (sweeps, workflow
experiments, multi-core runs): its assumptions (precision, latency model), its physical bound (the
binding term, step / bound, how far below it) and what fits each memory (docs/reference/results.md)."""

from __future__ import annotations

_SHORT = {"weight": "w", "activation": "a", "kv_cache": "kv", "state": "s"}
_PARTS = (
    ("weights", "weights"),
    ("kv_cache", "KV cache"),
    ("state", "state"),
    ("activations", "activations"),
)


def precision_label(precision: dict | None) -> str | None:
    """``w8 a8 kv8``: the bits of each operand role, short."""
    if not precision:
        return None
    return " ".join(
        f"{_SHORT.get(role, role)}{'/'.join(map(str, bits))}" for role, bits in precision.items()
    )


def bound_columns(figures) -> dict:
    """The bound, precision and fit columns of one step's :class:`~zigzag.tokens.TokenFigures`."""
    columns: dict = {
        "precision": precision_label(figures.precision),
        "mac_energy_rule": figures.mac_energy,
    }
    b = figures.bound
    columns.update(
        {
            "latency_model": None if b is None else b.latency_model,
            "bound_cycles": None if b is None else b.cycles,
            "bound_term": None if b is None else b.binding,
            "bound_kind": None if b is None else b.kind,
            "bound_ratio": None if b is None else b.ratio,
            "below_bound": None if b is None else b.below,
            "bound_note": None if b is None else b.note() or None,
            "memory_bound_cycles": None if b is None else b.memory_cycles,
            "compute_bound_cycles": None if b is None else b.compute_cycles,
        }
    )
    for held in figures.holdings:
        columns[f"{held.memory}_holds_bytes"] = held.needed_bytes
    for fit in figures.fits:
        fitting = [name for key, name in _PARTS if getattr(fit, key) is True]
        columns[f"{fit.memory}_fits"] = ", ".join(fitting) or "none"
    return columns
