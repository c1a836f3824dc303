"""Batched latency: stalls, slack, on- and off-loading of many candidates (docs/models/cost-model.md#latency), as
:mod:`zigzag.cost.model.latency` and :mod:`zigzag.cost.model.loading` compute them for one.

The ports, duties and levels of the set-up are put into index tables (:func:`latency_tables`);
one compiled loop (:func:`zigzag.mapping_search.batched.kernels.latencies`) then reads the
candidates' packed data movement (``model.Packed``) where it lies and follows the scalar steps
for every candidate under every memory set.
"""

from __future__ import annotations

import math

import numpy as np

from zigzag.mapping_search.batched.siblings import memory_set
from zigzag.cost.model.setup import loading_key


class LatencyMemo:
    """What the figures of one set of candidates read besides the bandwidths, kept for the
    variants of one structure that move the same data (``zigzag.mapping_search.batched.structural``):
    the word accesses by the ports' bandwidths (``accesses.word_accesses``), and the latencies
    computed for the siblings still to come (:func:`batch_latency`), each until its variant takes
    it. Values are computed by the same float operations as without it: the same bits."""

    def __init__(self):
        self.values: dict = {}
        self.nbytes = 0
        self.taken = 0  # values put for a sibling and taken by it
        self._done: set = set()  # the keys of those taken (not to be computed again)

    def get(self, key, make):
        """The value kept under ``key``, else ``make()``'s (kept)."""
        value = self.values.get(key)
        if value is None:
            value = self.values[key] = make()
            self.nbytes += _frozen(value)
        return value

    def put(self, key, value) -> None:
        """Keep ``value`` under ``key`` (read once, by :meth:`take`)."""
        self.values[key] = value
        self.nbytes += _frozen(value)

    def take(self, key):
        """The value kept under ``key`` by :meth:`put`, no longer kept; None when there is none."""
        value = self.values.pop(key, None)
        if value is not None:
            self.nbytes -= _frozen(value)
            self.taken += 1
            self._done.add(key)
        return value

    def known(self, key) -> bool:
        """Whether a value is kept under ``key`` or was taken."""
        return key in self.values or key in self._done


def _frozen(value) -> int:
    """Make the arrays of ``value`` read-only (read by the variants to come); their bytes."""
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
        return value.nbytes
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return sum(_frozen(v) for v in value)
    return 0


#: memory sets whose latencies one pass computes at most (the variant's own and its siblings')
SIBLINGS = 16


def batch_latency(model, movement, movement_int, n, memo: LatencyMemo | None = None, siblings=()):
    """``model`` (a :class:`~zigzag.mapping_search.batched.model.BatchCostModel`): ``latency_total2`` and its exactness flags for the evaluated candidates (docs/models/cost-model.md#data-held-per-level, docs/models/cost-model.md#latency).
    ``memo``: what variants of one structure moving the same data share (:class:`LatencyMemo`);
    ``siblings``: with ``memo``, the memory sets (``siblings.sibling_sets``) of variants still to
    come that move the same data: their latencies are computed in the same pass (each figure by
    the same float operations as alone, a memory figure that differs between the sets a column
    broadcast against the candidates) and kept in ``memo`` for them."""
    own = memory_set(model)
    if memo is None:
        latency, exact = _latencies(model, movement, movement_int, [own])
        return latency[0], exact[0]
    key = ("latency", model.latency_model, model.cpo)
    kept = memo.take((*key, own))
    if kept is not None:  # computed by a sibling, under exactly these sizes and bandwidths
        return kept
    others = [s for s in siblings if s != own and not memo.known((*key, s))]
    sets = [own, *others[: SIBLINGS - 1]]
    latency, exact = _latencies(model, movement, movement_int, sets)
    if len(sets) == 1:
        return latency[0], exact[0]
    rows = [(latency[k].copy(), exact[k].copy()) for k in range(len(sets))]  # each on its own
    for other, row in zip(sets[1:], rows[1:]):
        memo.put((*key, other), row)
    return rows[0]


