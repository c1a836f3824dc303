"""The loop nest of a result as text, in ZigZag's ``print_mapping`` format."""

from __future__ import annotations

from typing import Sequence


def _size_text(size) -> str:
    if isinstance(size, float) and size.is_integer():
        return str(int(size))
    return str(size)


def _output_operand(result) -> str:
    operands = list(result.temporal_mapping_stationary)
    return "O" if "O" in operands else operands[0]


def loop_nest_text(result, operands: Sequence[str] | None = None, *, indent: int = 2) -> str:
    """The loop nest of one result as ZigZag's ``print_mapping`` prints it.

    ``Loop ordering for <layer>``, then a "Temporal Loops" table (outermost loop first, one
    ``for <dim> in [0, <size>):`` line per loop of the output operand's stationary temporal
    mapping, with for every layer operand the memory that holds the loop; ``indent`` more spaces
    per nesting level), then a "Spatial Loops" table of ``parfor`` lines (the output operand's
    integer spatial mapping, reversed), all framed by ``=``/``-`` rules, and a blank line.

    ``operands``: the layer operands' column order; ZigZag uses the order of the mapping's
    ``memory_operand_links`` (default: the result's own operand order, output first).
    Results without a loop nest (network sums) give ``""``.
    """
    stationary = getattr(result, "temporal_mapping_stationary", None)
    if not stationary:
        return ""
    operands = list(operands) if operands is not None else list(result.memory_names)
    output = _output_operand(result)

    # which memory holds each loop of the output's nest, per operand (innermost loop first;
    # a loop found at some level of an operand is used up there, so equal loops move outwards)
    remaining = {op: [list(level) for level in stationary.get(op, ())] for op in operands}
    temporal = []
    for loop in (tuple(l) for level in stationary[output] for l in level):
        holders = []
        for op in operands:
            levels = remaining[op]
            found = next(
                (k for k, level in enumerate(levels) if any(tuple(l) == loop for l in level)), None
            )
            if found is None:
                holders.append("")
                continue
            level = levels[found]
            level.pop(next(i for i, l in enumerate(level) if tuple(l) == loop))
            names = result.memory_names.get(op, ())
            holders.append(names[found] if found < len(names) else f"L{found}")
        temporal.append((loop[0], loop[1], holders))
    temporal.reverse()

    spatial = [
        (dim, size) for level in result.spatial_mapping_int.get(output, ()) for dim, size in level
    ]
    spatial.reverse()

    loop_width = (
        max((len(str(dim)) for dim, _, _ in temporal), default=0)
        + 14
        + indent * (len(temporal) + len(spatial))
        + 5
    )
    memory_width = max((len(name) for _, _, holders in temporal for name in holders), default=0) + 5
    rule_width = loop_width + len(operands) * memory_width

    lines = [f"Loop ordering for {result.layer_name}"]

    def header(text: str, columns: Sequence[str]) -> None:
        lines.append("=" * rule_width)
        lines.append(text.ljust(loop_width) + "".join(c.ljust(memory_width) for c in columns))
        lines.append("=" * rule_width)

    def loop_line(depth: int, keyword: str, dim, size, columns: Sequence[str]) -> None:
        head = f"{' ' * depth}{keyword} {dim} in [0, {_size_text(size)}):"
        lines.append(head.ljust(loop_width) + "".join(c.ljust(memory_width) for c in columns))
        lines.append("-" * rule_width)

    header("Temporal Loops", operands)
    for depth, (dim, size, holders) in enumerate(temporal):
        loop_line(indent * depth, "for", dim, size, holders)
    header("Spatial Loops", [""] * len(operands))
    for dim, size in spatial:
        loop_line(indent * len(temporal), "parfor", dim, size, [""] * len(operands))
    return "\n".join(lines) + "\n\n"
