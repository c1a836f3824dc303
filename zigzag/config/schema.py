"""The workflow config's JSON schema, generated from the models and shipped beside them.

``config.schema.json`` (in this package) is what editors and other tools read, and what the
config check reads to name unknown keys; tests/unit/config/test_schema.py fails when it differs
from the models. Rewrite it after changing a model::

    python -m zigzag.config.schema
"""

from __future__ import annotations

import json

from zigzag.config.check import SCHEMA_FILE
from zigzag.config.models import EXPERIMENT_SECTIONS, MULTICORE_ALIAS, WorkflowConfig


def config_schema() -> dict:
    """The JSON schema (draft 2020-12) of :class:`WorkflowConfig`: every section closed (an
    unknown key is an error), and at least one of the experiment sections required."""
    schema = _untitled(WorkflowConfig.model_json_schema())
    properties = schema["properties"]
    properties[MULTICORE_ALIAS] = {
        **properties["multicore_experiments"],
        "description": "the older name of multicore_experiments",
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "zigzag-flow workflow config",
        "description": "Generated from zigzag/config/models.py by `python -m zigzag.config.schema`; "
        "do not edit by hand. See docs/reference/workflow-config.md.",
        **{k: v for k, v in schema.items() if k not in ("title", "description")},
        "anyOf": [{"required": [section]} for section in EXPERIMENT_SECTIONS],
    }


def _untitled(node):
    """``node`` without pydantic's ``title`` of every field (its name, capitalised)."""
    if isinstance(node, list):
        return [_untitled(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: value if key in ("default", "enum", "const") else _untitled(value)
        for key, value in node.items()
        if not (key == "title" and isinstance(value, str))
    }


def schema_text() -> str:
    """The shipped file's content."""
    return json.dumps(config_schema(), indent=1) + "\n"


def main() -> None:
    SCHEMA_FILE.write_text(schema_text())
    print(f"{SCHEMA_FILE}: written")


if __name__ == "__main__":
    main()
