"""What the cost model knows of one (layer, accelerator) pair before any mapping (docs/models/cost-model.md#layers-and-operands).

Per layer operand: its memory levels with costs, bandwidths and sharing groups; per memory
port: the (operand, level, direction) duties it serves.  Built once per pair and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from zigzag.cost.array import cycles_per_op
from zigzag.hardware.accelerator import DIRECTION_NAMES, DIRECTIONS, Accelerator, Memory
from zigzag.workload.layer import DimRelation, Layer

#: memory operands whose traffic counts as *on-loading* (the others as *off-loading*), docs/models/cost-model.md#latency.
LOADING_MEMORY_OPERANDS = ("I1", "I2")

Loops = tuple[tuple[str, float], ...]  # one level: (dim, size) pairs, innermost first
LevelLoops = tuple[Loops, ...]  # one operand: a Loops per level


# =============================================================================================
# Per (layer, accelerator) set-up: everything that does not depend on the mappings
# =============================================================================================


class Level(NamedTuple):
    """Memory level ``k`` of one operand, with the figures the cost model reads."""

    memory: Memory
    size: int
    r_cost: float
    w_cost: float
    bw_min: dict  # direction -> int | None
    bw_max: dict  # direction -> int | None
    sharing: tuple[tuple[str, int], ...] | None  # linked (layer operand, level) members, or None


@dataclass(frozen=True, eq=False)
class Operand:
    """One layer operand seen by the cost model (docs/models/cost-model.md#layers-and-operands, docs/models/cost-model.md#memory-levels)."""

    name: str
    mem_op: str
    is_output: bool
    levels: tuple[Level, ...]
    precision: int  # element width (P_O for the output)
    final_precision: int  # P_Of for the output, = precision for inputs
    relevant: frozenset[str]  # r(op), non-decoupled
    irrelevant: frozenset[str]  # ir(op), non-decoupled
    relevant_dec: frozenset[
        str
    ]  # r'(op) = r(op) + the X_R names (docs/models/cost-model.md#layers-and-operands)
    irrelevant_dec: frozenset[str]  # ir'(op) = ir(op) + the X_IR names
    pr_relations: tuple[DimRelation, ...]  # the whole pr map for a pr operand, else ()

    @property
    def n(self) -> int:
        return len(self.levels)


class PortDuty(NamedTuple):
    """One (memory operand, level, direction) a port serves."""

    mem_op: str
    level: int
    direction: str
    layer_op: str  # the linked layer operand
    key: str  # loading-table key "<layer op><level>_<direction long name>" (docs/models/cost-model.md#latency)
    loading: bool  # recorded in the on-loading table (I1, I2) rather than the off-loading one


@dataclass(frozen=True, eq=False)
class Port:
    """One used port of a memory and the duties it serves for this layer (docs/models/cost-model.md#memory-levels, docs/models/cost-model.md#latency)."""

    memory: str
    name: str
    bw_max: int
    duties: tuple[PortDuty, ...]  # served (op, level, dir) of linked memory operands, in order
    loading_duties: tuple[
        PortDuty, ...
    ]  # the same without the output's tl and fh (docs/models/cost-model.md#latency)
    shared_by_two_inputs: (
        bool  # docs/models/cost-model.md#memory-levels: serves both I1 and I2 (whatever the layer)
    )


@dataclass(frozen=True, eq=False)
class Setup:
    """Everything the cost model reads about one (layer, accelerator) pair before any mapping."""

    layer: Layer
    accelerator: Accelerator
    operands: dict[str, Operand]  # layer-operand order: output, then inputs in equation order
    ports: tuple[Port, ...]  # memories in YAML order, used ports in order
    pr_sizes: dict[str, int]  # PRS_X (docs/models/cost-model.md#layers-and-operands)
    sharing_groups: tuple[
        tuple[tuple[str, int], ...], ...
    ]  # linked (layer op, level) members (docs/models/cost-model.md#memory-levels)
    memory_names: dict[str, tuple[str, ...]]
    total_units: int
    #: cycles per operation (CPO): 1.0 for a digital array, ``P_a / b`` for an IMC array
    #: (docs/models/imc.md#energy-latency-and-area-of-a-layer). A float even when 1.0: it makes several latency figures floats, exactly
    #: as in the reference (docs/models/cost-model.md).
    cycles_per_op: float


def r_name(data_dim: str) -> str:
    """Synthetic loop name of the data-size part of a pr data dim (docs/models/cost-model.md#spatial-mapping)."""
    return f"{data_dim}_R"


def ir_name(data_dim: str) -> str:
    """Synthetic loop name of the reuse part of a pr data dim (docs/models/cost-model.md#spatial-mapping)."""
    return f"{data_dim}_IR"


@lru_cache(maxsize=128)
def layer_setup(layer: Layer, accelerator: Accelerator) -> Setup:
    """Everything about the layer and the hardware the mappings do not change (cached)."""
    links = layer.memory_operand_links
    layer_of = layer.layer_operand_of
    x_r = frozenset(r_name(x) for x in layer.pr_map)
    x_ir = frozenset(ir_name(x) for x in layer.pr_map)

    # sharing groups (docs/models/cost-model.md#memory-levels) restricted to the memory operands linked for this layer
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
                Level(
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
        operands[op] = Operand(
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

    # Ports: unlinked memory operands are skipped, in docs/models/cost-model.md#latency as the reference does and in docs/models/cost-model.md#latency
    # where the reference would fail.
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
                linked.append(
                    PortDuty(
                        m, level, d, op, loading_key(op, level, d), m in LOADING_MEMORY_OPERANDS
                    )
                )
            ports.append(
                Port(
                    memory=mem.name,
                    name=port.name,
                    bw_max=port.bandwidth_max,
                    duties=tuple(linked),
                    loading_duties=tuple(
                        d
                        for d in linked
                        if not (d.mem_op == output_mem_op and d.direction in ("tl", "fh"))
                    ),
                    shared_by_two_inputs=len({m for m, _ in duties if m in LOADING_MEMORY_OPERANDS})
                    > 1,
                )
            )

    return Setup(
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


def loading_key(op: str, level: int, direction: str) -> str:
    """Key of one transfer in the on-/off-loading tables, ``"<op><level>_<direction long name>"`` (docs/models/cost-model.md#latency)."""
    return f"{op}{level}_{DIRECTION_NAMES[direction]}"
