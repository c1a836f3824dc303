"""A large hardware sweep through the workflow: a grid of 1,000 variants of the TPU-like example
accelerator (array shape x unified-buffer size x accumulator size x buffer bandwidth) on
ResNet-18 and MobileNetV2 at lpf_limit 6, run by ``snakemake --cores 2`` from scratch; or
(``--grid 10000``) the 10,000-variant grid: the same 1,000 x 10 memory-cost settings (5 DRAM
energies per access x 2 weight-register energies per access), whose
variants differing only in those costs share their mapping candidates
(zigzag/mapping_search/batched/shared.py).

Usage:  python benchmarks/bench_hw_sweep.py [--variants 50] [--cores 2] [--batch-size auto] [--seed 0]
        python benchmarks/bench_hw_sweep.py --grid 10000                  # the whole 10k grid (idle machine)
        python benchmarks/bench_hw_sweep.py --grid structural10000        # 10,000 variants, all structural
        python benchmarks/bench_hw_sweep.py --grid 10000 --variants 200 --in-process   # CPU s, shared vs not
        python benchmarks/bench_hw_sweep.py --variants 20 --start 600 --in-process     # one batch job's variants
        python benchmarks/bench_hw_sweep.py --variants 16 --workloads inputs/workload/resnet18.onnx \
            --batch-size 4 --write-config config/sweep_slurm_slice.yaml
        python benchmarks/bench_hw_sweep.py --grid 10000 --write-config config/sweep_10k.yaml

``--grid structural10000``: 10,000 variants whose every axis changes the design, 10 array shapes
(the five above and 16x16, 16x32, 32x16, 32x64, 64x32) x 10 buffer sizes (128 KiB-6 MiB) x 10
accumulator sizes (64 KiB-2 MiB) x 10 bandwidths (128-4,096 bit): no two variants share their
memory hierarchy's sizes, so they share only what the structural path shares (siblings differing
in one buffer size or bandwidth, within a batch job).

A slice of the 10,000 grid (``--variants N``, a multiple of 10) draws N / 10 points of the
1,000 grid and takes each with its 10 cost settings, so the slice shares as the grid does.
After a workflow run, ``--check K`` (default 10) variants of it, drawn seeded, are evaluated
again in this process through the unshared path in an empty cache and their rows compared
with the workflow's (every figure, as JSON). ``--in-process`` runs no workflow: it evaluates
the slice twice in this process, unshared then shared, each in an empty cache, and prints the
CPU seconds of each, the speed-up and whether every row is identical.

Temporary folders come from ``tempfile`` (``TMPDIR``): on a machine whose ``/tmp`` is slow to
create files in, ``TMPDIR=/var/tmp`` keeps the per-layer result files from timing the file system.

``--write-config FILE`` only writes the workflow config of the slice (results under
``results/<FILE's stem>``) and runs nothing: e.g. to run the slice through the SLURM profile
(tools/slurm_local.sh, see docs/tutorials/cluster.md).

``--variants N`` runs a slice: N variants drawn (seeded) from the grid, so the slice has the
grid's mix of small and large arrays; the script then projects the full grid's time from it.
Printed: variants, points (variant x workload), jobs, distinct layer searches, wall time,
Snakemake's own CPU time (its main process, sampled from /proc) and its share of the run (of
``wall x cores``), the time per batch job, evaluations per second (points and layer searches),
the machine's load before and after, and the projection for the whole grid. Each run starts
from an empty copy of the inputs in a temporary folder, with a job server of its own.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_workflow import fresh_copy, job_env, stop_servers  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: the grid: 5 array shapes (D1, D2 in step) x 8 buffer sizes x 5 accumulator sizes x 5 bandwidths
SHAPES = [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8)]
BUFFERS = ["256KiB", "512KiB", "1MiB", "1536KiB", "2MiB", "3MiB", "4MiB", "6MiB"]
ACCUMULATORS = ["128KiB", "256KiB", "512KiB", "1MiB", "2MiB"]
BANDWIDTHS = [128, 256, 512, 1024, 2048]
WORKLOADS = ["inputs/workload/resnet18.onnx", "inputs/workload/mobilenetv2.onnx"]
#: the 10,000 grid's memory-cost settings: DRAM energy per access (pJ, 0.5x to 2x the example's)
#: x weight-register energy per access (pJ); they change no mapping's accesses, only its energy
DRAM = [975, 1462.5, 1950, 2925, 3900]
WREG = [0.0195, 0.039]
COSTS = [(dram, wreg) for dram in DRAM for wreg in WREG]
#: the structural 10,000 grid: every axis changes the design (10 values each), no cost axis
SHAPES_10 = [*SHAPES, (16, 16), (16, 32), (32, 16), (32, 64), (64, 32)]
BUFFERS_10 = [
    "128KiB",
    "256KiB",
    "384KiB",
    "512KiB",
    "768KiB",
    "1MiB",
    "1536KiB",
    "2MiB",
    "4MiB",
    "6MiB",
]
ACCUMULATORS_10 = [
    "64KiB",
    "96KiB",
    "128KiB",
    "192KiB",
    "256KiB",
    "384KiB",
    "512KiB",
    "768KiB",
    "1MiB",
    "2MiB",
]
BANDWIDTHS_10 = [128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096]
GRIDS = ("1000", "10000", "structural10000")
#: wall-time targets of the structural grids through ``snakemake --cores 2`` (issue 43), seconds
TARGETS = {"1000": 60, "structural10000": 600}


def grid(size: str = "1000") -> list[tuple]:
    """Every variant of the grid as (D1, D2, ub, acc, bw), with (dram, wreg) for the 10,000 grid;
    a variant's cost settings vary fastest (variants sharing candidates are neighbours)."""
    axes = (
        (SHAPES_10, BUFFERS_10, ACCUMULATORS_10, BANDWIDTHS_10)
        if size == "structural10000"
        else (SHAPES, BUFFERS, ACCUMULATORS, BANDWIDTHS)
    )
    base = [(*shape, ub, acc, bw) for shape, ub, acc, bw in itertools.product(*axes)]
    return base if size != "10000" else [(*point, *cost) for point in base for cost in COSTS]


