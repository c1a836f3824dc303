"""The list scheduler (Stream's ``schedule_graph``), on a :class:`ScheduleProblem`.

One CN per iteration: among the ready CNs the first in the scheduling order is picked; its
inputs are fetched over the links (from DRAM or another core), room is made (evicting with
write-back), the DRAM link is blocked for streamed operands, the CN runs, its output is stored,
final outputs are written to DRAM and tensors nobody needs any more are freed. Stream's quirks
that change numbers are kept (``spec/stream.md`` §13); see the README's scheduler section.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from zigzag.errors import InputError
from zigzag.stream.schedule.links import LinkState
from zigzag.stream.schedule.memory import MemoryState
from zigzag.stream.schedule.problem import O, ScheduleProblem
from zigzag.stream.schedule.result import ScheduleResult, Totals, Transfer


def _csr(keys: np.ndarray, values: list[np.ndarray], n: int):
    """Group ``values`` (already sorted by ``keys``) per key 0..n-1: (pointers, values...)."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return (ptr, *values)


class _Graph:
    """Adjacency of the CN graph in compressed per-CN arrays, prepared once per problem."""

    def __init__(self, p: ScheduleProblem):
        n = p.nb_cns
        src, dst = p.edge_src.astype(np.int64), p.edge_dst.astype(np.int64)
        layer, sub = p.layer, p.sub
        self.in_degree = np.bincount(dst, minlength=n)
        out_degree = np.bincount(src, minlength=n)
        # inter-layer inputs per consumer, producers in ascending (layer, sub)
        idx = np.flatnonzero(layer[src] != layer[dst])
        idx = idx[np.lexsort((sub[src[idx]], layer[src[idx]], dst[idx]))]
        self.in_ptr, self.in_src, self.in_m = _csr(dst[idx], [src[idx], p.edge_operand[idx].astype(np.int64)], n)
        # inter-layer consumers per producer, with the consumer's memory operand
        idx = idx[np.argsort(src[idx], kind="stable")]
        self.out_ptr, self.out_dst, self.out_m = _csr(src[idx], [dst[idx], p.edge_operand[idx].astype(np.int64)], n)
        # all successors (intra-layer ones too)
        idx = np.argsort(src, kind="stable")
        self.succ_ptr, self.succ = _csr(src[idx], [dst[idx]], n)
        sink_layers = np.unique(layer[out_degree == 0])
        self.sink = (np.isin(layer, sink_layers) & p.final_output.astype(bool)).tolist()


