"""The layer job's cache key: the order of the memories (the hierarchy) is part of it, the order
of other mapping keys is not, and it is the same in every process."""

from __future__ import annotations

import json
import subprocess
import sys

from support import DATA, REPO, reference_input


def _job():
    from zigzag.io.loaders import load_accelerator, load_workload
    from zigzag.mapping_search.options import SearchOptions
    from zigzag.mapping_search.jobs import layer_job

    accelerator = load_accelerator(reference_input("hardware", "tpu_like.yaml"))
    layer = load_workload(
        str(DATA / "workflow" / "small_convs.yaml"), reference_input("mapping", "tpu_like.yaml")
    ).layers[0]
    return layer_job(layer, accelerator, SearchOptions())


def test_memory_order_changes_the_key():
    from zigzag.io.accelerator_dict import accelerator_from_dict
    from zigzag.mapping_search.jobs import job_key

    job = _job()
    memories = job["accelerator"]["memories"]
    names = list(memories)
    swapped = {
        name: memories[name] for name in (names[1], names[0], *names[2:])
    }  # same content, new order
    other = {**job, "accelerator": {**job["accelerator"], "memories": swapped}}
    assert [m.name for m in accelerator_from_dict(other["accelerator"]).memories][:2] == [
        names[1],
        names[0],
    ]
    assert job_key(other) != job_key(job)


def test_order_of_other_keys_does_not_change_the_key():
    from zigzag.mapping_search.jobs import job_key

    job = _job()
    reordered = {key: job[key] for key in reversed(list(job))}
    reordered["accelerator"] = {
        key: job["accelerator"][key] for key in reversed(list(job["accelerator"]))
    }
    reordered["accelerator"]["memories"] = {
        name: {key: memory[key] for key in reversed(list(memory))}
        for name, memory in job["accelerator"]["memories"].items()
    }
    reordered["options"] = dict(reversed(list(job["options"].items())))
    assert json.dumps(reordered) != json.dumps(job)
    assert job_key(reordered) == job_key(job)


def test_key_is_the_same_in_another_process(tmp_path):
    from zigzag.mapping_search.jobs import job_key

    job = _job()
    (tmp_path / "job.json").write_text(json.dumps(job))
    code = (
        "import json, sys; from zigzag.mapping_search.jobs import job_key; "
        "print(job_key(json.load(open(sys.argv[1]))))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "job.json")],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
        timeout=60,
    )
    assert other.stdout.strip() == job_key(job)


def _copy_model_sources(destination):
    import shutil

    from zigzag.mapping_search.jobs import MODEL_SOURCES

    package = REPO / "zigzag"
    for source in MODEL_SOURCES:
        if (package / source).is_dir():
            shutil.copytree(
                package / source, destination / source, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            (destination / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(package / source, destination / source)
    return destination


def test_a_change_to_the_cost_model_changes_the_version_and_the_key(tmp_path):
    from zigzag.mapping_search import jobs

    copy = _copy_model_sources(tmp_path / "zigzag")
    assert jobs.model_version(copy) == jobs.MODEL_VERSION  # a faithful copy: same version
    model = copy / "cost" / "model" / "latency.py"
    content = bytearray(model.read_bytes())
    content[-1:] = b" " if content[-1:] != b" " else b"\n"  # one byte changed (a trailing blank)
    model.write_bytes(bytes(content))
    changed = jobs.model_version(copy)
    assert changed != jobs.MODEL_VERSION
    job = _job()
    assert jobs.job_key({**job, "model_version": changed}) != jobs.job_key(job)


def test_code_outside_the_model_does_not_change_the_version(tmp_path):
    from zigzag.mapping_search import jobs

    copy = _copy_model_sources(tmp_path / "zigzag")
    (copy / "plots").mkdir()
    (copy / "plots" / "comparison.py").write_text("# not part of the model\n")
    (copy / "cost" / "__pycache__").mkdir(exist_ok=True)
    (copy / "cost" / "__pycache__" / "model.cpython-312.pyc").write_bytes(b"bytecode")
    assert jobs.model_version(copy) == jobs.MODEL_VERSION


def test_version_is_the_same_in_a_process_without_the_site_module():
    from zigzag.mapping_search.jobs import MODEL_VERSION

    code = f"import sys; sys.path.insert(0, {str(REPO)!r}); from zigzag.mapping_search.jobs import MODEL_VERSION; print(MODEL_VERSION)"
    other = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        cwd="/",
        env={"PYTHONHASHSEED": "7", "PATH": ""},
        timeout=60,
    )
    assert other.stdout.strip() == MODEL_VERSION, other.stderr


def test_the_latency_model_enters_the_key_only_when_not_zigzags():
    """Jobs made before the option existed keep their keys; a bandwidth_bound job gets its own and
    reads the option back."""
    import dataclasses

    from zigzag.io.accelerator_dict import accelerator_from_dict
    from zigzag.mapping_search.jobs import job_key, layer_from_job, layer_job
    from zigzag.mapping_search.options import SearchOptions

    job = _job()
    assert "latency_model" not in job["options"]
    assert set(job["options"]) == {f.name for f in dataclasses.fields(SearchOptions)} - {
        "latency_model"
    }
    assert SearchOptions(**job["options"]) == SearchOptions()
    conserving = layer_job(
        layer_from_job(job),
        accelerator_from_dict(job["accelerator"]),
        SearchOptions(latency_model="bandwidth_bound"),
    )
    assert conserving["options"] == {**job["options"], "latency_model": "bandwidth_bound"}
    assert job_key(conserving) != job_key(job)
    assert SearchOptions(**conserving["options"]).latency_model == "bandwidth_bound"


def test_a_change_to_the_multicore_entry_code_changes_its_version(tmp_path):
    import shutil

    from zigzag.mapping_search import jobs
    from zigzag.multicore.cost_table.jobs import STREAM_COST_VERSION

    sources = ("multicore/cost_table", "multicore/offchip.py")
    package = REPO / "zigzag"
    (tmp_path / "multicore").mkdir()
    shutil.copytree(package / sources[0], tmp_path / sources[0])
    shutil.copy(package / sources[1], tmp_path / sources[1])
    assert jobs.model_version(tmp_path, sources) == STREAM_COST_VERSION
    offchip = tmp_path / "multicore" / "offchip.py"
    offchip.write_text(offchip.read_text() + "\n")
    assert jobs.model_version(tmp_path, sources) != STREAM_COST_VERSION
    offchip.write_text(offchip.read_text()[:-1])
    table = tmp_path / "multicore" / "cost_table" / "table.py"
    table.write_text(table.read_text() + "\n")
    assert jobs.model_version(tmp_path, sources) != STREAM_COST_VERSION
