"""The scheduler's memory usage timeline (held in blocks) against a plain list of points."""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right

import pytest

from zigzag.multicore.schedule.timeline import Timeline


class FlatTimeline:
    """The same step function as two flat lists, every operation written the obvious way."""

    def __init__(self):
        self.times, self.bits = [0], [0]

    def shift_from(self, t, delta, capacity=None):
        i = bisect_left(self.times, t)
        over = (
            capacity is not None and delta > 0 and any(b + delta > capacity for b in self.bits[i:])
        )
        self.bits[i:] = [b + delta for b in self.bits[i:]]
        if i < len(self.times) and self.times[i] == t:
            return over
        self.bits.insert(i, self.bits[i - 1] + delta)
        self.times.insert(i, int(t))
        return over

    def always_fits(self, size, capacity):
        return max(self.bits) + size <= capacity

    def usage(self, t):
        return self.bits[max(0, bisect_right(self.times, t) - 1)]

    def earliest_fit(self, size, capacity, t):
        while True:
            s = bisect_right(self.times, t) - 1
            seg = self.bits[s:]
            top = max(seg)
            if top + size <= capacity:
                return t
            j = len(seg) - 1 - seg[::-1].index(top)
            if j == len(seg) - 1:
                return self.times[s + j]
            t = self.times[s + j + 1]

    def points(self):
        return list(zip(self.times, self.bits))


@pytest.mark.parametrize("seed", range(4))
def test_block_timeline_equals_a_flat_one(seed):
    """Thousands of additions and removals at random times (at the end, at the last point, far
    back, at fractional times that truncate onto an existing one): every answer and the final
    points agree."""
    rng = random.Random(seed)
    ours, flat = Timeline(), FlatTimeline()
    stored: list[tuple[float, int]] = []
    capacity = 5_000
    for step in range(2_000):
        horizon = 10 * step + 10
        if stored and rng.random() < 0.45:
            t0, size = stored.pop(rng.randrange(len(stored)))
            t = rng.choice(
                [horizon, t0 + rng.randrange(0, horizon - int(t0) + 1), t0 + 0.5, flat.times[-1]]
            )
            assert ours.shift_from(t, -size) == flat.shift_from(t, -size)
        else:
            size = rng.randrange(1, 400)
            t = rng.choice(
                [
                    horizon,
                    rng.randrange(0, horizon),
                    rng.randrange(0, horizon) + 0.5,
                    flat.times[-1],
                ]
            )
            assert ours.shift_from(t, size, capacity) == flat.shift_from(t, size, capacity)
            stored.append((t, size))
        size, t = rng.randrange(0, 2_000), rng.uniform(-1, horizon)
        assert ours.usage(t) == flat.usage(t)
        assert ours.always_fits(size, capacity) == flat.always_fits(size, capacity)
        assert ours.earliest_fit(size, capacity, t) == flat.earliest_fit(size, capacity, t)
    assert ours.points() == flat.points()
    assert ours.peak() == max(flat.bits)
