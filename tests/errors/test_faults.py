"""Faults a real machine produces (issue 48): damaged cache entries, output destinations that are
files or read-only, a second run in a folder. The workflow-level cases (a rerun over damaged
entries, two Snakemake runs, kill and rerun) are in tests/integration/test_workflow_faults.py."""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support import DATA, REPO
from support.faults import DATA_SEALED, damage
from zigzag.errors import InputError
from zigzag.io.destinations import check_output_folder, save_or_keep
from zigzag.io.sealed import DamagedFile, is_sound, read_sealed, remove_damaged, sealed_text
from zigzag.io.tables import distinct_accelerator_names
from zigzag.io.validation import oversized_unrollings
from zigzag.steps.folder_runs import check_single_run
from zigzag.steps.integrity import is_dry_run


@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "altered", "other key"])
def test_a_damaged_sealed_file_is_never_used(tmp_path, how):
    path = tmp_path / "abcd.json"
    path.write_text(sealed_text(DATA_SEALED, "abcd"))
    assert read_sealed(path, "abcd")["result"] == DATA_SEALED["result"]
    damage(path, how)
    with pytest.raises(DamagedFile) as caught:
        read_sealed(path, "abcd")
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("how", [None, "truncated", "empty", "garbage", "altered", "other key"])
def test_the_integrity_check_agrees_with_reading_the_file(tmp_path, how):
    """is_sound checks the checksum and the key without parsing the JSON: the same verdict."""
    path = tmp_path / "abcd.json"
    path.write_text(sealed_text(DATA_SEALED, "abcd"))
    if how:
        damage(path, how)
    try:
        read_sealed(path, "abcd")
        readable = True
    except DamagedFile:
        readable = False
    assert is_sound(path, "abcd") is readable is (how is None)
    # a key that only begins like the file's is another key; a file with no key needs none
    assert not is_sound(path, "abc") and not is_sound(path, "abcde")
    assert is_sound(path) is (how in (None, "other key"))  # sound, for its own key
    (tmp_path / "nokey.json").write_text(sealed_text({"jobs": {}}))
    assert is_sound(tmp_path / "nokey.json") and not is_sound(tmp_path / "nokey.json", "abcd")
    assert not is_sound(tmp_path / "missing.json", "abcd")


def test_damaged_files_are_reported_and_removed_but_not_on_a_dry_run(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(sealed_text({"a": 1}))
    bad.write_text(sealed_text({"a": 1})[:-5])
    files = [(good, None), (bad, None), (tmp_path / "missing.json", None)]
    lines = remove_damaged(files, dry_run=True)
    assert len(lines) == 1 and str(bad) in lines[0] and bad.exists()
    lines = remove_damaged(files)
    assert len(lines) == 1 and not bad.exists() and good.exists()
    olds = [tmp_path / f"old{i}.json" for i in range(3)]  # an older version's files: no checksum
    for path in olds:
        path.write_text(json.dumps({"result": {}}))
    lines = remove_damaged([(path, None) for path in olds])
    assert len(lines) == 1 and lines[0].startswith("note: 3 ") and not olds[0].exists()


@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "altered", "other key"])
def test_files_found_sound_are_checked_again_once_written_to(tmp_path, monkeypatch, how):
    """The Snakefile's check reads a sealed file only when it changed since it was found sound; any
    damage, even one that puts the modification time back, is still found and removed."""
    from zigzag.steps import integrity

    results, cache = tmp_path / "results", tmp_path / "results" / ".cache"
    entries = [cache / "results" / f"{key}.json" for key in ("abcd", "beef")]
    entries[0].parent.mkdir(parents=True)
    for path in entries:
        path.write_text(sealed_text(DATA_SEALED, path.stem))
    checked = []
    sound = integrity.is_sound
    monkeypatch.setattr(integrity, "is_sound", lambda p, k: checked.append(p.name) or sound(p, k))
    assert integrity.check_sealed_files(results, cache, dry_run=True) == []
    assert integrity.check_sealed_files(results, cache) == [] and len(checked) == 4
    assert integrity.check_sealed_files(results, cache) == [] and len(checked) == 4  # none read
    times = entries[0].stat()
    damage(entries[0], how)
    os.utime(entries[0], ns=(times.st_atime_ns, times.st_mtime_ns))
    (line,) = integrity.check_sealed_files(results, cache)
    assert checked[4:] == ["abcd.json"] and str(entries[0]) in line and not entries[0].exists()


