"""LLM workloads with some of their fields changed: the workload points of a sweep and the
overrides of ``zigzag run``.

A workload generated from a model configuration is a YAML document with an ``llm:`` section
(``*.llm.yaml``; see docs/reference/workload.md): ``model``, ``phase``, ``tokens``, ``context``,
``batch``, ``layers``, ``precision``. :func:`llm_document` reads it, sets the given fields and
returns the document, which the workload loader builds like the file itself (a model path
relative to the file is made absolute first). ``precision: 4`` sets the precision of every role.
"""

from __future__ import annotations

import copy
import itertools
import os
from pathlib import Path
from typing import Any

from zigzag.errors import InputError

#: the fields of an ``llm:`` section a sweep may vary (``precision.<role>`` too)
LLM_FIELDS = ("phase", "tokens", "context", "batch", "layers", "precision", "logits")
PRECISION_ROLES = ("weights", "activations", "kv_cache")


def is_llm_workload(workload: Any) -> bool:
    """Whether ``workload`` (a path or a document) is generated from a model configuration."""
    if isinstance(workload, dict):
        return isinstance(workload.get("llm"), dict)
    if not isinstance(workload, (str, Path)) or not str(workload).lower().endswith(
        (".yaml", ".yml")
    ):
        return False
    if str(workload).lower().endswith((".llm.yaml", ".llm.yml")):
        return True
    from zigzag.io.yaml_files import load_yaml

    document = load_yaml(workload)
    return isinstance(document, dict) and isinstance(document.get("llm"), dict)


def check_field(name: str, source: str) -> None:
    """A one-line error unless ``name`` is a field of an ``llm:`` section that may be changed."""
    head, _, role = name.partition(".")
    if head not in LLM_FIELDS or (role and (head != "precision" or role not in PRECISION_ROLES)):
        known = ", ".join(LLM_FIELDS + tuple(f"precision.{r}" for r in PRECISION_ROLES))
        raise InputError(source, name, f"not a workload field that can vary; use one of {known}")


def llm_document(workload: str | Path | dict, changes: dict, *, source: str = "workload") -> dict:
    """The LLM workload document of ``workload`` with ``changes`` (field -> value) applied."""
    if isinstance(workload, dict):
        document, folder = copy.deepcopy(workload), Path(".")
    else:
        from zigzag.io.yaml_files import load_yaml

        document, folder = load_yaml(workload), Path(workload).parent
        if not (isinstance(document, dict) and isinstance(document.get("llm"), dict)):
            raise InputError(
                str(workload),
                "llm",
                "not a workload generated from a model configuration; only "
                "such workloads (an llm: section) can change phase, context, "
                "batch or precision",
            )
    section = document["llm"]
    model = section.get("model")
    if isinstance(model, str) and not Path(model).is_absolute() and (folder / model).exists():
        section["model"] = os.path.normpath(folder / model)
    for name, value in changes.items():
        check_field(name, source)
        head, _, role = name.partition(".")
        if head == "precision":
            current = section.get("precision")
            current = dict(current) if isinstance(current, dict) else {}
            if role:
                current[role] = value
            elif isinstance(value, dict):
                current = dict(value)
            else:
                current = {r: value for r in PRECISION_ROLES}
            section["precision"] = current
        else:
            section[head] = value
    return document


def check_points(workload: str, axes: list, where: str) -> None:
    """Every workload point of ``axes`` on ``workload`` is a step its model can take (fields,
    precision, positions), checked before any variant runs: a one-line error naming the axis."""
    from zigzag.io.llm_workloads import check_llm_step

    names = [name for name, _ in axes]
    for values in itertools.product(*(v for _, v in axes)):
        changes = dict(zip(names, values))
        document = llm_document(workload, changes, source=f"{where}: workload_vary")
        try:
            check_llm_step(document, workload)
        except InputError as exc:
            field = str(exc.where or "").removeprefix("llm.")
            axis = next((n for n in names if n.partition(".")[0] == field.partition(".")[0]), None)
            place = f"workload_vary.{axis}" if axis else (exc.where or "workload_vary")
            point = " ".join(f"{k}={v}" for k, v in changes.items())
            raise InputError(where, place, f"at {point}: {exc.message}") from None
