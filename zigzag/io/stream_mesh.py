"""The 2-D mesh shorthand of a multi-core accelerator file, expanded into directed links."""

from __future__ import annotations


def mesh_connections(rows: int, cols: int, bandwidth: float, unit_energy_cost: float,
                     pooling_core: int | None = None, simd_core: int | None = None,
                     memory_group: dict[int, int] | None = None) -> list[dict]:
    """Directed links of a rows x cols mesh of cores 0..rows*cols-1, as the seed-era Stream made them.

    Core `i` sits at row `i % rows`, column `i // rows` (the grid is filled column by column).
    Per row: links left to right, then right to left; then per column: top to bottom, then bottom to
    top. A pooling core gets a link to and from every mesh core (mesh bandwidth and energy); a SIMD
    core likewise but with infinite bandwidth and zero energy (SIMD traffic was taken as free), plus
    a pair with the pooling core. Cores sharing memory (same `memory_group`) are not linked.
    """
    group = memory_group or {}
    grid = [[col * rows + row for col in range(cols)] for row in range(rows)]
    lines = grid + [list(column) for column in zip(*grid)]
    out: list[dict] = []

    def add(sender: int, receiver: int, width: float, energy: float) -> None:
        if group.get(sender, sender) != group.get(receiver, receiver):
            out.append({"type": "link", "sender": sender, "receiver": receiver, "bandwidth": width,
                        "unit_energy_cost": energy})

    for line in lines:
        for a, b in zip(line, line[1:]):
            add(a, b, bandwidth, unit_energy_cost)
        for a, b in zip(reversed(line), reversed(line[:-1])):
            add(a, b, bandwidth, unit_energy_cost)
    mesh = range(rows * cols)
    if pooling_core is not None:
        for core in mesh:
            add(core, pooling_core, bandwidth, unit_energy_cost)
            add(pooling_core, core, bandwidth, unit_energy_cost)
    if simd_core is not None:
        for core in mesh:
            add(core, simd_core, float("inf"), 0)
            add(simd_core, core, float("inf"), 0)
        if pooling_core is not None:
            add(pooling_core, simd_core, float("inf"), 0)
            add(simd_core, pooling_core, float("inf"), 0)
    return out
