"""Independent pieces of a sweep's collect job (its figures, its batches' files) run side by side
in forked processes, so a job given several cores draws and writes on all of them.

The pieces are closures: a forked worker inherits them (and the rows they read) from the parent,
and only their results travel back. A piece's :class:`~zigzag.errors.InputError` is raised again
in the parent as the same one line; any other exception comes back as multiprocessing sends it.
Where ``fork`` is not available, or with one worker, the pieces run in this process, in order.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import TypeVar

from zigzag.errors import InputError

T = TypeVar("T")

#: the pieces of the current call, inherited by the forked workers (never pickled)
_PIECES: Sequence[Callable[[], object]] = ()


def run_pieces(pieces: Sequence[Callable[[], T]], workers: int) -> list[T]:
    """The results of ``pieces()`` in their order, computed by up to ``workers`` processes."""
    global _PIECES
    workers = min(workers, len(pieces))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [piece() for piece in pieces]
    _PIECES = pieces
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            outcomes = pool.map(_run_piece, range(len(pieces)), chunksize=1)
    finally:
        _PIECES = ()
    results = []
    for done, value in outcomes:
        if not done:
            raise InputError(*value)
        results.append(value)
    return results


def _run_piece(index: int) -> tuple[bool, object]:
    """(True, the piece's result), or (False, an InputError's fields: it does not pickle)."""
    try:
        return True, _PIECES[index]()
    except InputError as exc:
        return False, (exc.file, exc.where, exc.message)
