"""Mapping candidates shared by hardware variants that differ only in their memories' energy costs.

A layer's LOMA search on one spatial mapping enumerates the loop orderings, allocates them to the
memory levels and computes, per candidate, the word accesses of every memory level and the
latency. None of that reads a memory's energy per access (``r_cost``, ``w_cost``) or its area:
they only enter at the end, as ``energy = sum(accesses x cost) + MAC energy``. So variants whose
accelerators are equal except for those fields can share a *candidate table* -- every allocated
candidate of every chunk with its accesses, latency and exactness flag -- and each variant only
*re-scores* it: its energies from the table's accesses and its own costs
(:func:`~zigzag.mapping_search.batched.model.access_energy`, the same float operations as the unshared
path), then the same reduction over **all** candidates (the best mapping under a criterion can
change when the costs change, so nothing is pruned before the costs are known), then the winner
re-evaluated with the scalar model under the variant's own accelerator (re-costed when it won
for other costs; re-derived from the scalar model's bandwidth-free intermediates when it won on
a variant of the same structure, ``zigzag.mapping_search.batched.siblings``). Candidates
the batched model flags inexact are evaluated with the scalar model under that accelerator, as
the unshared path does. The result is the unshared path's, bit for bit
(tests/unit/mapping_search/test_shared_candidates.py, test_bandwidth_siblings.py).

Used by hardware sweeps (:class:`SharedCandidates`, one per batch job, in memory only).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from zigzag.cost.array import array_cost
from zigzag.cost.model import analyse, evaluate
from zigzag.cost.model.movement import memory_energy
from zigzag.errors import MappingError
from zigzag.mapping_search.batched import (
    DEFAULT_CHUNK,
    BatchMismatch,
    _better,
    assigned_chunks,
    best_index,
    candidate_loops,
)
from zigzag.mapping_search.batched.candidates import LoopTable, temporal_mapping_of
from zigzag.mapping_search.batched.model import BatchCostModel, access_energy
from zigzag.mapping_search.batched.siblings import (
    Siblings,
    carried,
    costed_fields,
    memory_sizes,
    kept_sibling_sets,
    replaced,
    told_part,
    with_memories,
)
from zigzag.mapping_search.batched.no_fit import no_fit_diagnosis
from zigzag.mapping_search.batched.structural import Allocations
from zigzag.mapping_search.batched.together import (
    ReadyTables,
    accelerator_key,
    sibling_chunk,
    taken_latencies,
    to_make,
)
from zigzag.mapping_search.loma import no_fit_message

#: the fields of a memory that only set its energy and area (not what a mapping does on it)
COST_FIELDS = ("r_cost", "w_cost", "area", "cost_source", "cost_note")


def cost_free_job(job: dict) -> dict:
    """A layer job (``zigzag.mapping_search.jobs.layer_job``) without its memories' cost fields: the key
    of what variants differing only in those costs share."""
    accelerator = job["accelerator"]
    memories = {
        name: {k: v for k, v in memory.items() if k not in COST_FIELDS}
        for name, memory in accelerator["memories"].items()
    }
    return {**job, "accelerator": {**accelerator, "memories": memories}}


@dataclass(frozen=True)
class _Chunk:
    ids: np.ndarray
    cuts: dict
    accesses: list
    latency: np.ndarray
    exact: np.ndarray


@dataclass(frozen=True)
class CandidateTable:
    """Every allocated candidate of one layer on one spatial mapping, cost-free."""

    loops: LoopTable
    fractional: (
        dict  # the spatial mapping per memory level (zigzag.mapping_search.spatial_mapping.convert)
    )
    integer: dict
    chunks: tuple[_Chunk, ...]
    memories: tuple[str, ...]  # the memory of each (operand, level) of the accesses
    mac_energy: float
    count: int
    #: (chunk, row) of a candidate that won for some costs -> its scalar result under those costs
    winners: dict = field(default_factory=dict, compare=False)
    #: layer name -> why no candidate fits (a table without candidates)
    no_fit: dict = field(default_factory=dict, compare=False)
    #: the memo of the table's structure (``zigzag.mapping_search.batched.structural.Allocations.memo``)
    #: or the table's own: ("no_fit", memory sizes...) -> the no-fit diagnosis; "winners" -> the
    #: scalar details of winning candidates (:func:`score_table`)
    memo: dict = field(default_factory=dict, compare=False)


class SharedCandidates:
    """Candidate tables kept in memory, least recently used dropped beyond ``size`` tables or
    ``budget`` bytes of arrays (a table larger than the budget is used once, not kept), and the
    last ``size`` layer results by job key (a layer repeated in a network is read once)."""

    def __init__(self, size: int = 512, budget: int = 256 * 2**20):
        self.size = size
        self.budget = budget
        self.tables: OrderedDict = OrderedDict()
        self.table_bytes: dict = {}  # the arrays' bytes of each table kept
        self.results: OrderedDict = OrderedDict()
        self.nbytes = 0
        self.built = 0
        self.reused = 0
        #: allocated candidates shared by variants of one structure (sizes, bandwidths apart)
        self.allocations = Allocations()
        #: the memory sizes and port bandwidths of the variants to come (:meth:`expect`)
        self.siblings = Siblings()
        #: the tables of told siblings, made with their structure's first variant's
        self.ready = ReadyTables()

    def expect(self, documents) -> None:
        """Tell the accelerator documents of the variants still to come (a batch job knows them):
        the latencies of a variant's candidates are then computed, in the same pass, under the
        sizes and bandwidths of those that move the same data
        (``zigzag.mapping_search.batched.siblings``). A hint only: results are the same without it."""
        self.siblings.expect(documents)

    def expect_only(self, documents) -> None:
        """Tell the documents of the next variants in place of those told before: the siblings
        told, their ready tables not yet taken and what their structures derived from them are
        dropped. A batch job tells its variants a window at a time (``zigzag.sweep.runner``):
        finding a variant's siblings among those told costs in proportion to their number, for
        every layer of every variant, so telling a whole large batch at once made its cost
        grow with the square of its size. A hint only, as :meth:`expect`."""
        self.siblings = Siblings()
        self.ready = ReadyTables(self.ready.budget)
        self.allocations.forget_siblings()
        self.siblings.expect(documents)

    def table(self, key, build):
        """The table kept under ``key``, else ``build()``'s (kept if it fits)."""
        if key in self.tables:
            self.tables.move_to_end(key)
            self.reused += 1
            return self.tables[key]
        table = build()
        self.built += 1
        size = _nbytes(table)
        if size <= self.budget:
            self.tables[key] = table
            self.table_bytes[key] = size
            self.nbytes += size
            while len(self.tables) > self.size or self.nbytes > self.budget:
                self.nbytes -= self.table_bytes.pop(self.tables.popitem(last=False)[0])
        return table

    def result(self, key: str):
        """The layer result kept under a job key, or None."""
        return self.results.get(key)

    def keep_result(self, key: str, result) -> None:
        """Keep a layer result under its job key."""
        self.results[key] = result
        if len(self.results) > self.size:
            self.results.popitem(last=False)


