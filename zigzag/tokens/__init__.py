"""Per-token figures of LLM inference (docs/models/per-token.md): time to first token, time per
output token, tokens per second, energy per token, weight and KV-cache footprints and whether they
fit on chip, the physical lower bound of a DRAM-bound step, and a roofline per layer.

    from zigzag.tokens import per_token_figures, roofline_rows
    figures = per_token_figures(network_result, clock_ghz=1.0)   # network_result: zigzag.api.run(...)
"""

from zigzag.tokens.figures import TokenFigures, per_token_figures
from zigzag.tokens.metadata import read_inference
from zigzag.tokens.roofline import roofline_rows

__all__ = ["TokenFigures", "per_token_figures", "read_inference", "roofline_rows"]
