"""Siblings: variants of one structure (the accelerator without its memories' sizes, bandwidths
and costs) that move the same data.

Variants of one structure whose sizes leave a candidate's allocation as it is
(``zigzag.mapping_search.batched.structural``) move the same data: the same footprints and
transfers. Only what a memory figure enters differs: the double buffering (sizes), the word
accesses (``ceil(data / bw_min) x bw_min / bw_max``), the cycles of each transfer
(``ceil(data / bw_max)``), what the ports' bandwidths decide in on- and off-loading, the energies
(costs). Two things follow:

* the batched latency of the candidates is computed for several variants in one pass
  (:func:`zigzag.mapping_search.batched.latency.batch_latency`), for the variants a batch job said
  it will evaluate (:class:`Siblings`, a hint: a latency is only read under exactly the sizes and
  bandwidths it was computed with, so a wrong hint costs time, never a figure);
* a candidate that won on one variant of a structure is re-evaluated on another from the scalar
  model's intermediates that read no memory figure (:func:`with_memories`), by the scalar
  model's own functions;
* the whole candidate table of a told sibling is made with the first variant's
  (``zigzag.mapping_search.batched.together``), so its search only scores it.

Used by :class:`~zigzag.mapping_search.batched.shared.SharedCandidates`.
"""

from __future__ import annotations

from numbers import Real

from zigzag.cost.array import array_cost
from zigzag.cost.model import CostDetail
from zigzag.cost.model.latency import double_buffer_flags, stall_slack, transfer_cycles
from zigzag.cost.model.loading import offloading_cycles, onloading_cycles, port_loading
from zigzag.cost.model.movement import memory_energy, memory_utilization, memory_word_access
from zigzag.cost.model.setup import layer_setup, made
from zigzag.cost.result import CostResult


def memory_sizes(accelerator) -> tuple:
    """``((memory, size), ...)`` of an accelerator, by memory name."""
    return tuple(sorted((memory.name, memory.size) for memory in accelerator.memories))


def _layout(sizes, ports) -> tuple:
    """The memories and ports a variant has (what its siblings share)."""
    return tuple(sorted(sizes)), tuple(sorted(ports))


def document_memories(document) -> tuple[dict, dict] | None:
    """``({memory: size}, {(memory, port name): bandwidth_max})`` of an accelerator document in
    the current port form; None for anything else (nothing is checked here: the variant's own
    evaluation does that)."""
    memories = document.get("memories") if isinstance(document, dict) else None
    if not isinstance(memories, dict):
        return None
    sizes, ports = {}, {}
    for name, memory in memories.items():
        size = memory.get("size") if isinstance(memory, dict) else None
        listed = memory.get("ports") if isinstance(memory, dict) else None
        if not _number(size) or not isinstance(listed, list):
            return None
        sizes[name] = size
        for port in listed:
            bandwidth = port.get("bandwidth_max") if isinstance(port, dict) else None
            if not _number(bandwidth):
                return None
            ports[name, port.get("name")] = bandwidth
    return sizes, ports


def document_minimums(document) -> dict:
    """``{(memory, port name): bandwidth_min}`` of the ports of an accelerator document that give
    one as a number (what a sibling's word accesses read besides :func:`document_memories`)."""
    found = {}
    for name, memory in document["memories"].items():
        for port in memory["ports"]:
            bandwidth = port.get("bandwidth_min")
            if _number(bandwidth):
                found[name, port.get("name")] = bandwidth
    return found


def _number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


