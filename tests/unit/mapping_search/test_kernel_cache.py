"""The compiled kernels are cached per version of every source they use, not only their own file
(zigzag/mapping_search/batched/kernel_cache.py): numba would otherwise load stale machine code
after an edit of an inlined helper in another file."""

from __future__ import annotations

import numba

from zigzag.mapping_search.batched import kernel_cache


def test_every_kernel_is_cached_in_the_folder_of_its_sources_digest():
    from zigzag.mapping_search.batched import allocation_kernels, kernels, movement_kernels

    folder = f"kernels-{kernel_cache.sources_digest()}"
    dispatchers = [
        value
        for module in (kernels, movement_kernels, allocation_kernels)
        for value in vars(module).values()
        if isinstance(value, numba.core.registry.CPUDispatcher)
        and value._cache is not None
        and value._cache.__class__.__name__ == "FunctionCache"
    ]
    assert len(dispatchers) == 13
    assert all(folder in dispatcher._cache._cache_path for dispatcher in dispatchers)
    assert numba.config.CACHE_DIR == ""  # numba's own setting is left as it was


def test_an_edit_of_any_source_names_another_folder(tmp_path):
    sources = []
    for name in ("kernels.py", "helpers.py"):
        path = tmp_path / name
        path.write_text("def f():\n    return 1\n")
        sources.append(path)
    before = kernel_cache.sources_digest(tuple(sources))
    sources[1].write_text("def f():\n    return 2\n")
    assert kernel_cache.sources_digest(tuple(sources)) != before
    assert all(path.exists() for path in kernel_cache.SOURCES)


def test_a_folder_that_cannot_be_written_leaves_numba_its_own_choice(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert kernel_cache.kernel_cache_folder(str(blocker)) is None
    assert kernel_cache.kernel_cache_folder(str(tmp_path)).startswith(str(tmp_path / "kernels-"))
