#!/usr/bin/env python3
"""Generate oracle test data from the *reference* ZigZag implementation.

Purpose
-------
Our package is a from-scratch reimplementation of ZigZag (KULeuven-MICAS/zigzag, PyPI package
``zigzag-dse``). The differential tests compare our results against numbers produced by the
reference. So that those tests can run in CI without the reference installed, this script runs the
reference once for a named set of cases and stores what it produced as JSON files under
``tests/data/oracle/<case>.json`` (plus ``tests/data/oracle/README.md``).

This script only *calls* the reference (its public API ``zigzag.api.get_hardware_performance_zigzag``
or, for candidate-enumeration cases, the reference's own stage classes assembled into the same
pipeline as the API builds, with two small recording stages of ours inserted). Nothing of the
reference is copied into this repository.

Requirements
------------
It must be run with the Python of a virtual environment that holds ``zigzag-dse==3.8.5`` (which
imports as ``zigzag`` -- the same import name as our package, so never run it with our package on
the path). Create one with::

    bash /work/shared/tools/reference-venv.sh /work/.venv-reference

Usage
-----
::

    nice -n 10 /work/.venv-reference/bin/python tools/make_oracle.py --list
    nice -n 10 /work/.venv-reference/bin/python tools/make_oracle.py --case gemm__gemm_l1
    nice -n 10 /work/.venv-reference/bin/python tools/make_oracle.py --case A --case B
    nice -n 10 /work/.venv-reference/bin/python tools/make_oracle.py --all [--force]
    nice -n 10 /work/.venv-reference/bin/python tools/make_oracle.py --readme-only

Cases whose JSON file already exists are skipped unless ``--force`` is given. Every case is written
as soon as it finishes. The reference's own dumps (pickles, per-layer JSON, plots) go to a temporary
folder that is removed afterwards. ``--ref-inputs DIR`` points at the reference's input files
(default ``/work/shared/reference/zigzag`` with ``hardware/``, ``mapping/``, ``workload/``); our own
input files live in ``tests/data``.

A full resnet18 case takes several minutes (about 7.5 min single-threaded for tpu_like).
The JSON schema is documented in the generated README.md (see ``README_SCHEMA`` below).
"""

from __future__ import annotations

import argparse
import copy
import datetime as _dt
import gzip
import json
import logging
import numbers
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
OUR_DATA = REPO_ROOT / "tests" / "data"
ORACLE_DIR = OUR_DATA / "oracle"
DEFAULT_REF_INPUTS = Path("/work/shared/reference/zigzag")
GZIP_THRESHOLD_BYTES = 5 * 1024 * 1024
REFERENCE_VERSION_REQUIRED = "3.8.5"

# Reference data-direction names -> the short names used in our JSON.
DIRECTION_SHORT = {
    "wr_in_by_high": "fh",
    "rd_out_to_low": "tl",
    "wr_in_by_low": "fl",
    "rd_out_to_high": "th",
}
DIRECTION_ORDER = ("fh", "tl", "fl", "th")

# Network totals from the reference's test_with_exploit_data_locality.
LOCALITY_EXPECTED = {
    ("resnet18.yaml", "tpu_like.yaml"): (2302362179.97, 5548138.0),
    ("resnet18.onnx", "tpu_like.yaml"): (1735241704.22, 3762552.5),
}


# --------------------------------------------------------------------------------------------
# Case definitions
# --------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    workload: str  # path relative to the base named in `workload_base`
    accelerator: str
    mapping: str
    options: dict[str, Any] = field(default_factory=dict)  # non-default API kwargs
    workload_base: str = "reference"  # "reference" (--ref-inputs) or "tests/data"
    accelerator_base: str = "reference"
    mapping_base: str = "reference"
    layer_id: int | None = None  # run only this layer (operand_source pointed at itself)
    candidates: bool = False  # record every cost-model evaluation
    expected: tuple[float, float] | None = None  # (energy_total, latency_total2)
    expected_source: str | None = None
    group: str = ""
    # keys removed from every memory of the accelerator file before the run (written to a temp copy)
    strip_memory_keys: tuple[str, ...] = ()


API_DEFAULTS: dict[str, Any] = {
    "temporal_mapping_search_engine": "loma",
    "temporal_mapping_type": "uneven",
    "opt": "latency",
    "lpf_limit": 6,
    "nb_spatial_mappings_generated": 3,
    "in_memory_compute": False,
    "exploit_data_locality": False,
    "enable_mix_spatial_mapping": False,
    "loma_show_progress_bar": False,
}


