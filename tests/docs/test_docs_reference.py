"""The file-format reference (docs/reference/*.md) and the validators accept the same fields.

Every field a validator accepts has a row in a reference table, and every row names a field a
validator accepts. The accepted fields are read from the validators' own schemas: the `Field`
trees of the accelerator (both memory formats), workload and mapping validators, the key lists of
the multi-core accelerator reader and of the multi-core mapping reader, and the workflow config's
JSON schema, generated from its models (zigzag/config): every field of the models (config.yaml's
keys, its sweeps' and hardware sweeps' keys) has a row, and every documented config key is a field. A field is written as a dotted path: `memories.<name>.ports[].allocation`, with
`<...>` for a name the user chooses and `[]` for the items of a list (`[].id` is the `id` of every
layer of a workload file).

Reference tables are the Markdown tables of every page under docs/reference/ whose header starts
with "field" (or "path", "key"); the first cell of each row is the path in backticks.
Rows are collected across all pages, so a page may document the fields it introduces.
"""

from __future__ import annotations

import re

import jsonschema
import yaml

from zigzag.io import stream_hardware
from zigzag.io.legacy_hardware import _LEGACY_MEMORY
from zigzag.io.llm_workloads import llm_section_schema, read_llm_section
from zigzag.io.stream_connectivity import CONNECTION_KEYS
from zigzag.io.validation import validate_accelerator, validate_mapping, validate_workload
from zigzag.io.validation.accelerator_fields import ACCELERATOR
from zigzag.io.validation.mapping import _MAPPING_ENTRY
from zigzag.io.validation.schema import Field
from zigzag.io.validation.workload import _LAYER
from zigzag.multicore import mapping as stream_mapping
from support import REPO
from zigzag.config import load_config
from zigzag.config.schema import config_schema

REFERENCE = REPO / "docs" / "reference"


def join(prefix: str, key: str) -> str:
    """`prefix.key`; `[].key` for the items of a top-level list."""
    return f"{prefix}.{key}" if prefix else key


def field_paths(spec: Field, prefix: str) -> set[str]:
    """Every path under `prefix` that the `Field` tree `spec` accepts (containers included)."""
    paths: set[str] = set()
    if spec.kind == "dict" and spec.keys is not None:
        for key, sub in spec.keys.items():
            path = join(prefix, key)
            paths.add(path)
            paths |= field_paths(sub, path)
    elif spec.kind == "named" and spec.value is not None:
        path = join(prefix, "<name>")
        if spec.value.kind in ("dict", "named", "list"):
            paths |= field_paths(spec.value, path)
        else:
            paths.add(path)
    elif spec.kind == "list" and spec.item is not None:
        paths |= field_paths(spec.item, f"{prefix}[]")
    return paths


def json_schema_paths(node: dict, prefix: str, defs: dict) -> set[str]:
    """Every path under `prefix` that a JSON-schema node names (properties, items, $ref, allOf ...)."""
    paths: set[str] = set()
    if "$ref" in node:  # a JSON pointer into $defs, e.g. #/$defs/options/properties/opt
        target = {"$defs": defs}
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        paths |= json_schema_paths(target, prefix, defs)
    for combined in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(combined, []):
            paths |= json_schema_paths(sub, prefix, defs)
    for key, sub in node.get("properties", {}).items():
        path = join(prefix, key)
        paths.add(path)
        paths |= json_schema_paths(sub, path, defs)
    if isinstance(node.get("additionalProperties"), dict):  # keys the user chooses
        path = join(prefix, "<name>")
        paths.add(path)
        paths |= json_schema_paths(node["additionalProperties"], path, defs)
    if isinstance(node.get("items"), dict):
        paths |= json_schema_paths(node["items"], f"{prefix}[]", defs)
    return paths


def json_schema_defaults(node: dict, prefix: str, defs: dict) -> dict[str, object]:
    """Path -> default of every field of a JSON-schema node that has one (as json_schema_paths)."""
    found: dict[str, object] = {}
    if "$ref" in node:
        target = {"$defs": defs}
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        found |= json_schema_defaults(target, prefix, defs)
    for combined in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(combined, []):
            found |= json_schema_defaults(sub, prefix, defs)
    for key, sub in node.get("properties", {}).items():
        path = join(prefix, key)
        if sub.get("default") is not None:
            found[path] = sub["default"]
        found |= json_schema_defaults(sub, path, defs)
    if isinstance(node.get("items"), dict):
        found |= json_schema_defaults(node["items"], f"{prefix}[]", defs)
    return found


