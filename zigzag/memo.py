"""In-process memos of the last values made, by key (layers, frames, job texts: immutable keys)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")


def recent(store: OrderedDict, key: Hashable, make: Callable[[], T], limit: int) -> T:
    """``store[key]``, made by ``make()`` (never None) when absent; ``store`` keeps the ``limit``
    keys used last, the least recently used dropped first."""
    found = store.get(key)
    if found is None:
        found = store[key] = make()
        if len(store) > limit:
            store.popitem(last=False)
    else:
        store.move_to_end(key)
    return found
