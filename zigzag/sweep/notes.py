"""A sweep's repeated warnings, told once (docs/reference/sweeps.md#warnings-of-a-sweep).

Every point of a sweep reads its workload and mapping again (a variant's array resizes the
mapping's unrollings) and fits the mapping's spatial unrolling to its array, so a plain run of
each point would repeat the same input notes ("17 Relu nodes not evaluated", ...) for every
variant, and a line per variant on each unrolling reduced to fit. :class:`SweepNotes` holds them
off the console while the points run (the step logs still get every line) and tells them once:
each distinct input note, then one count line of the points whose unrolling was reduced.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from zigzag.notes import held_warnings

logger = logging.getLogger(__name__)

#: the loggers of the input notes: the readers of workload, mapping and hardware files
INPUT_LOGGERS = ("zigzag.io.", "zigzag.workload.", "zigzag.mapping.")
#: the logger of the unrollings fitted to a variant's array
UNROLLING_LOGGER = "zigzag.mapping_search.spatial_generator"


def _input_note(name: str, line: str) -> bool:
    return name.startswith(INPUT_LOGGERS)


def _unrolling_note(name: str, line: str) -> bool:
    return name == UNROLLING_LOGGER and "spatial unrolling" in line


@dataclass
class SweepNotes:
    """The held notes of a sweep's points: its distinct input notes (in order of first
    appearance), how many points ran and how many had their spatial unrolling fitted to the
    array (``fitted``), with the first such line (``example``, prefixed by its variant)."""

    inputs: list[str] = field(default_factory=list)
    points: int = 0
    fitted: int = 0
    example: str = ""

    @contextmanager
    def point(self, variant: str) -> Iterator[None]:
        """Hold the input and unrolling notes of one point (of ``variant``) while it runs."""
        with held_warnings(
            lambda n, line: _input_note(n, line) or _unrolling_note(n, line)
        ) as held:
            try:
                yield
            finally:
                self.points += 1
                self._add_inputs(line for name, line in held if _input_note(name, line))
                unrollings = [line for name, line in held if _unrolling_note(name, line)]
                if unrollings:
                    self.fitted += 1
                    self.example = self.example or f"{variant}: {unrollings[0]}"

    def merge(self, other: SweepNotes) -> None:
        """Add the notes of ``other`` (another batch of the same sweep)."""
        self._add_inputs(other.inputs)
        self.points += other.points
        self.fitted += other.fitted
        self.example = self.example or other.example

    def _add_inputs(self, lines) -> None:
        for line in lines:
            if line not in self.inputs:
                self.inputs.append(line)

    def to_dict(self) -> dict:
        return {
            "inputs": list(self.inputs),
            "points": self.points,
            "fitted": self.fitted,
            "example": self.example,
        }

    @classmethod
    def from_dict(cls, data: dict) -> SweepNotes:
        return cls(list(data["inputs"]), data["points"], data["fitted"], data["example"])

    def tell(self, details: str = "") -> None:
        """Log each input note once, then one line counting the points whose unrolling was fitted
        (``details``: where the lines of every point are, e.g. the batch jobs' logs)."""
        for line in self.inputs:
            logger.warning("%s", line)
        if self.fitted:
            where = f"; every line in {details}" if details else ""
            logger.warning(
                "spatial unrolling fitted to the array on %d of %d points (e.g. %s)%s",
                self.fitted,
                self.points,
                self.example,
                where,
            )
