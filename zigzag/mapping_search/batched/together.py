"""Siblings scored together: the candidate table of a variant to come, made while its structure's
first variant builds its own.

A batch job tells its shared cache the documents of the variants it is to evaluate
(:class:`~zigzag.mapping_search.batched.siblings.Siblings`). When a variant builds the candidate
table of a layer, the variants of its structure whose sizes keep every candidate's allocation
(``zigzag.mapping_search.batched.structural``) move the same data: their latencies are already
computed in the same pass (:func:`~zigzag.mapping_search.batched.latency.batch_latency`), and
their word accesses differ only by the ports' bandwidths. Both are taken there, for each such
sibling, into a *ready table* (the same candidates, with the sibling's accesses, latency and
exactness flags), kept until that sibling's search asks for it. The sibling then skips the
loop table, the allocation look-up, the model's set-up and the access and latency passes; it
scores the ready table with its own costs as any table.

A ready table is found by what it was computed under: the size of every (operand, level), the
``bandwidth_min`` and ``bandwidth_max`` of the port of every (operand, level, direction) and the
``bandwidth_max`` of every used port, read from the sibling's own accelerator at its search
(:func:`accelerator_key`) and from its document when the table was made (:func:`told_key`). Its
figures come from the model's own steps on those numbers (the rows of its word accesses through
their compiled step under the sibling's bandwidths:
:func:`~zigzag.mapping_search.batched.accesses.under_bandwidths`; the latency pass), so they are
the bits the sibling's own build would find; a document that told other numbers than its
accelerator has costs time, never a figure (tests/unit/mapping_search/test_siblings_together.py).
"""

from __future__ import annotations

from collections import OrderedDict

from zigzag.hardware.accelerator import DIRECTIONS
from zigzag.mapping_search.batched.accesses import under_bandwidths
from zigzag.mapping_search.batched.siblings import (
    duty_ports,
    hierarchy_memo,
    memory_set,
    told_part,
)


class ReadyTables:
    """Sibling tables made ahead, by ``(structure key, ready key)``, each read once; the least
    recently made dropped beyond ``budget`` bytes of arrays."""

    def __init__(self, budget: int = 96 * 2**20):
        self.budget = budget
        self.tables: OrderedDict = OrderedDict()
        self.sizes: dict = {}
        self.nbytes = 0
        self.made = 0
        self.taken = 0

    def room(self) -> bool:
        """Whether tables may still be made (below the budget)."""
        return self.nbytes < self.budget

    def put(self, key, table, size: int) -> None:
        """Keep ``table`` (``size`` bytes of arrays) under ``key``."""
        if key in self.tables:
            self.nbytes -= self.sizes.pop(key)
            del self.tables[key]
        self.tables[key] = table
        self.sizes[key] = size
        self.nbytes += size
        self.made += 1
        while self.nbytes > self.budget and self.tables:
            dropped, _ = self.tables.popitem(last=False)
            self.nbytes -= self.sizes.pop(dropped)

    def take(self, key):
        """The table kept under ``key``, no longer kept; None when there is none."""
        table = self.tables.pop(key, None)
        if table is not None:
            self.nbytes -= self.sizes.pop(key)
            self.taken += 1
        return table


def order_of(model) -> tuple:
    """What a ready key lists, in order: the memory of every (operand, level), the port (memory,
    port name) of every (operand, level, direction) (None without one), the used ports."""
    rows = []
    for op, info in model.ops.items():
        operand = info.operand
        for k, level in enumerate(operand.levels):
            memory = level.memory
            for d in DIRECTIONS:
                port = memory.port(operand.mem_op, d)
                rows.append(((op, k, d), None if port is None else (memory.name, port.name)))
    used = tuple((port.memory, port.name) for port in model.setup.ports)
    return tuple(model.level_memories()), tuple(rows), used


def kept_order(model, memo: dict) -> tuple:
    """:func:`order_of`, once per :func:`~zigzag.mapping_search.batched.siblings.hierarchy_memo`
    ``memo`` (the same tuple for the models of the layers linked alike)."""
    order = memo.get("order")
    if order is None:
        order = memo["order"] = order_of(model)
    return order


def accelerator_key(order: tuple, accelerator) -> tuple | None:
    """The ready key of ``accelerator`` (:func:`order_of`'s order); None when it lacks a memory or port."""
    memories, ports, keys = _ports(accelerator)
    found = keys.get(id(order))
    if found is not None and found[0] is order:  # the order is held: its id is not reused
        return found[1]
    names, rows, used = order
    try:
        key = (
            tuple(float(memories[name].size) for name in names),
            tuple(
                None if at is None else (ports[at].bandwidth_min, ports[at].bandwidth_max)
                for _, at in rows
            ),
            tuple(ports[at].bandwidth_max for at in used),
        )
    except KeyError:
        key = None
    keys[id(order)] = (order, key)
    return key


def _ports(accelerator) -> tuple[dict, dict, dict]:
    """``({memory name: memory}, {(memory, port name): port}, keys)`` of ``accelerator``, with
    ``keys`` the ready keys found for it by order (the last accelerator's kept: a point asks
    for every layer of its network)."""
    if _LAST[0] is not accelerator:
        ports = {(m.name, port.name): port for m in accelerator.memories for port in m.ports}
        _LAST[:] = [accelerator, (accelerator.memory, ports, {})]
    return _LAST[1]


