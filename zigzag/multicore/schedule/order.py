"""Scheduling order from layer stacks (Stream's ``SchedulingOrderGenerationStage``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def scheduling_order(
    layer: np.ndarray, sub: np.ndarray, layer_stacks: Sequence[Sequence[int]] | None
) -> np.ndarray:
    """CN indices by scheduling priority.

    Stack by stack, the CNs of the stack's layers sorted by ``(layer id, sub id)`` descending
    (deepest layer first, highest sub id first). Without stacks, all CNs sorted that way. A CN
    listed by two stacks keeps its first position; CNs of layers in no stack are left out (the
    scheduler reports them if they ever become ready).
    """
    layer = np.asarray(layer)
    sub = np.asarray(sub)
    if not layer_stacks:
        return np.lexsort((-sub, -layer)).astype(np.int64)
    seen = np.zeros(len(layer), dtype=bool)
    parts = []
    for stack in layer_stacks:
        members = np.flatnonzero(np.isin(layer, np.asarray(list(stack), dtype=np.int64)) & ~seen)
        members = members[np.lexsort((-sub[members], -layer[members]))]
        seen[members] = True
        parts.append(members)
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
