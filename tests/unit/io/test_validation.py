"""Tests for loading and validating the accelerator, workload and mapping YAML inputs."""

from __future__ import annotations

import copy
import glob
import os
from pathlib import Path

import pytest

from support import REFERENCE
from zigzag.errors import InputError
from zigzag.io.validation import (
    check_mapping_fits_accelerator,
    validate_accelerator,
    validate_mapping,
    validate_workload,
)
from zigzag.io.yaml_files import load_yaml

VALIDATORS = {
    "hardware": validate_accelerator,
    "workload": validate_workload,
    "mapping": validate_mapping,
}
_CACHE: dict[Path, object] = {}


def shipped(kind: str, name: str) -> object:
    """A fresh copy of a shipped example document."""
    path = REFERENCE / kind / name
    if path not in _CACHE:
        _CACHE[path] = load_yaml(path)
    return copy.deepcopy(_CACHE[path])


def _walk(data, path):
    for key in path:
        data = data[key]
    return data


def setv(*path_and_value):
    """Mutator setting the value at a path."""
    *path, value = path_and_value
    return lambda data: _walk(data, path[:-1]).__setitem__(path[-1], value)


def delete(*path):
    return lambda data: _walk(data, path[:-1]).pop(path[-1])


def append(*path_and_value):
    *path, value = path_and_value
    return lambda data: _walk(data, path).append(value)


def chain(*mutators):
    def mutate(data):
        for mutator in mutators:
            mutator(data)

    return mutate


def case(case_id, kind, base, mutate, where, *needles):
    return pytest.param(kind, base, mutate, where, needles, id=case_id)


def acc(case_id, mutate, where, *needles, base="tpu_like.yaml"):
    return case(case_id, "hardware", base, mutate, where, *needles)


def wl(case_id, mutate, where, *needles, base="resnet18.yaml"):
    return case(case_id, "workload", base, mutate, where, *needles)


def mp(case_id, mutate, where, *needles, base="tpu_like.yaml"):
    return case(case_id, "mapping", base, mutate, where, *needles)


IMC_ARRAY = {
    "dimensions": ["D1", "D2"],
    "sizes": [32, 32],
    "is_imc": True,
    "imc_type": "analog",
    "input_precision": [8, 8],
    "bit_serial_precision": 2,
    "adc_resolution": 8,
}
L0 = "layer[0] (id 0, example_name_of_layer0)"
L2 = "layer[2] (id 2)"

