"""What a schedule gives: totals, per-CN table, transfers, link events and memory timelines."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from zigzag.io.atomic import write_json_atomic, write_text_atomic
from zigzag.multicore.schedule.dram_links import dram_link_check, warn_if_overcommitted
from zigzag.multicore.schedule.trace import write_trace
from zigzag.multicore.schedule.traffic import streamed_dram_bits

if TYPE_CHECKING:
    from zigzag.multicore.schedule.links import LinkEvent
    from zigzag.multicore.schedule.problem import ScheduleProblem


@dataclass(frozen=True)
class Totals:
    """Stream's nine energy terms; ``energy`` is their sum in this order."""

    total_cn_onchip_energy: float = 0.0
    total_cn_offchip_link_energy: float = 0.0
    total_cn_offchip_memory_energy: float = 0.0
    total_eviction_to_offchip_link_energy: float = 0.0
    total_eviction_to_offchip_memory_energy: float = 0.0
    total_sink_layer_output_offchip_link_energy: float = 0.0
    total_sink_layer_output_offchip_memory_energy: float = 0.0
    total_core_to_core_link_energy: float = 0.0
    total_core_to_core_memory_energy: float = 0.0

    TERMS = (
        "total_cn_onchip_energy",
        "total_cn_offchip_link_energy",
        "total_cn_offchip_memory_energy",
        "total_eviction_to_offchip_link_energy",
        "total_eviction_to_offchip_memory_energy",
        "total_sink_layer_output_offchip_link_energy",
        "total_sink_layer_output_offchip_memory_energy",
        "total_core_to_core_link_energy",
        "total_core_to_core_memory_energy",
    )

    @property
    def energy(self) -> float:
        total = 0.0
        for f in fields(self):
            total = total + getattr(self, f.name)
        return total

    def as_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class Transfer(NamedTuple):
    """One tensor transfer: kind is offchip_to_core, core_to_core, within_core (between two top memories of
    one core, no link), eviction_writeback or sink_writeback."""

    kind: str
    cn: int  # the CN being scheduled when it was made (-1: before scheduling, i.e. prefetch)
    tensor: int
    sender: int
    receiver: int
    memory_operand: int  # receiver side
    start: float
    end: float
    link_energy: float
    memory_energy: float


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)  # NaN and infinities stay floats


@dataclass(frozen=True)
class ScheduleResult:
    """One schedule of a :class:`ScheduleProblem`."""

    problem: "ScheduleProblem"
    start: np.ndarray  # per CN
    end: np.ndarray
    latency: float
    totals: Totals
    transfers: tuple[Transfer, ...]
    link_events: tuple[tuple["LinkEvent", ...], ...]  # per link
    timelines: tuple[list[tuple[int, int]], ...]  # per top memory: (time, bits) points
    # per top memory: (time, tensor, +bits stored / -bits freed), in the order they happened
    memory_log: tuple[tuple[tuple[float, int, int], ...], ...] = ()

    @property
    def energy(self) -> float:
        return self.totals.energy

    def peak_memory(self) -> dict[str, int]:
        """Peak usage (bits) of every top memory, keyed ``<name>@core<first core>``."""
        mems = self.problem.hardware.memories
        return {m.label: max(b for _, b in tl) for m, tl in zip(mems, self.timelines)}

    def dram_traffic(self) -> dict[str, float]:
        """Bits to and from the off-chip memory, one definition for every table: ``moved_bits``
        (whole tensors sent from or to the off-chip core: inputs and weights fetched, evictions,
        final outputs), ``streamed_bits`` (operands a CN too large for its core reads from or
        writes to DRAM while it runs: the cost model's accesses of the DRAM level, i.e. each
        operand's size x the times it is fetched), ``read_bits`` / ``write_bits`` (the same traffic
        by direction) and ``traffic_bits`` (the total). Streamed bits are NaN for a problem whose
        costs do not say them (``ScheduleProblem.dram_bits``)."""
        p = self.problem
        offchip = p.hardware.offchip_core
        moved_read = sum(
            int(p.tensor_size[t.tensor]) for t in self.transfers if t.sender == offchip
        )
        moved_write = sum(
            int(p.tensor_size[t.tensor]) for t in self.transfers if t.receiver == offchip
        )
        streamed_read = streamed_write = 0.0
        for n in range(p.nb_cns):
            for _, read, write in streamed_dram_bits(p, n):
                streamed_read += read
                streamed_write += write
        read, write = moved_read + streamed_read, moved_write + streamed_write
        return {
            "moved_bits": _number(moved_read + moved_write),
            "streamed_bits": _number(streamed_read + streamed_write),
            "read_bits": _number(read),
            "write_bits": _number(write),
            "traffic_bits": _number(read + write),
        }

    def summary(self) -> dict:
        p = self.problem
        out: dict = {"latency": _number(self.latency), "energy": self.energy}
        out.update(self.totals.as_dict())
        out["nb_cns"] = p.nb_cns
        out["nb_edges"] = p.nb_edges
        out["nb_transfers"] = len(self.transfers)
        out["peak_memory_bits"] = self.peak_memory()
        out.update({f"dram_{name}": bits for name, bits in self.dram_traffic().items()})
        out.update(self.dram_link_check())
        return out

    def dram_link_check(self) -> dict:
        """The most loaded DRAM link and whether it moves more than it can carry
        (:func:`zigzag.multicore.schedule.dram_links.dram_link_check`)."""
        return dram_link_check(self)

    def cn_rows(self) -> list[dict]:
        """One row per CN in ``(layer_id, sub_id)`` order."""
        p = self.problem
        rows = []
        for n in np.lexsort((p.sub, p.layer)).tolist():
            rows.append(
                {
                    "layer_id": int(p.layer[n]),
                    "sub_id": int(p.sub[n]),
                    "core": int(p.core[n]),
                    "start": _number(self.start[n]),
                    "end": _number(self.end[n]),
                    "runtime": _number(p.runtime[n]),
                    "onchip_energy": float(p.onchip_energy[n]),
                    "offchip_energy": float(p.offchip_energy[n]),
                }
            )
        return rows

    def write(self, folder: str | Path) -> None:
        """Write ``summary.json``, ``schedule.csv`` and ``schedule_trace.json`` (for pictures) into ``folder``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        summary = self.summary()
        warn_if_overcommitted(self, summary)
        write_json_atomic(folder / "summary.json", summary)
        rows = self.cn_rows()
        text = io.StringIO()
        writer = csv.DictWriter(
            text, fieldnames=list(rows[0]) if rows else ["layer_id"], lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(rows)
        write_text_atomic(folder / "schedule.csv", text.getvalue())
        write_trace(self, folder)
