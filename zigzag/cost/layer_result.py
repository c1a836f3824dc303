"""One layer's evaluation together with the layer and accelerator it was made on.

:class:`LayerCostResult` is what the API, the Stage API and the pickle of results hand to users:
a :class:`~zigzag.cost.result.CostResult` plus ``layer`` and ``accelerator``. It also answers to
the attribute names of ZigZag's per-layer result (``CostModelEvaluation``), as values or
read-only views of what the cost model computes:

* figures already in :class:`CostResult` under another name (``mem_utili_shared``,
  ``double_buffer_true``, ...) are returned from it;
* the cost model's intermediates (per-port stall and slack, real and allowed transfer cycles,
  on-loading tables, ...) come from :func:`zigzag.cost.model.analyse` run again, once and
  lazily, on the stored mapping, so there is one computation behind every figure.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from zigzag.cost.json_forms import complete_json
from zigzag.cost.model import CostDetail, analyse
from zigzag.cost.model.latency import PortActivity, PortStall
from zigzag.cost.model.loading import PortTransfer
from zigzag.cost.model.setup import made
from zigzag.cost.result import CostResult
from zigzag.hardware.accelerator import DIRECTION_NAMES, Accelerator
from zigzag.hardware.vector import VECTOR_UNIT, on_vector_unit
from zigzag.hardware.zigzag_views import FourWay, MemoryLevelView, OperandLinks, memory_levels
from zigzag.workload.layer import Layer


#: the fields of a :class:`CostResult`, in order
_COST_FIELDS = tuple(f.name for f in dataclasses.fields(CostResult))


class PortActivityView(NamedTuple):
    """One served (operand, level, direction) of a port during computation, with ZigZag's names."""

    real_cycle: int
    allowed_cycle: int
    period: int
    period_count: int
    served_op_lv_dir: tuple[str, int, str]  # (layer operand, level, long direction name)
    stall_or_slack: int
    mem_updating_window: int

    @property
    def stall_or_slack_per_period(self) -> int:
        return self.real_cycle - self.allowed_cycle

    @classmethod
    def of(cls, act: PortActivity) -> "PortActivityView":
        direction = DIRECTION_NAMES[act.direction]
        return cls(
            act.real,
            act.allowed,
            act.period,
            act.count,
            (act.op, act.level, direction),
            act.stall_or_slack,
            act.updating_window,
        )


class PortBeginOrEndActivity(NamedTuple):
    """One transfer of a port before or after computation, with ZigZag's names."""

    real_cycle: float
    data_in_charge: float  # bits
    mem_bw: int
    served_op_lv_dir: tuple[str, int, str]

    @classmethod
    def of(cls, transfer: PortTransfer) -> "PortBeginOrEndActivity":
        direction = DIRECTION_NAMES[transfer.direction]
        return cls(
            transfer.cycles,
            transfer.bits,
            transfer.bandwidth,
            (transfer.op, transfer.level, direction),
        )


@dataclass(frozen=True)
class MappingView:
    """ZigZag's ``cme.mapping`` / ``cme.mapping_int``: per-operand data sizes, innermost first
    (index 0 = the MAC array, ``k + 1`` = memory level ``k``)."""

    mem_level: dict[str, int]
    data_elem_per_level_unrolled: dict[str, list[int]]  # per memory instance
    data_bit_per_level_unrolled: dict[str, list[int]]
    data_elem_per_level: dict[str, list[int]]  # over all instances (distinct data)
    data_bit_per_level: dict[str, list[int]]
    effective_data_bit: dict[str, list[int]]
    spatial_mapping: dict[str, tuple]
    temporal_mapping: dict[str, tuple]


