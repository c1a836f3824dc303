"""The workflow's files that carry their own integrity (:mod:`zigzag.io.sealed`), checked when
the Snakefile loads: cached layer results and cost-table entries (content-keyed, shared by every
experiment), and the intermediate files a later step reads (parsed inputs, plans, an experiment's
layer jobs and the records of its chunks, its results, a hardware sweep's batches of points). A damaged one is removed so that the run computes
it again (``workflow/rules/common.smk``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

#: (folder pattern under the results folder or the cache, whether its files are named by their key)
_IN_RESULTS = ("*/plan.json", "*/results.json", "hardware_sweeps/*/points/*.json")
_IN_CACHE = (
    ("results/*.json", True),
    ("stream-cost/entries/*.json", True),
    ("parsed/*/*.json", False),
    ("layer-jobs/*.json", False),
    ("chunks/*/*.json", False),
)


def sealed_files(results: str | Path, cache: str | Path) -> Iterator[tuple[Path, str | None]]:
    """(path, the key it must hold or None) of every sealed file of a results folder and cache."""
    for pattern in _IN_RESULTS:
        for path in sorted(Path(results).glob(pattern)):
            yield path, None
    for pattern, keyed in _IN_CACHE:
        for path in sorted(Path(cache).glob(pattern)):
            yield path, path.stem if keyed else None


def is_dry_run(arguments: list[str]) -> bool:
    """Whether Snakemake's command line asks for a dry run (``-n``, ``-np``, ``--dry-run``)."""
    return any(
        a in ("--dry-run", "--dryrun")
        or (a.startswith("-") and not a.startswith("--") and a[1:].isalpha() and "n" in a)
        for a in arguments
    )