def _build_cases() -> dict[str, Case]:
    cases: list[Case] = []
    g1 = "1: expected.yaml networks"
    cases += [
        Case(
            "resnet18_yaml__tpu_like",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mapping/tpu_like.yaml",
            group=g1,
        ),
        Case(
            "resnet18_onnx__tpu_like",
            "workload/resnet18.onnx",
            "hardware/tpu_like.yaml",
            "mapping/tpu_like.yaml",
            group=g1,
        ),
        Case(
            "resnet18_yaml__ascend_like",
            "workload/resnet18.yaml",
            "hardware/ascend_like.yaml",
            "mapping/ascend_like.yaml",
            group=g1,
        ),
        Case(
            "resnet18_onnx__ascend_like",
            "workload/resnet18.onnx",
            "hardware/ascend_like.yaml",
            "mapping/ascend_like.yaml",
            group=g1,
        ),
        Case(
            "gemm__gemm_l1",
            "workload/gemm_layer.yaml",
            "hardware/gemm_l1.yaml",
            "mapping/gemm_l1.yaml",
            options={"lpf_limit": 3},
            group=g1,
        ),
        Case(
            "gemm__gemm_l1_l3",
            "workload/gemm_layer.yaml",
            "hardware/gemm_l1_l3.yaml",
            "mapping/gemm_l1_l3.yaml",
            group=g1,
        ),
        # zigzag-dse 3.8.5 (PyPI) rejects the `force_double_buffering` key of the shipped gemm_l1_l3.yaml;
        # the spec says the key has no effect on results, so also run a copy without it.
        Case(
            "gemm__gemm_l1_l3__no_fdb",
            "workload/gemm_layer.yaml",
            "hardware/gemm_l1_l3.yaml",
            "mapping/gemm_l1_l3.yaml",
            strip_memory_keys=("force_double_buffering",),
            group=g1,
        ),
    ]
    g2 = "2: single-layer candidate enumeration"
    for lid in (1, 2, 4, 30):
        cases.append(
            Case(
                f"resnet18_L{lid}__tpu_like",
                "workload/resnet18.yaml",
                "hardware/tpu_like.yaml",
                "mapping/tpu_like.yaml",
                layer_id=lid,
                candidates=True,
                group=g2,
            )
        )
    cases.append(
        Case(
            "resnet18_L2__tpu_like__even",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mapping/tpu_like.yaml",
            options={"temporal_mapping_type": "even"},
            layer_id=2,
            candidates=True,
            group=g2,
        )
    )
    cases.append(
        Case(
            "resnet18_L2__tpu_like__default_no_sm",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mappings/default_no_sm_tpu.yaml",
            mapping_base="tests/data",
            options={"nb_spatial_mappings_generated": 3},
            layer_id=2,
            candidates=True,
            group=g2,
        )
    )
    cases.append(
        Case(
            "resnet18_L2__tpu_like__default_no_sm__opt_energy",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mappings/default_no_sm_tpu.yaml",
            mapping_base="tests/data",
            options={"opt": "energy"},
            layer_id=2,
            candidates=True,
            group=g2,
        )
    )
    # even vs uneven differ on this synthetic layer (they coincide on resnet18 layer 2)
    for variant, opts in (("", {}), ("__even", {"temporal_mapping_type": "even"})):
        cases.append(
            Case(
                f"synth_bigconv__tpu_like{variant}",
                "workloads/synthetic_big_conv.yaml",
                "hardware/tpu_like.yaml",
                "mapping/tpu_like.yaml",
                workload_base="tests/data",
                options=opts,
                candidates=True,
                group=g2,
            )
        )
    for lid in (1, 2):
        cases.append(
            Case(
                f"resnet18_L{lid}__ascend_like",
                "workload/resnet18.yaml",
                "hardware/ascend_like.yaml",
                "mapping/ascend_like.yaml",
                layer_id=lid,
                candidates=True,
                group=g2,
            )
        )
    g3 = "3: resnet18.yaml on the other hardware"
    cases += [
        Case(
            "resnet18_yaml__eyeriss_like",
            "workload/resnet18.yaml",
            "hardware/eyeriss_like.yaml",
            "mapping/default.yaml",
            group=g3,
        ),
        Case(
            "resnet18_yaml__gemm_l1",
            "workload/resnet18.yaml",
            "hardware/gemm_l1.yaml",
            "mapping/gemm_l1.yaml",
            group=g3,
        ),
        Case(
            "resnet18_yaml__gemm_l1_l3",
            "workload/resnet18.yaml",
            "hardware/gemm_l1_l3.yaml",
            "mapping/gemm_l1_l3.yaml",
            group=g3,
        ),
        Case(
            "resnet18_yaml__gemm_l1_l3__no_fdb",
            "workload/resnet18.yaml",
            "hardware/gemm_l1_l3.yaml",
            "mapping/gemm_l1_l3.yaml",
            strip_memory_keys=("force_double_buffering",),
            group=g3,
        ),
    ]
    g4 = "4: optimisation-criterion / temporal-mapping-type variants"
    cases += [
        Case(
            "resnet18_yaml__tpu_like__opt_energy",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mapping/tpu_like.yaml",
            options={"opt": "energy"},
            group=g4,
        ),
        Case(
            "resnet18_yaml__tpu_like__opt_EDP",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mapping/tpu_like.yaml",
            options={"opt": "EDP"},
            group=g4,
        ),
        Case(
            "resnet18_yaml__tpu_like__even",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mapping/tpu_like.yaml",
            options={"temporal_mapping_type": "even", "opt": "latency"},
            group=g4,
        ),
    ]
    g5 = "5: exploit_data_locality"
    for wl in ("yaml", "onnx"):
        for hw in ("tpu_like", "ascend_like"):
            cases.append(
                Case(
                    f"resnet18_{wl}__{hw}__locality",
                    f"workload/resnet18.{wl}",
                    f"hardware/{hw}.yaml",
                    f"mapping/{hw}.yaml",
                    options={"exploit_data_locality": True},
                    group=g5,
                )
            )
    g6 = "6: mixed spatial mappings"
    cases += [
        Case(
            "resnet18_yaml__tpu_like__mixed",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mappings/tpu_like_mixed.yaml",
            mapping_base="tests/data",
            options={"enable_mix_spatial_mapping": True},
            group=g6,
        ),
        Case(
            "resnet18_yaml__tpu_like__mixed_hint",
            "workload/resnet18.yaml",
            "hardware/tpu_like.yaml",
            "mappings/tpu_like_mixed_hint.yaml",
            mapping_base="tests/data",
            options={"enable_mix_spatial_mapping": True},
            group=g6,
        ),
    ]
    g7 = "7: in-memory computing (get_hardware_performance_zigzag_imc)"
    imc = {"in_memory_compute": True}
    for wl in ("yaml", "onnx"):
        for hw in ("aimc", "dimc"):
            cases.append(
                Case(
                    f"resnet18_{wl}__{hw}",
                    f"workload/resnet18.{wl}",
                    f"hardware/{hw}.yaml",
                    "mapping/default_imc.yaml",
                    options=imc,
                    group=g7,
                )
            )
    # further IMC cases; lpf_limit 4 keeps the reference's run time reasonable on a shared machine
    quick = {**imc, "lpf_limit": 4}
    cases += [
        Case(
            "alexnet_onnx__aimc",
            "workload/alexnet.onnx",
            "hardware/aimc.yaml",
            "mapping/default_imc.yaml",
            options=imc,
            group=g7,
        ),
        Case(
            "mobilenetv2_onnx__dimc__lpf4",
            "workload/mobilenetv2.onnx",
            "hardware/dimc.yaml",
            "mapping/default_imc.yaml",
            options=quick,
            group=g7,
        ),
        Case(
            "resnet18_yaml__aimc__opt_energy__lpf4",
            "workload/resnet18.yaml",
            "hardware/aimc.yaml",
            "mapping/default_imc.yaml",
            options={**quick, "opt": "energy"},
            group=g7,
        ),
        # tests/data/hardware: aimc.yaml as a 64x32 array, 6-bit ADC, 4-bit serial input, non-zero
        # memory areas; dimc.yaml as two 32x256 macros (3-D array) with fully parallel input
        Case(
            "resnet18_yaml__aimc_64x32__lpf4",
            "workload/resnet18.yaml",
            "hardware/aimc_64x32.yaml",
            "mapping/default_imc.yaml",
            accelerator_base="tests/data",
            options=quick,
            group=g7,
        ),
        Case(
            "resnet18_onnx__dimc_32x256x2__lpf4",
            "workload/resnet18.onnx",
            "hardware/dimc_32x256x2.yaml",
            "mapping/default_imc.yaml",
            accelerator_base="tests/data",
            options=quick,
            group=g7,
        ),
    ]
    return {c.name: c for c in cases}


