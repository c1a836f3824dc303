"""ZigZag's Python API: ``get_hardware_performance_zigzag`` with the same arguments and return value.

A ZigZag user's script runs unchanged apart from the import::

    from zigzag.api import get_hardware_performance_zigzag
    energy, latency, cmes = get_hardware_performance_zigzag(workload, accelerator, mapping, opt="energy")
    total, per_layer = cmes[0]
    for cme, (layer, _) in per_layer:
        print(layer.name, cme.energy_total, cme.latency_total2)
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from zigzag.io.loaders import load_inputs
from zigzag.io.run_files import save_network_outputs
from zigzag.notes import collected_warnings
from zigzag.mapping_search.network import NetworkResult, evaluate_network
from zigzag.mapping_search.options import SearchOptions, resolve_options

logger = logging.getLogger(__name__)


def get_hardware_performance_zigzag(
    workload,
    accelerator,
    mapping,
    *,
    temporal_mapping_search_engine: str = "loma",
    opt: str = "latency",
    dump_folder: str | Path | None = None,
    pickle_filename: str | Path | None = None,
    lpf_limit: int = 6,
    nb_spatial_mappings_generated: int = 3,
    in_memory_compute: bool = False,
    exploit_data_locality: bool = False,
    enable_mix_spatial_mapping: bool = False,
    loma_show_progress_bar: bool = True,
    temporal_mapping_type: str = "uneven",
    **options,
):
    """Best mapping of every layer of ``workload`` on ``accelerator``; returns
    ``(energy in pJ, latency in cycles, [(total, [(layer_result, (layer, [])), ...])])``.

    As in ZigZag, ``enable_mix_spatial_mapping=True`` also turns on ``exploit_data_locality``,
    and ``in_memory_compute=True`` turns on both and returns
    ``(energy, latency, tclk in ns, area in mm², cmes)`` with the clock period and area of the
    first evaluated layer. (An in-memory-computing accelerator is costed with the IMC model
    whatever this flag says.) ``options`` takes any other option of the option table
    (``zigzag.mapping_search.options.OPTIONS``, also listed by ``zigzag run --help``), e.g.
    ``evaluate_all_operators=True`` (ONNX pooling / element-wise operators as layers),
    ``operators="all"`` (every ONNX operator as layers of the operator model),
    ``salsa_seed``, ``access_same_data_considered_as_no_access``.
    """
    mixing = enable_mix_spatial_mapping or in_memory_compute
    search_options, workload_options = resolve_options(
        {
            "opt": opt,
            "lpf_limit": lpf_limit,
            "nb_spatial_mappings_generated": nb_spatial_mappings_generated,
            "temporal_mapping_search_engine": temporal_mapping_search_engine,
            "temporal_mapping_type": temporal_mapping_type,
            "enable_mix_spatial_mapping": mixing,
            "exploit_data_locality": exploit_data_locality or mixing,
            **options,
        }
    )
    with collected_warnings() as notes:
        result = run(
            workload,
            accelerator,
            mapping,
            search_options,
            **workload_options,
            show_progress=None if loma_show_progress_bar else False,
        )
    folder = (
        Path(dump_folder)
        if dump_folder is not None
        else Path("outputs") / datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    )
    save_network_outputs(result, folder, pickle_filename=pickle_filename, notes=notes)
    per_layer = [(cost, (layer, [])) for layer, cost in result.layers]
    cmes = [(result.total, per_layer)]
    if in_memory_compute:
        first = per_layer[0][0] if per_layer else None
        tclk = None if first is None else first.tclk
        area = None if first is None else first.area_total
        return result.energy, result.latency, tclk, area, cmes
    return result.energy, result.latency, cmes


def get_hardware_performance_zigzag_imc(*args):
    """``get_hardware_performance_zigzag(workload, accelerator, mapping, in_memory_compute=True)``:
    returns ``(energy in pJ, latency in cycles, tclk in ns, area in mm², cmes)``. Like ZigZag's,
    it takes the three inputs positionally and nothing else; for other options call
    ``get_hardware_performance_zigzag(..., in_memory_compute=True)``."""
    return get_hardware_performance_zigzag(*args, in_memory_compute=True)


def run(
    workload,
    accelerator,
    mapping,
    options: SearchOptions = SearchOptions(),
    *,
    evaluate_all_operators: bool = False,
    operators: str = "zigzag",
    causal_blocks: int = 8,
    show_progress: bool | None = None,
) -> NetworkResult:
    """Load the three inputs and search the whole network (no files written)."""
    layers, hardware = load_inputs(
        workload,
        accelerator,
        mapping,
        evaluate_all_operators=evaluate_all_operators,
        operators=operators,
        causal_blocks=causal_blocks,
    )
    return evaluate_network(
        layers,
        hardware,
        options,
        show_progress=show_progress,
        on_layer=lambda layer, cost: logger.info(
            "%s: energy %.6g pJ, latency %.6g cycles",
            layer.name,
            cost.energy_total,
            cost.latency_total2,
        ),
    )