def draw(size: str, variants: int | None, seed: int) -> list[tuple]:
    """The grid, or a seeded slice of it (of the 10,000 grid: whole groups of cost settings)."""
    full = grid(size)
    if variants is None:
        return full
    if size != "10000":
        return sorted(random.Random(seed).sample(full, variants))
    if variants % len(COSTS):
        raise SystemExit(f"--variants must be a multiple of {len(COSTS)} with --grid 10000")
    structural = sorted(random.Random(seed).sample(grid("1000"), variants // len(COSTS)))
    return [(*point, *cost) for point in structural for cost in COSTS]


_PARAMS = {
    "D1": "operational_array.sizes[0]",
    "D2": "operational_array.sizes[1]",
    "ub": "memories.unified_buffer.size",
    "acc": "memories.accumulators.size",
    "bw": "memories.unified_buffer.ports[0].bandwidth_max",
}
_COST_PARAMS = {"dram": "memories.dram.r_cost", "wreg": "memories.w_reg.r_cost"}


def sweep_config(
    points: list[tuple],
    batch_size,
    workloads=WORKLOADS,
    results="results",
    *,
    product: bool = False,
) -> dict:
    """A workflow config with one hardware sweep over ``points`` (zipped: one variant each); with
    ``product``, the whole 10,000 grid written as its axes instead (the same variants, same order)."""
    costs = len(points[0]) == 7
    names = ("D1", "D2", "ub", "acc", "bw", *(_COST_PARAMS if costs else ()))
    if product:
        # vary axes come first in the expansion, zip groups last, the last one fastest
        axes = {
            "vary": {"ub": BUFFERS, "acc": ACCUMULATORS, "bw": BANDWIDTHS},
            "zip": [
                {"D1": [d1 for d1, _ in SHAPES], "D2": [d2 for _, d2 in SHAPES]},
                {"dram": [d for d, _ in COSTS], "wreg": [w for _, w in COSTS]},
            ],
        }
        # the expansion's order: ub, acc, bw, shape, costs; grid() orders shape first
    else:
        axes = {"zip": [dict(zip(names, map(list, zip(*points))))]}
    derive = {
        "memories.unified_buffer.ports[1].bandwidth_max": "bw",
        "memories.unified_buffer.r_cost": "10 * (ub / 8KiB) ** 0.5 * 512 / 64",
        "memories.unified_buffer.w_cost": "10 * (ub / 8KiB) ** 0.5 * 512 / 64",
        "memories.unified_buffer.area": "0.7 * ub",
        "memories.accumulators.r_cost": "10 * (acc / 8KiB) ** 0.5 * 512 / 64",
        "memories.accumulators.w_cost": "10 * (acc / 8KiB) ** 0.5 * 512 / 64",
        "memories.accumulators.area": "0.7 * acc",
        "memories.accumulators.ports[0].bandwidth_max": "D1 * 16",
        "memories.accumulators.ports[1].bandwidth_max": "D1 * 16",
        **({"memories.dram.w_cost": "dram", "memories.w_reg.w_cost": "wreg"} if costs else {}),
    }
    params = {**_PARAMS, **(_COST_PARAMS if costs else {})}
    return {
        "results": results,
        "defaults": {"lpf_limit": 6},
        "hardware_sweeps": [
            {
                "name": "grid",
                "base": "inputs/hardware/flow_tpu_32x32.yaml",
                "params": params,
                **axes,
                "derive": derive,
                "name_format": "tpu{D1}x{D2}-ub{ub}-acc{acc}-bw{bw}"
                + ("-dram{dram}-wreg{wreg}" if costs else ""),
                "workloads": list(workloads),
                "mapping": "inputs/mapping/flow_tpu_array.yaml",
                "batch_size": batch_size,
            }
        ],
    }


class FlowListDumper(yaml.SafeDumper):
    """Writes lists of plain values on one line each (the grid's columns), the rest as blocks."""


FlowListDumper.add_representer(
    list,
    lambda dumper, items: dumper.represent_sequence(
        "tag:yaml.org,2002:seq",
        items,
        flow_style=not any(isinstance(item, (dict, list)) for item in items),
    ),
)


def write_config(args: argparse.Namespace, points: list[tuple], batch_size) -> None:
    """Write the slice's workflow config to ``args.write_config``, with the command that made it."""
    whole = args.variants is None and args.grid == "10000"
    config = sweep_config(
        points, batch_size, args.workloads, f"results/{args.write_config.stem}", product=whole
    )
    command = " ".join(["python benchmarks/bench_hw_sweep.py", *sys.argv[1:]])
    what = (
        "The whole 10,000-variant grid of benchmarks/bench_hw_sweep.py"
        if whole
        else f"{len(points)} variants of benchmarks/bench_hw_sweep.py's grid (seed {args.seed})"
    )
    header = (
        f"# {what}, written by\n"
        f"#   {command}\n# Run: snakemake --cores 2 --configfile {args.write_config}\n"
    )
    args.write_config.write_text(
        header + yaml.dump(config, Dumper=FlowListDumper, sort_keys=False, width=120)
    )
    print(
        f"wrote {args.write_config}: {len(points)} variants x {len(args.workloads)} workloads, batch_size {batch_size}"
    )


def snakemake_command(workdir: Path, cores: int, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        str(cores),
        "--quiet",
        *extra,
    ]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process (not its children), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_run(workdir: Path, cores: int, env: dict) -> tuple[float, float, float, int]:
    """Wall time, its start (until the first job's file: Snakemake reading the Snakefile,
    expanding the sweep and building its DAG), Snakemake's own CPU seconds (main process,
    sampled every 0.1 s) and exit status."""
    log = workdir / "snakemake.log"
    first = workdir / "results" / ".cache" / "sweeps"  # written by the first jobs (or the load)
    started = time.perf_counter()
    start = None
    with open(
        log, "w"
    ) as output:  # a file, not a pipe: a full pipe would stop the jobs writing to it
        process = subprocess.Popen(
            snakemake_command(workdir, cores), env=env, stdout=output, stderr=output
        )
        own = 0.0
        while process.poll() is None:
            sample = cpu_seconds(process.pid)
            own = sample if sample is not None else own
            if start is None and first.exists():
                start = time.perf_counter() - started
            time.sleep(0.1)
    wall = time.perf_counter() - started
    if process.returncode:
        print(log.read_text()[-3000:], file=sys.stderr)
    return wall, wall if start is None else start, own, process.returncode


def server_cpu_seconds(server_dir: Path) -> float | None:
    """CPU seconds of the run's job servers and of the jobs they ran (their reaped children),
    read before they are stopped; None when none is running."""
    total, found = 0.0, False
    for log in server_dir.glob("*.log"):
        for pid in re.findall(r"^\S+ \[(\d+)\] starting", log.read_text(), re.MULTILINE):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found = True
            total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total if found else None


def job_seconds(workdir: Path, collect: bool = False) -> list[float]:
    """Wall seconds of the sweep's batch jobs (``collect``: of its collect job), from the first
    line of their logs, ``[12.345 s]`` (zigzag.notes.run_logged: the step's own time, from its
    start in the job server to its end; these rules have no ``benchmark:``, whose sampling costs
    Snakemake's process CPU)."""
    logs = workdir / "results" / "hardware_sweeps" / "grid" / "logs"
    paths = [logs / "collect.log"] if collect else sorted(logs.glob("*.log"))
    seconds = []
    for path in paths:
        if path.name == "collect.log" and not collect:
            continue
        found = re.match(r"\[([0-9.]+) s\]", path.read_text()) if path.exists() else None
        if found:
            seconds.append(float(found.group(1)))
    return seconds


def job_phases(workdir: Path, epoch: float) -> tuple[float, float, float, float] | None:
    """When, in seconds from ``epoch`` (the run's start), the first batch job started, the last
    one ended, and the collect job started and ended: from their logs' times and modification
    times (a log is written when its step ends)."""
    logs = workdir / "results" / "hardware_sweeps" / "grid" / "logs"
    spans = {}
    for path in logs.glob("*.log"):
        found = re.match(r"\[([0-9.]+) s\]", path.read_text())
        if found:
            end = path.stat().st_mtime - epoch
            spans[path.name] = (end - float(found.group(1)), end)
    collect = spans.pop("collect.log", None)
    if not spans or collect is None:
        return None
    return min(s for s, _ in spans.values()), max(e for _, e in spans.values()), *collect


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--variants", type=int, default=None, help="run a seeded slice of this many variants"
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--batch-size",
        default="auto",
        help="variants per job (default auto; with --grid 10000: multiples of 10, at most 50 jobs)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the slice's draw")
    parser.add_argument(
        "--start",
        type=int,
        default=None,
        help="take --variants consecutive variants of the grid from this index instead of a "
        "seeded draw (e.g. one batch job's: with --in-process, what it shares)",
    )
    parser.add_argument(
        "--workloads", nargs="+", default=WORKLOADS, help="workload files (default: both)"
    )
    parser.add_argument(
        "--write-config", type=Path, metavar="FILE", help="write the config to FILE, run nothing"
    )
    parser.add_argument(
        "--grid",
        choices=GRIDS,
        default="1000",
        help="the grid (default 1000; structural10000: 10 values on each of the four axes)",
    )
    parser.add_argument(
        "--check",
        type=int,
        default=10,
        help="variants re-evaluated unshared and compared (default 10)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="no workflow: CPU seconds of the slice unshared and shared, in this process",
    )
    args = parser.parse_args()
    full = grid(args.grid)
    points = (
        draw(args.grid, args.variants, args.seed)
        if args.start is None
        else full[args.start : args.start + (args.variants or len(full))]
    )
    batch_size = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    if batch_size == "auto" and args.grid == "10000":
        # whole groups of cost settings per job (they share candidates only within a job), at most 50 jobs
        batch_size = len(COSTS) * -(-len(points) // (len(COSTS) * 50))
    if args.write_config:
        write_config(args, points, batch_size)
        return
    if args.in_process:
        in_process(points, args.workloads)
        return
    load_before = os.getloadavg()
    started = time.perf_counter()
    sum(range(10**7))
    calibration = time.perf_counter() - started
    print(
        f"grid: {len(full)} variants x {len(args.workloads)} workloads (lpf_limit 6); running {len(points)} variants, "
        f"--cores {args.cores}, batch_size {batch_size}"
    )
    print(
        f"machine: {os.cpu_count()} cores, load {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
        f"calibration sum(range(10**7)) {calibration:.3f} s"
    )
    with (
        tempfile.TemporaryDirectory() as tmp,
        tempfile.TemporaryDirectory(prefix="zzh-", dir="/tmp") as servers,
    ):
        config = Path(tmp) / "config.yaml"
        config.write_text(
            yaml.safe_dump(sweep_config(points, batch_size, args.workloads), sort_keys=False)
        )
        workdir = fresh_copy(config, Path(tmp), "run")
        env = job_env(Path(servers) / "run", True)
        try:
            epoch = time.time()
            wall, start, own, status = timed_run(workdir, args.cores, env)
            jobs_cpu = server_cpu_seconds(Path(servers) / "run")
        finally:
            stop_servers(Path(servers) / "run")
        load_after = os.getloadavg()
        batches, collect = job_seconds(workdir), sum(job_seconds(workdir, collect=True))
        phases = job_phases(workdir, epoch)
        if phases:  # the start: until the first batch job started (the batch files, which the
            # polled folder holds, are now written as the Snakefile loads, before the DAG is built)
            start = phases[0]
        results = workdir / "results" / ".cache" / "results"
        from zigzag.mapping_search.result_packs import PackIndex

        # a result's own file, or a batch job's packed record (zigzag/mapping_search/result_packs.py)
        searches = len({p.stem for p in results.glob("*.json")} | PackIndex.load(str(results)).keys)
        import csv

        with open(
            workdir / "results" / "hardware_sweeps" / "grid" / "variants.csv", newline=""
        ) as handle:
            statuses = [row["status"] for row in csv.DictReader(handle)]
        identical = check_rows(workdir, args.check, args.seed) if args.check else None
    points_run = len(points) * len(args.workloads)
    share = own / (wall * args.cores)
    counts = ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses))
    print(f"exit status: {status}; rows in variants.csv: {len(statuses)} ({counts})")
    print(f"jobs: {len(batches)} batch jobs + 1 collect; distinct layer searches: {searches}")
    print(
        f"wall time:              {wall:8.1f} s  (start, until the first batch job: {start:.1f} s; collect job {collect:.1f} s)"
    )
    if phases:
        print(
            f"timeline:               first batch job started at {phases[0]:.1f} s, the last one ended at "
            f"{phases[1]:.1f} s, the collect job ran {phases[2]:.1f}-{phases[3]:.1f} s, Snakemake exited at {wall:.1f} s"
        )
    print(f"Snakemake's own CPU:    {own:8.1f} s  = {100 * share:.1f} % of wall x cores")
    if jobs_cpu is not None:
        print(
            f"CPU of the run:         {own + jobs_cpu:8.1f} s  (Snakemake {own:.1f} s; the job server, "
            f"its imports and every job it ran, {jobs_cpu:.1f} s)"
        )
    if batches:
        print(
            f"batch jobs:             {sum(batches):8.1f} s in all, {sum(batches) / len(batches):.1f} s each "
            f"({sum(batches) / len(points):.2f} s per variant)"
        )
    busy = (sum(batches) + collect) / (wall * args.cores)
    print(
        f"cores busy with jobs:   {100 * busy:8.1f} %  (the rest: Snakemake, start, waiting for the last jobs)"
    )
    print(
        f"evaluations per second: {points_run / wall:8.3f} points (variant x workload), "
        f"{searches / wall:.2f} layer searches"
    )
    print(f"machine load:           {load_before[0]:.2f} -> {load_after[0]:.2f} (1-minute average)")
    if identical is not None:
        print(
            f"identical to the unshared path: {identical[0]} ({identical[1]} variants x {len(args.workloads)} "
            f"workloads re-evaluated unshared in this process, every figure compared)"
        )
    target = TARGETS.get(args.grid)
    if target is not None and len(points) == len(full) and args.cores == 2:
        verdict = "met" if status == 0 and wall <= target else "not met"
        print(
            f"target (issue 43): the whole {args.grid} grid in <= {target} s on 2 cores: "
            f"{verdict} ({wall:.1f} s at load {load_before[0]:.2f} -> {load_after[0]:.2f})"
        )
    if len(points) < len(full) and batches:
        scale = len(full) / len(points)
        evaluations = start + sum(batches) * scale / args.cores
        low, high = evaluations + collect, evaluations + collect * scale
        print(
            f"projection, full grid:  {low:8.1f} s to {high:.1f} s = {low / 60:.1f} to {high / 60:.1f} min at this "
            f"load (start + batch jobs x {scale:.1f} / {args.cores} cores, + the collect job as measured or x "
            f"{scale:.1f}: its figures cost about the same for any number of rows, its tables grow with them); "
            f"{len(full) * len(args.workloads) / low:.3f} points/s"
        )
        print(
            f"  at load <= {args.cores} (a machine of its own) divide by about "
            f"{max(1.0, min(load_before[0], load_after[0]) / args.cores):.1f}"
        )