CASES = _build_cases()


def _attach_expected(cases: dict[str, Case], ref_inputs: Path) -> None:
    """Fill Case.expected from reference/expected.yaml and the reference's data-locality test."""
    import yaml  # available in the reference venv

    entries = []
    for exp_name in ("expected.yaml", "expected-imc.yaml"):
        exp_file = ref_inputs.parent / exp_name
        if exp_file.exists():
            with open(exp_file, encoding="utf-8") as fh:
                entries += [
                    dict(e, _source=f"reference/{exp_name}") for e in yaml.safe_load(fh) or []
                ]
    for case in cases.values():
        if (
            case.layer_id is not None
            or case.workload_base != "reference"
            or case.mapping_base != "reference"
        ):
            continue
        wl = Path(case.workload).name
        hw = Path(case.accelerator).name
        mp = Path(case.mapping).name
        opts = {k: v for k, v in case.options.items() if API_DEFAULTS.get(k) != v}
        for entry in entries:
            if (entry["workload"], entry["accelerator"], entry["mapping"]) == (wl, hw, mp) and (
                entry.get("options") or {}
            ) == opts:
                case.expected = (float(entry["energy_pJ"]), float(entry["latency_cycles"]))
                case.expected_source = entry["_source"]
        if opts == {"exploit_data_locality": True} and (wl, hw) in LOCALITY_EXPECTED:
            case.expected = LOCALITY_EXPECTED[(wl, hw)]
            case.expected_source = "the reference's data-locality test (rounded to 0.01 pJ)"


# --------------------------------------------------------------------------------------------
# Serialisation helpers (reference objects -> plain JSON data)
# --------------------------------------------------------------------------------------------


def _num(x: Any) -> Any:
    """Plain Python number for JSON; keeps int vs float as the reference produced it."""
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return float(x)
    if isinstance(x, numbers.Integral):  # numpy / sympy integers
        return int(x)
    if isinstance(x, numbers.Real):
        return float(x)
    raise TypeError(f"not a number: {x!r} ({type(x)})")


def _name(x: Any) -> str:
    return x.name if hasattr(x, "name") else str(x)


def _loops(level_loops: Any) -> list[list[Any]]:
    return [[_name(dim), _num(factor)] for dim, factor in level_loops]


def _per_level_mapping(mapping_dict: Any) -> dict[str, list[list[list[Any]]]]:
    """{operand: [[ [dim, factor], ... ] per level]}"""
    return {_name(op): [_loops(level) for level in levels] for op, levels in mapping_dict.items()}


def _user_spatial_mapping(sm: Any) -> dict[str, dict[str, Any]]:
    """User-level spatial mapping {OA dim: {layer dim: factor}} in the reference's key order."""
    return {
        _name(oa): {_name(ld): _num(f) for ld, f in single.items()} for oa, single in sm.items()
    }


def _four_way(obj: Any) -> dict[str, Any]:
    data = {
        DIRECTION_SHORT[str(direction.value)]: _num(value) for direction, value in obj.data.items()
    }
    return {k: data[k] for k in DIRECTION_ORDER}


def _memory_hierarchy(accelerator: Any) -> list[dict[str, Any]]:
    levels = []
    for mem in accelerator.memory_hierarchy.mem_level_list:
        levels.append(
            {
                "name": mem.name,
                "operands": [_name(op) for op in mem.operands],
                "level_of_operand": {
                    _name(op): lvl for op, lvl in mem.mem_level_of_operands.items()
                },
                "served_dimensions": sorted(_name(d) for d in mem.served_dimensions),
                "size_bits": _num(mem.memory_instance.size),
            }
        )
    return levels


