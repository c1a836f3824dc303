"""What the cost model knows of one (layer, accelerator) pair before any mapping (docs/models/cost-model.md#layers-and-operands).

Per layer operand: its memory levels with costs, bandwidths and sharing groups; per memory
port: the (operand, level, direction) duties it serves.  Built once per pair and cached; what it
reads of the hardware besides the memories' sizes, costs and bandwidths (its :class:`Frame`) is
built once per layer and accelerator structure, so hardware variants of one structure share it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from zigzag.cost.array import cycles_per_op
from zigzag.hardware.accelerator import DIRECTION_NAMES, DIRECTIONS, Accelerator, Memory
from zigzag.memo import recent
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
    #: what it shares with the set-ups of the same layer on accelerators of the same structure
    frame: Frame


def r_name(data_dim: str) -> str:
    """Synthetic loop name of the data-size part of a pr data dim (docs/models/cost-model.md#spatial-mapping)."""
    return f"{data_dim}_R"


def ir_name(data_dim: str) -> str:
    """Synthetic loop name of the reuse part of a pr data dim (docs/models/cost-model.md#spatial-mapping)."""
    return f"{data_dim}_IR"


@lru_cache(maxsize=128)
def layer_setup(layer: Layer, accelerator: Accelerator) -> Setup:
    """Everything about the layer and the hardware the mappings do not change (cached): its
    :class:`Frame` (shared by the accelerators of one structure) with this accelerator's memories,
    their sizes, costs and bandwidths."""
    frame = layer_frame(layer, accelerator)
    memory = accelerator.memory
    operands = {}
    for fields, levels in frame.operands:
        mem_op = fields["mem_op"]
        operands[fields["name"]] = made(
            Operand,
            fields,
            levels=tuple(_level(memory[name], mem_op, sharing) for name, sharing in levels),
        )
    return made(
        Setup,
        {},
        layer=layer,
        accelerator=accelerator,
        operands=operands,
        ports=_ports(accelerator, frame.ports),
        pr_sizes=dict(layer.pr_sizes),
        sharing_groups=frame.sharing_groups,
        memory_names=dict(frame.memory_names),
        total_units=frame.total_units,
        cycles_per_op=frame.cycles_per_op,
        frame=frame,
    )


def made(cls, fields: dict, **more):
    """An instance of the frozen dataclass ``cls`` with ``fields`` and ``more`` (``more`` winning):
    every one of its fields (none left to a default), set at once; a ``__post_init__`` is the
    caller's to run. The generated ``__init__`` of a frozen dataclass sets them one
    ``object.__setattr__`` at a time, several times slower; set-ups and results are made per
    layer and hardware variant."""
    instance = object.__new__(cls)
    instance.__dict__.update(fields, **more)
    return instance


@lru_cache(maxsize=1024)
def _level(mem: Memory, mem_op: str, sharing) -> Level:
    """A level of ``mem`` for ``mem_op`` (the same for every layer linking ``mem_op`` to it)."""
    return Level(
        memory=mem,
        size=mem.size,
        r_cost=mem.r_cost,
        w_cost=mem.w_cost,
        bw_min={d: mem.bandwidth_min(mem_op, d) for d in DIRECTIONS},
        bw_max={d: mem.bandwidth_max(mem_op, d) for d in DIRECTIONS},
        sharing=sharing,
    )


@lru_cache(maxsize=256)
def _ports(accelerator: Accelerator, ports: tuple) -> tuple[Port, ...]:
    """The used ports of ``accelerator`` as a :class:`Frame` lists them (``ports``: shared by the
    layers whose operands are linked alike)."""
    return tuple(
        Port(
            memory=name,
            name=port_name,
            bw_max=accelerator.memory[name].ports[position].bandwidth_max,
            duties=duties,
            loading_duties=loading,
            shared_by_two_inputs=shared,
        )
        for name, position, port_name, duties, loading, shared in ports
    )


@dataclass(frozen=True, eq=False)
class Frame:
    """What :func:`layer_setup` reads of a (layer, accelerator) pair besides the memories' sizes,
    costs and bandwidths: the same for every accelerator of one :func:`structure` (hardware
    variants), so built once for them. Memories are named, never held."""

    #: per layer operand: the fields of its :class:`Operand` but ``levels``, and per level the
    #: memory's name and the level's sharing group
    operands: tuple[tuple[dict, tuple[tuple[str, tuple | None], ...]], ...]
    #: per used port: memory name, the port's position in the memory, its name, duties, loading
    #: duties, whether it serves both inputs
    ports: tuple[tuple[str, int, str, tuple, tuple, bool], ...]
    sharing_groups: tuple[tuple[tuple[str, int], ...], ...]
    memory_names: dict[str, tuple[str, ...]]
    total_units: int
    cycles_per_op: float


@lru_cache(maxsize=256)
def structure(accelerator: Accelerator) -> tuple:
    """Everything of ``accelerator`` a :class:`Frame` reads: the memories in order with their
    operands and their ports' names and allocations, the array's unit count and cycles per
    operation (not a size, cost or bandwidth)."""
    memories = tuple(
        (m.name, m.operands, tuple((p.name, p.allocation) for p in m.ports))
        for m in accelerator.memories
    )
    return memories, accelerator.operational_array.total_units, cycles_per_op(accelerator)


#: frames by (layer, accelerator structure), the last :data:`FRAMES_KEPT` used
_FRAMES: OrderedDict = OrderedDict()
FRAMES_KEPT = 1024


def layer_frame(layer: Layer, accelerator: Accelerator) -> Frame:
    """The :class:`Frame` of ``layer`` on ``accelerator``, kept by the layer and the accelerator's
    :func:`structure` (layers are immutable)."""
    return recent(
        _FRAMES,
        (layer, structure(accelerator)),
        lambda: build_frame(layer, accelerator),
        FRAMES_KEPT,
    )


def build_frame(layer: Layer, accelerator: Accelerator) -> Frame:
    """The :class:`Frame` of ``layer`` on ``accelerator``, built (uncached)."""
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

    operands = []
    for op in layer.operands:
        mem_op = links[op]
        levels = tuple(
            (mem.name, group_of.get((mem_op, k)))
            for k, mem in enumerate(accelerator.hierarchy(mem_op))
        )
        is_output = op == layer.output
        fields = dict(
            name=op,
            mem_op=mem_op,
            is_output=is_output,
            precision=layer.precision[op],
            final_precision=layer.final_output_precision if is_output else layer.precision[op],
            relevant=frozenset(layer.relevant[op]),
            irrelevant=frozenset(layer.irrelevant[op]),
            relevant_dec=frozenset(layer.relevant[op]) | x_r,
            irrelevant_dec=frozenset(layer.irrelevant[op]) | x_ir,
            pr_relations=tuple(layer.partially_relevant[op].values()),
        )
        operands.append((fields, levels))

    # Ports: unlinked memory operands are skipped, in docs/models/cost-model.md#latency as the reference does and in docs/models/cost-model.md#latency
    # where the reference would fail.
    output_mem_op = links[layer.output]
    ports = []
    for mem in accelerator.memories:
        position = {id(port): i for i, port in enumerate(mem.ports)}
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
            loading = tuple(
                d for d in linked if not (d.mem_op == output_mem_op and d.direction in ("tl", "fh"))
            )
            shared = len({m for m, _ in duties if m in LOADING_MEMORY_OPERANDS}) > 1
            ports.append((mem.name, position[id(port)], port.name, tuple(linked), loading, shared))

    return Frame(
        operands=tuple(operands),
        ports=tuple(ports),
        sharing_groups=tuple(groups),
        memory_names={fields["name"]: tuple(n for n, _ in lv) for fields, lv in operands},
        total_units=accelerator.operational_array.total_units,
        cycles_per_op=cycles_per_op(accelerator),
    )


def loading_key(op: str, level: int, direction: str) -> str:
    """Key of one transfer in the on-/off-loading tables, ``"<op><level>_<direction long name>"`` (docs/models/cost-model.md#latency)."""
    return f"{op}{level}_{DIRECTION_NAMES[direction]}"
