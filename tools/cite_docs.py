"""Rewrite citations of outside specification files and issue numbers into citations of our docs.

    python tools/cite_docs.py [--check]

The code's comments and docstrings once cited sections of specification files that are not in
the repository (``search.md §A.1``, ``spec/stream.md §13``, a bare ``§4.4`` under a module that
cited ``imc.md``, ``search.md section F``) and issue numbers (``issue #8``). This script replaces
each citation of a specification section with the page and section of docs/ that explains the
same thing (``docs/models/mapping-search.md#spatial-mappings``) and drops issue numbers. It is
idempotent and can be rerun after merges. ``--check`` only lists what it would change and exits
with status 1 if anything is left; tests/docs/test_docs_citations.py runs the same search.

Scanned: zigzag/, workflow/, Snakefile, tests/ (not tests/data/, whose provenance notes name the
files their data were copied from), benchmarks/, tools/.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCANNED = ("zigzag", "workflow", "Snakefile", "tests", "benchmarks", "tools")
SKIPPED = (
    "tests/data/",
    "tests/docs/test_docs_citations.py",
)  # the test holds examples of citations
SUFFIXES = {".py", ".smk", ".yaml", ".yml", ".sh", ".md", ".txt", ".toml", ".cfg", ""}

MODELS = "docs/models"
REFERENCE = "docs/reference"
TUTORIALS = "docs/tutorials"

# specification file -> {first section key: docs page with its anchor}; "" is the whole file.
SECTIONS: dict[str, dict[str, str]] = {
    "search.md": {
        "": f"{MODELS}/mapping-search.md",
        "A": f"{MODELS}/mapping-search.md#spatial-mappings",
        "B": f"{MODELS}/mapping-search.md#loma-loop-orders-and-memory-allocation",
        "C": f"{MODELS}/mapping-search.md#salsa",
        "D": f"{MODELS}/mapping-search.md#user-temporal-ordering",
        "E": f"{MODELS}/mapping-search.md#keeping-the-best",
        "F": f"{MODELS}/mapping-search.md#inter-layer-data-locality",
        "G": f"{MODELS}/mapping-search.md#outputs",
    },
    "cost-model.md": {
        "": f"{MODELS}/cost-model.md",
        "2": f"{MODELS}/cost-model.md#layers-and-operands",
        "3": f"{MODELS}/cost-model.md#memory-levels",
        "4": f"{MODELS}/cost-model.md#spatial-mapping",
        "5": f"{MODELS}/cost-model.md#temporal-mapping",
        "6": f"{MODELS}/cost-model.md#data-held-per-level",
        "7": f"{MODELS}/cost-model.md#data-movement",
        "8": f"{MODELS}/cost-model.md#energy",
        "9": f"{MODELS}/cost-model.md#latency",
        "10": f"{MODELS}/cost-model.md#area",
        "11": f"{MODELS}/cost-model.md#results-and-network-sums",
    },
    "imc.md": {
        "": f"{MODELS}/imc.md",
        "1": f"{MODELS}/imc.md#what-changes-for-imc",
        "2": f"{MODELS}/imc.md#array-geometry",
        "3": f"{MODELS}/imc.md#technology-constants",
        "4": f"{MODELS}/imc.md#converters",
        "5": f"{MODELS}/imc.md#area",
        "6": f"{MODELS}/imc.md#clock-period",
        "7": f"{MODELS}/imc.md#peak-figures",
        "8": f"{MODELS}/imc.md#array-energy-per-layer",
        "9": f"{MODELS}/imc.md#energy-latency-and-area-of-a-layer",
        "10": f"{MODELS}/imc.md#energy-latency-and-area-of-a-layer",
        "12": f"{MODELS}/imc.md#quirks-kept",
    },
    "stream.md": {
        "": f"{MODELS}/multi-core.md",
        "1": f"{MODELS}/multi-core.md#hardware",
        "1.1": f"{REFERENCE}/multicore-accelerator.md",
        "1.2": f"{REFERENCE}/multicore-accelerator.md#where-core-files-are-found",
        "1.3": f"{REFERENCE}/accelerator.md#the-older-zigzag-380-memory-format",
        "2": f"{REFERENCE}/multicore-mapping.md",
        "3": f"{MODELS}/multi-core.md#onnx-workloads",
        "4": f"{MODELS}/multi-core.md#computation-nodes",
        "5": f"{MODELS}/multi-core.md#dependencies",
        "6": f"{MODELS}/multi-core.md#cost-table",
        "7": f"{MODELS}/multi-core.md#scheduling-order",
        "8": f"{MODELS}/multi-core.md#scheduler",
        "9": f"{MODELS}/multi-core.md#energy-terms",
        "10": f"{MODELS}/multi-core.md#allocation-search",
        "11": f"{TUTORIALS}/multi-core.md",
        "12": f"{TUTORIALS}/multi-core.md#8-streams-stage-api-and-one-call-api",
        "13": f"{MODELS}/multi-core.md#streams-quirks-kept",
    },
    "onnx.md": {"": f"{REFERENCE}/workload.md#onnx-models"},
    "inputs.md": {
        "": f"{REFERENCE}/accelerator.md",
        "1": f"{REFERENCE}/accelerator.md",
        "2": f"{REFERENCE}/workload.md",
        "3": f"{REFERENCE}/mapping.md",
    },
    "stages.md": {"": f"{TUTORIALS}/custom-stage.md"},
}
SPEC_FILES = "|".join(re.escape(name[:-3]) for name in SECTIONS)

# Phrases whose meaning is where figures came from: said without naming the file.
PROVENANCE = {
    "search.md section F (test_with_exploit_data_locality of the reference)": "the reference's test_with_exploit_data_locality",
    "reference/expected.yaml and search.md section F": "reference/expected.yaml and the reference's data-locality test",
    "spec/search.md section F (rounded to 0.01 pJ)": "the reference's data-locality test (rounded to 0.01 pJ)",
    "search.md section F (given to 0.01 pJ)": "the reference's data-locality test (given to 0.01 pJ)",
    'so are its quirks (spec §13, "Q1".."Q24")': "so are its quirks",
    "implements one concept of the spec and says which section": "implements one concept of that page and says which section",
    "The spec's loop-nest example (search.md §G.4: resnet18 layer 2 on tpu_like)": "The loop-nest example of search.md §G.4 (resnet18 layer 2 on tpu_like)",
}

# a file name inside one of our docs paths (docs/models/mapping-search.md) is not a specification file
_NOT_DOCS = r"(?<![\w-])(?<!docs/models/)(?<!docs/reference/)(?<!docs/tutorials/)"
_SECTION = r"(?:§\s?)?(?:[A-G](?:\.\d+)*|\d+(?:\.\d+)*|Q\d+)\b"
_MORE = rf"(?:\s?[-–]\s?{_SECTION}|,?\s(?:and\s)?(?:the static-size part of\s)?§?(?:[A-G](?:\.\d+)+|\d+(?:\.\d+)+)\b)*"
# `spec search.md §A.1`, ``spec/stream.md`` §13, search.md section F, imc.md\n    §8 ...
CITATION = re.compile(
    rf"(?:\b[Ss]pec(?:ification)?:?\s+|\bspec/|\bshared/spec/)?(?:``)?(?:spec/)?{_NOT_DOCS}(?P<file>{SPEC_FILES})\.md(?:``)?"
    rf"(?:(?P<gap>\s+(?:#\s*)?)(?:section\s+)?(?P<section>{_SECTION}){_MORE})?"
)
# a bare `§4.4`, `(§5)`, `spec §12`, `§4–§5`: the file comes from the context
BARE = re.compile(
    r"(?:\bspec\s+)?§\s?(?P<section>[A-G](?:\.\d+)*|\d+(?:\.\d+)*)\b(?:\s?[-–]\s?§?(?:[A-G]?\d*(?:\.\d+)*)\b)*"
)
ISSUE = re.compile(
    r"\s?\(issues? #\d+(?:, #\d+)*(?:, point \d+)?\)|issues? #\d+(?:, #\d+)*(?:, point \d+)?,\s?"
)
# the specification's numbered quirks ("Q13"): the comment says what the quirk is, the label goes
QUIRK_LABELS = (
    (re.compile(r"\s?\((?:quirk )?Q\d+(?:, Q\d+)*\)"), ""),
    (re.compile(r",\s?(?:quirk )?Q\d+(?:, Q\d+)*\b"), ""),
    (re.compile(r"\bQuirk Q\d+:"), "A reference quirk:"),
    (re.compile(r"\bquirk Q\d+\b"), "a reference quirk"),
    (re.compile(r"\bQ\d+(?:, Q\d+)*[:;]\s"), ""),
    (re.compile(r"\s?#\s?Q\d+$", re.M), ""),
)
# what counts as left over: a section sign, a specification file name, an issue number
LEFT = re.compile(
    rf"§|{_NOT_DOCS}(?:{SPEC_FILES})\.md\b|\bissues? #\d+|\b[Qq]uirk Q\d+|\bQ\d{{1,2}}\b"
)

# default specification file of a path without an explicit one in its text
DEFAULTS = (
    ("zigzag/multicore/", "stream.md"),
    ("tests/unit/multicore/test_stream", "stream.md"),
    ("benchmarks/bench_allocation", "stream.md"),
    ("benchmarks/bench_schedule", "stream.md"),
    ("benchmarks/bench_cost_table", "stream.md"),
    ("benchmarks/bench_cn_graph", "stream.md"),
    ("benchmarks/stream_", "stream.md"),
    ("zigzag/hardware/imc", "imc.md"),
    ("zigzag/cost/imc", "imc.md"),
    ("tests/unit/cost/test_imc", "imc.md"),
    ("zigzag/io/onnx", "onnx.md"),
    ("zigzag/io/validation", "inputs.md"),
    ("zigzag/stages", "stages.md"),
    ("zigzag/mapping_search", "search.md"),
    ("zigzag/cost", "cost-model.md"),
    ("tests/unit/cost/test_cost_model", "cost-model.md"),
    ("tests/unit/mapping_search/test_spatial_generator", "search.md"),
    ("tests/unit/mapping_search/test_loop_factors", "search.md"),
    ("tests/unit/mapping_search/test_permutations", "search.md"),
    ("tests/unit/mapping_search/test_locality", "search.md"),
    ("tests/unit/mapping_search/test_search", "search.md"),
    ("tests/parity/test_search", "search.md"),
    ("tests/unit/io/test_onnx", "onnx.md"),
    ("tests/unit/stages/test_stages", "stages.md"),
)


def page_for(file: str, section: str | None) -> str:
    """The docs page (with anchor) explaining `section` of the specification file `file`."""
    pages = SECTIONS[file]
    key = (section or "").lstrip("§").strip()
    while key and key not in pages:
        key = key.rsplit(".", 1)[0] if "." in key else ""
    return pages[key]


def rewrite(text: str, path: str) -> str:
    """`text` with every specification citation replaced and every issue number dropped."""
    for phrase, plain in PROVENANCE.items():
        text = text.replace(phrase, plain)
    default = next((spec for prefix, spec in DEFAULTS if path.startswith(prefix)), None)
    context = default

    def explicit(match: re.Match) -> str:
        nonlocal context
        file = f"{match.group('file')}.md"
        if default is None:
            context = file
        return page_for(file, match.group("section"))

    out, last = [], 0
    for match in CITATION.finditer(text):  # explicit citations, each setting the context after it
        out.append(_bare(text[last : match.start()], context))
        out.append(explicit(match))
        last = match.end()
    out.append(_bare(text[last:], context))
    text = ISSUE.sub("", "".join(out))
    for pattern, replacement in QUIRK_LABELS:
        text = pattern.sub(replacement, text)
    return text


def _bare(text: str, context: str | None) -> str:
    if context is None:
        return text
    return BARE.sub(lambda m: page_for(context, m.group("section")), text)


def scanned_files() -> list[Path]:
    """The text files of the scanned folders, this script excepted."""
    files = []
    for name in SCANNED:
        root = REPO / name
        candidates = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in candidates:
            relative = path.relative_to(REPO).as_posix()
            if any(relative.startswith(s) for s in SKIPPED) or "__pycache__" in relative:
                continue
            if path.suffix in SUFFIXES and path != Path(__file__).resolve():
                files.append(path)
    return files


def leftovers() -> list[str]:
    """`path:line: text` of every line still citing a specification file, a section or an issue."""
    found = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if LEFT.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; list what is left, status 1 if any"
    )
    args = parser.parse_args()
    if not args.check:
        for path in scanned_files():
            text = path.read_text(errors="replace")
            new = rewrite(text, path.relative_to(REPO).as_posix())
            if new != text:
                path.write_text(new)
                print(f"rewritten: {path.relative_to(REPO)}")
    left = leftovers()
    for line in left:
        print(line)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