def _layer_record(cme: Any) -> dict[str, Any]:
    layer = cme.layer
    links = layer.memory_operand_links
    accelerator = cme.accelerator
    memories = {}
    for layer_op, mem_op in links.layer_and_mem_ops():
        memories[_name(layer_op)] = [
            m.name for m in accelerator.memory_hierarchy.get_memory_levels(mem_op)
        ]
    rec: dict[str, Any] = {
        "id": layer.id,
        "name": layer.name,
        "operator_type": layer.type,
        "loop_sizes": {_name(d): _num(s) for d, s in layer.layer_dim_sizes.items()},
        "memory_operand_links": {_name(lo): _name(mo) for lo, mo in links.layer_and_mem_ops()},
        "accelerator_name": accelerator.name,
        "memories": memories,
        "memory_hierarchy": _memory_hierarchy(accelerator),
        "spatial_mapping": _user_spatial_mapping(layer.spatial_mapping),
        "spatial_mapping_int": _per_level_mapping(cme.spatial_mapping_int.mapping_dict_origin),
        "spatial_mapping_fractional": _per_level_mapping(cme.spatial_mapping.mapping_dict_origin),
        "temporal_mapping": _per_level_mapping(cme.temporal_mapping.mapping_dic_origin),
        "temporal_mapping_stationary": _per_level_mapping(
            cme.temporal_mapping.mapping_dic_stationary
        ),
        "energy_total": _num(cme.energy_total),
        "mac_energy": _num(cme.mac_energy),
        "mem_energy": _num(cme.mem_energy),
        "mem_energy_breakdown": {
            _name(op): [_num(v) for v in vals] for op, vals in cme.mem_energy_breakdown.items()
        },
        "mem_energy_breakdown_further": {
            _name(op): [_four_way(v) for v in vals]
            for op, vals in cme.mem_energy_breakdown_further.items()
        },
        "memory_word_access": {
            _name(op): [_four_way(v) for v in vals] for op, vals in cme.memory_word_access.items()
        },
        "mem_utili_shared": {
            _name(op): [_num(v) for v in vals] for op, vals in cme.mem_utili_shared.items()
        },
        "latency_total0": _num(cme.latency_total0),
        "latency_total1": _num(cme.latency_total1),
        "latency_total2": _num(cme.latency_total2),
        "ideal_cycle": _num(cme.ideal_cycle),
        "ideal_temporal_cycle": _num(cme.ideal_temporal_cycle),
        "stall_slack_comb": _num(cme.stall_slack_comb),
        "data_onloading_cycle": _num(cme.data_onloading_cycle),
        "data_offloading_cycle": _num(cme.data_offloading_cycle),
        "mac_spatial_utilization": _num(cme.mac_spatial_utilization),
        "mac_utilization0": _num(cme.mac_utilization0),
        "mac_utilization1": _num(cme.mac_utilization1),
        "mac_utilization2": _num(cme.mac_utilization2),
    }
    if getattr(cme, "is_imc", False):  # the IMC evaluation's extra figures
        rec["imc"] = {
            "mac_energy_breakdown": {k: _num(v) for k, v in cme.mac_energy_breakdown.items()},
            "tclk": _num(cme.tclk),
            "tclk_breakdown": {k: _num(v) for k, v in cme.tclk_breakdown.items()},
            "area_total": _num(cme.area_total),
            "imc_area": _num(cme.imc_area),
            "imc_area_breakdown": {k: _num(v) for k, v in cme.imc_area_breakdown.items()},
            "mem_area_breakdown": {k: _num(v) for k, v in cme.mem_area_breakdown.items()},
        }
    return rec


# --------------------------------------------------------------------------------------------
# Recording stages (ours), inserted into the reference's stage list for candidate cases
# --------------------------------------------------------------------------------------------


class CandidateLog:
    """Collects, per layer id, every cost-model evaluation in the order the reference made them."""

    def __init__(self) -> None:
        self.per_layer: dict[int, list[dict[str, Any]]] = {}
        self.sm_index: dict[int, int] = {}
        self.current_sm: dict[int, dict[str, dict[str, Any]]] = {}

    def new_spatial_mapping(self, layer: Any) -> None:
        self.sm_index[layer.id] = self.sm_index.get(layer.id, -1) + 1
        self.current_sm[layer.id] = _user_spatial_mapping(layer.spatial_mapping)

    def add(self, layer: Any, cme: Any) -> None:
        entries = self.per_layer.setdefault(layer.id, [])
        cme._oracle_candidate_index = len(entries)  # tag so the chosen one can be found afterwards
        entries.append(
            {
                "index": len(entries),
                "sm_index": self.sm_index.get(layer.id, 0),
                "spatial_mapping": self.current_sm.get(layer.id)
                or _user_spatial_mapping(layer.spatial_mapping),
                "temporal_mapping": _per_level_mapping(cme.temporal_mapping.mapping_dic_origin),
                "energy_total": _num(cme.energy_total),
                "latency_total2": _num(cme.latency_total2),
                "latency_total0": _num(cme.latency_total0),
                "stall_slack_comb": _num(cme.stall_slack_comb),
                "data_onloading_cycle": _num(cme.data_onloading_cycle),
                "data_offloading_cycle": _num(cme.data_offloading_cycle),
            }
        )


_LOG: CandidateLog | None = None


def _make_recording_stages():
    """Define our two pass-through stages on top of the reference's Stage base class."""
    from zigzag.stages.stage import Stage

    class OracleSpatialMappingMarkerStage(Stage):
        """Sits right below the spatial-mapping generator: runs once per spatial-mapping candidate."""

        def run(self):
            layer = self.kwargs["layer"]
            assert _LOG is not None
            _LOG.new_spatial_mapping(layer)
            inner = self.list_of_callables[0](self.list_of_callables[1:], **self.kwargs)
            yield from inner.run()

    class OracleCandidateRecorderStage(Stage):
        """Sits right above the cost-model stage: records every evaluation passing through."""

        def run(self):
            layer = self.kwargs["layer"]
            inner = self.list_of_callables[0](self.list_of_callables[1:], **self.kwargs)
            for cme, extra in inner.run():
                assert _LOG is not None
                _LOG.add(layer, cme)
                yield cme, extra

    return OracleSpatialMappingMarkerStage, OracleCandidateRecorderStage


