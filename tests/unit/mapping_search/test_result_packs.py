"""Packed layer results (zigzag/mapping_search/result_packs.py): a sweep batch job appends its
results to one file instead of a file each; every store reads them, checked as a file is."""

from __future__ import annotations

import logging
import os
import signal

import pytest

from support import DATA, REPO
from zigzag.io.loaders import load_inputs
from zigzag.io.sealed import sealed_text
from zigzag.mapping_search import result_store
from zigzag.mapping_search.batched.shared import SharedCandidates
from zigzag.mapping_search.jobs import job_key, layer_job
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.result_packs import FOLDER, KEYS, PACK, PackIndex, PackWriter
from zigzag.mapping_search.result_store import ResultStore

ACCELERATOR = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
OPTIONS = SearchOptions(lpf_limit=3)


@pytest.fixture(scope="module")
def layers():
    workload, accelerator = load_inputs(WORKLOAD, ACCELERATOR, MAPPING)
    return workload.layers[:2], accelerator


def _another_process():
    """Forget what this process read of the packs, as another process starts without it."""
    result_store._INDEXES.clear()
    result_store._WRITERS.clear()


def _packs(cache):
    return sorted((cache / "results" / FOLDER).glob(f"*{PACK}"))


def test_a_batch_job_packs_its_results_and_every_store_reads_them(layers, tmp_path):
    (first, second), accelerator = layers
    _another_process()
    store, shared = ResultStore(tmp_path, packed=True), SharedCandidates()
    keys = [job_key(layer_job(layer, accelerator, OPTIONS)) for layer in (first, second)]
    results = [
        store.best(
            layer_job(layer, accelerator, OPTIONS), layer, accelerator, OPTIONS, shared=shared
        )
        for layer in (first, second)
    ]
    assert not list((tmp_path / "results").glob("*.json"))  # no file per result
    assert len(_packs(tmp_path)) == 1
    _another_process()
    plain = ResultStore(tmp_path)  # an experiment's store, in another process
    for layer, key, result in zip((first, second), keys, results):
        assert plain.read(key)["result"] == result.to_dict()
        assert plain.best(None, layer, accelerator, OPTIONS, key=key) == result
    assert not list((tmp_path / "results").glob("*.json"))  # read, not searched again
    # the pack holds what each result's own file would
    text = _packs(tmp_path)[0].read_text()
    assert text.splitlines()[0] == sealed_text(plain.read(keys[0]), keys[0]).rstrip("\n")


def test_a_store_not_packed_and_a_locked_search_write_files(layers, tmp_path):
    (first, _), accelerator = layers
    _another_process()
    key = job_key(layer_job(first, accelerator, OPTIONS))
    ResultStore(tmp_path, packed=True).best(None, first, accelerator, OPTIONS, key=key)
    assert (tmp_path / "results" / f"{key}.json").exists() and not _packs(tmp_path)


def test_a_damaged_record_is_said_and_the_result_packed_again(layers, tmp_path, caplog):
    (first, _), accelerator = layers
    _another_process()
    job = layer_job(first, accelerator, OPTIONS)
    key, store = job_key(job), ResultStore(tmp_path, packed=True)
    expected = store.best(job, first, accelerator, OPTIONS, shared=SharedCandidates())
    pack = _packs(tmp_path)[0]
    pack.write_text(pack.read_text().replace('"energy_total":', '"energy_total":1', 1))
    _another_process()
    with caplog.at_level(logging.WARNING):
        assert store.read(key) is None
    assert f"{pack}#{key} is damaged" in caplog.text
    again = store.best(job, first, accelerator, OPTIONS, shared=SharedCandidates())
    assert again == expected and len(_packs(tmp_path)) == 2
    _another_process()
    caplog.clear()
    with caplog.at_level(logging.WARNING):  # the newest record is read first
        assert store.read(key)["result"] == expected.to_dict()
    assert not caplog.text


def test_records_written_before_a_kill_survive_and_a_torn_one_is_not_listed(tmp_path, caplog):
    results = str(tmp_path / "results")
    records = {f"k{i}": sealed_text({"result": {"i": i}}, f"k{i}") for i in range(3)}
    pid = os.fork()
    if pid == 0:  # a job killed after two whole records and half of a third
        writer = PackWriter(results, PackIndex(os.path.join(results, FOLDER)))
        writer.add("k0", records["k0"])
        writer.add("k1", records["k1"])
        os.write(writer.fds[0], records["k2"].encode()[:40])
        os.kill(os.getpid(), signal.SIGKILL)
    os.waitpid(pid, 0)
    keys = next((tmp_path / "results" / FOLDER).glob(f"*{KEYS}"))
    with open(keys, "a") as torn:  # a record not (yet) whole, a garbled line, a line cut short
        torn.write("k3 0 99999\nnot a key line\nk2 12")
    _another_process()
    store = ResultStore(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert [store.read(k) for k in [*records, "k3"]] == [
            {"key": "k0", "result": {"i": 0}},
            {"key": "k1", "result": {"i": 1}},
            None,
            None,
        ]
    assert not caplog.text


def test_prune_removes_the_packs_no_plan_refers_to(tmp_path):
    from zigzag.steps.prune import _stale_packs

    results = str(tmp_path / "results")
    for keys in (["aaaa", "bbbb"], ["cccc"]):
        writer = PackWriter(results, PackIndex(os.path.join(results, FOLDER)))
        for key in keys:
            writer.add(key, sealed_text({"result": {}}, key))
    first, second = _packs(tmp_path)
    stale = _stale_packs(tmp_path, {"bbbb"})
    assert stale == [second, second.with_suffix(KEYS)]
