"""The single-layer analytical cost model (the readable scalar oracle).

One layer + one accelerator + one spatial mapping (in its fractional and integer per-level
forms) + one temporal mapping  ->  energy, latency and every intermediate figure.

This module is meant to be read side by side with ``spec/cost-model.md``: every function
implements one concept of the spec and says which section.  The reference's numeric
behaviour is reproduced on purpose -- Python ``round`` (half to even), ``int`` truncation,
``ceil``, the order of float operations -- and so are its quirks (spec §13, "Q1".."Q24");
where a quirk is reproduced the code says so.

Vocabulary (spec §0):

* *layer operands* ``O, W, I`` (output first); *memory operands* ``I1, I2, O``;
* the four directions of a memory level: ``fh`` (written from the higher level), ``tl``
  (read to the lower level), ``fl`` (written from the lower level), ``th`` (read to the
  higher level);
* for an operand with ``n`` memory levels, *architecture index* ``a = 0..n``: ``a = 0`` is
  the MAC array, ``a = k + 1`` is memory level ``k``.

Entry points: :func:`evaluate` (a :class:`~zigzag.cost.result.CostResult`) and
:func:`analyse` (a :class:`CostDetail` holding the result and the intermediates, for tests
and debugging; :func:`evaluate` is ``analyse(...).result``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from zigzag.errors import InputError
from zigzag.hardware.accelerator import DIRECTION_NAMES, DIRECTIONS, Accelerator, Memory
from zigzag.workload.layer import DimRelation, Layer

from zigzag.cost.array import DIGITAL_CYCLES_PER_OP, array_cost, cycles_per_op
from zigzag.cost.result import CostResult

#: cycles per operation of a digital array, for callers that model digital cores only
#: (zigzag.stream); an evaluation reads its own from ``_Setup.cycles_per_op``.
CPO = DIGITAL_CYCLES_PER_OP

#: memory operands whose traffic counts as *on-loading* (the others as *off-loading*), §9.5.
LOADING_MEMORY_OPERANDS = ("I1", "I2")

Loops = tuple[tuple[str, float], ...]  # one level: (dim, size) pairs, innermost first
LevelLoops = tuple[Loops, ...]  # one operand: a Loops per level


# =============================================================================================
# Per (layer, accelerator) set-up: everything that does not depend on the mappings
# =============================================================================================


class _Level(NamedTuple):
    """Memory level ``k`` of one operand, with the figures the cost model reads."""

    memory: Memory
    size: int
    r_cost: float
    w_cost: float
    bw_min: dict  # direction -> int | None
    bw_max: dict  # direction -> int | None
    sharing: tuple[tuple[str, int], ...] | None  # linked (layer operand, level) members, or None


@dataclass(frozen=True, eq=False)
class _Operand:
    """One layer operand seen by the cost model (spec §2.4-§2.7, §3.3)."""

    name: str
    mem_op: str
    is_output: bool
    levels: tuple[_Level, ...]
    precision: int  # element width (P_O for the output)
    final_precision: int  # P_Of for the output, = precision for inputs
    relevant: frozenset[str]  # r(op), non-decoupled
    irrelevant: frozenset[str]  # ir(op), non-decoupled
    relevant_dec: frozenset[str]  # r'(op) = r(op) + the X_R names (§2.4)
    irrelevant_dec: frozenset[str]  # ir'(op) = ir(op) + the X_IR names
    pr_relations: tuple[DimRelation, ...]  # the whole pr map for a pr operand, else ()

    @property
    def n(self) -> int:
        return len(self.levels)


class _PortDuty(NamedTuple):
    mem_op: str
    level: int
    direction: str
    layer_op: str  # the linked layer operand
    key: str  # loading-table key "<layer op><level>_<direction long name>" (§9.5)
    loading: bool  # recorded in the on-loading table (I1, I2) rather than the off-loading one


@dataclass(frozen=True, eq=False)
class _Port:
    memory: str
    name: str
    bw_max: int
    duties: tuple[_PortDuty, ...]  # served (op, level, dir) of linked memory operands, in order
    loading_duties: tuple[_PortDuty, ...]  # the same without the output's tl and fh (§9.5)
    shared_by_two_inputs: bool  # §3.2: serves both I1 and I2 (whatever the layer)


@dataclass(frozen=True, eq=False)
class _Setup:
    layer: Layer
    accelerator: Accelerator
    operands: dict[str, _Operand]  # layer-operand order: output, then inputs in equation order
    ports: tuple[_Port, ...]  # memories in YAML order, used ports in order
    pr_sizes: dict[str, int]  # PRS_X (§2.3)
    sharing_groups: tuple[tuple[tuple[str, int], ...], ...]  # linked (layer op, level) members (§3.3)
    memory_names: dict[str, tuple[str, ...]]
    total_units: int
    #: cycles per operation (CPO): 1.0 for a digital array, ``P_a / b`` for an IMC array
    #: (imc.md §9.3). A float even when 1.0: it makes several latency figures floats, exactly
    #: as in the reference (spec §0, Q21).
    cycles_per_op: float


def r_name(data_dim: str) -> str:
    """Synthetic loop name of the data-size part of a pr data dim (§4.6)."""
    return f"{data_dim}_R"


def ir_name(data_dim: str) -> str:
    """Synthetic loop name of the reuse part of a pr data dim (§4.6)."""
    return f"{data_dim}_IR"


@lru_cache(maxsize=128)
def _setup(layer: Layer, accelerator: Accelerator) -> _Setup:
    """Everything about the layer and the hardware the mappings do not change (cached)."""
    links = layer.memory_operand_links
    layer_of = layer.layer_operand_of
    x_r = frozenset(r_name(x) for x in layer.pr_map)
    x_ir = frozenset(ir_name(x) for x in layer.pr_map)

    # sharing groups (§3.3) restricted to the memory operands linked for this layer
    groups = []
    group_of: dict[tuple[str, int], tuple[tuple[str, int], ...]] = {}
    for group in accelerator.sharing_groups:
        members = tuple((layer_of[m], lv) for m, lv in group.items() if m in layer_of)
        groups.append(members)
        for m, lv in group.items():
            group_of.setdefault((m, lv), members)

    operands = {}
    for op in layer.operands:
        mem_op = links[op]
        levels = []
        for k, mem in enumerate(accelerator.hierarchy(mem_op)):
            levels.append(
                _Level(
                    memory=mem,
                    size=mem.size,
                    r_cost=mem.r_cost,
                    w_cost=mem.w_cost,
                    bw_min={d: mem.bandwidth_min(mem_op, d) for d in DIRECTIONS},
                    bw_max={d: mem.bandwidth_max(mem_op, d) for d in DIRECTIONS},
                    sharing=group_of.get((mem_op, k)),
                )
            )
        is_output = op == layer.output
        operands[op] = _Operand(
            name=op,
            mem_op=mem_op,
            is_output=is_output,
            levels=tuple(levels),
            precision=layer.precision[op],
            final_precision=layer.final_output_precision if is_output else layer.precision[op],
            relevant=frozenset(layer.relevant[op]),
            irrelevant=frozenset(layer.irrelevant[op]),
            relevant_dec=frozenset(layer.relevant[op]) | x_r,
            irrelevant_dec=frozenset(layer.irrelevant[op]) | x_ir,
            pr_relations=tuple(layer.partially_relevant[op].values()),
        )

    # Ports: unlinked memory operands are skipped, in §9.3 as the reference does and in §9.5
    # where the reference would fail (Q19).
    output_mem_op = links[layer.output]
    ports = []
    for mem in accelerator.memories:
        for port, duties in mem.used_ports:
            linked = []
            for m, d in duties:
                if m not in layer_of:
                    continue
                level = accelerator.level_index[(mem.name, m)]
                op = layer_of[m]
                linked.append(_PortDuty(m, level, d, op, _loading_key(op, level, d), m in LOADING_MEMORY_OPERANDS))
            ports.append(
                _Port(
                    memory=mem.name,
                    name=port.name,
                    bw_max=port.bandwidth_max,
                    duties=tuple(linked),
                    loading_duties=tuple(
                        d for d in linked if not (d.mem_op == output_mem_op and d.direction in ("tl", "fh"))
                    ),
                    shared_by_two_inputs=len({m for m, _ in duties if m in LOADING_MEMORY_OPERANDS}) > 1,
                )
            )

    return _Setup(
        layer=layer,
        accelerator=accelerator,
        operands=operands,
        ports=tuple(ports),
        pr_sizes=dict(layer.pr_sizes),
        sharing_groups=tuple(groups),
        memory_names={op: tuple(lv.memory.name for lv in o.levels) for op, o in operands.items()},
        total_units=accelerator.operational_array.total_units,
        cycles_per_op=cycles_per_op(accelerator),
    )


# =============================================================================================
# §4.6  pr-decoupling
# =============================================================================================


def decouple_pr_loops(levels, operand: _Operand, pr_sizes: dict[str, int]) -> list[list[tuple[str, float]]]:
    """Replace the pr loops (``OX``, ``FX`` ...) of a pr operand by ``X_R`` / ``X_IR`` pairs (§4.6).

    Walks the levels bottom-up and the loops in order, keeping per data dim ``X`` the
    cumulative sizes of its two related dims.  Each pr loop becomes ``(X_R, e / e_prev)``
    followed by ``(X_IR, ru / ru_prev)`` with ``e`` the clipped extent of ``X`` so far (``int()``
    of the cumulative sizes, Q14) and ``ru = cumA * cumB / e`` the reuse so far.
    """
    relations = operand.pr_relations
    if not relations:
        return [list(level) for level in levels]
    keep = operand.relevant | operand.irrelevant
    # per data dim: [cum_a, cum_b, e_prev, ru_prev]
    state = {rel.data_dim: [1, 1, 1, 1] for rel in relations}
    result = []
    for level in levels:
        new_level = []
        for dim, size in level:
            matched = False
            if dim not in keep:
                for rel in relations:
                    if dim != rel.dim_a and dim != rel.dim_b:
                        continue
                    matched = True
                    st = state[rel.data_dim]
                    if dim == rel.dim_a:
                        st[0] *= size
                    else:
                        st[1] *= size
                    extent = min(pr_sizes[rel.data_dim], rel.unique_count(int(st[0]), int(st[1])))
                    reuse = (st[0] * st[1]) / extent
                    new_level.append((r_name(rel.data_dim), extent / st[2]))
                    new_level.append((ir_name(rel.data_dim), reuse / st[3]))
                    st[2], st[3] = extent, reuse
            if not matched:
                new_level.append((dim, size))
        result.append(new_level)
    return result


# =============================================================================================
# §4.5  Derived spatial quantities
# =============================================================================================


@dataclass(frozen=True)
class SpatialQuantities:
    """§4.5 for one operand and one spatial variant (lists indexed by architecture index)."""

    levels: LevelLoops  # S_0 .. S_n as given
    unit_count: tuple[int, ...]  # instances at each architecture index
    unit_unique: tuple[float, ...]  # instances holding distinct data
    boost: tuple[int, ...]  # memory bandwidth boost; boost[n] = 1


def spatial_quantities(levels: LevelLoops, operand: _Operand, pr_sizes: dict[str, int]) -> SpatialQuantities:
    """Unit counts, unique-unit counts and bandwidth boosts of one operand (§4.5).

    A factor counts as relevant when its (decoupled) dim is in ``r'``; everything else --
    including dims that are neither r' nor ir' -- counts as irrelevant (Q15).
    """
    decoupled = decouple_pr_loops(levels, operand, pr_sizes)
    relevant = operand.relevant_dec
    unroll_r, unroll_total = [], []
    for level in decoupled:
        r = total = 1
        for dim, factor in level:
            if dim in relevant:
                r *= factor
            total *= factor
        unroll_r.append(r)
        unroll_total.append(total)
    arch = len(decoupled)
    unit_count = tuple(round(round(math.prod(unroll_total[a:]), 3)) for a in range(arch))
    unit_unique = tuple(math.prod(unroll_r[a:]) for a in range(arch))
    boost = tuple(round(unit_unique[k] / unit_unique[k + 1]) for k in range(arch - 1)) + (1,)
    return SpatialQuantities(levels, unit_count, unit_unique, boost)


def _normalise_levels(mapping: dict) -> dict[str, LevelLoops]:
    """``{op: [[(dim, size), ...] per level]}`` (lists or tuples) as nested tuples."""
    return {op: tuple(tuple(map(tuple, level)) for level in levels) for op, levels in mapping.items()}


@lru_cache(maxsize=4096)
def _spatial_analysis(setup: _Setup, levels: tuple[tuple[str, LevelLoops], ...]) -> dict[str, SpatialQuantities]:
    """§4.5 for every operand of one spatial variant (cached: a search evaluates one spatial
    mapping with many temporal mappings)."""
    per_op = dict(levels)
    result = {}
    for op, operand in setup.operands.items():
        if len(per_op[op]) != operand.n + 1:
            raise ValueError(
                f"spatial mapping of operand {op} has {len(per_op[op])} entries, "
                f"expected {operand.n + 1} (memory levels + 1)"
            )
        result[op] = spatial_quantities(per_op[op], operand, setup.pr_sizes)
    macs = {q.unit_count[0] for q in result.values()}
    if len(macs) != 1:
        raise ValueError(f"spatial mapping gives different MAC-level unit counts per operand: {macs}")
    return result


# =============================================================================================
# §5.3-5.4  Temporal mapping: stationarity merge-down, cycle counts, top loops
# =============================================================================================


def _leading_run(loops, dims) -> int:
    """Length of the maximal run of loops at the innermost end whose dims are in ``dims``."""
    count = 0
    for dim, _ in loops:
        if dim not in dims:
            break
        count += 1
    return count


def merge_down(levels: LevelLoops, irrelevant: frozenset[str]) -> tuple[LevelLoops, float]:
    """Stationarity merge-down of one operand's temporal mapping (§5.3).

    Repeatedly moves the maximal run of ``ir(op)`` loops at the innermost end of every level
    ``L > 0`` to the outermost end of level ``L - 1``, until nothing moves.  The global loop
    order never changes, only the level boundaries rise.  Returns the stationary mapping and
    ``mac_st(op)``, the product of the ir-run at the innermost end of level 0.
    """
    work = [list(level) for level in levels]
    moved = True
    while moved:
        moved = False
        for k in range(1, len(work)):
            run = _leading_run(work[k], irrelevant)
            if run:
                work[k - 1].extend(work[k][:run])
                del work[k][:run]
                moved = True
    mac_st = 1
    for dim, size in work[0] if work else ():
        if dim not in irrelevant:
            break
        mac_st *= size
    return tuple(tuple(level) for level in work), mac_st


def cycles_at_and_below(levels: LevelLoops) -> list:
    """``cabl[k]`` = product of all loops of levels ``0..k`` (§5.4)."""
    per_level = [math.prod(size for _, size in level) for level in levels]
    return [math.prod(per_level[: k + 1]) for k in range(len(levels))]


def top_loop_sizes(levels: LevelLoops, dims: frozenset[str]) -> list:
    """Per architecture index, the product of the maximal run of loops at the *outermost*
    end of each level whose dims are in ``dims`` (``top_r`` / ``top_ir``, §5.4); index 0 is 1."""
    result = [1]
    for level in levels:
        product = 1
        for dim, size in reversed(level):
            if dim not in dims:
                break
            product *= size
        result.append(product)
    return result


@dataclass(frozen=True)
class TemporalQuantities:
    """§5.3-5.4 for one operand."""

    stationary: LevelLoops
    mac_st: float
    cabl: tuple
    top_r: tuple
    top_ir: tuple


def temporal_quantities(levels: LevelLoops, operand: _Operand) -> TemporalQuantities:
    stationary, mac_st = merge_down(levels, operand.irrelevant)
    return TemporalQuantities(
        stationary=stationary,
        mac_st=mac_st,
        cabl=tuple(cycles_at_and_below(stationary)),
        top_r=tuple(top_loop_sizes(stationary, operand.relevant)),
        top_ir=tuple(top_loop_sizes(stationary, operand.irrelevant)),
    )


# =============================================================================================
# §6  Combined per-level quantities: footprints, psum flags, precisions, bits
# =============================================================================================


def footprints(temporal: LevelLoops, spatial: LevelLoops, operand: _Operand, pr_sizes) -> list[int]:
    """``D[a]``: elements held by one instance at architecture index ``a`` (§6.2).

    Built on the "1s2t" list ``[[], T_0+S_0, ..., T_{n-1}+S_{n-1}]`` (pr-decoupled for a pr
    operand): product of the r' factors per level, cumulative product, rounded twice as the
    reference does.
    """
    combined = [()] + [temporal[k] + spatial[k] for k in range(operand.n)]
    if operand.pr_relations:
        combined = decouple_pr_loops(combined, operand, pr_sizes)
    relevant = operand.relevant_dec
    result = []
    cumulative = 1
    for level in combined:
        per_level = 1
        for dim, size in level:
            if dim in relevant:
                per_level *= size
        cumulative = cumulative * per_level
        result.append(round(round(cumulative)))
    return result


def psum_flags(temporal: LevelLoops, spatial: LevelLoops, operand: _Operand, pr_sizes) -> list[bool]:
    """``psum[k]``: memory level ``k`` of the output holds partial sums (§6.3).

    On the "1s1t" list ``[S_0, T_0+S_1, ..., T_{n-1}+S_n]``: ``psum[k]`` is true when some
    level ``a > k`` of it holds an ``ir'(O)`` loop of size > 1; ``psum[n] = False``.
    """
    n = operand.n
    combined = [spatial[0]] + [temporal[k] + spatial[k + 1] for k in range(n)]
    if operand.pr_relations:
        combined = decouple_pr_loops(combined, operand, pr_sizes)
    irrelevant = operand.irrelevant_dec
    has_ir = [any(dim in irrelevant and size > 1 for dim, size in level) for level in combined]
    return [any(has_ir[k + 1 :]) for k in range(n)] + [False]


# =============================================================================================
# §7  Data movement per level, operand and direction
# =============================================================================================


class Flow(NamedTuple):
    """One direction of one memory level (§7.2-7.5)."""

    period: int  # T: cycles between transfers
    count: int  # N: number of periods in the layer
    amount: int  # A: elements per period (per instance)
    precision: int  # P: bits per element
    bw_aver: int  # average required bandwidth (bits/cycle), int()
    window: int  # instantaneous updating window (non-double-buffered), int()


NO_FLOW = Flow(0, 0, 0, 0, 0, 0)


@dataclass(frozen=True)
class OperandMovement:
    """Everything §6-§7 derive for one operand under one spatial variant."""

    D: list[int]  # elements per instance, per architecture index
    precision: list[int]  # per architecture index (output: from the psum flags, Q1)
    bits: list[int]  # D * precision
    eff_bits: list[int]  # bits // top_r
    psum: list[bool] | None  # output only
    flows: list[dict[str, Flow]]  # per memory level: direction -> Flow


def operand_movement(
    operand: _Operand,
    temporal: TemporalQuantities,
    spatial: SpatialQuantities,
    total_cycle,
    pr_sizes,
    same_data_no_access: bool,
) -> OperandMovement:
    """§6.2-§6.4 and §7.1-§7.5 for one operand and one spatial variant."""
    n = operand.n
    T = temporal.stationary
    S = spatial.levels
    D = footprints(T, S, operand, pr_sizes)
    boost = spatial.boost
    top_ir = temporal.top_ir

    # §6.3 precisions per architecture index; §7.1 period base
    if operand.is_output:
        psum = psum_flags(T, S, operand, pr_sizes)
        p_o, p_of = operand.precision, operand.final_precision
        prec = [p_o if flag else p_of for flag in psum]
        c = [1, *temporal.cabl]
    else:
        psum = None
        prec = [operand.precision] * (n + 1)
        c = [temporal.mac_st if same_data_no_access else 1, *temporal.cabl]

    # §6.4 bits (Q1: the output's footprint at ML_k uses prec[k+1], decided by psum[k+1])
    bits = [D[a] * prec[a] for a in range(n + 1)]
    eff_bits = [bits[a] // temporal.top_r[a] for a in range(n + 1)]

    # §7.5 required bandwidths (bits/cycle)
    low = [D[a] * prec[a] / c[a] for a in range(n + 1)]
    high = [low[a] * boost[a] for a in range(n + 1)]

    flows = []
    for k in range(n):
        s_low, s_high = int(top_ir[k]), int(top_ir[k + 1])
        t_low, t_high = int(c[k]), int(c[k + 1])
        n_low, n_high = int(total_cycle // c[k]), int(total_cycle // c[k + 1])
        if operand.is_output:
            # §7.3: psums go up (fl) and come back down (tl) equally often, and when the level
            # above accumulates they go up (th) and come back (fh) equally often (Q6)
            amount_low, bw_low, window_low = int(D[k] * boost[k]), int(high[k]), int(t_low / s_low)
            bw_high, window_high = int(low[k + 1]), int(t_high / s_high)
            if psum[k]:
                fl = tl = Flow(t_low, n_low, amount_low, p_o, bw_low, window_low)
            else:
                fl = Flow(t_low, n_low, amount_low, p_of, bw_low, window_low)
                tl = NO_FLOW
            if psum[k + 1]:
                th = fh = Flow(t_high, n_high, D[k + 1], p_o, bw_high, window_high)
            else:
                th = Flow(t_high, n_high, D[k + 1], p_of, bw_high, window_high)
                fh = NO_FLOW
        else:
            # §7.2
            p = operand.precision
            tl = Flow(t_low, n_low, D[k] * boost[k], p, int(high[k]), int(t_low / s_low))
            fh = Flow(t_high, n_high, D[k + 1], p, int(low[k + 1]), int(t_high / s_high))
            fl = th = NO_FLOW
        if k == n - 1:
            # §7.4 (Q2): traffic with the world outside the top level is not modelled
            fh = th = NO_FLOW
        flows.append({"fh": fh, "tl": tl, "fl": fl, "th": th})

    return OperandMovement(D=D, precision=prec, bits=bits, eff_bits=eff_bits, psum=psum, flows=flows)


# =============================================================================================
# §6.4  Memory utilisation
# =============================================================================================


def memory_utilization(setup: _Setup, movement: dict[str, OperandMovement]):
    """Individual and shared (effective) utilisations per operand and level (§6.4).

    Returns ``(util, util_shared, eff_util, eff_util_shared)``, each ``{op: [per level]}``.
    """
    util, eff = {}, {}
    for op, operand in setup.operands.items():
        mv = movement[op]
        util[op] = [mv.bits[k + 1] / lv.size for k, lv in enumerate(operand.levels)]
        eff[op] = [mv.eff_bits[k + 1] / lv.size for k, lv in enumerate(operand.levels)]
    util_sh = {op: list(v) for op, v in util.items()}
    eff_sh = {op: list(v) for op, v in eff.items()}
    for members in setup.sharing_groups:
        u = sum(util[op][k] for op, k in members)
        e = sum(eff[op][k] for op, k in members)
        for op, k in members:
            util_sh[op][k] = u
            eff_sh[op][k] = e
    return util, util_sh, eff, eff_sh


# =============================================================================================
# §7.6, §8  Memory word accesses and energy
# =============================================================================================


def word_accesses(flow: Flow, bw_min: int | None, bw_max: int | None, instances: int) -> int:
    """Memory word accesses of one direction of one level, all instances together (§7.6, Q3).

    Returns None when no port serves the direction although data moves (the caller reports it).
    """
    if bw_min is None and bw_max is None:
        return 0 if flow.amount == 0 else None
    if flow.amount == 0 or flow.precision == 0:
        return 0
    return int(math.ceil(flow.amount * flow.precision / bw_min) * (bw_min / bw_max) * flow.count * instances)


def memory_word_access(setup: _Setup, movement, spatial) -> dict[str, list[dict[str, int]]]:
    """Word accesses per operand, level and direction, from the fractional variant (§7.6)."""
    result = {}
    for op, operand in setup.operands.items():
        per_level = []
        for k, lv in enumerate(operand.levels):
            instances = spatial[op].unit_count[k + 1]
            flows = movement[op].flows[k]
            counts = {d: word_accesses(flows[d], lv.bw_min[d], lv.bw_max[d], instances) for d in DIRECTIONS}
            for d, count in counts.items():
                if count is None:
                    raise InputError(
                        None, f"memory {lv.memory.name}, operand {operand.mem_op}, direction {d}",
                        "no port serves this direction although data moves there; add it to a port's allocation",
                    )
            per_level.append(counts)
        result[op] = per_level
    return result


def memory_energy(setup: _Setup, accesses):
    """Per level and direction energies and their sums (§8).

    Returns ``(mem_energy, breakdown, breakdown_further)``; the running sum starts from the
    integer 0 and goes over operands in layer-operand order, levels bottom-up.
    """
    total = 0
    breakdown, further = {}, {}
    for op, operand in setup.operands.items():
        per_level, per_level_dirs = [], []
        for lv, acc in zip(operand.levels, accesses[op]):
            e_th = acc["th"] * lv.r_cost
            e_fh = acc["fh"] * lv.w_cost
            e_tl = acc["tl"] * lv.r_cost
            e_fl = acc["fl"] * lv.w_cost
            level_energy = (e_th + e_tl) + (e_fh + e_fl)
            per_level.append(level_energy)
            per_level_dirs.append({"fh": e_fh, "tl": e_tl, "fl": e_fl, "th": e_th})
            total += level_energy
        breakdown[op] = per_level
        further[op] = per_level_dirs
    return total, breakdown, further


# =============================================================================================
# §9.1-9.2  Double buffering, real and allowed transfer cycles
# =============================================================================================


def double_buffer_flags(setup: _Setup, eff_util, eff_util_shared) -> dict[str, list[bool]]:
    """``DB(op)`` per architecture index (§9.1).

    Mutates ``eff_util_shared`` as the reference does (Q13): when an operand fits beside the
    others (rule 2), its effective utilisation is added to every linked member of its
    sharing group, which affects operands processed later.
    """
    flags = {}
    for op, operand in setup.operands.items():
        db = [False]
        for k, lv in enumerate(operand.levels):
            if eff_util_shared[op][k] <= 0.5:
                db.append(True)
            elif eff_util[op][k] <= 1 - eff_util_shared[op][k]:
                db.append(True)
                if lv.sharing is not None:
                    for member_op, member_k in lv.sharing:
                        eff_util_shared[member_op][member_k] += eff_util[op][k]
            else:
                db.append(False)
        flags[op] = db
    return flags


def transfer_cycles(setup: _Setup, movement_int, db_flags):
    """Real and allowed cycles per operand, level and direction (§9.2, Q17).

    ``real = ceil(A * P / bw_max)`` (0 without bandwidth); ``allowed = ceil(X * CPO)`` with
    ``X`` the full period when the relevant level is double-buffered, else the window.  The
    relevant level is the one below for ``tl``/``fl`` and this one for ``th``/``fh``.
    """
    real, allowed = {}, {}
    for op, operand in setup.operands.items():
        real_op, allowed_op = [], []
        db = db_flags[op]
        for k, lv in enumerate(operand.levels):
            flows = movement_int[op].flows[k]
            r, a = {}, {}
            for d in DIRECTIONS:
                flow = flows[d]
                bw = lv.bw_max[d]
                r[d] = math.ceil(flow.amount * flow.precision / bw) if bw else 0
                buffered = db[k + 1] if d in ("th", "fh") else db[k]
                a[d] = math.ceil((flow.period if buffered else flow.window) * setup.cycles_per_op)
            real_op.append(r)
            allowed_op.append(a)
        real[op] = real_op
        allowed[op] = allowed_op
    return real, allowed


# =============================================================================================
# §9.3-9.4  Port activities, stall / slack
# =============================================================================================


class PortActivity(NamedTuple):
    """One served (operand, level, direction) of a port during computation (§9.3)."""

    op: str
    level: int
    direction: str
    real: int
    allowed: int
    period: int
    count: int

    @property
    def stall_or_slack(self) -> int:
        """Stall (+) or slack (-) over the layer; the first period is excluded (Q12)."""
        return (self.real - self.allowed) * (self.count - 1)

    @property
    def updating_window(self) -> int:
        return self.allowed * (self.count - 1)


@dataclass(frozen=True)
class PortStall:
    memory: str
    port: str
    activities: tuple[PortActivity, ...]
    stall_slack: int
    window_union: int | None  # only for >= 2 activities


def port_activities(setup: _Setup, movement_int, real, allowed) -> list[tuple[_Port, list[PortActivity]]]:
    """Activities per used port, memories in YAML order (§9.3); unlinked memory operands and
    directions without traffic (``N = 0``) are skipped."""
    result = []
    for port in setup.ports:
        acts = []
        for duty in port.duties:
            op = duty.layer_op
            flow = movement_int[op].flows[duty.level][duty.direction]
            if flow.count == 0:
                continue
            acts.append(PortActivity(
                op, duty.level, duty.direction,
                real[op][duty.level][duty.direction],
                allowed[op][duty.level][duty.direction],
                math.ceil(flow.period * setup.cycles_per_op),
                flow.count,
            ))
        result.append((port, acts))
    return result


def updating_window_union(activities) -> int:
    """Union of the memory-updating windows of the activities sharing a port (§9.4, Q7).

    The first activity whose allowed window fills its whole period gives ``period x count``.
    Otherwise, on a timeline of ``P*`` slots (``P*`` the longest period, first on ties, and
    ``N*`` its count) each activity marks the first ``allowed`` slots of every one of its
    periods; the union is ``(#marked slots) x N*``.
    """
    for act in activities:
        if act.period == act.allowed:
            return act.period * act.count
    longest = activities[0]
    for act in activities[1:]:
        if act.period > longest.period:
            longest = act
    return _marked_slots(activities, longest.period) * longest.count


def _marked_slots(activities, horizon: int) -> int:
    """Number of slots of ``[0, horizon)`` marked by the activities' windows (§9.4).

    With nested periods (each divides the next larger one, as in practice) the count is
    computed without building the timeline, which can be millions of slots long: sorting the
    activities by period, the union pattern of the first ``i + 1`` activities over one period
    ``p_i`` is the pattern of the first ``i`` repeated ``p_i / p_{i-1}`` times plus
    ``[0, a_i)``.  Other period sets fall back to marking the slots one by one.
    """
    acts = sorted(((act.period, min(max(act.allowed, 0), act.period)) for act in activities if act.period > 0))
    if any(p2 % p1 for (p1, _), (p2, _) in zip(acts, acts[1:])) or horizon % acts[-1][0]:
        slots = bytearray(horizon)
        for period, allowed in acts:
            for start in range(0, horizon - period + 1, period):
                slots[start : start + allowed] = b"\x01" * allowed
        return sum(slots)

    totals = []  # totals[i]: marked slots of the union of acts[0..i] over one period p_i

    def repeated(i: int, x: int) -> int:
        """Marked slots in [0, x) of the union of acts[0..i] repeated with period p_i."""
        if i < 0:
            return 0
        period = acts[i][0]
        return (x // period) * totals[i] + prefix(i, x % period)

    def prefix(i: int, x: int) -> int:
        """Marked slots in [0, x) (x <= p_i) of the union of acts[0..i]."""
        window = min(x, acts[i][1])
        return window + repeated(i - 1, x) - repeated(i - 1, window)

    for i, (period, _) in enumerate(acts):
        totals.append(prefix(i, period))
    return totals[-1] * (horizon // acts[-1][0])


def port_stall_slack(activities) -> tuple[int, int | None]:
    """``SS_port`` and the window union of one port (§9.4)."""
    if not activities:
        return 0, None
    if len(activities) == 1:
        return activities[0].stall_or_slack, None
    union = updating_window_union(activities)
    positive = negative = windows = 0
    for act in activities:
        ss = act.stall_or_slack
        if ss > 0:
            positive += ss
        else:
            negative += ss
        windows += act.updating_window
    return positive + max(0, negative + windows - union), union


def stall_slack(setup: _Setup, movement_int, real, allowed) -> tuple[int, list[PortStall]]:
    """``SS_comb`` = max(0, worst port) and the per-port details (§9.3-9.4)."""
    ports = []
    combined = 0
    for port, acts in port_activities(setup, movement_int, real, allowed):
        ss, union = port_stall_slack(acts)
        if acts:
            combined = max(combined, ss)
        ports.append(PortStall(port.memory, port.name, tuple(acts), ss, union))
    return combined, ports


# =============================================================================================
# §9.5-9.6  On-loading and off-loading
# =============================================================================================


def reduce_balanced(cycles: list, minima: list, surplus) -> tuple[list, list]:
    """Spend ``surplus`` cycles shortening the largest transfers towards their minima (§9.5).

    Reproduces the reference's algorithm exactly (Q8): items are visited from the largest
    down; visiting item ``i`` reduces all items visited so far by item ``i``'s own distance to
    its minimum, so earlier items can end below their minimum, even negative.
    """
    reductions = [0.0] * len(cycles)
    if surplus <= 0 or not cycles:
        return list(cycles), reductions
    order = sorted(range(len(cycles)), key=lambda i: cycles[i], reverse=True)
    current = list(cycles)
    for i, j in enumerate(order):
        step = current[j] - minima[j]
        capacity = step * (i + 1)
        if surplus < capacity:
            step = surplus / (i + 1)
        for prev in order[: i + 1]:
            current[prev] -= step
            reductions[prev] += step
        if surplus < capacity:
            break
        surplus -= capacity
    return current, reductions


def _loading_key(op: str, level: int, direction: str) -> str:
    return f"{op}{level}_{DIRECTION_NAMES[direction]}"


class PortTransfer(NamedTuple):
    """One transfer of a port before or after computation (§9.5): ``cycles`` left for it,
    ``bits`` moved, ``bandwidth`` of the port (bits/cycle)."""

    op: str
    level: int
    direction: str
    cycles: float
    bits: float
    bandwidth: int


def port_loading(setup: _Setup, movement_int, real, ss_comb, total_cycle):
    """Per-port on-/off-loading records (§9.5).

    Returns ``(loading, offloading, transfers, borrowed)``: the ``loading`` / ``offloading``
    tables ``{layer op: {"<op><k>_<dir long name>": (cycles, port shared by two inputs)}}``;
    per port ``(memory, port name)``, its ``transfers`` (the whole-tensor ones first) and the
    cycles and bandwidth each memory operand's whole-tensor transfer ``borrowed`` from
    computation, ``{memory operand: (cycles, bits per cycle)}``.
    """
    layer = setup.layer
    transfers, borrowed = {}, {}
    loading = {op: {} for op in layer.inputs}
    offloading = {layer.output: {}}
    tcc = math.ceil(total_cycle * setup.cycles_per_op) + ss_comb
    for port in setup.ports:
        shared = port.shared_by_two_inputs
        once = []  # transfers happening once: whole-tensor loads / stores
        periodic = []
        bw_req = 0
        for duty in port.loading_duties:
            flow = movement_int[duty.layer_op].flows[duty.level][duty.direction]
            if flow.count == 0:
                continue
            cycles = real[duty.layer_op][duty.level][duty.direction]
            if flow.count == 1:
                once.append((duty, cycles))
            else:
                bw_req += math.ceil(flow.bw_aver / setup.cycles_per_op)
                _record(loading, offloading, duty, cycles, shared)
                periodic.append(PortTransfer(duty.layer_op, duty.level, duty.direction, cycles,
                                             flow.amount * flow.precision, port.bw_max))
        key = (port.memory, port.name)
        borrowed[key] = {}
        if once:
            totals = [cycles for _, cycles in once]
            # Q9: the innermost level's footprint of the operand, whatever the level
            minima = [math.ceil(movement_int[d.layer_op].bits[1] / port.bw_max) for d, _ in once]
            surplus = max(0, ((port.bw_max - bw_req) / port.bw_max) * tcc)
            remaining, reductions = reduce_balanced(totals, minima, surplus)
            for (duty, _), cycles, reduction in zip(once, remaining, reductions):
                _record(loading, offloading, duty, cycles, shared)
                borrowed[key][duty.mem_op] = (reduction, math.ceil(reduction / tcc * port.bw_max))
            once = [PortTransfer(d.layer_op, d.level, d.direction, c, c * port.bw_max, port.bw_max)
                    for (d, _), c in zip(once, remaining)]
        transfers[key] = once + periodic
    return loading, offloading, transfers, borrowed


def _record(loading, offloading, duty: _PortDuty, cycles, shared: bool) -> None:
    table = loading if duty.loading else offloading
    table.setdefault(duty.layer_op, {})[duty.key] = (cycles, shared)


@dataclass(frozen=True)
class OnloadingParts:
    individual: dict
    half_shared: dict
    shared: dict


def onloading_cycles(setup: _Setup, loading) -> tuple[float, OnloadingParts]:
    """Initial data loading before computation (§9.6, Q10, Q11)."""
    inputs = setup.layer.inputs
    indiv = {op: 0 for op in inputs}
    half = {op: 0 for op in inputs}
    shared = {op: 0 for op in inputs}
    for op in inputs:
        table = loading[op]
        for k in range(setup.operands[op].n - 1):
            cyc1, sh1 = table[_loading_key(op, k, "fh")]
            cyc2, sh2 = table[_loading_key(op, k + 1, "tl")]
            longest = max(cyc1, cyc2)
            if not sh1 and not sh2:
                indiv[op] += longest
            elif sh1 and sh2:
                shared[op] += longest
            else:
                half[op] = longest  # Q10: assignment, not accumulation
    parts = OnloadingParts(indiv, half, shared)
    if not inputs:
        return 0, parts
    if len(inputs) == 1:
        return indiv[inputs[0]], parts  # Q11
    op1, op2 = inputs[0], inputs[1]
    p1 = shared[op1] + max(shared[op2] + half[op2] + indiv[op2], half[op1] + indiv[op1])
    p2 = shared[op2] + max(shared[op1] + half[op1] + indiv[op1], half[op2] + indiv[op2])
    return min(p1, p2), parts


def offloading_cycles(setup: _Setup, offloading) -> tuple[float, list]:
    """Final off-loading of the outputs, ports working in series (§9.6)."""
    out = setup.layer.output
    table = offloading[out]
    pairs = [
        max(table[_loading_key(out, k, "th")][0], table[_loading_key(out, k + 1, "fl")][0])
        for k in range(setup.operands[out].n - 1)
    ]
    return sum(pairs), pairs


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
    eff_util_shared: dict  # after the double-buffer pass (mutated, Q13)
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
    borrowed: dict = field(default_factory=dict)  # (memory, port) -> {memory operand: (cycles, bandwidth)}
    access_same_data_considered_as_no_access: bool = True
    _setup: _Setup | None = field(repr=False, default=None)

    def element_move_counts(self) -> dict[str, list[dict[str, int]]]:
        """Informational element-move counts per operand, level and direction (§7.7;
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
) -> CostDetail:
    """Evaluate one (spatial, temporal) mapping of ``layer`` on ``accelerator``, keeping the
    intermediate figures (see :func:`evaluate`; spec §15 gives the computation order)."""
    setup = _setup(layer, accelerator)
    flag = access_same_data_considered_as_no_access

    # §4.5 spatial quantities, both variants (cached per spatial mapping)
    frac_levels = _normalise_levels(spatial)
    int_levels = _normalise_levels(spatial_int)
    frac_key = tuple((op, frac_levels[op]) for op in setup.operands)
    int_key = tuple((op, int_levels[op]) for op in setup.operands)
    spatial_q = _spatial_analysis(setup, frac_key)
    # integral fractional factors give identical figures: reuse them
    same_variant = frac_key == int_key
    spatial_q_int = spatial_q if same_variant else _spatial_analysis(setup, int_key)

    # §5.3-5.4 temporal quantities
    temporal_levels = _normalise_levels(temporal)
    temporal_q = {op: temporal_quantities(temporal_levels[op], o) for op, o in setup.operands.items()}
    for op, o in setup.operands.items():
        if len(temporal_levels[op]) != o.n:
            raise ValueError(f"temporal mapping of operand {op} has {len(temporal_levels[op])} levels, expected {o.n}")
    totals = {tq.cabl[-1] for tq in temporal_q.values()}
    if len(totals) != 1:
        raise ValueError(f"temporal mapping gives different total cycle counts per operand: {totals}")
    total_cycle = totals.pop()

    # §6-7 data movement, both variants
    movement = {
        op: operand_movement(o, temporal_q[op], spatial_q[op], total_cycle, setup.pr_sizes, flag)
        for op, o in setup.operands.items()
    }
    if same_variant:
        movement_int = movement
    else:
        movement_int = {
            op: operand_movement(o, temporal_q[op], spatial_q_int[op], total_cycle, setup.pr_sizes, flag)
            for op, o in setup.operands.items()
        }

    # §6.4 utilisation; §7.6 accesses; §8 energy
    util, util_sh, eff, eff_sh = memory_utilization(setup, movement)
    accesses = memory_word_access(setup, movement, spatial_q)
    mem_energy, breakdown, further = memory_energy(setup, accesses)
    array = array_cost(layer, accelerator, spatial_mapping_array)  # Q5; IMC: imc.md §8
    energy_total = mem_energy + array.mac_energy

    # §9 latency
    eff_sh_after = {op: list(v) for op, v in eff_sh.items()}
    db = double_buffer_flags(setup, eff, eff_sh_after)
    real, allowed = transfer_cycles(setup, movement_int, db)
    ss_comb, ports = stall_slack(setup, movement_int, real, allowed)
    loading, offloading, transfers, borrowed = port_loading(setup, movement_int, real, ss_comb, total_cycle)
    onload, parts = onloading_cycles(setup, loading)
    offload, pairs = offloading_cycles(setup, offloading)

    # §9.7 totals
    ideal_cycle = math.ceil(math.ceil(layer.total_macs / setup.total_units) * setup.cycles_per_op)
    ideal_temporal_cycle = total_cycle * setup.cycles_per_op
    latency0 = ideal_temporal_cycle + ss_comb
    latency1 = latency0 + onload
    latency2 = latency1 + offload

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
        spatial_mapping={op: int_levels[op] for op in setup.operands},
        spatial_mapping_fractional={op: frac_levels[op] for op in setup.operands},
        temporal_mapping={op: temporal_levels[op] for op in setup.operands},
        temporal_mapping_stationary={op: temporal_q[op].stationary for op in setup.operands},
        spatial_mapping_array=_normalise_array(spatial_mapping_array),
        area_operational_array=array.area,
        area_memories=dict(array.memory_areas),
        mac_energy_breakdown=array.mac_energy_breakdown,
        tclk=array.tclk,
        tclk_breakdown=array.tclk_breakdown,
        area_operational_array_breakdown=array.area_breakdown,
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
        _setup=setup,
    )


