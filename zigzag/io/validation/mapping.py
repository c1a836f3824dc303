"""Validation of a mapping YAML document, and of a mapping against the accelerator it runs on."""

from __future__ import annotations

from typing import Any

from zigzag.errors import InputError
from zigzag.io.validation.schema import (
    UNROLLING_FORM,
    Field,
    Invalid,
    check_value,
    expect_top,
    run_check,
)


_MAPPING_OA_DIMS = ("D1", "D2", "D3", "D4")
_UNROLLINGS = Field(
    "list",
    what="a list of unrollings, e.g. ['K, 32']",
    item=Field("str", pattern=r"[A-Z]+\d*, \d+", form=UNROLLING_FORM),
)
_HINTS = Field(
    "list",
    what="a list of layer dimensions, e.g. [K, C]",
    item=Field(
        "str", pattern=r"[A-Z]+\d*", form="an upper-case layer dimension name, e.g. 'K' or 'D0'"
    ),
)
_DEFAULT_LINKS = {"O": "O", "I": "I1", "W": "I2"}

_MAPPING_ENTRY = Field(
    "dict",
    what="an entry with name and optional spatial_mapping, ...",
    keys={
        "name": Field("str", required=True, what="a layer name, an operator type or 'default'"),
        "spatial_mapping": Field(
            "dict", nullable=True, default=None, keys={dim: _UNROLLINGS for dim in _MAPPING_OA_DIMS}
        ),
        "memory_operand_links": Field(
            "dict",
            default=_DEFAULT_LINKS,
            keys={
                operand: Field(
                    "str", required=True, what="the memory operand it is stored as: I1, I2 or O"
                )
                for operand in ("O", "W", "I")
            },
        ),
        "spatial_mapping_hint": Field(
            "dict", default={}, keys={dim: _HINTS for dim in _MAPPING_OA_DIMS}
        ),
        "temporal_ordering": Field(
            "list",
            default=[],
            item=Field(
                "list",
                what="[<layer dim>, <size or '*'>]",
                items=(
                    Field("str", upper=True),
                    Field("int", minimum=1, star=True, what="a loop size of at least 1, or '*'"),
                ),
            ),
        ),
    },
)


def validate_mapping(data: Any, file: Any) -> list[dict]:
    """Check a mapping document (a list of entries, from `file`) and return it normalised."""
    return run_check(file, _validate_mapping, data)


def _validate_mapping(data: Any) -> list[dict]:
    expect_top(
        data,
        "list",
        "a list of mapping entries, each starting with '- name: <layer name, "
        "operator type or default>'",
    )
    entries = [check_value(raw, _MAPPING_ENTRY, _entry_label(i, raw)) for i, raw in enumerate(data)]
    if not any(entry["name"] == "default" for entry in entries):
        raise Invalid(
            "top level",
            "no entry is named 'default'; add an entry '- name: default' (used for "
            "every layer without an entry of its own)",
        )
    for i, entry in enumerate(entries):
        _check_entry(_entry_label(i, entry), entry)
    return entries


def _entry_label(index: int, entry: Any) -> str:
    """`mapping entry 'default'`, or `mapping entry [2]` when the name is unusable."""
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"mapping entry '{name}'" if isinstance(name, str) else f"mapping entry [{index}]"


def _check_entry(where: str, entry: dict) -> None:
    for oa_dim, unrollings in (entry["spatial_mapping"] or {}).items():
        for i, text in enumerate(unrollings):
            if int(text.split(", ")[1]) < 1:
                raise Invalid(
                    f"{where}.spatial_mapping.{oa_dim}[{i}]",
                    f"unrolling '{text}' has size 0; give a size of at least 1 or remove the entry",
                )
    linked: dict[str, str] = {}
    for layer_operand, memory_operand in entry["memory_operand_links"].items():
        if memory_operand in linked:
            raise Invalid(
                f"{where}.memory_operand_links.{layer_operand}",
                f"memory operand '{memory_operand}' "
                f"is already linked to {linked[memory_operand]}; link each layer operand to a "
                "different memory operand",
            )
        linked[memory_operand] = layer_operand


def check_mapping_fits_accelerator(
    mapping: list[dict], accelerator: dict, mapping_file: Any
) -> None:
    """Check a normalised mapping against a normalised accelerator.

    Every `spatial_mapping` key must be an OA dimension of the accelerator and every memory operand
    in `memory_operand_links` must be stored by one of its memories. Hints are not checked: hints for
    missing OA dimensions are ignored later.
    """
    oa_dims = accelerator["operational_array"]["dimensions"]
    stored = sorted(
        {op for memory in accelerator["memories"].values() for op in memory["operands"]}
    )
    name = accelerator["name"]
    for i, entry in enumerate(mapping):
        where = _entry_label(i, entry)
        for oa_dim in entry["spatial_mapping"] or {}:
            if oa_dim not in oa_dims:
                raise InputError(
                    mapping_file,
                    f"{where}.spatial_mapping.{oa_dim}",
                    f"accelerator '{name}' has no "
                    f"OA dimension {oa_dim} (it has {', '.join(oa_dims)}); remove this unrolling "
                    "or move it to one of those dimensions",
                )
        for layer_operand, memory_operand in entry["memory_operand_links"].items():
            if memory_operand not in stored:
                raise InputError(
                    mapping_file,
                    f"{where}.memory_operand_links.{layer_operand}",
                    f"memory operand '{memory_operand}' is not stored by any memory of accelerator "
                    f"'{name}' (stored: {', '.join(stored)}); link {layer_operand} to one of those",
                )


def oversized_unrollings(mapping: list[dict], accelerator: dict) -> list[str]:
    """One note per spatial unrolling factor larger than its array dimension (``K, 32`` on a
    16-wide ``D1``): as in ZigZag, such a factor is cut down to the dimension's size; the note
    says so (docs/reference/mapping.md)."""
    array = accelerator["operational_array"]
    sizes = dict(zip(array["dimensions"], array["sizes"]))
    notes = []
    for i, entry in enumerate(mapping):
        for oa_dim, unrollings in (entry.get("spatial_mapping") or {}).items():
            for item in unrollings if isinstance(unrollings, list) else [unrollings]:
                parts = item.split(",") if isinstance(item, str) else list(item)
                if len(parts) != 2 or oa_dim not in sizes:
                    continue
                dim, factor = str(parts[0]).strip(), str(parts[1]).strip()
                if factor.isdigit() and int(factor) > sizes[oa_dim]:
                    notes.append(
                        f"{_entry_label(i, entry)}.spatial_mapping.{oa_dim}: {dim} {factor} is "
                        f"larger than {oa_dim} ({sizes[oa_dim]} wide); cut down to "
                        f"{dim} {sizes[oa_dim]}, as ZigZag does"
                    )
    return notes