def multicore_accelerator_paths() -> set[str]:
    """The multi-core accelerator file: Stream's format with `cores`, the mesh shorthand, the `graph` format."""
    paths = set(stream_hardware._TOP_KEYS) | set(stream_hardware._GRAPH_TOP_KEYS)
    paths |= {"cores.<id>", "cores[]", "core_connectivity[]", "core_memory_sharing[]"}
    paths |= field_paths(stream_hardware._MESH, "mesh") | field_paths(
        stream_hardware._GRAPH, "graph"
    )
    paths |= {f"core_connectivity[].{key}" for key in CONNECTION_KEYS}
    return paths


def multicore_mapping_paths() -> set[str]:
    """The multi-core mapping file: a list of entries with the reader's known fields."""
    paths = {f"[].{key}" for key in stream_mapping.KNOWN_FIELDS}
    paths |= {f"[].spatial_mapping.{dim}" for dim in stream_mapping.OA_DIMS}
    paths |= {f"[].memory_operand_links.{op}" for op in stream_mapping.STREAM_MEMORY_OPERAND_LINKS}
    return paths


def accepted_paths() -> set[str]:
    """The union of the fields every input format accepts."""
    schema = config_schema()  # generated from the config's models (zigzag/config)
    return (
        field_paths(ACCELERATOR, "")
        | field_paths(_LEGACY_MEMORY, "memories.<name>")
        | field_paths(_LAYER, "[]")
        | field_paths(_MAPPING_ENTRY, "[]")
        | multicore_accelerator_paths()
        | multicore_mapping_paths()
        | {
            path  # the alias's fields are those of multicore_experiments (its one row says so)
            for path in json_schema_paths(schema, "", schema.get("$defs", {}))
            if not path.startswith("stream_experiments[]")
        }
        | field_paths(llm_section_schema(), "llm")
    )


_PLACEHOLDER = re.compile(r"<[^>]*>")


#: config sections read under an older name too: the alias's fields are those of the section
ALIASES = {"stream_experiments[]": "multicore_experiments[]"}


def normalise(path: str) -> str:
    """Any `<...>` placeholder stands for any user-chosen name; an alias's fields are its section's."""
    for alias, section in ALIASES.items():
        if path.startswith(alias):
            path = section + path.removeprefix(alias)
    return _PLACEHOLDER.sub("<>", path)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def reference_rows(cell: int | None = None) -> dict[str, list[str]]:
    """Documented path -> the pages documenting it (or, with ``cell``, the text of that column of
    its rows), from every reference table of docs/reference/."""
    rows: dict[str, list[str]] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        lines = page.read_text().splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].lstrip().startswith("|"):
                i += 1
                continue
            table = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                table.append(lines[i])
                i += 1
            header = [cell.lower() for cell in _cells(table[0])]
            if header[0] not in ("field", "path", "key"):
                continue
            for line in table[2:]:
                first = _cells(line)[0]
                match = re.fullmatch(r"`([^`]+)`", first)
                assert match, (
                    f"{page.name}: reference row {line!r} does not start with a `dotted.path`"
                )
                value = page.name if cell is None else _cells(line)[cell]
                rows.setdefault(match.group(1), []).append(value)
    return rows


def test_reference_tables_exist():
    assert len(reference_rows()) > 100


def test_every_accepted_field_is_documented():
    documented = {normalise(path) for path in reference_rows()}
    missing = sorted(path for path in accepted_paths() if normalise(path) not in documented)
    assert not missing, f"fields accepted but not documented in docs/reference/*.md: {missing}"


def test_every_documented_field_is_accepted():
    accepted = {normalise(path) for path in accepted_paths()}
    unknown = sorted(
        f"{path} ({', '.join(pages)})"
        for path, pages in reference_rows().items()
        if normalise(path) not in accepted
    )
    assert not unknown, f"documented fields that no validator accepts: {unknown}"