BAD_INPUTS = [
    # ---- accelerator: schema
    acc(
        "acc-unknown-top-field",
        setv("foo", 1),
        "foo",
        "unknown field 'foo'",
        "allowed fields: name, memories, operational_array, dataflows",
        "remove it",
    ),
    acc(
        "acc-unknown-memory-field-typo",
        setv("memories", "rf_128B", "r_cots", 1.0),
        "memories.rf_128B.r_cots",
        "unknown field",
        "did you mean 'r_cost'",
    ),
    acc(
        "acc-size-float",
        setv("memories", "rf_128B", "size", 10.5),
        "memories.rf_128B.size",
        "must be a whole number",
        "10.5",
        "without a decimal point",
    ),
    acc(
        "acc-size-bool",
        setv("memories", "rf_128B", "size", True),
        "memories.rf_128B.size",
        "must be a whole number",
        "boolean",
    ),
    acc(
        "acc-size-zero",
        setv("memories", "rf_128B", "size", 0),
        "memories.rf_128B.size",
        "must be positive",
        "capacity in bits",
    ),
    acc(
        "acc-size-null",
        setv("memories", "dram", "size", None),
        "memories.dram.size",
        "must not be empty",
        "capacity in bits",
    ),
    acc(
        "acc-latency-missing",
        delete("memories", "rf_2B", "latency"),
        "memories.rf_2B.latency",
        "required field 'latency' is missing",
        "add latency:",
    ),
    acc(
        "acc-operand-regex",
        setv("memories", "rf_128B", "operands", ["I3"]),
        "memories.rf_128B.operands[0]",
        "'I3'",
        "I1, I2 or O",
    ),
    acc(
        "acc-allocation-regex",
        setv("memories", "rf_128B", "ports", 0, "allocation", 0, "I2,tl"),
        "memories.rf_128B.ports[0].allocation[0]",
        "expected form",
        "'I1, tl'",
    ),
    acc(
        "acc-port-name-regex",
        setv("memories", "rf_128B", "ports", 0, "name", "read_port"),
        "memories.rf_128B.ports[0].name",
        "expected form",
        "r_port_<n>",
    ),
    acc(
        "acc-port-type",
        setv("memories", "rf_128B", "ports", 0, "type", "rw"),
        "memories.rf_128B.ports[0].type",
        "unallowed value 'rw'",
        "read, write, read_write",
    ),
    acc(
        "acc-bandwidth-zero",
        setv("memories", "rf_128B", "ports", 0, "bandwidth_max", 0),
        "memories.rf_128B.ports[0].bandwidth_max",
        "must be positive",
        "bits per cycle",
    ),
    acc(
        "acc-oa-size-zero",
        setv("operational_array", "sizes", [32, 0]),
        "operational_array.sizes[1]",
        "must be positive",
        "multipliers",
    ),
    acc(
        "acc-memories-not-mapping",
        setv("memories", ["rf_128B"]),
        "memories",
        "must be a mapping",
        "name: ...",
    ),
    acc(
        "acc-dataflows-without-d1",
        setv("dataflows", {"D2": ["K, 32"]}),
        "dataflows.D1",
        "required field 'D1' is missing",
        "add D1:",
    ),
    acc(
        "acc-dataflows-null",
        setv("dataflows", None),
        "dataflows",
        "must not be empty",
        "unrollings",
    ),
    acc(
        "acc-top-level-list",
        lambda data: None,
        "top level",
        "must contain a mapping",
        "got a list",
        base="__list__",
    ),
    # ---- accelerator: rules
    acc(
        "acc-r-cost-missing",
        delete("memories", "rf_128B", "r_cost"),
        "memories.rf_128B.r_cost",
        "is missing",
        "auto_cost_extraction: true",
    ),
    acc(
        "acc-cacti-size-not-bytes",
        chain(
            setv("memories", "rf_128B", "auto_cost_extraction", True),
            setv("memories", "rf_128B", "size", 1001),
        ),
        "memories.rf_128B.size",
        "multiple of 8",
        "round it",
    ),
    acc(
        "acc-served-dim-not-in-array",
        append("memories", "sram_2MB", "served_dimensions", "D3"),
        "memories.sram_2MB.served_dimensions[2]",
        "'D3' is not a dimension",
        "D1, D2",
    ),
    acc(
        "acc-write-on-read-port",
        append("memories", "sram_2MB", "ports", 0, "allocation", "I1, fh"),
        "memories.sram_2MB.ports[0].allocation[3]",
        "writes into the memory",
        "read port",
        "write or read_write",
    ),
    acc(
        "acc-read-on-write-port",
        append("memories", "sram_2MB", "ports", 1, "allocation", "O, th"),
        "memories.sram_2MB.ports[1].allocation[3]",
        "reads from the memory",
        "read or read_write",
    ),
    acc(
        "acc-input-never-filled",
        setv("memories", "rf_128B", "ports", 1, "allocation", []),
        "memories.rf_128B.ports",
        "'I2, fh'",
        "filled from the level above",
        "write or read_write",
    ),
    acc(
        "acc-output-never-sent-up",
        setv("memories", "rf_2B", "ports", 1, "allocation", []),
        "memories.rf_2B.ports",
        "'O, th'",
        "sent to the level above",
        "read or read_write",
    ),
    acc(
        "acc-bandwidth-min-over-max",
        setv("memories", "rf_128B", "ports", 0, "bandwidth_min", 99),
        "memories.rf_128B.ports[0].bandwidth_min",
        "greater than bandwidth_max",
        "lower bandwidth_min",
    ),
    acc(
        "acc-allocation-operand-not-stored",
        setv("memories", "rf_128B", "ports", 0, "allocation", ["I1, tl"]),
        "memories.rf_128B.ports[0].allocation[0]",
        "operand 'I1' is not stored",
        "add it to operands",
    ),
    acc(
        "acc-oa-sizes-length",
        setv("operational_array", "sizes", [32]),
        "operational_array.sizes",
        "has 1 entry but dimensions has 2",
        "one size per dimension",
    ),
    acc(
        "acc-oa-duplicate-dimension",
        setv("operational_array", "dimensions", ["D1", "D1"]),
        "operational_array.dimensions[1]",
        "listed twice",
        "once",
    ),
    acc(
        "acc-unit-energy-missing",
        delete("operational_array", "unit_energy"),
        "operational_array.unit_energy",
        "required for a non-IMC array",
        "add unit_energy:",
    ),
    acc(
        "acc-imc-type-on-plain-array",
        setv("operational_array", "imc_type", "analog"),
        "operational_array.imc_type",
        "not IMC",
        "set is_imc: true",
    ),
    acc(
        "acc-imc-without-cells",
        setv("operational_array", IMC_ARRAY),
        "memories",
        "needs a memory named 'cells'",
        "add it",
    ),
    acc(
        "acc-imc-precision-not-power-of-two",
        setv("operational_array", {**IMC_ARRAY, "input_precision": [6, 8]}),
        "operational_array.input_precision[0]",
        "not a power of two",
        "1, 2, 4, 8",
    ),
    # ---- workload: schema
    wl(
        "wl-matmul-operator",
        setv(0, "operator_type", "MatMul"),
        f"{L0}.operator_type",
        "unallowed value 'MatMul'",
        "Conv",
        "GlobalAveragePool",
    ),
    wl(
        "wl-unknown-layer-field",
        setv(0, "foo", 1),
        f"{L0}.foo",
        "unknown field 'foo'",
        "allowed fields: id",
    ),
    wl(
        "wl-unknown-operand-source",
        setv(0, "operand_source", "X", 0),
        f"{L0}.operand_source.X",
        "unknown field 'X'",
        "allowed fields: W, I",
    ),
    wl(
        "wl-unknown-precision-key",
        setv(0, "operand_precision", "A", 8),
        f"{L0}.operand_precision.A",
        "unknown field 'A'",
        "O_final",
    ),
    wl(
        "wl-o-final-missing",
        delete(0, "operand_precision", "O_final"),
        f"{L0}.operand_precision.O_final",
        "required field 'O_final' is missing",
        "final output precision",
    ),
    wl(
        "wl-output-not-o",
        setv(2, "equation", "Y[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]"),
        f"{L2}.equation",
        "expected form",
        "one-letter operand names",
    ),
    wl(
        "wl-two-letter-operand",
        setv(2, "equation", "O[b][k][oy][ox]+=WW[k][c][fy][fx]*I[b][c][iy][ix]"),
        f"{L2}.equation",
        "expected form",
        "e.g. 'O[b][k][oy][ox]+=W",
    ),
    wl(
        "wl-id-missing", delete(2, "id"), "layer[2].id", "required field 'id' is missing", "add id:"
    ),
    wl("wl-loop-size-float", setv(2, "loop_sizes", 1, 64.5), f"{L2}.loop_sizes[1]", "whole number"),
    wl(
        "wl-padding-pair",
        chain(setv(2, "pr_loop_dims", ["IX"]), setv(2, "padding", [[1, 1, 1]])),
        f"{L2}.padding[0]",
        "exactly 2 entries",
        "[begin, end]",
    ),
    wl(
        "wl-top-level-mapping",
        lambda data: None,
        "top level",
        "must contain a list of layers",
        "'- id: <n>'",
        base="__dict__",
    ),
    # ---- workload: rules
    wl(
        "wl-loop-lengths-differ",
        setv(2, "loop_sizes", [1, 64, 64]),
        f"{L2}.loop_sizes",
        "has 3 entries but loop_dims has 7",
        "one size per loop dimension",
    ),
    wl(
        "wl-duplicate-loop-dim",
        setv(2, "loop_dims", ["B", "K", "C", "OY", "OX", "FY", "k"]),
        f"{L2}.loop_dims[6]",
        "'K' is listed twice",
        "once",
    ),
    wl(
        "wl-loop-size-zero",
        setv(2, "loop_sizes", 0, 0),
        f"{L2}.loop_sizes[0]",
        "must be positive",
        "at least 1",
    ),
    wl(
        "wl-equation-index-unknown",
        setv(2, "equation", "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][q]"),
        f"{L2}.equation",
        "index 'q'",
        "neither a loop dimension",
        "add it to loop_dims",
    ),
    wl(
        "wl-relation-dim-not-loop-dim",
        setv(2, "dimension_relations", 0, "ix=1*ox+1*zz"),
        f"{L2}.dimension_relations[0]",
        "'zz'",
        "not a loop dimension",
        "add it to loop_dims",
    ),
    wl(
        "wl-relation-coefficient-swapped",
        setv(2, "dimension_relations", 0, "ix=2*ox+fx*1"),
        f"{L2}.dimension_relations[0]",
        "coefficient 'fx'",
        "<number>*<dim>",
    ),
    wl(
        "wl-relation-regex",
        setv(2, "dimension_relations", 0, "ix=2*ox"),
        f"{L2}.dimension_relations[0]",
        "expected form",
        "'ix=2*ox+1*fx'",
    ),
    wl(
        "wl-padding-without-pr-dims",
        setv(2, "padding", [[1, 1], [1, 1]]),
        f"{L2}.padding",
        "padding needs pr_loop_dims",
        "add pr_loop_dims or remove padding",
    ),
    wl(
        "wl-padding-count",
        chain(setv(2, "pr_loop_dims", ["IX", "IY"]), setv(2, "padding", [[1, 1]])),
        f"{L2}.padding",
        "has 1 entry but pr_loop_dims has 2",
        "one entry per pr_loop_dims entry",
    ),
    wl(
        "wl-pr-sizes-without-pr-dims",
        setv(2, "pr_loop_sizes", [58, 58]),
        f"{L2}.pr_loop_sizes",
        "pr_loop_sizes needs pr_loop_dims",
        "add pr_loop_dims",
    ),
    wl(
        "wl-duplicate-id",
        setv(2, "id", 1),
        "layer[2] (id 1).id",
        "id 1 is already used by layer[1]",
        "unique id",
    ),
    wl(
        "wl-source-missing-layer",
        setv(2, "operand_source", "I", 99),
        f"{L2}.operand_source.I",
        "no layer with id 99",
        "earlier layer",
    ),
    wl(
        "wl-source-later-layer",
        setv(2, "operand_source", "I", 5),
        f"{L2}.operand_source.I",
        "comes later",
        "earlier layer",
    ),
    wl(
        "wl-precision-missing",
        delete(2, "operand_precision", "W"),
        f"{L2}.operand_precision",
        "no precision for input operand W",
        "add W: <bits>",
    ),
    wl(
        "wl-input-not-named-i-w",
        setv(2, "equation", "O[b][k][oy][ox]+=W[k][c][fy][fx]*X[b][c][iy][ix]"),
        f"{L2}.equation",
        "must be named I and W",
        "rename them",
    ),
    # ---- mapping: schema
    mp(
        "map-core-allocation",
        setv(0, "core_allocation", [0]),
        "mapping entry 'default'.core_allocation",
        "unknown field 'core_allocation'",
        "allowed fields: name, spatial_mapping",
    ),
    mp(
        "map-oa-key-d5",
        setv(0, "spatial_mapping", "D5", ["K, 2"]),
        "mapping entry 'default'.spatial_mapping.D5",
        "unknown field 'D5'",
        "D1, D2, D3, D4",
    ),
    mp(
        "map-unrolling-colon",
        setv(0, "spatial_mapping", "D1", 0, "K:32"),
        "mapping entry 'default'.spatial_mapping.D1[0]",
        "'K:32'",
        "e.g. 'K, 32'",
    ),
    mp(
        "map-unrolling-lower-case",
        setv(0, "spatial_mapping", "D1", 0, "k, 32"),
        "mapping entry 'default'.spatial_mapping.D1[0]",
        "'k, 32'",
        "upper-case",
    ),
    mp(
        "map-links-without-w",
        setv(1, "memory_operand_links", {"O": "O", "I": "I1"}),
        "mapping entry 'Add'.memory_operand_links.W",
        "required field 'W' is missing",
        "I1, I2 or O",
    ),
    mp(
        "map-temporal-size-text",
        setv(3, "temporal_ordering", 0, ["K", "x"]),
        "mapping entry 'example_name_of_layer0'.temporal_ordering[0][1]",
        "whole number or '*'",
        "'x'",
    ),
    mp(
        "map-temporal-row-length",
        setv(3, "temporal_ordering", 0, ["K", 2, 3]),
        "mapping entry 'example_name_of_layer0'.temporal_ordering[0]",
        "exactly 2 entries",
        "[<layer dim>",
    ),
    mp(
        "map-hint-lower-case",
        setv(0, "spatial_mapping_hint", {"D1": ["k"]}),
        "mapping entry 'default'.spatial_mapping_hint.D1[0]",
        "'k'",
        "upper-case layer dimension",
    ),
    mp(
        "map-name-missing",
        delete(2, "name"),
        "mapping entry [2].name",
        "required field 'name' is missing",
        "'default'",
    ),
    # ---- mapping: rules
    mp(
        "map-no-default",
        setv(0, "name", "Conv"),
        "top level",
        "no entry is named 'default'",
        "add an entry '- name: default'",
    ),
    mp(
        "map-unrolling-size-zero",
        setv(0, "spatial_mapping", "D1", 0, "K, 0"),
        "mapping entry 'default'.spatial_mapping.D1[0]",
        "size 0",
        "at least 1",
    ),
    mp(
        "map-links-duplicate",
        setv(0, "memory_operand_links", "W", "I1"),
        "mapping entry 'default'.memory_operand_links.I",
        "'I1' is already linked to W",
        "different memory operand",
    ),
]


