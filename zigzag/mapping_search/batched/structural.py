"""Allocated candidates shared by hardware variants whose memories differ in size, bandwidth or cost.

Cutting a loop ordering into memory levels (:class:`~zigzag.mapping_search.batched.memory_levels.BatchLevelAssigner`)
reads the layer, the spatial mapping, which memories hold which operands, and each memory's size --
never a bandwidth or a cost. And it reads a size only in comparisons ``bits <= size``. So a
variant of the same *structure* (the accelerator without its memories' sizes, bandwidths and costs)
can take another variant's allocation of a candidate as it is whenever its own sizes fall in the
interval where every comparison that candidate made comes out the same
(:meth:`~zigzag.mapping_search.batched.memory_levels.BatchLevelAssigner.assign_bounded` records it); only
the candidates outside are allocated again. The data each kept candidate moves (its footprints,
transfers and windows, before any bandwidth) depends on its cuts and the structure alone: when
every candidate of a chunk is taken as it is, that is taken too. The allocation itself reads
less than the structure (not the array, its bandwidths or the memories' ports): variants of
another array shape whose layer keeps the same spatial mapping per memory level (a depthwise
layer the array does not unroll further, say) take it too, by the key of what the assigner
reads (:func:`problem_key`); their data movement is their own. The figures are then computed
under the variant's own bandwidths, sizes and costs as the unshared search does, so the result is
the same bits (tests/unit/mapping_search/test_structural_sharing.py).

Used by hardware sweeps through :class:`~zigzag.mapping_search.batched.shared.SharedCandidates`.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace

import numpy as np

from zigzag.mapping_search.batched.candidates import constraint_mask, ordering_chunks
from zigzag.mapping_search.batched.latency import LatencyMemo
from zigzag.mapping_search.batched.model import movement_arrays
from zigzag.mapping_search.batched.siblings import forget_told

#: what the structure of an accelerator leaves out of its memories and their ports
SIZE_FIELDS = ("size",)
PORT_FIELDS = ("bandwidth_min", "bandwidth_max")


def structure_free_job(job: dict, cost_fields: tuple[str, ...]) -> dict:
    """A layer job (``zigzag.mapping_search.jobs.layer_job``) without its accelerator's name and its
    memories' sizes, bandwidths and ``cost_fields``: the key of what such variants share."""
    accelerator = job["accelerator"]
    drop = set(cost_fields) | set(SIZE_FIELDS)
    memories = {
        name: {
            **{k: v for k, v in memory.items() if k not in drop},
            "ports": [
                {k: v for k, v in port.items() if k not in PORT_FIELDS}
                for port in memory.get("ports", [])
            ],
        }
        for name, memory in accelerator["memories"].items()
    }
    rest = {k: v for k, v in accelerator.items() if k != "name"}
    return {**job, "accelerator": {**rest, "memories": memories}}


@dataclass
class _Allocated:
    """One chunk of orderings (those the user constraints allow) as first allocated."""

    ids: np.ndarray
    alive: np.ndarray
    cuts: dict
    bounds: dict  # memory name -> (low, high) sizes keeping each candidate's outcome
    movement: object = field(default=None)  # the model's data movement of the alive candidates
    latency: LatencyMemo = field(default_factory=LatencyMemo)  # what the latency reads of it
    size: int = 0  # bytes of its arrays
    counted: int = 0  # bytes of ``latency`` counted in ``size``
    held: dict = field(default_factory=dict)  # sizes of siblings -> :meth:`holds` (their caller's)

    #: memory name -> (highest low, lowest high): the sizes inside every candidate's bounds
    interval: dict = field(default_factory=dict)
    #: the allocated candidates' ids and cuts (read-only: every variant taking the chunk reads them)
    allocated: tuple = field(default=(), init=False)

    def __post_init__(self):
        arrays = [self.ids, self.alive, *self.cuts.values()]
        arrays += [a for pair in self.bounds.values() for a in pair]
        keep = np.nonzero(self.alive)[0]
        if keep.size == len(self.alive):  # all of them: the same arrays
            ids, cuts = self.ids, self.cuts
        else:
            ids, cuts = self.ids[keep], {op: c[keep] for op, c in self.cuts.items()}
            arrays += [ids, *cuts.values()]
        for array in (ids, *cuts.values()):
            array.setflags(write=False)
        self.allocated = (ids, cuts) if keep.size else ()
        self.size = sum(a.nbytes for a in arrays)
        self.interval = {
            name: (
                float(low.max()) if low.size else -np.inf,
                float(high.min()) if high.size else np.inf,
            )
            for name, (low, high) in self.bounds.items()
        }

    def nbytes(self) -> int:
        return self.size

    def holds(self, sizes: dict) -> bool:
        """Whether every candidate keeps its allocation under ``sizes`` (memory name -> size)."""
        return _inside(self, sizes)


