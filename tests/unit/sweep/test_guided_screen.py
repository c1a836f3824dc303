"""The guided search's feasibility screen (zigzag.sweep.guided_screen): it rejects only variants
that fail when evaluated, and the search never evaluates a position it rejects."""

from __future__ import annotations

import itertools

import pytest

from support import DATA, REPO
from zigzag.errors import InputError
from zigzag.sweep import read_sweep
from zigzag.sweep.guided import INFEASIBLE, guided_search
from zigzag.sweep.guided_screen import Screen, covered
from zigzag.sweep.hardware_search import evaluate_position
from zigzag.variants import axis_sizes

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_array.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
#: a 32-bit port under the buffer's 64-bit granularity is invalid; 4 KiB holds no conv's output
SWEEP = {
    "name": "screened",
    "base": str(BASE),
    "lpf_limit": 2,
    "params": {
        "ub": "memories.unified_buffer.size",
        "bw": "memories.unified_buffer.ports[0].bandwidth_max",
    },
    "vary": {"ub": ["4KiB", "1MiB"], "bw": [32, 256]},
    "derive": {"memories.unified_buffer.ports[0].bandwidth_min": "64"},
    "workloads": [str(WORKLOAD)],
    "mapping": str(MAPPING),
}


@pytest.mark.slow
def test_the_screen_rejects_only_variants_that_fail(tmp_path):
    sweep = read_sweep(SWEEP)
    screen = Screen(sweep)
    assert covered(sweep) and screen.active
    statuses, reasons = {}, {}
    for position in itertools.product(*(range(n) for n in axis_sizes(sweep.spec))):
        rows = evaluate_position(sweep, position, tmp_path / "cache", {})
        statuses[position] = {r["status"] for r in rows}
        reasons[position] = screen.reason(position)
    # ub 4 KiB, bw 256: runs out of memory; bw 32: invalid; ub 1 MiB, bw 256: runs
    assert statuses == {
        (0, 0): {"invalid"},
        (0, 1): {"infeasible"},
        (1, 0): {"invalid"},
        (1, 1): {"ok"},
    }
    assert reasons[(1, 1)] is None
    assert "bandwidth_min" in reasons[(0, 0)] and "bandwidth_min" in reasons[(1, 0)]
    assert reasons[(0, 1)].startswith("no loop ordering of layer")
    assert screen.seconds > 0


def test_a_sweep_the_screen_does_not_cover_passes_every_variant():
    sweep = read_sweep({**SWEEP, "temporal_mapping_search_engine": "salsa"})
    screen = Screen(sweep)
    assert not covered(sweep) and screen.reason((0, 0)) is None


def test_the_search_never_evaluates_a_rejected_position():
    """Half the grid fails; with a screen that knows it, every evaluation runs and the budget is
    spent whole; the screen is asked once per position at most."""
    sizes = (6, 5, 4)

    def objectives(p):
        if p[0] + p[1] < 4:
            return (INFEASIBLE,) * 3
        return (10.0 / (1 + p[0]) + p[2], 8.0 / (1 + p[1]) + p[2], p[0] + p[1] + 0.1 * p[2])

    asked = []

    def screen(p):
        asked.append(p)
        return objectives(p)[0] < INFEASIBLE

    found = guided_search(sizes, lambda ps: [objectives(p) for p in ps], 24, 6, 1, screen=screen)
    assert len(found) == 24
    assert all(v[0] < INFEASIBLE for v in found.values())
    assert len(asked) == len(set(asked))
    again = guided_search(sizes, lambda ps: [objectives(p) for p in ps], 24, 6, 1, screen=screen)
    assert list(again) == list(found)


def test_the_screen_is_a_search_option():
    assert read_sweep({**SWEEP, "search": {}}).search.screen is True
    assert read_sweep({**SWEEP, "search": {"screen": False}}).search.screen is False
    with pytest.raises(InputError, match=r"search\.screen"):
        read_sweep({**SWEEP, "search": {"screen": "yes"}})


def test_the_screen_can_be_switched_off_from_the_command_line():
    import argparse

    from zigzag.sweep.flags import with_search_flags

    names = ("method", "population", "generations", "seed", "workers")
    args = argparse.Namespace(
        search=True, search_screen=False, **{f"search_{k}": None for k in names}
    )
    assert with_search_flags({"name": "s"}, args)["search"] == {"screen": False}


def test_a_grid_the_screen_rejects_whole_evaluates_one_variant_to_tell_why():
    found = guided_search(
        (4, 3), lambda ps: [(INFEASIBLE,) * 3 for _ in ps], 6, 3, 0, screen=lambda p: False
    )
    assert len(found) == 1 and next(iter(found.values()))[0] == INFEASIBLE


def test_the_verdicts_are_kept_in_the_cache_for_later_screens(tmp_path, monkeypatch):
    sweep = read_sweep(SWEEP)
    first = Screen(sweep, tmp_path)
    reasons = {p: first.reason(p) for p in [(0, 1), (1, 1)]}
    assert reasons[(1, 1)] is None and reasons[(0, 1)].startswith("no loop ordering of layer")
    files = list((tmp_path / "screen").iterdir())
    assert files

    def checked(*args):
        raise AssertionError("a kept verdict was checked again")

    monkeypatch.setattr(Screen, "_layer_reason", checked)
    again = Screen(sweep, tmp_path)
    assert {p: again.reason(p) for p in reasons} == reasons
    # another sweep over the same structures: its positions are new, its layers' verdicts kept
    swapped = read_sweep({**SWEEP, "vary": {"ub": ["1MiB", "4KiB"], "bw": [32, 256]}})
    other = Screen(swapped, tmp_path)
    assert other.reason((0, 1)) is None
    assert other.reason((1, 1)) == reasons[(0, 1)]


