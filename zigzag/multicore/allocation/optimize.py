"""The constraint-optimisation allocation from files: inputs → CN graph → cost table → slot models →
fixed mapping → schedule (Stream's ``optimize_allocation_co``, solved with OR-Tools CP-SAT).

:func:`optimize_co` returns a :class:`ConstraintSearch`; ``write`` saves ``allocation.yaml`` (the
allocation as a fixed mapping, which ``zigzag stream run`` schedules to the same figures),
``co_slots.csv`` (every steady state's slots), ``summary.json`` and ``schedule.csv`` of that
schedule, ``summary.json`` carrying a ``co`` section (objective per stack, solver status and
seconds).
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.multicore.allocation.automatic import checked_automatic_mapping
from zigzag.multicore.allocation.constraint import CoAllocation, allocate, co_mapping, parts_table
from zigzag.multicore.allocation.search import allocation_inputs
from zigzag.multicore.allocation.slots import DEFAULT_GAP, DEFAULT_TIME_LIMIT
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.automap import write_mapping
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.mapping import StreamMapping, load_stream_mapping, parse_stream_mapping
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.run import run_stream
from zigzag.multicore.schedule.tokens import AUTO_LATENCY, resolve_latency_model
from zigzag.multicore.topology import load_multicore_accelerator


@dataclass
class ConstraintSearch:
    """A finished constraint-optimisation allocation and the schedule of its fixed mapping."""

    graph: CNGraph
    allocation: CoAllocation
    mapping: list[dict]
    mapping_path: str
    schedule: ScheduleResult
    seconds: float

    def co_summary(self) -> dict:
        """Per stack: steady-state CNs, iterations, the model's objective, status and seconds."""
        return {
            "method": "co",
            "solver": "OR-Tools CP-SAT",
            "seconds": round(self.seconds, 3),
            "solver_seconds": round(self.allocation.solver_seconds, 3),
            "layer_cores": {
                str(k): list(v) for k, v in sorted(self.allocation.layer_cores.items())
            },
            "stacks": [
                {
                    "layers": list(s.state.stack),
                    "steady_state_cns": len(s.state.cns),
                    "iterations": s.state.iterations,
                    "macs_share": round(s.state.macs_share, 6),
                    "objective": s.answer.objective,
                    "status": s.answer.status,
                    "seconds": round(s.answer.seconds, 3),
                }
                for s in self.allocation.stacks
            ],
        }

    def write(self, folder: str | Path) -> dict[str, Path]:
        """Write allocation.yaml, co_slots.csv, summary.json and schedule.csv into ``folder``."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        header = f"# fixed allocation found by the constraint optimisation from {Path(self.mapping_path).name}\n"
        write_text_atomic(
            out / "allocation.yaml", header + yaml.safe_dump(self.mapping, sort_keys=False)
        )
        rows = parts_table(self.graph, self.allocation)
        text = io.StringIO()
        writer = csv.DictWriter(
            text, fieldnames=["stack", "slot", "core", "layer", "sub_id"], lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(rows)
        write_text_atomic(out / "co_slots.csv", text.getvalue())
        self.schedule.write(out)
        summary = self.schedule.summary()
        summary["search"] = self.co_summary()
        write_json_atomic(out / "summary.json", summary)
        return {
            name: out / name
            for name in ("allocation.yaml", "co_slots.csv", "summary.json", "schedule.csv")
        }


def optimize_co(
    accelerator: str | Path | MultiCoreAccelerator,
    workload: str | Path,
    mapping: str | Path | StreamMapping | None,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None = None,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    gap: float = DEFAULT_GAP,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
    operands_to_prefetch: Sequence[str] = (),
    output: str | Path | None = None,
    cwd: str | None = None,
    latency_model: str = AUTO_LATENCY,
) -> ConstraintSearch:
    """Allocate ``workload``'s layers to cores by constraint optimisation and schedule the result.

    ``time_limit`` (seconds) and ``gap`` (relative optimality gap) bound each stack's solve; the
    answer is the same on every run (one solver worker, fixed seed) unless a time limit stops a
    solve early.
    """
    begin = time.perf_counter()
    latency_model = resolve_latency_model(latency_model, workload)
    if not isinstance(accelerator, MultiCoreAccelerator):
        accelerator = load_multicore_accelerator(accelerator, cwd)
    if mapping is None:
        parsed = checked_automatic_mapping(accelerator, workload, lpf_limit=lpf_limit, cache=cache)
        if output is not None:
            write_mapping(parsed, Path(output) / "automatic_mapping.yaml")
    elif isinstance(mapping, StreamMapping):
        parsed = mapping
    else:
        parsed = load_stream_mapping(mapping, accelerator)
    stacks = [tuple(s) for s in layer_stacks] if layer_stacks else None
    hardware, graph, table, _ = allocation_inputs(
        accelerator,
        workload,
        parsed,
        mode,
        stacks,
        lpf_limit=lpf_limit,
        cache=cache,
        cost_lut_path=cost_lut_path,
        operands_to_prefetch=operands_to_prefetch,
        cwd=cwd,
    )
    return allocate_and_schedule(
        graph,
        hardware,
        table,
        workload,
        parsed,
        mode,
        stacks,
        time_limit=time_limit,
        gap=gap,
        lpf_limit=lpf_limit,
        cache=cache,
        operands_to_prefetch=operands_to_prefetch,
        output=output,
        cwd=cwd,
        began=begin,
        latency_model=latency_model,
    )


def allocate_and_schedule(
    graph: CNGraph,
    hardware: MultiCoreAccelerator,
    table: CostTable,
    workload: str | Path,
    mapping: StreamMapping,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    gap: float = DEFAULT_GAP,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
    post_cost_lut_path: str | Path | None = None,
    operands_to_prefetch: Sequence[str] = (),
    output: str | Path | None = None,
    cwd: str | None = None,
    began: float | None = None,
    latency_model: str = AUTO_LATENCY,
) -> ConstraintSearch:
    """The allocation of an already built CN graph (costed by ``table``) and the schedule of it
    as a fixed mapping (its split layers costed anew, ``post_cost_lut_path`` saving that table)."""
    begin = time.perf_counter() if began is None else began
    latency_model = resolve_latency_model(latency_model, workload)
    allocation = allocate(
        graph, hardware, table, time_limit=time_limit, gap=gap, latency_model=latency_model
    )
    mapping_path = str(mapping.file or "mapping")
    entries = co_mapping(mapping, graph, allocation.layer_cores)
    fixed = replace(parse_stream_mapping(entries, mapping_path), fused_groups=mapping.fused_groups)
    stacks = [tuple(s) for s in layer_stacks] if layer_stacks else None
    result = run_stream(
        hardware,
        workload,
        fixed,
        mode,
        stacks,
        lpf_limit=lpf_limit,
        cache=cache,
        cost_lut_path=post_cost_lut_path,
        operands_to_prefetch=operands_to_prefetch,
        cwd=cwd,
        latency_model=latency_model,
    )
    search = ConstraintSearch(
        graph, allocation, entries, mapping_path, result, time.perf_counter() - begin
    )
    if output is not None:
        search.write(output)
    return search
