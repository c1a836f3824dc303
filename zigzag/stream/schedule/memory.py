"""Top-memory state: stored tensors and usage timelines (Stream's memory manager).

A usage timeline is a step function held as two growing arrays (times, bits) starting with the
point ``(0, 0)``; the usage at time ``x`` is the bits of the last point at or before ``x``.
Times written into it are truncated to integers, as in Stream.
"""

from __future__ import annotations

import numpy as np

from zigzag.errors import InputError


class Timeline:
    """A step function of memory usage over time, with in-place suffix updates."""

    __slots__ = ("times", "bits", "n")

    def __init__(self, capacity: int = 32):
        self.times = np.zeros(capacity, dtype=np.int64)
        self.bits = np.zeros(capacity, dtype=np.int64)
        self.n = 1

    def _insert(self, i: int, t: int, b: int) -> None:
        n = self.n
        if n == len(self.times):
            self.times = np.concatenate([self.times, np.zeros(n, dtype=np.int64)])
            self.bits = np.concatenate([self.bits, np.zeros(n, dtype=np.int64)])
        self.times[i + 1 : n + 1] = self.times[i:n]
        self.bits[i + 1 : n + 1] = self.bits[i:n]
        self.times[i] = t
        self.bits[i] = b
        self.n = n + 1

    def shift_from(self, t: float, delta: int) -> np.ndarray:
        """Add ``delta`` to every point at or after ``t``; insert a point at ``t`` if missing.

        Returns the updated suffix (before the inserted point), for the overflow check.
        """
        n = self.n
        times = self.times
        i = int(times[:n].searchsorted(t))
        present = i < n and times[i] == t
        self.bits[i:n] += delta
        suffix = self.bits[i:n]
        if not present:
            self._insert(i, int(t), int(self.bits[i - 1]) + delta)
        return suffix

    def usage(self, t: float) -> int:
        """Usage at time ``t``."""
        idx = max(0, int(self.times[: self.n].searchsorted(t, "right")) - 1)
        return int(self.bits[idx])

    def earliest_fit(self, size: int, capacity: int, t: float) -> float:
        """Earliest time from ``t`` after which ``size`` more bits always fit (Stream's rule).

        If the memory never has room, the time of its last point is returned.
        """
        n = self.n
        times = self.times[:n]
        bits = self.bits[:n]
        while True:
            s = int(times.searchsorted(t, "right")) - 1
            seg = bits[s:]
            top = int(seg.max())
            if top + size <= capacity:
                return t
            j = len(seg) - 1 - int(np.argmax(seg[::-1]))
            if j == len(seg) - 1:
                return int(times[s + j])
            t = int(times[s + j + 1])

    def points(self) -> list[tuple[int, int]]:
        return list(zip(self.times[: self.n].tolist(), self.bits[: self.n].tolist()))

    def peak(self) -> int:
        return int(self.bits[: self.n].max())


class MemoryState:
    """Contents and usage of every top memory during one schedule."""

    def __init__(self, capacities: list[int], labels: list[str], tensor_size: np.ndarray):
        nm, nt = len(capacities), len(tensor_size)
        self.capacity = list(capacities)
        self.labels = list(labels)
        self.size = tensor_size.tolist()
        self.timeline = [Timeline() for _ in range(nm)]
        self.stored: list[list[int]] = [[] for _ in range(nm)]
        self.holds = np.zeros((nm, nt), dtype=bool)
        self.stored_since = np.zeros((nm, nt))
        self.available_since = np.zeros((nm, nt))

    def add(self, mem: int, tensor: int, t_reserve: float, t_available: float) -> None:
        """Store ``tensor`` in ``mem``: space reserved from ``t_reserve``, readable from ``t_available``."""
        if self.holds[mem, tensor]:
            return
        self.stored[mem].append(tensor)
        self.holds[mem, tensor] = True
        self.stored_since[mem, tensor] = t_reserve
        self.available_since[mem, tensor] = t_available
        size = self.size[tensor]
        suffix = self.timeline[mem].shift_from(t_reserve, size)
        if len(suffix) and int(suffix.max()) > self.capacity[mem]:
            raise InputError(None, self.labels[mem],
                             f"storing tensor {tensor} ({size} bits) at t={t_reserve} overflows the memory; "
                             "make the memory larger")

    def remove(self, mem: int, tensor: int, t: float) -> None:
        """Drop ``tensor`` from ``mem`` from time ``t`` on (no-op if it is not stored)."""
        if not self.holds[mem, tensor]:
            return
        self.stored[mem].remove(tensor)
        self.holds[mem, tensor] = False
        self.timeline[mem].shift_from(t, -self.size[tensor])

    def stored_at(self, mem: int, t: float) -> list[int]:
        """Tensors of ``mem`` (insertion order) whose space is reserved at or before ``t``."""
        since = self.stored_since[mem]
        return [x for x in self.stored[mem] if since[x] <= t]

    def earliest_fit(self, mem: int, tensor: int, t: float) -> float:
        return self.timeline[mem].earliest_fit(self.size[tensor], self.capacity[mem], t)

    def usage(self, mem: int, t: float) -> int:
        return self.timeline[mem].usage(t)

