"""Batched latency: stalls, slack, on- and off-loading of many candidates (docs/models/cost-model.md#latency), as
:mod:`zigzag.cost.model.latency` and :mod:`zigzag.cost.model.loading` compute them for one.

Candidates are grouped by which port duties move data once, repeatedly or not at all; each
group then follows the scalar steps with arrays.
"""

from __future__ import annotations

import math

import numpy as np

from zigzag.mapping_search.batched.candidates import EXACT, Unsupported
from zigzag.mapping_search.batched.siblings import memory_set
from zigzag.cost.model.latency import PortActivity, marked_slots
from zigzag.cost.model.loading import offloading_cycles, onloading_cycles, record_transfer


class LatencyMemo:
    """What the latency of one set of candidates reads besides the bandwidths, kept for the
    variants of one structure that move the same data (``zigzag.mapping_search.batched.structural``):
    the grouping of the candidates by structure signature (it reads the data movement only), the
    word accesses' bandwidth-free rows (``BatchCostModel._accesses``) and,
    per memory sizes, the allowed cycles of every port duty (through the double buffering); and
    the latencies computed for the siblings still to come (:func:`batch_latency`), each until its
    variant takes it. Values are computed by the same float operations as without it:
    the same bits."""

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


def _kept(memo, key, make, *args):
    """``make(*args)``, through ``memo`` when there is one."""
    return make(*args) if memo is None else memo.get(key, lambda: make(*args))


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
        latency, exact = _latencies(model, movement, movement_int, n, None, [own])
        return latency[0], exact[0]
    key = ("latency", model.latency_model, model.cpo)
    kept = memo.take((*key, own))
    if kept is not None:  # computed by a sibling, under exactly these sizes and bandwidths
        return kept
    others = [s for s in siblings if s != own and not memo.known((*key, s))]
    sets = [own, *others[: SIBLINGS - 1]]
    latency, exact = _latencies(model, movement, movement_int, n, memo, sets)
    if len(sets) == 1:
        return latency[0], exact[0]
    rows = [(latency[k].copy(), exact[k].copy()) for k in range(len(sets))]  # each on its own
    for other, row in zip(sets[1:], rows[1:]):
        memo.put((*key, other), row)
    return rows[0]


def _latencies(model, movement, movement_int, n, memo, sets):
    """``(latency, exact)`` of the candidates under each memory set of ``sets``, arrays of shape
    ``(len(sets), n)``. A figure equal in every set stays the scalar or the row it is."""
    K = len(sets)
    exact = np.ones((K, n), dtype=bool)
    allowed = _stacked(
        [
            _kept(
                memo,
                ("allowed", model.cpo, sizes),
                _allowed,
                model,
                movement,
                movement_int,
                n,
                sizes,
            )
            for sizes in dict.fromkeys(s[0] for s in sets)
        ],
        [s[0] for s in sets],
    )
    # docs/models/cost-model.md#latency real cycles (integer variant)
    real = {}
    for i, (op, level, d) in enumerate(model.duties):
        flow = movement_int[op].flows[level][d]
        bw = _column([s[1][i] for s in sets])
        if bw is not None and np.all(bw):  # one set's bandwidth is there where the own's is
            data = flow.amount * flow.precision
            exact &= data < EXACT
            real[op, level, d] = np.ceil(data / bw)
        else:
            real[op, level, d] = np.zeros(n)
    port_bw = [_column([s[2][j] for s in sets]) for j in range(len(model.setup.ports))]
    latency = np.zeros((K, n))
    if n == 0:
        return latency, exact
    signatures, groups = _kept(memo, "groups", _signature_groups, model, movement_int, n)
    for signature, sel in zip(signatures, groups):
        try:
            lat_g, exact_g = _group_latency(
                model, signature, sel, n, movement_int, real, allowed, port_bw
            )
        except Unsupported:
            exact[:, sel] = False
            continue
        latency[:, sel] = lat_g
        exact[:, sel] &= exact_g
    if model.latency_model == "bandwidth_bound":
        for k, figures in enumerate(sets):
            bound, exact_bound = _port_bound(model, movement, n, figures[2])
            row = latency[k]
            latency[k] = np.where(bound > row, row + (bound - row), row)
            exact[k] &= exact_bound
    return latency, exact


def _column(values: list):
    """One bandwidth over the sets: itself when the sets agree, else a float column (``(K, 1)``:
    broadcast against the candidates, row ``k``'s figures are those of set ``k``'s alone)."""
    if all(v == values[0] for v in values):
        return values[0]
    return np.array(values, dtype=np.float64)[:, None]