def _nbytes(table: CandidateTable) -> int:
    arrays = [
        a
        for part in table.chunks
        for a in (
            part.ids,
            part.latency,
            part.exact,
            *part.cuts.values(),
            part.accesses.value,
        )
    ]
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


def build_table(
    layer,
    accelerator,
    fractional,
    integer,
    *,
    lpf_limit,
    even,
    access_same_data_considered_as_no_access,
    spatial_mapping_array,
    chunk: int = DEFAULT_CHUNK,
    allocations=None,
    siblings=(),
    ready=None,
) -> CandidateTable:
    """The candidate table of one spatial mapping; raises :class:`Unsupported` where the batched
    search would (the caller then takes the unshared path). ``allocations``: ``(Allocations,
    structure key)`` to take the allocated candidates of variants of the same structure
    (``zigzag.mapping_search.batched.structural``; same table); ``siblings``: with it, the memory
    sizes and port bandwidths of variants to come (:meth:`SharedCandidates.expect`): the
    latencies of those whose sizes keep a chunk's allocations are computed in the same pass and
    kept for them. ``ready``: a :class:`~zigzag.mapping_search.batched.together.ReadyTables`
    (with ``allocations`` and ``siblings`` as :meth:`Siblings.told` gives them): the table is
    taken from it when a sibling made it, and the tables of the siblings told are made in the
    same pass (``zigzag.mapping_search.batched.together``)."""
    structure = {} if allocations is None else allocations[0].memo(allocations[1])
    if ready is not None and allocations is not None:
        order = structure.get("ready order")
        key = None if order is None else accelerator_key(order, accelerator)
        if key is not None:
            told_part(structure).setdefault("ready done", set()).add(key)
            table = ready.take((allocations[1], key))
            if table is not None:
                return table
    constraints, loops, assigner = candidate_loops(
        layer,
        accelerator,
        fractional,
        lpf_limit=lpf_limit,
        even=even,
        memo=None if allocations is None else structure,
    )
    if allocations is None:
        source = (
            (ids, cuts, None) for ids, cuts in assigned_chunks(loops, assigner, constraints, chunk)
        )
    else:
        source = allocations[0].chunks(allocations[1], loops, assigner, constraints, chunk)
    model = None
    sets = []  # the siblings' memory sets, in the model's terms
    planned = {}  # the siblings' ready tables being made: plan index -> their chunks
    kept, count, moves, entries = [], 0, [], []
    for ids, cuts, entry in source:
        count += len(ids)
        if model is None:
            model = BatchCostModel(
                layer,
                accelerator,
                fractional,
                integer,
                loops,
                access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
                spatial_mapping_array=spatial_mapping_array,
            )
            if allocations is not None and siblings:  # the same for the models of a structure
                told = ("siblings", len(siblings), carried(model))
                derived = told_part(structure)
                if told not in derived:
                    derived[told] = kept_sibling_sets(model, siblings)
                sets = derived[told]
                if ready is not None and sets:
                    sets, found, planned = to_make(structure, model, siblings, sets, told, ready)
        moved = None if entry is None else entry.movement
        if entry is not None and moved is None:  # kept for the next variant of this structure
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                moved = model.movements(ids, cuts, True)
            moves.append((entry, moved))
        held = _held(sets, entry, model)
        accesses, latency, exact = model.evaluate_accesses(
            ids, cuts, moved, None if entry is None else entry.latency, held
        )
        kept.append(_Chunk(ids, cuts, accesses, latency, exact))
        wanted = [found[i][0] for i in planned if found[i][0] in held]
        latencies = taken_latencies(model, entry.latency, wanted) if wanted else {}
        for i in list(planned):  # the siblings' own figures of these candidates
            made = None
            if found[i][0] in latencies:
                made = sibling_chunk(accesses, latencies[found[i][0]], found[i])
            if made is None:  # not computed for this chunk: that sibling builds its own table
                del planned[i]
            else:
                planned[i].append(_Chunk(ids, cuts, *made))
        if entry is not None:
            entries.append(entry)
    for entry, moved in moves:  # once the allocation table is complete (and kept)
        allocations[0].keep_movement(allocations[1], entry, moved)
    for entry in entries:  # what the latency kept for the next variants counts in the budget
        allocations[0].count_latency(allocations[1], entry)
    memories = tuple(model.level_memories()) if model is not None else ()
    mac_energy = model.mac_energy if model is not None else 0.0
    for i, chunks in planned.items():
        table = CandidateTable(
            loops, fractional, integer, tuple(chunks), memories, mac_energy, count, memo=structure
        )
        ready.put((allocations[1], found[i][1]), table, _nbytes(table))
    return CandidateTable(
        loops, fractional, integer, tuple(kept), memories, mac_energy, count, memo=structure
    )


