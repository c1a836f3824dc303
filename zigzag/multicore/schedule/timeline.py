"""A memory's usage over time: a step function with changes "from time t on" (Stream's usage timeline).

The function is a sorted sequence of points ``(time, bits)`` starting with ``(0, 0)``; the usage at
time ``x`` is the bits of the last point at or before ``x``. Times written into it are truncated
to integers, as in Stream (so two points may share a time).

The points are held in blocks of consecutive points; a block stores its bits minus an offset
shared by its points, and the largest stored value (found again when asked after a change).
Adding to every point from some time on then rewrites the rest of one block and the offsets of
the later blocks, instead of every later point: a schedule changes long timelines thousands of
times, mostly near their end but sometimes far back.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from operator import add

_SPLIT = 64  # a block is split in two when it grows past this many points


class Timeline:
    """A step function of memory usage over time, with in-place updates from a time on."""

    __slots__ = ("times", "bits", "offset", "top", "stale", "first", "bound", "exact")

    def __init__(self):
        self.times = [[0]]  # per block, its point times
        self.bits = [[0]]  # per block, its points' usage minus the block's offset
        self.offset = [0]  # per block
        self.top: list[int | None] = [0]  # per block, max of its stored bits (None: to be found)
        self.stale = False  # some block's top is None
        self.first = [0]  # per block, its first time
        self.bound = (
            0  # an upper bound of every usage (the exact maximum is found when it is not enough)
        )
        self.exact = True  # the bound is the exact maximum (found, and nothing changed since)

    def _left(self, t: float) -> tuple[int, int]:
        """(block, position) of the first point with time >= ``t``; position = block length if none."""
        k = bisect_left(self.first, t) - 1
        if k < 0:
            return 0, 0
        p = bisect_left(self.times[k], t)
        if p == len(self.times[k]) and k + 1 < len(self.first):
            return k + 1, 0
        return k, p

    def _right(self, t: float) -> tuple[int, int]:
        """(block, position) of the last point with time <= ``t`` (the last point if none)."""
        k = bisect_right(self.first, t) - 1
        if k < 0:
            return len(self.first) - 1, len(self.times[-1]) - 1
        return k, bisect_right(self.times[k], t) - 1

    def _tops(self) -> list[int]:
        """The blocks' maxima, found where unknown."""
        top = self.top
        if self.stale:
            for k, v in enumerate(top):
                if v is None:
                    top[k] = max(self.bits[k])
            self.stale = False
        return top

    def _max_after(self, k: int) -> float:
        """Largest usage in the blocks after ``k`` (-inf if none)."""
        if k + 1 == len(self.top):
            return -math.inf
        return max(map(add, self._tops()[k + 1 :], self.offset[k + 1 :]))

    def shift_from(self, t: float, delta: int, capacity: int | None = None) -> bool:
        """Add ``delta`` to every point at or after ``t``; insert a point at ``t`` if missing.

        With a ``capacity``, returns True if an updated point that existed before exceeds it (the
        inserted point is not checked, as in Stream); else False.
        """
        self.exact = False
        k = len(self.times) - 1
        times, bits = self.times[k], self.bits[k]
        last = times[-1]
        if t > last:  # after every point: a new last point, the usual case
            raw = bits[-1] + delta
            times.append(int(t))
            bits.append(raw)
            top = self.top[k]
            if top is not None and raw > top:
                self.top[k] = raw
            if raw + self.offset[k] > self.bound:
                self.bound = raw + self.offset[k]
            if len(times) > _SPLIT:
                self._split(k)
            return False
        if t == last and len(times) > 1 and times[-2] < last:  # the last point only
            bits[-1] += delta
            if delta <= 0:
                self.top[k] = None
                self.stale = True
                return False
            if self.top[k] is not None and bits[-1] > self.top[k]:
                self.top[k] = bits[-1]
            if capacity is not None and self.bound + delta <= capacity:
                self.bound += delta
                return False
            value = bits[-1] + self.offset[k]
            self.bound = max(self.bound, value)
            return capacity is not None and value > capacity
        k, p = self._left(t)
        times, bits, offset = self.times[k], self.bits[k], self.offset
        # the points p.. of block k and every later block
        bits[p:] = [b + delta for b in bits[p:]]
        self.top[k] = None
        self.stale = True
        if k + 1 < len(offset):
            offset[k + 1 :] = [o + delta for o in offset[k + 1 :]]
        if p:
            previous = bits[p - 1] + offset[k]
        elif k:
            previous = self.bits[k - 1][-1] + offset[k - 1]
        else:  # before the first point: Stream takes the last one
            previous = self.bits[-1][-1] + offset[-1]
        over = False
        if delta > 0:
            if capacity is not None and self.bound + delta <= capacity:
                self.bound += delta  # still an upper bound, and nothing can overflow
            else:
                top = max(max(bits[p:]) + offset[k], self._max_after(k))
                over = capacity is not None and top > capacity
                self.bound = max(self.bound, top, previous + delta if (p or k) else 0)
        if times[p] == t:
            return over
        times.insert(p, int(t))
        bits.insert(p, previous + delta - offset[k])
        self.top[k] = None
        self.stale = True
        if not p:
            self.first[k] = times[0]
        if len(times) > _SPLIT:
            self._split(k)
        return over

    def _split(self, k: int) -> None:
        half = len(self.times[k]) // 2
        times, bits = self.times[k], self.bits[k]
        self.times[k + 1 : k + 1] = [times[half:]]
        self.bits[k + 1 : k + 1] = [bits[half:]]
        self.offset.insert(k + 1, self.offset[k])
        self.first.insert(k + 1, times[half])
        del times[half:], bits[half:]
        self.top[k : k + 1] = [None, None]
        self.stale = True

    def always_fits(self, size: int, capacity: int) -> bool:
        """True if ``size`` more bits fit at every time."""
        if self.bound + size <= capacity:
            return True
        if not self.exact:  # else the maximum found last time still holds
            self.bound = max(map(add, self._tops(), self.offset))
            self.exact = True
        return self.bound + size <= capacity

    def usage(self, t: float) -> int:
        """Usage at time ``t``."""
        k = bisect_right(self.first, t) - 1
        if k < 0:
            return self.bits[0][0] + self.offset[0]
        return self.bits[k][max(0, bisect_right(self.times[k], t) - 1)] + self.offset[k]

    def earliest_fit(self, size: int, capacity: int, t: float) -> float:
        """Earliest time from ``t`` after which ``size`` more bits always fit (Stream's rule).

        If the memory never has room, the time of its last point is returned.
        """
        if self.always_fits(size, capacity):
            return t
        top_of, offset, last = self._tops(), self.offset, len(self.top) - 1
        while True:
            k, p = self._right(t)
            here = max(self.bits[k][p:]) + offset[k]
            top = max(here, self._max_after(k))
            if top + size <= capacity:
                return t
            # the last point holding the maximum: its block, then its position
            c = last
            while c > k and top_of[c] + offset[c] != top:
                c -= 1
            bits = self.bits[c]
            j = len(bits) - 1 - bits[::-1].index(top - offset[c])
            if j + 1 < len(bits):
                t = self.times[c][j + 1]
            elif c < last:
                t = self.times[c + 1][0]
            else:
                return self.times[c][j]

    def points(self) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for times, bits, off in zip(self.times, self.bits, self.offset):
            out.extend(zip(times, [b + off for b in bits]))
        return out

    def peak(self) -> int:
        return max(map(add, self._tops(), self.offset))
