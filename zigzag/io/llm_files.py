"""The files an LLM workload file depends on, found without importing the workload model (the workflow
asks at every start)."""

from __future__ import annotations

from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.yaml_files import load_yaml


def model_files(workload: str | Path) -> list[str]:
    """The model configuration file an LLM workload file names (a path relative to it), or none: the
    workflow re-parses the workload when that file changes. Other workload files give none (only
    ``*.llm.yaml`` files and small YAML files are read)."""
    path = Path(workload)
    name = path.name.lower()
    small_yaml = name.endswith((".yaml", ".yml")) and path.is_file() and path.stat().st_size < 4096
    if not (name.endswith((".llm.yaml", ".llm.yml")) or small_yaml):
        return []
    try:
        data = load_yaml(path)
    except InputError:
        return []  # reported by the parse step
    model = data.get("llm", {}).get("model") if isinstance(data, dict) and isinstance(data.get("llm"), dict) else None
    if not isinstance(model, str) or not ("/" in model or model.endswith((".json", ".yaml", ".yml"))):
        return []
    model_path = Path(model) if Path(model).is_absolute() else path.parent / model
    return [str(model_path)] if model_path.is_file() else []
