#!/usr/bin/env python3
"""Benchmark the whole-network search on the visible reference cases.

For every case of ``expected.yaml`` and ``expected-imc.yaml`` (workload + accelerator + mapping +
options, inputs in the reference input folder; the IMC cases run with ``in_memory_compute=True``)
this prints our wall time, the number of evaluated mappings (temporal
mapping candidates), evaluations per second, the peak memory of the process, whether the network
totals match ``expected.yaml``, and -- with ``--reference-venv`` -- the wall time of the reference
ZigZag (zigzag-dse 3.8.5) on the same case in the same run, with the ratio.

Every measurement runs in a fresh child process (so peak memory is per case and no cache is
shared between repeats); the time is taken around the API call
``get_hardware_performance_zigzag`` in both implementations (input parsing, search, output files;
interpreter start-up and imports excluded), with progress bars off.  The reference runs from a
temporary directory with the reference venv's python, so our package cannot shadow it.

Examples::

    python benchmarks/bench_search.py                           # all cases, ours only
    python benchmarks/bench_search.py --case resnet18.yaml@tpu_like --repeat 3
    python benchmarks/bench_search.py --case tpu_like --engine both --per-layer
    python benchmarks/bench_search.py --case resnet18.yaml@tpu_like --reference-venv /work/.venv-reference

``--engine scalar`` measures our one-candidate-at-a-time path (``ZIGZAG_EVAL=scalar``),
``--engine both`` both of ours.  ``--per-layer`` adds, in this process, the scalar and batched
search time of every distinct layer of the selected cases.  The machine load (``os.getloadavg``)
is printed before and after: compare numbers taken under similar load only.  The last lines
compare the evaluations per second of the in-memory-computing cases with the digital ones.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = REPO / "tests" / "data" / "reference"

# ----- the child processes ---------------------------------------------------------------------

# Runs inside the child with our package (sys.executable): one API call, measured.
OURS_WORKER = r"""
import json, logging, os, resource, sys, tempfile, time
logging.disable(logging.CRITICAL)
spec = json.loads(sys.argv[1])
if spec.get("tracemalloc"):
    import tracemalloc
    tracemalloc.start()
t0 = time.perf_counter()
import zigzag.mapping_search.network as network
from zigzag.api import get_hardware_performance_zigzag
counts = {"evaluations": 0, "layer_searches": 0}
search_layer = network.search_layer
def counting_search_layer(*args, **kwargs):
    result, stats = search_layer(*args, **kwargs)
    counts["evaluations"] += stats.evaluations
    counts["layer_searches"] += 1
    return result, stats
network.search_layer = counting_search_layer
t1 = time.perf_counter()
with tempfile.TemporaryDirectory() as out:
    energy, latency = get_hardware_performance_zigzag(
        spec["workload"], spec["accelerator"], spec["mapping"], dump_folder=out,
        pickle_filename=os.path.join(out, "cmes.pickle"), loma_show_progress_bar=False, **spec["options"])[:2]
    t2 = time.perf_counter()
