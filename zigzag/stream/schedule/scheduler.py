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


class _Graph:
    """Adjacency of the CN graph as per-CN lists, prepared once per problem."""

    def __init__(self, p: ScheduleProblem):
        n = p.nb_cns
        src, dst = p.edge_src.astype(np.int64), p.edge_dst.astype(np.int64)
        layer, sub = p.layer, p.sub
        other = layer[src] != layer[dst]
        self.in_degree = np.bincount(dst, minlength=n)
        self.out_degree = np.bincount(src, minlength=n)
        # inter-layer inputs per consumer, producers in ascending (layer, sub)
        idx = np.flatnonzero(other)
        idx = idx[np.lexsort((sub[src[idx]], layer[src[idx]], dst[idx]))]
        self.inputs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for e in idx.tolist():
            self.inputs[int(dst[e])].append((int(src[e]), int(p.edge_operand[e])))
        self.successors: list[list[int]] = [[] for _ in range(n)]
        for s, d in zip(src.tolist(), dst.tolist()):
            self.successors[s].append(d)
        # inter-layer consumers per producer, with the consumer's memory operand
        self.outputs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for d in range(n):
            for s, m in self.inputs[d]:
                self.outputs[s].append((d, m))
        sink_layers = np.unique(layer[self.out_degree == 0])
        self.sink = np.isin(layer, sink_layers) & p.final_output.astype(bool)


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
        self.own = p.tensor_operand.tolist()
        self.mem_cores = [m.cores for m in hw.memories]
        self.mem_core_sets = [set(m.cores) for m in hw.memories]
        self.top = hw.top_memory.tolist()
        self.cores = p.core.tolist()
        self.prio = np.zeros((p.nb_tensors, nm), dtype=np.int64)
        self.has_prio = np.zeros((p.nb_tensors, nm), dtype=bool)
        self.start = np.full(p.nb_cns, np.nan)
        self.end = np.full(p.nb_cns, np.nan)
        self.scheduled = np.zeros(p.nb_cns, dtype=bool)
        self.comm_end = 0.0
        self.transfers: list[Transfer] = []
        self.cn_now = -1
        self.e = dict.fromkeys(Totals.TERMS, 0.0)

    def top_of(self, core: int, m: int) -> int:
        idx = self.top[core][m] if 0 <= core < len(self.top) else -1
        if idx < 0:
            return self.hw.top(core, m)  # raises the error
        return idx

    # ---------------------------------------------------------------- set-up
    def init_priorities(self) -> None:
        p, g = self.p, self.g
        core, ot = p.core.tolist(), p.operand_tensor.tolist()
        base = p.tensor_base_priority.tolist()
        for n in range(p.nb_cns):
            for m in (0, 1, 2):
                x = ot[n][m]
                if x < 0:
                    continue
                if m == O:
                    for s, sm in g.outputs[n]:
                        inst = self.top_of(core[s], sm)
                        self.prio[x, inst] += 1
                        self.has_prio[x, inst] = True
                else:
                    inst = self.top_of(core[n], self.own[x])
                    self.prio[x, inst] = base[x]
                    self.has_prio[x, inst] = True

    def init_offchip(self) -> None:
        p = self.p
        ot = p.operand_tensor.tolist()
        off_mems = sorted({i for i in self.top[self.offchip] if i >= 0})
        for n in range(p.nb_cns):
            no_inputs = self.g.in_degree[n] == 0
            for m in (0, 1, 2):
                x = ot[n][m]
                if x < 0 or not (m in p.constants[n] or (m != O and no_inputs)):
                    continue
                if not any(self.mem.holds[i, x] for i in off_mems):
                    self.mem.add(self.top_of(self.offchip, m), x, 0, 0)

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
        recv = self.top_of(receiver, m)
        if mem.holds[recv, x]:
            return -1, 0, 0, 0, 0, False
        if sender is not None:
            src = self.top_of(sender, self.own[x])
            if not mem.holds[src, x]:
                raise InputError(None, f"core {sender}", f"tensor {x} to send is not stored there")
            avail = mem.available_since[src, x]
        else:
            holders = np.flatnonzero(mem.holds[:, x])
            if not len(holders):
                raise InputError(None, f"CN {self.cn_now}", f"tensor {x} is stored nowhere")
            times = mem.available_since[holders, x]
            src = int(holders[int(np.argmin(times))])
            avail = float(times.min())
        t_fit = mem.earliest_fit(recv, x, avail)
        t_ev, ev_link, ev_mem = self.make_space_for(x, receiver, m, t_fit, keep)
        sender_core = self.mem_cores[src][0]
        route = self.hw.routes.get((sender_core, receiver))
        if not route:
            raise InputError(None, f"cores {sender_core} -> {receiver}", "no route between these cores")
        unique = list(dict.fromkeys(route))
        size = self.size[x]
        bw = self.links.bandwidth
        duration = max(math.ceil(size / bw[lk]) for lk in unique)
        start = self.links.window({lk: bw[lk] for lk in unique}, t_ev, duration, {lk: [x] for lk in unique})
        end = start + duration
        mem.add(recv, x, start, end)
        link_e, mem_e = self.update_links(x, sender_core, receiver, m, start, end)
        from_offchip = sender_core == self.offchip
        if kind is None:
            kind = "offchip_to_core" if from_offchip else "core_to_core"
        self.transfers.append(Transfer(kind, self.cn_now, x, sender_core, receiver, m, start, end, link_e, mem_e))
        if not from_offchip and (not self.has_prio[x, src] or self.prio[x, src] == 0):
            mem.remove(self.top_of(sender_core, self.own[x]), x, end)
        return end, link_e, mem_e, ev_link, ev_mem, from_offchip

    def update_links(self, x: int, sender: int, receiver: int, m: int, start: float, end: float):
        route = self.hw.routes[(sender, receiver)]
        links = self.hw.links
        duration = end - start
        link_e = 0
        for lk in route:
            self.links.record(lk, "transfer", start, end, int(links[lk].bandwidth), (x,))
            link_e += duration * links[lk].unit_energy
        self.comm_end = max(self.comm_end, end)
        s = self.hw.memories[self.top_of(sender, self.own[x])]
        r = self.hw.memories[self.top_of(receiver, m)]
        size = self.size[x]
        mem_e = s.r_cost * math.ceil(size / s.r_bw) + r.w_cost * math.ceil(size / r.w_bw)
        return link_e, mem_e

    def make_space_for(self, x: int, core: int, m: int, t: float, avoid: list[int]):
        """Evict (with write-back) from ``core``'s memory for ``m`` until ``x`` fits; (time, energies)."""
        mem = self.mem
        inst = self.top_of(core, m)
        t_fit = mem.earliest_fit(self.top_of(core, self.own[x]), x, t)
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
        ranked = sorted(candidates, key=lambda y: ((int(prio[y, inst]) if has[y, inst] else int(prio[y].sum()))
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
        if write_back and not self.mem.holds[self.top_of(self.offchip, m), x]:
            end, link_e, mem_e, _, _, _ = self.transfer(x, self.offchip, m, [], sender=core, kind=kind)
            cur = max(t, end)
        self.mem.remove(self.top_of(core, m), x, t)
        return cur, link_e, mem_e

    def remove_all(self, core: int, m: int, t: float, keep: list[int]):
        keep_set = set(keep)
        link_e = mem_e = 0
        for y in self.mem.stored_at(self.top_of(core, m), t):
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
    def needed(self, n: int) -> list[tuple[int, int]]:
        p = self.p
        too_large = p.too_large[n]
        ot = p.operand_tensor
        out = [(int(ot[n, m]), m) for m in p.constants[n] if m not in too_large]
        out += [(int(ot[src, O]), m) for src, m in self.g.inputs[n] if m not in too_large]
        out.sort(key=lambda xm: self.size[xm[0]])
        return out

    def run(self) -> ScheduleResult:
        p, g, mem = self.p, self.g, self.mem
        e = self.e
        rank = np.full(p.nb_cns, -1, dtype=np.int64)
        rank[p.order] = np.arange(len(p.order))
        self.init_priorities()
        self.init_offchip()
        for x, core, m in p.prefetch:
            if not mem.holds[self.top_of(core, self.own[x]), x]:
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
        for _ in range(p.nb_cns):
            if not heap:
                raise InputError(None, "CN graph", "no CN is ready although some are unscheduled (a cycle?)")
            _, n, ready = heapq.heappop(heap)
            self.cn_now = n
            k = cores[n]
            start = max(idle[k], ready)
            needed = self.needed(n)
            keep = [x for x, _ in needed]
            too_large = p.too_large[n]
            t = start
            # 1. clear memories of streamed operands
            clear_link = clear_mem = 0
            for m in too_large:
                t, le, me = self.remove_all(k, m, t, keep)
                clear_link += le
                clear_mem += me
            e["total_eviction_to_offchip_link_energy"] += clear_link
            e["total_eviction_to_offchip_memory_energy"] += clear_mem
            # 2. fetch inputs
            for x, m in needed:
                end_x, le, me, evl, evm, from_off = self.transfer(x, k, m, keep)
                t = max(t, end_x)
                if from_off:
                    e["total_cn_offchip_link_energy"] += le
                    e["total_cn_offchip_memory_energy"] += me
                else:
                    e["total_core_to_core_link_energy"] += le
                    e["total_core_to_core_memory_energy"] += me
                e["total_eviction_to_offchip_link_energy"] += evl
                e["total_eviction_to_offchip_memory_energy"] += evm
            # 3. block the DRAM link for streamed operands
            t = self.block(n, k, t, runtime[n])
            # 4. room for the output
            target = self.offchip if O in too_large else k
            out = int(ot[n, O])
            t_done, evl, evm = self.make_space_for(out, target, O, t, keep)
            e["total_eviction_to_offchip_link_energy"] += evl
            e["total_eviction_to_offchip_memory_energy"] += evm
            start = t_done
            end = start + runtime[n]
            out_mem = self.top_of(target, O)
            mem.add(out_mem, out, start, end)
            # 5. record
            self.start[n], self.end[n] = start, end
            self.scheduled[n] = True
            idle[k] = end
            e["total_cn_onchip_energy"] += float(p.onchip_energy[n])
            e["total_cn_offchip_memory_energy"] += float(p.offchip_energy[n])
            # 6. priorities and removals
            self.release(n, k, needed, end)
            # 7. final outputs to DRAM
            if g.sink[n]:
                _, le, me = self.remove(out, k, self.own[out], end, write_back=True, kind="sink_writeback")
                e["total_sink_layer_output_offchip_link_energy"] += le
                e["total_sink_layer_output_offchip_memory_energy"] += me
            # 8. new candidates
            for s in g.successors[n]:
                waiting[s] -= 1
                ready_at[s] = max(ready_at[s], end)
                if waiting[s] == 0:
                    heapq.heappush(heap, (self._rank(rank, s), s, float(ready_at[s])))
        return self.result()

    def _rank(self, rank: np.ndarray, n: int) -> int:
        r = int(rank[n])
        if r < 0:
            raise InputError(None, "scheduling order",
                             f"CN ({int(self.p.layer[n])}, {int(self.p.sub[n])}) is not in the scheduling order")
        return r

    def release(self, n: int, k: int, needed: list[tuple[int, int]], end: float) -> None:
        """Lower the priorities of the tensors ``n`` used; free those nobody needs any more."""
        prio, mem, p = self.prio, self.mem, self.p
        for x, m in needed:
            prio[x, self.top_of(k, m)] -= 1
        for x, _ in needed:
            if prio[x].sum() != 0:
                continue
            for inst in np.flatnonzero(mem.holds[:, x]).tolist():
                t_rm = end
                if self.own[x] == O:
                    origin = int(p.tensor_origin[x])
                    succ = [s for s, _ in self.g.outputs[origin]]
                    if self.offchip not in self.mem_core_sets[inst]:
                        succ = [s for s in succ if self.cores[s] in self.mem_core_sets[inst]]
                    ends = [self.end[s] for s in succ if self.scheduled[s]]
                    t_rm = max(ends) if ends else end
                core = self.mem_cores[inst][0]
                mem.remove(self.top_of(core, self.own[x]), x, t_rm)

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
