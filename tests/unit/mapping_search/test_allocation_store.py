"""Allocation tables kept in the cache folder (zigzag/mapping_search/batched/allocation_store.py): a
later job of the same structure takes them and gives the same layer results; a damaged file is
said, never used, removed and allocated again."""

from __future__ import annotations

import logging

import numpy as np
import yaml

from support import DATA, REPO
from support.sharing import shared_search
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.batched.allocation_store import FOLDER, AllocationStore
from zigzag.mapping_search.batched.shared import SharedCandidates
from zigzag.mapping_search.options import SearchOptions

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
KIB = 8 * 1024
OPTIONS = SearchOptions(lpf_limit=3)
STORE_LOG = "zigzag.mapping_search.batched.allocation_store"


def variant(ub_kib: int, acc_kib: int, bandwidth: int):
    """The 32x32 example with another unified buffer size, accumulator size and buffer bandwidth."""
    document = yaml.safe_load(BASE.read_text())
    memories = document["memories"]
    memories["unified_buffer"]["size"] = ub_kib * KIB
    memories["accumulators"]["size"] = acc_kib * KIB
    for port in memories["unified_buffer"]["ports"]:
        port["bandwidth_max"] = bandwidth
    return accelerator_from_dict(validate_accelerator(document, f"ub{ub_kib}-acc{acc_kib}"))


def layers():
    text = (REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml").read_text()
    entries = [MappingEntry.from_dict(entry) for entry in yaml.safe_load(text)]
    return load_workload(str(WORKLOAD), entries).layers


def job(specs, cache=None) -> tuple[list[dict], SharedCandidates]:
    """A batch job's layer results (as dicts) of the variants ``specs``, sharing as a sweep's
    job does, with its allocation tables kept in ``cache`` when given."""
    shared = SharedCandidates()
    if cache is not None:
        shared.allocations.store = AllocationStore(cache)
    results = []
    for spec in specs:
        accelerator = variant(*spec)
        for layer in layers():
            results.append(shared_search(shared, layer, accelerator, OPTIONS).to_dict())
    return results, shared


FIRST = [(1024, 512, 512), (1024, 512, 128)]
SECOND = [(1024, 512, 256), (8, 512, 512)]  # inside the first job's bounds, then outside


def test_a_later_job_takes_the_kept_tables_and_gives_the_same_results(tmp_path):
    alone, _ = job(SECOND)
    job(FIRST, tmp_path)
    files = list((tmp_path / FOLDER).rglob("*.bin"))
    assert files
    together, shared = job(SECOND, tmp_path)
    assert together == alone
    allocations = shared.allocations
    assert allocations.loaded > 0 and allocations.borrowed > 0  # read, then taken as they were
    # the second job's new tables were kept beside the first's
    assert len(list((tmp_path / FOLDER).rglob("*.bin"))) > len(files)


def test_tables_read_back_are_the_arrays_written(tmp_path):
    _, shared = job(FIRST[:1])
    store = AllocationStore(tmp_path, alternatives=2)
    problems = list(shared.allocations.problems.items())
    problem, tables = problems[0]
    chunks = [(e.ids, e.alive, e.cuts, e.bounds) for e in tables[0]]
    for _ in range(3):  # the oldest dropped beyond ``alternatives``
        store.save(problem, chunks)
    assert len(list(store.folder(problem).iterdir())) == 2
    read = store.load(problem)
    assert len(read) == 2
    for (ids, alive, cuts, bounds), entry in zip(read[0], tables[0], strict=True):
        assert np.array_equal(ids, entry.ids) and ids.dtype == entry.ids.dtype
        assert np.array_equal(alive, entry.alive)
        assert cuts.keys() == entry.cuts.keys()
        assert all(np.array_equal(cuts[op], entry.cuts[op]) for op in cuts)
        assert bounds.keys() == entry.bounds.keys()
        for memory, (low, high) in bounds.items():
            assert np.array_equal(low, entry.bounds[memory][0])
            assert np.array_equal(high, entry.bounds[memory][1])
    assert store.load(problems[-1][0] + ("another",)) == []  # another problem: none kept


def test_damaged_tables_are_said_never_used_and_allocated_again(tmp_path, caplog):
    alone, _ = job(SECOND)
    job(FIRST, tmp_path)
    files = sorted((tmp_path / FOLDER).rglob("*.bin"))
    damages = [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: b"",  # emptied
        lambda data: data[:-9] + bytes([data[-9] ^ 1]) + data[-8:],  # one bit flipped
        lambda data: b"garbage\n" * 20,
    ]
    for number, path in enumerate(files):
        path.write_bytes(damages[number % len(damages)](path.read_bytes()))
    with caplog.at_level(logging.WARNING):
        together, shared = job(SECOND, tmp_path)
    assert together == alone
    assert shared.allocations.borrowed == 0  # nothing taken from a damaged file
    warnings = [r.getMessage() for r in caplog.records if r.name == STORE_LOG]
    assert len(warnings) == len(files)
    assert all(" is damaged (" in w and "not used" in w for w in warnings)
    assert not any(path.exists() for path in files)  # removed, the new tables written
    assert list((tmp_path / FOLDER).rglob("*.bin"))


def test_a_file_written_for_another_problem_is_not_used(tmp_path, caplog):
    _, shared = job(FIRST[:1])
    store = AllocationStore(tmp_path)
    (one, tables), (other, _) = list(shared.allocations.problems.items())[:2]
    store.save(one, [(e.ids, e.alive, e.cuts, e.bounds) for e in tables[0]])
    (written,) = store.folder(one).iterdir()
    store.folder(other).mkdir(parents=True)
    written.rename(store.folder(other) / written.name)
    with caplog.at_level(logging.WARNING):
        assert store.load(other) == []
    assert "written for" in caplog.text


def test_the_oldest_tables_are_dropped_beyond_alternatives_across_processes(tmp_path):
    """A store lists a problem's folder again only when the files it saw there and wrote reach
    ``alternatives``; another process's store (a new instance) keeps the bound from what it reads."""
    problem = ("a problem",)
    n = 4
    chunks = [
        (
            np.arange(n),
            np.ones(n, dtype=bool),
            {"O": np.zeros((n, 3), dtype=np.int64)},
            {"buffer": (np.zeros(n), np.full(n, 8.0))},
        )
    ]
    first = AllocationStore(tmp_path, alternatives=3)
    assert first.load(problem) == []
    for count in range(1, 6):
        first.save(problem, chunks)
        assert len(list(first.folder(problem).iterdir())) == min(count, 3)
    later = AllocationStore(tmp_path, alternatives=3)
    assert len(later.load(problem)) == 3
    later.save(problem, chunks)
    assert len(list(later.folder(problem).iterdir())) == 3
