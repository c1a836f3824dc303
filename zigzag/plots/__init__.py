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

from zigzag.lazy import lazy_api

#: the package's API and the module defining each name: loaded on first use, so that importing one
#: light module of the package (``units``, ``plotlyjs``: the Snakefile's load, the multi-core steps)
#: does not import matplotlib
_API = {
    "LATENCY_COMPONENTS": "breakdowns",
    "energy_components": "breakdowns",
    "latency_components": "breakdowns",
    "plot_energy_and_latency": "breakdowns",
    "plot_energy_breakdown": "breakdowns",
    "plot_latency_breakdown": "breakdowns",
    "plot_layer_breakdowns": "breakdowns",
    "plot_temporal_mapping_breakdowns": "breakdowns",
    "PJ": "common",
    "pareto_front": "comparison",
    "pareto_fronts": "comparison",
    "plot_experiments_comparison": "comparison",
    "plot_pareto_per_workload": "comparison",
    "loop_nest_text": "loop_nest",
    "plot_memory_hierarchy": "memory",
}

__all__ = sorted(_API)

__getattr__ = lazy_api(__name__, _API)