def _run_reference_pipeline(workload: Any, accelerator: str, mapping: str, opts: dict[str, Any]):
    """Build the same stage list as the reference API does (for the LOMA engine), plus our recorders,
    and run it. Returns the same list the API's MainStage returns."""
    from onnx import ModelProto

    from zigzag.mapping.temporal_mapping import TemporalMappingType
    from zigzag.stages.evaluation.cost_model_evaluation import CostModelStage
    from zigzag.stages.exploit_data_locality_stages import (
        ExploitInterLayerDataLocalityStage,
        SearchInterLayerDataLocalityStage,
    )
    from zigzag.stages.main import MainStage
    from zigzag.stages.mapping.spatial_mapping_generation import SpatialMappingGeneratorStage
    from zigzag.stages.mapping.temporal_mapping_generator_stage import TemporalMappingGeneratorStage
    from zigzag.stages.parser.accelerator_parser import AcceleratorParserStage
    from zigzag.stages.parser.onnx_model_parser import ONNXModelParserStage
    from zigzag.stages.parser.workload_parser import WorkloadParserStage
    from zigzag.stages.results.reduce_stages import (
        MinimalEDPStage,
        MinimalEnergyStage,
        MinimalLatencyStage,
        SumStage,
    )
    from zigzag.stages.results.save import CompleteSaveStage, PickleSaveStage, SimpleSaveStage
    from zigzag.stages.results.visualization import VisualizationStage
    from zigzag.stages.workload_iterator import WorkloadStage

    if opts["temporal_mapping_search_engine"] != "loma" or opts["in_memory_compute"]:
        raise NotImplementedError(
            "candidate recording is only set up for the LOMA engine without IMC"
        )
    opt_stage = {
        "energy": MinimalEnergyStage,
        "latency": MinimalLatencyStage,
        "EDP": MinimalEDPStage,
    }[opts["opt"]]
    is_onnx = isinstance(workload, ModelProto) or (
        isinstance(workload, str) and workload.endswith(".onnx")
    )
    locality = opts["exploit_data_locality"] or opts["enable_mix_spatial_mapping"]
    marker, recorder = _make_recording_stages()
    stages = [
        ONNXModelParserStage if is_onnx else WorkloadParserStage,
        AcceleratorParserStage,
        SimpleSaveStage,
        PickleSaveStage,
        SumStage,
        SearchInterLayerDataLocalityStage if locality else None,
        WorkloadStage,
        VisualizationStage,
        ExploitInterLayerDataLocalityStage if locality else None,
        CompleteSaveStage,
        opt_stage,
        SpatialMappingGeneratorStage,
        marker,
        opt_stage,
        TemporalMappingGeneratorStage,
        recorder,
        CostModelStage,
    ]
    dump_folder = opts["dump_folder"]
    main = MainStage(
        list_of_callables=[s for s in stages if s is not None],
        accelerator=accelerator,
        workload=workload,
        mapping=mapping,
        dump_folder=dump_folder,
        pickle_filename=f"{dump_folder}/list_of_cmes.pickle",
        loma_lpf_limit=opts["lpf_limit"],
        loma_show_progress_bar=opts["loma_show_progress_bar"],
        nb_mappings_generated=opts["nb_spatial_mappings_generated"],
        enable_mix_spatial_mapping_generation=opts["enable_mix_spatial_mapping"],
        access_same_data_considered_as_no_access=True,
        temporal_mapping_type=TemporalMappingType(opts["temporal_mapping_type"]),
    )
    return main.run()


# --------------------------------------------------------------------------------------------
# Running one case
# --------------------------------------------------------------------------------------------


def _resolve(base: str, rel: str, ref_inputs: Path) -> Path:
    return (ref_inputs if base == "reference" else OUR_DATA) / rel


def _single_layer_workload(path: Path, layer_id: int) -> list[dict[str, Any]]:
    import yaml

    with open(path, encoding="utf-8") as fh:
        layers = yaml.safe_load(fh)
    matches = [copy.deepcopy(layer) for layer in layers if layer.get("id") == layer_id]
    if len(matches) != 1:
        raise ValueError(f"layer id {layer_id} not found exactly once in {path}")
    layer = matches[0]
    layer["operand_source"] = {op: layer_id for op in layer.get("operand_source", {})}
    return [layer]


def _stripped_accelerator(path: Path, keys: tuple[str, ...], folder: Path) -> Path:
    import yaml

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    for mem in data.get("memories", {}).values():
        for key in keys:
            mem.pop(key, None)
    target = folder / "_accelerator_input" / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", encoding="utf-8") as fh:
        yaml.safe_dump(data, fh, sort_keys=False)
    return target


def _reference_version() -> str:
    from importlib.metadata import version

    return version("zigzag-dse")