_LAST: list = [None, None]


def told_key(order: tuple, sizes: dict, ports: dict, minimums: dict) -> tuple | None:
    """The ready key of a told sibling (``Siblings.told``'s triple); None when it lacks a figure."""
    names, rows, used = order
    try:
        return (
            tuple(float(sizes[name]) for name in names),
            tuple(None if at is None else (minimums[at], ports[at]) for _, at in rows),
            tuple(ports[at] for at in used),
        )
    except KeyError:
        return None


def to_make(structure: dict, model, told: list, sets: list, key: tuple, ready) -> tuple:
    """What a build of ``model``'s structure (``structure``: its memo) makes for the told
    siblings: ``(sets, found, planned)``, the memory sets ``sets`` for the latency pass without
    those of siblings that built or took this table already (they are not to come), the plans
    (:func:`plans`, kept under ``key``'s kind) and plan index -> ``[]`` for the tables to make
    (none while ``ready`` is full)."""
    memo = hierarchy_memo(model)
    order = structure.get("ready order")
    if order is None:
        order = structure["ready order"] = kept_order(model, memo)
    derived = told_part(structure)
    done = derived.setdefault("ready done", set())
    done.add(accelerator_key(order, model.accelerator))
    key = ("ready plans", *key[1:])
    if key not in derived:
        found = memo.get(("plans", id(told), id(sets)))
        if found is None or found[0] is not told or found[1] is not sets:  # both held
            found = memo[("plans", id(told), id(sets))] = (told, sets, plans(model, told, sets))
        derived[key] = found[2]
    found = derived[key]
    left = [plan[1] not in done for plan in found]  # each ready key hashed once
    waiting = {plan[0] for plan, wait in zip(found, left) if wait}
    finished = {plan[0] for plan, wait in zip(found, left) if not wait} - waiting
    if finished:
        sets = [other for other in sets if other not in finished]
    if not ready.room():
        return sets, found, {}
    return sets, found, {i: [] for i, wait in enumerate(left) if wait}


def plans(model, told: list, sets: list) -> list[tuple]:
    """``(memory set, ready key, bandwidths)`` of each told sibling (``(sizes, ports, minimums)``)
    whose latency the pass computes (its memory set among ``sets``, not the model's own) and
    whose ready key differs from the model's own; ``bandwidths``: (operand, level, direction) ->
    (bw_min, bw_max), as the word accesses read them. The same for every model of
    one structure with the same duties carried."""
    order = kept_order(model, hierarchy_memo(model))
    own_set = memory_set(model)
    own_key = accelerator_key(order, model.accelerator)
    found, keys = [], set()
    for other, key in _told_figures(order, tuple(duty_ports(model)), told):
        if key is None or key == own_key or key in keys or other == own_set or other not in sets:
            continue
        bandwidths = {
            where: (None, None) if figures is None else figures
            for (where, _), figures in zip(order[1], key[1])
        }
        keys.add(key)
        found.append((other, key, bandwidths))
    return found


def _told_figures(order: tuple, at: tuple, told: list) -> list[tuple]:
    """``(memory set, ready key)`` of every told sibling in ``order`` (the memory set as
    :func:`~zigzag.mapping_search.batched.siblings.memory_set` gives it, ``at`` the duties'
    ports; None where a figure is missing), kept for the last few orders: the layers of one
    memory hierarchy share them."""
    slot = (order, at, id(told))
    found = _FIGURES.get(slot)
    if found is None or found[0] is not told:
        names, _, used = order
        figures = []
        for sizes, ports, minimums in told:
            try:
                other = (
                    tuple(float(sizes[name]) for name in names),
                    tuple(None if where is None else ports[where] for where in at),
                    tuple(ports[where] for where in used),
                )
            except KeyError:
                other = None
            figures.append((other, told_key(order, sizes, ports, minimums)))
        if len(_FIGURES) >= 64:
            _FIGURES.clear()
        found = _FIGURES[slot] = (told, figures)
    return found[1]


#: (order, duties' ports, id of the told list) -> (that list, its figures)
_FIGURES: dict = {}


def taken_latencies(model, memo, wanted) -> dict:
    """The latencies the pass kept in ``memo`` for the memory sets ``wanted``, taken (no longer
    kept there): memory set -> ``(latency, exact)``, for those it computed."""
    found = {}
    for other in wanted:
        if other not in found:
            kept = memo.take(("latency", model.latency_model, model.cpo, other))
            if kept is not None:
                found[other] = kept
    return found


def sibling_chunk(accesses, latency: tuple, plan) -> tuple | None:
    """``(accesses, latency, exact)`` of the candidates of a model's ``accesses`` (its own word
    accesses) under ``plan``'s sibling, as the sibling's own ``evaluate_accesses`` finds them
    (:func:`~zigzag.mapping_search.batched.accesses.under_bandwidths`); ``latency``: its
    ``(latency, exact)`` from the pass (:func:`taken_latencies`). None when its ports differ."""
    latency, exact_latency = latency
    made = under_bandwidths(accesses.inputs, plan[2])
    if made is None:
        return None
    theirs, exact = made
    return theirs, latency, exact & exact_latency
