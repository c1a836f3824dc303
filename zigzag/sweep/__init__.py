"""Hardware sweeps: variants of an accelerator evaluated on workloads, with tables, Pareto fronts
and figures (see docs/reference/sweeps.md).

    from zigzag.sweep import run_sweep
    rows = run_sweep({"base": "inputs/hardware/flow_tpu_32x32.yaml",
                      "vary": {"memories.unified_buffer.size": ["1MiB", "3MiB"]},
                      "workloads": ["inputs/workload/resnet18.onnx"],
                      "mapping": "inputs/mapping/flow_tpu_32x32.yaml"}, "results/my_sweep")
"""

from zigzag.lazy import lazy_api

#: the package's API and the module defining each name: loaded on first use, so that importing one
#: module of the package (``zigzag --help`` and the report read ``zigzag.sweep.tables``) does not
#: load the whole sweep machinery
_API = {
    "Sweep": "config",
    "read_sweep": "config",
    "run_sweep": "api",
    "search_sweep": "api",
    "variants_of": "runner",
}

__all__ = sorted(_API)

__getattr__ = lazy_api(__name__, _API)