def run_case(case: Case, ref_inputs: Path) -> dict[str, Any]:
    global _LOG
    from zigzag.api import get_hardware_performance_zigzag

    workload_path = _resolve(case.workload_base, case.workload, ref_inputs)
    accel_path = _resolve(case.accelerator_base, case.accelerator, ref_inputs)
    mapping_path = _resolve(case.mapping_base, case.mapping, ref_inputs)
    opts = dict(API_DEFAULTS)
    opts.update(case.options)

    case_info: dict[str, Any] = {
        "workload": case.workload,
        "accelerator": case.accelerator,
        "mapping": case.mapping,
        "sources": {
            "workload": case.workload_base,
            "accelerator": case.accelerator_base,
            "mapping": case.mapping_base,
        },
        "layer_id": case.layer_id,
        "single_layer_note": (
            None
            if case.layer_id is None
            else "workload = [that layer's dict from the YAML file] with every operand_source set to its own id"
        ),
        "options": {**opts, "dump_folder": "<temporary directory>"},
        "accelerator_modification": (
            None
            if not case.strip_memory_keys
            else f"keys {list(case.strip_memory_keys)} removed from every memory (temporary copy of the file)"
        ),
        "driver": "recording pipeline (API stage list + oracle recorder stages)"
        if case.candidates
        else "zigzag.api.get_hardware_performance_zigzag",
    }
    out: dict[str, Any] = {"case_name": case.name, "case": case_info}

    dump = tempfile.mkdtemp(prefix=f"zz_oracle_{case.name}_")
    t0 = time.time()
    severe = _SevereLogCollector()
    logging.getLogger().addHandler(severe)
    try:
        workload: Any = str(workload_path)
        if case.strip_memory_keys:
            accel_path = _stripped_accelerator(accel_path, case.strip_memory_keys, Path(dump))
        if case.layer_id is not None:
            workload = _single_layer_workload(workload_path, case.layer_id)
        kwargs = {**opts, "dump_folder": dump}
        if case.candidates:
            _LOG = CandidateLog()
            answers = _run_reference_pipeline(workload, str(accel_path), str(mapping_path), kwargs)
            total_cme = answers[0][0]
            energy_total, latency_total = total_cme.energy_total, total_cme.latency_total2
        elif opts["in_memory_compute"]:
            energy_total, latency_total, tclk, area, answers = get_hardware_performance_zigzag(
                workload, str(accel_path), str(mapping_path), **kwargs
            )
            out["tclk"], out["area_total"] = _num(tclk), _num(area)
        else:
            energy_total, latency_total, answers = get_hardware_performance_zigzag(
                workload, str(accel_path), str(mapping_path), **kwargs
            )
        per_layer = answers[0][1]
        out["energy_total"] = _num(energy_total)
        out["latency_total2"] = _num(latency_total)
        layers = []
        for cme, _extra in per_layer:
            rec = _layer_record(cme)
            if case.candidates:
                assert _LOG is not None
                rec["chosen_candidate_index"] = getattr(cme, "_oracle_candidate_index", None)
                rec["candidates"] = _LOG.per_layer.get(cme.layer.id, [])
            layers.append(rec)
        out["layers"] = layers
        if case.expected is not None:
            exp_e, exp_l = case.expected
            rel_e = abs(out["energy_total"] - exp_e) / abs(exp_e)
            rel_l = abs(out["latency_total2"] - exp_l) / abs(exp_l)
            out["expected"] = {
                "energy_total": exp_e,
                "latency_total2": exp_l,
                "source": case.expected_source,
                "rel_diff_energy": rel_e,
                "rel_diff_latency": rel_l,
                "match_rel_1e-6": rel_e <= 1e-6 and rel_l <= 1e-6,
            }
    except Exception as exc:  # the failure itself is the oracle result
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["error_log"] = severe.messages
        out["traceback_tail"] = traceback.format_exc().strip().splitlines()[-12:]
    finally:
        logging.getLogger().removeHandler(severe)
        _LOG = None
        shutil.rmtree(dump, ignore_errors=True)
    out["meta"] = {
        "reference": f"zigzag-dse {_reference_version()}",
        "python": platform.python_version(),
        "generated_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(time.time() - t0, 1),
        "generator": "tools/make_oracle.py",
    }
    return out


class _SevereLogCollector(logging.Handler):
    """Keeps the reference's ERROR/CRITICAL log lines (they explain validation failures)."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.levelname} {record.name}: {record.getMessage()}")


def _existing(name: str) -> Path | None:
    for suffix in (".json", ".json.gz"):
        p = ORACLE_DIR / f"{name}{suffix}"
        if p.exists():
            return p
    return None


def write_case(name: str, data: dict[str, Any]) -> Path:
    ORACLE_DIR.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=1)
    raw = text.encode("utf-8")
    for suffix in (".json", ".json.gz"):  # never leave both variants behind
        old = ORACLE_DIR / f"{name}{suffix}"
        if old.exists():
            old.unlink()
    if len(raw) > GZIP_THRESHOLD_BYTES:
        target = ORACLE_DIR / f"{name}.json.gz"
        tmp = target.with_suffix(".gz.tmp")
        with gzip.open(tmp, "wb", compresslevel=9) as fh:
            fh.write(raw)
    else:
        target = ORACLE_DIR / f"{name}.json"
        tmp = target.with_suffix(".json.tmp")
        tmp.write_bytes(raw)
    os.replace(tmp, target)
    return target


def load_case(path: Path) -> dict[str, Any]:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------------------------

README_SCHEMA = """\
## JSON schema (one file per case: `<case>.json`, or `<case>.json.gz` when over 5 MB)

Top level:

| key | content |
| --- | --- |
| `case_name` | the case name (= file stem) |
| `case` | `{workload, accelerator, mapping, sources, layer_id, single_layer_note, options, driver}`; paths are relative to `sources[...]`: `"reference"` = `/work/shared/reference/zigzag`, `"tests/data"` = this repo's `tests/data`; `options` = every API keyword used (defaults written out; `dump_folder` was a temporary directory); `layer_id` non-null = single-layer run |
| `energy_total`, `latency_total2` | network totals as returned by the API (sum over layers) |
| `expected` | (only when a published total exists) `{energy_total, latency_total2, source, rel_diff_energy, rel_diff_latency, match_rel_1e-6}` |
| `layers` | list, in the reference's processing order, of the chosen (best) evaluation per layer (below) |
| `error`, `error_log`, `traceback_tail` | instead of results when the reference raised: `"<ExceptionType>: <message>"`, the reference's ERROR/CRITICAL log lines during the run, last traceback lines |
| `meta` | `{reference, python, generated_utc, runtime_s, generator}` |

Per layer (`layers[i]`):

