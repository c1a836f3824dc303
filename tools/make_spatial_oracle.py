#!/usr/bin/env python3
"""Record the reference ZigZag's ranked spatial mapping candidates as test data.

Runs the reference's ``SpatialMappingGeneratorStage`` (zigzag-dse 3.8.5) on a set of
(layer, hardware, mapping, mixing) cases and writes ``tests/data/spatial_oracle.json``. For each
case it stores the number of valid candidates, the first ``--keep`` candidates of the ranked list
(each with its performance indicator, key order kept by writing mappings as lists of pairs) and
the mappings the stage yields with ``nb_mappings_generated=3`` (after capacity limiting).

Only the reference's own classes are called; nothing of it is copied. Run it with the Python of
the reference venv (it imports as ``zigzag`` too, so never with our package on the path)::

    nice -n 10 /work/.venv-reference/bin/python tools/make_spatial_oracle.py

How the ranked list is read: the stage's generator is asked for every candidate
(``nb_mappings_generated`` = a huge number) with capacity limiting switched off on that stage
instance; the yielded mappings are then the sorted candidate list. The top 3 are afterwards passed
through the stage's real capacity limiting, as the generator does. Cases with more than
``--max-combinations`` raw combinations are recorded as skipped.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import logging
import math
import shutil
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REF_INPUTS = Path("/work/shared/reference/zigzag")
OUTPUT = REPO / "tests" / "data" / "spatial_oracle.json"
NO_SM = "tests/data/mappings/default_no_sm_tpu.yaml"
LAYERS = (0, 1, 2, 4, 8, 30)
# Stages refuse an empty sub-stage list; this one is never run.
UNUSED_SUBSTAGES = [lambda *args, **kwargs: None]
# tpu_like with an output register file of 8 elements shared over the whole array (and a wide
# write port, so that bandwidth limiting stays off): exercises capacity limiting (A.6).
SMALL_OUTPUT_RF = {
    "memories.rf_2B.size": 128,
    "memories.rf_2B.served_dimensions": ["D1", "D2"],
    "memories.rf_2B.ports.3.bandwidth_max": 1024,
}
HARDWARE = {"tpu_like": "tpu_like", "ascend_like": "ascend_like", "eyeriss_like": "default"}


def case_list() -> list[dict]:
    """All cases: name, layer id, hardware and mapping paths ('@ref/' = reference inputs), mixing."""
    cases = []
    for hardware, own_mapping in HARDWARE.items():
        for mapping_tag, mapping in (("own", f"@ref/mapping/{own_mapping}.yaml"), ("no_sm", NO_SM)):
            for layer, mixing in itertools.product(LAYERS, (False, True)):
                cases.append(_case(layer, hardware, mapping, mixing, mapping_tag))
    extra = (
        (2, "spatial_mix_hint_tpu", True),
        (2, "spatial_hint_partly_invalid_tpu", False),
        (2, "spatial_overlap_tpu", False),
        (2, "tpu_like_mixed", True),
        (8, "tpu_like_mixed_hint", True),
        (30, "tpu_like_mixed_hint", True),
    )
    for layer, name, mixing in extra:
        cases.append(_case(layer, "tpu_like", f"tests/data/mappings/{name}.yaml", mixing, name))
    for layer, name in (
        (2, "spatial_capacity_tpu"),
        (2, "default_no_sm_tpu"),
        (30, "default_no_sm_tpu"),
    ):
        case = _case(
            layer, "tpu_like", f"tests/data/mappings/{name}.yaml", False, f"{name}__small_rf"
        )
        cases.append(dict(case, hardware_patch=SMALL_OUTPUT_RF))
    return cases


def _case(layer: int, hardware: str, mapping: str, mixing: bool, tag: str) -> dict:
    name = f"L{layer}__{hardware}__{tag}__{'mix' if mixing else 'nomix'}"
    return {
        "name": name,
        "workload": "@ref/workload/resnet18.yaml",
        "layer": layer,
        "hardware": f"@ref/hardware/{hardware}.yaml",
        "mapping": mapping,
        "mixing": mixing,
    }


def patched_hardware(case: dict, folder: Path) -> str:
    """The case's hardware file, with its ``hardware_patch`` (dotted path -> value) applied."""
    path = resolve(case["hardware"])
    if "hardware_patch" not in case:
        return path
    import yaml

    data = yaml.safe_load(Path(path).read_text())
    for dotted, value in case["hardware_patch"].items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    target = folder / f"{case['name']}.yaml"
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(target)