def test_documented_config_defaults_are_the_models():
    """A default written as one value (`6`, `latency`, `[lbl]`) in a config table is the model's."""
    schema = config_schema()
    defaults = json_schema_defaults(schema, "", schema["$defs"])
    wrong = []
    for path, cells in reference_rows(cell=2).items():
        model = defaults.get(path)
        for text in cells:
            match = re.fullmatch(r"`([^`]+)`", text)
            if model is None or match is None:
                continue
            try:
                written = yaml.safe_load(match.group(1))
            except yaml.YAMLError:  # `%.10g`: text
                written = match.group(1)
            if written != model and not (isinstance(model, float) and written == float(model)):
                wrong.append(f"{path}: documented {text}, the models say {model!r}")
    assert not wrong, wrong
    assert len(defaults) > 60


def yaml_examples() -> list[tuple[str, object]]:
    """(page:line, loaded document) of every ```yaml block of the reference pages."""
    examples = []
    for page in sorted(REFERENCE.glob("*.md")):
        for match in re.finditer(r"^```yaml\n(.*?)^```", page.read_text(), re.S | re.M):
            line = page.read_text()[: match.start()].count("\n") + 1
            examples.append((f"{page.name}:{line}", yaml.safe_load(match.group(1))))
    return examples


def test_yaml_examples_of_the_reference_are_valid():
    """Each example passes the validator of its format (multi-core top files name core files; skipped)."""
    schema = config_schema()
    checked = 0
    for where, document in yaml_examples():
        if isinstance(document, dict) and "memories" in document:
            validate_accelerator(document, where)
        elif isinstance(document, dict) and "llm" in document:
            read_llm_section(document, where)
        elif isinstance(document, dict) and (
            {"experiments", "sweeps", "multicore_experiments", "stream_experiments"} & set(document)
        ):
            jsonschema.validate(document, schema)
            load_config(document, where)
        elif isinstance(document, list) and document and "equation" in document[0]:
            validate_workload(document, where)
        elif (
            isinstance(document, list)
            and document
            and {"core_allocation", "inter_core_tiling"} & set(document[0])
        ):
            stream_mapping.parse_stream_mapping(document, where)
        elif isinstance(document, list):
            validate_mapping(document, where)
        else:
            continue
        checked += 1
    assert checked >= 5


if __name__ == "__main__":  # print the accepted paths, to write the tables from
    print("\n".join(sorted(accepted_paths())))


def field_minima(spec: Field, prefix: str) -> dict[str, int]:
    """Path -> the smallest value a number field accepts (its `minimum`), for every such field."""
    found: dict[str, int] = {}
    if spec.kind in ("int", "float") and spec.minimum is not None:
        found[prefix] = spec.minimum
    if spec.kind == "dict" and spec.keys is not None:
        for key, sub in spec.keys.items():
            found |= field_minima(sub, join(prefix, key))
    elif spec.kind == "named" and spec.value is not None:
        found |= field_minima(spec.value, join(prefix, "<name>"))
    elif spec.kind == "list" and spec.item is not None:
        found |= field_minima(spec.item, f"{prefix}[]")
    return found


def reference_types() -> dict[str, list[str]]:
    """Documented path -> the type cells (second column) of its reference rows."""
    types: dict[str, list[str]] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        for line in page.read_text().splitlines():
            cells = _cells(line) if line.lstrip().startswith("| `") else []
            if len(cells) > 1 and re.fullmatch(r"`([^`]+)`", cells[0]):
                types.setdefault(normalise(cells[0].strip("`")), []).append(cells[1])
    return types


def test_the_reference_states_every_lower_bound():
    """A number field with a lower bound (no negative cost, area or size) says so in every row documenting it."""
    minima = (
        field_minima(ACCELERATOR, "")
        | field_minima(_LEGACY_MEMORY, "memories.<name>")
        | field_minima(stream_hardware._MESH, "mesh")
        | field_minima(stream_hardware._GRAPH, "graph")
    )
    assert minima["memories.<name>.r_cost"] == 0 and minima["operational_array.unit_energy"] == 0
    types = reference_types()
    unstated = sorted(
        f"{path} (≥ {least}): {cell!r}"
        for path, least in minima.items()
        for cell in types.get(normalise(path), [])
        if f"≥ {least}" not in cell and "position" not in cell
    )
    assert not unstated, f"reference rows that do not state the field's lower bound: {unstated}"