class Allocations:
    """Allocation tables by structure key, least recently used dropped beyond ``budget`` bytes.
    A key keeps up to ``alternatives`` tables (the last built): a variant whose sizes leave some
    candidate's bounds in every one of them allocates all its candidates again (allocating a
    few costs about as much as allocating all: the arrays' length hardly matters) and keeps the
    result beside the others, so the variants that share its sizes take it whole. A table built
    is also kept by its :func:`problem_key` (within half the budget), for a structure of another
    key whose allocation problem is the same. With a ``store``
    (:class:`~zigzag.mapping_search.batched.allocation_store.AllocationStore`), the tables of a
    problem are also read from it (once per process, before allocating) and written to it when
    built, for the processes to come."""

    def __init__(self, budget: int = 128 * 2**20, alternatives: int = 8, store=None):
        self.budget = budget
        self.alternatives = alternatives
        self.tables: OrderedDict = OrderedDict()  # key -> list of tables (lists of chunks)
        self.nbytes = 0
        self.reallocated = 0  # candidates allocated again (their sizes left the bounds)
        self.reused = 0  # candidates taken as they were
        #: structure key -> what its variants share besides allocations (:meth:`memo`)
        self._memos: OrderedDict = OrderedDict()
        #: :func:`problem_key` -> allocation tables (their chunks' ids, alive, cuts and bounds
        #: only), for the structures to come whose layers the assigner sees the same
        self.problems: OrderedDict = OrderedDict()
        self.problems_nbytes = 0
        self.borrowed = 0  # candidates taken from another structure's allocation
        self.store = store
        self._read: set = set()  # the problems looked up in the store
        self.loaded = 0  # tables read from the store

    def memo(self, key, size: int = 1024) -> dict:
        """What the variants of structure ``key`` share besides allocations (the last ``size``
        keys kept): the spatial mapping's level forms and the loop table (they read the array,
        the memories' links and the layer, never a size), and the no-fit diagnoses by memory
        sizes (``zigzag.mapping_search.loma.no_fit_diagnosis``: sizes, never bandwidths)."""
        found = self._memos.setdefault(key, {})
        self._memos.move_to_end(key)
        if len(self._memos) > size:
            self._memos.popitem(last=False)
        return found

    def forget_siblings(self) -> None:
        """Drop what the structures' memos derived from the siblings told (their memory sets,
        the plans of their ready tables, the accelerators that built or took one): new
        siblings are to be told (:meth:`SharedCandidates.expect_only`)."""
        for memo in self._memos.values():
            forget_told(memo)

    def chunks(self, key, loops, assigner, constraints, chunk: int):
        """``zigzag.mapping_search.batched.assigned_chunks`` (without ``seen``), through the tables of
        ``key``: yields ``(ids, cuts, entry)`` of the allocated candidates of each chunk, with
        ``entry`` the chunk's record (its ``movement`` is the model's data movement of exactly
        these candidates when not None; see :meth:`keep_movement`)."""
        tables = self.tables.get(key, [])
        sizes = {memory.name: float(memory.size) for memory, _ in assigner.reference.nodes}
        for table in tables:
            if all(_inside(entry, sizes) for entry in table):
                self.tables.move_to_end(key)
                self.reused += sum(len(entry.ids) for entry in table)
                yield from _allocated(table)
                return
        problem = problem_key(loops, assigner, constraints, chunk)
        if self.store is not None and problem not in self._read:
            self._read.add(problem)
            for chunks in self.store.load(problem):
                self._share(problem, [_Allocated(*parts) for parts in chunks])
                self.loaded += 1
        for found in self.problems.get(problem, ()):
            if all(_inside(entry, sizes) for entry in found):
                self.problems.move_to_end(problem)
                # the same arrays, under this structure's own movement and latency memo
                table = _allocations_only(found)
                self.borrowed += sum(len(entry.ids) for entry in table)
                self._keep(key, table)
                yield from _allocated(table)
                return
        yield from self._build(key, problem, loops, assigner, constraints, chunk, bool(tables))

    def _build(self, key, problem, loops, assigner, constraints, chunk, again):
        table = []
        for ids in ordering_chunks(loops, chunk):
            if constraints:
                ids = ids[constraint_mask(ids, loops, constraints)]
            if not len(ids):
                continue
            alive, cuts, bounds = assigner.assign_bounded(ids)
            if again:
                self.reallocated += len(ids)
            entry = _Allocated(ids, alive, cuts, bounds)
            table.append(entry)
            yield from _allocated([entry])
        self._keep(key, table)
        self._share(problem, table)
        if self.store is not None and table:
            self.store.save(problem, [_parts(entry) for entry in table])

    def _share(self, problem, table) -> None:
        """Keep ``table``'s allocations (not its movement) for other structures of ``problem``."""
        size = sum(entry.size for entry in table)  # before any movement or latency is added
        if size > self.budget // 2:
            return
        found = self.problems.setdefault(problem, [])
        found.append(_allocations_only(table))
        self.problems_nbytes += size
        if len(found) > self.alternatives:
            self.problems_nbytes -= sum(entry.size for entry in found.pop(0))
        self.problems.move_to_end(problem)
        while self.problems_nbytes > self.budget // 2 and self.problems:
            _, dropped = self.problems.popitem(last=False)
            self.problems_nbytes -= sum(entry.size for t in dropped for entry in t)

    def _keep(self, key, table) -> None:
        """Keep ``table`` among the tables of ``key`` (within the budget)."""
        size = sum(entry.nbytes() for entry in table)
        if size <= self.budget:
            tables = self.tables.setdefault(key, [])
            tables.append(table)
            self.nbytes += size
            if len(tables) > self.alternatives:
                self.nbytes -= sum(entry.nbytes() for entry in tables.pop(0))
            self.tables.move_to_end(key)
            self._trim()

    def keep_movement(self, key, entry, movement) -> None:
        """Keep the model's data movement of ``entry``'s allocated candidates (the table's size
        grows by it, within the budget)."""
        kept = (e for table in self.tables.get(key, ()) for e in table)
        if entry is None or entry.movement is not None or not any(e is entry for e in kept):
            return
        entry.movement = movement
        arrays = movement_arrays(movement)
        for array in arrays:  # read by the variants to come: never written again
            array.setflags(write=False)
        grown = sum(array.nbytes for array in arrays)
        entry.size += grown
        self.nbytes += grown
        self._trim()

    def count_latency(self, key, entry) -> None:
        """Count what ``entry``'s latency memo kept since last counted (when the entry is kept)."""
        grown = entry.latency.nbytes - entry.counted
        kept = (e for table in self.tables.get(key, ()) for e in table)
        if not grown or not any(e is entry for e in kept):
            return
        entry.counted += grown
        entry.size += grown
        self.nbytes += grown
        self._trim()

    def _trim(self) -> None:
        while self.nbytes > self.budget and self.tables:
            _, tables = self.tables.popitem(last=False)
            self.nbytes -= sum(entry.nbytes() for table in tables for entry in table)


