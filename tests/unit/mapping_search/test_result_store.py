"""The result store (zigzag/mapping_search/result_store.py): the one reader and writer of the layer
results that the workflow's chunks, hardware sweeps and the API share."""

from __future__ import annotations

import logging
import multiprocessing

import pytest

from support import DATA, REPO
from zigzag.errors import MappingError
from zigzag.io.loaders import load_inputs
from zigzag.mapping_search.jobs import job_key, layer_job
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.result_store import ResultStore

ACCELERATOR = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
OPTIONS = SearchOptions(lpf_limit=3)


@pytest.fixture(scope="module")
def layer_and_job():
    workload, accelerator = load_inputs(WORKLOAD, ACCELERATOR, MAPPING)
    layer = workload.layers[0]
    job = layer_job(layer, accelerator, OPTIONS)
    return layer, accelerator, {**job, "label": "e", "layer_name": layer.name}


def test_a_result_is_searched_once_then_read(layer_and_job, tmp_path):
    layer, accelerator, job = layer_and_job
    store, key = ResultStore(tmp_path), job_key(layer_job(layer, accelerator, OPTIONS))
    assert store.read(key) is None
    data, searched = store.evaluate(key, job)
    assert searched and store.path(key).exists()
    assert store.evaluate(key, job) == (data, False)
    expected = search_layer(layer, accelerator, OPTIONS, show_progress=False)[0]
    assert store.best(job, layer, accelerator, OPTIONS, key=key) == expected
    assert (tmp_path / "locks" / f"{key}.lock").exists()


def test_a_damaged_result_is_said_and_searched_again(layer_and_job, tmp_path, caplog):
    layer, accelerator, job = layer_and_job
    store, key = ResultStore(tmp_path), "k1"
    store.evaluate(key, job)
    store.path(key).write_text(store.path(key).read_text().replace('"energy_total":', '"x":', 1))
    with caplog.at_level(logging.WARNING):
        assert store.read(key) is None
    assert str(store.path(key)) in caplog.text
    assert store.evaluate(key, job)[1] and store.read(key) is not None


def test_a_layer_nothing_fits_is_stored_as_its_failure(layer_and_job, tmp_path):
    layer, accelerator, job = layer_and_job
    tiny = {**job, "accelerator": {**job["accelerator"]}}
    tiny["accelerator"]["memories"] = {
        name: {**memory, "size": 8} for name, memory in job["accelerator"]["memories"].items()
    }
    store = ResultStore(tmp_path)
    data, searched = store.evaluate("k2", tiny)
    assert searched and data["failed"]["step"] == "evaluate"
    assert store.evaluate("k2", tiny) == (data, False)  # not searched again
    with pytest.raises(MappingError, match=data["failed"]["reason"][:30]):
        store.best(tiny, layer, accelerator, OPTIONS, key="k2")


def _evaluate(args) -> bool:
    cache, key, job = args
    return ResultStore(cache).evaluate(key, job)[1]


def test_two_processes_needing_one_layer_search_it_once(layer_and_job, tmp_path):
    job = layer_and_job[2]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        searched = pool.map(_evaluate, [(tmp_path, "k3", job)] * 2)
    assert sorted(searched) == [False, True]


def test_a_batch_job_stores_its_results_without_locks(layer_and_job, tmp_path):
    from zigzag.mapping_search.batched.shared import SharedCandidates

    layer, accelerator, job = layer_and_job
    store, key = ResultStore(tmp_path), job_key(layer_job(layer, accelerator, OPTIONS))
    result = store.best(job, layer, accelerator, OPTIONS, key=key, shared=SharedCandidates())
    assert result == search_layer(layer, accelerator, OPTIONS, show_progress=False)[0]
    assert store.read(key) is not None and not (tmp_path / "locks").exists()
    assert (
        store.best(job, layer, accelerator, OPTIONS, key=key, shared=SharedCandidates()) == result
    )
