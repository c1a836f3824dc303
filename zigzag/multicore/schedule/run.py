"""Stream from files: hardware + ONNX workload + mapping → CN graph → cost table → schedule."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from zigzag.errors import InputError
from zigzag.io.atomic import write_json_atomic
from zigzag.search.options import SearchOptions
from zigzag.multicore.cost_table import CostTable
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.inputs import cn_graph_from_files
from zigzag.multicore.mapping import StreamMapping
from zigzag.multicore.schedule.adapter import problem_from_cn_graph
from zigzag.multicore.schedule.costs import cn_costs
from zigzag.multicore.schedule.result import ScheduleResult
from zigzag.multicore.schedule.scheduler import schedule
from zigzag.multicore.schedule.tokens import export_figures
from zigzag.multicore.schedule.tokens import AUTO_LATENCY, accelerator_clock, resolve_latency_model
from zigzag.multicore.topology import load_multicore_accelerator


def run_stream(
    accelerator: str | Path | MultiCoreAccelerator,
    workload: str | Path,
    mapping: str | Path | StreamMapping,
    mode: str,
    layer_stacks: Sequence[Sequence[int]] | None = None,
    *,
    lpf_limit: int = 6,
    cache: str | Path | None = None,
    cost_lut_path: str | Path | None = None,
    operands_to_prefetch: Sequence[str] = (),
    output: str | Path | None = None,
    cwd: str | None = None,
    clock_ghz: float | None = None,
    latency_model: str = AUTO_LATENCY,
) -> ScheduleResult:
    """Schedule ``workload`` on the multi-core ``accelerator`` as Stream does (fixed allocations).

    ``cache``: folder of the content-addressed cost-table entries (reused across runs);
    ``cost_lut_path``: also read/write the whole cost table as one file; ``output``: write
    ``summary.json`` and ``schedule.csv`` there; ``cwd``: where core files are looked up from
    (Stream's rule; default: the working directory). The accelerator and the mapping may also be
    given already built (a :class:`MultiCoreAccelerator`, a parsed :class:`StreamMapping`).
    ``clock_ghz``: the clock of a transformer step's per-token figures in seconds (default: the
    accelerator file's ``clock_ghz``, else cycles only). ``latency_model``: ``zigzag`` (Stream's
    link model), ``bandwidth_bound`` (a CN streaming operands from DRAM lasts at least its DRAM
    bits over the link bandwidth it is granted) or ``auto`` (the default: ``bandwidth_bound`` for
    an LLM step, ``zigzag`` otherwise; docs/models/multi-core.md).
    """
    hardware = (
        accelerator
        if isinstance(accelerator, MultiCoreAccelerator)
        else load_multicore_accelerator(accelerator, cwd)
    )
    stacks = [tuple(s) for s in layer_stacks] if layer_stacks else None
    graph = cn_graph_from_files(hardware, workload, mapping, mode, stacks, cwd=cwd)
    if len(graph) and graph.core.min() < 0:
        raise InputError(
            getattr(mapping, "file", mapping),
            "core_allocation",
            "some layers may go to several cores; the scheduler needs "
            "one fixed core per layer (set core_allocation_is_fixed or give a single core)",
        )
    table = CostTable.for_accelerator(
        hardware,
        options=SearchOptions(opt="latency", lpf_limit=lpf_limit),
        cache=cache,
        lut_path=cost_lut_path,
    )
    costs = cn_costs(graph, table)
    if cost_lut_path is not None:
        table.save()
    result = schedule(
        problem_from_cn_graph(
            graph,
            hardware,
            costs,
            prefetch=tuple(operands_to_prefetch),
            name=Path(str(workload)).stem,
            latency_model=resolve_latency_model(latency_model, workload),
        )
    )
    if output is not None:
        result.write(output)
        clock = clock_ghz if clock_ghz is not None else accelerator_clock(hardware)
        write_token_figures(result, workload, output, clock)
    return result


def write_token_figures(
    result: ScheduleResult,
    workload,
    output,
    clock_ghz: float | None = None,
) -> None:
    """``per_token`` in ``summary.json`` when the workload is a transformer export."""
    if not str(workload).endswith(".onnx"):
        return
    figures = export_figures(result, workload, clock_ghz)
    if figures is not None:
        path = Path(output) / "summary.json"
        write_json_atomic(path, {**json.loads(path.read_text()), "per_token": figures})
