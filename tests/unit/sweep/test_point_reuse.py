"""What a sweep's batch job reads once for all its variants (zigzag/sweep/point.py): the mapping file
(a copy per point) and the layer jobs' keys (zigzag/mapping_search/job_keys.py) give the points
what reading and encoding them anew gives."""

from __future__ import annotations

from support import DATA, REPO
from zigzag.mapping_search import jobs
from zigzag.sweep.config import read_sweep
from zigzag.sweep.point import point_mapping
from zigzag.sweep.runner import evaluate_points, variants_of

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_array.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"


def sweep():
    section = {
        "name": "reuse",
        "base": str(BASE),
        "params": {"D1": "operational_array.sizes[0]", "D2": "operational_array.sizes[1]"},
        "zip": [{"D1": [32, 16], "D2": [32, 8]}],
        "workloads": [str(WORKLOAD)],
        "mapping": str(MAPPING),
    }
    return read_sweep(section, "test", defaults={"lpf_limit": 2})


def test_mapping_file_read_once_gives_the_documents_read_each_time():
    s = sweep()
    variants = variants_of(s)
    parsed = {}
    for variant in variants:
        kept = point_mapping(s, variant, parsed)
        assert kept == point_mapping(s, variant)
        kept[0]["spatial_mapping"]["D1"] = ["changed"]  # a point's own copy
    assert point_mapping(s, variants[0], parsed) == point_mapping(s, variants[0])
    assert [name for name, *_ in parsed] == ["mapping file"]


def test_points_with_keys_from_parts_write_the_whole_jobs_results(tmp_path):
    s = sweep()
    variants = variants_of(s)
    shared = evaluate_points(s, variants, tmp_path / "together")
    alone = evaluate_points(s, variants, tmp_path / "alone", share=False)
    assert shared == alone and all(row["status"] == "ok" for row in shared)
    # every result file is named by the key of its whole job (jobs.job_key)
    from zigzag.io.accelerator_dict import accelerator_from_dict
    from zigzag.io.loaders import checked_accelerator, load_workload
    from zigzag.mapping.entry import MappingEntry
    from zigzag.mapping_search.options import SearchOptions

    expected = set()
    for variant in variants:
        data = checked_accelerator(variant.document, variant.name)
        entries = [MappingEntry.from_dict(e) for e in point_mapping(s, variant)]
        accelerator = accelerator_from_dict(data)
        options = SearchOptions(**s.options).resolved(False)
        for layer in load_workload(str(WORKLOAD), entries).layers:
            expected.add(jobs.job_key(jobs.layer_job(layer, accelerator, options)))
    for folder in ("together", "alone"):
        stored = {p.stem for p in (tmp_path / folder / "results").glob("*.json")}
        assert stored == expected
