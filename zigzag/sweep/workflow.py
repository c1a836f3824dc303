"""The workflow's side of hardware sweeps (config ``hardware_sweeps``, rules/hardware_sweep.smk).

One job per variant (all the sweep's workloads, so a parsed workload serves them all; every
layer goes through the shared per-layer cache), then one job per sweep for its tables and
figures. A variant's job reads a *point file* written when the Snakefile is read (its document,
parameters and the sweep's settings) and rewritten only when its content changes, so adding
variants to a finished sweep runs only the new variants' jobs (and the sweep's tables).
"""

from __future__ import annotations

import json
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.atomic import write_json_atomic
from zigzag.sweep.config import Constraint, Sweep, read_sweep
from zigzag.variants import Variant, VariantSpec

#: the fields of a Sweep a variant's job and the collect job need (the spec itself is not needed)
_SETTINGS = ("name", "workloads", "mapping", "spatial_mapping", "clock_ghz", "options", "workload_options", "kind",
             "base", "layer_stacks", "allocation_search")


def resolve_hardware_sweeps(config: dict) -> dict[str, tuple[Sweep, list[Variant]]]:
    """The config's hardware sweeps, checked and expanded: name -> (sweep, its variants)."""
    from zigzag.sweep.runner import variants_of

    sweeps = {}
    defaults = config.get("defaults") or {}
    for i, section in enumerate(config.get("hardware_sweeps") or []):
        name = section.get("name") if isinstance(section, dict) else None
        sweep = read_sweep(section, f"config: hardware_sweeps[{i}]", defaults=defaults)
        if name in sweeps:
            raise InputError("config", f"hardware_sweeps[{i}].name", f"'{name}' is used twice; name each sweep once")
        sweeps[sweep.name] = (sweep, variants_of(sweep))
    return sweeps


def settings(sweep: Sweep) -> dict:
    """A sweep's settings as JSON-ready data (read back by :func:`sweep_from_settings`)."""
    return {**{k: getattr(sweep, k) for k in _SETTINGS}, "workloads": list(sweep.workloads), "modes": list(sweep.modes),
            "constraints": [c.text for c in sweep.constraints], "in_seconds": [c.in_seconds for c in sweep.constraints],
            "source": sweep.spec.source, "varied": sweep.spec.varied_names}


def sweep_from_settings(data: dict) -> Sweep:
    """The Sweep of :func:`settings` (its spec keeps only the source and the varied names)."""
    from zigzag.variants.spec import Parameter

    spec = VariantSpec(base={}, base_name="", source=data["source"],
                       axes=tuple((Parameter(name, None),) for name in data["varied"]))
    constraints = tuple(Constraint(t, s) for t, s in zip(data["constraints"], data["in_seconds"]))
    return Sweep(data["name"], spec, tuple(data["workloads"]), data["mapping"], data["spatial_mapping"],
                 constraints, data["clock_ghz"], data["options"], data["workload_options"], data.get("kind", "single"),
                 data.get("base"), tuple(data.get("modes", ())), data.get("layer_stacks"),
                 data.get("allocation_search"))


def write_if_changed(path: Path, data: dict) -> str:
    """Write JSON only when its content changed (its time stamp then tells Snakemake what to rerun).
    Keys keep their order: the order of an accelerator's memories is its hierarchy."""
    text = json.dumps(data, indent=1, default=str) + "\n"
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(path)


def write_point_files(sweep: Sweep, variants: list[Variant], folder: str | Path) -> dict[str, str]:
    """One point file per variant (``<folder>/<sweep>/<variant>.json``); returns name -> path."""
    folder = Path(folder) / sweep.name
    # what the variant's rows depend on (not the constraints or figures: changing those reruns
    # only the sweep's collect job)
    common = {**settings(sweep), "constraints": [], "in_seconds": [], "varied": []}
    return {
        v.name: write_if_changed(folder / f"{v.name}.json", {
            "settings": common,
            "variant": {"name": v.name, "id": v.id, "parameters": v.parameters, "labels": v.labels,
                        "document": v.document, "problem": v.problem, "aliases": list(v.aliases)},
        })
        for v in variants
    }


def write_sweep_settings(sweep: Sweep, folder: str | Path) -> str:
    """The sweep's settings file (``<folder>/<sweep>.json``), read by its collect job."""
    return write_if_changed(Path(folder) / f"{sweep.name}.json", settings(sweep))


def evaluate_point_file(point_file: str | Path, cache: str | Path, output: str | Path) -> list[dict]:
    """A variant's job: its rows on every workload of the sweep, written to ``output``."""
    from zigzag.sweep.runner import evaluate_points

    data = json.loads(Path(point_file).read_text())
    sweep = sweep_from_settings(data["settings"])
    v = data["variant"]
    variant = Variant(v["name"], v["id"], v["parameters"], v["labels"], v["document"], v["problem"], tuple(v["aliases"]))
    rows = evaluate_points(sweep, [variant], cache)
    write_json_atomic(output, {"rows": rows})
    return rows


def collect_points(settings_file: str | Path, point_results: list[str | Path], output: str | Path, *,
                   plot_format: str = "png", float_format: str = "%.10g") -> list[dict]:
    """The sweep's job: tables and figures of all its variants' rows."""
    from zigzag.sweep.runner import collect

    data = json.loads(Path(settings_file).read_text())
    sweep = sweep_from_settings(data)
    rows = [row for path in point_results for row in json.loads(Path(path).read_text())["rows"]]
    return collect(sweep, rows, output, plot_format=plot_format, float_format=float_format)


def plot_files(sweep: Sweep, plot_format: str) -> list[str]:
    """The figure files (relative to the sweep's folder) the collect job writes."""
    import re

    return [f"plots/pareto.{plot_format}"] + [
        f"plots/vs_{re.sub(r'[^A-Za-z0-9_.+-]', '_', p)}.{plot_format}" for p in sweep.spec.varied_names]
