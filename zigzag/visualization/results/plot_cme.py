"""ZigZag's ``bar_plot_cost_model_evaluations_breakdown`` (:func:`zigzag.plots.plot_energy_and_latency`)."""

from zigzag.cost.result import CumulativeResult
from zigzag.plots import plot_energy_and_latency


def bar_plot_cost_model_evaluations_breakdown(cmes, save_path):
    """Save the energy (per memory level and operand) and latency breakdown of the per-layer
    results among ``cmes`` (network sums are left out) as one figure at ``save_path``."""
    layers = [cme for cme in cmes if not isinstance(cme, CumulativeResult)]
    if not layers:
        raise ValueError("bar_plot_cost_model_evaluations_breakdown: no per-layer result to plot")
    labels = [f"{cme.layer_id}: {cme.layer_name}" for cme in layers]
    return plot_energy_and_latency(layers, save_path, labels=labels)


__all__ = ["bar_plot_cost_model_evaluations_breakdown"]
