"""Output destinations checked before any work: a folder the results go to must be a folder (or
not exist yet, under folders) and writable, so a finished search is never thrown away by its
output path. Writability is tried, not asked (``os.access`` says yes to root on a folder whose
mode forbids writing, and cannot see every read-only mount)."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from zigzag.errors import InputError
from zigzag.hardware.memory_costs.cacti_build import cache_root


def check_output_folder(path: str | Path, option: str = "--output") -> Path:
    """``path`` as a folder the outputs can be written to; a one-line InputError naming it (as
    ``option``) when it is a file, lies under a file, or cannot be written."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(
            str(path), option, "is a file, not a folder; give a folder for the outputs"
        )
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise InputError(
            str(path),
            option,
            f"{existing} is a file, so no folder can be made under it; give another folder",
        )
    problem = write_problem(existing)
    if problem:
        raise InputError(
            str(path), option, f"cannot write in {existing} ({problem}); give a writable folder"
        )
    return path


def write_problem(folder: str | Path) -> str | None:
    """Why nothing can be written in the existing ``folder`` (None when a file can be made there)."""
    probe = Path(folder) / f".zigzag-write-test.{os.getpid()}"
    try:
        probe.touch(exist_ok=False)
    except FileExistsError:
        return None
    except OSError as exc:
        return _reason(exc)
    probe.unlink(missing_ok=True)
    return None


def _reason(exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return "read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOENT:
        return "no file can be created there"
    return exc.strerror or str(exc)


def write_error(exc: OSError, kept: str | Path | None = None) -> InputError:
    """The one-line error of an output that could not be written after the work was done;
    ``kept``: where the results are kept all the same (said in the message)."""
    where = f"; the results are kept in {kept}" if kept else ""
    return InputError(exc.filename, None, f"cannot be written ({_reason(exc)}){where}")


def save_or_keep(save, output: str | Path) -> None:
    """``save(folder)`` into ``output``; when that fails after the work was done, the same into a
    folder of the per-user cache, then the one-line error saying where the results are kept."""
    try:
        save(Path(output))
    except OSError as exc:
        kept = cache_root() / "unsaved" / time.strftime("%Y%m%d-%H%M%S")
        try:
            save(kept)
        except OSError:
            kept = None
        raise write_error(exc, kept) from None
