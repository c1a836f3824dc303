"""The mutable state of one multi-core schedule: per CN, tensor, memory and link arrays, set up
from a :class:`ScheduleProblem` (priorities, constants in the off-chip memory), and turned into a
:class:`ScheduleResult` at the end. The scheduler (:mod:`.scheduler`) and its data movement
(:mod:`.movement`) work on it."""

from __future__ import annotations

import math

import numpy as np

from zigzag.multicore.schedule.graph import graph_of
from zigzag.multicore.schedule.links import LinkState
from zigzag.multicore.schedule.memory import MemoryState
from zigzag.multicore.schedule.problem import ScheduleProblem
from zigzag.multicore.schedule.result import ScheduleResult, Totals, Transfer


class ScheduleState:
    """Mutable state of one schedule; arrays indexed by CN, tensor, memory and link.

    Per tensor and memory facts (what is stored where, priorities) are flat lists indexed
    ``tensor * nb_memories + memory``.
    """

    def __init__(self, p: ScheduleProblem):
        self.p = p
        hw = p.hardware
        self.hw = hw
        self.g = graph_of(p)
        self.offchip = hw.offchip_core
        memories = hw.memories
        self.nm = len(memories)
        self.mem = MemoryState(
            [m.capacity for m in memories], [m.label for m in memories], p.tensor_size
        )
        self.holds = self.mem.holds
        self.links = LinkState(hw.links)
        self.size = p.tensor_size.tolist()
        self.own = p.tensor_operand.tolist()
        self.mem_cores = [m.cores for m in memories]
        self.read = [(m.r_cost, m.r_bw) for m in memories]
        self.write = [(m.w_cost, m.w_bw) for m in memories]
        self.top = hw.top_memory.tolist()
        self.off_mems = sorted({i for i in self.top[self.offchip] if i >= 0})
        self.start = [math.nan] * p.nb_cns
        self.end = [math.nan] * p.nb_cns
        self.comm_end = 0.0
        self.transfers: list[Transfer] = []
        self.cn_now = -1
        self.e = dict.fromkeys(Totals.TERMS, 0.0)
        self._routes: dict = {}
        # CN ends, -inf until scheduled (one more entry, always -inf), and the same per core
        self.end_at = [-math.inf] * (p.nb_cns + 1)
        self.end_on = [[-math.inf] * (p.nb_cns + 1) for _ in range(len(hw.top_memory))]
        self.origin = p.tensor_origin.tolist()

    # ---------------------------------------------------------------- set-up
    def init_priorities(self) -> None:
        """Per tensor and memory: how many CNs still need it there (Stream's instance priorities)."""
        g = self.g
        self.prio = g.prio[:]
        self.has_prio = g.has_prio
        self.prio_total = g.prio_total[:]

    def init_offchip(self) -> None:
        """Constants, and inputs of CNs without predecessors, start in the off-chip memory at t=0."""
        holds, off_mems, nm = self.holds, self.off_mems, self.nm
        for x, m in self.g.initial_offchip:
            if not any(holds[x * nm + i] for i in off_mems):
                self.mem.add(self.top[self.offchip][m], x, 0, 0)

    def label(self, mem: int) -> str:
        return self.hw.memories[mem].label

    def result(self) -> ScheduleResult:
        p = self.p
        end = np.array(self.end, dtype=float)
        cn_end = float(np.max(end)) if p.nb_cns else 0.0
        latency = max(cn_end, self.comm_end)
        return ScheduleResult(
            problem=p,
            start=np.array(self.start, dtype=float),
            end=end,
            latency=latency,
            totals=Totals(**self.e),
            transfers=tuple(self.transfers),
            link_events=tuple(tuple(ev) for ev in self.links.events),
            timelines=tuple(tl.points() for tl in self.mem.timeline),
            memory_log=tuple(tuple(log) for log in self.mem.log),
        )
