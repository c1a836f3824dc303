"""Ctrl-C: a command stopped by SIGINT prints one line (what was kept, how to continue), exits
130 and leaves no half-written file; a sweep run again continues from the layers it kept.

Each command runs in a subprocess whose layer search, from its second call on, marks a file and
waits: the test sends SIGINT once the mark is there, so the signal always lands in the middle of
the work (never during start-up)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import DATA, REPO

#: runs `zigzag ARGS...` with a layer search that, from its second call on, touches MARK and sleeps
_RUNNER = """
import sys, time, pathlib
import zigzag.mapping_search.layer_search as layer_search, zigzag.mapping_search.network as network
mark, real, calls = pathlib.Path(sys.argv[1]), layer_search.search_layer, []
def search_layer(*args, **kwargs):
    calls.append(1)
    if len(calls) > 1:
        mark.touch()
        time.sleep(120)
    return real(*args, **kwargs)
layer_search.search_layer = network.search_layer = search_layer
from zigzag.cli import main
sys.exit(main(sys.argv[2:]))
"""

SINGLE = [
    "--accelerator",
    str(REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"),
    "--mapping",
    str(REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"),
]
STREAM = REPO / "inputs" / "stream"


def interrupted(tmp_path: Path, args: list[str]) -> subprocess.CompletedProcess:
    """Run ``zigzag args`` until its second layer search starts, then send it SIGINT."""
    mark = tmp_path / "busy"
    process = subprocess.Popen(
        [sys.executable, "-c", _RUNNER, str(mark), *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not mark.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.exists(), f"the command never reached its second layer: {process.communicate()}"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def half_written(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if ".tmp" in p.name]


def check_one_line(result: subprocess.CompletedProcess, command: str) -> str:
    assert result.returncode == 130, result.stderr
    lines = [
        line
        for line in result.stderr.splitlines()
        if line.strip() and not line.startswith("WARNING")
    ]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(
        f"interrupted: zigzag {command} stopped; no file was left half-written"
    )
    return lines[0]


def test_ctrl_c_in_zigzag_run(tmp_path):
    out = tmp_path / "out"
    result = interrupted(
        tmp_path,
        [
            "run",
            "--workload",
            str(DATA / "workflow" / "small_convs.yaml"),
            *SINGLE,
            "--output",
            str(out),
            "--quiet",
        ],
    )
    assert "run the same command again" in check_one_line(result, "run")
    assert not out.exists() or not half_written(out)


@pytest.mark.slow
def test_ctrl_c_in_zigzag_sweep_keeps_the_finished_layers(tmp_path):
    out = tmp_path / "sweep"
    args = [
        "sweep",
        "--base",
        SINGLE[1],
        "--mapping",
        SINGLE[3],
        "--workload",
        str(DATA / "workflow" / "small_convs.yaml"),
        "--vary",
        "memories.unified_buffer.size=[64KiB,128KiB]",
        "--output",
        str(out),
        "--lpf-limit",
        "3",
    ]
    line = check_one_line(interrupted(tmp_path, args), "sweep")
    assert f"kept in {out}/.cache" in line and "continue from them" in line
    kept = list((out / ".cache" / "results").glob("*.json"))
    assert len(kept) == 1 and not half_written(out)
    again = subprocess.run(
        [sys.executable, "-m", "zigzag", *args, "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    assert set(kept) <= set((out / ".cache" / "results").glob("*.json"))


def test_ctrl_c_in_zigzag_stream_search(tmp_path):
    out = tmp_path / "search"
    result = interrupted(
        tmp_path,
        [
            "stream",
            "search",
            "--accelerator",
            str(STREAM / "hardware" / "dual_testing_core.yaml"),
            "--workload",
            str(STREAM / "workload" / "small_3conv.onnx"),
            "--mapping",
            str(STREAM / "mapping" / "dual_testing_core.yaml"),
            "--mode",
            "lbl",
            "--individuals",
            "2",
            "--generations",
            "1",
            "--output",
            str(out),
        ],
    )
    line = check_one_line(result, "stream search")
    assert f"cost-table entries computed so far are kept in {out}/.cache" in line
    assert not half_written(out) and not (out / "front.csv").exists()


def test_workers_ignore_ctrl_c():
    """Pool workers leave Ctrl-C to their parent (which stops the pool and prints the one line)."""
    code = (
        "import os, signal, time; from zigzag.interrupts import ignore_interrupts; ignore_interrupts(); "
        "os.kill(os.getpid(), signal.SIGINT); time.sleep(0.2); print('still here')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "still here"
