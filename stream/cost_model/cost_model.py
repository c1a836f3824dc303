"""Stream's schedule object, ``StreamCostModelEvaluation``, with the attributes Stream's scripts,
documentation and plotting functions read: ``latency``, ``energy`` and its nine terms,
``workload`` (the scheduled CNs and their edges), ``accelerator`` (top-memory usage over time,
links with their events) and ``scheduling_order``."""

from __future__ import annotations

from functools import cached_property
from graphlib import TopologicalSorter

import numpy as np

from stream.cost_model.views import (
    CommunicationManagerView,
    LinkEventView,
    LinkView,
    MemoryManagerView,
    ScheduledAccelerator,
    ScheduledNode,
    ScheduledWorkload,
)
from zigzag.multicore.schedule.result import ScheduleResult, Totals
from zigzag.multicore.stages import StreamCostModelEvaluation as _Schedule

__all__ = ["StreamCostModelEvaluation"]


class StreamCostModelEvaluation(_Schedule):
    """Our schedule result under Stream's attribute names (see docs/compat/stream-users.md)."""

    @classmethod
    def of(cls, result: ScheduleResult) -> "StreamCostModelEvaluation":
        return result if isinstance(result, cls) else super().of(result)

    def __str__(self) -> str:
        return f"StreamCostModelEvaluation(latency={self.latency:.3e}, energy={self.energy:.3e})"

    def plot_schedule(
        self,
        plot_full_schedule: bool = False,
        draw_dependencies: bool = True,
        plot_data_transfer: bool = False,
        section_start_percent: tuple[int, ...] = (0, 50, 95),
        percent_shown: tuple[int, ...] = (5, 5, 5),
        fig_path: str = "outputs/schedule_plot.png",
    ) -> None:
        """The static schedule picture (the whole schedule if ``plot_full_schedule``)."""
        from stream.visualization.schedule import plot_timeline_brokenaxes

        if plot_full_schedule:
            section_start_percent, percent_shown = (0,), (100,)
        plot_timeline_brokenaxes(
            self,
            draw_dependencies,
            section_start_percent,
            percent_shown,
            plot_data_transfer,
            fig_path,
        )

    def plot_memory_usage(self, fig_path: str = "outputs/memory_usage_plot.png") -> None:
        """The top-memory usage picture."""
        from stream.visualization.memory_usage import plot_memory_usage

        plot_memory_usage(self, fig_path=fig_path)

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
        return ScheduledWorkload(nodes, edges, tuple(sorter.static_order()))

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
