"""Rewrite the option blocks ($defs.options, $defs.sweep_options) of workflow/schemas/config.schema.yaml from the option table.

    python tools/sync_config_schema.py

tests/unit/search/test_options_table.py fails when the schema and zigzag/search/options.py disagree.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from zigzag.search.options import options_json_schema, sweep_options_json_schema

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"
BEGIN = "  # Generated from the option table"
END = "  file_or_list:\n"


def option_block() -> str:
    blocks = {"options": options_json_schema(), "sweep_options": sweep_options_json_schema()}
    text = yaml.safe_dump(blocks, sort_keys=False, width=100)
    return "".join(f"  {line}\n" for line in text.splitlines())


def main() -> None:
    text = SCHEMA.read_text()
    start, end = text.index(BEGIN), text.index(END)
    header = (
        f"{BEGIN} zigzag/search/options.py by tools/sync_config_schema.py; do not edit by hand.\n"
    )
    SCHEMA.write_text(text[:start] + header + option_block() + text[end:])
    print(
        f"{SCHEMA}: $defs.options and $defs.sweep_options rewritten ({len(options_json_schema()['properties'])} options)"
    )


if __name__ == "__main__":
    main()
