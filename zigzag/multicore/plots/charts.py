"""Static charts of Stream runs: memory usage over time, energy breakdown, allocation front."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.schedule.trace import ScheduleTrace

#: the nine energy terms grouped as the energy bars show them
ENERGY_GROUPS = {
    "on-chip (CN compute + memories)": ("total_cn_onchip_energy",),
    "off-chip (CN operands streamed from DRAM)": (
        "total_cn_offchip_link_energy",
        "total_cn_offchip_memory_energy",
    ),
    "core to core": ("total_core_to_core_link_energy", "total_core_to_core_memory_energy"),
    "evictions to DRAM": (
        "total_eviction_to_offchip_link_energy",
        "total_eviction_to_offchip_memory_energy",
    ),
    "sink (final outputs to DRAM)": (
        "total_sink_layer_output_offchip_link_energy",
        "total_sink_layer_output_offchip_memory_energy",
    ),
}
GROUP_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b2")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _bytes(bits: float) -> str:
    value = bits / 8
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.4g} {unit}"
        value /= 1024
    return f"{value:.4g} GiB"


#: the colours of what a memory holds (weights, KV cache, activations) in the memory-usage picture
ROLE_COLORS = {"weights": "tab:orange", "kv_cache": "tab:purple", "activations": "tab:green"}


def memory_usage_png(
    trace: ScheduleTrace,
    path: str | Path,
    dpi: int = 120,
    *,
    window: tuple[float, float] | None = None,
    include_offchip: bool = False,
    figsize: tuple[float, float] | None = None,
) -> Path:
    """Usage over time of every on-chip top memory (one panel each), its capacity and its peak.

    ``window``: the time span shown (default the whole schedule); ``include_offchip``: draw the
    off-chip memory too; ``figsize``: the picture's size in inches (default from the panel count).
    """
    plt = _pyplot()
    memories = [m for m in trace.memories if include_offchip or not m.offchip]
    if not memories:
        raise InputError(None, "memories", "the schedule has no on-chip top memory to draw")
    size = figsize or (12, 0.4 + 1.55 * len(memories))
    fig, axes = plt.subplots(len(memories), 1, figsize=size, sharex=True, squeeze=False)
    end = max(trace.latency, 1)
    for ax, mem in zip(axes[:, 0], memories):
        t = np.append(mem.time, max(end, mem.time[-1] if len(mem.time) else 0))
        kib = np.append(mem.bits, mem.bits[-1] if len(mem.bits) else 0) / 8192
        ax.step(t, kib, where="post", color="tab:blue", lw=1)
        if mem.role_bits:  # what the stored bits hold, stacked
            rt = np.append(mem.role_time, max(end, mem.role_time[-1] if len(mem.role_time) else 0))
            below = np.zeros(len(rt))
            for role, color in ROLE_COLORS.items():
                bits = mem.role_bits.get(role, np.zeros(0))
                above = below + np.append(bits, bits[-1] if len(bits) else 0) / 8192
                ax.fill_between(rt, below, above, step="post", color=color, alpha=0.45, lw=0)
                below = above
        else:
            ax.fill_between(t, kib, step="post", color="tab:blue", alpha=0.25)
        ax.axhline(mem.capacity / 8192, color="tab:red", ls="--", lw=1)
        peak = int(np.argmax(mem.bits)) if len(mem.bits) else 0
        if len(mem.bits):
            ax.plot([mem.time[peak]], [mem.bits[peak] / 8192], marker="v", color="black", ms=6)
        share = f"{100 * mem.peak / mem.capacity:.1f}%" if mem.capacity else "-"
        cores = ", ".join(map(str, mem.cores))
        ax.set_title(
            f"{mem.label.split('@')[0]} (core{'s' if len(mem.cores) > 1 else ''} {cores}): "
            f"peak {_bytes(mem.peak)} of {_bytes(mem.capacity)} ({share})",
            fontsize=8,
            loc="left",
        )
        ax.set_ylim(0, max(mem.capacity, mem.peak) / 8192 * 1.08)
        ax.set_ylabel("KiB", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlim(*(window or (0, end)))
    axes[-1, 0].set_xlabel("time (cycles)")
    handles = [
        plt.Line2D([], [], color="tab:blue", label="stored"),
        *(
            plt.Rectangle((0, 0), 1, 1, color=color, alpha=0.45, label=role.replace("_", " "))
            for role, color in ROLE_COLORS.items()
            if any(m.role_bits for m in memories)
        ),
        plt.Line2D([], [], color="tab:red", ls="--", label="capacity"),
        plt.Line2D([], [], color="black", marker="v", ls="", label="peak"),
    ]
    fig.legend(handles=handles, loc="upper right", fontsize=8, ncol=len(handles))
    fig.suptitle(f"{trace.name}: top-memory usage over time", fontsize=10, x=0.01, ha="left")
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return Path(path)


def energy_groups(summary: Mapping[str, float]) -> dict[str, float]:
    """The nine energy terms of a ``summary.json`` summed into the five groups of the bars."""
    missing = [t for terms in ENERGY_GROUPS.values() for t in terms if t not in summary]
    if missing:
        raise InputError(
            None, missing[0], "not in the summary; pass the summary.json of a Stream run"
        )
    return {group: float(sum(summary[t] for t in terms)) for group, terms in ENERGY_GROUPS.items()}


def energy_breakdown_png(
    summaries: Mapping[str, Mapping[str, float]], path: str | Path, dpi: int = 120
) -> Path:
    """Stacked horizontal bars, one per experiment: its energy by group (pJ)."""
    plt = _pyplot()
    names = list(summaries)
    groups = {name: energy_groups(s) for name, s in summaries.items()}
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.45 * len(names)))
    left = np.zeros(len(names))
    for group, colour in zip(ENERGY_GROUPS, GROUP_COLOURS):
        values = np.array([groups[n][group] for n in names])
        ax.barh(range(len(names)), values, left=left, color=colour, label=group, height=0.6)
        left += values
    for y, total in enumerate(left):
        ax.text(total, y, f" {total:.4g} pJ", va="center", fontsize=8)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(left.max(initial=0), 1) * 1.2)
    ax.set_xlabel("energy (pJ)")
    ax.set_title("Energy breakdown", fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return Path(path)


def read_front(path: str | Path) -> list[dict]:
    """Rows of a ``front.csv`` (``energy``, ``latency``, ``allocation``) as dicts with floats."""
    try:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except FileNotFoundError:
        raise InputError(
            path, None, "no such front file; run 'zigzag multicore search' first"
        ) from None
    if not rows or not {"energy", "latency"} <= set(rows[0]):
        raise InputError(
            path,
            "header",
            "a front needs the columns energy, latency, allocation (one row per point)",
        )
    try:
        return [{**r, "energy": float(r["energy"]), "latency": float(r["latency"])} for r in rows]
    except ValueError as exc:
        raise InputError(path, "energy/latency", f"not a number ({exc})") from None


def pareto_front_png(
    front: Sequence[dict],
    path: str | Path,
    chosen: tuple[float, float] | None = None,
    title: str = "Allocation search: Pareto front",
    dpi: int = 120,
) -> Path:
    """Energy against latency of every front point, the front as a step line, the chosen point starred.

    ``chosen`` = (energy, latency) of the chosen point (default: the lowest latency, Stream's choice).
    """
    plt = _pyplot()
    if not front:
        raise InputError(None, "front", "the front is empty")
    pts = sorted((p["latency"], p["energy"]) for p in front)
    lat, en = np.array(pts).T
    if chosen is None:
        best = min(front, key=lambda p: (p["latency"], p["energy"]))
        chosen = (best["energy"], best["latency"])
    fig, ax = plt.subplots(figsize=(7, 4.8))
    ax.step(lat, en, where="post", color="0.6", lw=1, zorder=1)
    ax.scatter(lat, en, color="tab:blue", s=28, zorder=2, label=f"front ({len(front)} points)")
    ax.scatter(
        [chosen[1]],
        [chosen[0]],
        marker="*",
        s=260,
        color="tab:red",
        edgecolors="black",
        zorder=3,
        label=f"chosen: {chosen[1]:.4g} cycles, {chosen[0]:.4g} pJ",
    )
    ax.set_xlabel("latency (cycles)")
    ax.set_ylabel("energy (pJ)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.ticklabel_format(style="sci", scilimits=(-3, 4))
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return Path(path)
