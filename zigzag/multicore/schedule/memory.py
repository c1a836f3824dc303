"""Top-memory state: stored tensors and usage timelines (Stream's memory manager)."""

from __future__ import annotations

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.schedule.timeline import Timeline

__all__ = ["MemoryState", "Timeline"]


class MemoryState:
    """Contents and usage of every top memory during one schedule.

    Per tensor and memory facts are flat lists indexed ``tensor * nb_memories + memory``;
    ``holds`` has one more entry, always set (a sentinel for batched look-ups).
    """

    def __init__(self, capacities: list[int], labels: list[str], tensor_size: np.ndarray):
        nm, nt = len(capacities), len(tensor_size)
        self.nm = nm
        self.capacity = list(capacities)
        self.labels = list(labels)
        self.size = tensor_size.tolist()
        self.timeline = [Timeline() for _ in range(nm)]
        # per memory, its tensors in insertion order (a dict: removal without a scan)
        self.stored: list[dict[int, None]] = [{} for _ in range(nm)]
        self.holds = bytearray(nt * nm + 1)
        self.holds[-1] = 1
        self.where: list[list[int]] = [[] for _ in range(nt)]  # memories holding each tensor
        self.stored_since = [0.0] * (nt * nm)
        self.available_since = [0.0] * (nt * nm)
        self.log: list[list[tuple[float, int, int]]] = [[] for _ in range(nm)]  # (t, tensor, ±bits)

    def add(self, mem: int, tensor: int, t_reserve: float, t_available: float) -> None:
        """Store ``tensor`` in ``mem``: space reserved from ``t_reserve``, readable from ``t_available``."""
        i = tensor * self.nm + mem
        if self.holds[i]:
            return
        self.stored[mem][tensor] = None
        self.holds[i] = 1
        self.where[tensor].append(mem)
        self.stored_since[i] = float(t_reserve)
        self.available_since[i] = float(t_available)
        size = self.size[tensor]
        self.log[mem].append((float(t_reserve), tensor, size))
        if self.timeline[mem].shift_from(t_reserve, size, self.capacity[mem]):
            raise InputError(
                None,
                self.labels[mem],
                f"storing tensor {tensor} ({size} bits) at t={t_reserve} overflows the memory; "
                "make the memory larger",
            )

    def remove(self, mem: int, tensor: int, t: float) -> None:
        """Drop ``tensor`` from ``mem`` from time ``t`` on (no-op if it is not stored)."""
        i = tensor * self.nm + mem
        if not self.holds[i]:
            return
        del self.stored[mem][tensor]
        self.holds[i] = 0
        self.where[tensor].remove(mem)
        self.log[mem].append((float(t), tensor, -self.size[tensor]))
        self.timeline[mem].shift_from(t, -self.size[tensor])

    def stored_at(self, mem: int, t: float) -> list[int]:
        """Tensors of ``mem`` (insertion order) whose space is reserved at or before ``t``."""
        since, nm = self.stored_since, self.nm
        return [x for x in self.stored[mem] if since[x * nm + mem] <= t]

    def usage(self, mem: int, t: float) -> int:
        return self.timeline[mem].usage(t)