def test_a_damaged_verdicts_file_is_told_removed_and_checked_again(tmp_path, caplog):
    sweep = read_sweep(SWEEP)
    Screen(sweep, tmp_path).reason((1, 1))
    paths = list((tmp_path / "screen").iterdir())  # the position's and its layers' verdicts
    assert len(paths) == 2
    for path in paths:
        path.write_text(path.read_text().replace("null", '"cannot run"', 1))
    with caplog.at_level("WARNING"):
        assert Screen(sweep, tmp_path).reason((1, 1)) is None
    assert caplog.text.count("is damaged") == 2 and "checked again" in caplog.text
    assert all(path.exists() for path in paths)  # written again, sound
    assert Screen(sweep, tmp_path).reason((1, 1)) is None


#: ResNet-18's first convolution: on small buffers of a wide array, the first loop ordering
#: LOMA enumerates does not fit where a later one does (the batched allocator's case)
STEM = """\
- id: 0
  name: stem
  operator_type: Conv
  equation: O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]
  dimension_relations: [ix=2*ox+1*fx, iy=2*oy+1*fy]
  loop_dims: [B, K, C, OY, OX, FY, FX]
  loop_sizes: [1, 64, 3, 112, 112, 7, 7]
  pr_loop_dims: [IX, IY]
  pr_loop_sizes: [224, 224]
  padding: [[3, 3], [3, 3]]
  operand_precision: {W: 8, I: 8, O: 16, O_final: 8}
  operand_source: {I: 0, W: 0}
"""


@pytest.mark.parametrize("temporal_mapping_type", ["uneven", "even"])
def test_the_batched_verdicts_are_the_scalar_allocators(
    tmp_path, monkeypatch, temporal_mapping_type
):
    """Every spatial mapping the screen judges, on layers and buffers that fit and that do not:
    the screen's verdict (the first ordering scalar, the others batched) and the batched walk
    alone are those of the scalar allocator over every ordering; and the whole grid's reasons
    are those of the scalar screen (``ZIGZAG_EVAL=scalar``, the screen as it was)."""
    import zigzag.sweep.guided_screen as screening
    from zigzag.mapping_search import spatial_mapping
    from zigzag.mapping_search.loma import layer_temporal_loops, ordering_factors
    from zigzag.mapping_search.memory_levels import MemoryLevelAssigner
    from zigzag.mapping_search.permutations import multiset_permutations, satisfies

    (tmp_path / "stem.yaml").write_text(STEM)
    sweep = read_sweep(
        {
            **SWEEP,
            "lpf_limit": 4,
            "temporal_mapping_type": temporal_mapping_type,
            "params": {**SWEEP["params"], "D1": "operational_array.sizes[0]"},
            "vary": {
                "ub": ["2KiB", "3KiB", "4KiB", "8KiB", "32KiB", "96KiB", "128KiB", "1MiB"],
                "bw": [256],
                "D1": [8, 32],
            },
            "workloads": [str(WORKLOAD), str(tmp_path / "stem.yaml")],
        }
    )
    asked = []
    judged = screening.ordering_fits

    def recorded(*args):
        verdict = judged(*args)
        asked.append((args, verdict))
        return verdict

    monkeypatch.setattr(screening, "ordering_fits", recorded)
    positions = list(itertools.product(*(range(n) for n in axis_sizes(sweep.spec))))
    screen = Screen(sweep)
    reasons = [screen.reason(p) for p in positions]
    assert any(r is None for r in reasons) and any(r is not None for r in reasons)
    cases = set()
    for (layer, accelerator, array_mapping, options), verdict in asked:
        fractional, _ = spatial_mapping.convert(array_mapping, layer, accelerator)
        even = options.temporal_mapping_type == "even"
        assert even == (temporal_mapping_type == "even")
        constraints, factors = ordering_factors(
            layer, layer_temporal_loops(layer, fractional), options.lpf_limit
        )
        orderings = [
            o
            for o in multiset_permutations(factors)
            if not constraints or satisfies(o, constraints)
        ]
        scalar = MemoryLevelAssigner(layer, accelerator, fractional, even=even)
        everyone = screening._placed(scalar, orderings)
        batched = screening.batched_fit(layer, accelerator, fractional, factors, constraints, even)
        assert verdict == everyone == batched, (layer.name, accelerator.name, array_mapping)
        cases.add((screening._placed(scalar, orderings[:1]), everyone))
    # fits at once, fits only with a later ordering, fits with none
    assert cases == {(True, True), (False, True), (False, False)}
    # ZIGZAG_EVAL=scalar: the screen's verdicts from the scalar allocator alone, as before
    monkeypatch.setenv("ZIGZAG_EVAL", "scalar")
    monkeypatch.setattr(screening, "batched_fit", None)
    assert [judged(*args) for args, _ in asked] == [verdict for _, verdict in asked]
    scalar_screen = Screen(sweep)
    assert [scalar_screen.reason(p) for p in positions] == reasons
