"""The list scheduler (Stream's ``schedule_graph``), on a :class:`ScheduleProblem`.

One CN per iteration: among the ready CNs the first in the scheduling order is picked; its
inputs are fetched over the links (from DRAM or another core), room is made (evicting with
write-back), the DRAM link is blocked for streamed operands, the CN runs, its output is stored,
final outputs are written to DRAM and tensors nobody needs any more are freed. Stream's quirks
that change numbers are kept (docs/models/multi-core.md#streams-quirks-kept); see docs/models/multi-core.md.
"""

from __future__ import annotations

import heapq
import math
from operator import itemgetter

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.schedule.graph import graph_of
from zigzag.multicore.schedule.links import LinkState
from zigzag.multicore.schedule.memory import MemoryState
from zigzag.multicore.schedule.problem import O, ScheduleProblem
from zigzag.multicore.schedule.result import ScheduleResult, Totals, Transfer
from zigzag.multicore.schedule.traffic import streamed_dram_bits


_new_tuple = tuple.__new__  # builds a named tuple without its Python-level constructor


class _Scheduler:
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

    # ---------------------------------------------------------------- data movement
    def transfer(
        self,
        x: int,
        receiver: int,
        m: int,
        keep: list[int],
        sender: int | None = None,
        kind: str | None = None,
    ):
        """Bring tensor ``x`` into ``receiver``'s memory for operand ``m``.

        Returns (end, link energy, memory energy, eviction link energy, eviction memory energy,
        came from off-chip); end is -1 if the tensor was already there.
        """
        mem, holds, top = self.mem, self.holds, self.top
        xi = x * self.nm
        recv = top[receiver][m]
        if holds[xi + recv]:
            return -1, 0, 0, 0, 0, False
        since = mem.available_since
        if sender is not None:
            src = top[sender][self.own[x]]
            if not holds[xi + src]:  # moved within its core to another of the core's top memories
                src = next((i for i in top[sender] if i >= 0 and holds[xi + i]), src)
            if not holds[xi + src]:
                raise InputError(None, f"core {sender}", f"tensor {x} to send is not stored there")
            avail = since[xi + src]
        else:
            holders = mem.where[x]
            if not holders:
                raise InputError(None, f"CN {self.cn_now}", f"tensor {x} is stored nowhere")
            src, avail = -1, math.inf
            for h in holders if len(holders) == 1 else sorted(holders):
                t_h = since[xi + h]
                if t_h < avail:
                    src, avail = h, t_h
        size = self.size[x]
        timeline = mem.timeline[recv]
        if timeline.bound + size <= mem.capacity[recv]:  # it fits at any time
            t_fit = avail
        else:
            t_fit = timeline.earliest_fit(size, mem.capacity[recv], avail)
        t_ev, ev_link, ev_mem = self.make_space_for(x, receiver, m, t_fit, keep)
        sender_core = self.mem_cores[src][0]
        if sender_core == receiver:
            return self.move_within(x, receiver, m, src, recv, t_ev, ev_link, ev_mem, kind)
        info = self._routes.get((sender_core, receiver))
        route, unique, bandwidths = (
            info if info is not None else self.route_info(sender_core, receiver)
        )
        duration = 0
        for bw in bandwidths:
            d = math.ceil(size / bw)
            if d > duration:
                duration = d
        start = self.links.transfer_start(unique, t_ev, duration, x)
        end = start + duration
        mem.add(recv, x, start, end)
        # link and memory energy
        record = self.links.record
        link_e = 0
        for lk, activity, unit_energy in route:
            record(lk, "transfer", start, end, activity, (x,))
            link_e += duration * unit_energy
        if end > self.comm_end:
            self.comm_end = end
        sent_from = top[sender_core][self.own[x]]
        if not holds[xi + sent_from]:
            sent_from = src
        r_cost, r_bw = self.read[sent_from]
        w_cost, w_bw = self.write[recv]
        mem_e = r_cost * math.ceil(size / r_bw) + w_cost * math.ceil(size / w_bw)
        from_offchip = sender_core == self.offchip
        if kind is None:
            kind = "offchip_to_core" if from_offchip else "core_to_core"
        self.transfers.append(
            _new_tuple(
                Transfer,
                (kind, self.cn_now, x, sender_core, receiver, m, start, end, link_e, mem_e),
            )
        )
        if not from_offchip and (not self.has_prio[xi + src] or self.prio[xi + src] == 0):
            mem.remove(sent_from, x, end)
        return end, link_e, mem_e, ev_link, ev_mem, from_offchip

    def move_within(
        self,
        x: int,
        core: int,
        m: int,
        src: int,
        recv: int,
        t: float,
        ev_link: float,
        ev_mem: float,
        kind: str | None,
    ):
        """Move ``x`` between two top memories of one core (e.g. from the activation buffer to the
        weight buffer): no link; it takes the slower of reading the source and writing the target
        (``ceil(size / r_bw)`` and ``ceil(size / w_bw)`` cycles) from ``t`` and costs their accesses."""
        size = self.size[x]
        r_cost, r_bw = self.read[src]
        w_cost, w_bw = self.write[recv]
        reads, writes = math.ceil(size / r_bw), math.ceil(size / w_bw)
        start, end = t, t + max(reads, writes)
        self.mem.add(recv, x, start, end)
        if end > self.comm_end:
            self.comm_end = end
        mem_e = r_cost * reads + w_cost * writes
        self.transfers.append(
            _new_tuple(
                Transfer,
                (kind or "within_core", self.cn_now, x, core, core, m, start, end, 0, mem_e),
            )
        )
        xi = x * self.nm
        if not self.has_prio[xi + src] or self.prio[xi + src] == 0:
            self.mem.remove(src, x, end)
        return end, 0, mem_e, ev_link, ev_mem, False

    def route_info(self, sender: int, receiver: int):
        """The route's (link, activity, unit energy) steps, its distinct links and their bandwidths (cached)."""
        info = self._routes.get((sender, receiver))
        if info is None:
            route = self.hw.routes.get((sender, receiver))
            if not route:
                raise InputError(
                    None, f"cores {sender} -> {receiver}", "no route between these cores"
                )
            links = self.hw.links
            unique = list(dict.fromkeys(route))
            # a transfer occupies a link's full bandwidth; an infinite-bandwidth link adds no time (the
            # duration is the slowest link's) and, as in Stream, is never busy
            steps = [(lk, _occupancy(links[lk].bandwidth), links[lk].unit_energy) for lk in route]
            info = self._routes[(sender, receiver)] = (
                steps,
                unique,
                [self.links.bandwidth[lk] for lk in unique],
            )
        return info

    def make_space_for(self, x: int, core: int, m: int, t: float, avoid: list[int]):
        """Evict (with write-back) from ``core``'s memory for ``m`` until ``x`` fits; (time, energies)."""
        mem = self.mem
        inst = self.top[core][m]
        size = self.size[x]
        own = self.top[core][self.own[x]]
        timeline, cap = mem.timeline[own], mem.capacity[own]
        t_fit = t if timeline.bound + size <= cap else timeline.earliest_fit(size, cap, t)
        timeline, cap = mem.timeline[inst], mem.capacity[inst]
        if timeline.bound + size <= cap or timeline.always_fits(size, cap):
            return t_fit, 0, 0
        if cap < size:
            raise InputError(
                None,
                self.label(inst),
                f"tensor {x} ({size} bits) is larger than the memory ({cap} bits)",
            )
        need = size - (cap - mem.usage(inst, t_fit))
        if need <= 0:
            return t_fit, 0, 0
        stored = mem.stored_at(inst, t_fit)
        avoid_set = set(avoid)
        candidates = [y for y in stored if y not in avoid_set]
        prio, has, nm = self.prio, self.has_prio, self.nm
        total_prio, sizes = self.prio_total, self.size
        ranked = sorted(
            candidates,
            key=lambda y: (
                (prio[y * nm + inst] if has[y * nm + inst] else total_prio[y]) * sizes[y],
                sizes[y],
            ),
        )
        total, chosen = 0, []
        for y in ranked:
            if total >= need:
                break
            chosen.append(y)
            total += self.size[y]
        if total < need:
            raise InputError(
                None,
                self.label(inst),
                f"cannot make room for tensor {x} ({size} bits): too little evictable data",
            )
        if core == self.offchip:
            raise InputError(
                None, self.label(inst), "evictions required in the off-chip memory; make it larger"
            )
        t_done = t
        link_e = mem_e = 0
        for y in chosen:
            t_y, le, me = self.remove(y, core, m, t, write_back=True, kind="eviction_writeback")
            t_done = max(t_done, t_y)
            link_e += le
            mem_e += me
        return max(t_fit, t_done), link_e, mem_e

    def remove(
        self,
        x: int,
        core: int,
        m: int,
        t: float,
        write_back: bool,
        kind: str = "eviction_writeback",
    ):
        """Remove ``x`` from ``core``'s memory for ``m`` at ``t``, first writing it to DRAM if asked."""
        cur, link_e, mem_e = t, 0, 0
        if write_back and not self.holds[x * self.nm + self.top[self.offchip][m]]:
            end, link_e, mem_e, _, _, _ = self.transfer(
                x, self.offchip, m, [], sender=core, kind=kind
            )
            cur = max(t, end)
        self.mem.remove(self.top[core][m], x, t)
        return cur, link_e, mem_e

    def remove_all(self, core: int, m: int, t: float, keep: list[int]):
        keep_set = set(keep)
        link_e = mem_e = 0
        for y in self.mem.stored_at(self.top[core][m], t):
            if y not in keep_set:
                t, le, me = self.remove(y, core, m, t, write_back=True)
                link_e += le
                mem_e += me
        return t, link_e, mem_e

    def block(self, n: int, core: int, t: float, duration: float) -> tuple[float, float]:
        """Reserve DRAM-link bandwidth for a CN's streamed operands; (block start, CN duration).

        Stream's model reserves the mapping's bandwidth need for ``duration`` (the need may exceed
        the link's width). With the ``bandwidth_bound`` latency model the reservation is at most the
        link's width and the CN lasts at least its DRAM bits over it (:func:`_granted`)."""
        p = self.p
        too_large = p.too_large[n]
        if not too_large:
            return t, duration
        need: dict[int, float] = {}
        tensors: dict[int, list[int]] = {}
        bits: dict[int, float] = {}
        read = write = math.nan
        if p.latency_model == "bandwidth_bound":
            streamed = streamed_dram_bits(p, n)
            read, write = sum(r for _, r, _ in streamed), sum(w for _, _, w in streamed)
        if O in too_large:
            for lk in dict.fromkeys(self.hw.routes[(core, self.offchip)]):
                need[lk] = need.get(lk, 0) + float(p.bw_to_offchip[n])
                bits[lk] = bits.get(lk, 0) + write
                tensors.setdefault(lk, []).append(int(p.operand_tensor[n, O]))
        inputs = [m for m in too_large if m != O]
        if inputs:
            for lk in dict.fromkeys(self.hw.routes[(self.offchip, core)]):
                need[lk] = need.get(lk, 0) + float(p.bw_from_offchip[n])
                bits[lk] = bits.get(lk, 0) + read
                tensors.setdefault(lk, []).extend(int(p.operand_tensor[n, m]) for m in inputs)
        bound = p.latency_model == "bandwidth_bound"
        if bound:
            bandwidth = self.links.bandwidth
            granted = {lk: _granted(need[lk], bits[lk], duration, bandwidth[lk]) for lk in need}
            for lk, rate in granted.items():
                moved = bits[lk] if not math.isnan(bits[lk]) else need[lk] * duration
                if rate > 0 and moved > rate * duration * (1 + 1e-9):
                    duration = float(math.ceil(moved / rate))
            need = granted
        # bandwidth_bound: a block moves its own bits, it never rides on another event as a broadcast
        start = self.links.window(need, t, duration, {lk: [] for lk in need} if bound else tensors)
        for lk, req in need.items():
            self.links.record(
                lk,
                "block",
                start,
                start + duration,
                math.ceil(req),
                tuple(tensors[lk]),
                shared=not bound,
            )
        return start, duration

    # ---------------------------------------------------------------- main loop
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
                t, duration = self.block(n, k, t, duration)
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

    def free(self, freed: list[int], end: float) -> None:
        """Remove tensors nobody needs any more from every memory holding them, once their users end."""
        mem, g = self.mem, self.g
        where, own, top = mem.where, self.own, self.top
        latest_of = g.structure.latest
        for x in freed:
            for inst in list(where[x]):
                t_rm = end
                if own[x] == O:
                    # the latest end among the origin's consumers (on this memory's cores) scheduled so far
                    origin, users = self.origin[x], self.mem_cores[inst]
                    if self.offchip in users:
                        latest = latest_of(self.end_at, origin)
                    else:
                        latest = -math.inf
                        for c in users:
                            latest = max(latest, latest_of(self.end_on[c], origin))
                    if latest > -math.inf:
                        t_rm = latest
                core = self.mem_cores[inst][0]
                mem.remove(top[core][own[x]], x, t_rm)

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


def schedule(problem: ScheduleProblem) -> ScheduleResult:
    """Schedule every CN of ``problem``; the CN start/end times, transfers, totals and timelines."""
    return _Scheduler(problem).run()


def _granted(need: float, bits: float, runtime: float, bandwidth: float) -> float:
    """The DRAM-link bandwidth a streaming CN gets under ``bandwidth_bound``: what it needs to move
    its bits in its run time (or its mapping's need, if higher), at most the link's width. Bits
    not known (NaN): the mapping's need for the run time stands for them."""
    rate = need if math.isnan(bits) or runtime <= 0 else max(need, bits / runtime)
    if rate <= 0 and bits > 0:  # no run time to spread them over: the whole link
        rate = bandwidth
    return min(rate, bandwidth)


def _occupancy(bandwidth: float) -> int:
    """The activity a transfer adds to a link: all of its bandwidth, or nothing if that is infinite."""
    return 0 if math.isinf(bandwidth) else int(bandwidth)