def _base_document(kind: str, base: str) -> object:
    if base == "__list__":
        return [shipped("hardware", "tpu_like.yaml")]
    if base == "__dict__":
        return shipped("workload", "resnet18.yaml")[0]
    return shipped(kind, base)


@pytest.mark.parametrize("kind, base, mutate, where, needles", BAD_INPUTS)
def test_bad_input_is_rejected_with_location_and_fix(kind, base, mutate, where, needles):
    data = _base_document(kind, base)
    mutate(data)
    file = f"inputs/{kind}/{base}"
    with pytest.raises(InputError) as info:
        VALIDATORS[kind](data, file)
    err = info.value
    assert err.file == file
    assert err.where == where
    text = str(err)
    assert text.startswith(f"{file}: {where}: ")
    assert "\n" not in text
    for needle in needles:
        assert needle in err.message, (needle, err.message)


def test_there_are_at_least_thirty_distinct_bad_inputs():
    assert len({param.id for param in BAD_INPUTS}) == len(BAD_INPUTS) >= 30


# ---- cross-file check -----------------------------------------------------------------------


def _tpu_accelerator() -> dict:
    return validate_accelerator(shipped("hardware", "tpu_like.yaml"), "tpu_like.yaml")


def test_mapping_fits_accelerator_for_shipped_pairs():
    for name in ("ascend_like", "gemm_l1", "gemm_l1_l3", "tpu_like"):
        accelerator = validate_accelerator(shipped("hardware", f"{name}.yaml"), name)
        mapping = validate_mapping(shipped("mapping", f"{name}.yaml"), name)
        check_mapping_fits_accelerator(mapping, accelerator, name)


