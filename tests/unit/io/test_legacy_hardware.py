"""The older ZigZag-3.8.0 memory-port format: conversion, loading through every entry point, errors."""

from __future__ import annotations


import pytest
import yaml

from zigzag.api import get_hardware_performance_zigzag
from zigzag.errors import InputError
from zigzag.io.legacy_hardware import is_legacy_memory, legacy_ports_of, upgrade_accelerator
from zigzag.io.loaders import load_accelerator, read_accelerator
from support import TESTS

DATA = TESTS / "data"
OLD_TPU = DATA / "legacy" / "tpu_like_3_8_0.yaml"
NEW_TPU = DATA / "reference" / "zigzag" / "hardware" / "tpu_like.yaml"
MAPPING = DATA / "reference" / "zigzag" / "mapping" / "tpu_like.yaml"
WORKLOAD = DATA / "legacy" / "two_layers.yaml"
STREAM_CORES = sorted((DATA / "reference" / "stream" / "stream" / "inputs").glob("**/cores/*.yaml"))


def test_old_format_twin_has_the_same_normalised_document():
    assert read_accelerator(OLD_TPU) == read_accelerator(NEW_TPU)


def test_old_format_twin_gives_identical_results_through_the_api(tmp_path):
    results = []
    for hardware in (OLD_TPU, NEW_TPU):
        energy, latency, cmes = get_hardware_performance_zigzag(
            str(WORKLOAD),
            str(hardware),
            str(MAPPING),
            dump_folder=tmp_path / hardware.stem,
            loma_show_progress_bar=False,
        )
        per_layer = [
            (cme.energy_total, cme.latency_total2, cme.mem_energy_breakdown)
            for cme, _ in cmes[0][1]
        ]
        results.append((energy, latency, per_layer))
    assert results[0] == results[1]


@pytest.mark.parametrize("path", STREAM_CORES, ids=lambda p: p.stem)
def test_stream_core_files_convert(path):
    data = yaml.safe_load(path.read_text())
    converted, widths = upgrade_accelerator(data, str(path))
    assert set(widths) == set(data["memories"])
    for name, memory in data["memories"].items():
        ports = converted["memories"][name]["ports"]
        used = {n for directions in memory["ports"] for n in directions.values()}
        assert [p["name"] for p in ports] == [n for n in _physical(memory) if n in used]
        assert legacy_ports_of(_ports(ports)).r_bw == memory["r_bw"] or memory["rw_port"] == 0
        assert widths[name].r_bw == memory["r_bw"] and widths[name].w_bw == memory["w_bw"]


def _physical(memory: dict) -> list[str]:
    return [
        f"{kind}_{i}"
        for kind in ("r_port", "w_port", "rw_port")
        for i in range(1, memory[kind] + 1)
    ]


def _ports(ports: list[dict]):
    from zigzag.hardware.accelerator import Port

    return tuple(
        Port(p["name"], p["type"], p["bandwidth_min"], p["bandwidth_max"], ()) for p in ports
    )


def test_read_write_port_widths_and_allocation_order():
    converted, _ = upgrade_accelerator(yaml.safe_load(OLD_TPU.read_text()), "x")
    dram = converted["memories"]["dram"]["ports"]
    assert dram == [
        {
            "name": "rw_port_1",
            "type": "read_write",
            "bandwidth_min": 64,
            "bandwidth_max": 64,
            "allocation": [
                "I1, fh",
                "I1, tl",
                "I2, fh",
                "I2, tl",
                "O, fh",
                "O, tl",
                "O, fl",
                "O, th",
            ],
        }
    ]
    rf = converted["memories"]["rf_2B"]["ports"]
    assert [(p["name"], p["allocation"]) for p in rf] == [
        ("r_port_1", ["O, tl"]),
        ("r_port_2", ["O, th"]),
        ("w_port_1", ["O, fh"]),
        ("w_port_2", ["O, fl"]),
    ]


def test_current_format_is_left_alone():
    data = yaml.safe_load(NEW_TPU.read_text())
    assert not any(is_legacy_memory(m) for m in data["memories"].values())
    assert upgrade_accelerator(data, "x") == (data, {})


def _old(**changes) -> dict:
    data = yaml.safe_load(OLD_TPU.read_text())
    for path, value in changes.items():
        *keys, last = path.split("__")
        node = data
        for key in keys:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is _DELETE:
            del node[last]
        else:
            node[last] = value
    return data


_DELETE = object()

BAD_OLD = {
    "missing r_bw": (dict(memories__sram_2MB__r_bw=_DELETE), "memories.sram_2MB.r_bw", "missing"),
    "r_bw zero": (dict(memories__sram_2MB__r_bw=0), "memories.sram_2MB.r_bw", "positive"),
    "r_port text": (dict(memories__rf_2B__r_port="two"), "memories.rf_2B.r_port", "whole number"),
    "unknown key": (
        dict(memories__rf_2B__force_double_buffering=True),
        "force_double_buffering",
        "unknown",
    ),
    "bad port name": (
        dict(memories__rf_128B__ports=[{"fh": "x_port_1", "tl": "r_port_1"}]),
        "memories.rf_128B.ports[0].fh",
        "expected form",
    ),
    "missing port": (
        dict(memories__rf_128B__ports=[{"fh": "w_port_2", "tl": "r_port_1"}]),
        "memories.rf_128B.ports[0].fh",
        "does not exist",
    ),
    "read port writes": (
        dict(memories__rf_128B__ports=[{"fh": "r_port_1", "tl": "r_port_1"}]),
        "memories.rf_128B.ports[0].fh",
        "read port",
    ),
    "write port reads": (
        dict(memories__rf_128B__ports=[{"fh": "w_port_1", "tl": "w_port_1"}]),
        "memories.rf_128B.ports[0].tl",
        "write port",
    ),
    "map count": (
        dict(memories__rf_128B__operands=["I2", "I1"]),
        "memories.rf_128B.ports",
        "one map",
    ),
    "unused declared port": (
        dict(memories__rf_128B__w_port=2),
        "memories.rf_128B.w_port",
        "declares 2",
    ),
    "granularity too large": (
        dict(memories__sram_2MB__min_r_granularity=4096),
        "memories.sram_2MB.min_r_granularity",
        "larger than r_bw",
    ),
    "rw widths differ": (dict(memories__dram__w_bw=128), "memories.dram.ports[0].fh", "read-write"),
    "unknown direction": (
        dict(memories__rf_128B__ports=[{"fx": "w_port_1", "tl": "r_port_1"}]),
        "memories.rf_128B.ports[0].fx",
        "unknown field",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_OLD))
def test_bad_old_format_gives_one_line_error(case, tmp_path):
    changes, where, words = BAD_OLD[case]
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(_old(**changes)))
    with pytest.raises(InputError) as error:
        load_accelerator(path)
    message = str(error.value)
    assert (
        "\n" not in message
        and message.startswith(str(path))
        and where in message
        and words in message
    )


def test_zigzag_run_accepts_old_format_on_the_command_line(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            str(WORKLOAD),
            "--accelerator",
            str(OLD_TPU),
            "--mapping",
            str(MAPPING),
            "--output",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
