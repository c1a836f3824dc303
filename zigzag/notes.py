"""Warnings as the user sees them: grouped when they repeat per layer, and kept as a run's notes.

* :func:`warn_for_layer` logs ``<layer>: <message>``; inside :func:`grouped_layer_warnings`
  the same message for several layers becomes one line with their count and names, written
  when the block ends.
* :func:`collected_warnings` keeps the warning lines logged under ``zigzag`` during a block,
  for the results' ``notes`` (:func:`add_notes`) and the step logs (see
  docs/reference/errors-and-warnings.md).
* :func:`held_warnings` keeps chosen warnings off the console during a block (the step logs still
  get them), for a caller that tells them once in its own words (a hardware sweep's notes).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from zigzag.errors import InputError, MappingError
from zigzag.io.atomic import write_json_atomic

#: at most this many layer names in a grouped warning; the others are counted
NAMED_LAYERS = 8

_groups: list[dict[tuple[logging.Logger, str], list[str]]] = []


def warn_for_layer(logger: logging.Logger, layer: str, message: str) -> None:
    """``layer: message`` now, or once per message with every layer it concerns when grouped."""
    if _groups:
        _groups[-1].setdefault((logger, message), []).append(layer)
    else:
        logger.warning("%s: %s", layer, message)


@contextmanager
def grouped_layer_warnings() -> Iterator[None]:
    """Collect :func:`warn_for_layer` calls; at the end, one line per distinct message."""
    group: dict[tuple[logging.Logger, str], list[str]] = {}
    _groups.append(group)
    try:
        yield
    finally:
        _groups.remove(group)
        for (logger, message), layers in group.items():
            warn_for_layers(logger, layers, message)


def warn_for_layers(logger: logging.Logger, layers: list[str], message: str) -> None:
    """One line for a message concerning several layers (or several times one layer)."""
    names = list(dict.fromkeys(layers))
    if len(layers) == 1:
        logger.warning("%s: %s", layers[0], message)
        return
    shown = ", ".join(names[:NAMED_LAYERS])
    if len(names) > NAMED_LAYERS:
        shown += f" and {len(names) - NAMED_LAYERS} more"
    times = f"{len(layers)} times, " if len(layers) != len(names) else ""
    count = f"{len(names)} layer{'s' * (len(names) > 1)}"
    logger.warning("%s (%s%s: %s)", message, times, count, shown)


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def collected_warnings(logger_name: str = "zigzag") -> Iterator[list[str]]:
    """The warning lines logged under ``logger_name`` during the block (a list filled as they come)."""
    logger = logging.getLogger(logger_name)
    collector = _Collector()
    logger.addHandler(collector)
    try:
        yield collector.lines
    finally:
        logger.removeHandler(collector)


class _Hold(logging.Filter):
    """Passes every record but the ``zigzag`` warnings ``match(logger name, line)`` selects; a
    handler with this filter keeps them (``kept``), the console's handlers skip them."""

    def __init__(self, match: Callable[[str, str], bool]) -> None:
        super().__init__()
        self.match = match

    def selects(self, record: logging.LogRecord) -> bool:
        return (
            record.levelno >= logging.WARNING
            and record.name.startswith("zigzag.")
            and self.match(record.name, record.getMessage())
        )

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.selects(record)


class _Keeper(logging.Handler):
    def __init__(self, hold: _Hold) -> None:
        super().__init__(logging.WARNING)
        self.hold = hold
        self.kept: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if self.hold.selects(record):
            self.kept.append((record.name, record.getMessage()))


@contextmanager
def held_warnings(match: Callable[[str, str], bool]) -> Iterator[list[tuple[str, str]]]:
    """During the block, the warnings under ``zigzag`` for which ``match(logger name, line)`` holds
    are not shown by the root logger's handlers (the console); :func:`collected_warnings` (the
    step logs) still gets them. The block gets the list of the held ``(logger name, line)``."""
    hold = _Hold(match)
    keeper = _Keeper(hold)
    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(hold)
    logging.getLogger("zigzag").addHandler(keeper)
    try:
        yield keeper.kept
    finally:
        logging.getLogger("zigzag").removeHandler(keeper)
        for handler in handlers:
            handler.removeFilter(hold)


def add_notes(summary_path: str | Path, notes: list[str]) -> None:
    """Record ``notes`` under ``notes`` in an existing ``summary.json``."""
    summary = json.loads(Path(summary_path).read_text())
    write_json_atomic(summary_path, {**summary, "notes": list(notes)})


def run_logged(log: str | None, action, on_failure=None) -> int:
    """Run ``action()`` (returns a one-line message); write the time, the warnings logged meanwhile
    and then the message (or the one-line error) to ``log``, so that the outcome is the log's last line.

    ``on_failure(reason)``: called on an error instead of failing (exit status 0), to write the
    step's failure record (see zigzag/steps/failures.py); the error line is printed all the same."""
    started = time.perf_counter()
    with collected_warnings() as warnings:
        try:
            message = action()
            status = 0
        except (InputError, MappingError) as exc:
            message = f"error: {exc}"
            print(message, file=sys.stderr)
            status = 1
            if on_failure is not None:
                on_failure(str(exc))
                status = 0
    if log:
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        lines = [
            f"[{time.perf_counter() - started:.3f} s]",
            *(f"warning: {w}" for w in warnings),
            message,
        ]
        Path(log).write_text("\n".join(lines) + "\n")
    return status
