"""Keeping the best evaluation: ZigZag's MinimalEnergy / MinimalLatency / MinimalEDP rules.

A candidate replaces the current best only when strictly better, so among fully tied
candidates the first one evaluated is kept.
"""

from __future__ import annotations

from typing import Protocol, TypeVar


class _Evaluation(Protocol):
    energy_total: float
    latency_total2: float


E = TypeVar("E", bound=_Evaluation)


def is_better(candidate: _Evaluation, best: _Evaluation, opt: str) -> bool:
    """Does ``candidate`` replace ``best`` under criterion ``opt`` (energy, latency or EDP)?"""
    if opt == "energy":
        return (candidate.energy_total, candidate.latency_total2) < (
            best.energy_total,
            best.latency_total2,
        )
    if opt == "latency":
        return (candidate.latency_total2, candidate.energy_total) < (
            best.latency_total2,
            best.energy_total,
        )
    if opt == "EDP":
        return (
            candidate.latency_total2 * candidate.energy_total
            < best.latency_total2 * best.energy_total
        )
    raise ValueError(f"unknown optimisation criterion '{opt}'")


def keep_best(best: E | None, candidate: E, opt: str) -> E:
    """The better of the current best (may be None) and a new candidate."""
    return candidate if best is None or is_better(candidate, best, opt) else best
