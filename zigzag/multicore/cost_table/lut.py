"""The cost table as one JSON file (Stream's ``cost_lut_path``): its entries by key and the
(CN, core id) pairs that used them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping

from zigzag.errors import InputError
from zigzag.io.atomic import write_json_atomic
from zigzag.multicore.cost_table.entries import CostEntry, NodeKey
from zigzag.multicore.cost_table.jobs import STREAM_COST_VERSION


LUT_FORMAT = "zigzag-flow stream cost table"


def write_lut(
    path: str | Path,
    entries: Iterable[CostEntry],
    pairs: Mapping[tuple[NodeKey, int], str] | None = None,
) -> None:
    """All ``entries`` as one JSON file, keyed by content, with the (CN, core id) pairs that used
    them (``pairs``: pair -> key) for readers that look entries up by CN and core."""
    write_json_atomic(
        path,
        {
            "format": LUT_FORMAT,
            "version": STREAM_COST_VERSION,
            "entries": {entry.key: entry.to_dict() for entry in entries},
            "pairs": [
                {"node": node.to_dict(), "core": core_id, "key": key}
                for (node, core_id), key in (pairs or {}).items()
            ],
        },
    )


def read_lut(path: str | Path) -> dict[str, CostEntry]:
    """Entries of a one-file cost table, by key."""
    data = _lut_data(path)
    return {key: CostEntry.from_dict(entry) for key, entry in data["entries"].items()}


def read_lut_pairs(path: str | Path) -> dict[tuple[NodeKey, int], str]:
    """The (CN, core id) -> entry key pairs a one-file cost table records (none in older files)."""
    data = _lut_data(path)
    return {(NodeKey.from_dict(p["node"]), int(p["core"])): p["key"] for p in data.get("pairs", [])}


def _lut_data(path: str | Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(
            path, None, f"cannot read the cost table ({exc}); delete it to rebuild it"
        ) from None
    if not isinstance(data, dict) or data.get("format") != LUT_FORMAT:
        raise InputError(
            path,
            "format",
            f"not a cost table written by zigzag-flow (expected format '{LUT_FORMAT}'); "
            "give another cost_lut_path or delete the file",
        )
    return data
