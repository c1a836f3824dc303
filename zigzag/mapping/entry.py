"""Mapping-file entries: what the user fixes or suggests for the layers that use an entry."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

DEFAULT_MEMORY_OPERAND_LINKS = {"O": "O", "I": "I1", "W": "I2"}


@dataclass(frozen=True, eq=False)
class MappingEntry:
    """One entry of a mapping file (``name`` = layer name, operator type or ``default``).

    ``spatial_mapping`` is ``None`` when nothing is fixed; otherwise ``{OA dim: ((layer dim,
    factor), ...)}`` (several pairs on one OA dim = mixed unrolling). ``temporal_ordering`` is
    innermost first; a size of ``None`` stands for ``"*"`` (any size).
    """

    name: str
    spatial_mapping: dict[str, tuple[tuple[str, int], ...]] | None = None
    memory_operand_links: dict[str, str] = field(
        default_factory=lambda: dict(DEFAULT_MEMORY_OPERAND_LINKS)
    )
    spatial_mapping_hint: dict[str, tuple[str, ...]] = field(default_factory=dict)
    temporal_ordering: tuple[tuple[str, int | None], ...] = ()

    @classmethod
    def from_dict(cls, data: dict) -> "MappingEntry":
        """Build from a validated, normalised mapping-file entry."""
        spatial = data.get("spatial_mapping")
        return cls(
            name=data["name"],
            spatial_mapping=None
            if spatial is None
            else {oa: tuple(_pair(text) for text in items) for oa, items in spatial.items()},
            memory_operand_links=dict(
                data.get("memory_operand_links") or DEFAULT_MEMORY_OPERAND_LINKS
            ),
            spatial_mapping_hint={
                oa: tuple(dict.fromkeys(d.upper() for d in dims))
                for oa, dims in (data.get("spatial_mapping_hint") or {}).items()
            },
            temporal_ordering=tuple(
                (
                    str(dim).upper(),
                    size if isinstance(size, int) and not isinstance(size, bool) else None,
                )
                for dim, size in (data.get("temporal_ordering") or [])
            ),
        )

    def to_dict(self) -> dict:
        """The mapping-file form of this entry."""
        data: dict = {"name": self.name}
        if self.spatial_mapping is not None:
            data["spatial_mapping"] = {
                oa: [f"{d}, {f}" for d, f in pairs] for oa, pairs in self.spatial_mapping.items()
            }
        data["memory_operand_links"] = dict(self.memory_operand_links)
        if self.spatial_mapping_hint:
            data["spatial_mapping_hint"] = {
                oa: list(d) for oa, d in self.spatial_mapping_hint.items()
            }
        if self.temporal_ordering:
            data["temporal_ordering"] = [
                [d, "*" if s is None else s] for d, s in self.temporal_ordering
            ]
        return data


def _pair(text: str) -> tuple[str, int]:
    dim, factor = (part.strip() for part in text.split(","))
    return dim.upper(), int(factor)


def select_entry(entries: list[MappingEntry], name: str, operator_type: str) -> MappingEntry:
    """The entry for a layer: by layer name, else by operator type, else ``default``."""
    for key in (name, operator_type, "default"):
        for entry in entries:
            if entry.name == key:
                return entry
    raise LookupError(f"no mapping entry named '{name}', '{operator_type}' or 'default'")


#: operator type names that ZigZag's and Stream's own mapping files use besides ONNX's
GENERIC_OPERATOR_TYPES = frozenset({"Pooling", "Pool"})


def unmatched_entry_warnings(entry_names, node_names, operator_types) -> list[str]:
    """A warning line for every mapping entry that names no node and no operator type of the
    workload (nor any other ONNX operator type): no layer can use it, a typo most likely. Each
    line names the closest node names."""
    nodes = list(dict.fromkeys(node_names))
    types = {t.lower() for t in operator_types}
    candidates = [
        n
        for n in entry_names
        if n != "default"
        and n not in nodes
        and n.lower() not in types
        and n not in GENERIC_OPERATOR_TYPES
    ]
    if not candidates:
        return []
    known_types = _onnx_operator_types()
    lines = []
    for name in candidates:
        if name in known_types:
            continue
        close = difflib.get_close_matches(name, nodes, n=3, cutoff=0.6)
        hint = (
            f"closest layer names: {', '.join(repr(c) for c in close)}"
            if close
            else "no layer has a similar name"
        )
        lines.append(
            f"mapping entry '{name}' names no layer and no operator type of the workload, so it is "
            f"not used; {hint}"
        )
    return lines


def _onnx_operator_types() -> frozenset[str]:
    import onnx.defs

    return frozenset(schema.name for schema in onnx.defs.get_all_schemas())
