"""The one result type of Stream's stages and API, ``StreamCostModelEvaluation``: our schedule
result under the names Stream's scripts, documentation and picture functions read (``latency``,
``energy`` and its nine terms, ``workload``, ``accelerator``, ``scheduling_order``,
``plot_schedule``, ``plot_memory_usage``), readable by ZigZag's reducing and saving stages too
(``energy_total``, ``latency_total2``, ``simple_dict``, ``complete_dict``); see
docs/compat/stream-users.md#the-schedule-object."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cached_property
from graphlib import TopologicalSorter

import numpy as np

from zigzag.multicore.evaluation.views import (
    CommunicationManagerView,
    LinkEventView,
    LinkView,
    MemoryManagerView,
    ScheduledAccelerator,
    ScheduledNode,
    ScheduledWorkload,
)
from zigzag.multicore.plots.selection import memory_png, schedule_png
from zigzag.multicore.schedule.result import ScheduleResult, Totals

__all__ = ["StreamCostModelEvaluation"]

#: Stream's picture sections: three 5 % windows, or the whole schedule (``plot_full_schedule``)
DEFAULT_SECTIONS = ((0, 50, 95), (5, 5, 5))
FULL_SCHEDULE = ((0,), (100,))


@dataclass(frozen=True)
class StreamCostModelEvaluation(ScheduleResult):
    """A schedule as Stream's stages return it. ``label`` names which point of a search front it
    is when a stage yields several (empty for Stream's pick); the save stages put it in file names."""

    label: str = ""

    @classmethod
    def of(cls, result: ScheduleResult, label: str = "") -> "StreamCostModelEvaluation":
        """``result`` as this type (itself if it already is one with that label)."""
        if isinstance(result, cls) and result.label == label:
            return result
        if isinstance(result, cls):
            return replace(result, label=label)
        return cls(**{f.name: getattr(result, f.name) for f in fields(ScheduleResult)}, label=label)

    def __str__(self) -> str:
        return f"StreamCostModelEvaluation(latency={self.latency:.3e}, energy={self.energy:.3e})"

    __repr__ = __str__

    # ----- what ZigZag's stages read --------------------------------------------------------
    @property
    def energy_total(self) -> float:
        return self.energy

    @property
    def latency_total2(self) -> float:
        return self.latency

    @property
    def save_stem(self) -> str:
        """File stem the save stages use: ``scme`` (Stream's name for it), ``scme_<label>``."""
        return f"scme_{self.label}" if self.label else "scme"

    def simple_dict(self) -> dict:
        """``{"energy": pJ, "latency": cycles}`` (what SimpleSaveStage writes)."""
        return {"energy": self.energy, "latency": _number(self.latency)}

    def complete_dict(self) -> dict:
        """The schedule's figures (totals, the nine terms, memory peaks, DRAM traffic) and one row
        per CN (what CompleteSaveStage writes)."""
        return {**self.summary(), "cns": self.cn_rows()}

    # ----- Stream's pictures ------------------------------------------------------------------
    def plot_schedule(
        self,
        plot_full_schedule: bool = False,
        draw_dependencies: bool = True,
        plot_data_transfer: bool = False,
        section_start_percent: tuple[int, ...] = DEFAULT_SECTIONS[0],
        percent_shown: tuple[int, ...] = DEFAULT_SECTIONS[1],
        fig_path: str = "outputs/schedule_plot.png",
    ) -> None:
        """The static schedule picture (the whole schedule if ``plot_full_schedule``, link rows if
        ``plot_data_transfer``; ``draw_dependencies`` accepted, the static picture has no arrows)."""
        if plot_full_schedule:
            section_start_percent, percent_shown = FULL_SCHEDULE
        schedule_png(self, section_start_percent, percent_shown, plot_data_transfer, fig_path)

    def plot_memory_usage(self, fig_path: str = "outputs/memory_usage_plot.png") -> None:
        """The top-memory usage picture over the whole schedule."""
        memory_png(self, *FULL_SCHEDULE, False, fig_path)

    # ----- Stream's attributes ----------------------------------------------------------------
    @property
    def scheduling_order(self) -> list[tuple[int, int]]:
        """The CNs as ``(layer id, sub id)`` in scheduling priority."""
        p = self.problem
        return [(int(p.layer[n]), int(p.sub[n])) for n in p.order.tolist()]

    @cached_property
    def workload(self) -> ScheduledWorkload:
        """The scheduled CNs (``node_list``) and their dependencies."""
        p = self.problem
        names = dict(getattr(p, "layer_names", None) or {})
        nodes = tuple(
            ScheduledNode(
                index=n,
                id=int(p.layer[n]),
                sub_id=int(p.sub[n]),
                name=names.get(int(p.layer[n]), ""),
                chosen_core_allocation=int(p.core[n]),
                start=_number(self.start[n]),
                end=_number(self.end[n]),
                runtime=_number(p.runtime[n]),
                onchip_energy=float(p.onchip_energy[n]),
                offchip_energy=float(p.offchip_energy[n]),
            )
            for n in range(p.nb_cns)
        )
        edges = tuple(zip(p.edge_src.tolist(), p.edge_dst.tolist()))
        sorter = TopologicalSorter({n: () for n in range(p.nb_cns)})
        for src, dst in edges:
            sorter.add(dst, src)
        return ScheduledWorkload(nodes, edges, tuple(sorter.static_order()), schedule=self)

    @cached_property
    def accelerator(self) -> ScheduledAccelerator:
        """Per top memory its usage over time; per link its events (Stream's managers' fields)."""
        hw = self.problem.hardware
        memories = MemoryManagerView(
            top_instance_stored_cumsum={
                m.label: _points(tl) for m, tl in zip(hw.memories, self.timelines)
            },
            top_instance_capacities={m.label: int(m.capacity) for m in hw.memories},
            cores_per_top_instance={m.label: list(m.cores) for m in hw.memories},
            offchip_core_id=int(hw.offchip_core),
            schedule=self,
        )
        links = tuple(
            LinkView(
                link.sender,
                link.receiver,
                float(link.bandwidth),
                float(link.unit_energy),
                link.bidirectional,
                tuple(
                    LinkEventView(
                        e.kind, _number(e.start), _number(e.end), int(e.activity), tuple(e.tensors)
                    )
                    for e in events
                ),
            )
            for link, events in zip(hw.links, self.link_events)
        )
        pairs = {pair: tuple(links[i] for i in route) for pair, route in hw.routes.items() if route}
        return ScheduledAccelerator(
            core_ids=tuple(int(c) for c in hw.cores),
            offchip_core_id=int(hw.offchip_core),
            memory_manager=memories,
            communication_manager=CommunicationManagerView(links, pairs),
        )


def _term(name: str) -> property:
    return property(lambda self: getattr(self.totals, name), doc=f"Stream's ``{name}`` (pJ).")


for _name in Totals.TERMS:
    setattr(StreamCostModelEvaluation, _name, _term(_name))


def _number(x) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


def _points(timeline):
    return np.asarray(timeline, dtype=np.int64).reshape(-1, 2)