def problem_key(loops, assigner, constraints, chunk: int) -> tuple:
    """What :class:`~zigzag.mapping_search.batched.memory_levels.BatchLevelAssigner` reads besides
    the memories' sizes: of the layer, its operands' relevant and partially relevant dims,
    precisions and links to memory operands (not its spatial mapping entry, which arrays of
    other shapes may write otherwise to the same effect), the spatial mapping per memory level,
    the loop factors and ordering constraints, the memories holding each operand in the order
    visited (by name: the bounds are by name), each operand's top memory, the even flag and the
    chunk size."""
    reference = assigner.reference
    layer = assigner.layer
    return (
        tuple(
            # reprs, not values: an int and an equal float round the scalar sums differently
            (
                op,
                tuple(layer.relevant[op]),
                repr(layer.partially_relevant[op]),
                repr(layer.precision[op]),
            )
            for op in layer.operands
        ),
        (layer.output, repr(layer.final_output_precision), tuple(layer.irrelevant[layer.output])),
        (repr(layer.pr_sizes), tuple(layer.memory_operand_links.items())),
        repr(assigner.spatial),
        tuple(loops.factors),
        repr(constraints),
        tuple((memory.name, tuple(operands)) for memory, operands in reference.nodes),
        tuple((m, reference.top[m].name) for m in reference.memory_operands),
        assigner.even,
        chunk,
    )


def _allocated(table):
    """``(ids, cuts, entry)`` of each chunk of ``table`` with candidates allocated, those only."""
    for entry in table:
        if entry.allocated:
            yield *entry.allocated, entry


def _parts(entry: _Allocated) -> tuple:
    """What :class:`~zigzag.mapping_search.batched.allocation_store.AllocationStore` keeps of a chunk."""
    return entry.ids, entry.alive, entry.cuts, entry.bounds


def _allocations_only(table) -> list:
    """Copies of ``table``'s entries with their allocations only (no movement or latency memo)."""
    return [replace(e, movement=None, latency=LatencyMemo(), held={}, counted=0) for e in table]


def _inside(entry: _Allocated, sizes: dict) -> bool:
    """Whether ``sizes`` (memory name -> size) lie inside every candidate's bounds of ``entry``."""
    for name, (low, high) in entry.interval.items():  # every low <= size < every high
        size = sizes.get(name)
        if size is None or not (low <= size < high):
            return False
    return True