class _Scheduler:
    """Mutable state of one schedule; arrays indexed by CN, tensor, memory and link."""

    def __init__(self, p: ScheduleProblem):
        self.p = p
        hw = p.hardware
        self.hw = hw
        self.g = _Graph(p)
        self.offchip = hw.offchip_core
        nm = len(hw.memories)
        self.mem = MemoryState([m.capacity for m in hw.memories], [m.label for m in hw.memories], p.tensor_size)
        self.links = LinkState(hw.links)
        self.size = p.tensor_size.tolist()
        self.size_arr = p.tensor_size.astype(np.int64)
        self.own = p.tensor_operand.tolist()
        self.mem_cores = [m.cores for m in hw.memories]
        self.mem_core_sets = [set(m.cores) for m in hw.memories]
        self.top = hw.top_memory.tolist()
        if (hw.top_memory[list(hw.cores)] < 0).any():
            raise InputError(None, "hardware", "every core needs a top memory for each of I1, I2 and O")
        self.off_mems = sorted({i for i in self.top[self.offchip] if i >= 0})
        self.prio = np.zeros((p.nb_tensors, nm), dtype=np.int64)
        self.has_prio = np.zeros((p.nb_tensors, nm), dtype=bool)
        self.start = np.full(p.nb_cns, np.nan)
        self.end = np.full(p.nb_cns, np.nan)
        self.comm_end = 0.0
        self.transfers: list[Transfer] = []
        self.cn_now = -1
        self.e = dict.fromkeys(Totals.TERMS, 0.0)
        self._routes: dict = {}
        self.end_at: list[float | None] = [None] * p.nb_cns
        self.core_of = p.core.tolist()
        self._prepare_needed()

    # ---------------------------------------------------------------- set-up
    def init_priorities(self) -> None:
        """Per tensor and memory: how many CNs still need it there (Stream's instance priorities)."""
        p, g = self.p, self.g
        top = self.hw.top_memory
        # outputs: +1 per consuming CN of another layer, on the consumer's memory
        producers = np.repeat(np.arange(p.nb_cns), np.diff(g.out_ptr))
        x = p.operand_tensor[producers, O]
        inst = top[p.core[g.out_dst], g.out_m]
        self._check_tops(inst)
        np.add.at(self.prio, (x, inst), 1)
        self.has_prio[x, inst] = True
        # inputs and constants: the reuse count, on the CN's own memory
        cn, m = np.nonzero(p.operand_tensor[:, :O] >= 0)
        x = p.operand_tensor[cn, m]
        inst = top[p.core[cn], p.tensor_operand[x]]
        self._check_tops(inst)
        self.prio[x, inst] = p.tensor_base_priority[x]
        self.has_prio[x, inst] = True
        self.prio_total = self.prio.sum(axis=1)

    def _check_tops(self, inst: np.ndarray) -> None:
        if len(inst) and inst.min() < 0:
            raise InputError(None, "hardware", "a CN's core has no top memory for one of its operands")

    def init_offchip(self) -> None:
        """Constants, and inputs of CNs without predecessors, start in the off-chip memory at t=0."""
        p = self.p
        first = (self.g.in_degree == 0)[:, None] & (np.arange(3) != O)[None, :]
        const = np.zeros((p.nb_cns, 3), dtype=bool)
        for n, ms in enumerate(p.constants):
            const[n, list(ms)] = True
        cn, m = np.nonzero((const | first) & (p.operand_tensor >= 0))
        x = p.operand_tensor[cn, m]
        _, first_seen = np.unique(x, return_index=True)
        for i in np.sort(first_seen).tolist():
            xi = int(x[i])
            if not self.mem.holds[self.off_mems, xi].any():
                self.mem.add(self.top[self.offchip][int(m[i])], xi, 0, 0)

    def label(self, mem: int) -> str:
        return self.hw.memories[mem].label

    # ---------------------------------------------------------------- data movement
    def transfer(self, x: int, receiver: int, m: int, keep: list[int], sender: int | None = None,
                 kind: str | None = None):
        """Bring tensor ``x`` into ``receiver``'s memory for operand ``m``.

        Returns (end, link energy, memory energy, eviction link energy, eviction memory energy,
        came from off-chip); end is -1 if the tensor was already there.
        """
        mem = self.mem
        recv = self.top[receiver][m]
        if mem.holds[recv, x]:
            return -1, 0, 0, 0, 0, False
        if sender is not None:
            src = self.top[sender][self.own[x]]
            if not mem.holds[src, x]:
                raise InputError(None, f"core {sender}", f"tensor {x} to send is not stored there")
            avail = float(mem.available_since[src, x])
        else:
            holders = sorted(mem.where[x])
            if not holders:
                raise InputError(None, f"CN {self.cn_now}", f"tensor {x} is stored nowhere")
            src, avail = -1, math.inf
            for h in holders:
                since = float(mem.available_since[h, x])
                if since < avail:
                    src, avail = h, since
        t_fit = mem.earliest_fit(recv, x, avail)
        t_ev, ev_link, ev_mem = self.make_space_for(x, receiver, m, t_fit, keep)
        sender_core = self.mem_cores[src][0]
        route, unique, need = self.route_info(sender_core, receiver)
        size = self.size[x]
        duration = 0
        for lk, bw in need.items():
            duration = max(duration, math.ceil(size / bw))
        start = self.links.window(need, t_ev, duration, {lk: [x] for lk in unique})
        end = start + duration
        mem.add(recv, x, start, end)
        link_e, mem_e = self.update_links(x, sender_core, receiver, m, start, duration)
        from_offchip = sender_core == self.offchip
        if kind is None:
            kind = "offchip_to_core" if from_offchip else "core_to_core"
        self.transfers.append(Transfer(kind, self.cn_now, x, sender_core, receiver, m, start, end, link_e, mem_e))
        if not from_offchip and (not self.has_prio[x, src] or self.prio[x, src] == 0):
            mem.remove(self.top[sender_core][self.own[x]], x, end)
        return end, link_e, mem_e, ev_link, ev_mem, from_offchip

    def route_info(self, sender: int, receiver: int):
        """The route's links, its distinct links, and each distinct link's bandwidth (cached)."""
        info = self._routes.get((sender, receiver))
        if info is None:
            route = self.hw.routes.get((sender, receiver))
            if not route:
                raise InputError(None, f"cores {sender} -> {receiver}", "no route between these cores")
            unique = list(dict.fromkeys(route))
            info = self._routes[(sender, receiver)] = (route, unique, {lk: self.links.bandwidth[lk] for lk in unique})
        return info

    def update_links(self, x: int, sender: int, receiver: int, m: int, start: float, duration: float):
        route = self.hw.routes[(sender, receiver)]
        links = self.hw.links
        end = start + duration
        link_e = 0
        for lk in route:
            self.links.record(lk, "transfer", start, end, int(links[lk].bandwidth), (x,))
            link_e += duration * links[lk].unit_energy
        self.comm_end = max(self.comm_end, end)
        s = self.hw.memories[self.top[sender][self.own[x]]]
        r = self.hw.memories[self.top[receiver][m]]
        size = self.size[x]
        mem_e = s.r_cost * math.ceil(size / s.r_bw) + r.w_cost * math.ceil(size / r.w_bw)
        return link_e, mem_e

    def make_space_for(self, x: int, core: int, m: int, t: float, avoid: list[int]):
        """Evict (with write-back) from ``core``'s memory for ``m`` until ``x`` fits; (time, energies)."""
        mem = self.mem
        inst = self.top[core][m]
        t_fit = mem.earliest_fit(self.top[core][self.own[x]], x, t)
        if mem.always_fits(inst, x):
            return t_fit, 0, 0
        cap = mem.capacity[inst]
        size = self.size[x]
        if cap < size:
            raise InputError(None, self.label(inst),
                             f"tensor {x} ({size} bits) is larger than the memory ({cap} bits)")
        need = size - (cap - mem.usage(inst, t_fit))
        if need <= 0:
            return t_fit, 0, 0
        stored = mem.stored_at(inst, t_fit)
        avoid_set = set(avoid)
        candidates = [y for y in stored if y not in avoid_set]
        prio, has = self.prio, self.has_prio
        ranked = sorted(candidates, key=lambda y: ((int(prio[y, inst]) if has[y, inst] else int(self.prio_total[y]))
                                                   * self.size[y], self.size[y]))
        total, chosen = 0, []
        for y in ranked:
            if total >= need:
                break
            chosen.append(y)
            total += self.size[y]
        if total < need:
            raise InputError(None, self.label(inst),
                             f"cannot make room for tensor {x} ({size} bits): too little evictable data")
        if core == self.offchip:
            raise InputError(None, self.label(inst), "evictions required in the off-chip memory; make it larger")
        t_done = t
        link_e = mem_e = 0
        for y in chosen:
            t_y, le, me = self.remove(y, core, m, t, write_back=True, kind="eviction_writeback")
            t_done = max(t_done, t_y)
            link_e += le
            mem_e += me
        return max(t_fit, t_done), link_e, mem_e

    def remove(self, x: int, core: int, m: int, t: float, write_back: bool, kind: str = "eviction_writeback"):
        """Remove ``x`` from ``core``'s memory for ``m`` at ``t``, first writing it to DRAM if asked."""
        cur, link_e, mem_e = t, 0, 0
        if write_back and not self.mem.holds[self.top[self.offchip][m], x]:
            end, link_e, mem_e, _, _, _ = self.transfer(x, self.offchip, m, [], sender=core, kind=kind)
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

    def block(self, n: int, core: int, t: float, duration: float) -> float:
        """Reserve DRAM-link bandwidth for a CN's streamed operands; returns the block start."""
        p = self.p
        too_large = p.too_large[n]
        if not too_large:
            return t
        need: dict[int, float] = {}
        tensors: dict[int, list[int]] = {}
        if O in too_large:
            for lk in dict.fromkeys(self.hw.routes[(core, self.offchip)]):
                need[lk] = need.get(lk, 0) + float(p.bw_to_offchip[n])
                tensors.setdefault(lk, []).append(int(p.operand_tensor[n, O]))
        inputs = [m for m in too_large if m != O]
        if inputs:
            for lk in dict.fromkeys(self.hw.routes[(self.offchip, core)]):
                need[lk] = need.get(lk, 0) + float(p.bw_from_offchip[n])
                tensors.setdefault(lk, []).extend(int(p.operand_tensor[n, m]) for m in inputs)
        start = self.links.window(need, t, duration, tensors)
        for lk, req in need.items():
            self.links.record(lk, "block", start, start + duration, math.ceil(req), tuple(tensors[lk]))
        return start

    # ---------------------------------------------------------------- main loop
    def _prepare_needed(self) -> None:
        """Per CN, the tensors it needs on its core, smallest first (constants, then inputs from
        other layers by producer), without its streamed operands: compressed arrays."""
        p, g = self.p, self.g
        n, ot = p.nb_cns, p.operand_tensor
        c_cn = [c for c, ms in enumerate(p.constants) for _ in ms]
        c_m = [m for ms in p.constants for m in ms]
        c_seq = [i for ms in p.constants for i in range(len(ms))]
        i_cn = np.repeat(np.arange(n), np.diff(g.in_ptr))
        cn = np.concatenate([np.array(c_cn, dtype=np.int64), i_cn])
        m = np.concatenate([np.array(c_m, dtype=np.int64), g.in_m])
        seq = np.concatenate([np.array(c_seq, dtype=np.int64), np.arange(len(i_cn)) - g.in_ptr[i_cn] + 3])
        x = np.concatenate([ot[np.array(c_cn, dtype=np.int64), np.array(c_m, dtype=np.int64)], ot[g.in_src, O]])
        streamed = np.zeros((n, 3), dtype=bool)
        for c, ms in enumerate(p.too_large):
            streamed[c, list(ms)] = True
        keep = ~streamed[cn, m]
        cn, m, seq, x = cn[keep], m[keep], seq[keep], x[keep]
        by = np.lexsort((seq, self.size_arr[x], cn))
        cn, m, x = cn[by], m[by], x[by]
        mems = self.hw.top_memory[p.core[cn], m]
        self._check_tops(mems)
        self.need_ptr = _csr(cn, [], n)[0]
        self.need_x, self.need_m, self.need_mem = x, m, mems
        # a CN can need a tensor twice only if several CNs share one output tensor
        outputs = p.operand_tensor[:, O]
        self.need_unique = not len(outputs) or np.bincount(outputs[outputs >= 0]).max(initial=0) <= 1

    def run(self) -> ScheduleResult:
        p, g, mem = self.p, self.g, self.mem
        e = self.e
        rank = np.full(p.nb_cns, -1, dtype=np.int64)
        rank[p.order] = np.arange(len(p.order))
        self.init_priorities()
        self.init_offchip()
        for x, core, m in p.prefetch:
            if not mem.holds[self.top[core][self.own[x]], x]:
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
        waiting = g.in_degree.copy()
        ready_at = np.zeros(p.nb_cns)
        ot = p.operand_tensor
        onchip, offchip = p.onchip_energy.tolist(), p.offchip_energy.tolist()
        outputs = ot[:, O].tolist()
        top = self.top
        for _ in range(p.nb_cns):
            if not heap:
                raise InputError(None, "CN graph", "no CN is ready although some are unscheduled (a cycle?)")
            _, n, ready = heapq.heappop(heap)
            self.cn_now = n
            k = cores[n]
            start = max(idle[k], ready)
            lo, hi = self.need_ptr[n], self.need_ptr[n + 1]
            xs, ms, mems = self.need_x[lo:hi], self.need_m[lo:hi], self.need_mem[lo:hi]
            keep = xs.tolist()
            too_large = p.too_large[n]
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
            # 2. fetch inputs (tensors already there cost nothing)
            for i in (~mem.holds[mems, xs]).nonzero()[0].tolist():
                end_x, le, me, evl, evm, from_off = self.transfer(keep[i], k, int(ms[i]), keep)
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
            if too_large:
                t = self.block(n, k, t, runtime[n])
            # 4. room for the output
            target = self.offchip if O in too_large else k
            out = outputs[n]
            t_done, evl, evm = self.make_space_for(out, target, O, t, keep)
            if evl or evm:
                e["total_eviction_to_offchip_link_energy"] += evl
                e["total_eviction_to_offchip_memory_energy"] += evm
            start = t_done
            end = start + runtime[n]
            mem.add(top[target][O], out, start, end)
            # 5. record
            self.start[n] = start
            self.end[n] = end
            self.end_at[n] = end
            idle[k] = end
            e["total_cn_onchip_energy"] += onchip[n]
            e["total_cn_offchip_memory_energy"] += offchip[n]
            # 6. priorities and removals
            self.release(xs, mems, end)
            # 7. final outputs to DRAM
            if g.sink[n]:
                _, le, me = self.remove(out, k, self.own[out], end, write_back=True, kind="sink_writeback")
                e["total_sink_layer_output_offchip_link_energy"] += le
                e["total_sink_layer_output_offchip_memory_energy"] += me
            # 8. new candidates
            succ = g.succ[g.succ_ptr[n] : g.succ_ptr[n + 1]]
            if len(succ):
                waiting[succ] -= 1
                ready_at[succ] = np.maximum(ready_at[succ], end)
                for s in succ[waiting[succ] == 0].tolist():
                    heapq.heappush(heap, (self._rank(rank, s), s, float(ready_at[s])))
        return self.result()

    def _rank(self, rank: np.ndarray, n: int) -> int:
        r = int(rank[n])
        if r < 0:
            raise InputError(None, "scheduling order",
                             f"CN ({int(self.p.layer[n])}, {int(self.p.sub[n])}) is not in the scheduling order")
        return r

    def release(self, xs: np.ndarray, mems: np.ndarray, end: float) -> None:
        """Lower the priorities of the tensors a CN used; free those nobody needs any more."""
        prio, mem, p, g = self.prio, self.mem, self.p, self.g
        core_of = self.core_of
        if self.need_unique:
            prio[xs, mems] -= 1
            self.prio_total[xs] -= 1
        else:
            np.subtract.at(prio, (xs, mems), 1)
            np.subtract.at(self.prio_total, xs, 1)
        for x in xs[self.prio_total[xs] == 0].tolist():
            for inst in list(mem.where[x]):
                t_rm = end
                if self.own[x] == O:
                    # the latest end among the origin's consumers (on this memory's cores) scheduled so far
                    origin = int(p.tensor_origin[x])
                    succ = g.out_dst[g.out_ptr[origin] : g.out_ptr[origin + 1]].tolist()
                    ends_at, users = self.end_at, self.mem_core_sets[inst]
                    if self.offchip in users:
                        ends = [ends_at[s] for s in succ if ends_at[s] is not None]
                    else:
                        ends = [ends_at[s] for s in succ if ends_at[s] is not None and core_of[s] in users]
                    t_rm = max(ends) if ends else end
                core = self.mem_cores[inst][0]
                mem.remove(self.top[core][self.own[x]], x, t_rm)

    def result(self) -> ScheduleResult:
        p = self.p
        cn_end = float(np.max(self.end)) if p.nb_cns else 0.0
        latency = max(cn_end, self.comm_end)
        return ScheduleResult(
            problem=p,
            start=self.start.copy(),
            end=self.end.copy(),
            latency=latency,
            totals=Totals(**self.e),
            transfers=tuple(self.transfers),
            link_events=tuple(tuple(ev) for ev in self.links.events),
            timelines=tuple(tl.points() for tl in self.mem.timeline),
        )


def schedule(problem: ScheduleProblem) -> ScheduleResult:
    """Schedule every CN of ``problem``; the CN start/end times, transfers, totals and timelines."""
    return _Scheduler(problem).run()
