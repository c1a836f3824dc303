"""Check that two result folders of the workflow hold the same numbers.

    python tools/compare_results.py results/slurm-proof/local results/slurm-proof/slurm

Compares every JSON, CSV and text output (tables, summaries, per-layer results, the content-keyed
cache) of the two folders: the same files, and in each the same content, numbers exactly equal.
Logs and figures are skipped; the folder's own path, where an output names it, is ignored, and
so are measured wall times (JSON values under a key in TIMINGS, e.g. an allocation search's
``search.seconds``).
Exits 1 and names the first differing files and values, else prints what it compared.
"""

import json
import sys
from pathlib import Path

COMPARED = {".json", ".csv", ".txt"}
SKIPPED_DIRS = {"logs", ".snakemake"}
TIMINGS = {"seconds"}


def outputs(root: Path) -> dict[str, Path]:
    """The compared files under root, by their path relative to it."""
    return {
        str(path.relative_to(root)): path
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and path.suffix in COMPARED
        and not SKIPPED_DIRS & set(path.relative_to(root).parts[:-1])
    }


def differences(a, b, where: str):
    """Yield (location, a, b) for each leaf where two parsed JSON documents differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted((set(a) | set(b)) - TIMINGS, key=str):
            yield from differences(a.get(key), b.get(key), f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{where}[{i}]")
    elif a != b or type(a) is not type(b):
        yield where, a, b


def count_numbers(document) -> int:
    if isinstance(document, dict):
        return sum(count_numbers(v) for v in document.values())
    if isinstance(document, list):
        return sum(count_numbers(v) for v in document)
    return isinstance(document, (int, float)) and not isinstance(document, bool)


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def main(first: str, second: str) -> int:
    roots = Path(first), Path(second)
    files = [outputs(root) for root in roots]
    problems = [
        f"only in {roots[i]}: {name}"
        for i in (0, 1)
        for name in sorted(set(files[i]) - set(files[1 - i]))
    ]
    numbers = 0
    for name in sorted(set(files[0]) & set(files[1])):
        texts = [files[i][name].read_text().replace(str(roots[i]), "<results>") for i in (0, 1)]
        if name.endswith(".json"):
            documents = [json.loads(text) for text in texts]
            numbers += count_numbers(documents[0])
            problems += [
                f"{name}: {loc} {x!r} != {y!r}" for loc, x, y in differences(*documents, "")
            ]
        else:
            numbers += sum(
                is_number(cell) for line in texts[0].splitlines() for cell in line.split(",")
            )
            if texts[0] != texts[1]:
                problems.append(f"{name}: contents differ")
    if not files[0]:
        problems.append(f"no outputs under {roots[0]}")
    for problem in problems[:20]:
        print(problem)
    if problems:
        print(f"{len(problems)} difference(s) between {roots[0]} and {roots[1]}")
        return 1
    print(f"identical: {len(files[0])} files ({numbers} numbers) under {roots[0]} and {roots[1]}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