def _sweep_of(config: dict, root: Path):
    """The config's sweep, read with its files relative to ``root``."""
    from zigzag.sweep.config import read_sweep

    section = config["hardware_sweeps"][0]
    section = {
        **section,
        "base": str(root / section["base"]),
        "mapping": str(root / section["mapping"]),
        "workloads": [str(root / w) for w in section["workloads"]],
    }
    return read_sweep(section, "benchmark", defaults=config["defaults"])


def _comparable(rows: list[dict]) -> list[str]:
    """Rows as JSON without the workload's folder (the runs read their inputs from different folders)."""
    import json

    def plain(row: dict) -> dict:  # a batch job's file holds the per-layer figures as JSON text
        detail = row.get("_detail")
        return {
            **row,
            "workload": Path(row["workload"]).stem,
            **({"_detail": json.loads(detail)} if isinstance(detail, str) else {}),
        }

    return [json.dumps(plain(row), sort_keys=True) for row in rows]


def check_rows(workdir: Path, count: int, seed: int) -> tuple[bool, int]:
    """Re-evaluate ``count`` seeded variants of the workflow's sweep unshared in an empty cache;
    True when their rows equal the workflow's (from its points/*.json, every figure)."""
    import json

    from zigzag.sweep.runner import evaluate_points, variants_of

    config = yaml.safe_load((workdir / "config.yaml").read_text())
    sweep = _sweep_of(config, workdir)
    variants = variants_of(sweep)
    sample = random.Random(seed).sample(variants, min(count, len(variants)))
    names = {v.name for v in sample}
    done = [
        row
        for path in sorted(
            (workdir / "results" / "hardware_sweeps" / "grid" / "points").glob("*.json")
        )
        for row in json.loads(path.read_text())["rows"]
        if row["variant"] in names
    ]
    with tempfile.TemporaryDirectory() as cache:
        again = evaluate_points(sweep, sample, cache, share=False)
    order = {name: i for i, name in enumerate(v.name for v in sample)}
    done.sort(key=lambda row: (order[row["variant"]], row["workload"]))
    again.sort(key=lambda row: (order[row["variant"]], row["workload"]))
    return _comparable(done) == _comparable(again), len(sample)


