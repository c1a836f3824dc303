"""Word accesses and energies of the batched cost model
(:class:`~zigzag.mapping_search.batched.model.BatchCostModel`): which flows of the packed data
movement meet a port, their accesses in one compiled pass, and the energy of the accesses under
any memory costs (docs/models/cost-model.md#data-movement, docs/models/cost-model.md#energy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from zigzag.hardware.accelerator import DIRECTIONS
from zigzag.mapping_search.batched.candidates import EXACT


def word_accesses(model, movement, n, exact, memo=None) -> "Accesses":
    """Word accesses per direction of every (operand, level) of ``model`` (a
    :class:`~zigzag.mapping_search.batched.model.BatchCostModel`) for the candidates whose data
    movement is ``movement`` (docs/models/cost-model.md#data-movement); clears ``exact`` where a
    figure leaves the exact range. The flows that move data are computed together as rows of
    one array (compiled: :func:`~zigzag.mapping_search.batched.movement_kernels.word_accesses`),
    in the order of the levels and directions. ``memo``: the movement's ``LatencyMemo``, where
    the accesses are kept by the ports' bandwidths for the variants to come that move the same
    data (memory sizes and costs do not enter)."""
    levels = [lv for info in model.ops.values() for lv in info.operand.levels]
    unported = tuple(
        lv.bw_min[d] is None and lv.bw_max[d] is None for lv in levels for d in DIRECTIONS
    )
    table = kept_with(model.spatial, unported, lambda: _access_table(model, unported))
    bw_min = tuple(levels[l].bw_min[d] for l, d in table.places)
    ratio = tuple(levels[l].bw_min[d] / levels[l].bw_max[d] for l, d in table.places)
    flows = next(iter(movement.values())).packed.flows

    def make():
        narrowed = exact.copy()
        for slot in table.unported:  # the scalar model raises where such a flow moves data
            narrowed &= ~(flows[slot, 2] != 0)
        before = narrowed.copy()
        value = _accesses(table, flows, bw_min, ratio, n, narrowed)
        inputs = AccessInputs(unported, table, flows, n, before)
        return Accesses(value, table.slots, inputs), narrowed

    if memo is None:
        accesses, narrowed = make()
    else:  # ``exact`` is the movement's own (its zero extents): the same for every variant
        rows = (table.row.tobytes(), table.instances.tobytes())
        accesses, narrowed = memo.get(("word accesses", unported, rows, bw_min, ratio), make)
    exact &= narrowed
    return accesses


def under_bandwidths(inputs: "AccessInputs", bandwidths: dict) -> tuple | None:
    """``(accesses, exact)`` of the candidates whose accesses kept ``inputs`` under other ports'
    bandwidths (``bandwidths``: (operand, level, direction) -> ``(bw_min, bw_max)``, ``(None,
    None)`` without a port): the same rows through the same compiled step, so the bits a model
    with those bandwidths finds; None when the ports present differ (not the same rows)."""
    unported = tuple(low is None and high is None for low, high in bandwidths.values())
    if unported != inputs.unported:
        return None
    chosen = [bandwidths[key] for key in inputs.table.keys]
    exact = inputs.exact.copy()
    value = _accesses(
        inputs.table,
        inputs.flows,
        tuple(low for low, _ in chosen),
        tuple(low / high for low, high in chosen),
        inputs.n,
        exact,
    )
    return Accesses(value, inputs.table.slots), exact


class AccessInputs(NamedTuple):
    """What a model's word accesses read besides the ports' bandwidths (:func:`under_bandwidths`):
    which (level, direction) have no port (in the order of the levels and :data:`DIRECTIONS`),
    the rows (with each one's ``(operand, level, direction)``), the packed flows, the
    candidates' count and their exactness before the accesses."""

    unported: tuple
    table: "_AccessTable"
    flows: np.ndarray
    n: int
    exact: np.ndarray


def _accesses(table, flows, bw_min, ratio, n, exact) -> np.ndarray:
    """The word accesses of ``table``'s rows (:func:`word_accesses`), one row per flow, ``exact``
    narrowed."""
    from zigzag.mapping_search.batched import movement_kernels  # numba: by the first search

    if not len(table.row):
        return np.zeros((0, n))
    return movement_kernels.word_accesses(
        flows,
        table.row,
        np.array(bw_min, dtype=np.float64),
        np.array(ratio, dtype=np.float64),
        table.instances,
        exact,
    )


def _access_table(model, unported: tuple) -> "_AccessTable":
    """Which (operand, level, direction) flows :func:`word_accesses` computes (those that may move
    data and have a port: ``unported`` tells, per level and direction, where there is none):
    the same for the models of one set-up frame and spatial mapping (kept with their
    spatial quantities)."""
    places, keys, row, instances, no_port = [], [], [], [], []
    levels = 0
    for op, info in model.ops.items():
        units = model.spatial[op].unit_count
        for k in range(info.n):
            for d_index, d in enumerate(DIRECTIONS):
                at = model.flow_slots[op][k, d_index]
                if at < 0:  # an idle flow (idle_flow): no accesses, as the kernel would find
                    continue
                if unported[len(DIRECTIONS) * levels + d_index]:
                    no_port.append(at)
                    continue
                places.append((levels, d))
                keys.append((op, k, d))
                row.append(at)
                instances.append(float(units[k + 1]))
            levels += 1
    slots = np.full((levels, 4), -1, dtype=np.int64)
    for r, (level, d) in enumerate(places):
        slots[level, _ENERGY_ORDER[d]] = r
    arrays = (np.array(row, dtype=np.int64), np.array(instances, dtype=np.float64), slots)
    for array in arrays:
        array.setflags(write=False)
    return _AccessTable(places, tuple(keys), *arrays[:2], no_port, slots)


class _AccessTable(NamedTuple):
    """:func:`_access_table`: per row its (level, direction) (whose ports it reads), its
    (operand, level, direction), its flow's slot in ``model.Packed`` and its
    instances; the slots of the flows without a port; :attr:`Accesses.slots`."""

    places: list
    keys: tuple
    row: np.ndarray
    instances: np.ndarray
    unported: list
    slots: np.ndarray


#: per spatial analysis (``zigzag.cost.model.quantities.spatial_analysis``, kept there by set-up
#: frame and spatial mapping, so one object for the models of one structure and mapping): the
#: object itself (held, so that its id is not reused) and what was derived from it, by key
_DERIVED: dict = {}
DERIVED_KEPT = 4096


def kept_with(spatial, key, make):
    """``make()``, kept with the spatial analysis object ``spatial`` under ``key`` (``make``
    must read nothing of the model but its set-up frame, ``spatial`` and ``key``)."""
    entry = _DERIVED.get(id(spatial))
    if entry is None or entry[0] is not spatial:
        if len(_DERIVED) >= DERIVED_KEPT:
            _DERIVED.clear()
        entry = _DERIVED[id(spatial)] = (spatial, {})
    value = entry[1].get(key)
    if value is None:
        value = entry[1][key] = make()
    return value


def idle_flow(operand, k: int, d: str) -> bool:
    """Whether no data ever moves in direction ``d`` of ``operand``'s memory level ``k``: an
    input's writes to lower and reads from lower, the top level's to and from higher."""
    return (not operand.is_output and d in ("fl", "th")) or (
        k == operand.n - 1 and d in ("fh", "th")
    )


@dataclass(frozen=True)
class Accesses:
    """:func:`word_accesses`' result: ``value`` the word accesses of the flows that move data, a
    row each; ``slots[l]`` the rows of level ``l``'s th, tl, fh and fl accesses (-1: none, 0.0);
    ``inputs`` (:class:`AccessInputs`, on a model's own) what they read besides the bandwidths,
    for the same candidates under a sibling's ports (``zigzag.mapping_search.batched.together``)."""

    value: np.ndarray
    slots: np.ndarray
    inputs: "AccessInputs | None" = None


#: the column of each direction in :attr:`Accesses.slots` (reads, then writes, as summed)
_ENERGY_ORDER = {"th": 0, "tl": 1, "fh": 2, "fl": 3}


def access_energy(
    accesses: Accesses, costs: list[tuple], mac_energy: float, n: int, exact: np.ndarray
):
    """``energy_total`` of the candidates from their word accesses (:func:`word_accesses`)
    and the ``(r_cost, w_cost)`` of each (operand, level) (docs/models/cost-model.md#energy), and
    ``exact`` narrowed where integer costs leave the exact range; the same float operations in
    the same order whoever calls it, so equal inputs give bit-identical energies (compiled:
    :func:`~zigzag.mapping_search.batched.movement_kernels.access_energies`)."""
    from zigzag.mapping_search.batched import movement_kernels  # numba: by the first search

    energy = movement_kernels.access_energies(
        accesses.value,
        accesses.slots,
        np.array([float(r) for r, _ in costs], dtype=np.float64),
        np.array([float(w) for _, w in costs], dtype=np.float64),
    )
    if not all(isinstance(r, float) and isinstance(w, float) for r, w in costs):
        # the scalar model sums Python ints exactly: stay where float64 does too
        exact = exact & (energy < EXACT)
    return energy + mac_energy, exact
