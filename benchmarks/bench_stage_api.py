#!/usr/bin/env python3
"""The Stage API against the plain API on the same search: CPU time of each, their ratio.

Two cases, both from the README's "Writing your own stage":

* ``stage-example``: the Stage pipeline of the README (ResNet-18 on ``flow_tpu_32x32``,
  ``loma_lpf_limit=6``, ``MinimalLatencyStage``) against ``get_hardware_performance_zigzag`` with
  the same inputs and options;
* ``memory-sweep``: the README's ``MemorySizeSweepStage`` pipeline (three sizes of
  ``unified_buffer``, ``MinimalEnergyStage``) against the API's engine
  (``zigzag.mapping_search.network.evaluate_network``) run on the same three resized accelerators.

Each side runs once to warm up, then ``--repeat`` times alternately; the lowest CPU time
(``time.process_time``, this process only) is printed, with the machine load before and after.
Both sides must give the same totals (checked; the script stops otherwise).

    python benchmarks/bench_stage_api.py [--repeat 3] [--case stage-example|memory-sweep]
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from zigzag.api import get_hardware_performance_zigzag  # noqa: E402
from zigzag.io.loaders import load_inputs  # noqa: E402
from zigzag.mapping_search.network import evaluate_network  # noqa: E402
from zigzag.mapping_search.options import SearchOptions  # noqa: E402
from zigzag.stages import *  # noqa: E402,F403
from zigzag.stages import Stage  # noqa: E402

WORKLOAD = str(ROOT / "inputs/workload/resnet18.onnx")
ACCELERATOR = str(ROOT / "inputs/hardware/flow_tpu_32x32.yaml")
MAPPING = str(ROOT / "inputs/mapping/flow_tpu_32x32.yaml")
SWEEP_MEMORY = "unified_buffer"
SWEEP_SIZES = [2**20 * 8, 2**21 * 8, 2**22 * 8]


def resized(accelerator, memory_name: str, size: int):
    """The README's resizing: access costs scaled with the square root of the size."""
    memories = []
    for memory in accelerator.memories:
        if memory.name == memory_name:
            scale = (size / memory.size) ** 0.5
            memory = dataclasses.replace(
                memory, size=size, r_cost=memory.r_cost * scale, w_cost=memory.w_cost * scale
            )
        memories.append(memory)
    return dataclasses.replace(
        accelerator, name=f"{accelerator.name}-{memory_name}-{size}", memories=tuple(memories)
    )


class MemorySizeSweepStage(Stage):
    """The README's sweep stage: the rest once per size, the lowest-energy result kept."""

    def __init__(self, list_of_callables, *, accelerator, sweep_memory, sweep_sizes, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator, self.sweep_memory, self.sweep_sizes = (
            accelerator,
            sweep_memory,
            sweep_sizes,
        )

    def run(self):
        best = None
        for size in self.sweep_sizes:
            child = self.list_of_callables[0](
                self.list_of_callables[1:],
                accelerator=resized(self.accelerator, self.sweep_memory, size),
                **self.kwargs,
            )
            for result, extra_info in child.run():
                if best is None or result.energy_total < best[0].energy_total:
                    best = (result, (size, extra_info))
        if best is not None:
            yield best


def stage_example(dump: str) -> tuple[float, float]:
    cmes = MainStage(
        [
            WorkloadParserStage,
            AcceleratorParserStage,
            SimpleSaveStage,
            SumStage,
            WorkloadStage,
            MinimalLatencyStage,
            SpatialMappingGeneratorStage,
            MinimalLatencyStage,
            TemporalMappingGeneratorStage,
            CostModelStage,
        ],
        workload=WORKLOAD,
        accelerator=ACCELERATOR,
        mapping=MAPPING,
        dump_folder=dump,
        loma_lpf_limit=6,
    ).run()
    total, _ = cmes[0]
    return total.energy_total, total.latency_total2


def api_example(dump: str) -> tuple[float, float]:
    energy, latency, _ = get_hardware_performance_zigzag(
        WORKLOAD, ACCELERATOR, MAPPING, opt="latency", lpf_limit=6, dump_folder=dump
    )
    return energy, latency


def stage_sweep(dump: str) -> tuple[float, float]:
    cmes = MainStage(
        [
            WorkloadParserStage,
            AcceleratorParserStage,
            MemorySizeSweepStage,
            SumStage,
            WorkloadStage,
            MinimalEnergyStage,
            SpatialMappingGeneratorStage,
            MinimalEnergyStage,
            TemporalMappingGeneratorStage,
            CostModelStage,
        ],
        workload=WORKLOAD,
        accelerator=ACCELERATOR,
        mapping=MAPPING,
        sweep_memory=SWEEP_MEMORY,
        sweep_sizes=SWEEP_SIZES,
        loma_lpf_limit=6,
    ).run()
    total, _ = cmes[0]
    return total.energy_total, total.latency_total2


def api_sweep(dump: str) -> tuple[float, float]:
    workload, accelerator = load_inputs(WORKLOAD, ACCELERATOR, MAPPING)
    options = SearchOptions(opt="energy", lpf_limit=6)
    results = [
        evaluate_network(workload, resized(accelerator, SWEEP_MEMORY, size), options).total
        for size in SWEEP_SIZES
    ]
    best = min(
        results, key=lambda total: total.energy_total
    )  # first of equals, as the stage keeps it
    return best.energy_total, best.latency_total2


CASES = {"stage-example": (stage_example, api_example), "memory-sweep": (stage_sweep, api_sweep)}


def cpu_time(function, dump: str) -> tuple[float, tuple[float, float]]:
    start = time.process_time()
    totals = function(dump)
    return time.process_time() - start, totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    print(f"machine load (1, 5, 15 min) before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as dump:
        for case in args.case or list(CASES):
            stage_run, api_run = CASES[case]
            _, stage_totals = cpu_time(stage_run, dump)  # warm-up
            _, api_totals = cpu_time(api_run, dump)
            if stage_totals != api_totals:
                raise SystemExit(
                    f"{case}: the Stage API gives {stage_totals}, the API {api_totals}"
                )
            stage_times, api_times = [], []
            for _ in range(args.repeat):
                stage_times.append(cpu_time(stage_run, dump)[0])
                api_times.append(cpu_time(api_run, dump)[0])
            stage_s, api_s = min(stage_times), min(api_times)
            print(
                f"{case}: Stage API {stage_s:.3f} s CPU, API {api_s:.3f} s CPU, ratio {stage_s / api_s:.2f} "
                f"(energy {stage_totals[0]:.6g} pJ, latency {stage_totals[1]:.6g} cycles, both)"
            )
    print(f"machine load (1, 5, 15 min) after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
