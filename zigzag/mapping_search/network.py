"""Whole-network search in one process: every layer's best mapping, then the network sum."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from zigzag.cost.layer_result import LayerCostResult
from zigzag.cost.result import CostResult, CumulativeResult, sum_results
from zigzag.hardware.accelerator import Accelerator
from zigzag.hardware.intermediates import on_chip_accelerators
from zigzag.hardware.vector import MAC_ARRAY, UNCOSTED, VECTOR_UNIT, compute_unit
from zigzag.notes import grouped_layer_warnings
from zigzag.mapping_search.capacity import check_capacity
from zigzag.mapping_search.jobs import signature_text
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.workload.layer import Layer
from zigzag.workload.workload import Workload

logger = logging.getLogger(__name__)


@dataclass
class NetworkResult:
    """Per-layer best results (processing order) and their sum; ``total`` also splits energy and
    latency between the MAC array and the vector unit (``mac_array_energy``, ``vector_unit_energy``,
    ...), and ``uncosted`` names the vector layers no unit of the accelerator runs."""

    layers: list[tuple[Layer, LayerCostResult]]
    total: CumulativeResult
    accelerators: dict[int, Accelerator]  # layer id -> accelerator it was searched on
    uncosted: list[str] = field(
        default_factory=list
    )  # vector layers no unit of the accelerator runs
    #: the workload's inference metadata (an LLM prefill or decode step), None for other workloads
    inference: object = None
    #: the latency model the layers were costed with (None: not recorded)
    latency_model: str | None = None

    @property
    def energy(self) -> float:
        return self.total.energy_total

    @property
    def latency(self) -> float:
        return self.total.latency_total2


def layer_accelerators(
    workload: Workload, accelerator: Accelerator, options: SearchOptions
) -> dict[int, Accelerator]:
    """The accelerator each layer is searched on (trimmed per layer with data locality)."""
    if not options.exploit_data_locality:
        return {layer.id: accelerator for layer in workload.layers}
    from zigzag.hardware.data_locality import accelerators_with_data_locality

    return accelerators_with_data_locality(workload, accelerator)


#: Operator types of layers that are not evaluated on in-memory-computing hardware: ZigZag's Pooling
#: and Add, and the element-wise Sub / Mul an ONNX model gives with evaluate_all_operators.
IMC_SKIPPED_OPERATOR_TYPES = ("Pooling", "Add", "Sub", "Mul")


def evaluated_layers(layers: Iterable[Layer], accelerator: Accelerator) -> list[Layer]:
    """The layers to search, in the given (processing) order: all of them, except that an
    in-memory-computing array skips pooling and element-wise layers (``Pooling`` and ``Add`` as
    ZigZag does, ``Sub`` and ``Mul`` too; they are absent from the totals), and vector layers that
    no unit of the accelerator runs are left uncosted (:func:`uncosted_layers`); layers on a vector
    unit are searched whatever the array."""
    units = {layer: compute_unit(layer, accelerator) for layer in layers}
    if not accelerator.operational_array.is_imc:
        return [layer for layer, unit in units.items() if unit != UNCOSTED]
    return [
        layer
        for layer, unit in units.items()
        if unit == VECTOR_UNIT
        or (unit == MAC_ARRAY and layer.operator_type not in IMC_SKIPPED_OPERATOR_TYPES)
    ]


def uncosted_layers(layers: Iterable[Layer], accelerator: Accelerator) -> list[Layer]:
    """Vector layers whose operation class the accelerator runs nowhere (no vector unit, or one
    without that class, docs/models/operators.md): not evaluated, named in the results."""
    return [layer for layer in layers if compute_unit(layer, accelerator) == UNCOSTED]


def uncosted_note(names: list[str]) -> str | None:
    """The warning line naming the uncosted layers (None when there are none)."""
    if not names:
        return None
    shown = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")
    return (
        f"{len(names)} vector layer(s) left uncosted (zero energy and cycles): the accelerator declares no "
        f"vector unit for their operation class: {shown}"
    )


@dataclass(frozen=True)
class NetworkPlan:
    """What evaluating a network searches: its ``layers`` to search in processing order, each with
    the accelerator it is searched on, and the names of the vector layers left ``uncosted``."""

    layers: tuple[tuple[Layer, Accelerator], ...]
    accelerators: dict[int, Accelerator]  # layer id -> accelerator, for every layer of the workload
    uncosted: tuple[str, ...]

    @property
    def note(self) -> str | None:
        """The warning line naming the uncosted layers (None when there are none)."""
        return uncosted_note(list(self.uncosted))


def plan_network(
    layers: Sequence[Layer],
    accelerator: Accelerator,
    options: SearchOptions = SearchOptions(),
    *,
    workload: Workload | None = None,
) -> NetworkPlan:
    """The plan of every evaluation of a network (API, workflow, sweeps, Stage API): which of its
    ``layers`` (processing order) are searched (:func:`evaluated_layers`), on which accelerator
    (:func:`layer_accelerators`; the ``workload``'s graph is needed with data locality; without it, an
    LLM step's intermediates passed between consecutive layers stay on chip when they fit,
    ``zigzag.hardware.intermediates``), and which are left uncosted (:func:`uncosted_layers`)."""
    if not options.exploit_data_locality:
        accelerators = {layer.id: accelerator for layer in layers}
        accelerators |= on_chip_accelerators(evaluated_layers(layers, accelerator), accelerator)[0]
    elif workload is None:
        raise ValueError("plan_network: exploit_data_locality needs the workload's graph")
    else:
        accelerators = layer_accelerators(workload, accelerator, options)
    return NetworkPlan(
        tuple((layer, accelerators[layer.id]) for layer in evaluated_layers(layers, accelerator)),
        accelerators,
        tuple(layer.name for layer in uncosted_layers(layers, accelerator)),
    )


def evaluate_network(
    workload: Workload,
    accelerator: Accelerator,
    options: SearchOptions = SearchOptions(),
    *,
    show_progress: bool | None = None,
    on_layer: Callable[[Layer, CostResult], None] | None = None,
    memo: dict[tuple[str, int], CostResult] | None = None,
    search: Callable[[Layer, Accelerator], CostResult] | None = None,
    log_uncosted: bool = True,
) -> NetworkResult:
    """Search every layer of the network's plan (identical layers are searched once) and sum the
    results. A warning that several layers give is logged once, with their names, after the
    search; so is the note naming the uncosted layers (unless ``log_uncosted`` is False).
    ``memo``: the searches of earlier calls with the same accelerator object and options (filled
    in), e.g. the points of a context-length sweep, whose steps share every layer but attention's.
    ``search(layer, accelerator)``: a layer's best result, :func:`search_layer` by default (a
    sweep's reads and fills the shared result cache). A latency model left ``auto`` is resolved
    for the workload (``SearchOptions.resolved``); an LLM step must fit its memories
    (``zigzag.tokens.capacity``)."""
    inference = getattr(workload, "inference", None)
    options = options.resolved(inference is not None)
    plan = plan_network(workload.layers, accelerator, options, workload=workload)
    if inference is not None:
        step = dict(inference) if isinstance(inference, dict) else inference.to_dict()
        check_capacity(
            workload.layers, plan.accelerators, step, source=f"accelerator '{accelerator.name}'"
        )
    if search is None:

        def search(layer, layer_accelerator):
            return search_layer(layer, layer_accelerator, options, show_progress=show_progress)[0]

    memo = {} if memo is None else memo
    first: dict[
        tuple[str, int], LayerCostResult
    ] = {}  # the result of the first layer of each signature
    results = []
    with grouped_layer_warnings():
        for layer, layer_accelerator in plan.layers:
            key = (signature_text(layer), id(layer_accelerator))
            if key not in memo:
                memo[key] = search(layer, layer_accelerator)
            if key not in first:
                first[key] = LayerCostResult.of(
                    memo[key],
                    layer,
                    layer_accelerator,
                    access_same_data_considered_as_no_access=options.access_same_data_considered_as_no_access,
                    latency_model=options.cost_latency_model,
                )
            # named for this layer (the memo's result may be another layer's of the same signature)
            result = first[key].for_layer(layer, layer_accelerator)
            results.append((layer, result))
            if on_layer is not None:
                on_layer(layer, result)
    if plan.note and log_uncosted:
        logger.warning(plan.note)
    return NetworkResult(
        results,
        sum_results([r for _, r in results]),
        plan.accelerators,
        list(plan.uncosted),
        inference=inference,
        latency_model=options.latency_model,
    )
