"""Atomic file writes: a reader (or a restarted run) never sees a half-written file."""

from __future__ import annotations

import json
import os
from itertools import count
from pathlib import Path

_COUNTER = count()


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a name of its own per process and call (no tempfile import: it costs a layer job ~10 ms)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{next(_COUNTER)}.tmp")
    try:
        with open(tmp, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(path: str | Path, data) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=False) + "\n")