@dataclass(frozen=True)
class LayerCostResult(CostResult):
    """A :class:`CostResult` that also holds the ``layer`` and ``accelerator`` it was evaluated
    on, the ``access_same_data_considered_as_no_access`` flag and the ``latency_model`` used. None of
    them takes part in equality or in :meth:`to_dict`."""

    layer: Layer | None = field(default=None, compare=False, repr=False)
    accelerator: Accelerator | None = field(default=None, compare=False, repr=False)
    access_same_data_considered_as_no_access: bool = field(default=True, compare=False, repr=False)
    latency_model: str = field(default="zigzag", compare=False, repr=False)

    @classmethod
    def of(
        cls,
        result: CostResult,
        layer: Layer,
        accelerator: Accelerator,
        *,
        access_same_data_considered_as_no_access: bool = True,
        latency_model: str = "zigzag",
    ) -> "LayerCostResult":
        if (
            result.compute_unit == VECTOR_UNIT
            and layer is not None
            and getattr(accelerator, "vector_unit", None)
        ):
            layer, accelerator = on_vector_unit(
                layer, accelerator
            )  # what the layer was evaluated on
        # the fields set as the dataclass's __init__ would set them, without its per-field calls
        layer_result = made(
            cls,
            {name: getattr(result, name) for name in _COST_FIELDS},
            layer=layer,
            accelerator=accelerator,
            access_same_data_considered_as_no_access=access_same_data_considered_as_no_access,
            latency_model=latency_model,
        )
        layer_result.__post_init__()
        return layer_result

    def for_layer(self, layer: Layer, accelerator: Accelerator) -> "LayerCostResult":
        """This result as ``of`` would give it for ``layer``, a layer with the same signature (another id and
        name) evaluated on ``accelerator``: a copy sharing the figures, without building them again."""
        if self.compute_unit == VECTOR_UNIT and accelerator.vector_unit is not None:
            layer, accelerator = on_vector_unit(layer, accelerator)
        return made(
            type(self),
            {k: v for k, v in self.__dict__.items() if k != "cost_detail"},
            layer_id=layer.id,
            layer_name=layer.name,
            layer=layer,
            accelerator=accelerator,
        )

    def __post_init__(self):
        # per-direction figures also answer to ZigZag's long direction names
        for name in ("memory_word_access", "mem_energy_breakdown_further"):
            value = {
                op: tuple(FourWay(level) for level in levels)
                for op, levels in getattr(self, name).items()
            }
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict:
        data = super().to_dict()
        for name in (
            "layer",
            "accelerator",
            "access_same_data_considered_as_no_access",
            "latency_model",
        ):
            del data[name]
        return data

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("cost_detail", None)  # recomputed on demand
        return state

    def __str__(self) -> str:
        return f"CostModelEvaluation({self.layer_name}, {self.accelerator_name})"

    # ----- the cost model's intermediates --------------------------------------------------
    @cached_property
    def cost_detail(self) -> CostDetail:
        """The evaluation with its intermediate figures (computed once, on first use)."""
        if self.layer is None or self.accelerator is None:
            raise AttributeError(
                "this result holds no layer and accelerator to recompute its details from"
            )
        return analyse(
            self.layer,
            self.accelerator,
            self.spatial_mapping,
            self.spatial_mapping_int,
            self.temporal_mapping,
            access_same_data_considered_as_no_access=self.access_same_data_considered_as_no_access,
            spatial_mapping_array=self.spatial_mapping_array,
            latency_model=self.latency_model,
        )

    # ----- ZigZag's names: inputs and hardware ---------------------------------------------
    @property
    def core(self) -> Accelerator | None:
        return self.accelerator

    @property
    def cycles_per_op(self) -> float:
        # the set-up's figure where the cost model keeps one per accelerator (in-memory computing);
        # 1.0 for digital MAC arrays
        return getattr(self.cost_detail._setup, "cycles_per_op", 1.0)

    @property
    def spatial_mapping_dict_int(self) -> dict[str, tuple]:
        return self.spatial_mapping_int

    @property
    def memory_operand_links(self) -> OperandLinks:
        return OperandLinks(self.layer.memory_operand_links)

    @property
    def mem_level_list(self) -> list[MemoryLevelView]:
        return memory_levels(self.accelerator)

    @property
    def mem_hierarchy_dict(self) -> dict[str, list[MemoryLevelView]]:
        levels = {level.name: level for level in self.mem_level_list}
        return {
            op: [levels[m.name] for m in self.accelerator.hierarchy(op)]
            for op in self.accelerator.memory_operands
        }

    @property
    def mem_size_dict(self) -> dict[str, list[int]]:
        return {
            op: [m.size for m in self.accelerator.hierarchy(op)]
            for op in self.accelerator.memory_operands
        }

    @property
    def mem_sharing_tuple(self) -> tuple[tuple[tuple[str, int], ...], ...]:
        """Memories holding several operands as ``((memory operand, level), ...)``, listed
        operand by operand, innermost first (ZigZag's order)."""
        groups = []
        for op in self.accelerator.memory_operands:
            for memory in self.accelerator.hierarchy(op):
                group = tuple(
                    (m, self.accelerator.level_index[(memory.name, m)]) for m in memory.operands
                )
                if len(group) > 1 and group not in groups:
                    groups.append(group)
        return tuple(groups)

    @property
    def active_mem_level(self) -> dict[str, int]:
        return {op: len(levels) for op, levels in self.temporal_mapping.items()}

    @property
    def cumulative_layer_ids(self) -> list[int]:
        return []

    @property
    def mapping(self) -> MappingView:
        detail = self.cost_detail
        return self._mapping_view(detail.movement, detail.spatial, self.spatial_mapping)

    @property
    def mapping_int(self) -> MappingView:
        detail = self.cost_detail
        return self._mapping_view(detail.movement_int, detail.spatial_int, self.spatial_mapping_int)

    def _mapping_view(self, movement, spatial_quantities, spatial) -> MappingView:
        distinct = {
            op: [round(d * u) for d, u in zip(m.D, spatial_quantities[op].unit_unique)]
            for op, m in movement.items()
        }
        return MappingView(
            mem_level=self.active_mem_level,
            data_elem_per_level_unrolled={op: list(m.D) for op, m in movement.items()},
            data_bit_per_level_unrolled={op: list(m.bits) for op, m in movement.items()},
            data_elem_per_level=distinct,
            data_bit_per_level={
                op: [e * p for e, p in zip(distinct[op], m.precision)] for op, m in movement.items()
            },
            effective_data_bit={op: list(m.eff_bits) for op, m in movement.items()},
            spatial_mapping=spatial,
            temporal_mapping=self.temporal_mapping_stationary,
        )

    # ----- ZigZag's names: memory utilisation ----------------------------------------------
    @property
    def mem_utili_individual(self) -> dict[str, list[float]]:
        return {op: list(v) for op, v in self.mem_utilization_individual.items()}

    @property
    def mem_utili_shared(self) -> dict[str, list[float]]:
        return {op: list(v) for op, v in self.mem_utilization_shared.items()}

    @property
    def effective_mem_utili_individual(self) -> dict[str, list[float]]:
        return {op: list(v) for op, v in self.effective_mem_utilization_individual.items()}

    @property
    def effective_mem_utili_shared(self) -> dict[str, list[float]]:
        return {op: list(v) for op, v in self.effective_mem_utilization_shared.items()}

    @property
    def double_buffer_true(self) -> dict[str, list[bool]]:
        return {op: list(v) for op, v in self.double_buffer.items()}

    # ----- ZigZag's names: latency intermediates -------------------------------------------
    @property
    def real_data_trans_cycle(self) -> dict[str, list[FourWay]]:
        return {
            op: [FourWay(v) for v in levels] for op, levels in self.cost_detail.real_cycles.items()
        }

    @property
    def allowed_mem_update_cycle(self) -> dict[str, list[FourWay]]:
        return {
            op: [FourWay(v) for v in levels]
            for op, levels in self.cost_detail.allowed_cycles.items()
        }

    def _per_memory(self, value_of_port) -> list[dict]:
        """``[{port name: value} per memory in mem_level_list order]`` over the used ports."""
        ports = {(p.memory, p.port): p for p in self.cost_detail.ports}
        return [
            {port.name: value_of_port(ports[(level.name, port.name)]) for port in level.ports}
            for level in self.mem_level_list
        ]

    @property
    def port_activity_collect(self) -> list[dict[str, list[PortActivityView]]]:
        return self._per_memory(lambda p: [PortActivityView.of(a) for a in p.activities])

    @property
    def stall_slack_comb_collect(self) -> list[dict[str, int]]:
        return self._per_memory(lambda p: p.stall_slack)

    @property
    def mem_updating_window_union_collect(self) -> list[dict[str, int]]:
        def union(p: PortStall):
            return p.activities[0].allowed if len(p.activities) == 1 else p.window_union

        return [
            {name: u for name, u in ports.items() if u is not None}
            for ports in self._per_memory(union)
        ]

    @property
    def data_loading_cc_per_op(self) -> dict[str, dict[str, tuple]]:
        return self.cost_detail.loading_table

    @property
    def data_offloading_cc_per_op(self) -> dict[str, dict[str, tuple]]:
        return self.cost_detail.offloading_table

    @property
    def data_loading_cc_pair_combined_per_op(self) -> dict[str, list]:
        """Per input operand, per pair of adjacent levels: the longer of the two loading times."""
        table = self.cost_detail.loading_table
        return {
            op: [
                max(
                    table[op][f"{op}{k}_wr_in_by_high"][0],
                    table[op][f"{op}{k + 1}_rd_out_to_low"][0],
                )
                for k in range(len(self.temporal_mapping[op]) - 1)
            ]
            for op in self.layer.inputs
        }

    @property
    def data_loading_individual_part(self) -> dict[str, float]:
        return self.cost_detail.onloading_parts.individual

    @property
    def data_loading_half_shared_part(self) -> dict[str, float]:
        return self.cost_detail.onloading_parts.half_shared

    @property
    def data_loading_shared_part(self) -> dict[str, float]:
        return self.cost_detail.onloading_parts.shared

    @property
    def data_offloading_cc_pair_combined(self) -> list:
        return list(self.cost_detail.offloading_pairs)

    @property
    def data_loading_per_mem_inst(self) -> list[dict[str, list[PortBeginOrEndActivity]]]:
        """Per memory (``mem_level_list`` order), per port: its transfers before or after computation."""
        transfers = self.cost_detail.port_transfers
        return [
            {
                port.name: [
                    PortBeginOrEndActivity.of(t) for t in transfers[(level.name, port.name)]
                ]
                for port in level.ports
            }
            for level in self.mem_level_list
        ]

    @property
    def data_offloading_per_mem_inst(self) -> list:
        """Always empty, as in ZigZag (off-loading transfers are in :attr:`data_loading_per_mem_inst`)."""
        return []

    # Cycles and bandwidth of the whole-tensor transfers that overlap computation, per port
    # ``(memory name, port name)`` (ZigZag keys them by port object) and memory operand.
    @property
    def loading_cycles_during_computation(self) -> dict[tuple[str, str], dict[str, float]]:
        return {
            port: {op: c for op, (c, _) in ops.items()}
            for port, ops in self.cost_detail.borrowed.items()
            if ops
        }

    @property
    def loading_bw_during_computation(self) -> dict[tuple[str, str], dict[str, int]]:
        return {
            port: {op: bw for op, (_, bw) in ops.items()}
            for port, ops in self.cost_detail.borrowed.items()
            if ops
        }

    @property
    def total_loading_cycles_during_computation(self) -> dict[tuple[str, str], float]:
        return {
            port: sum(c for c, _ in ops.values()) for port, ops in self.cost_detail.borrowed.items()
        }

    @property
    def total_loading_bw_during_computation(self) -> dict[tuple[str, str], int]:
        return {
            port: sum(bw for _, bw in ops.values())
            for port, ops in self.cost_detail.borrowed.items()
        }

    @property
    def loading_offloading_cycles_borrowed_from_computation(self) -> float:
        return max(self.total_loading_cycles_during_computation.values(), default=0)

    @property
    def loading_offloading_bandwidth_borrowed_from_computation(self) -> int:
        return max(self.total_loading_bw_during_computation.values(), default=0)

    # ----- ZigZag's JSON forms -------------------------------------------------------------
    def __simplejsonrepr__(self) -> dict[str, float]:
        return self.simple_dict()

    def __jsonrepr__(self) -> dict:
        return complete_json(self, self.layer, self.accelerator)