def resolve(path: str) -> str:
    return str(REF_INPUTS / path[5:]) if path.startswith("@ref/") else str(REPO / path)


def as_pairs(mapping) -> list:
    """A reference SpatialMapping as [[oa, [[dim, factor], ...]], ...] (order kept)."""
    return [
        [oa.name, [[dim.name, f] for dim, f in unrolling.items()]]
        for oa, unrolling in mapping.items()
    ]


def indicator_of(mapping) -> float | None:
    """The reference's performance indicator, or None where it cannot be computed (no dims)."""
    try:
        return mapping.get_performance_indicator()
    except ValueError:
        return None


def make_stage(layer, accelerator, mixing: bool, nb: int):
    from zigzag.stages.mapping.spatial_mapping_generation import SpatialMappingGeneratorStage

    return SpatialMappingGeneratorStage(
        UNUSED_SUBSTAGES,
        accelerator=accelerator,
        layer=layer,
        enable_mix_spatial_mapping_generation=mixing,
        nb_mappings_generated=nb,
    )


def raw_combinations(stage) -> int:
    """Number of combinations the stage would check (product of per-OA-dim candidate counts)."""
    max_unroll = stage.get_max_unrolling()
    template = copy.deepcopy(stage.provided_mapping)
    template.initialize_oa_dims(stage.oa_dim_sizes)
    template.check_and_reduce(max_unroll, stage.layer_dim_sizes.data)
    return math.prod(
        len(
            list(
                stage.generate_spatial_mapping_single_oa_dim(
                    stage.spatial_mapping_hint[oa], max_unroll[oa], stage.oa_dim_sizes[oa]
                )
            )
        )
        for oa in stage.oa_dim_sizes
        if oa not in template
    )


def run_case(case: dict, keep: int, max_combinations: int, folder: Path) -> dict:
    from zigzag.stages.parser.accelerator_parser import AcceleratorParserStage
    from zigzag.stages.parser.workload_parser import WorkloadParserStage

    accelerator = AcceleratorParserStage.parse_accelerator(patched_hardware(case, folder))
    parser = WorkloadParserStage(
        UNUSED_SUBSTAGES, workload=resolve(case["workload"]), mapping=resolve(case["mapping"])
    )
    layer = next(n for n in parser.parse_workload().layer_node_list if n.id == case["layer"])
    stage = make_stage(layer, accelerator, case["mixing"], 10**12)
    result = dict(case)
    try:
        combinations = raw_combinations(stage)
        if combinations > max_combinations:
            result["skipped"] = f"{combinations} raw combinations"
            return result
        capacity_limit = stage.limit_unrolling_to_mem_capacity
        stage.limit_unrolling_to_mem_capacity = lambda mapping: mapping
        ranked = list(stage.generate_spatial_mappings())
    except (AssertionError, KeyError, TypeError) as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        return result
    result["count"] = len(ranked)
    result["candidates"] = [
        {"mapping": as_pairs(m), "indicator": indicator_of(m)} for m in ranked[:keep]
    ]
    result["generated"] = [as_pairs(capacity_limit(copy.deepcopy(m))) for m in ranked[:3]]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=int, default=50, help="candidates stored per case")
    parser.add_argument("--max-combinations", type=int, default=200_000)
    parser.add_argument(
        "--case", action="append", help="only (re)run these cases, keeping the others"
    )
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    cases = [c for c in case_list() if not args.case or c["name"] in args.case]
    previous = json.loads(OUTPUT.read_text())["cases"] if args.case and OUTPUT.exists() else {}
    results = dict(previous)
    folder = Path(tempfile.mkdtemp(prefix="spatial_oracle_"))
    for case in cases:
        results[case["name"]] = run_case(case, args.keep, args.max_combinations, folder)
        state = results[case["name"]]
        outcome = state.get("count", state.get("skipped", state.get("error")))
        print(case["name"], outcome, file=sys.stderr, flush=True)
    document = {
        "generated_by": "tools/make_spatial_oracle.py",
        "reference": f"zigzag-dse {version('zigzag-dse')}",
        "keep": args.keep,
        "cases": results,
    }
    OUTPUT.write_text(json.dumps(document, indent=1) + "\n")
    shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