class Siblings:
    """The memory sizes and port bandwidths of the variants a batch job is to evaluate, by the
    memories and ports they have (each distinct pair of sizes and ports once, in the order told,
    with the ports' ``bandwidth_min`` of the first told with it: :func:`document_minimums`)."""

    def __init__(self):
        self.by_layout: dict[tuple, list[tuple[dict, dict, dict]]] = {}
        self._last: tuple = (None, None)

    def expect(self, documents) -> None:
        """Take note of the accelerator documents of the variants to come (those not in the
        current port form are left out)."""
        for document in documents:
            found = document_memories(document)
            if found is None:
                continue
            layout = _layout(*found)
            group = self.by_layout.get(layout, [])
            if all(told[:2] != found for told in group):
                # a new list: :meth:`told`'s is the same object until more are told
                self.by_layout[layout] = [*group, (*found, document_minimums(document))]

    def told(self, accelerator) -> list[tuple[dict, dict, dict]]:
        """``(sizes, ports, minimums)`` of the variants told with ``accelerator``'s memories and
        ports; the same list for every accelerator of one layout until more are told."""
        return self.by_layout.get(self._layout_of(accelerator), [])

    def _layout_of(self, accelerator) -> tuple:
        """The layout of ``accelerator`` (the last one's kept: a point asks for every layer)."""
        if self._last[0] is not accelerator:
            sizes = {memory.name: memory.size for memory in accelerator.memories}
            ports = [(m.name, port.name) for m in accelerator.memories for port in m.ports]
            self._last = (accelerator, _layout(sizes, ports))
        return self._last[1]


def memory_set(
    model, sizes: dict | None = None, ports: dict | None = None, at=None
) -> tuple | None:
    """What the latency reads of the memories: the size of every (operand, level) (the order of
    ``model.level_memories()``), ``bw_max`` of every port duty (``model.duties``' order, None where no
    port carries it) and of every used port (``model.setup.ports``' order). Those of ``model``'s
    accelerator, or those of a variant of its structure given by ``sizes`` (``{memory: size}``)
    and ``ports`` (``{(memory, port name): bandwidth_max}``; ``at``: the duties' ports, when known);
    None when these lack one."""
    if sizes is None:
        levels = tuple(float(lv.size) for info in model.ops.values() for lv in info.operand.levels)
        duties = tuple(model.ops[op].operand.levels[k].bw_max[d] for op, k, d in model.duties)
        return levels, duties, tuple(port.bw_max for port in model.setup.ports)
    try:
        levels = tuple(float(sizes[name]) for name in model.level_memories())
        at = duty_ports(model) if at is None else at
        duties = tuple(None if where is None else ports[where] for where in at)
        return levels, duties, tuple(ports[port.memory, port.name] for port in model.setup.ports)
    except KeyError:
        return None


def duty_ports(model) -> list:
    """(memory, port name) carrying every port duty of ``model`` (None where none does)."""
    found = []
    for op, k, d in model.duties:
        operand = model.ops[op].operand
        memory = operand.levels[k].memory
        port = memory.port(operand.mem_op, d)
        found.append(None if port is None else (memory.name, port.name))
    return found


def sibling_sets(model, siblings) -> list[tuple]:
    """The memory sets (:func:`memory_set`) of ``siblings`` (``(sizes, ports)`` pairs as
    :func:`memory_set` takes them, or :meth:`Siblings.told`'s triples) that :func:`~zigzag.mapping_search.batched.latency.batch_latency` can compute beside the model's own:
    distinct, with a bandwidth on every port and on exactly the duties the own has one on (so no
    figure of theirs takes another branch than the own's). The same for every model of one
    structure with the same duties carried (:func:`carried`)."""
    at = duty_ports(model)
    pattern = carried(model)
    found = []
    for sizes, ports, *_ in siblings:
        other = memory_set(model, sizes, ports, at)
        if other is None or other in found:
            continue
        if all(other[2]) and tuple(bool(b) for b in other[1]) == pattern:
            found.append(other)
    return found


def _levels_of(setup) -> tuple:
    """Per operand of ``setup``: its name, memory operand and levels (memory name, sharing group)."""
    return tuple(
        (op, o.mem_op, tuple((lv.memory.name, lv.sharing) for lv in o.levels))
        for op, o in setup.operands.items()
    )


