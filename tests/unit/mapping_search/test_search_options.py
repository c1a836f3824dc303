"""Search behaviour beyond the reference's oracles: SALSA, and inputs on which the reference crashes."""

from __future__ import annotations

import pytest
import yaml

from support import reference_input
from zigzag.errors import InputError, MappingError
from zigzag.io.loaders import load_inputs
from zigzag.mapping_search.spatial_mapping import convert
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.loma import temporal_mappings
from zigzag.mapping_search.options import SearchOptions

CONV2 = {  # resnet18.yaml layer 2 (conv2_1)
    "id": 2,
    "name": "conv2_1",
    "operator_type": "Conv",
    "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
    "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
    "loop_dims": ["B", "K", "C", "OY", "OX", "FY", "FX"],
    "loop_sizes": [1, 64, 64, 56, 56, 3, 3],
    "operand_precision": {"W": 8, "I": 8, "O": 16, "O_final": 8},
    "operand_source": {"I": 2, "W": 2},
}


def tpu_mapping(tmp_path, temporal_ordering=None) -> str:
    entry = {
        "name": "default",
        "spatial_mapping": {"D1": ["K, 32"], "D2": ["C, 32"]},
        "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
    }
    if temporal_ordering is not None:
        entry["temporal_ordering"] = temporal_ordering
    path = tmp_path / "mapping.yaml"
    path.write_text(yaml.safe_dump([entry]))
    return str(path)


def conv2_on_tpu(tmp_path, temporal_ordering=None, hardware=None):
    workload, accelerator = load_inputs(
        [CONV2],
        hardware or reference_input("hardware", "tpu_like.yaml"),
        tpu_mapping(tmp_path, temporal_ordering),
    )
    return workload.layers[0], accelerator


def orderings(layer, accelerator) -> list[list[tuple[str, int]]]:
    (array_mapping,) = [{"D1": {"K": 32}, "D2": {"C": 32}}]
    fractional, _ = convert(array_mapping, layer, accelerator)
    return [
        [loop for level in tm["O"] for loop in level]
        for tm in temporal_mappings(layer, accelerator, fractional, show_progress=False)
    ]


def test_fixed_loop_size_made_of_several_primes(tmp_path):
    """ZigZag crashes on [OX, 56] (56 = 2^3 * 7); the documentation promises the loop at that place."""
    layer, accelerator = conv2_on_tpu(tmp_path, [["OX", 56]])
    found = orderings(layer, accelerator)
    assert found and all(ordering[0] == ("OX", 56) for ordering in found)
    assert len(found) == 120  # the other five loops (K2 C2 OY56 FY3 FX3) in every order


def test_wildcard_anchors_following_rows_to_the_outermost_loops(tmp_path):
    """ZigZag drops the ['*', '*'] row at parse time; its documentation says it anchors what follows."""
    layer, accelerator = conv2_on_tpu(tmp_path, [["C", "*"], ["*", "*"], ["K", "*"]])
    found = orderings(layer, accelerator)
    assert found and all(o[0][0] == "C" and o[-1][0] == "K" for o in found)
    assert len(found) == 24


def test_impossible_fixed_loop_is_a_clear_error(tmp_path):
    layer, accelerator = conv2_on_tpu(tmp_path, [["OX", 5]])
    with pytest.raises(
        InputError,
        match=r"mapping entry 'default'.temporal_ordering: cannot be met by layer conv2_1",
    ):
        orderings(layer, accelerator)


def test_padding_without_pr_loop_dims_is_reported(tmp_path):
    bad = {**CONV2, "padding": [[1, 1], [1, 1]]}
    with pytest.raises(InputError, match="padding"):
        load_inputs([bad], reference_input("hardware", "tpu_like.yaml"), tpu_mapping(tmp_path))


def salsa(seed: int, iterations: int = 150) -> SearchOptions:
    return SearchOptions(
        temporal_mapping_search_engine="salsa", salsa_seed=seed, salsa_iteration_number=iterations
    )


def test_salsa_is_deterministic_for_a_seed(tmp_path):
    layer, accelerator = conv2_on_tpu(tmp_path)
    first, stats = search_layer(layer, accelerator, salsa(7))
    second, _ = search_layer(layer, accelerator, salsa(7))
    assert first.to_dict() == second.to_dict()
    assert stats.evaluations > 100


def test_salsa_finds_a_mapping_as_good_as_a_plausible_search(tmp_path):
    layer, accelerator = conv2_on_tpu(tmp_path)
    loma, _ = search_layer(layer, accelerator, SearchOptions(opt="energy"))
    annealed, _ = search_layer(layer, accelerator, salsa(3, iterations=400))
    assert annealed.energy_total <= 1.5 * loma.energy_total
    assert annealed.latency_total2 >= annealed.ideal_cycle


def test_salsa_survives_moves_that_do_not_fit(tmp_path, monkeypatch):
    """Orderings whose innermost loop is an OX loop 'do not fit': SALSA rejects those moves and ends."""
    from zigzag.mapping_search import salsa as salsa_module

    class PickyAllocator(salsa_module.MemoryLevelAssigner):
        def assign(self, ordering):
            if ordering[0][0] == "OX":
                raise salsa_module.LevelAssignmentFailed("rf", "O", 2, 1)
            return super().assign(ordering)

    monkeypatch.setattr(salsa_module, "MemoryLevelAssigner", PickyAllocator)
    layer, accelerator = conv2_on_tpu(tmp_path)
    result, stats = search_layer(layer, accelerator, salsa(1, iterations=300))
    innermost = [loop for level in result.temporal_mapping["O"] for loop in level][0]
    assert innermost[0] != "OX"
    assert 0 < stats.evaluations < 301


@pytest.mark.slow
def test_nothing_fits_is_a_mapping_error(tmp_path):
    hardware = yaml.safe_load(open(reference_input("hardware", "tpu_like.yaml")))
    hardware["memories"]["dram"]["size"] = 100_000
    path = tmp_path / "tiny_dram.yaml"
    path.write_text(yaml.safe_dump(hardware, sort_keys=False))
    layer, accelerator = conv2_on_tpu(tmp_path, hardware=str(path))
    for options in (SearchOptions(), salsa(1, iterations=20)):
        with pytest.raises(MappingError, match="conv2_1"):
            search_layer(layer, accelerator, options)