def _latencies(model, movement, movement_int, sets):
    """``(latency, exact)`` of the candidates under each memory set of ``sets``, arrays of shape
    ``(len(sets), n)``, from the compiled pass (:func:`~zigzag.mapping_search.batched.kernels.latencies`;
    imported here: numba is imported by the first search, not by every command)."""
    from zigzag.mapping_search.batched import kernels

    packed = next(iter(movement.values())).packed
    packed_int = next(iter(movement_int.values())).packed
    rows = model.latency_rows()
    frame = model.setup.frame
    key = (
        frame.ports,
        frame.sharing_groups,
        tuple((fields["name"], levels) for fields, levels in frame.operands),
        model.layer.inputs,
        model.layer.output,
    )
    tables = _TABLES.get(key)
    if tables is None:
        if len(_TABLES) >= 1024:
            _TABLES.clear()
        tables = _TABLES[key] = latency_tables(model)
        _frozen(tables)
    total = float(model.total_cycle)
    scalars = (
        float(model.cpo),
        total * model.cpo,
        float(math.ceil(total * model.cpo)),
        model.latency_model == "bandwidth_bound",
    )
    K = len(sets)
    sizes = np.array([s[0] for s in sets], dtype=np.float64).reshape(K, len(rows[2]))
    duty_bw = np.zeros((K, len(model.duties)))
    for d in range(len(model.duties)):
        values = [s[1][d] for s in sets]
        if all(v == values[0] for v in values):
            if values[0] is not None and values[0]:
                duty_bw[:, d] = values[0]
        else:
            column = np.array(values, dtype=np.float64)
            if np.all(column):  # one set's bandwidth is there where the own's is
                duty_bw[:, d] = column
    port_bw = np.array(
        [[0.0 if bw is None else bw for bw in s[2]] for s in sets], dtype=np.float64
    ).reshape(K, len(model.setup.ports))
    first: dict = {}  # the first set with these bandwidths, bit for bit
    bw_first = np.array(
        [first.setdefault(duty_bw[k].tobytes() + port_bw[k].tobytes(), k) for k in range(K)],
        dtype=np.int64,
    )
    return kernels.latencies(
        _read_only(packed_int.flows),
        _read_only(packed_int.bits),
        _read_only(packed.eff_bits),
        _read_only(packed.flows),
        rows,
        sizes,
        duty_bw,
        port_bw,
        bw_first,
        tables,
        scalars,
    )


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array`` (the compiled pass is compiled for read-only arrays)."""
    view = array.view()
    view.setflags(write=False)
    return view


#: :func:`latency_tables` by what they read of the set-up's frame (the ports and their duties,
#: the sharing groups, the operands' levels, the layer's inputs and output): the same for the
#: variants of one structure and for the layers linked alike
_TABLES: dict = {}


def latency_tables(model) -> tuple:
    """The structure of ``model``'s ports, duties and memory levels as the compiled latency reads
    it (:func:`~zigzag.mapping_search.batched.kernels.latencies`' ``tables``): all from the
    set-up's frame."""
    setup = model.setup
    level_of, at = {}, 0
    for op, info in model.ops.items():
        for k in range(info.operand.n):
            level_of[op, k] = at
            at += 1
    slots: dict = {}  # (loading table?, layer op, key) -> slot of the on-/off-loading records
    slot_of_duty: dict = {}  # (layer op, level, direction) -> its slot
    for port in setup.ports:
        for u in port.loading_duties:
            at = slots.setdefault((u.loading, u.layer_op, u.key), len(slots))
            slot_of_duty.setdefault((u.layer_op, u.level, u.direction), at)
    n_slots = len(slots)  # slot n_slots: an entry no duty records

    def slot(loading, op, level, direction):
        return slots.get((loading, op, loading_key(op, level, direction)), n_slots)

    duty_buf = []
    for op, level, d in model.duties:
        below = level_of[op, level - 1] if level > 0 else -1
        duty_buf.append(level_of[op, level] if d in ("th", "fh") else below)
    duty_slot = [slot_of_duty.get(duty, n_slots) for duty in model.duties]
    index = model.duty_index

    def csr(lists):
        ptr = np.zeros(len(lists) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(x) for x in lists])
        flat = np.array([v for x in lists for v in x], dtype=np.int64)
        return ptr, flat

    port_duty = csr(
        [[index[u.layer_op, u.level, u.direction] for u in p.duties] for p in setup.ports]
    )
    port_load = csr(
        [[index[u.layer_op, u.level, u.direction] for u in p.loading_duties] for p in setup.ports]
    )
    shared = np.array([p.shared_by_two_inputs for p in setup.ports], dtype=np.bool_)
    groups = csr([[level_of[m] for m in members] for members in setup.sharing_groups])
    linked = csr(
        [
            [level_of[m] for m in (lv.sharing or ())]
            for info in model.ops.values()
            for lv in info.operand.levels
        ]
    )
    inputs = model.layer.inputs
    on = [
        [
            (slot(True, op, k, "fh"), slot(True, op, k + 1, "tl"))
            for k in range(setup.operands[op].n - 1)
        ]
        for op in inputs
    ]
    on_ptr, _ = csr(on)
    on_pairs = np.array([pair for pairs in on for pair in pairs], dtype=np.int64).reshape(-1, 2)
    out = model.layer.output
    off_pairs = np.array(
        [
            (slot(False, out, k, "th"), slot(False, out, k + 1, "fl"))
            for k in range(setup.operands[out].n - 1)
        ],
        dtype=np.int64,
    ).reshape(-1, 2)
    tables = (
        np.array(duty_buf, dtype=np.int64),
        np.array(duty_slot, dtype=np.int64),
        *port_duty,
        *port_load,
        shared,
        *groups,
        *linked,
        on_ptr,
        np.ascontiguousarray(on_pairs[:, 0]),
        np.ascontiguousarray(on_pairs[:, 1]),
        np.ascontiguousarray(off_pairs[:, 0]),
        np.ascontiguousarray(off_pairs[:, 1]),
        np.array([n_slots, len(inputs)], dtype=np.int64),
    )
    return tables