def hierarchy_memo(model) -> dict:
    """A dict for what the siblings' bookkeeping derives from ``model``'s accelerator and
    hierarchy alone: per operand its memory operand and levels, the used ports as its set-up's
    frame lists them, and the port duties. Equal for the layers whose operands are linked
    alike, whose models have the same :func:`memory_set`, :func:`duty_ports`, :func:`carried`
    and sets of siblings on one accelerator: they share the dict (the last accelerator's
    kept, by identity: a point asks for every layer of its network)."""
    setup = model.setup
    if _ACCELERATOR[0] is not model.accelerator:
        _ACCELERATOR[:] = [model.accelerator, {}, {}]
    levels = _ACCELERATOR[2].get(id(setup))
    if levels is None or levels[0] is not setup:  # the set-up is held: its id is not reused
        levels = _ACCELERATOR[2][id(setup)] = (setup, _levels_of(setup))
    key = (levels[1], setup.frame.ports, tuple(model.duties))
    return _ACCELERATOR[1].setdefault(key, {})


#: the last accelerator, its memos by hierarchy, and its set-ups' levels by id
_ACCELERATOR: list = [None, {}, {}]

#: the key of the part of a structure's memo derived from the siblings told
TOLD = "told"


def told_part(structure: dict) -> dict:
    """The part of a structure's memo (``Allocations.memo``) derived from the siblings told:
    their memory sets, the plans of their ready tables, the accelerators that built or took
    one. Dropped as a whole when other siblings are told (:func:`forget_told`)."""
    return structure.setdefault(TOLD, {})


def forget_told(structure: dict) -> None:
    """Drop :func:`told_part` of a structure's memo (new siblings are to be told)."""
    structure.pop(TOLD, None)


def kept_sibling_sets(model, siblings) -> list[tuple]:
    """:func:`sibling_sets`, computed once per told list (by identity) for the models of one
    :func:`hierarchy_memo`: the same list object."""
    memo = hierarchy_memo(model)
    found = memo.get(("sets", id(siblings)))
    if found is None or found[0] is not siblings:  # the list is held: its id is not reused
        found = memo[("sets", id(siblings))] = (siblings, sibling_sets(model, siblings))
    return found[1]


def carried(model) -> tuple:
    """Which port duties of ``model`` have a bandwidth."""
    return tuple(bool(model.ops[op].operand.levels[k].bw_max[d]) for op, k, d in model.duties)


def with_memories(
    detail: CostDetail, layer, accelerator, spatial_mapping_array, memo: dict | None = None
) -> CostResult:
    """``detail``'s result (the scalar model's :func:`~zigzag.cost.model.analyse`, on a variant of
    ``accelerator``'s structure, with the same spatial and temporal mapping) under
    ``accelerator``: what reads a memory's size, bandwidth or cost (utilisations, double
    buffering, word accesses, energies, the array's figures, latency) recomputed by the scalar
    model's functions, in :func:`~zigzag.cost.model.analyse`'s order, from the intermediates that
    read none (the data movement, the total cycles); every other figure is the same.

    ``memo``: a dict kept with ``detail`` for the variants of its structure still to come, of
    what each part reads besides ``detail`` and the structure: the utilisations and double
    buffering by the levels' sizes, the word accesses by their bandwidths, the stall, on- and
    off-loading cycles by the bandwidths and the double buffering."""
    setup = layer_setup(layer, accelerator)
    memo = {} if memo is None else memo
    key = ("sizes", tuple(lv.size for operand in setup.operands.values() for lv in operand.levels))
    held = memo.get(key)
    if held is None:
        held = memo[key] = _held(setup, detail)
    levels = tuple(
        (tuple(lv.bw_min.values()), tuple(lv.bw_max.values()))
        for operand in setup.operands.values()
        for lv in operand.levels
    )
    key = ("accesses", levels)
    accesses = memo.get(key)
    if accesses is None:
        accesses = memo[key] = memory_word_access(setup, detail.movement, detail.spatial)
    energies = memory_energy(setup, accesses)
    array = array_cost(layer, accelerator, spatial_mapping_array)
    fields, db = held
    key = (
        "latency",
        levels,
        tuple(port.bw_max for port in setup.ports),
        *fields["double_buffer"].values(),
    )
    cycles = memo.get(key)
    if cycles is None:
        cycles = memo[key] = _cycles(setup, detail, db)
    ss_comb, port_ss, onload, offload = cycles
    known = detail.result
    latency0 = known.ideal_temporal_cycle + ss_comb
    latency1 = latency0 + onload
    latency2 = latency1 + offload
    return replaced(
        known,
        **costed_fields(layer, accelerator, array, energies),
        **fields,
        memory_word_access={op: tuple(v) for op, v in accesses.items()},
        latency_total0=latency0,
        latency_total1=latency1,
        latency_total2=latency2,
        data_onloading_cycle=onload,
        data_offloading_cycle=offload,
        stall_slack_comb=ss_comb,
        mac_utilization0=known.ideal_cycle / latency0,
        mac_utilization1=known.ideal_cycle / latency1,
        mac_utilization2=known.ideal_cycle / latency2,
        port_stall_slack=dict(port_ss),
    )