def test_hints_for_missing_oa_dims_are_accepted():
    entry = {
        "name": "default",
        "spatial_mapping_hint": {"D1": ["K"], "D2": ["C"], "D3": ["OX"], "D4": ["OY"]},
    }
    mapping = validate_mapping([entry], "mixed.yaml")
    check_mapping_fits_accelerator(mapping, _tpu_accelerator(), "mixed.yaml")


def test_spatial_mapping_on_missing_oa_dim_is_rejected():
    mapping = validate_mapping(shipped("mapping", "ascend_like.yaml"), "ascend_like.yaml")
    with pytest.raises(InputError) as info:
        check_mapping_fits_accelerator(mapping, _tpu_accelerator(), "ascend_like.yaml")
    assert info.value.where == "mapping entry 'default'.spatial_mapping.D3"
    assert "has no OA dimension D3" in info.value.message
    assert "remove this unrolling" in info.value.message
    assert str(info.value).startswith("ascend_like.yaml: ")


def test_unknown_memory_operand_link_is_rejected():
    data = shipped("mapping", "tpu_like.yaml")
    data[0]["memory_operand_links"]["W"] = "I3"
    mapping = validate_mapping(data, "tpu_like.yaml")
    with pytest.raises(InputError) as info:
        check_mapping_fits_accelerator(mapping, _tpu_accelerator(), "tpu_like.yaml")
    assert info.value.where == "mapping entry 'default'.memory_operand_links.W"
    assert "'I3' is not stored by any memory" in info.value.message
    assert "I1, I2, O" in info.value.message