def _held(sets: list, entry, model) -> list:
    """The memory sets of ``sets`` under which ``entry``'s candidates keep their allocation (those
    with the model's own sizes, and those whose sizes lie inside the entry's bounds)."""
    if not sets:
        return sets
    own = tuple(float(lv.size) for info in model.ops.values() for lv in info.operand.levels)
    names = model.level_memories()
    held = entry.held  # sizes -> whether they keep every candidate's allocation
    for sizes in {s[0] for s in sets} - held.keys() - {own}:
        held[sizes] = entry.holds(dict(zip(names, sizes)))
    return [s for s in sets if s[0] == own or held[s[0]]]


def score_table(
    table: CandidateTable,
    layer,
    accelerator,
    fractional,
    integer,
    *,
    opt,
    lpf_limit,
    even,
    access_same_data_considered_as_no_access,
    spatial_mapping_array,
):
    """The best candidate of ``table`` under ``accelerator``'s costs: ``(CostResult, count)`` as
    :func:`zigzag.mapping_search.batched.search_temporal_mappings` returns."""
    costs_of = {m.name: (m.r_cost, m.w_cost) for m in accelerator.memories}
    costs = [costs_of[name] for name in table.memories]

    def scalar_eval(row, cut_row, detail=False):
        """The scalar model's result of one candidate (``detail``: its ``CostDetail``)."""
        return (analyse if detail else evaluate)(
            layer,
            accelerator,
            fractional,
            integer,
            temporal_mapping_of(table.loops, row, cut_row),
            access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
            spatial_mapping_array=spatial_mapping_array,
        )

    best = None
    for number, part in enumerate(table.chunks):
        n = len(part.ids)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            energy, exact = access_energy(part.accesses, costs, table.mac_energy, n, part.exact)
        latency = part.latency
        bad = np.nonzero(~exact)[0]
        if bad.size:  # as the unshared path: these candidates' figures come from the scalar model
            energy, latency = energy.copy(), latency.copy()
            for i in bad:
                result = scalar_eval(
                    part.ids[i], {op: c[i].tolist() for op, c in part.cuts.items()}
                )
                energy[i], latency[i] = result.energy_total, result.latency_total2
        i = best_index(energy, latency, opt)
        candidate = (
            float(energy[i]),
            float(latency[i]),
            part.ids[i],
            {op: c[i].tolist() for op, c in part.cuts.items()},
            (number, i),
        )
        if best is None or _better(candidate[0], candidate[1], best[0], best[1], opt):
            best = candidate
    if best is None:  # why nothing fits reads sizes, not costs: found once per table and layer name
        if layer.name not in table.no_fit:
            # nor bandwidths: diagnosed once per structure and sizes, named per accelerator
            sizes = ("no_fit", *memory_sizes(accelerator))
            if sizes not in table.memo:
                table.memo[sizes] = no_fit_diagnosis(
                    layer, accelerator, fractional, even=even, lpf_limit=lpf_limit
                )
            table.no_fit[layer.name] = str(
                no_fit_message(layer, accelerator.name, table.memo[sizes])
            )
        raise MappingError(table.no_fit[layer.name])
    known = table.winners.get(best[4])
    if known is not None:  # this candidate won for other costs: its scalar result, re-costed
        result = recost(known, layer, accelerator, spatial_mapping_array)
    else:
        result = _winner(table, layer, accelerator, best, scalar_eval, spatial_mapping_array)
        table.winners[best[4]] = result
    if result.energy_total != best[0] or result.latency_total2 != best[1]:
        raise BatchMismatch(
            f"shared and scalar figures differ for layer {layer.name}: {best[0]!r}/{best[1]!r} vs "
            f"{result.energy_total!r}/{result.latency_total2!r}"
        )
    return result, table.count


