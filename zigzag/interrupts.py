"""Ctrl-C: worker processes leave it to their parent, and a command ends with one line.

Every output file is written atomically (``zigzag.io.atomic``), so an interrupted command leaves
no half-written file; results cached per layer or per cost-table entry are kept, and the same
command run again continues from them. :func:`interrupted_line` says so for each command.
"""

from __future__ import annotations

import signal

#: exit status of a command ended by Ctrl-C (128 + SIGINT, as shells report it)
INTERRUPTED = 130


def ignore_interrupts() -> None:
    """In a pool's worker: ignore Ctrl-C (the parent stops the pool and reports it once)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupted_line(args) -> str:
    """The one line ``zigzag`` prints when Ctrl-C stops the command ``args`` describes."""
    command = " ".join(c for c in (args.command, getattr(args, "multicore_command", None)) if c)
    output = getattr(args, "output", None)
    kept = "no file was left half-written"
    if command == "sweep":
        cache = args.cache or f"{output}/.cache"
        return (
            f"interrupted: zigzag sweep stopped; {kept}, and the layer results computed so far are kept in "
            f"{cache}: run the same command again to continue from them"
        )
    if command in ("multicore run", "multicore search", "stream run", "stream search"):
        cache = args.cache or f"{output}/.cache"
        return (
            f"interrupted: zigzag {command} stopped; {kept}, and the cost-table entries computed so far are "
            f"kept in {cache}: run the same command again to continue from them"
        )
    return (
        f"interrupted: zigzag {command} stopped; {kept}; run the same command again to start over"
    )