@pytest.mark.parametrize("how", [None, "truncated", "altered"])
def test_files_a_job_wrote_whole_are_recorded_without_a_read(tmp_path, monkeypatch, how):
    """A layer result the result store wrote is noted with its stamp (zigzag.io.written_notes) and
    recorded sound from the note, unread; damaged after the write (its modification time put
    back), it is read and removed. A torn note is ignored: that file is read instead."""
    from zigzag.io.written_notes import NOTES
    from zigzag.mapping_search.result_store import ResultStore
    from zigzag.steps import integrity

    results, cache = tmp_path / "results", tmp_path / "results" / ".cache"
    store = ResultStore(cache)
    for key in ("abcd", "beef"):
        store._write(key, sealed_text(DATA_SEALED, key))
    (cache / NOTES / "torn.jsonl").write_text('["/somewhere/else.json", [1, 2')
    unnoted = cache / "results" / "cafe.json"  # written by hand: no note
    unnoted.write_text(sealed_text(DATA_SEALED, "cafe"))
    if how:
        times = store.path("abcd").stat()
        damage(store.path("abcd"), how)
        os.utime(store.path("abcd"), ns=(times.st_atime_ns, times.st_mtime_ns))
    checked = []
    sound = integrity.is_sound
    monkeypatch.setattr(integrity, "is_sound", lambda p, k: checked.append(p.name) or sound(p, k))
    lines = integrity.check_sealed_files(results, cache)
    assert sorted(checked) == sorted(["cafe.json"] + (["abcd.json"] if how else []))
    assert len(lines) == (1 if how else 0) and store.path("abcd").exists() is (how is None)
    assert not list((cache / NOTES).iterdir())  # the notes are taken into the record
    assert integrity.check_sealed_files(results, cache) == [] and len(checked) == len(
        ["cafe.json"] + (["abcd.json"] if how else [])
    )  # recorded: none read again


def test_a_damaged_cost_table_entry_is_recomputed(tmp_path, caplog):
    from zigzag.multicore.cost_table import cache

    entry_file = cache.entry_path(tmp_path, "feed")
    entry_file.parent.mkdir(parents=True)
    entry_file.write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert cache.read_entry(tmp_path, "feed") is None
    assert [r.getMessage() for r in caplog.records if "feed.json" in r.getMessage()]
    assert cache.read_entry(tmp_path, "absent") is None


def test_an_output_that_is_a_file_or_under_a_file_is_refused(tmp_path):
    file = tmp_path / "taken"
    file.write_text("x")
    with pytest.raises(InputError, match="is a file, not a folder"):
        check_output_folder(file)
    with pytest.raises(InputError, match="taken is a file, so no folder can be made under it"):
        check_output_folder(file / "sub" / "deeper")
    assert check_output_folder(tmp_path / "new" / "folder") == tmp_path / "new" / "folder"
    assert not (tmp_path / "new").exists()  # checking makes nothing


def test_a_read_only_output_is_refused_before_any_work(read_only_folder):
    with pytest.raises(InputError) as caught:
        check_output_folder(read_only_folder / "out")
    assert "cannot write in" in str(caught.value) and str(read_only_folder) in str(caught.value)


