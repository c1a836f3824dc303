"""Link state: activity over time, idle windows, broadcasts (Stream's communication links).

Each link keeps its summed activity (bits/cycle) as a step function: breakpoint times (floats,
ending with ``inf``) and integer deltas. A transfer asks for the link's full bandwidth, so it
only fits where the activity is zero; a DRAM-link block asks for its own bandwidth need.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import compress, repeat
from operator import lt
from typing import NamedTuple


from zigzag.errors import InputError
from zigzag.multicore.schedule.problem import Link


class LinkEvent(NamedTuple):
    """One activity on one link: a tensor transfer or a block for a streaming CN."""

    kind: str  # "transfer" or "block"
    start: float
    end: float
    activity: int
    tensors: tuple[int, ...]


_new_tuple = tuple.__new__  # builds a named tuple without its Python-level constructor


class LinkState:
    """Activity timelines and recorded events of all links during one schedule.

    Breakpoints and levels are Python lists: a schedule touches them one event at a time, where
    ``bisect`` and list inserts beat numpy calls on short arrays.
    """

    def __init__(self, links: tuple[Link, ...]):
        self.bandwidth = [lk.bandwidth for lk in links]
        # breakpoints and the summed activity on [ts[i], ts[i+1]); the last segment starts at inf
        self.ts: list[list[float]] = [[0.0, math.inf] for _ in links]
        self.level: list[list[int]] = [[0, 0] for _ in links]
        self.events: list[list[LinkEvent]] = [[] for _ in links]
        self.by_tensor: list[dict[int, list[tuple[float, float]]]] = [{} for _ in links]
        self.starts: list[set[tuple[int, float]]] = [
            set() for _ in links
        ]  # (tensor, start) of each event

    def idle_windows(
        self,
        link: int,
        activity: float,
        duration: float,
        earliest: float,
        tensors: list[int],
        first: bool = False,
    ) -> list[tuple[float, float]]:
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
        ts, level = self.ts[link], self.level[link]
        n = len(ts)
        k = bisect_right(ts, earliest) - 1
        room = self.bandwidth[link] - activity
        lo = float(earliest)
        # a window runs from the end of a blocked segment (or ``earliest``) to the next blocked one;
        # all windows: the blocked segments are picked out first, without a Python step per segment
        blocked = (
            compress(range(k, n), map(lt, repeat(room), level[k:]))
            if k >= 0 and not first
            else range(k, n)
        )
        for i in blocked:
            if level[i] > room:
                hi = lo if i == k else ts[i]
                if hi - lo >= duration:
                    windows.append((lo, hi))
                    if first:
                        return windows
                lo = ts[i + 1] if i + 1 < n else lo
        hi = ts[n - 1] if n - 1 > k else float(earliest)
        if hi - lo >= duration:
            windows.append((lo, hi))
        if not windows:
            raise InputError(
                None,
                f"link {link}",
                f"no idle window of activity {activity} and duration {duration}",
            )
        return windows

    def window(
        self,
        requirements: dict[int, float],
        earliest: float,
        duration: float,
        tensors: dict[int, list[int]],
    ) -> float:
        """Start of the first window in which every link of ``requirements`` has room."""
        if len(requirements) == 1:
            ((link, need),) = requirements.items()
            return self.idle_windows(
                link, min(need, self.bandwidth[link]), duration, earliest, tensors[link], first=True
            )[0][0]
        result: list[tuple[float, float]] = []
        for i, (link, need) in enumerate(requirements.items()):
            windows = self.idle_windows(
                link, min(need, self.bandwidth[link]), duration, earliest, tensors[link]
            )
            if i == 0:
                result = windows
            else:
                result = [w for w in intersect(result, windows) if w[1] - w[0] >= duration]
        if not result:
            raise InputError(
                None,
                "links " + ", ".join(map(str, requirements)),
                f"no common idle window of duration {duration}",
            )
        return result[0][0]

    def transfer_start(
        self, links: list[int], earliest: float, duration: float, tensor: int
    ) -> float:
        """Start of the first window in which ``links`` are all idle for a transfer of ``tensor``
        (:meth:`window` with each link's full bandwidth)."""
        if len(links) > 1:
            return self.window(
                {lk: self.bandwidth[lk] for lk in links},
                earliest,
                duration,
                {lk: [tensor] for lk in links},
            )
        # one link: the first idle window, as idle_windows(first=True) finds it, without the lists
        link = links[0]
        for s, e in self.by_tensor[link].get(tensor, ()):
            if e - s >= duration and s >= earliest:
                return s
        ts, level = self.ts[link], self.level[link]
        n = len(ts)
        k = bisect_right(ts, earliest) - 1
        room = self.bandwidth[link] - self.bandwidth[link]  # none, bar an infinite bandwidth's nan
        lo = float(earliest)
        for i in range(k, n):
            if level[i] > room:
                if (lo if i == k else ts[i]) - lo >= duration:
                    return lo
                lo = ts[i + 1] if i + 1 < n else lo
        if (ts[n - 1] if n - 1 > k else float(earliest)) - lo >= duration:
            return lo
        raise InputError(
            None,
            f"link {link}",
            f"no idle window of activity {self.bandwidth[link]} and duration {duration}",
        )

    def record(
        self,
        link: int,
        kind: str,
        start: float,
        end: float,
        activity: int,
        tensors: tuple[int, ...],
        shared: bool = True,
    ) -> None:
        """Add an event's activity (ignored if empty, or a broadcast duplicate of a tensor's event).
        ``shared=False``: the event is never a broadcast (always added) nor offered as one later."""
        if start == end:
            return
        starts = self.starts[link]
        if not shared:
            self._add(link, start, end, activity)
            self.events[link].append(_new_tuple(LinkEvent, (kind, start, end, activity, tensors)))
            return
        for x in tensors:
            if (x, start) in starts:
                return
        self._add(link, start, end, activity)
        seen = self.by_tensor[link]
        for x in tensors:
            seen.setdefault(x, []).append((start, end))
            starts.add((x, start))
        self.events[link].append(_new_tuple(LinkEvent, (kind, start, end, activity, tensors)))

    def _add(self, link: int, start: float, end: float, activity: int) -> None:
        """Add ``activity`` to ``link`` on [start, end)."""
        ts, level = self.ts[link], self.level[link]
        i = bisect_left(ts, start)
        j = bisect_left(ts, end, i)
        if ts[j] != end:  # split the segment holding `end` (later than `start`: i stays valid)
            ts.insert(j, float(end))
            level.insert(j, level[j - 1])
        if ts[i] != start:
            ts.insert(i, float(start))
            level.insert(i, level[i - 1])
            j += 1
        if j == i + 1:  # one segment, the usual case
            level[i] += activity
        else:
            level[i:j] = [v + activity for v in level[i:j]]


def intersect(
    a: list[tuple[float, float]], b: list[tuple[float, float]]
) -> list[tuple[float, float]]:
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
