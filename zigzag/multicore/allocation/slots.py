"""The steady-state slot model of the constraint-optimisation allocation, solved with CP-SAT.

One *steady state* is a set of computation nodes (CNs) that repeats ``iterations`` times. Time is
cut into as many *slots* as there are CNs; every CN takes one slot and is split along its
inter-core tiling dim over ``k`` cores (``k`` one of the splits allowed for it); a core runs at
most one CN part per slot; a slot lasts as long as its longest part; a CN's slot comes after the
slots of the CNs it depends on; the CNs of one layer use the same cores; the weights a core
holds (a CN's weights divided over its ``k`` parts) fit its weight memory. The objective is the
latency of ``iterations`` repetitions, where consecutive repetitions may overlap by the idle
slots that every core has at the start and end of one repetition (the smallest such idle time
over the cores). See docs/models/multi-core.md, "Constraint-optimisation allocation".

The model is exact integer arithmetic, so OR-Tools' CP-SAT solves it as stated (maxima, minima
and products of a 0/1 decision with an integer are native there); one search worker and a fixed
seed make the answer the same on every run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from zigzag.errors import InputError

#: the tie-break's budget in CP-SAT's deterministic time units (the same answer on any machine)
TIE_BREAK_WORK = 5.0


@dataclass(frozen=True)
class SlotProblem:
    """One steady state to allocate.

    ``runtime[(node, core, k)]``: cycles of one of the ``k`` parts of ``node`` on ``core``, given
    only for allowed combinations; ``weight_bits[node]``: the weights the node's layer keeps on a
    core (counted on one CN per layer, zero on the others); ``capacity_bits[core]``: the core's
    weight memory; ``dependencies``: ``(producer, consumer)`` node pairs; ``groups``: the nodes of
    one layer (same cores); ``energy[(node, core)]``: the node's energy on the core (tie-break);
    ``link_cycles[(node, core, k)]``: per DRAM link that several cores share, the cycles one of the
    ``k`` parts keeps it busy (a slot lasts at least the sum over the parts it runs on the link).
    """

    nodes: tuple[int, ...]
    cores: tuple[int, ...]
    runtime: Mapping[tuple[int, int, int], int]
    weight_bits: Mapping[int, int]
    capacity_bits: Mapping[int, int]
    dependencies: tuple[tuple[int, int], ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()
    iterations: int = 1
    energy: Mapping[tuple[int, int], float] = field(default_factory=dict)
    link_cycles: Mapping[tuple[int, int, int], Mapping[int, int]] = field(default_factory=dict)

    def splits(self, node: int) -> tuple[int, ...]:
        """The part counts allowed for ``node`` (on at least one core)."""
        return tuple(sorted({k for (n, _, k) in self.runtime if n == node}))


@dataclass(frozen=True)
class SlotAllocation:
    """The solver's answer: ``parts`` as ``(slot, core, node)`` sorted, and its objective."""

    parts: tuple[tuple[int, int, int], ...]
    objective: int
    optimal: bool
    seconds: float
    status: str

    def cores_of(self, node: int) -> tuple[int, ...]:
        """The cores ``node`` runs on."""
        return tuple(sorted(c for _, c, n in self.parts if n == node))


def solve_slots(
    problem: SlotProblem,
    *,
    time_limit: float,
    gap: float,
    tie_break: bool = True,
    seed: int = 0,
) -> SlotAllocation:
    """Allocate one steady state: the slot model at its optimum (within ``gap``, ``time_limit``;
    their defaults are the run description's, :class:`zigzag.multicore.pipeline.ConstraintOptimisation`).

    With ``tie_break``, a second solve keeps the best objective and picks, among the allocations
    reaching it, the one of least estimated energy (each node's energy on its cores, split
    evenly over its parts) that it finds within a fixed amount of deterministic solver work;
    without an energy table, or when the first solve is not proven optimal, the first answer.
    """
    if time_limit <= 0:
        raise InputError(None, "time_limit", f"{time_limit} is not positive; give seconds > 0")
    if not 0 <= gap < 1:
        raise InputError(None, "gap", f"{gap} is not in [0, 1); give a relative gap such as 1e-4")
    started = time.perf_counter()
    model = _SlotModel(problem)
    status, objective = model.solve(time_limit, gap, seed)
    optimal = status == "OPTIMAL"
    if tie_break and problem.energy and optimal:
        model.fix_objective(objective)
        model.minimise_energy()
        model.solve(time_limit, 0.0, seed, work=TIE_BREAK_WORK, required=False)
    return SlotAllocation(model.parts(), objective, optimal, time.perf_counter() - started, status)