#: winners' scalar details kept per structure (the last ones)
WINNERS = 256


def _winner(table, layer, accelerator, best, scalar_eval, spatial_mapping_array):
    """The scalar result of the winning candidate ``best`` (as :func:`score_table` keeps it) under
    ``accelerator``: when it won on a variant of the same structure (memories' sizes, bandwidths
    and costs apart), from that variant's scalar intermediates
    (:func:`~zigzag.mapping_search.batched.siblings.with_memories`), else by the scalar model."""
    winners = table.memo.setdefault("winners", OrderedDict())
    cuts = tuple((op, tuple(c)) for op, c in sorted(best[3].items()))
    key = (best[2].tobytes(), cuts)
    known = winners.get(key)
    if known is not None:
        winners.move_to_end(key)
        return with_memories(known[0], layer, accelerator, spatial_mapping_array, known[1])
    detail = scalar_eval(best[2], best[3], detail=True)
    winners[key] = (detail, {})  # its scalar details, and what its siblings re-derive of them
    if len(winners) > WINNERS:
        winners.popitem(last=False)
    return detail.result


def recost(result, layer, accelerator, spatial_mapping_array):
    """``result`` (the scalar model's, on an accelerator equal to ``accelerator`` but for its
    memories' costs) under ``accelerator``: the memory energies from the same word accesses by
    the scalar model's own function, and the array's figures, as ``zigzag.cost.model.analyse``
    computes them; every other figure of a result does not read a memory's costs."""
    memories = {m.name: m for m in accelerator.memories}
    costs = SimpleNamespace(
        operands={
            op: SimpleNamespace(
                levels=[
                    SimpleNamespace(r_cost=memories[name].r_cost, w_cost=memories[name].w_cost)
                    for name in names
                ]
            )
            for op, names in result.memory_names.items()
        }
    )
    energies = memory_energy(costs, result.memory_word_access)
    array = array_cost(layer, accelerator, spatial_mapping_array)
    return replaced(result, **costed_fields(layer, accelerator, array, energies))
