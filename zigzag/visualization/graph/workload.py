"""ZigZag's ``visualize_dnn_graph``: the layer graph of a workload."""

from pathlib import Path

import networkx as nx


def visualize_dnn_graph(graph, save_path: str = ""):
    """Draw a :class:`~zigzag.workload.workload.Workload`'s nodes in processing order with
    their dependencies; saved to ``save_path`` if given, else shown with matplotlib."""
    import matplotlib.pyplot as plt

    digraph = getattr(graph, "graph", graph)
    order = list(nx.topological_sort(digraph))
    position = {node: (index, -2 * index) for index, node in enumerate(order)}
    figure = plt.figure(figsize=(15, 5))
    ax = figure.gca()
    nx.draw_networkx_edges(
        digraph, position, ax=ax, arrows=True, connectionstyle="arc3,rad=0.3", alpha=0.7
    )
    nx.draw_networkx_nodes(digraph, position, ax=ax, node_size=100, node_color="black")
    labels = {node: getattr(node, "name", str(node)) for node in order}
    nx.draw_networkx_labels(
        digraph, {n: (x - 1.5, y - 2) for n, (x, y) in position.items()}, labels, ax=ax
    )
    ax.set_frame_on(False)
    if save_path:
        figure.savefig(Path(save_path))
        plt.close(figure)
        return Path(save_path)
    plt.show()


__all__ = ["visualize_dnn_graph"]
