#!/usr/bin/env python3
"""Record the reference ZigZag's figures for accelerators whose memories use CACTI (auto_cost_extraction).

Runs the reference (PyPI ``zigzag-dse==3.8.5``, imported as ``zigzag``) through its public API on the
cases below and writes ``tests/data/cacti/oracle.json``: per case the network energy and latency and
the r_cost, w_cost and area of every memory as the reference's accelerator holds them after its
CACTI extraction. ``tests/unit/hardware/test_cacti.py`` compares this project's figures with them.

Run it with the Python of a virtual environment holding the reference (never this project's)::

    bash /work/shared/tools/reference-venv.sh /tmp/refvenv
    PATH=/tmp/refvenv/bin:$PATH nice -n 10 python tools/make_cacti_oracle.py [--cacti BINARY]

(the reference starts CACTI through ``python`` on PATH, so the venv must come first there). The
reference runs the CACTI binary bundled in its package folder; if that binary does not run on the
machine, ``--cacti`` copies a working CACTI 7 executable over it (e.g. this project's build,
``~/.cache/zigzag-flow/cacti/<version>/build/cacti``; both print identical figures). The reference's
dumps go to a temporary folder that is removed afterwards.

zigzag-dse 3.8.5's CACTI step (``zigzag/cacti/cacti_master/cacti_top.py``) cannot read CACTI's output
(it fails on the " N/A" of the search-energy column), so its extraction never works; ZigZag's later
sources read it. ``--cacti-top`` copies such a fixed file over it (e.g.
``git -C <zigzag clone> show 3d12a96:zigzag/cacti/cacti_master/cacti_top.py > /tmp/cacti_top.py``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "tests" / "data" / "cacti"
REFERENCE_INPUTS = (
    Path(__file__).resolve().parent.parent / "tests" / "data" / "reference" / "zigzag"
)

#: name -> (workload, accelerator, mapping, options of get_hardware_performance_zigzag)
CASES = {
    "eyeriss_cacti__resnet18_convs_a__energy": (
        HERE / "resnet18_convs_a.yaml",
        HERE / "eyeriss_like_cacti.yaml",
        HERE / "eyeriss_mapping.yaml",
        {"opt": "energy", "lpf_limit": 6},
    ),
    "eyeriss_cacti__resnet18_convs_b__latency": (
        HERE / "resnet18_convs_b.yaml",
        HERE / "eyeriss_like_cacti.yaml",
        HERE / "eyeriss_mapping.yaml",
        {"opt": "latency", "lpf_limit": 6},
    ),
    "tpu_like_cacti__resnet18_convs_b__energy": (
        HERE / "resnet18_convs_b.yaml",
        HERE / "tpu_like_cacti.yaml",
        REFERENCE_INPUTS / "mapping" / "tpu_like.yaml",
        {"opt": "energy", "lpf_limit": 6},
    ),
}


def _reference_cacti_folder() -> Path:
    import zigzag

    return Path(zigzag.__file__).parent / "cacti" / "cacti_master"


def _bundled_cacti_runs(folder: Path) -> bool:
    try:
        done = subprocess.run(["./cacti"], cwd=folder, capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return "how to use CACTI" in done.stdout + done.stderr


def _memories(cme) -> dict:
    nodes = cme.accelerator.memory_hierarchy.topological_sort()
    return {
        node.memory_instance.name: {
            "r_cost": node.memory_instance.r_cost,
            "w_cost": node.memory_instance.w_cost,
            "area": node.memory_instance.area,
        }
        for node in nodes
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cacti", help="a CACTI 7 executable to use instead of the reference's bundled one"
    )
    parser.add_argument(
        "--cacti-top", help="a working cacti_top.py of the reference to use instead of 3.8.5's"
    )
    parser.add_argument("--output", default=str(HERE / "oracle.json"))
    args = parser.parse_args()
    from zigzag.api import get_hardware_performance_zigzag

    import zigzag

    folder = _reference_cacti_folder()
    if args.cacti:
        shutil.copy2(args.cacti, folder / "cacti")
    elif not _bundled_cacti_runs(folder):
        sys.exit(f"the reference's CACTI binary in {folder} does not run here; give --cacti")
    if args.cacti_top:
        shutil.copy2(args.cacti_top, folder / "cacti_top.py")
    logging.basicConfig(level=logging.WARNING)
    cases = {}
    with tempfile.TemporaryDirectory() as dump:
        for name, (workload, accelerator, mapping, options) in CASES.items():
            print(f"{name} ...", flush=True)
            energy, latency, cmes = get_hardware_performance_zigzag(
                str(workload),
                str(accelerator),
                str(mapping),
                dump_folder=os.path.join(dump, name),
                loma_show_progress_bar=False,
                **options,
            )
            root = Path(__file__).resolve().parent.parent
            cases[name] = {
                "workload": str(workload.relative_to(root)),
                "accelerator": str(accelerator.relative_to(root)),
                "mapping": str(mapping.relative_to(root)),
                "options": options,
                "energy": energy,
                "latency": latency,
                "memories": _memories(cmes[0][0]),
            }
            print(f"  energy {energy!r} latency {latency!r}", flush=True)
    document = {
        "provenance": (
            f"written by tools/make_cacti_oracle.py on {_dt.date.today().isoformat()} with the reference "
            f"ZigZag (zigzag-dse {getattr(zigzag, '__version__', '3.8.5')}, its public API "
            "get_hardware_performance_zigzag) and CACTI 7 "
            + (
                "from --cacti (the rebuilt hwcomponents-cacti sources)"
                if args.cacti
                else "bundled with the reference"
            )
            + (
                f"; its CACTI step replaced by {Path(args.cacti_top).name} (see the script's docstring)"
                if args.cacti_top
                else ""
            )
        ),
        "cases": cases,
    }
    Path(args.output).write_text(json.dumps(document, indent=2) + "\n")
    print(f"written {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
