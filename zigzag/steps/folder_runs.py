"""One workflow run per folder: a second run started while another one works in the same folder is
refused with the other run's process id (Snakemake's own lock message would advise ``--unlock``,
which is harmful while that run is alive), and a lock left behind by a run that was killed is
said to be safe to remove. Checked when the Snakefile loads (``workflow/rules/common.smk``).

Processes are found through ``/proc`` (Linux): a Snakemake process whose working directory is
this folder, other than this one and its own ancestors, not a dry run nor an ``--unlock``.
Elsewhere nothing is found, and Snakemake's own lock check applies.
"""

from __future__ import annotations

import os
from pathlib import Path

from zigzag.errors import InputError
from zigzag.steps.integrity import is_dry_run

_PROC = Path("/proc")


def _started(pid: int) -> int:
    """When process ``pid`` started (clock ticks since boot; 0 when unknown)."""
    try:
        return int((_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def _ancestors(pid: int) -> set[int]:
    found = set()
    while pid > 1 and pid not in found:
        found.add(pid)
        try:
            stat = (_PROC / str(pid) / "stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return found


def other_runs(folder: str | Path) -> list[int]:
    """Process ids of the other Snakemake runs working in ``folder`` that started before this one
    (sorted; of two runs started together, the later one gives way)."""
    folder = os.path.realpath(folder)
    mine = _ancestors(os.getpid())
    me = (_started(os.getpid()), os.getpid())
    runs = []
    for entry in _PROC.glob("[0-9]*") if _PROC.is_dir() else []:
        pid = int(entry.name)
        if pid in mine:
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if not any("snakemake" in os.path.basename(a) for a in arguments[:3]):
            continue
        if cwd != folder or is_dry_run(arguments) or "--unlock" in arguments:
            continue
        if "--mode" in arguments:  # a job of a run (Snakemake's subprocess mode), not a run
            continue
        if (_started(pid), pid) < me:
            runs.append(pid)
    return sorted(runs)


def check_single_run(folder: str | Path = ".") -> str | None:
    """An InputError naming the other run when one works in ``folder``; else the note to print
    when a lock of a stopped run is left (None when there is none)."""
    runs = other_runs(folder)
    if runs:
        pids = ", ".join(map(str, runs))
        raise InputError(
            os.path.realpath(folder),
            None,
            f"another Snakemake run (process {pids}) is working in this folder; wait for it to "
            "finish or stop it, then run again (do not use --unlock while it runs)",
        )
    locks = Path(folder) / ".snakemake" / "locks"
    if locks.is_dir() and any(locks.glob("*.lock")):
        return (
            f"note: {locks} holds the lock of a run that was stopped (no Snakemake run is alive "
            "in this folder); if Snakemake refuses to start, `snakemake --unlock` (same options) "
            "removes it safely"
        )
    return None
