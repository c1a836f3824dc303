"""numba's cache of the batched evaluator's kernels, kept per version of every source they use.

numba checks a cached kernel against the file that defines it, and nothing else; ours also inline
helpers from ``kernels.py`` and freeze constants of ``candidates.py`` and the latency model. After
an edit of one of those alone (a ``git pull`` into an editable install), numba would load the old
machine code. So the kernels are cached in a folder named by a digest of all these files: an edit
of any one compiles every kernel again, once. The folder sits where numba would put the cache
(``NUMBA_CACHE_DIR``, else ``__pycache__`` beside this file); where that cannot be written, numba
picks its usual place.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

import numba

_HERE = Path(__file__).resolve().parent

#: the files whose text the compiled kernels depend on
SOURCES = (
    _HERE / "kernel_cache.py",
    _HERE / "kernels.py",
    _HERE / "movement_kernels.py",
    _HERE / "allocation_kernels.py",
    _HERE / "candidates.py",
    _HERE.parents[1] / "cost" / "model" / "latency.py",
)


def sources_digest(sources: tuple[Path, ...] = SOURCES) -> str:
    """A short digest of the text of ``sources``."""
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@cache
def _this_version() -> str:
    return sources_digest()


@cache
def kernel_cache_folder(configured: str) -> str | None:
    """The folder of this version's compiled kernels under ``configured`` (numba's
    ``CACHE_DIR``; empty: ``__pycache__`` beside this file); None when it cannot be written."""
    folder = Path(configured or _HERE / "__pycache__") / f"kernels-{_this_version()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(folder) if os.access(folder, os.W_OK) else None


def cached_njit(*signatures, **options):
    """``numba.njit(*signatures, cache=True, **options)``, cached in :func:`kernel_cache_folder`."""

    def decorate(function):
        configured = numba.config.CACHE_DIR
        folder = kernel_cache_folder(configured)
        if folder is not None:
            numba.config.CACHE_DIR = folder
        try:
            return numba.njit(*signatures, cache=True, **options)(function)
        finally:
            numba.config.CACHE_DIR = configured

    return decorate
