"""The links of a multi-core accelerator file, written out as directed graph edges.

`Wiring` collects link objects and the directed edges using them, in the order they are made
(the order decides route ties). Point-to-point pairs get one link per direction; a bus is one link
shared by every ordered pair of its cores. :func:`add_mesh` and :func:`add_bus_topology` expand
the 2-D mesh and the bus the way the 2023 Stream built them (its `get_2d_mesh` / `get_bus`).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

#: The sender or receiver of a link shared by several cores.
ANY = "Any"
#: Links to a mesh's SIMD core: SIMD traffic was taken as free.
FREE = (float("inf"), 0)


class Wiring:
    """Links (dicts) and directed edges `[sender, receiver, link index]`, in order."""

    def __init__(self, memory_group: dict[int, int] | None = None):
        self.links: list[dict[str, Any]] = []
        self.edges: list[list[int]] = []
        self.group = memory_group or {}

    def _link(
        self, sender, receiver, bandwidth: float, energy: float, bidirectional: bool = False
    ) -> int:
        self.links.append(
            {
                "sender": sender,
                "receiver": receiver,
                "bandwidth": bandwidth,
                "unit_energy_cost": energy,
                "bidirectional": bidirectional,
            }
        )
        return len(self.links) - 1

    def shares_memory(self, a: int, b: int) -> bool:
        return self.group.get(a, a) == self.group.get(b, b)

    def one_way(self, sender: int, receiver: int, bandwidth: float, energy: float) -> None:
        """A link of its own from sender to receiver (none between cores sharing memory)."""
        if not self.shares_memory(sender, receiver):
            self.edges.append([sender, receiver, self._link(sender, receiver, bandwidth, energy)])

    def pair(self, a: int, b: int, bandwidth: float, energy: float) -> None:
        """One link a -> b and one b -> a."""
        self.one_way(a, b, bandwidth, energy)
        self.one_way(b, a, bandwidth, energy)

    def bus(self, cores: list[int], bandwidth: float, energy: float) -> int:
        """One link shared by every ordered pair of `cores`; returns its index."""
        index = self._link(ANY, ANY, bandwidth, energy, bidirectional=True)
        for a, b in combinations(cores, 2):
            self.on_bus(index, a, b)
        return index

    def on_bus(self, index: int, a: int, b: int) -> None:
        if not self.shares_memory(a, b):
            self.edges += [[a, b, index], [b, a, index]]


def add_mesh(
    wiring: Wiring,
    mesh: list[int],
    rows: int,
    cols: int,
    bandwidth: float,
    energy: float,
    pooling: int | None = None,
    simd: int | None = None,
) -> None:
    """A rows x cols mesh of the cores `mesh`, plus optional pooling and SIMD cores.

    The grid is filled column by column (`mesh[i]` at row `i % rows`, column `i // rows`). Per
    row: links left to right, then right to left; then per column: top to bottom, then bottom to
    top. The pooling core gets a link to and from every mesh core; the SIMD core likewise with
    infinite bandwidth and zero energy, plus a pair with the pooling core.
    """
    grid = [[mesh[col * rows + row] for col in range(cols)] for row in range(rows)]
    for line in grid + [list(column) for column in zip(*grid)]:
        for a, b in zip(line, line[1:]):
            wiring.one_way(a, b, bandwidth, energy)
        for a, b in zip(reversed(line), reversed(line[:-1])):
            wiring.one_way(a, b, bandwidth, energy)
    _add_helpers(wiring, mesh, bandwidth, energy, pooling, simd, simd_link=None)


def add_bus_topology(
    wiring: Wiring,
    cores: list[int],
    bandwidth: float,
    energy: float,
    pooling: int | None = None,
    simd: int | None = None,
) -> None:
    """The cores on one bus; a pooling core with links of its own; a SIMD core on the bus."""
    bus = wiring.bus(cores, bandwidth, energy)
    _add_helpers(wiring, cores, bandwidth, energy, pooling, simd, simd_link=bus)


def _add_helpers(
    wiring: Wiring,
    cores: list[int],
    bandwidth: float,
    energy: float,
    pooling: int | None,
    simd: int | None,
    simd_link: int | None,
) -> None:
    if pooling is not None:
        for core in cores:
            wiring.pair(core, pooling, bandwidth, energy)
    if simd is None:
        return
    partners = cores + ([pooling] if pooling is not None else [])
    for core in partners:
        if simd_link is None:
            wiring.pair(core, simd, *FREE)
        else:
            wiring.on_bus(simd_link, core, simd)