def in_process(points: list[tuple], workloads: list[str]) -> None:
    """CPU seconds of the slice evaluated unshared, then shared, each in an empty cache (after a
    warm-up variant, so that imports count in neither)."""
    from zigzag.sweep.runner import evaluate_points, variants_of

    sweep = _sweep_of(sweep_config(points, "auto", workloads), REPO)
    variants = variants_of(sweep)
    load = os.getloadavg()
    print(
        f"{len(variants)} variants x {len(workloads)} workloads in this process; load {load[0]:.2f}"
    )
    with (
        tempfile.TemporaryDirectory() as cache
    ):  # imports and first-call costs out of the timed runs
        evaluate_points(sweep, variants[:1], cache, share=False)
    rows, seconds = {}, {}
    for share in (False, True):
        with tempfile.TemporaryDirectory() as cache:
            started = time.process_time()
            rows[share] = evaluate_points(sweep, variants, cache, share=share)
            seconds[share] = time.process_time() - started
            searches = len(list(Path(cache, "results").glob("*.json")))
        print(
            f"{'shared' if share else 'unshared':9s} {seconds[share]:8.1f} CPU s ({seconds[share] / len(variants):.3f} "
            f"per variant; {searches} layer results)"
        )
    print(
        f"speed-up: {seconds[False] / seconds[True]:.2f}x; identical rows: {rows[False] == rows[True]}; "
        f"load now {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
