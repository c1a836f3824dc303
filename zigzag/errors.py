"""The one exception type for bad user input.

Every problem with a user's file is reported as a single line naming the file, the place
inside it and what to do about it, e.g.::

    inputs/hardware/tpu.yaml: memories.sram.ports[0].allocation[1]: operand 'I3' is not one of I1, I2, O
"""

from __future__ import annotations


class InputError(ValueError):
    """A user input (file or option) that cannot be used as given."""

    def __init__(self, file: str | None, where: str | None, message: str):
        self.file = str(file) if file is not None else None
        self.where = where
        self.message = message
        super().__init__(self.one_line())

    def one_line(self) -> str:
        parts = [p for p in (self.file, self.where) if p]
        prefix = ": ".join(parts)
        text = f"{prefix}: {self.message}" if prefix else self.message
        return " ".join(text.split())


def missing_file(path) -> InputError:
    """The one-line error for an input file that is not there."""
    return InputError(
        path, None, "does not exist; check the path (relative paths start at the working directory)"
    )


class MappingError(RuntimeError):
    """No valid mapping exists for a layer on an accelerator (e.g. memories too small)."""


class MemoryTooSmall(InputError, MappingError):
    """A memory smaller than one element of an operand a layer stores in it: bad input (reported
    as one line) and, to the multi-core mapping, a core that cannot map that layer."""