def why_infeasible(problem: SlotProblem) -> str:
    """What makes ``problem`` infeasible, with the node, core and bit counts involved."""
    for node in problem.nodes:
        cores = {c for (n, c, _) in problem.runtime if n == node}  # never empty (checked before)
        bits = int(problem.weight_bits.get(node, 0))
        if bits:
            part = min(math.ceil(bits / k) for k in problem.splits(node))
            largest = max(int(problem.capacity_bits[c]) for c in cores)
            if part > largest:
                return (
                    f"the weights of node {node} ({bits} bits, at least {part} bits per core when "
                    f"split) do not fit the weight memory of any of its cores {sorted(cores)} "
                    f"(largest {largest} bits); give a larger weight memory or more cores"
                )
    total = sum(int(b) for b in problem.weight_bits.values())
    capacity = sum(int(problem.capacity_bits[c]) for c in problem.cores)
    return (
        f"the stack's weights ({total} bits) cannot be divided among the cores' weight memories "
        f"({capacity} bits in all); give a larger weight memory, more cores, or smaller stacks"
    )


class _SlotModel:
    """The CP-SAT model of a :class:`SlotProblem` and its last solution."""

    def __init__(self, problem: SlotProblem):
        from ortools.sat.python import cp_model

        self.cp = cp_model
        self.p = problem
        self.m = cp_model.CpModel()
        self.solution: dict | None = None
        nodes, cores = problem.nodes, problem.cores
        slots = range(len(nodes))
        m = self.m
        if not nodes:
            raise InputError(None, "steady state", "has no computation node to allocate")
        for node in nodes:
            if not problem.splits(node):
                raise InputError(
                    None, f"node {node}", "can run on none of the cores; check its core_allocation"
                )
        # split[n, k]: node n is cut into k parts
        self.split = {
            (n, k): m.NewBoolVar(f"split_{n}_{k}") for n in nodes for k in problem.splits(n)
        }
        for n in nodes:
            m.AddExactlyOne(self.split[n, k] for k in problem.splits(n))
        parts_of = {n: sum(k * self.split[n, k] for k in problem.splits(n)) for n in nodes}
        # x[c, s, n]: a part of n runs on c in slot s; at[s, n]: n's slot
        self.x = {
            (c, s, n): m.NewBoolVar(f"x_{c}_{s}_{n}") for c in cores for s in slots for n in nodes
        }
        self.at = {(s, n): m.NewBoolVar(f"at_{s}_{n}") for s in slots for n in nodes}
        self.on = {}
        for n in nodes:
            m.AddExactlyOne(self.at[s, n] for s in slots)
            for c in cores:
                on = sum(self.x[c, s, n] for s in slots)
                self.on[c, n] = on
                allowed = [
                    self.split[n, k] for k in problem.splits(n) if (n, c, k) in problem.runtime
                ]
                m.Add(on <= sum(allowed)) if allowed else m.Add(on == 0)
                for s in slots:
                    m.AddImplication(self.x[c, s, n], self.at[s, n])
            m.Add(sum(self.on[c, n] for c in cores) == parts_of[n])
        for c in cores:
            for s in slots:
                m.AddAtMostOne(self.x[c, s, n] for n in nodes)
        for group in problem.groups:
            for a, b in zip(group, group[1:]):
                for c in cores:
                    m.Add(self.on[c, a] == self.on[c, b])
        # empty slots last (an empty slot lasts 0 cycles, so moving it to the end changes nothing)
        used = [m.NewBoolVar(f"used_{s}") for s in slots]
        for s in slots:
            for n in nodes:
                m.AddImplication(self.at[s, n], used[s])
            m.AddBoolOr([self.at[s, n] for n in nodes]).OnlyEnforceIf(used[s])
        for s in slots[1:]:
            m.AddImplication(used[s], used[s - 1])
        slot_of = {n: sum(s * self.at[s, n] for s in slots) for n in nodes}
        for producer, consumer in problem.dependencies:
            m.Add(slot_of[consumer] >= slot_of[producer] + 1)
        self._weights(nodes, cores)
        self._latency(nodes, cores, slots)

    def _weights(self, nodes, cores) -> None:
        """Each core's weights (ceil(bits / k) per part it holds) fit its weight memory."""
        p, m = self.p, self.m
        for c in cores:
            terms = []
            for n in nodes:
                bits = int(p.weight_bits.get(n, 0))
                if bits <= 0:
                    continue
                for k in p.splits(n):
                    both = m.NewBoolVar(f"w_{c}_{n}_{k}")
                    m.Add(both >= self.split[n, k] + self.on[c, n] - 1)
                    terms.append(math.ceil(bits / k) * both)
            if terms:
                m.Add(sum(terms) <= int(p.capacity_bits[c]))

    def _latency(self, nodes, cores, slots) -> None:
        """Slot lengths, the repetition's latency and the overlap of consecutive repetitions."""
        p, m = self.p, self.m
        busiest = max((c for v in p.link_cycles.values() for c in v.values()), default=0)
        # a slot's length: at most its longest part, or every core's part queued on one link
        horizon = max(max(p.runtime.values()), busiest * len(cores))
        span = horizon * len(nodes)  # bounds a repetition's latency
        runtime_on = {}
        for n in nodes:
            for c in cores:
                runtime_on[n, c] = sum(
                    p.runtime.get((n, c, k), 0) * self.split[n, k] for k in p.splits(n)
                )
        busy = {}
        idle_at = {}
        length = {}
        for s in slots:
            per_core = []
            for c in cores:
                t = m.NewIntVar(0, horizon, f"t_{c}_{s}")
                busy[c, s] = sum(self.x[c, s, n] for n in nodes)
                for n in nodes:
                    m.Add(t == runtime_on[n, c]).OnlyEnforceIf(self.x[c, s, n])
                idle = m.NewBoolVar(f"free_{c}_{s}")
                m.Add(busy[c, s] == 0).OnlyEnforceIf(idle)
                m.Add(busy[c, s] >= 1).OnlyEnforceIf(idle.Not())
                m.Add(t == 0).OnlyEnforceIf(idle)
                idle_at[c, s] = idle
                per_core.append(t)
            length[s] = m.NewIntVar(0, horizon, f"len_{s}")
            if p.link_cycles:  # at least its longest part and its link loads (the minimum is taken:
                for t in per_core:  # a longer slot only lengthens the objective)
                    m.Add(length[s] >= t)
            else:
                m.AddMaxEquality(length[s], per_core)
        self._shared_links(nodes, cores, slots, length, idle_at, horizon)
        latency = sum(length[s] for s in slots)
        # idle time of each core before its first part and after its last part
        idle_totals = []
        first_slot = {}
        for c in cores:
            used = sum(busy[c, s] for s in slots)
            terms = []
            leads = []
            for s in slots:
                upto = sum(busy[c, t] for t in range(s + 1))
                before = sum(busy[c, t] for t in range(s))
                lead = m.NewBoolVar(f"lead_{c}_{s}")
                m.Add(upto == 0).OnlyEnforceIf(lead)
                m.Add(upto >= 1).OnlyEnforceIf(lead.Not())
                leads.append(lead)
                tail = m.NewBoolVar(f"tail_{c}_{s}")
                m.Add(before == used).OnlyEnforceIf(tail)
                m.Add(before <= used - 1).OnlyEnforceIf(tail.Not())
                for flag, name in ((lead, "lead"), (tail, "tail")):
                    share = m.NewIntVar(0, horizon, f"{name}_len_{c}_{s}")
                    m.Add(share == length[s]).OnlyEnforceIf(flag)
                    m.Add(share == 0).OnlyEnforceIf(flag.Not())
                    terms.append(share)
            first_slot[c] = sum(leads)  # slots before the core's first part (all of them if unused)
            total = m.NewIntVar(0, 2 * span, f"idle_{c}")
            m.Add(total == sum(terms))
            idle_totals.append(total)
        # interchangeable cores (same cycles, energy and weight memory for every node) are used in
        # the order of their first part: any allocation has such a twin, so no optimum is lost
        for a, b in _interchangeable_pairs(p):
            m.Add(first_slot[a] <= first_slot[b])
        overlap = m.NewIntVar(0, 2 * span, "overlap")
        m.AddMinEquality(overlap, idle_totals)
        n_it = int(p.iterations)
        self.objective = n_it * latency - (n_it - 1) * overlap
        m.Minimize(self.objective)

    def _shared_links(self, nodes, cores, slots, length, idle_at, horizon) -> None:
        """A slot lasts at least the cycles its parts keep each shared DRAM link busy, summed."""
        p, m = self.p, self.m
        links = sorted({lk for v in p.link_cycles.values() for lk in v})
        for lk in links:
            users = sorted({c for (_, c, _), v in p.link_cycles.items() if lk in v})
            on_link = {
                (n, c): sum(
                    p.link_cycles.get((n, c, k), {}).get(lk, 0) * self.split[n, k]
                    for k in p.splits(n)
                )
                for n in nodes
                for c in users
            }
            for s in slots:
                loads = []
                for c in users:
                    load = m.NewIntVar(0, horizon, f"link_{lk}_{c}_{s}")
                    for n in nodes:
                        m.Add(load == on_link[n, c]).OnlyEnforceIf(self.x[c, s, n])
                    m.Add(load == 0).OnlyEnforceIf(idle_at[c, s])
                    loads.append(load)
                m.Add(length[s] >= sum(loads))

    def solve(
        self,
        time_limit: float,
        gap: float,
        seed: int,
        *,
        work: float | None = None,
        required: bool = True,
    ) -> tuple[str, int | None]:
        """Solve; keep the solution found (or, when not ``required`` and none is found, the previous one)."""
        solver = self.cp.CpSolver()
        solver.parameters.max_time_in_seconds = float(time_limit)
        if work is not None:
            solver.parameters.max_deterministic_time = float(work)
        solver.parameters.relative_gap_limit = float(gap)
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = int(seed)
        code = solver.Solve(self.m)
        status = solver.StatusName(code)
        if code not in (self.cp.OPTIMAL, self.cp.FEASIBLE) and not required:
            return status, None
        if code not in (self.cp.OPTIMAL, self.cp.FEASIBLE):
            if code == self.cp.UNKNOWN:
                reason = (
                    f"no allocation found within {solver.WallTime():.1f} s; raise the time limit"
                )
            else:
                reason = why_infeasible(self.p)
            raise InputError(None, "constraint-optimisation allocation", reason)
        self.solution = {key: solver.BooleanValue(var) for key, var in self.x.items()}
        return status, int(round(solver.Value(self.objective)))

    def fix_objective(self, value: int) -> None:
        self.m.Add(self.objective <= value)

    def minimise_energy(self) -> None:
        """Second objective: the estimated energy of the allocation (node energy / parts, per core),
        then the fewest parts. Energies are counted in units of 1 / lcm(splits) so a node's parts
        add up to its energy exactly: a split ties with no split unless it changes the energy."""
        p, m = self.p, self.m
        unit = math.lcm(*(k for n in p.nodes for k in p.splits(n)))
        terms = []
        for n in p.nodes:
            for c in p.cores:
                if (n, c) not in p.energy:
                    continue
                for k in p.splits(n):
                    both = m.NewBoolVar(f"e_{c}_{n}_{k}")
                    m.Add(both >= self.split[n, k] + self.on[c, n] - 1)
                    terms.append(int(round(p.energy[n, c])) * (unit // k) * both)
        parts = [k * self.split[n, k] for n in p.nodes for k in p.splits(n)]
        most = sum(max(p.splits(n)) for n in p.nodes)
        m.Minimize(sum(terms) * (most + 1) + sum(parts))

    def parts(self) -> tuple[tuple[int, int, int], ...]:
        assert self.solution is not None
        return tuple(sorted((s, c, n) for (c, s, n), on in self.solution.items() if on))


def _interchangeable_pairs(p: SlotProblem) -> list[tuple[int, int]]:
    """Consecutive cores of each class of cores the model cannot tell apart."""

    def profile(core: int) -> tuple:
        return (
            tuple(sorted((n, k, v) for (n, c, k), v in p.runtime.items() if c == core)),
            tuple(sorted((n, v) for (n, c), v in p.energy.items() if c == core)),
            tuple(
                sorted(
                    (n, k, tuple(sorted(v.items())))
                    for (n, c, k), v in p.link_cycles.items()
                    if c == core
                )
            ),
            p.capacity_bits[core],
        )

    classes: dict[tuple, list[int]] = {}
    for core in p.cores:
        classes.setdefault(profile(core), []).append(core)
    return [(a, b) for members in classes.values() for a, b in zip(members, members[1:])]
