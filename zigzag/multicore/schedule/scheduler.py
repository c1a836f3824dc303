"""The list scheduler (Stream's ``schedule_graph``), on a :class:`ScheduleProblem`.

One CN per iteration: among the ready CNs the first in the scheduling order is picked; its
inputs are fetched over the links (from DRAM or another core), room is made (evicting with
write-back), the DRAM link is blocked for streamed operands, the CN runs, its output is stored,
final outputs are written to DRAM and tensors nobody needs any more are freed. Stream's quirks
that change numbers are kept (docs/models/multi-core.md#streams-quirks-kept); see docs/models/multi-core.md.
"""

from __future__ import annotations

import heapq
from operator import itemgetter

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.schedule.movement import DataMovement
from zigzag.multicore.schedule.problem import O, ScheduleProblem
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.streaming import reserve_dram_links


class _Scheduler(DataMovement):
    """The list scheduler's main loop over a :class:`~.state.ScheduleState`."""

    def run(self) -> ScheduleResult:
        p, g, mem = self.p, self.g, self.mem
        e = self.e
        rank = [-1] * p.nb_cns
        for i, c in enumerate(p.order.tolist()):
            rank[c] = i
        self.init_priorities()
        self.init_offchip()
        holds, nm, top, own = self.holds, self.nm, self.top, self.own
        for x, core, m in p.prefetch:
            if not holds[x * nm + top[core][own[x]]]:
                _, le, me, evl, evm, _ = self.transfer(x, core, m, [])
                e["total_cn_offchip_link_energy"] += le
                e["total_cn_offchip_memory_energy"] += me
                e["total_eviction_to_offchip_link_energy"] += evl
                e["total_eviction_to_offchip_memory_energy"] += evm
        cores = p.core.tolist()
        runtime = p.runtime.tolist()
        idle = {c: 0 for c in set(cores)}
        heap: list[tuple[int, int, float]] = []
        for n in np.flatnonzero(g.in_degree == 0).tolist():
            heapq.heappush(heap, (self._rank(rank, n), n, idle[cores[n]]))
        waiting = g.in_degree.tolist()
        ready_at = [0.0] * p.nb_cns
        need_ptr, need_x, need_m, need_get, need_idx = (
            g.need_ptr,
            g.need_x,
            g.need_m,
            g.need_get,
            g.need_idx,
        )
        prio, total = self.prio, self.prio_total
        timelines, capacity, sizes = mem.timeline, mem.capacity, self.size
        succ_ptr, succ = g.succ_ptr, g.succ
        too_large_of = p.too_large
        onchip, offchip = p.onchip_energy.tolist(), p.offchip_energy.tolist()
        outputs = p.operand_tensor[:, O].tolist()
        sink = g.sink
        transfer = self.transfer
        pending: dict[int, int] = {}  # tensors kept past their count: CNs still needing them
        for _ in range(p.nb_cns):
            if not heap:
                raise InputError(
                    None, "CN graph", "no CN is ready although some are unscheduled (a cycle?)"
                )
            _, n, ready = heapq.heappop(heap)
            self.cn_now = n
            k = cores[n]
            start = max(idle[k], ready)
            lo, hi = need_ptr[n], need_ptr[n + 1]
            keep = need_x[lo:hi]
            too_large = too_large_of[n]
            t = start
            # 1. clear memories of streamed operands
            if too_large:
                clear_link = clear_mem = 0
                for m in too_large:
                    t, le, me = self.remove_all(k, m, t, keep)
                    clear_link += le
                    clear_mem += me
                e["total_eviction_to_offchip_link_energy"] += clear_link
                e["total_eviction_to_offchip_memory_energy"] += clear_mem
            # 2. fetch inputs (tensors already there cost nothing); which are missing is decided first
            get = need_get[n]
            if get is None:
                get = need_get[n] = itemgetter(*g.need_idx[lo:hi], len(holds) - 1, len(holds) - 1)
            present = get(holds)  # the needed tensors' entries, two sentinels (always set) last
            if 0 in present:
                for i in [i for i, there in enumerate(present) if not there]:
                    end_x, le, me, evl, evm, from_off = transfer(keep[i], k, need_m[lo + i], keep)
                    t = max(t, end_x)
                    if from_off:
                        e["total_cn_offchip_link_energy"] += le
                        e["total_cn_offchip_memory_energy"] += me
                    else:
                        e["total_core_to_core_link_energy"] += le
                        e["total_core_to_core_memory_energy"] += me
                    if evl or evm:
                        e["total_eviction_to_offchip_link_energy"] += evl
                        e["total_eviction_to_offchip_memory_energy"] += evm
            # 3. block the DRAM link for streamed operands
            duration = runtime[n]
            if too_large:
                t, duration = reserve_dram_links(self, n, k, t, duration)
            # 4. room for the output
            target = self.offchip if O in too_large else k
            out = outputs[n]
            inst = top[target][O]
            if own[out] == O and timelines[inst].bound + sizes[out] <= capacity[inst]:
                t_done, evl, evm = t, 0, 0  # fits at any time: what make_space_for would find
            else:
                t_done, evl, evm = self.make_space_for(out, target, O, t, keep)
            if evl or evm:
                e["total_eviction_to_offchip_link_energy"] += evl
                e["total_eviction_to_offchip_memory_energy"] += evm
            start = t_done
            end = start + duration
            mem.add(inst, out, start, end)
            # 5. record
            self.start[n] = start
            self.end[n] = end
            self.end_at[n] = self.end_on[k][n] = end
            idle[k] = end
            e["total_cn_onchip_energy"] += onchip[n]
            e["total_cn_offchip_memory_energy"] += offchip[n]
            # 6. priorities: one use less of each needed tensor; free those nobody needs any more
            for i in need_idx[lo:hi]:
                prio[i] -= 1
            freed = []
            if pending:
                for x in keep:
                    if x in pending:
                        pending[x] -= 1
                        if not pending[x]:
                            del pending[x]
                            freed.append(x)
            for x in keep:
                left = total[x] - 1
                total[x] = left
                if not left:  # Stream frees it now; unless a count fell short (CNGraph.waiting)
                    needs_left = g.waiting(x, self.end_at)
                    if needs_left:
                        pending[x] = needs_left
                    else:
                        freed.append(x)
            if freed:
                self.free(freed, end)
            # 7. final outputs to DRAM
            if sink[n]:
                _, le, me = self.remove(
                    out, k, own[out], end, write_back=True, kind="sink_writeback"
                )
                e["total_sink_layer_output_offchip_link_energy"] += le
                e["total_sink_layer_output_offchip_memory_energy"] += me
            # 8. new candidates
            for s in succ[succ_ptr[n] : succ_ptr[n + 1]]:
                waiting[s] -= 1
                if end > ready_at[s]:
                    ready_at[s] = end
                if not waiting[s]:
                    r = rank[s]
                    heapq.heappush(
                        heap, (r if r >= 0 else self._rank(rank, s), s, float(ready_at[s]))
                    )
        return self.result()

    def _rank(self, rank: list[int], n: int) -> int:
        r = rank[n]
        if r < 0:
            raise InputError(
                None,
                "scheduling order",
                f"CN ({int(self.p.layer[n])}, {int(self.p.sub[n])}) is not in the scheduling order",
            )
        return r


def schedule(problem: ScheduleProblem) -> ScheduleResult:
    """Schedule every CN of ``problem``; the CN start/end times, transfers, totals and timelines."""
    return _Scheduler(problem).run()
