"""The constraint-optimisation allocation as found: each stack's steady-state slots and the
allocation as a fixed mapping (Stream's ``optimize_allocation_co``, solved with OR-Tools CP-SAT).

:class:`ConstraintSearch` is what :func:`zigzag.multicore.pipeline.allocate` gives for a
:class:`~zigzag.multicore.pipeline.ConstraintOptimisation` run; the run folder's writer
(:mod:`zigzag.multicore.pipeline.folder`) saves its ``allocation.yaml`` (which ``zigzag multicore
run`` schedules to the same figures), ``co_slots.csv`` and the ``search`` section of
``summary.json`` (objective per stack, solver status and seconds).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import yaml

from zigzag.multicore.allocation.constraint import CoAllocation, parts_table
from zigzag.multicore.cn_graph import CNGraph
from zigzag.multicore.mapping import StreamMapping, parse_stream_mapping


@dataclass(frozen=True)
class ConstraintSearch:
    """A finished constraint-optimisation allocation: the slots, the allocation as mapping entries
    and the seconds it took."""

    graph: CNGraph
    allocation: CoAllocation
    mapping: list[dict]
    mapping_path: str
    seconds: float

    def fixed_mapping(self) -> StreamMapping:
        """The allocation as a parsed fixed mapping (what the schedule runs)."""
        return parse_stream_mapping(self.mapping, self.mapping_path)

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

    def allocation_yaml(self) -> str:
        """``allocation.yaml``: the allocation as a fixed mapping, with a header naming its source."""
        header = f"# fixed allocation found by the constraint optimisation from {Path(self.mapping_path).name}\n"
        return header + yaml.safe_dump(self.mapping, sort_keys=False)

    def slots_csv(self) -> str:
        """``co_slots.csv``: one row per scheduled part (stack, slot, core, layer, sub id)."""
        text = io.StringIO()
        writer = csv.DictWriter(
            text, fieldnames=["stack", "slot", "core", "layer", "sub_id"], lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(parts_table(self.graph, self.allocation))
        return text.getvalue()