peak_traced = tracemalloc.get_traced_memory()[1] if spec.get("tracemalloc") else None
print(json.dumps({"energy": energy, "latency": latency, "seconds": t2 - t1, "import_seconds": t1 - t0,
                  "evaluations": counts["evaluations"], "layer_searches": counts["layer_searches"],
                  "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "peak_traced": peak_traced}))
"""

# Runs inside the child with the reference venv's python, from a temporary directory.
REFERENCE_WORKER = r"""
import json, logging, os, resource, sys, time
logging.disable(logging.CRITICAL)
spec = json.loads(sys.argv[1])
t0 = time.perf_counter()
from zigzag.api import get_hardware_performance_zigzag
t1 = time.perf_counter()
out = os.path.join(os.getcwd(), "outputs")
energy, latency = get_hardware_performance_zigzag(
    spec["workload"], spec["accelerator"], spec["mapping"], dump_folder=out,
    pickle_filename=os.path.join(out, "cmes.pickle"), loma_show_progress_bar=False, **spec["options"])[:2]
t2 = time.perf_counter()
print(json.dumps({"energy": energy, "latency": latency, "seconds": t2 - t1, "import_seconds": t1 - t0,
                  "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def run_child(
    python: str, script: str, spec: dict, *, cwd: str | None = None, env: dict | None = None
) -> dict:
    proc = subprocess.run(
        [python, "-c", script, json.dumps(spec)], cwd=cwd, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({python}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_ours(case: dict, engine: str, tracemalloc: bool) -> dict:
    env = dict(os.environ)
    env["ZIGZAG_EVAL"] = engine
    return run_child(sys.executable, OURS_WORKER, {**case, "tracemalloc": tracemalloc}, env=env)


def run_reference(case: dict, venv: Path) -> dict:
    python = venv / "bin" / "python"
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    env["TQDM_DISABLE"] = "1"
    with tempfile.TemporaryDirectory(prefix="zz_bench_ref_") as tmp:
        return run_child(str(python), REFERENCE_WORKER, case, cwd=tmp, env=env)


# ----- cases ------------------------------------------------------------------------------------


def load_cases(shared: Path) -> list[dict]:
    import yaml

    cases = []
    entries = yaml.safe_load((shared / "expected.yaml").read_text())
    if (shared / "expected-imc.yaml").exists():
        entries += yaml.safe_load((shared / "expected-imc.yaml").read_text())
    for entry in entries:
        inputs = shared / "zigzag"
        options = dict(entry.get("options") or {})
        name = f"{entry['workload']}@{Path(entry['accelerator']).stem}"
        if options:
            name += "+" + ",".join(f"{k}={v}" for k, v in sorted(options.items()))
        cases.append(
            {
                "name": name,
                "workload": str(inputs / "workload" / entry["workload"]),
                "accelerator": str(inputs / "hardware" / entry["accelerator"]),
                "mapping": str(inputs / "mapping" / entry["mapping"]),
                "options": options,
                "expected_energy": entry.get("energy_pJ"),
                "expected_latency": entry.get("latency_cycles"),
            }
        )
    return cases


def matches(value, expected, rel=1e-9) -> bool:
    # expected.yaml rounds energies to 0.01 pJ
    return expected is None or abs(value - expected) <= max(rel * abs(expected), 0.006)


# ----- per-layer comparison (in this process) --------------------------------------------------


def per_layer(case: dict, repeat: int) -> list[dict]:
    """Scalar vs batched search time of every distinct layer of a case (best of ``repeat``)."""
    import logging

    logging.disable(logging.CRITICAL)
    from zigzag.mapping_search import batched
    from zigzag.io.loaders import load_inputs
    from zigzag.mapping_search.layer_search import search_layer
    from zigzag.mapping_search.network import evaluated_layers, layer_accelerators
    from zigzag.mapping_search.options import SearchOptions

    workload, accelerator = load_inputs(case["workload"], case["accelerator"], case["mapping"])
    options = dict(case["options"])
    if options.pop(
        "in_memory_compute", False
    ):  # as the API: mixed spatial mappings and data locality
        options.update(enable_mix_spatial_mapping=True, exploit_data_locality=True)
    options = SearchOptions(**options)
    accelerators = layer_accelerators(workload, accelerator, options)
    seen, rows = set(), []
    for layer in evaluated_layers(workload.layers, accelerator):
        key = json.dumps(
            [layer.signature(), id(accelerators[layer.id])], sort_keys=True, default=str
        )
        if key in seen:
            continue
        seen.add(key)
        row = {"layer": layer.id, "name": layer.name}
        for engine in ("scalar", "batched"):
            os.environ[batched.ENGINE_ENV] = engine
            best = None
            for _ in range(repeat):
                t = time.perf_counter()
                result, stats = search_layer(
                    layer, accelerators[layer.id], options, show_progress=False
                )
                elapsed = time.perf_counter() - t
                best = elapsed if best is None else min(best, elapsed)
            row[engine] = best
            row["evaluations"] = stats.evaluations
            row[f"{engine}_figures"] = (result.energy_total, result.latency_total2)
        os.environ.pop(batched.ENGINE_ENV, None)
        row["identical"] = row["scalar_figures"] == row["batched_figures"]
        rows.append(row)
    return rows


def print_imc_comparison(records: list[dict]) -> None:
    """Evaluations per second of the IMC cases against the digital ones, per engine."""
    for engine in ("batched", "scalar"):
        rates = {"imc": [], "digital": []}
        for record in records:
            if record.get("engine") != engine:
                continue
            best = min(record["runs"], key=lambda r: r["seconds"])
            kind = "imc" if "in_memory_compute" in record["case"] else "digital"
            rates[kind].append((best["evaluations"], best["seconds"]))
        if rates["imc"] and rates["digital"]:
            imc, digital = (
                sum(e for e, _ in rates[k]) / sum(s for _, s in rates[k])
                for k in ("imc", "digital")
            )
            print(
                f"{engine}: IMC cases {imc:.0f} evaluations/s, digital cases {digital:.0f} evaluations/s "
                f"(IMC / digital = {imc / digital:.2f})"
            )


# ----- main -------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        help="substring of a case name (repeatable); default: every case",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per case; the best time is reported"
    )
    parser.add_argument("--engine", choices=("batched", "scalar", "both"), default="batched")
    parser.add_argument(
        "--reference-venv", type=Path, help="venv holding zigzag-dse 3.8.5 to time as well"
    )
    parser.add_argument(
        "--reference-repeat", type=int, default=1, help="runs of the reference per case"
    )
    parser.add_argument(
        "--per-layer", action="store_true", help="also time scalar vs batched per distinct layer"
    )
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="also report the tracemalloc peak (slows the scalar path down)",
    )
    parser.add_argument(
        "--shared",
        type=Path,
        default=DEFAULT_SHARED,
        help="folder with expected.yaml and zigzag/{workload,hardware,mapping}",
    )
    parser.add_argument("--json", type=Path, help="write all measurements to this file")
    args = parser.parse_args(argv)

    cases = load_cases(args.shared)
    if args.case:
        cases = [c for c in cases if any(s in c["name"] for s in args.case)]
    if not cases:
        print("no case selected; names: " + ", ".join(c["name"] for c in load_cases(args.shared)))
        return 2
    engines = ["scalar", "batched"] if args.engine == "both" else [args.engine]
    print(f"load average before: {os.getloadavg()}  (cpus: {os.cpu_count()})")
    records = []
    header = (
        f"{'case':<44} {'engine':<9} {'wall s':>8} {'evals':>8} {'evals/s':>9} {'peak MiB':>9} "
        f"{'totals':>7}"
    )
    if args.tracemalloc:
        header += f" {'traced MiB':>10}"
    if args.reference_venv:
        header += f" {'ref s':>9} {'ref MiB':>8} {'ratio':>8}"
    print(header)
    for case in cases:
        reference = None
        if args.reference_venv:
            ref_runs = [
                run_reference(case, args.reference_venv) for _ in range(args.reference_repeat)
            ]
            reference = min(ref_runs, key=lambda r: r["seconds"])
        for engine in engines:
            runs = [run_ours(case, engine, args.tracemalloc) for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["seconds"])
            ok = matches(best["energy"], case["expected_energy"]) and matches(
                best["latency"], case["expected_latency"]
            )
            if reference is not None:
                ok = (
                    ok
                    and abs(best["energy"] - reference["energy"]) <= 1e-9 * abs(reference["energy"])
                    and best["latency"] == reference["latency"]
                )
            line = (
                f"{case['name']:<44} {engine:<9} {best['seconds']:>8.3f} {best['evaluations']:>8d} "
                f"{best['evaluations'] / best['seconds']:>9.0f} {best['peak_rss_kib'] / 1024:>9.1f} "
                f"{'same' if ok else 'DIFF':>7}"
            )
            if args.tracemalloc:
                line += f" {best['peak_traced'] / 2**20:>10.1f}"
            if reference is not None:
                line += (
                    f" {reference['seconds']:>9.2f} {reference['peak_rss_kib'] / 1024:>8.1f} "
                    f"{reference['seconds'] / best['seconds']:>7.1f}x"
                )
            print(line, flush=True)
            records.append(
                {
                    "case": case["name"],
                    "engine": engine,
                    "runs": runs,
                    "reference": reference,
                    "same_totals": ok,
                }
            )
    if args.per_layer:
        for case in cases:
            rows = per_layer(case, args.repeat)
            print(f"\nper layer, {case['name']} (best of {args.repeat}):")
            print(
                f"{'layer':>6} {'evals':>7} {'scalar s':>9} {'batched s':>10} {'speed-up':>9} {'same':>5}"
            )
            for row in rows:
                print(
                    f"{row['layer']:>6} {row['evaluations']:>7} {row['scalar']:>9.4f} {row['batched']:>10.4f} "
                    f"{row['scalar'] / row['batched']:>8.1f}x {str(row['identical']):>5}"
                )
            total_s = sum(r["scalar"] for r in rows)
            total_b = sum(r["batched"] for r in rows)
            print(
                f"{'all':>6} {sum(r['evaluations'] for r in rows):>7} {total_s:>9.3f} {total_b:>10.3f} "
                f"{total_s / total_b:>8.1f}x"
            )
            records.append({"case": case["name"], "per_layer": rows})
    print_imc_comparison(records)
    print(f"load average after: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