| key | content |
| --- | --- |
| `id`, `name`, `operator_type` | layer id / name / type as the reference parsed them |
| `loop_sizes` | `{dim: size}` |
| `memory_operand_links` | `{layer operand: memory operand}` |
| `accelerator_name` | name of the accelerator the layer was evaluated on (`<name>-removing-nouse-mem` when data locality trimmed the hierarchy) |
| `memories` | `{layer operand: [memory name per level, innermost first]}` on that accelerator |
| `memory_hierarchy` | memories of that accelerator in definition order: `[{name, operands, level_of_operand: {mem op: level}, served_dimensions (sorted), size_bits}]` |
| `spatial_mapping` | chosen user-level SM `{OA dim: {layer dim: factor}}` in key order (layer.spatial_mapping after clipping / generation / capacity limiting) |
| `spatial_mapping_int`, `spatial_mapping_fractional` | internal per-level SM `{layer operand: [[[dim, factor], ...] per level]}` (level 0 = operational array; last level = leftover OA dims); integer form (latency) and fractional form (energy) |
| `temporal_mapping` | allocator output `{layer operand: [[[dim, factor], ...] per memory level]}`, innermost loop first within a level, before the cost model's merge-down |
| `temporal_mapping_stationary` | same, after the stationarity merge-down (the form the reference prints in its complete JSON) |
| `energy_total`, `mac_energy`, `mem_energy` | pJ |
| `mem_energy_breakdown` | `{layer operand: [pJ per level]}` |
| `mem_energy_breakdown_further` | `{layer operand: [{fh, tl, fl, th} pJ per level]}` |
| `memory_word_access` | `{layer operand: [{fh, tl, fl, th} per level]}` (fh = wr_in_by_high, tl = rd_out_to_low, fl = wr_in_by_low, th = rd_out_to_high) |
| `mem_utili_shared` | `{layer operand: [shared-memory utilisation per level]}` |
| `latency_total0/1/2`, `ideal_cycle`, `ideal_temporal_cycle`, `stall_slack_comb`, `data_onloading_cycle`, `data_offloading_cycle` | cycles |
| `mac_spatial_utilization`, `mac_utilization0/1/2` | ratios |
| `imc` | (IMC cases only) `{mac_energy_breakdown, tclk, tclk_breakdown, area_total, imc_area, imc_area_breakdown, mem_area_breakdown}` of the layer's evaluation |
| `candidates` | (candidate cases only) every evaluation in the order the reference made it: `[{index, sm_index, spatial_mapping, temporal_mapping, energy_total, latency_total2, latency_total0, stall_slack_comb, data_onloading_cycle, data_offloading_cycle}]`; `sm_index` counts the spatial-mapping candidates (0-based, generator order), `spatial_mapping` is that candidate's user-level SM, `temporal_mapping` the allocator output |
| `chosen_candidate_index` | (candidate cases only) index into `candidates` of the evaluation the reference kept |

Numbers are exactly what Python produced (ints stay ints, floats round-trip via `repr`); numpy/sympy
scalars were converted to `int`/`float`.
"""


def write_readme(ref_inputs: Path, command_note: str) -> None:
    rows = []
    for name, case in CASES.items():
        path = _existing(name)
        if path is None:
            status, detail = "missing", ""
        else:
            data = load_case(path)
            if "error" in data:
                status, detail = "reference error", data["error"].splitlines()[0][:120]
            else:
                status = "ok"
                detail = f"E={data['energy_total']!r} pJ, L={data['latency_total2']!r} cc"
                if "expected" in data:
                    detail += (
                        " - matches expected (rel 1e-6)"
                        if data["expected"]["match_rel_1e-6"]
                        else (
                            f" - DIFFERS from expected {data['expected']['energy_total']} / "
                            f"{data['expected']['latency_total2']}"
                        )
                    )
                if any("candidates" in layer for layer in data.get("layers", [])):
                    detail += f"; {sum(len(layer.get('candidates', [])) for layer in data['layers'])} candidates"
                detail += (
                    f"; generated {data['meta']['generated_utc']} in {data['meta']['runtime_s']} s"
                )
            if path.suffix == ".gz":
                detail += " (gzipped)"
        opts = {k: v for k, v in case.options.items() if API_DEFAULTS.get(k) != v}
        what = f"{case.workload}" + (f" layer {case.layer_id}" if case.layer_id is not None else "")
        mapping = case.mapping if case.mapping_base == "reference" else f"tests/data/{case.mapping}"
        accel = case.accelerator + (
            " (minus force_double_buffering)" if case.strip_memory_keys else ""
        )
        if case.accelerator_base != "reference":
            accel = f"tests/data/{accel}"
        if case.workload_base != "reference":
            what = f"tests/data/{what}"
        rows.append(
            f"| `{name}` | {case.group[:1]} | {what} | {accel} | {mapping} | "
            f"{json.dumps(opts) if opts else ''} | {status} | {detail} |"
        )
    try:
        version = _reference_version()
    except Exception:  # pragma: no cover
        version = "?"
    text = (
        f"""# Oracle data from the reference ZigZag

