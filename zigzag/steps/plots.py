"""The workflow's figure steps.

* :func:`plot_experiment`: from an experiment's ``results.json`` (written by ``sum``), its
  layers' energy and latency (``layers.<fmt>``) and loop nests (``loop_nests.txt``);
* :func:`plot_accelerator`: an accelerator's memory hierarchy, with sizes and bandwidths;
* :func:`plot_comparison`: from ``experiments.csv``, energy vs latency with one panel and one
  Pareto front per workload, plus ``pareto.csv`` (the non-dominated experiments of each workload).

matplotlib and pandas are imported inside the functions, so building the command line stays cheap.
"""

from __future__ import annotations

from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.atomic import write_text_atomic
from zigzag.plots.loop_nest import loop_nest_text
from zigzag.steps.parse import read_parsed
from zigzag.steps.pipeline import read_results
from zigzag.steps.specs import experiment_of

#: plot formats the report steps accept (matplotlib writes them without extra packages)
PLOT_FORMATS = ("png", "svg", "pdf")

#: the files plot_experiment writes, by kind (``{fmt}`` is the plot format)
EXPERIMENT_PLOTS = {"layers": "layers.{fmt}", "loop_nests": "loop_nests.txt"}


def _check_format(plot_format: str) -> str:
    fmt = plot_format.lower().lstrip(".")
    if fmt not in PLOT_FORMATS:
        raise InputError(
            "", "plot format", f"'{plot_format}' is not one of {', '.join(PLOT_FORMATS)}"
        )
    return fmt


def plot_experiment(
    results_json: str | Path, out_dir: str | Path, plot_format: str = "png"
) -> dict[str, Path]:
    """Write an experiment's per-layer figure and loop nests into ``out_dir``; returns {kind: path}."""
    from zigzag.plots.breakdowns import plot_layer_breakdowns

    fmt = _check_format(plot_format)
    out_dir = Path(out_dir)
    document, rows = read_results(results_json)
    name = experiment_of(document).name
    outputs = {
        kind: out_dir / pattern.format(fmt=fmt) for kind, pattern in EXPERIMENT_PLOTS.items()
    }
    if "failed" in document:  # the experiment did not run: its figure says why
        from zigzag.plots.common import plot_message

        reason = f"{document['failed']['step']}: {document['failed']['reason']}"
        plot_message(outputs["layers"], f"{name}: not run", reason)
        write_text_atomic(outputs["loop_nests"], f"not run: {reason}\n")
        return outputs
    if not rows:
        raise InputError(str(results_json), "layers", "no layer results to draw")
    results = [result for _, result in rows]
    plot_layer_breakdowns(
        results,
        outputs["layers"],
        title=f"{name}: energy and latency per layer on {results[0].accelerator_name}",
    )
    text = "".join(
        loop_nest_text(
            result, list(entry["spec"]["mapping"].get("memory_operand_links") or []) or None
        )
        for entry, result in rows
    )
    write_text_atomic(outputs["loop_nests"], text)
    return outputs


def plot_accelerator(accelerator: str | Path, out_path: str | Path) -> Path:
    """Draw the memory hierarchy of a parsed accelerator (JSON from ``parse_accelerator``) or of
    an accelerator YAML file."""
    from zigzag.plots.memory import plot_memory_hierarchy

    path = Path(accelerator)
    if path.suffix == ".json":
        document = read_parsed(path)
        if "failed" in document:  # parsing failed: the figure says why
            from zigzag.plots.common import plot_message

            return plot_message(out_path, "accelerator not parsed", document["failed"]["reason"])
        hardware = accelerator_from_dict(document["data"])
    else:
        from zigzag.io.loaders import load_accelerator

        hardware = load_accelerator(path)
    return plot_memory_hierarchy(hardware, out_path)


def plot_comparison(
    experiments_csv: str | Path, out_path: str | Path, pareto_csv: str | Path | None = None
) -> str:
    """Energy vs latency of all experiments, one panel and one Pareto front per workload.

    Writes the figure to ``out_path`` and the non-dominated experiments of each workload to
    ``pareto_csv`` (default: ``pareto.csv`` beside ``experiments_csv``). Returns a one-line description.
    """
    import pandas as pd

    from zigzag.plots.comparison import pareto_fronts, plot_pareto_per_workload

    experiments_csv = Path(experiments_csv)
    try:
        table = pd.read_csv(experiments_csv)
    except FileNotFoundError:
        raise InputError(str(experiments_csv), "", "file not found") from None
    if "status" in table.columns:  # a table where no experiment ran has no figure columns
        for column in ("energy_pJ", "latency_cycles"):
            if column not in table.columns:
                table[column] = float("nan")
    missing = [
        c
        for c in ("experiment", "workload", "energy_pJ", "latency_cycles")
        if c not in table.columns
    ]
    if missing:
        raise InputError(str(experiments_csv), "header", f"missing column(s) {', '.join(missing)}")
    pareto_csv = (
        Path(pareto_csv) if pareto_csv is not None else experiments_csv.parent / "pareto.csv"
    )
    not_run = table["energy_pJ"].isna()
    if (
        "status" in table.columns
    ):  # experiments that did not run are in the table, not in the fronts
        not_run |= table["status"].fillna("ok") != "ok"
    ran = table[~not_run]
    fronts = pareto_fronts(ran)
    write_text_atomic(pareto_csv, fronts.to_csv(index=False))
    if len(ran):
        plot_pareto_per_workload(ran, out_path)
    else:
        from zigzag.plots.common import plot_message

        plot_message(out_path, "energy vs latency", "no experiment ran")
    per_workload = "; ".join(
        f"{w}: {', '.join(map(str, g['experiment']))}"
        for w, g in fronts.groupby("workload", sort=False)
    )
    skipped = (
        f" ({int(not_run.sum())} did not run: {', '.join(map(str, table[not_run]['experiment']))})"
        if not_run.any()
        else ""
    )
    return f"{len(table)} experiments{skipped}, Pareto fronts per workload: {per_workload}"