def _stacked(allowed: list[dict], sizes: list[tuple]) -> dict:
    """The allowed cycles of each set (``allowed``: one dict per distinct sizes, in the order
    they first appear in ``sizes``, the sets' sizes): the one dict when the sets agree, else
    per duty a ``(K, n)`` array, row ``k`` that of set ``k``'s sizes."""
    if len(allowed) == 1:
        return allowed[0]
    of = dict(zip(dict.fromkeys(sizes), allowed))
    return {duty: np.stack([of[s][duty] for s in sizes]) for duty in allowed[0]}


def _allowed(model, movement, movement_int, n, sizes):
    """The allowed cycles of every port duty (through the double buffering of every operand and
    level): they read the memory sizes (``sizes``, as ``siblings.memory_set`` gives them) and the
    data movement, no bandwidth."""
    setup = model.setup
    # docs/models/cost-model.md#data-held-per-level effective utilisations, shared sums (fractional variant)
    eff = {}
    at = iter(sizes)
    for op, info in model.ops.items():
        eff[op] = [movement[op].eff_bits[k + 1] / next(at) for k in range(info.operand.n)]
    eff_sh = {op: list(v) for op, v in eff.items()}
    for members in setup.sharing_groups:
        e = None
        for op, k in members:
            e = eff[op][k] if e is None else e + eff[op][k]
        for op, k in members:
            eff_sh[op][k] = e
    # docs/models/cost-model.md#latency double buffering (with the reference's in-place update)
    db = {}
    for op, info in model.ops.items():
        flags = [np.zeros(n, dtype=bool)]
        for k, lv in enumerate(info.operand.levels):
            rule1 = eff_sh[op][k] <= 0.5
            rule2 = ~rule1 & (eff[op][k] <= 1 - eff_sh[op][k])
            flags.append(rule1 | rule2)
            if lv.sharing is not None:
                for m_op, m_k in lv.sharing:
                    eff_sh[m_op][m_k] = np.where(
                        rule2, eff_sh[m_op][m_k] + eff[op][k], eff_sh[m_op][m_k]
                    )
        db[op] = flags
    # docs/models/cost-model.md#latency allowed cycles (integer variant)
    allowed = {}
    for op, level, d in model.duties:
        flow = movement_int[op].flows[level][d]
        buffered = db[op][level + 1] if d in ("th", "fh") else db[op][level]
        allowed[op, level, d] = np.ceil(np.where(buffered, flow.period, flow.window) * model.cpo)
    return allowed


