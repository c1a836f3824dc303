"""Data movement of a multi-core schedule: bringing a tensor into a core's memory over the links
(from DRAM or another core) or between two memories of one core, making room by evicting with
write-back to DRAM, and freeing tensors nobody needs any more."""

from __future__ import annotations

import math

from zigzag.errors import InputError
from zigzag.multicore.schedule.problem import O
from zigzag.multicore.schedule.result import Transfer
from zigzag.multicore.schedule.state import ScheduleState


_new_tuple = tuple.__new__  # builds a named tuple without its Python-level constructor


class DataMovement(ScheduleState):
    """Transfers, evictions and frees on a :class:`ScheduleState`."""

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


def _occupancy(bandwidth: float) -> int:
    """The activity a transfer adds to a link: all of its bandwidth, or nothing if that is infinite."""
    return 0 if math.isinf(bandwidth) else int(bandwidth)
