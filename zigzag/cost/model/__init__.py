"""The single-layer analytical cost model (the readable scalar oracle).

One layer + one accelerator + one spatial mapping (in its fractional and integer per-level
forms) + one temporal mapping  ->  energy, latency and every intermediate figure.

This package is meant to be read side by side with docs/models/cost-model.md: every function
implements one concept of that page and says which section.  The reference's numeric
behaviour is reproduced on purpose -- Python ``round`` (half to even), ``int`` truncation,
``ceil``, the order of float operations -- and so are its quirks;
where a quirk is reproduced the code says so.

Vocabulary (docs/models/cost-model.md):

* *layer operands* ``O, W, I`` (output first); *memory operands* ``I1, I2, O``;
* the four directions of a memory level: ``fh`` (written from the higher level), ``tl``
  (read to the lower level), ``fl`` (written from the lower level), ``th`` (read to the
  higher level);
* for an operand with ``n`` memory levels, *architecture index* ``a = 0..n``: ``a = 0`` is
  the MAC array, ``a = k + 1`` is memory level ``k``.

Its modules follow the computation: ``setup`` (the layer and the hardware, before any
mapping), ``quantities`` (spatial and temporal quantities, docs/models/cost-model.md#spatial-mapping), ``movement`` (transfers,
utilisation, word accesses and energy, docs/models/cost-model.md#data-held-per-level), ``latency`` (double buffering, stall and
slack, docs/models/cost-model.md#latency), ``loading`` (on- and off-loading, docs/models/cost-model.md#latency); this module puts them
together.

Entry points: :func:`evaluate` (a :class:`~zigzag.cost.result.CostResult`) and
:func:`analyse` (a :class:`CostDetail` holding the result and the intermediates, for tests
and debugging; :func:`evaluate` is ``analyse(...).result``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from zigzag.cost.array import DIGITAL_CYCLES_PER_OP, array_cost
from zigzag.cost.model.latency import PortStall, double_buffer_flags, stall_slack, transfer_cycles
from zigzag.cost.model.loading import (
    OnloadingParts,
    offloading_cycles,
    onloading_cycles,
    port_bound_cycles,
    port_loading,
    reduce_balanced,
)
from zigzag.cost.model.movement import (
    OperandMovement,
    memory_energy,
    memory_utilization,
    memory_word_access,
    operand_movement,
)
from zigzag.cost.model.quantities import (
    SpatialQuantities,
    TemporalQuantities,
    decouple_pr_loops,
    normalise_levels,
    spatial_analysis,
    temporal_quantities,
)
from zigzag.cost.model.setup import Setup, layer_setup
from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import Accelerator
from zigzag.hardware.vector import MAC_ARRAY, VECTOR_UNIT, VectorArray
from zigzag.workload.layer import Layer

__all__ = ["CPO", "LATENCY_MODELS", "CostDetail", "analyse", "evaluate", "reduce_balanced"]

#: the latency models (docs/models/cost-model.md#a-bandwidth-conserving-latency): ZigZag's, and ZigZag's
#: floored at the cycles every port needs for the bits crossing it
LATENCY_MODELS = ("zigzag", "bandwidth_bound")

#: cycles per operation of a digital array, for callers that model digital cores only
#: (zigzag.multicore); an evaluation reads its own from ``Setup.cycles_per_op``.
CPO = DIGITAL_CYCLES_PER_OP


# =============================================================================================
# Putting it together
# =============================================================================================


@dataclass
class CostDetail:
    """The result of one evaluation together with its intermediates (for tests/debugging).

    Per-operand dicts are keyed by layer operand; lists by memory level unless said otherwise.
    ``spatial`` / ``movement`` use the fractional spatial mapping (energy, utilisation),
    ``spatial_int`` / ``movement_int`` the integer one (latency).
    """

    result: CostResult
    total_cycle: int
    temporal: dict[str, TemporalQuantities]
    spatial: dict[str, SpatialQuantities]
    spatial_int: dict[str, SpatialQuantities]
    movement: dict[str, OperandMovement]
    movement_int: dict[str, OperandMovement]
    memory_word_access: dict
    util: dict
    util_shared: dict
    eff_util: dict
    eff_util_shared: dict  # after the double-buffer pass (mutated)
    double_buffer: dict
    real_cycles: dict
    allowed_cycles: dict
    ports: list[PortStall]
    stall_slack_comb: int
    loading_table: dict
    offloading_table: dict
    onloading_parts: OnloadingParts
    offloading_pairs: list
    port_transfers: dict = field(default_factory=dict)  # (memory, port) -> [PortTransfer]
    borrowed: dict = field(
        default_factory=dict
    )  # (memory, port) -> {memory operand: (cycles, bandwidth)}
    access_same_data_considered_as_no_access: bool = True
    latency_model: str = "zigzag"
    port_bound_cycle: int | None = None  # the busiest port's cycles (bandwidth_bound model only)
    _setup: Setup | None = field(repr=False, default=None)

    def element_move_counts(self) -> dict[str, list[dict[str, int]]]:
        """Informational element-move counts per operand, level and direction (docs/models/cost-model.md#data-movement;
        fractional variant).  Not used by energy or latency."""
        return _element_move_counts(self)


def analyse(
    layer: Layer,
    accelerator: Accelerator,
    spatial: dict,
    spatial_int: dict,
    temporal: dict,
    *,
    access_same_data_considered_as_no_access: bool = True,
    spatial_mapping_array: dict | None = None,
    latency_model: str = "zigzag",
) -> CostDetail:
    """Evaluate one (spatial, temporal) mapping of ``layer`` on ``accelerator``, keeping the
    intermediate figures (docs/models/cost-model.md gives the computation order).

    ``spatial`` / ``spatial_int``: the fractional / integer per-level spatial mappings
    ``{layer op: [[(dim, factor), ...] per memory level, + the unserved entry]}`` (docs/models/cost-model.md#spatial-mapping);
    ``temporal``: ``{layer op: [[(dim, size), ...] per memory level]}``, innermost first, as
    produced by the memory allocator (the stationarity merge-down is done here, docs/models/cost-model.md#temporal-mapping).
    ``spatial_mapping_array`` (``{OA dim: {layer dim: factor}}``) is only recorded.
    ``latency_model`` is one of :data:`LATENCY_MODELS`.
    """
    if latency_model not in LATENCY_MODELS:
        raise ValueError(
            f"unknown latency model '{latency_model}'; one of {', '.join(LATENCY_MODELS)}"
        )
    setup = layer_setup(layer, accelerator)
    flag = access_same_data_considered_as_no_access

    # docs/models/cost-model.md#spatial-mapping spatial quantities, both variants (cached per spatial mapping)
    frac_levels = normalise_levels(spatial)
    int_levels = normalise_levels(spatial_int)
    frac_key = tuple((op, frac_levels[op]) for op in setup.operands)
    int_key = tuple((op, int_levels[op]) for op in setup.operands)
    spatial_q = spatial_analysis(setup, frac_key)
    # integral fractional factors give identical figures: reuse them
    same_variant = frac_key == int_key
    spatial_q_int = spatial_q if same_variant else spatial_analysis(setup, int_key)

    # docs/models/cost-model.md#temporal-mapping temporal quantities
    temporal_levels = normalise_levels(temporal)
    temporal_q = {
        op: temporal_quantities(temporal_levels[op], o) for op, o in setup.operands.items()
    }
    for op, o in setup.operands.items():
        if len(temporal_levels[op]) != o.n:
            raise ValueError(
                f"temporal mapping of operand {op} has {len(temporal_levels[op])} levels, expected {o.n}"
            )
    totals = {tq.cabl[-1] for tq in temporal_q.values()}
    if len(totals) != 1:
        raise ValueError(
            f"temporal mapping gives different total cycle counts per operand: {totals}"
        )
    total_cycle = totals.pop()

    # docs/models/cost-model.md#data-held-per-level data movement, both variants
    movement = {
        op: operand_movement(o, temporal_q[op], spatial_q[op], total_cycle, setup.pr_sizes, flag)
        for op, o in setup.operands.items()
    }
    if same_variant:
        movement_int = movement
    else:
        movement_int = {
            op: operand_movement(
                o, temporal_q[op], spatial_q_int[op], total_cycle, setup.pr_sizes, flag
            )
            for op, o in setup.operands.items()
        }

    # docs/models/cost-model.md#data-held-per-level utilisation; docs/models/cost-model.md#data-movement accesses; docs/models/cost-model.md#energy energy
    util, util_sh, eff, eff_sh = memory_utilization(setup, movement)
    accesses = memory_word_access(setup, movement, spatial_q)
    mem_energy, breakdown, further = memory_energy(setup, accesses)
    array = array_cost(
        layer, accelerator, spatial_mapping_array
    )  # IMC: docs/models/imc.md#array-energy-per-layer
    energy_total = mem_energy + array.mac_energy

    # docs/models/cost-model.md#latency latency
    eff_sh_after = {op: list(v) for op, v in eff_sh.items()}
    db = double_buffer_flags(setup, eff, eff_sh_after)
    real, allowed = transfer_cycles(setup, movement_int, db)
    ss_comb, ports = stall_slack(setup, movement_int, real, allowed)
    loading, offloading, transfers, borrowed = port_loading(
        setup, movement_int, real, ss_comb, total_cycle
    )
    onload, parts = onloading_cycles(setup, loading)
    offload, pairs = offloading_cycles(setup, offloading)

    # docs/models/cost-model.md#latency totals
    ideal_cycle = math.ceil(math.ceil(layer.total_macs / setup.total_units) * setup.cycles_per_op)
    ideal_temporal_cycle = total_cycle * setup.cycles_per_op
    latency0 = ideal_temporal_cycle + ss_comb
    latency1 = latency0 + onload
    latency2 = latency1 + offload
    port_bound = None
    if latency_model == "bandwidth_bound":
        # docs/models/cost-model.md#a-bandwidth-conserving-latency: the shortfall is on-loading
        port_bound = port_bound_cycles(setup, movement)
        if port_bound > latency2:
            extra = port_bound - latency2
            onload, latency1, latency2 = onload + extra, latency1 + extra, latency2 + extra

    result = CostResult(
        layer_id=layer.id,
        layer_name=layer.name,
        accelerator_name=accelerator.name,
        memory_names=dict(setup.memory_names),
        energy_total=energy_total,
        mac_energy=array.mac_energy,
        mem_energy=mem_energy,
        mem_energy_breakdown={op: tuple(v) for op, v in breakdown.items()},
        mem_energy_breakdown_further={op: tuple(v) for op, v in further.items()},
        memory_word_access={op: tuple(v) for op, v in accesses.items()},
        ideal_cycle=ideal_cycle,
        ideal_temporal_cycle=ideal_temporal_cycle,
        latency_total0=latency0,
        latency_total1=latency1,
        latency_total2=latency2,
        data_onloading_cycle=onload,
        data_offloading_cycle=offload,
        stall_slack_comb=ss_comb,
        mac_spatial_utilization=ideal_cycle / ideal_temporal_cycle,
        mac_utilization0=ideal_cycle / latency0,
        mac_utilization1=ideal_cycle / latency1,
        mac_utilization2=ideal_cycle / latency2,
        mem_utilization_individual={op: tuple(v) for op, v in util.items()},
        mem_utilization_shared={op: tuple(v) for op, v in util_sh.items()},
        effective_mem_utilization_individual={op: tuple(v) for op, v in eff.items()},
        effective_mem_utilization_shared={op: tuple(v) for op, v in eff_sh_after.items()},
        double_buffer={op: tuple(v) for op, v in db.items()},
        spatial_mapping={op: frac_levels[op] for op in setup.operands},
        spatial_mapping_int={op: int_levels[op] for op in setup.operands},
        temporal_mapping=_without_pseudo_loop({op: temporal_levels[op] for op in setup.operands}),
        temporal_mapping_stationary=_without_pseudo_loop(
            {op: temporal_q[op].stationary for op in setup.operands}
        ),
        spatial_mapping_array=_normalise_array(spatial_mapping_array),
        area_operational_array=array.area,
        area_memories=dict(array.memory_areas),
        mac_energy_breakdown=array.mac_energy_breakdown,
        tclk=array.tclk,
        tclk_breakdown=array.tclk_breakdown,
        area_operational_array_breakdown=array.area_breakdown,
        **_unit_of(accelerator),
        port_stall_slack={f"{p.memory}.{p.port}": p.stall_slack for p in ports if p.activities},
    )
    return CostDetail(
        result=result,
        total_cycle=total_cycle,
        temporal=temporal_q,
        spatial=spatial_q,
        spatial_int=spatial_q_int,
        movement=movement,
        movement_int=movement_int,
        memory_word_access=accesses,
        util=util,
        util_shared=util_sh,
        eff_util=eff,
        eff_util_shared=eff_sh_after,
        double_buffer=db,
        real_cycles=real,
        allowed_cycles=allowed,
        ports=ports,
        stall_slack_comb=ss_comb,
        loading_table=loading,
        offloading_table=offloading,
        onloading_parts=parts,
        offloading_pairs=pairs,
        port_transfers=transfers,
        borrowed=borrowed,
        access_same_data_considered_as_no_access=flag,
        latency_model=latency_model,
        port_bound_cycle=port_bound,
        _setup=setup,
    )


def evaluate(
    layer: Layer,
    accelerator: Accelerator,
    spatial: dict,
    spatial_int: dict,
    temporal: dict,
    **options,
) -> CostResult:
    """Cost of one mapping of one layer on one accelerator (docs/models/cost-model.md#layers-and-operands): :func:`analyse`
    without the intermediates, same arguments and keyword options."""
    return analyse(layer, accelerator, spatial, spatial_int, temporal, **options).result


def _unit_of(accelerator: Accelerator) -> dict:
    """The unit an evaluation ran on: the MAC array, or a vector unit's lanes (docs/models/operators.md)."""
    array = accelerator.operational_array
    if isinstance(array, VectorArray):
        return {"compute_unit": VECTOR_UNIT, "vector_op": array.operation}
    return {"compute_unit": MAC_ARRAY, "vector_op": None}


def _without_pseudo_loop(mapping: dict[str, tuple]) -> dict[str, tuple]:
    """A layer with no temporal loop is searched with one loop of size 1 standing in for them; the
    result shows its temporal mapping empty, as ZigZag does (the figures are the same either way)."""
    if any(size != 1 for levels in mapping.values() for level in levels for _, size in level):
        return mapping
    return {op: tuple(() for _ in levels) for op, levels in mapping.items()}


def _normalise_array(mapping: dict | None):
    if mapping is None:
        return None
    return {
        oa: {d: f for d, f in (unrolling.items() if isinstance(unrolling, dict) else unrolling)}
        for oa, unrolling in mapping.items()
    }


def _element_move_counts(detail: CostDetail) -> dict[str, list[dict[str, int]]]:
    """docs/models/cost-model.md#data-movement (informational): element moves per operand, level and direction."""
    setup = detail._setup
    layer = setup.layer
    macs = layer.total_macs
    result = {}
    for op, operand in setup.operands.items():
        n = operand.n
        tq = detail.temporal[op]
        sq = detail.spatial[op]
        T, S = tq.stationary, sq.levels
        one_one = [S[0]] + [T[k] + S[k + 1] for k in range(n)]
        one_two = [()] + [T[k] + S[k] for k in range(n)] + [S[n]]
        if operand.pr_relations:
            one_one = decouple_pr_loops(one_one, operand, setup.pr_sizes)
            one_two = decouple_pr_loops(one_two, operand, setup.pr_sizes)
        irr = operand.irrelevant_dec

        def ir_per_level(levels):  # called in this iteration only
            return [math.prod(s for d, s in level if d in irr) for level in levels]  # noqa: B023

        ir1, ir2 = ir_per_level(one_one), ir_per_level(one_two)
        ir1_cabl = [math.prod(ir1[: a + 1]) for a in range(n + 1)]
        ir2_cabl = [math.prod(ir2[: a + 1]) for a in range(n + 1)]
        raw1 = [round(macs / x) for x in ir1_cabl]
        raw2 = [round(macs / x) for x in ir2_cabl]
        per_level = []
        if operand.is_output:
            caal = [math.prod(ir1[a:]) for a in range(n + 1)] + [1, 1]
            size = layer.operand_size_elem(op)
            for k in range(n):
                counts = {
                    "fh": int(size * (caal[k + 2] - 1)),
                    "tl": int(size * (caal[k + 1] - 1)),
                    "fl": raw1[k],
                    "th": raw2[k + 1],
                }
                per_level.append(counts)
        else:
            mv = detail.movement[op]
            bits_total0 = round(mv.D[0] * sq.unit_unique[0]) * mv.precision[0]
            bw = operand.levels[0].bw_max["tl"]
            fits = bw is not None and bw >= bits_total0 // sq.unit_unique[1]
            for k in range(n):
                tl = raw1[k]
                if k == 0 and detail.access_same_data_considered_as_no_access and fits:
                    tl = int(raw1[0] / tq.mac_st)
                per_level.append({"fh": raw2[k + 1], "tl": tl, "fl": 0, "th": 0})
        per_level[-1]["fh"] = per_level[-1]["th"] = 0
        result[op] = per_level
    return result
