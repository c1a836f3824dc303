"""How many computation nodes (CNs) a tiling makes, known before any CN is built, and the limit
on it (docs/reference/multicore-mapping.md#how-many-computation-nodes).

A layer's CN count is the product of its outer-CN loop factors, so the count of a whole graph
is exact and costs one multiplication per loop. Above :data:`CN_WARNING` CNs the generation
warns in one line; above the limit (``max_cns``, default :data:`DEFAULT_MAX_CNS`; ``--max-cns``
on the command line) it refuses, saying how to coarsen the tiling. ``max_cns=None`` lifts it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from zigzag.errors import InputError

if TYPE_CHECKING:  # kept light: the command line's parser reads the defaults
    from zigzag.multicore.tiling import TiledLayer

logger = logging.getLogger(__name__)

#: above this many CNs, building and scheduling them takes minutes: one warning line
CN_WARNING = 10_000
#: more CNs than this are refused unless the limit is raised (``max_cns``, ``--max-cns``)
DEFAULT_MAX_CNS = 100_000

_LIMIT: ContextVar[int | None] = ContextVar("max_cns", default=DEFAULT_MAX_CNS)

COARSEN = (
    "coarsen the tiling: fewer or smaller outer-CN loops (hint_loops in cn_define_mode 1, 3 "
    "and 4, e.g. ('OY', 4) instead of ('OY', 'all'); intra_core_tiling factors), or more "
    "inner-CN loops (hint_loops in cn_define_mode 2, e.g. [('OY', 'all'), ('OX', 'all')])"
)


def max_cns() -> int | None:
    """The limit in effect (:func:`cn_limit` sets it; default :data:`DEFAULT_MAX_CNS`)."""
    return _LIMIT.get()


@contextmanager
def cn_limit(limit: int | None) -> Iterator[None]:
    """Run a block with ``limit`` CNs at most (``None``: no limit)."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InputError(None, "max_cns", f"{limit!r} is not a positive whole number of CNs")
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def layer_cn_count(tiled: TiledLayer) -> int:
    """The CNs ``tiled`` is cut into (the product of its outer-CN loop factors)."""
    return math.prod(int(f) for _, f in tiled.outer_loops())


def check_cn_count(tiled: Mapping[int, TiledLayer], limit: int | None = None) -> int:
    """The CN count of ``tiled`` (layer id → tiled layer); warns above :data:`CN_WARNING`,
    refuses above ``limit`` (default: :func:`max_cns`)."""
    limit = max_cns() if limit is None else limit
    counts = {layer_id: layer_cn_count(t) for layer_id, t in tiled.items()}
    total = sum(counts.values())
    if total <= CN_WARNING and (limit is None or total <= limit):
        return total
    largest = max(counts, key=lambda i: (counts[i], -i))
    where = f"largest: layer {largest} '{tiled[largest].layer.name}' with {counts[largest]}"
    if limit is not None and total > limit:
        raise InputError(
            None,
            "max_cns",
            f"the tiling makes {total} computation nodes ({where}), more than the limit of "
            f"{limit}; {COARSEN}; or raise the limit (max_cns=..., --max-cns N)",
        )
    logger.warning(
        "the tiling makes %d computation nodes (%s): building and scheduling them may take "
        "minutes; to go faster, %s",
        total,
        where,
        COARSEN,
    )
    return total