def evaluate(
    layer: Layer,
    accelerator: Accelerator,
    spatial: dict,
    spatial_int: dict,
    temporal: dict,
    *,
    access_same_data_considered_as_no_access: bool = True,
    spatial_mapping_array: dict | None = None,
) -> CostResult:
    """Cost of one mapping of one layer on one accelerator (spec §2-§9).

    ``spatial`` / ``spatial_int``: the fractional / integer per-level spatial mappings
    ``{layer op: [[(dim, factor), ...] per memory level, + the unserved entry]}`` (§4.4);
    ``temporal``: ``{layer op: [[(dim, size), ...] per memory level]}``, innermost first, as
    produced by the memory allocator (the stationarity merge-down is done here, §5.3).
    ``spatial_mapping_array`` (``{OA dim: {layer dim: factor}}``) is only recorded.
    """
    return analyse(
        layer, accelerator, spatial, spatial_int, temporal,
        access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
        spatial_mapping_array=spatial_mapping_array,
    ).result


def _normalise_array(mapping: dict | None):
    if mapping is None:
        return None
    return {oa: {d: f for d, f in (unrolling.items() if isinstance(unrolling, dict) else unrolling)}
            for oa, unrolling in mapping.items()}


def _element_move_counts(detail: CostDetail) -> dict[str, list[dict[str, int]]]:
    """§7.7 (informational): element moves per operand, level and direction."""
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

        def ir_per_level(levels):
            return [math.prod(s for d, s in level if d in irr) for level in levels]

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