# ---- shipped examples and normalisation -----------------------------------------------------

SHIPPED = sorted(
    (kind, os.path.basename(path))
    for kind in VALIDATORS
    for path in glob.glob(str(REFERENCE / kind / "*.yaml"))
)


def test_shipped_example_list_is_complete():
    assert len(SHIPPED) == 26


@pytest.mark.parametrize("kind, name", SHIPPED, ids=[f"{k}/{n}" for k, n in SHIPPED])
def test_shipped_examples_validate_and_normalisation_is_idempotent(kind, name):
    data = shipped(kind, name)
    original = copy.deepcopy(data)
    normalised = VALIDATORS[kind](data, name)
    assert data == original, "the input must not be modified"
    assert VALIDATORS[kind](copy.deepcopy(normalised), name) == normalised


def test_accelerator_defaults_are_filled():
    accelerator = _tpu_accelerator()
    memory = accelerator["memories"]["rf_128B"]
    assert memory["mem_type"] == "sram"
    assert memory["auto_cost_extraction"] is False
    assert memory["force_double_buffering"] is False
    array = accelerator["operational_array"]
    assert (
        array["is_imc"],
        array["imc_type"],
        array["adc_resolution"],
        array["bit_serial_precision"],
    ) == (False, None, 0, None)
    assert "dataflows" not in accelerator and "input_precision" not in array
    assert list(accelerator["memories"]) == ["rf_128B", "rf_2B", "sram_2MB", "dram"]


