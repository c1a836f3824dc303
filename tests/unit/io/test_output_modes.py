"""Every output file gets the mode an ordinary open() gives it (0o666 less the umask), also the
ones written through a temporary file and a rename (figures, the CN graph, JSON)."""

from __future__ import annotations

import os
import stat

import pytest

from support import reference_input
from support.cn_graphs import REFERENCE_CASES, build_reference_graph
from zigzag.io.atomic import write_bytes_atomic, write_json_atomic
from zigzag.io.loaders import load_accelerator
from zigzag.plots import plot_memory_hierarchy
from zigzag.multicore.cn_graph import save_cn_graph


@pytest.fixture(params=[0o022, 0o027])
def umask(request):
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_atomic_json_honours_the_umask(umask, tmp_path):
    write_json_atomic(tmp_path / "summary.json", {"a": 1})
    assert mode(tmp_path / "summary.json") == 0o666 & ~umask


def test_figures_honour_the_umask(umask, tmp_path):
    path = plot_memory_hierarchy(
        load_accelerator(reference_input("hardware", "tpu_like.yaml")),
        tmp_path / "memory_hierarchy.png",
    )
    assert mode(path) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["memory_hierarchy.png"]


def test_the_cn_graph_honours_the_umask(umask, tmp_path):
    save_cn_graph(
        build_reference_graph(REFERENCE_CASES[sorted(REFERENCE_CASES)[0]]),
        tmp_path / "cn_graph.npz",
    )
    assert mode(tmp_path / "cn_graph.npz") == 0o666 & ~umask


def test_atomic_bytes_honour_the_umask_and_make_the_folder(umask, tmp_path):
    target = tmp_path / "results" / "k.json"
    write_bytes_atomic(target, b'{"a":1}\n')
    write_bytes_atomic(target, b'{"a":2}\n')  # replaced in place
    assert target.read_bytes() == b'{"a":2}\n' and mode(target) == 0o666 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["k.json"]


def test_atomic_bytes_leave_nothing_when_the_write_fails(tmp_path):
    with pytest.raises(TypeError):
        write_bytes_atomic(tmp_path / "k.json", "not bytes")
    assert list(tmp_path.iterdir()) == []