def test_zigzag_run_refuses_a_read_only_output_before_the_search(read_only_folder):
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "zigzag", "run", "--workload", str(DATA / "workflow" / "small_convs.yaml"),
         "--accelerator", str(REPO / "inputs/hardware/flow_tpu_32x32.yaml"),
         "--mapping", str(REPO / "inputs/mapping/flow_tpu_32x32.yaml"),
         "--output", str(read_only_folder / "out"), "--quiet"],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    lines = completed.stderr.strip().splitlines()
    assert completed.returncode == 2 and len(lines) == 1, completed.stderr
    assert lines[0].startswith("error: ") and "cannot write in" in lines[0]
    assert "total energy" not in completed.stdout and time.perf_counter() - start < 60


def test_results_are_kept_when_the_write_fails_after_the_work(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = []

    def save(folder: Path) -> None:
        calls.append(folder)
        if len(calls) == 1:
            raise OSError(30, "Read-only file system", str(folder / "summary.json"))
        folder.mkdir(parents=True)
        (folder / "summary.json").write_text("{}")

    with pytest.raises(InputError) as caught:
        save_or_keep(save, tmp_path / "out")
    kept = calls[1]
    assert (kept / "summary.json").exists() and str(kept) in str(caught.value)
    assert "read-only file system" in str(caught.value)


def _second_run(folder: Path) -> str:
    """What the check of a run started now in ``folder`` says (its error, or its note)."""
    code = (
        "from zigzag.errors import InputError\n"
        "from zigzag.steps.folder_runs import check_single_run\n"
        "try:\n    print(check_single_run('.'))\n"
        "except InputError as exc:\n    print('error:', exc)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, check=True
    ).stdout


def test_a_second_run_in_a_folder_names_the_first_one(tmp_path):
    script = tmp_path / "snakemake.py"  # stands for a Snakemake run working in the folder
    script.write_text("import time\ntime.sleep(120)\n")
    other = subprocess.Popen([sys.executable, str(script), "--cores", "1"], cwd=tmp_path)
    try:
        time.sleep(0.5)
        message = _second_run(tmp_path)
        assert message.startswith("error:") and f"process {other.pid}" in message
        assert "do not use --unlock" in message
        assert check_single_run(tmp_path) is None  # a run started earlier does not give way
    finally:
        other.kill()
        other.wait()
    assert _second_run(tmp_path).strip() == "None"
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("x")
    assert "--unlock" in _second_run(tmp_path)  # no run alive: unlocking is safe


@pytest.mark.parametrize(
    "arguments, dry",
    [(["-n"], True), (["--cores", "2", "-np"], True), (["--dry-run"], True), (["--cores", "2"], False),
     (["--configfile", "x.yaml", "-p"], False)],
)  # fmt: skip
def test_dry_runs_are_recognised(arguments, dry):
    assert is_dry_run(arguments) is dry


def test_two_accelerator_files_with_one_name_are_kept_apart():
    rows = [
        {"experiment": "e1", "accelerator": "tpu", "accelerator_file": "a/tpu_a.yaml"},
        {"experiment": "e2", "accelerator": "tpu", "accelerator_file": "a/tpu_b.yaml"},
        {"experiment": "e3", "accelerator": "tpu", "accelerator_file": "a/tpu_a.yaml"},
        {"experiment": "e4", "accelerator": "edge", "accelerator_file": "a/edge.yaml"},
    ]
    warnings = distinct_accelerator_names(rows)
    assert [r["accelerator"] for r in rows] == ["tpu (tpu_a)", "tpu (tpu_b)", "tpu (tpu_a)", "edge"]
    assert len(warnings) == 1 and "a/tpu_a.yaml, a/tpu_b.yaml" in warnings[0]
    same_stem = [
        {"accelerator": "x", "accelerator_file": "one/acc.yaml"},
        {"accelerator": "x", "accelerator_file": "two/acc.yaml"},
    ]
    distinct_accelerator_names(same_stem)
    assert [r["accelerator"] for r in same_stem] == ["x (one/acc.yaml)", "x (two/acc.yaml)"]


def test_an_unrolling_larger_than_the_array_is_said():
    accelerator = {"operational_array": {"dimensions": ["D1", "D2"], "sizes": [16, 32]}}
    mapping = [{"name": "default", "spatial_mapping": {"D1": ["K, 32"], "D2": ["C, 32"]}}]
    notes = oversized_unrollings(mapping, accelerator)
    assert notes == [
        "mapping entry 'default'.spatial_mapping.D1: K 32 is larger than D1 (16 wide); "
        "cut down to K 16, as ZigZag does"
    ]


def test_a_sweep_value_that_cannot_work_fails_with_the_config(tmp_path):
    from zigzag.sweep.workflow import resolve_hardware_sweeps

    section = {
        "name": "ub",
        "base": str(REPO / "inputs/hardware/flow_tpu_32x32.yaml"),
        "workloads": [str(DATA / "workflow" / "small_convs.yaml")],
        "mapping": str(REPO / "inputs/mapping/flow_tpu_array.yaml"),
        "vary": {"memories.unified_buffer.size": ["2MiB", "big"]},
    }
    with pytest.raises(InputError) as caught:
        resolve_hardware_sweeps({"hardware_sweeps": [section]})
    message = str(caught.value)
    assert "hardware_sweeps[0]" in message and "'big'" in message and "2MiB" in message
    assert "quotes" not in message
    with pytest.raises(
        InputError, match=r"hardware_sweeps\[0\].*base: .*nothere.yaml does not exist"
    ):
        resolve_hardware_sweeps({"hardware_sweeps": [{**section, "base": "nothere.yaml"}]})


def test_the_report_links_the_figure_written_last(tmp_path):
    from zigzag.report.gather import _figure

    plots = tmp_path / "plots"
    plots.mkdir()
    assert _figure(tmp_path, "plots/layers") is None
    (plots / "layers.png").write_text("old")
    os.utime(plots / "layers.png", (1, 1))
    (plots / "layers.svg").write_text("<svg/>")
    assert _figure(tmp_path, "plots/layers") == "plots/layers.svg"


def test_prune_lists_only_entries_no_plan_refers_to(tmp_path, monkeypatch):
    from zigzag.steps.prune import cmd_prune, unreferenced

    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "results" / ".cache"
    for key in ("aaaa", "bbbb"):
        for folder, suffix in (("locks", ".lock"), ("results", ".json")):
            (cache / folder).mkdir(parents=True, exist_ok=True)
            (cache / folder / f"{key}{suffix}").write_text("{}")
    (tmp_path / "results" / "e1").mkdir()
    (tmp_path / "results" / "e1" / "plan.json").write_text(
        sealed_text({"layers": [{"key": "aaaa"}]})
    )
    config = {
        "experiments": [
            {
                "name": "e1",
                "workload": str(DATA / "workflow" / "small_convs.yaml"),
                "accelerator": str(REPO / "inputs/hardware/flow_tpu_32x32.yaml"),
                "mapping": str(REPO / "inputs/mapping/flow_tpu_32x32.yaml"),
            }
        ]
    }
    tables = cache / "allocations" / "cafe"  # a sweep's allocation tables: only sweeps read them
    tables.mkdir(parents=True)
    (tables / "0001.npy").write_bytes(b"table")
    (cache / "screen").mkdir()  # the guided search's screen verdicts: only sweeps read them
    (cache / "screen" / "beef.json").write_text("{}")
    stale = {p.resolve().relative_to(cache).as_posix() for p in unreferenced(config)}
    assert stale == {
        "locks/bbbb.lock",
        "results/bbbb.json",
        "allocations/cafe/0001.npy",
        "screen/beef.json",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    cmd_prune(argparse.Namespace(configfile="config.yaml", dry_run=False, quiet=True))
    assert not tables.exists() and (cache / "results" / "aaaa.json").exists()
    assert not (cache / "results" / "bbbb.json").exists()
