"""Top-memory state: stored tensors and usage timelines (Stream's memory manager).

A usage timeline is a step function held as two growing arrays (times, bits) starting with the
point ``(0, 0)``; the usage at time ``x`` is the bits of the last point at or before ``x``.
Times written into it are truncated to integers, as in Stream.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from zigzag.errors import InputError


class Timeline:
    """A step function of memory usage over time, with in-place suffix updates.

    Times and usages are Python lists: most updates touch the last few points, where list
    operations beat numpy calls.
    """

    __slots__ = ("times", "bits", "bound")

    def __init__(self):
        self.times = [0]
        self.bits = [0]
        self.bound = 0  # an upper bound of every usage (exact after additions, stale after removals)

    def shift_from(self, t: float, delta: int, capacity: int | None = None) -> bool:
        """Add ``delta`` to every point at or after ``t``; insert a point at ``t`` if missing.

        With a ``capacity``, returns True if an updated point that existed before exceeds it (the
        inserted point is not checked, as in Stream); else False.
        """
        times, bits = self.times, self.bits
        n = len(times)
        i = bisect_left(times, t)
        over = False
        if i < n:
            bits[i:] = [b + delta for b in bits[i:]]
            if delta > 0:
                if capacity is not None and self.bound + delta <= capacity:
                    self.bound += delta  # still an upper bound, and nothing can overflow
                else:
                    over = capacity is not None and max(bits[i:]) > capacity
                    self.bound = max(max(bits), bits[i - 1] + delta if i else 0)
            if times[i] == t:
                return over
        elif delta > 0:
            self.bound = max(self.bound, bits[i - 1] + delta)
        bits.insert(i, bits[i - 1] + delta)
        times.insert(i, int(t))
        return over

    def always_fits(self, size: int, capacity: int) -> bool:
        """True if ``size`` more bits fit at every time (a quick sufficient test)."""
        if self.bound + size <= capacity:
            return True
        self.bound = max(self.bits)
        return self.bound + size <= capacity

    def usage(self, t: float) -> int:
        """Usage at time ``t``."""
        return self.bits[max(0, bisect_right(self.times, t) - 1)]

    def earliest_fit(self, size: int, capacity: int, t: float) -> float:
        """Earliest time from ``t`` after which ``size`` more bits always fit (Stream's rule).

        If the memory never has room, the time of its last point is returned.
        """
        if self.always_fits(size, capacity):
            return t
        times, bits = self.times, self.bits
        while True:
            s = bisect_right(times, t) - 1
            seg = bits[s:]
            top = max(seg)
            if top + size <= capacity:
                return t
            j = len(seg) - 1 - seg[::-1].index(top)
            if j == len(seg) - 1:
                return times[s + j]
            t = times[s + j + 1]

    def points(self) -> list[tuple[int, int]]:
        return list(zip(self.times, self.bits))

    def peak(self) -> int:
        return max(self.bits)


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
        self.where: list[list[int]] = [[] for _ in range(nt)]  # memories holding each tensor
        self.stored_since = np.zeros((nm, nt))
        self.available_since = np.zeros((nm, nt))

    def add(self, mem: int, tensor: int, t_reserve: float, t_available: float) -> None:
        """Store ``tensor`` in ``mem``: space reserved from ``t_reserve``, readable from ``t_available``."""
        if self.holds[mem, tensor]:
            return
        self.stored[mem].append(tensor)
        self.holds[mem, tensor] = True
        self.where[tensor].append(mem)
        self.stored_since[mem, tensor] = t_reserve
        self.available_since[mem, tensor] = t_available
        size = self.size[tensor]
        if self.timeline[mem].shift_from(t_reserve, size, self.capacity[mem]):
            raise InputError(None, self.labels[mem],
                             f"storing tensor {tensor} ({size} bits) at t={t_reserve} overflows the memory; "
                             "make the memory larger")

    def remove(self, mem: int, tensor: int, t: float) -> None:
        """Drop ``tensor`` from ``mem`` from time ``t`` on (no-op if it is not stored)."""
        if not self.holds[mem, tensor]:
            return
        self.stored[mem].remove(tensor)
        self.holds[mem, tensor] = False
        self.where[tensor].remove(mem)
        self.timeline[mem].shift_from(t, -self.size[tensor])

    def stored_at(self, mem: int, t: float) -> list[int]:
        """Tensors of ``mem`` (insertion order) whose space is reserved at or before ``t``."""
        since = self.stored_since[mem]
        return [x for x in self.stored[mem] if since[x] <= t]

    def earliest_fit(self, mem: int, tensor: int, t: float) -> float:
        return self.timeline[mem].earliest_fit(self.size[tensor], self.capacity[mem], t)

    def usage(self, mem: int, t: float) -> int:
        return self.timeline[mem].usage(t)

    def always_fits(self, mem: int, tensor: int) -> bool:
        """True if ``tensor`` fits in ``mem`` at every time (no eviction can be needed)."""
        return self.timeline[mem].always_fits(self.size[tensor], self.capacity[mem])

