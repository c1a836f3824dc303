"""The warm job server (zigzag.steps.client / zigzag.steps.server): a step run through the
server behaves as the same step run in its own process: outputs, messages, logs, exit status and
signals; the server follows the code, survives its jobs, and one starts for many clients."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from support import DATA, REPO, reference_input
from support.steps import gemm_experiment, run_steps


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """One gemm experiment through every step: parsed inputs, a plan and its jobs to run again."""
    return run_steps(
        {"experiments": [gemm_experiment("l1", "gemm_l1")]},
        tmp_path_factory.mktemp("steps") / "results",
    )


def server_folder() -> Path:
    """A private folder for the servers of a test (short: socket paths are limited to ~107 bytes)."""
    return Path(tempfile.mkdtemp(prefix="zzfs-", dir="/tmp"))


def stop_servers(folder: Path) -> None:
    """SIGTERM the servers this test started (their pids are in their logs), then remove the folder."""
    for log in folder.glob("*.log"):
        pids = set(re.findall(r"^\S+ \[(\d+)\] starting", log.read_text(), re.MULTILINE))
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def warm_env():
    folder = server_folder()
    yield {
        **os.environ,
        "ZIGZAG_FLOW_DIR": str(folder),
        "ZIGZAG_FLOW_WARM": "1",
        "ZIGZAG_FLOW_IDLE": "60",
    }
    stop_servers(folder)


def cold(env: dict) -> dict:
    return {**env, "ZIGZAG_FLOW_WARM": "0"}


def client(*argv, env: dict, cwd: Path | None = None, popen: bool = False):
    command = [sys.executable, "-m", "zigzag.steps.client", *map(str, argv)]
    if popen:
        return subprocess.Popen(
            command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=180)


def server_log(env: dict) -> str:
    return "".join(log.read_text() for log in Path(env["ZIGZAG_FLOW_DIR"]).glob("*.log"))


def log_without_time(path: Path) -> list[str]:
    return [
        line
        for line in path.read_text().splitlines()
        if not re.fullmatch(r"\[\d+\.\d{3} s\]", line)
    ]


def chunk(results: Path, output, *log, cache=None) -> list:
    """The layer-search step on the experiment's one chunk (its layers all stored in ``results``'
    cache already, unless ``cache`` is another one)."""
    plan, cache = results / "l1" / "plan.json", cache or results / ".cache"
    return ["evaluate-layers", plan, "--chunk", "1of1", "--cache", cache, "--output", output, *log]


def stored_record(results: Path) -> dict:
    keys = json.loads((results / "l1" / "plan.json").read_text())["to_compute"]
    return {"keys": keys, "searched": [], "failed": []}


def test_fingerprint_follows_the_code(tmp_path):
    from zigzag.steps.client import fingerprint

    package = tmp_path / "zigzag"
    shutil.copytree(REPO / "zigzag", package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"OMP_NUM_THREADS": "1", "HOME": "/home/a"}
    before = fingerprint(str(package), env)
    assert fingerprint(str(package), env) == before
    assert (
        fingerprint(str(package), {**env, "HOME": "/home/b"}) == before
    )  # not read at import time
    assert fingerprint(str(package), {**env, "OMP_NUM_THREADS": "2"}) != before
    module = package / "steps" / "job_runner.py"
    module.write_text(module.read_text() + "\n# edited\n")
    edited = fingerprint(str(package), env)
    assert edited != before
    (package / "steps" / "new_step.py").write_text("")
    assert fingerprint(str(package), env) not in (before, edited)


def test_the_switch_and_slurm():
    from zigzag.steps.client import warm_enabled

    assert warm_enabled({})
    assert not warm_enabled({"ZIGZAG_FLOW_WARM": "0"})
    assert not warm_enabled({"SLURM_JOB_ID": "12"})  # each node and SLURM job would need its own
    assert warm_enabled({"SLURM_JOB_ID": "12", "ZIGZAG_FLOW_WARM": "1"})


@pytest.mark.slow
def test_warm_and_cold_steps_agree(results, warm_env, tmp_path):
    """Same exit status, standard output and error, output files and log, job by job: a chunk of
    layer searches, a bad chunk (one-line error), wrong arguments (usage) and a figure."""
    accelerator = sorted((results / ".cache" / "parsed" / "accelerators").glob("*.json"))[0]
    for mode in ("cold", "warm"):  # an empty result store each, with the experiment's jobs
        jobs = tmp_path / "search" / f"{mode}_cache" / "layer-jobs"
        jobs.mkdir(parents=True)
        shutil.copy(results / ".cache" / "layer-jobs" / "l1.json", jobs)
    search = chunk(results, "{out}/chunk.json", "--log", "{out}/job.log", cache="{out}_cache")
    cases = {
        "search": search,
        "bad chunk": [*search[:3], "3of2", *search[4:]],
        "layer job usage": ["evaluate-layers", "plan.json", "--bogus"],
        "step usage": ["sum", "--output", "x.json"],
        "missing file": [
            "plot-comparison",
            "{out}/nothing.csv",
            "--output",
            "{out}/c.png",
            "--log",
            "{out}/c.log",
        ],
        "figure": [
            "plot-accelerator",
            accelerator,
            "--output",
            "{out}/memory.png",
            "--log",
            "{out}/plot.log",
        ],
    }
    for case, argv in cases.items():
        runs = {}
        for mode, env in (("cold", cold(warm_env)), ("warm", warm_env)):
            out = tmp_path / case.replace(" ", "_") / mode
            out.mkdir(parents=True)
            done = client(*(str(a).format(out=out) for a in argv), env=env, cwd=tmp_path)
            files = {
                p.name: (
                    [line.replace(str(out), "OUT") for line in log_without_time(p)]
                    if p.suffix == ".log"
                    else p.read_bytes()
                )
                for p in out.iterdir()
            }
            runs[mode] = (
                done.returncode,
                done.stdout.replace(str(out), "OUT"),
                done.stderr.replace(str(out), "OUT"),
                files,
            )
        assert runs["warm"] == runs["cold"], case
        assert "Traceback" not in runs["warm"][2]
    assert server_log(warm_env).count(": started") == len(
        cases
    )  # every warm run went through the server

    bad = client(*(str(a).format(out=tmp_path) for a in cases["bad chunk"]), env=warm_env)
    (line,) = bad.stderr.splitlines()
    assert bad.returncode == 1 and line.startswith("error: ") and "is not a chunk" in line
    assert log_without_time(tmp_path / "job.log") == [line]


def wait_started(env: dict, seen: int, step: str = "evaluate-layers") -> int:
    """The pid of the next job the server starts (after the first ``seen`` starts)."""
    deadline = time.time() + 60
    while time.time() < deadline:
        pids = re.findall(rf"job (\d+) {step}: started", server_log(env))
        if len(pids) > seen:
            return int(pids[seen])
        time.sleep(0.05)
    raise AssertionError("the server did not start the job")


def gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False


def test_signals_reach_the_job_and_a_vanished_client_kills_it(results, warm_env, tmp_path):
    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)  # the job blocks opening it: a job that runs until it is stopped
    argv = ("evaluate-layers", fifo, "--chunk", "1of1", "--cache", tmp_path, "--output", "r.json")

    def blocked_job():
        seen = len(re.findall(r"job \d+ evaluate-layers: started", server_log(warm_env)))
        process = client(*argv, env=warm_env, popen=True)
        return process, wait_started(warm_env, seen)

    # SIGTERM to the client ends the job with SIGTERM, and the client the same way, as without a
    # server; also when it comes at once (it once reached the job before the job's own handlers
    # were in place, and was lost, in about one try out of five)
    for _ in range(12):
        process, pid = blocked_job()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == -signal.SIGTERM and gone(pid)
    alone = client(*argv, env=cold(warm_env), popen=True)
    time.sleep(1)
    alone.send_signal(signal.SIGTERM)
    assert alone.wait(timeout=30) == -signal.SIGTERM
    # a client killed outright: the server kills its job
    process, pid = blocked_job()
    process.kill()
    process.wait(timeout=30)
    assert gone(pid), "the job outlived its client"
    assert f"client of job {pid} gone" in server_log(warm_env)
    # a job that crashes (here: killed) ends only itself; its client ends the same way
    process, pid = blocked_job()
    os.kill(pid, signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL
    done = client(*chunk(results, tmp_path / "ok.json"), env=warm_env)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "ok.json").read_text())["keys"] == stored_record(results)["keys"]


def test_concurrent_clients_start_one_server_that_stops_when_idle(results, tmp_path):
    folder = server_folder()
    env = {
        **os.environ,
        "ZIGZAG_FLOW_DIR": str(folder),
        "ZIGZAG_FLOW_WARM": "1",
        "ZIGZAG_FLOW_IDLE": "2",
    }
    try:
        processes = [
            client(
                *chunk(results, tmp_path / f"r{i}.json", "--log", tmp_path / f"{i}.log"),
                env=env,
                popen=True,
            )
            for i in range(6)
        ]
        assert [p.wait(timeout=180) for p in processes] == [0] * 6
        for i in range(6):
            record = json.loads((tmp_path / f"r{i}.json").read_text())
            assert {k: record[k] for k in ("keys", "searched", "failed")} == stored_record(results)
        log = server_log(env)
        assert len(list(folder.glob("*.sock"))) == 1 and log.count("] starting") == 1
        assert log.count("evaluate-layers: started") == 6
        deadline = time.time() + 30
        while list(folder.glob("*.sock")) and time.time() < deadline:
            time.sleep(0.1)
        assert not list(folder.glob("*.sock")), "the idle server did not stop"
        assert "stopped" in server_log(env)
    finally:
        stop_servers(folder)


def test_without_a_safe_server_folder_the_job_runs_in_the_client(results, tmp_path):
    folder = tmp_path / "open"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # readable by others: its sockets are not trusted
    env = {**os.environ, "ZIGZAG_FLOW_DIR": str(folder), "ZIGZAG_FLOW_WARM": "1"}
    done = client(*chunk(results, tmp_path / "r.json"), env=env)
    assert done.returncode == 0 and (tmp_path / "r.json").exists()
    assert not list(folder.iterdir())
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_the_snakefile_starts_a_server_only_for_runs_with_local_jobs(monkeypatch):
    from zigzag.steps.job_runner import start_server_in_background

    monkeypatch.setenv("ZIGZAG_FLOW_WARM", "0")  # the client started exits without a server
    for arguments in (["-n"], ["--cores", "2", "--lint"], ["--profile=profiles/slurm"], ["-np"]):
        assert not start_server_in_background(arguments), arguments
    assert start_server_in_background(["--cores", "2", "--configfile", "c.yaml"])


@pytest.mark.slow  # the server's imports (~3 s)
def test_a_server_started_without_a_job_is_the_one_the_jobs_use(results, tmp_path):
    """``client.py --start-server`` (the Snakefile's, while Snakemake builds its DAG) starts the
    server the jobs' clients find; its connection without a job is dropped silently."""
    from zigzag.steps import client as client_module

    folder = server_folder()
    env = {**os.environ, "ZIGZAG_FLOW_DIR": str(folder), "ZIGZAG_FLOW_WARM": "1"}
    start = [sys.executable, "-S", client_module.__file__, "--start-server"]
    try:
        assert subprocess.run(start, env=env, timeout=180).returncode == 0
        assert len(list(folder.glob("*.sock"))) == 1 and "listening" in server_log(env)
        assert subprocess.run(start, env=env, timeout=180).returncode == 0  # running: no other
        done = subprocess.run(
            [sys.executable, "-S", client_module.__file__, *chunk(results, tmp_path / "r.json")],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        log = server_log(env)
        assert log.count("] starting") == 1 and "evaluate-layers: started" in log
        assert "dropped" not in log and "error" not in log
        cold_env = {**env, "ZIGZAG_FLOW_WARM": "0"}
        assert subprocess.run(start, env=cold_env, timeout=60).returncode == 1  # no server wanted
    finally:
        stop_servers(folder)


@pytest.mark.slow
def test_workflow_results_are_the_same_with_and_without_the_server(tmp_path):
    """A small workflow run both ways: every result file equal, every log equal but for its time."""
    outputs = {}
    folder = server_folder()
    try:
        for mode, warm in (("cold", "0"), ("warm", "1")):
            workdir = tmp_path / mode
            (workdir / "inputs").mkdir(parents=True)
            shutil.copy(
                reference_input("hardware", "tpu_like.yaml"), workdir / "inputs" / "tpu.yaml"
            )
            shutil.copy(
                reference_input("mapping", "tpu_like.yaml"), workdir / "inputs" / "mapping.yaml"
            )
            shutil.copy(DATA / "workflow" / "small_convs.yaml", workdir / "inputs" / "small.yaml")
            (workdir / "config.yaml").write_text(
                yaml.safe_dump(
                    {
                        "experiments": [
                            {
                                "name": "small",
                                "workload": "inputs/small.yaml",
                                "accelerator": "inputs/tpu.yaml",
                                "mapping": "inputs/mapping.yaml",
                            }
                        ]
                    }
                )
            )
            env = {**os.environ, "ZIGZAG_FLOW_DIR": str(folder), "ZIGZAG_FLOW_WARM": warm}
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "snakemake",
                    "-s",
                    str(REPO / "Snakefile"),
                    "--directory",
                    str(workdir),
                    "--cores",
                    "2",
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stderr[-3000:]
            results = workdir / "results"
            outputs[mode] = {
                str(p.relative_to(results)): log_without_time(p)
                if p.suffix == ".log"
                else p.read_bytes()
                for p in results.rglob("*")
                # the record of sealed files found sound holds each file's times: not an output
                if p.is_file() and "benchmarks" not in p.parts and "status" not in p.parts
            }
        assert outputs["warm"] == outputs["cold"]
        assert len(outputs["warm"]) > 20
        assert server_log({"ZIGZAG_FLOW_DIR": str(folder)}).count("evaluate-layers: started") == 1
    finally:
        stop_servers(folder)