def _held(setup, detail: CostDetail) -> tuple[dict, dict]:
    """The utilisation and double-buffering fields of ``detail``'s mapping under ``setup``'s
    sizes (as ``analyse`` finds them), and the double buffering by operand."""
    util, util_sh, eff, eff_sh = memory_utilization(setup, detail.movement)
    eff_sh_after = {op: list(v) for op, v in eff_sh.items()}
    db = double_buffer_flags(setup, eff, eff_sh_after)
    fields = dict(
        mem_utilization_individual={op: tuple(v) for op, v in util.items()},
        mem_utilization_shared={op: tuple(v) for op, v in util_sh.items()},
        effective_mem_utilization_individual={op: tuple(v) for op, v in eff.items()},
        effective_mem_utilization_shared={op: tuple(v) for op, v in eff_sh_after.items()},
        double_buffer={op: tuple(v) for op, v in db.items()},
    )
    return fields, db


def _cycles(setup, detail: CostDetail, db: dict) -> tuple:
    """``(stall_slack_comb, port_stall_slack, on-loading, off-loading cycles)`` of ``detail``'s
    mapping under ``setup``'s bandwidths and the double buffering ``db``, as ``analyse`` finds them."""
    real, allowed = transfer_cycles(setup, detail.movement_int, db)
    ss_comb, ports = stall_slack(setup, detail.movement_int, real, allowed)
    loading, offloading, _, _ = port_loading(
        setup, detail.movement_int, real, ss_comb, detail.total_cycle
    )
    onload, _ = onloading_cycles(setup, loading)
    offload, _ = offloading_cycles(setup, offloading)
    port_ss = {f"{p.memory}.{p.port}": p.stall_slack for p in ports if p.activities}
    return ss_comb, port_ss, onload, offload


def replaced(result: CostResult, **changes) -> CostResult:
    """``dataclasses.replace(result, **changes)`` for a :class:`CostResult` (no ``__post_init__``,
    nothing computed at construction), through :func:`~zigzag.cost.model.setup.made`."""
    return made(type(result), result.__dict__, **changes)


def costed_fields(layer, accelerator, array, energies) -> dict:
    """The fields of a :class:`~zigzag.cost.result.CostResult` a re-derived result takes from
    ``accelerator``: its names, the memory ``energies`` (``memory_energy``'s total, breakdown and
    further breakdown) and the array's figures (``array_cost``), as ``analyse`` sets them."""
    mem_energy, breakdown, further = energies
    return dict(
        layer_id=layer.id,
        layer_name=layer.name,
        accelerator_name=accelerator.name,
        energy_total=mem_energy + array.mac_energy,
        mac_energy=array.mac_energy,
        mem_energy=mem_energy,
        mem_energy_breakdown={op: tuple(v) for op, v in breakdown.items()},
        mem_energy_breakdown_further={op: tuple(v) for op, v in further.items()},
        area_operational_array=array.area,
        area_memories=dict(array.memory_areas),
        mac_energy_breakdown=array.mac_energy_breakdown,
        tclk=array.tclk,
        tclk_breakdown=array.tclk_breakdown,
        area_operational_array_breakdown=array.area_breakdown,
    )
