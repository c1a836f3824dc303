"""ZigZag's ``visualize_memory_hierarchy_graph`` (:func:`zigzag.plots.plot_memory_hierarchy`)."""

import tempfile

from zigzag.plots import plot_memory_hierarchy


def visualize_memory_hierarchy_graph(graph, save_path: str = ""):
    """Draw the memory hierarchy of an accelerator (or of a result's ``accelerator``) to
    ``save_path``; without a path, show it with matplotlib."""
    accelerator = getattr(graph, "accelerator", None) or graph
    if save_path:
        return plot_memory_hierarchy(accelerator, save_path)
    _show(plot_memory_hierarchy, accelerator)


def _show(draw, obj) -> None:
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt

    with tempfile.TemporaryDirectory() as folder:
        image = mpimg.imread(draw(obj, f"{folder}/figure.png"))
    plt.imshow(image)
    plt.axis("off")
    plt.show()


__all__ = ["visualize_memory_hierarchy_graph"]