def _signature_groups(model, movement_int, n):
    """The candidates' structure signatures (per duty 0 = no traffic, 1 = once, 2 = repeated) and,
    per signature, its candidates' indices (a slice of all when there is one signature)."""
    codes = np.zeros((n, max(len(model.duties), 1)), dtype=np.int8)
    for i, (op, level, d) in enumerate(model.duties):
        count = movement_int[op].flows[level][d].count
        # counts are whole (floor divisions), inf or NaN: fmin maps 0, 1 to themselves, the rest to 2
        codes[:, i] = np.fmin(count, 2.0)
    if n == 0:
        return codes[:0], []
    if codes.shape[1] <= 39:  # base-3 digits fit an int64
        digits = 3 ** np.arange(codes.shape[1] - 1, -1, -1, dtype=np.int64)
        packed = codes.astype(np.int64) @ digits
        keys, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
        signatures = codes[first]
    else:
        signatures, inverse = np.unique(codes, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    if len(signatures) == 1:
        return signatures, [slice(None)]
    return signatures, [np.nonzero(inverse == g)[0] for g in range(len(signatures))]


def _port_bound(model, movement, n, bandwidths):
    """``zigzag.cost.model.loading.port_bound_cycles`` for every candidate (same float operations),
    the ports' ``bw_max`` given in ``model.setup.ports``' order."""
    bound = np.zeros(n)
    exact = np.ones(n, dtype=bool)
    for port, bw_max in zip(model.setup.ports, bandwidths):
        if not bw_max:
            continue
        bits = np.zeros(n)
        for duty in port.duties:
            flow = movement[duty.layer_op].flows[duty.level][duty.direction]
            bits = bits + flow.count * flow.amount * flow.precision
        exact &= bits < EXACT
        bound = np.maximum(bound, np.ceil(bits / bw_max))
    return bound, exact


def _group_latency(model, signature, sel, n, movement_int, real, allowed, port_bw):
    """Latency of the candidates ``sel`` sharing one structure signature (docs/models/cost-model.md#latency).
    ``sel`` holds their indices, or is a slice of all ``n`` when they all share it. ``real``,
    ``allowed`` and ``port_bw`` (the ports' ``bw_max``) may hold a row per memory set (``(K, n)``
    arrays, ``(K, 1)`` columns): the figures are then ``(K, m)`` arrays, elementwise those of each
    set alone."""
    setup = model.setup
    m = n if isinstance(sel, slice) else len(sel)

    codes = dict(zip(model.duties, signature.tolist()))

    def code(op, level, d):
        return codes[op, level, d]

    def pick(arr):
        return arr[..., sel] if isinstance(arr, np.ndarray) else np.full(m, float(arr))

    # docs/models/cost-model.md#latency stall / slack per port
    exact = np.ones(m, dtype=bool)
    ss_comb = np.zeros(m)
    for port in setup.ports:
        acts = []
        for duty in port.duties:
            op, level, d = duty.layer_op, duty.level, duty.direction
            if code(op, level, d) == 0:
                continue
            flow = movement_int[op].flows[level][d]
            acts.append(
                (
                    pick(real[op, level, d]),
                    pick(allowed[op, level, d]),
                    np.ceil(pick(flow.period) * model.cpo),
                    pick(flow.count),
                )
            )
        if not acts:
            continue
        if len(acts) == 1:
            r, a, _, cnt = acts[0]
            ss = (r - a) * (cnt - 1)
        else:
            union = _window_union(acts, m)
            positive = np.zeros(m)
            negative = np.zeros(m)
            windows = np.zeros(m)
            for r, a, _, cnt in acts:
                s = (r - a) * (cnt - 1)
                positive = positive + np.where(s > 0, s, 0.0)
                negative = negative + np.where(s > 0, 0.0, s)
                windows = windows + a * (cnt - 1)
            ss = positive + np.maximum(0.0, negative + windows - union)
            exact = exact & (positive < EXACT) & (-negative < EXACT)
            exact = exact & (windows < EXACT) & (union < EXACT)
        exact = exact & (np.abs(ss) < EXACT)
        ss_comb = np.maximum(ss_comb, ss)

    # docs/models/cost-model.md#latency per-port loading records
    total = float(model.total_cycle)
    tcc = math.ceil(total * model.cpo) + ss_comb
    loading = {op: {} for op in model.layer.inputs}
    offloading = {model.layer.output: {}}

    for port, bw_max in zip(setup.ports, port_bw):
        shared = port.shared_by_two_inputs
        once = []
        bw_req = 0.0
        for duty in port.loading_duties:
            op, level, d = duty.layer_op, duty.level, duty.direction
            c = code(op, level, d)
            if c == 0:
                continue
            cycles = pick(real[op, level, d])
            if c == 1:
                once.append((duty, cycles))
            else:
                bw_req = bw_req + np.ceil(
                    pick(movement_int[op].flows[level][d].bw_aver) / model.cpo
                )
                record_transfer(loading, offloading, duty, cycles, shared)
        if once:
            totals = [cyc for _, cyc in once]
            minima = [np.ceil(pick(movement_int[d.layer_op].bits[1]) / bw_max) for d, _ in once]
            surplus = ((bw_max - bw_req) / bw_max) * tcc
            remaining = reduce_balanced(totals, minima, surplus)
            for (duty, _), cyc in zip(once, remaining):
                record_transfer(loading, offloading, duty, cyc, shared)

    # docs/models/cost-model.md#latency on-/off-loading
    try:
        onload, _ = onloading_cycles(setup, loading, maximum=np.maximum, minimum=np.minimum)
        offload, _ = offloading_cycles(setup, offloading, maximum=np.maximum)
    except KeyError:
        raise Unsupported("loading table without an expected entry") from None

    latency0 = total * model.cpo + ss_comb
    latency1 = latency0 + onload
    latency2 = latency1 + offload
    return latency2, exact & (np.abs(latency2) < EXACT)


def _window_union(acts, m):
    """Vectorised ``updating_window_union``; the rare timeline case goes through the scalar
    helper candidate by candidate. Allowed cycles may have a row per memory set (``(K, m)``, the
    periods and counts do not): the union then has one too, each element as alone."""
    shape = next((act[1].shape for act in acts if np.ndim(act[1]) == 2), (m,))
    union = np.zeros(shape)
    found = np.zeros(shape, dtype=bool)
    for _r, a, period, cnt in acts:
        hit = ~found & (period == a)
        union = np.where(hit, period * cnt, union)
        found |= hit
    rest = np.nonzero(~found)
    if rest[0].size:
        periods = np.stack([act[2] for act in acts])
        longest = np.argmax(periods, axis=0)  # first of equal periods
        for at in zip(*rest):
            i = at[-1]
            pattern = tuple(
                (int(act[2][i]), int(act[1][at if np.ndim(act[1]) == 2 else i])) for act in acts
            )
            j = int(longest[i])
            union[at] = _marked_slots(pattern, int(acts[j][2][i])) * acts[j][3][i]
    return union


_SLOTS_CACHE: dict = {}


def _marked_slots(pattern: tuple, horizon: int) -> int:
    key = (pattern, horizon)
    value = _SLOTS_CACHE.get(key)
    if value is None:
        acts = [PortActivity("", 0, "", 0, allowed, period, 0) for period, allowed in pattern]
        value = marked_slots(acts, horizon)
        if len(_SLOTS_CACHE) > 100_000:
            _SLOTS_CACHE.clear()
        _SLOTS_CACHE[key] = value
    return value


def reduce_balanced(cycles: list, minima: list, surplus) -> list:
    """Vectorised ``zigzag.cost.model.reduce_balanced`` (same steps, same float operations);
    one and two transfers, by far the most common, without sorting."""
    if len(cycles) == 1:
        return [_reduce_one(cycles[0], minima[0], surplus)]
    if len(cycles) == 2:
        return _reduce_two(cycles, minima, surplus)
    return _reduce_many(cycles, minima, surplus)


def _reduce_one(current, minimum, surplus):
    """:func:`reduce_balanced` of one transfer: ``current`` less its distance to ``minimum``, or
    less the surplus when that is smaller (``x * 1`` and ``x / 1`` are ``x`` exactly)."""
    current = np.asarray(current, dtype=np.float64)
    active = surplus > 0
    surplus = np.where(active, surplus, 0.0)
    step = current - minimum
    step = np.where(surplus < step, surplus, step)
    return np.where(active, current - step, current)


def _reduce_two(cycles, minima, surplus):
    """:func:`reduce_balanced` of two transfers: the larger first (the first of equal ones, and a
    NaN last, as the stable sort orders them), then both by the second's share."""
    a, b = (np.asarray(c, dtype=np.float64) for c in cycles)
    swap = (b > a) | (np.isnan(a) & ~np.isnan(b))  # the second transfer is visited first
    first, second = np.where(swap, b, a), np.where(swap, a, b)
    low_first = np.where(swap, minima[1], minima[0])
    low_second = np.where(swap, minima[0], minima[1])
    active = surplus > 0
    surplus = np.where(active, surplus, 0.0)
    step = first - low_first
    stop = surplus < step
    step = np.where(stop, surplus, step)
    first = np.where(active, first - step, first)
    surplus = np.where(active & ~stop, surplus - step, surplus)
    active = active & ~stop
    step = second - low_second
    capacity = step * 2
    step = np.where(surplus < capacity, surplus / 2, step)
    first = np.where(active, first - step, first)
    second = np.where(active, second - step, second)
    return [np.where(swap, second, first), np.where(swap, first, second)]


def _reduce_many(cycles: list, minima: list, surplus) -> list:
    """:func:`reduce_balanced` of three transfers or more, on 1-D arrays (arrays of more
    dimensions, broadcast together, are flattened and their results shaped back)."""
    *arrays, surplus = np.broadcast_arrays(*cycles, *minima, surplus)
    if surplus.ndim != 1:
        flat = _reduce_many(
            [a.ravel() for a in arrays[: len(cycles)]],
            [a.ravel() for a in arrays[len(cycles) :]],
            surplus.ravel(),
        )
        return [r.reshape(surplus.shape) for r in flat]
    m = len(cycles)
    n = len(surplus)
    current = np.stack(arrays[:m]).astype(np.float64)  # (m, n)
    mins = np.stack(arrays[m:]).astype(np.float64)
    # the scalar takes max(0, surplus) and returns untouched when it is <= 0
    active = surplus > 0
    surplus = np.where(active, surplus, 0.0)
    order = np.argsort(-current, axis=0, kind="stable")  # largest first, stable on ties
    cols = np.arange(n)
    for i in range(m):
        j = order[i]
        step = current[j, cols] - mins[j, cols]
        capacity = step * (i + 1)
        stop = surplus < capacity
        step = np.where(stop, surplus / (i + 1), step)
        for prev in range(i + 1):
            rows = order[prev]
            current[rows, cols] = np.where(active, current[rows, cols] - step, current[rows, cols])
        surplus = np.where(active & ~stop, surplus - capacity, surplus)
        active = active & ~stop
    return [current[i] for i in range(m)]
