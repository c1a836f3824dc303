"""Hardware sweeps: variants of an accelerator evaluated on workloads, with tables, Pareto fronts
and figures (see docs/reference/sweeps.md).

    from zigzag.sweep import run_sweep
    rows = run_sweep({"base": "inputs/hardware/flow_tpu_32x32.yaml",
                      "vary": {"memories.unified_buffer.size": ["1MiB", "3MiB"]},
                      "workloads": ["inputs/workload/resnet18.onnx"],
                      "mapping": "inputs/mapping/flow_tpu_32x32.yaml"}, "results/my_sweep")
"""

from zigzag.sweep.config import Sweep, read_sweep
from zigzag.sweep.api import run_sweep, search_sweep
from zigzag.sweep.runner import variants_of

__all__ = ["Sweep", "read_sweep", "run_sweep", "search_sweep", "variants_of"]
