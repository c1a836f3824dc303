"""ZigZag's ``zigzag.utils`` helpers, for scripts written against ZigZag.

``open_yaml`` reads through the project's YAML reader (a missing or malformed file is a one-line
:class:`~zigzag.errors.InputError`); the pickle helpers are plain :mod:`pickle`.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import pickle
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from zigzag.io.yaml_files import load_yaml

__all__ = [
    "DiGraphWrapper",
    "UniqueMessageFilter",
    "hash_sha512",
    "json_repr_handler",
    "open_yaml",
    "pickle_deepcopy",
    "pickle_load",
    "pickle_save",
]


def open_yaml(path: str | Path) -> Any:
    """The parsed content of a YAML file (a dict or a list, e.g. a workload's layers)."""
    return load_yaml(path)


def pickle_deepcopy(obj: Any) -> Any:
    """A deep copy made through pickle (faster than :func:`copy.deepcopy` on large objects);
    objects pickle cannot handle are copied with :func:`copy.deepcopy`."""
    try:
        return pickle.loads(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))
    except (pickle.PicklingError, TypeError, AttributeError):
        return copy.deepcopy(obj)


def pickle_save(obj: Any, path: str | Path) -> None:
    """Pickle ``obj`` to ``path``."""
    with open(path, "wb") as handle:
        pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL)


def pickle_load(path: str | Path) -> Any:
    """The object pickled in ``path`` (e.g. the API's ``list_of_cmes.pickle``)."""
    with open(path, "rb") as handle:
        return pickle.load(handle)


def hash_sha512(data: Any) -> int:
    """A stable integer hash of any picklable value."""
    return int(hashlib.sha512(pickle.dumps(data)).hexdigest(), 16)


def json_repr_handler(obj: Any, simple: bool = False) -> Any:
    """``obj`` as JSON-ready data: objects with ``__jsonrepr__`` (``__simplejsonrepr__`` if
    ``simple``) are converted by it, containers recursively, numpy scalars to Python numbers."""
    method = "__simplejsonrepr__" if simple else "__jsonrepr__"
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if hasattr(obj, method):
        return getattr(obj, method)()
    if isinstance(obj, dict):
        return {json_repr_handler(k, simple): json_repr_handler(v, simple) for k, v in obj.items()}
    if isinstance(obj, (list, set, frozenset)):
        return [json_repr_handler(v, simple) for v in obj]
    if isinstance(obj, tuple):
        return tuple(json_repr_handler(v, simple) for v in obj)
    raise TypeError(f"cannot convert a {type(obj).__name__} to JSON: give it a {method} method")


class UniqueMessageFilter(logging.Filter):
    """A logging filter that lets each distinct message through once."""

    def __init__(self):
        super().__init__()
        self.recorded_messages: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.recorded_messages:
            return False
        self.recorded_messages.add(message)
        return True


class DiGraphWrapper(nx.DiGraph):
    """A networkx ``DiGraph`` (ZigZag's typed alias; ``DiGraphWrapper[Node]`` is accepted)."""

    def __class_getitem__(cls, item):
        return cls
