"""Multi-core variants: the core files a sweep varies, read into the base document.

A multi-core accelerator file names its core files (``mesh.core: tpu_like.yaml``,
``offchip_core: offchip.yaml``, ``cores.3: simd.yaml``). A sweep that varies a field *inside* a
core (``offchip_core.memories.dram.ports[0].bandwidth_max``) reads that core file into the base
document first (:func:`read_core_files`), so the path exists; varying the reference itself
(``mesh.core: [tpu_like.yaml, eyeriss_like.yaml]``) swaps whole cores.

The mapping's core roles, which follow the variant's cores, are in :mod:`zigzag.multicore.roles`.

See docs/reference/sweeps.md.
"""

from __future__ import annotations

import copy
from pathlib import Path

from zigzag.errors import InputError
from zigzag.variants import documents


def read_core_files(document: dict, home: str | Path, paths) -> dict:
    """A copy of ``document`` where every core file that one of ``paths`` goes into is replaced
    by its content (found as the multi-core loader finds it, from the file ``home``)."""
    from zigzag.io.stream_cores import resolve_core_file
    from zigzag.io.yaml_files import load_yaml

    result = copy.deepcopy(document)
    for path in paths:
        steps = documents.parse_path(path)
        node, parent, key = result, None, None
        for i, step in enumerate(steps):
            if isinstance(node, str) and node.endswith((".yaml", ".yml")) and parent is not None:
                found = resolve_core_file(node, home)
                if found is None:
                    raise InputError(
                        str(home),
                        documents.format_path(steps[:i]),
                        f"core file '{node}' not found "
                        "next to the base file or in its cores/ folder",
                    )
                parent[key] = node = load_yaml(found)
            if isinstance(node, dict):
                key = documents.key_of(node, step)
                if key not in node:
                    break
                parent, node = node, node[key]
            elif (
                isinstance(node, list) and isinstance(step, int) and -len(node) <= step < len(node)
            ):
                parent, key, node = node, step, node[step]
            else:
                break
    return result