Generated by `tools/make_oracle.py` from the reference implementation **zigzag-dse {version}**
(KULeuven-MICAS/zigzag, installed from PyPI into a separate virtual environment by
`/work/shared/tools/reference-venv.sh`; the reference's code is *not* part of this repository).
Last README refresh: {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}.

Command (each case was run like this; `--all` runs every case, existing files are skipped unless `--force`):

    nice -n 10 /work/.venv-reference/bin/python tools/make_oracle.py --case <name> [--case <name> ...]

{command_note}
Options: unless a case says otherwise, the reference API defaults were used: opt=latency, lpf_limit=6,
nb_spatial_mappings_generated=3, temporal_mapping_type=uneven, LOMA engine, in_memory_compute=False,
exploit_data_locality=False, enable_mix_spatial_mapping=False; always loma_show_progress_bar=False and
a temporary dump_folder (deleted afterwards). The API always uses access_same_data_considered_as_no_access=True.
Network cases call `zigzag.api.get_hardware_performance_zigzag` directly. Candidate cases build the same
stage list as that API function (from the reference's own stage classes) with two pass-through stages of
ours inserted: one right below `SpatialMappingGeneratorStage` (counts spatial-mapping candidates) and one
right above `CostModelStage` (records each evaluation). Single-layer cases pass the API a list holding only
that layer's dict from the workload YAML, with every `operand_source` pointing at the layer's own id.

Notes:
* `enable_mix_spatial_mapping=True` also switches on the inter-layer data-locality stages in the reference
  API (a quirk, see docs/models/mapping-search.md#inter-layer-data-locality), so the `mixed` cases are data-locality runs too.
* zigzag-dse 3.8.5 from PyPI rejects the key `force_double_buffering` that the shipped
  `hardware/gemm_l1_l3.yaml` contains ("unknown field"), so the plain `*gemm_l1_l3` cases record that
  validation error; the `*__no_fdb` cases run a temporary copy of the file with that key removed (the
  spec says the key has no effect on results) and are compared with the expected.yaml gemm_l1_l3 total.
* `synth_bigconv__tpu_like[__even]` use our synthetic layer `tests/data/workloads/synthetic_big_conv.yaml`
  (K128 C128 OX112 OY112 FX3 FY3), on which `even` and `uneven` allocations differ (docs/models/mapping-search.md#loma-loop-orders-and-memory-allocation);
  on resnet18 layer 2 they coincide.
* The SALSA engine is unseeded in the reference, so there is no oracle for it.
* `expected` totals: expected.yaml for the six group-1 cases; the reference's data-locality test (given to 0.01 pJ)
  for the data-locality cases on tpu_like. The check is relative difference <= 1e-6 on both energy and latency.
* Group 7 (in-memory computing) calls `get_hardware_performance_zigzag(..., in_memory_compute=True)`, as
  `get_hardware_performance_zigzag_imc` does, and also stores the clock period `tclk` and the area
  `area_total` it returns, and per layer an `imc` entry (below). The further IMC hardware is ours:
  `tests/data/hardware/aimc_64x32.yaml` (aimc.yaml as a 64x32 array, 6-bit ADC, 4-bit serial input, non-zero
  memory areas) and `dimc_32x256x2.yaml` (dimc.yaml as two 32x256 macros, fully parallel 8-bit input). The
  `__lpf4` cases use lpf_limit=4 to keep the reference's run time reasonable. The four resnet18 IMC cases
  without a suffix repeat expected-imc.yaml, whose totals the tests use directly; they were not generated.

## Cases

Group: 1 = expected.yaml networks, 2 = single-layer candidate enumeration, 3 = resnet18.yaml on the
other hardware, 4 = opt / temporal-mapping-type variants, 5 = exploit_data_locality, 6 = mixed spatial mappings,
7 = in-memory computing.
Workload/accelerator/mapping paths are relative to `/work/shared/reference/zigzag` unless prefixed `tests/data/`.

| case | group | workload | accelerator | mapping | options | status | result |
| --- | --- | --- | --- | --- | --- | --- | --- |
"""
        + "\n".join(rows)
        + "\n\n"
        + README_SCHEMA
    )
    ORACLE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = ORACLE_DIR / f"README.md.tmp{os.getpid()}"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, ORACLE_DIR / "README.md")


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", default=[], help="case name (repeatable)")
    parser.add_argument("--all", action="store_true", help="run every case (in priority order)")
    parser.add_argument(
        "--force", action="store_true", help="re-run cases whose JSON already exists"
    )
    parser.add_argument("--list", action="store_true", help="list the case names and exit")
    parser.add_argument("--readme-only", action="store_true", help="only regenerate README.md")
    parser.add_argument(
        "--ref-inputs",
        type=Path,
        default=DEFAULT_REF_INPUTS,
        help="folder with the reference's hardware/, mapping/, workload/ inputs",
    )
    parser.add_argument(
        "--command-note", default="", help="extra text for the README (e.g. how the run was split)"
    )
    args = parser.parse_args(argv)

    if args.list:
        for name, case in CASES.items():
            print(f"{name:45s} group {case.group}")
        return 0

    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    try:
        version = _reference_version()
    except Exception:
        print(
            "zigzag-dse is not installed in this Python; use the reference venv's python",
            file=sys.stderr,
        )
        return 2
    if version != REFERENCE_VERSION_REQUIRED:
        print(
            f"warning: expected zigzag-dse {REFERENCE_VERSION_REQUIRED}, found {version}",
            file=sys.stderr,
        )
    import zigzag  # noqa: F401  (must be the reference, not our package)

    if not hasattr(__import__("zigzag.api", fromlist=["x"]), "get_hardware_performance_zigzag"):
        print("the imported `zigzag` is not the reference package", file=sys.stderr)
        return 2

    _attach_expected(CASES, args.ref_inputs)
    if args.readme_only:
        write_readme(args.ref_inputs, args.command_note)
        return 0

    names = list(CASES) if args.all else args.case
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s): {unknown}; see --list")
    if not names:
        parser.error("give --case NAME (repeatable) or --all")

    failures = 0
    for name in names:
        if _existing(name) is not None and not args.force:
            print(f"[skip] {name}: exists", flush=True)
            continue
        print(f"[run ] {name} ...", flush=True)
        data = run_case(CASES[name], args.ref_inputs)
        path = write_case(name, data)
        if "error" in data:
            failures += 1
            print(f"[err ] {name}: {data['error']} -> {path.name}", flush=True)
        else:
            msg = f"E={data['energy_total']!r} L={data['latency_total2']!r}"
            if "expected" in data:
                msg += (
                    " expected-match"
                    if data["expected"]["match_rel_1e-6"]
                    else " EXPECTED-MISMATCH"
                )
            print(
                f"[done] {name}: {msg} ({data['meta']['runtime_s']} s) -> {path.name}", flush=True
            )
        write_readme(args.ref_inputs, args.command_note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