def test_nullable_costs_default_to_null_when_cacti_is_used():
    data = shipped("hardware", "tpu_like.yaml")
    for key in ("r_cost", "w_cost", "area"):
        del data["memories"]["rf_128B"][key]
    data["memories"]["rf_128B"]["auto_cost_extraction"] = True
    memory = validate_accelerator(data, "x")["memories"]["rf_128B"]
    assert (memory["r_cost"], memory["w_cost"], memory["area"]) == (None, None, None)


def test_duplicated_ports_key_keeps_the_last():
    ports = _tpu_accelerator()["memories"]["sram_2MB"]["ports"]
    assert [port["name"] for port in ports] == ["r_port_1", "w_port_1"]


def test_int_costs_and_dataflows_are_accepted():
    data = shipped("hardware", "tpu_like.yaml")
    data["memories"]["rf_128B"]["r_cost"] = 1
    data["dataflows"] = {"D1": ["K, 32"], "D2": ["C, 32"]}
    accelerator = validate_accelerator(data, "x")
    assert accelerator["dataflows"] == {"D1": ["K, 32"], "D2": ["C, 32"]}


def test_valid_imc_array_is_accepted():
    data = shipped("hardware", "tpu_like.yaml")
    data["operational_array"] = dict(IMC_ARRAY)
    cells = copy.deepcopy(data["memories"]["rf_128B"])
    cells["served_dimensions"] = []
    cells["size"] = 8  # one 8-bit weight per multiplier
    data["memories"] = {"cells": cells, **data["memories"]}
    assert validate_accelerator(data, "x")["operational_array"]["is_imc"] is True


