"""ZigZag's ``print_mapping``: prints a result's loop nest (:func:`zigzag.plots.loop_nest_text`)."""

from zigzag.plots import loop_nest_text


def print_mapping(cme, offsets: int = 2) -> None:
    """Print the chosen loop nest of a per-layer result, ``offsets`` spaces per nesting level
    (network sums print nothing). Columns follow the layer's ``memory_operand_links``."""
    layer = getattr(cme, "layer", None)
    operands = list(layer.memory_operand_links) if layer is not None else None
    text = loop_nest_text(cme, operands, indent=offsets)
    if text:
        print(text, end="")


__all__ = ["print_mapping"]
