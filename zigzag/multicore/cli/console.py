"""The terminal lines of the ``multicore`` commands beyond their totals: the DRAM link's demand, a
transformer step's per-token figures, and progress lines printed above a progress bar."""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["TqdmStream", "demand_note", "print_tokens"]


def demand_note(summary: dict) -> str:
    """The run line's DRAM link figure: bits moved over what the busiest DRAM link can carry."""
    demand = summary.get("dram_link_demand")
    if demand is None or demand != demand or not demand:  # no DRAM link, or streamed bits unknown
        return ""
    flag = (
        " (above 1: not reachable, see the warning)"
        if summary.get("dram_link_overcommitted")
        else ""
    )
    return f", DRAM link demand {demand:.3f}{flag} [{summary.get('latency_model', 'zigzag')}]"


def print_tokens(output: str) -> None:
    """The per-token line of a transformer step's run (from its summary.json)."""
    tokens = json.loads((Path(output) / "summary.json").read_text()).get("per_token")
    if not tokens:
        return
    step = "time to first token" if tokens["phase"] == "prefill" else "time per output token"
    seconds = (
        ""
        if tokens.get("step_s") is None
        else f" = {tokens['step_s'] * 1e3:.6g} ms at {tokens['clock_ghz']:g} GHz ({tokens['tokens_per_s']:.6g} tokens/s)"
    )
    print(
        f"{tokens['phase']} step ({tokens['batch']} x {tokens['tokens']} tokens, context {tokens['context']}): "
        f"{step} {tokens['step_cycles']:.10g} cycles{seconds}, {tokens['energy_per_token_pJ']:.6g} pJ per token; "
        f"DRAM link busy {tokens['dram_link_busy_share']:.0%} of the step, moving "
        f"{tokens['dram_link_demand']:.0%} of what it can carry"
        + (f"; {tokens['bound_note']}" if tokens.get("bound_note") else "")
    )


class TqdmStream:
    """A file-like object printing through tqdm (lines above the progress bar, on stderr)."""

    def write(self, text: str) -> None:
        from tqdm import tqdm

        if text.strip():
            tqdm.write(text.rstrip("\n"), file=sys.stderr)

    def flush(self) -> None:
        pass
