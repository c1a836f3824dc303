"""Stages that draw the results passing through them."""

from __future__ import annotations

from pathlib import Path

from zigzag.cost.result import CostResult
from zigzag.plots import loop_nest_text, plot_memory_hierarchy, plot_temporal_mapping_breakdowns
from zigzag.stages.stage import Stage


def _operand_order(result) -> list[str] | None:
    """The layer's operands in mapping-file order (ZigZag's column order), if the result knows it."""
    layer = getattr(result, "layer", None)
    return list(layer.memory_operand_links) if layer is not None else None


class PlotTemporalMappingsStage(Stage):
    """Passes everything through; once its child is exhausted, saves the energy and latency
    breakdowns of every result received to ``plot_filename_pattern`` formatted with this stage's
    kwargs (e.g. ``"plots/{layer}.png"``). Put it above the temporal mapping generator to
    compare all temporal mappings of a spatial mapping."""

    def __init__(self, list_of_callables, *, plot_filename_pattern, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.pattern = plot_filename_pattern

    def run(self):
        results = []
        for result, extra_info in self.substage().run():
            if not isinstance(result, CostResult):
                raise TypeError(
                    f"{type(self).__name__} plots per-layer results, got a {type(result).__name__}"
                )
            results.append(result)
            yield result, extra_info
        if results:
            plot_temporal_mapping_breakdowns(results, self.pattern.format(**self.kwargs))


class VisualizationStage(Stage):
    """Passes everything through; draws the memory hierarchy of the first per-layer result to
    ``<dump_folder>/mem_hierarchy.png`` and appends the loop nest of every per-layer result to
    ``<dump_folder>/loop_ordering.txt``. ``dump_folder`` is passed on."""

    def __init__(self, list_of_callables, *, dump_folder, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.dump_folder = Path(dump_folder)
        self.kwargs["dump_folder"] = dump_folder

    def run(self):
        drawn = False
        for result, extra_info in self.substage().run():
            if isinstance(result, CostResult):
                self.dump_folder.mkdir(parents=True, exist_ok=True)
                if not drawn and getattr(result, "accelerator", None) is not None:
                    plot_memory_hierarchy(
                        result.accelerator, self.dump_folder / "mem_hierarchy.png"
                    )
                    drawn = True
                with open(self.dump_folder / "loop_ordering.txt", "a") as handle:
                    handle.write(loop_nest_text(result, _operand_order(result)))
            yield result, extra_info
