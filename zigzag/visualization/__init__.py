"""ZigZag's ``zigzag.visualization``: its plotting and printing helpers over our results."""

from zigzag.visualization.graph.memory_hierarchy import visualize_memory_hierarchy_graph
from zigzag.visualization.graph.workload import visualize_dnn_graph
from zigzag.visualization.results.plot_cme import bar_plot_cost_model_evaluations_breakdown
from zigzag.visualization.results.print_mapping import print_mapping

__all__ = [
    "bar_plot_cost_model_evaluations_breakdown",
    "print_mapping",
    "visualize_dnn_graph",
    "visualize_memory_hierarchy_graph",
]
