"""Figures and text views of cost-model results (docs/models/mapping-search.md#outputs).

Every ``plot_*`` function takes data and a file path, draws one figure and writes it (the format
follows the path's extension: png, svg, pdf, ...). Figures are made with matplotlib's
object-oriented API on an Agg canvas, so nothing here touches pyplot's global state or needs a
display.

* :func:`plot_energy_breakdown` - per layer: MAC energy plus every (operand, memory) pair
* :func:`plot_latency_breakdown` - per layer: ideal cycles, spatial under-utilisation, stalls,
  on-loading and off-loading (they add up to ``latency_total2``)
* :func:`plot_layer_breakdowns` - both, one horizontal bar per layer (50-200 layers)
* :func:`plot_temporal_mapping_breakdowns` - both breakdowns for many candidate mappings
* :func:`plot_memory_hierarchy` - the accelerator's memory graph
* :func:`plot_experiments_comparison` / :func:`pareto_front` - experiments on an
  energy-latency plane; :func:`plot_pareto_per_workload` / :func:`pareto_fronts` - one panel and
  one front per workload
* :func:`loop_nest_text` - ZigZag's "Loop ordering for <layer>" text (print_mapping format)
"""

from __future__ import annotations

from zigzag.plots.breakdowns import (
    LATENCY_COMPONENTS,
    energy_components,
    latency_components,
    plot_energy_and_latency,
    plot_energy_breakdown,
    plot_latency_breakdown,
    plot_layer_breakdowns,
    plot_temporal_mapping_breakdowns,
)
from zigzag.plots.common import PJ
from zigzag.plots.comparison import (
    pareto_front,
    pareto_fronts,
    plot_experiments_comparison,
    plot_pareto_per_workload,
)
from zigzag.plots.loop_nest import loop_nest_text
from zigzag.plots.memory import plot_memory_hierarchy

__all__ = [
    "LATENCY_COMPONENTS",
    "PJ",
    "energy_components",
    "latency_components",
    "loop_nest_text",
    "pareto_front",
    "pareto_fronts",
    "plot_energy_and_latency",
    "plot_energy_breakdown",
    "plot_experiments_comparison",
    "plot_latency_breakdown",
    "plot_layer_breakdowns",
    "plot_memory_hierarchy",
    "plot_pareto_per_workload",
    "plot_temporal_mapping_breakdowns",
]
