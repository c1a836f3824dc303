"""Link state: activity over time, idle windows, broadcasts (Stream's communication links).

Each link keeps its summed activity (bits/cycle) as a step function: breakpoint times (floats,
ending with ``inf``) and integer deltas. A transfer asks for the link's full bandwidth, so it
only fits where the activity is zero; a DRAM-link block asks for its own bandwidth need.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from zigzag.errors import InputError
from zigzag.stream.schedule.problem import Link


class LinkEvent(NamedTuple):
    """One activity on one link: a tensor transfer or a block for a streaming CN."""

    kind: str  # "transfer" or "block"
    start: float
    end: float
    activity: int
    tensors: tuple[int, ...]


class LinkState:
    """Activity timelines and recorded events of all links during one schedule."""

    def __init__(self, links: tuple[Link, ...]):
        self.bandwidth = [lk.bandwidth for lk in links]
        # breakpoints and the summed activity on [ts[i], ts[i+1]); the last segment starts at inf
        self.ts = [np.array([0.0, math.inf] + [0.0] * 30) for _ in links]
        self.level = [np.zeros(32, dtype=np.int64) for _ in links]
        self.n = [2] * len(links)
        self.events: list[list[LinkEvent]] = [[] for _ in links]
        self.by_tensor: list[dict[int, list[tuple[float, float]]]] = [{} for _ in links]

    def idle_windows(self, link: int, activity: float, duration: float, earliest: float,
                     tensors: list[int], first: bool = False) -> list[tuple[float, float]]:
        """Windows of ``link`` from ``earliest`` where ``activity`` more fits for ``duration``.

        Earlier events that carried one of ``tensors`` (broadcast candidates) come first, then
        the activity windows in time order; the last one is open-ended. With ``first``, only the
        first window is returned.
        """
        windows: list[tuple[float, float]] = []
        seen = self.by_tensor[link]
        for x in tensors:
            for s, e in seen.get(x, ()):
                if e - s >= duration and s >= earliest:
                    windows.append((s, e))
                    if first:
                        return windows
        n = self.n[link]
        ts = self.ts[link][:n]
        k = int(ts.searchsorted(earliest, "right")) - 1
        blocked = ((self.level[link][k:n] + activity) > self.bandwidth[link]).nonzero()[0]
        if not len(blocked):
            windows.append((earliest, math.inf))
            return windows
        times = ts[k:].copy()
        times[0] = earliest
        stops = np.append(blocked, n - k - 1)
        starts = np.empty(len(stops))
        starts[0] = earliest
        starts[1:] = times[stops[:-1] + 1]
        ends = times[stops]
        ok = (ends - starts >= duration).nonzero()[0]
        if first and len(ok):
            windows.append((float(starts[ok[0]]), float(ends[ok[0]])))
        else:
            windows.extend(zip(starts[ok].tolist(), ends[ok].tolist()))
        if not windows:
            raise InputError(None, f"link {link}",
                             f"no idle window of activity {activity} and duration {duration}")
        return windows

    def window(self, requirements: dict[int, float], earliest: float, duration: float,
               tensors: dict[int, list[int]]) -> float:
        """Start of the first window in which every link of ``requirements`` has room."""
        if len(requirements) == 1:
            ((link, need),) = requirements.items()
            return self.idle_windows(link, min(need, self.bandwidth[link]), duration, earliest, tensors[link],
                                     first=True)[0][0]
        result: list[tuple[float, float]] = []
        for i, (link, need) in enumerate(requirements.items()):
            windows = self.idle_windows(link, min(need, self.bandwidth[link]), duration, earliest, tensors[link])
            if i == 0:
                result = windows
            else:
                result = [w for w in intersect(result, windows) if w[1] - w[0] >= duration]
        if not result:
            raise InputError(None, "links " + ", ".join(map(str, requirements)),
                             f"no common idle window of duration {duration}")
        return result[0][0]

    def record(self, link: int, kind: str, start: float, end: float, activity: int, tensors: tuple[int, ...]) -> None:
        """Add an event's activity (ignored if empty, or a broadcast duplicate of a tensor's event)."""
        if start == end:
            return
        seen = self.by_tensor[link]
        for x in tensors:
            if any(s == start for s, _ in seen.get(x, ())):
                return
        n = self.n[link]
        if n + 2 > len(self.ts[link]):
            self.ts[link] = np.concatenate([self.ts[link], np.zeros(n)])
            self.level[link] = np.concatenate([self.level[link], np.zeros(n, dtype=np.int64)])
        ts, level = self.ts[link], self.level[link]
        i, j = ts[:n].searchsorted((start, end)).tolist()
        if ts[j] != end:  # split the segment holding `end` (later than `start`: i stays valid)
            ts[j + 1 : n + 1] = ts[j:n]
            level[j + 1 : n + 1] = level[j:n]
            ts[j] = end
            level[j] = level[j - 1]
            n += 1
        if ts[i] != start:
            ts[i + 1 : n + 1] = ts[i:n]
            level[i + 1 : n + 1] = level[i:n]
            ts[i] = start
            level[i] = level[i - 1]
            n += 1
            j += 1
        self.n[link] = n
        level[i:j] += activity
        for x in tensors:
            seen.setdefault(x, []).append((start, end))
        self.events[link].append(LinkEvent(kind, start, end, activity, tensors))

def intersect(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Stream's two-pointer intersection of two window lists, then one pass merging touching windows."""
    out: list[tuple[float, float]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        a_lo, a_hi = a[i]
        b_lo, b_hi = b[j]
        if a_hi < b_hi:
            i += 1
        else:
            j += 1
        if a_hi >= b_lo and b_hi >= a_lo:
            lo_hi = sorted((a_lo, a_hi, b_lo, b_hi))
            out.append((lo_hi[1], lo_hi[2]))
    k = 0
    while k < len(out) - 1:
        if out[k][1] == out[k + 1][0]:
            out[k : k + 2] = [(out[k][0], out[k + 1][1])]
        k += 1
    return out