def test_workload_defaults_are_filled_and_dims_upper_cased():
    layer = {
        "id": 7,
        "operator_type": "Gemm",
        "equation": "O[m][n]+=I[m][k]*W[k][n]",
        "loop_dims": ["m", "n", "k"],
        "loop_sizes": [4, 4, 4],
        "operand_precision": {"I": 8, "W": 8, "O": 32, "O_final": 8},
    }
    (normalised,) = validate_workload([layer], "w.yaml")
    assert normalised["loop_dims"] == ["M", "N", "K"]
    assert normalised["equation"] == "O[m][n]+=I[m][k]*W[k][n]"
    assert normalised["name"] is None
    assert normalised["dimension_relations"] == []
    assert normalised["operand_source"] == {}
    assert normalised["pr_loop_dims"] is None
    assert normalised["pr_loop_sizes"] is None
    assert normalised["padding"] is None


def test_workload_padding_with_pr_dims_is_accepted():
    data = shipped("workload", "resnet18.yaml")
    data[2].update(pr_loop_dims=["ix", "iy"], pr_loop_sizes=[58, 58], padding=[[1, 1], [1, 1]])
    layer = validate_workload(data, "x")[2]
    assert layer["pr_loop_dims"] == ["IX", "IY"]
    assert layer["padding"] == [[1, 1], [1, 1]]


def test_mapping_defaults_are_filled_and_dims_upper_cased():
    (entry,) = validate_mapping(
        [{"name": "default", "temporal_ordering": [["ox", 2], ["*", "*"]]}], "m.yaml"
    )
    assert entry == {
        "name": "default",
        "temporal_ordering": [["OX", 2], ["*", "*"]],
        "spatial_mapping": None,
        "memory_operand_links": {"O": "O", "I": "I1", "W": "I2"},
        "spatial_mapping_hint": {},
    }


def test_default_links_are_not_shared_between_entries():
    first, second = validate_mapping([{"name": "default"}, {"name": "Conv"}], "m.yaml")
    first["memory_operand_links"]["O"] = "changed"
    assert second["memory_operand_links"]["O"] == "O"


def test_empty_workload_is_rejected():
    with pytest.raises(InputError, match="has no layers; add at least one layer"):
        validate_workload([], "w.yaml")


def test_empty_document_is_rejected():
    with pytest.raises(
        InputError, match=r"^a\.yaml: top level: the file is empty; it must contain a mapping"
    ):
        validate_accelerator(None, "a.yaml")


# ---- load_yaml ------------------------------------------------------------------------------


def test_load_yaml_reports_malformed_yaml_with_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nmemories:\n  a: [1, 2\n  b: 3\n")
    with pytest.raises(InputError) as info:
        load_yaml(path)
    err = info.value
    assert err.file == str(path)
    assert err.where is not None and err.where.startswith("line ")
    assert "malformed YAML" in err.message and "fix the syntax" in err.message
    assert "\n" not in str(err)


def test_load_yaml_reports_the_line_of_a_bad_mapping_value(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("- name: default\n  spatial_mapping: D1: K\n")
    with pytest.raises(InputError) as info:
        load_yaml(path)
    assert info.value.where == "line 2, column 22"


def test_load_yaml_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(InputError) as info:
        load_yaml(path)
    assert str(info.value).startswith(f"{path}: does not exist")
    assert "check the path" in info.value.message


def test_load_yaml_directory(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        load_yaml(tmp_path)


def test_load_yaml_not_utf8(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(InputError, match="not UTF-8"):
        load_yaml(path)


def test_load_yaml_empty_file_gives_none(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("")
    assert load_yaml(path) is None


def test_load_yaml_written_file_round_trip(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("- name: default\n  spatial_mapping:\n    D1:\n      - K, 32\n")
    assert validate_mapping(load_yaml(path), path)[0]["spatial_mapping"] == {"D1": ["K, 32"]}
