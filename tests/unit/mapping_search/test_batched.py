"""The batched search path against the scalar one (the oracle), on random layers and hardware.

``zigzag.mapping_search.batched`` allocates and costs all LOMA candidates of a spatial mapping with numpy
arrays.  These tests generate random conv / depthwise / pooling / gemm layers, random variations
of the shipped accelerators (memory sizes, bandwidths, costs, served dimensions, array sizes,
operand links) and search options, and check for every candidate:

* the batched assigner yields exactly the scalar assigner's temporal mappings, in order;
* the batched ``energy_total`` / ``latency_total2`` equal the scalar model's (relative 1e-9,
  and bit for bit where the batched path claims exactness, which is what tie-breaking needs);
* the batched search keeps the same winner as the scalar loop with ``keep_best``.
"""

from __future__ import annotations

import copy
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from support import REFERENCE
from zigzag.mapping_search import batched
from zigzag.mapping_search.batched import kernels
from zigzag.mapping_search.batched.memory_levels import BatchLevelAssigner
from zigzag.mapping_search.batched.candidates import LoopTable, constraint_mask, temporal_mapping_of
from zigzag.mapping_search.batched.model import BatchCostModel
from zigzag.cost.model import LATENCY_MODELS, evaluate
from zigzag.errors import InputError
from zigzag.io.loaders import accelerator_from_dict
from zigzag.io.validation import validate_accelerator
from zigzag.io.yaml_files import load_yaml
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search.spatial_mapping import convert
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.loma import layer_temporal_loops, ordering_factors, temporal_mappings
from zigzag.mapping_search.loop_factors import nb_orderings
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.reduce import keep_best
from zigzag.mapping_search.spatial_generator import generate_spatial_mappings
from zigzag.workload.workload import build_layer

HARDWARE = ["tpu_like", "ascend_like", "eyeriss_like", "gemm_l1", "gemm_l1_l3"]
REL = 1e-9

_BASE: dict[str, dict] = {}


def base_hardware(name: str) -> dict:
    if name not in _BASE:
        path = REFERENCE / "hardware" / f"{name}.yaml"
        _BASE[name] = validate_accelerator(load_yaml(path), str(path))
    return copy.deepcopy(_BASE[name])


def rel_close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= REL * max(abs(a), abs(b))


# ---------------------------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------------------------

COSTS = st.one_of(
    st.floats(min_value=0.001, max_value=1000.0, allow_nan=False, allow_infinity=False),
    st.integers(min_value=0, max_value=1000),
)
BANDWIDTHS = st.sampled_from([8, 16, 24, 32, 64, 128, 256, 512, 1024, 2048])


def narrowest_port(accelerator) -> int:
    return min(p.bandwidth_max for m in accelerator.memories for p in m.ports)


@st.composite
def accelerators(draw):
    data = base_hardware(draw(st.sampled_from(HARDWARE)))
    array = data["operational_array"]
    dims = list(array["dimensions"])
    if draw(st.booleans()):
        array["sizes"] = [draw(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 32])) for _ in dims]
    array["unit_energy"] = draw(COSTS)
    memories = list(data["memories"].values())
    for i, memory in enumerate(memories):
        if i < len(memories) - 1 and draw(st.booleans()):
            memory["size"] = max(
                64, int(memory["size"] * draw(st.sampled_from([0.125, 0.25, 0.5, 1, 2, 4, 8])))
            )
        if draw(st.booleans()):
            memory["r_cost"] = draw(COSTS)
            memory["w_cost"] = draw(COSTS)
        for port in memory["ports"]:
            if draw(st.integers(0, 3)) == 0:
                port["bandwidth_max"] = draw(BANDWIDTHS)
                port["bandwidth_min"] = draw(
                    st.sampled_from(
                        [b for b in (1, 4, 8, 16, 32, 64, 128, 2048) if b <= port["bandwidth_max"]]
                    )
                )
        if draw(st.integers(0, 4)) == 0:
            memory["served_dimensions"] = sorted(draw(st.sets(st.sampled_from(dims))))
    return accelerator_from_dict(data)


SMALL = st.sampled_from(
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 24, 28, 32, 48, 56, 64, 96, 112, 128]
)


@st.composite
def layers(draw, max_precision: int = 32):
    """A random layer; no precision exceeds ``max_precision`` (a port narrower than one element
    is outside what the spatial generator handles)."""
    kind = draw(st.sampled_from(["conv", "conv", "depthwise", "pool", "gemm", "fc"]))

    def width(choices):
        return draw(st.sampled_from([c for c in choices if c <= max_precision] or [min(choices)]))

    prec = {
        "W": width([4, 8, 16]),
        "I": width([4, 8, 16]),
        "O": width([8, 16, 24, 32]),
        "O_final": width([4, 8, 16]),
    }
    spec = {"id": 0, "name": "layer", "operand_source": {"I": 0, "W": 0}, "operand_precision": prec}
    if kind in ("conv", "depthwise", "pool"):
        stride = draw(st.sampled_from([1, 1, 2, 3]))
        dilation = draw(st.sampled_from([1, 1, 2]))
        fy, fx = draw(st.sampled_from([1, 2, 3, 5, 7])), draw(st.sampled_from([1, 2, 3, 5, 7]))
        oy, ox = draw(SMALL), draw(SMALL)
        spec["dimension_relations"] = [
            f"ix={stride}*ox+{dilation}*fx",
            f"iy={stride}*oy+{dilation}*fy",
        ]
        if kind == "conv":
            spec["operator_type"] = "Conv"
            spec["equation"] = "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]"
            spec["loop_dims"] = ["B", "K", "C", "OY", "OX", "FY", "FX"]
            spec["loop_sizes"] = [
                draw(st.sampled_from([1, 1, 2])),
                draw(SMALL),
                draw(SMALL),
                oy,
                ox,
                fy,
                fx,
            ]
        else:
            spec["operator_type"] = "Pooling" if kind == "pool" else "Conv"
            weights = "W[fx][fy]" if kind == "pool" else "W[g][fy][fx]"
            spec["equation"] = f"O[b][g][oy][ox]+={weights}*I[b][g][iy][ix]"
            spec["loop_dims"] = ["B", "G", "OY", "OX", "FY", "FX"]
            spec["loop_sizes"] = [1, draw(SMALL), oy, ox, fy, fx]
            if kind == "pool":
                prec["W"] = 0
        if draw(st.integers(0, 3)) == 0:
            pad = draw(st.integers(0, 1))
            spec["pr_loop_dims"] = ["IX", "IY"]
            spec["padding"] = [[pad, pad], [pad, pad]]
    elif kind == "gemm":
        spec["operator_type"] = "Gemm"
        spec["equation"] = "O[d0][d1]+=I[d0][d2]*W[d2][d1]"
        spec["dimension_relations"] = []
        spec["loop_dims"] = ["D0", "D1", "D2"]
        spec["loop_sizes"] = [draw(SMALL), draw(SMALL), draw(SMALL)]
    else:
        spec["operator_type"] = "Gemm"
        spec["equation"] = "O[b][k]+=W[k][c]*I[b][c]"
        spec["dimension_relations"] = []
        spec["loop_dims"] = ["B", "K", "C"]
        spec["loop_sizes"] = [draw(st.sampled_from([1, 2, 4, 8])), draw(SMALL), draw(SMALL)]
    return spec


#: both latency models, ZigZag's first (hypothesis shrinks towards it)
LATENCY_MODEL = st.sampled_from(LATENCY_MODELS)


@st.composite
def cases(draw):
    accelerator = draw(accelerators())
    spec = draw(layers(narrowest_port(accelerator)))
    links = {"O": "O", "W": "I2", "I": "I1"}
    if draw(st.integers(0, 4)) == 0:
        links = {"O": "O", "W": "I1", "I": "I2"}
    ordering = ()
    if draw(st.integers(0, 5)) == 0:  # a partial temporal ordering (position constraints)
        dim = draw(st.sampled_from(spec["loop_dims"]))
        ordering = draw(
            st.sampled_from(
                [
                    ((dim, None),),  # innermost loop of that dim
                    (("*", None), (dim, None)),  # outermost loop of that dim
                    ((dim, 2),),  # innermost loop exactly (dim, 2): a fixed loop factor
                ]
            )
        )
    entry = MappingEntry(name="default", memory_operand_links=links, temporal_ordering=ordering)
    layer = build_layer(spec, [entry])
    options = {
        "lpf_limit": draw(st.integers(2, 5)),
        "even": draw(st.integers(0, 3)) == 0,
        "flag": draw(st.integers(0, 4)) != 0,
        "opt": draw(st.sampled_from(["latency", "energy", "EDP"])),
        "nb": draw(st.integers(1, 2)),
        # mixed spatial unrolling on 3-4 dim arrays makes spatial generation itself take seconds
        "mixing": len(accelerator.operational_array.dimensions) <= 2
        and draw(st.integers(0, 4)) == 0,
        "latency_model": draw(LATENCY_MODEL),
    }
    return layer, accelerator, options


# ---------------------------------------------------------------------------------------------
# the comparison
# ---------------------------------------------------------------------------------------------


def scalar_candidates(layer, accelerator, fractional, integer, options, array_mapping=None):
    """Scalar path: every temporal mapping and its result (or the exception it raised)."""
    mappings = list(
        temporal_mappings(
            layer,
            accelerator,
            fractional,
            lpf_limit=options["lpf_limit"],
            even=options["even"],
            show_progress=False,
        )
    )
    results = []
    for tm in mappings:
        try:
            results.append(
                evaluate(
                    layer,
                    accelerator,
                    fractional,
                    integer,
                    tm,
                    access_same_data_considered_as_no_access=options["flag"],
                    spatial_mapping_array=array_mapping,
                    latency_model=options.get("latency_model", "zigzag"),
                )
            )
        except Exception as exc:  # noqa: BLE001 - the batched path must fail the same way
            results.append(exc)
    return mappings, results


def batched_candidates(layer, accelerator, fractional, integer, options, array_mapping=None):
    temporal = layer_temporal_loops(layer, fractional)
    constraints, factors = ordering_factors(layer, temporal, options["lpf_limit"])
    loops = LoopTable(factors)
    ids = np.array(list(loops.orderings()), dtype=np.int64).reshape(-1, loops.length)
    if constraints:
        ids = ids[constraint_mask(ids, loops, constraints)]
    assigner = BatchLevelAssigner(layer, accelerator, fractional, loops, even=options["even"])
    alive, cuts = assigner.assign(ids)
    keep = np.nonzero(alive)[0]
    ids = ids[keep]
    cuts = {op: c[keep] for op, c in cuts.items()}
    mappings = [
        temporal_mapping_of(loops, ids[i], {op: c[i].tolist() for op, c in cuts.items()})
        for i in range(len(ids))
    ]
    if not mappings:
        return mappings, None, None, None, assigner.exact
    model = BatchCostModel(
        layer,
        accelerator,
        fractional,
        integer,
        loops,
        access_same_data_considered_as_no_access=options["flag"],
        spatial_mapping_array=array_mapping,
        latency_model=options.get("latency_model", "zigzag"),
    )
    energy, latency, exact = model.evaluate(ids, cuts)
    return mappings, energy, latency, exact, assigner.exact


def nb_candidate_orderings(layer, fractional, options) -> int:
    temporal = layer_temporal_loops(layer, fractional)
    try:
        _, factors = ordering_factors(layer, temporal, options["lpf_limit"])
    except InputError:
        return 0
    return nb_orderings(factors)


def check_case(layer, accelerator, options, max_orderings: int = 1000) -> int:
    """Compare both paths on every spatial mapping of the case; returns candidates compared.

    Spatial mappings with more than ``max_orderings`` loop orderings are skipped (the scalar side
    costs about a millisecond per candidate)."""
    try:
        spatials = generate_spatial_mappings(
            layer, accelerator, nb_mappings=options["nb"], enable_mixing=options["mixing"]
        )
    except Exception:  # noqa: BLE001 - spatial generation is not under test here
        return 0
    compared = 0
    for array_mapping in spatials:
        try:
            fractional, integer = convert(array_mapping, layer, accelerator)
            if nb_candidate_orderings(layer, fractional, options) > max_orderings:
                continue
        except Exception:  # noqa: BLE001 - not under test here
            continue
        try:
            ref_mappings, ref_results = scalar_candidates(
                layer, accelerator, fractional, integer, options, array_mapping
            )
        except Exception as exc:  # noqa: BLE001 - the batched path must fail the same way
            ref_mappings, ref_results, ref_error = [], [], exc
        else:
            ref_error = None
        first_error = ref_error or next((r for r in ref_results if isinstance(r, Exception)), None)
        try:
            mappings, energy, latency, exact, alloc_exact = batched_candidates(
                layer, accelerator, fractional, integer, options, array_mapping
            )
        except batched.Unsupported:
            continue
        except Exception as exc:  # noqa: BLE001
            assert first_error is not None and type(exc) is type(first_error), exc
            continue
        if not alloc_exact:
            continue
        assert mappings == ref_mappings
        for i, result in enumerate(ref_results):
            if isinstance(result, Exception):
                assert not exact[i], (
                    "the scalar model raises here; the batched path must defer to it"
                )
                continue
            assert rel_close(energy[i], result.energy_total), (i, energy[i], result.energy_total)
            assert rel_close(latency[i], result.latency_total2), (
                i,
                latency[i],
                result.latency_total2,
            )
            if exact[i]:
                assert energy[i] == result.energy_total and latency[i] == result.latency_total2, i
        compared += len(ref_results)

        # the driver keeps the scalar loop's winner (or fails as the scalar loop does)
        best = None
        if first_error is None:
            for result in ref_results:
                best = keep_best(best, result, options["opt"])
        try:
            got, count = batched.search_temporal_mappings(
                layer,
                accelerator,
                fractional,
                integer,
                opt=options["opt"],
                lpf_limit=options["lpf_limit"],
                even=options["even"],
                access_same_data_considered_as_no_access=options["flag"],
                spatial_mapping_array=array_mapping,
                chunk=64,
                latency_model=options.get("latency_model", "zigzag"),
            )
        except batched.Unsupported:
            continue
        except Exception as exc:  # noqa: BLE001
            assert first_error is not None and type(exc) is type(first_error), exc
            continue
        assert first_error is None, first_error
        assert count == len(ref_results)
        assert got.energy_total == best.energy_total and got.latency_total2 == best.latency_total2
        assert got.temporal_mapping == best.temporal_mapping
    return compared


# no "explain" phase: its line tracing is very slow on these examples
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(cases())
def test_batched_agrees_with_scalar(case):
    check_case(*case)


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("ZIGZAG_BATCHED_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=PHASES,
)
@given(cases())
def test_batched_agrees_with_scalar_many(case):
    check_case(*case, max_orderings=6000)


@st.composite
def imc_accelerators(draw):
    """Variations of the shipped AIMC / DIMC accelerators: array shape (2-D or 3-D), precisions,
    bit-serial width, ADC resolution, memory sizes and costs."""
    data = base_hardware(draw(st.sampled_from(["aimc", "dimc"])))
    array = data["operational_array"]
    analog = draw(st.booleans())
    activation, weight = draw(st.sampled_from([4, 8])), draw(st.sampled_from([4, 8]))
    array.update(
        imc_type="analog" if analog else "digital",
        input_precision=[activation, weight],
        bit_serial_precision=draw(st.sampled_from([b for b in (1, 2, 4, 8) if b <= activation])),
        adc_resolution=draw(st.integers(0, 8)) if analog else 0,
    )
    sizes = [draw(st.sampled_from([4, 8, 16, 32, 64, 128])) for _ in range(2)]
    if draw(st.integers(0, 3)) == 0:
        array["dimensions"], sizes = ["D1", "D2", "D3"], sizes + [2]
        for memory in ("sram_256KB", "dram"):
            data["memories"][memory]["served_dimensions"] = ["D1", "D2", "D3"]
    array["sizes"] = sizes
    cells = data["memories"]["cells"]
    cells["size"], cells["area"] = weight, draw(st.sampled_from([0, 1e-7]))
    for port in cells["ports"]:
        port["bandwidth_min"] = port["bandwidth_max"] = weight
    for name, memory in data["memories"].items():
        if name not in ("cells", "dram") and draw(st.booleans()):
            memory["size"] = max(
                64, int(memory["size"] * draw(st.sampled_from([0.25, 0.5, 1, 2, 4])))
            )
        if draw(st.booleans()):
            memory["r_cost"], memory["w_cost"] = draw(COSTS), draw(COSTS)
    return accelerator_from_dict(validate_accelerator(data, "imc"))


@st.composite
def imc_cases(draw):
    accelerator = draw(imc_accelerators())
    spec = draw(layers(8))
    spec["operand_precision"]["W"] = (
        accelerator.operational_array.weight_precision
    )  # the cells' width
    entry = MappingEntry(name="default", memory_operand_links={"O": "O", "W": "I2", "I": "I1"})
    options = {
        "lpf_limit": draw(st.integers(2, 4)),
        "even": draw(st.integers(0, 3)) == 0,
        "flag": True,
        "opt": draw(st.sampled_from(["latency", "energy", "EDP"])),
        "nb": draw(st.integers(1, 2)),
        "mixing": draw(st.booleans()),
        "latency_model": draw(LATENCY_MODEL),
    }
    return build_layer(spec, [entry]), accelerator, options


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(imc_cases())
def test_batched_agrees_with_scalar_on_imc_arrays(case):
    """IMC: cycles per operation above 1 and an array energy set by the spatial mapping."""
    check_case(*case, max_orderings=120)


# ---------------------------------------------------------------------------------------------
# focused tests
# ---------------------------------------------------------------------------------------------


def test_reduce_balanced_matches_scalar():
    """The compiled pass's whole-tensor transfer reduction is the scalar model's."""
    from zigzag.cost.model import reduce_balanced

    rng = np.random.default_rng(0)
    for _ in range(300):
        m = int(rng.integers(1, 5))
        cycles = [int(x) for x in rng.integers(0, 200, m)]
        minima = [int(x) for x in rng.integers(0, 50, m)]
        surplus = float(rng.choice([0.0, -3.0, rng.uniform(0, 500)]))
        expected, _ = reduce_balanced(cycles, minima, max(0, surplus))
        got = np.array(cycles, dtype=float)
        kernels.reduce_balanced(
            got, np.array(minima, dtype=float), m, surplus, np.empty(m, dtype=np.int64)
        )
        assert got.tolist() == [float(e) for e in expected]


@pytest.mark.slow
def test_network_layers_identical_with_both_paths(monkeypatch):
    """resnet18 layers on tpu_like / ascend_like: same winner, same figures, same count."""
    from zigzag.io.loaders import load_inputs

    for hw in ("tpu_like", "ascend_like"):
        workload, accelerator = load_inputs(
            REFERENCE / "workload" / "resnet18.yaml",
            REFERENCE / "hardware" / f"{hw}.yaml",
            REFERENCE / "mapping" / f"{hw}.yaml",
        )
        for layer in [workload.layers[i] for i in (1, 30)]:
            for opt, model in (
                ("latency", "zigzag"),
                ("energy", "zigzag"),
                ("EDP", "zigzag"),
                ("latency", "bandwidth_bound"),
                ("EDP", "bandwidth_bound"),
            ):
                options = SearchOptions(opt=opt, latency_model=model)
                monkeypatch.setenv(batched.ENGINE_ENV, "scalar")
                ref, ref_stats = search_layer(layer, accelerator, options, show_progress=False)
                monkeypatch.setenv(batched.ENGINE_ENV, "batched")
                got, stats = search_layer(layer, accelerator, options, show_progress=False)
                assert stats == ref_stats
                assert got == ref, (hw, layer.name, opt)


@pytest.mark.slow
def test_large_lpf_limit_chunks():
    """Many orderings in several chunks: same winner as one big chunk and as the scalar loop."""
    from zigzag.io.loaders import load_inputs

    workload, accelerator = load_inputs(
        REFERENCE / "workload" / "resnet18.yaml",
        REFERENCE / "hardware" / "tpu_like.yaml",
        REFERENCE / "mapping" / "tpu_like.yaml",
    )
    layer = workload.layers[5]
    (array_mapping,) = generate_spatial_mappings(layer, accelerator, nb_mappings=1)
    fractional, integer = convert(array_mapping, layer, accelerator)
    results = []
    for chunk in (97, 100_000):
        stats = batched.BatchStats()
        results.append(
            batched.search_temporal_mappings(
                layer, accelerator, fractional, integer, lpf_limit=7, chunk=chunk, stats=stats
            )
        )
        assert stats.scalar_fallbacks == 0
    (a, na), (b, nb) = results
    assert na == nb and a == b
    best = None
    for tm in temporal_mappings(layer, accelerator, fractional, lpf_limit=7, show_progress=False):
        best = keep_best(best, evaluate(layer, accelerator, fractional, integer, tm), "latency")
    assert best.temporal_mapping == a.temporal_mapping
    assert (
        math.isclose(best.energy_total, a.energy_total, rel_tol=0)
        and best.latency_total2 == a.latency_total2
    )


def test_allocation_ties_broken_as_the_scalar_sum_rounds():
    """A case hypothesis found: on a 1x1x6 array, G=56 unrolls 6-fold into a fractional 5.6, so
    keeping the outermost loop (G, 10) in l1 or leaving it to l3 costs the same in real numbers;
    the scalar assigner's summed costs (the built-in ``sum``, which compensates rounding on
    Python 3.12+) decide, and the batched assigner must decide the same way, even or not."""
    data = base_hardware("gemm_l1_l3")
    data["operational_array"].update(sizes=[1, 1, 6], unit_energy=1.0)
    reg_o = data["memories"]["reg_O"]
    reg_o["served_dimensions"] = []
    for port in reg_o["ports"]:
        if port["name"] in ("r_port_1", "w_port_1"):
            port.update(bandwidth_min=1, bandwidth_max=16)
    accelerator = accelerator_from_dict(data)
    spec = {
        "id": 0,
        "name": "layer",
        "operator_type": "Conv",
        "operand_source": {"I": 0, "W": 0},
        "operand_precision": {"W": 4, "I": 4, "O": 8, "O_final": 4},
        "equation": "O[b][g][oy][ox]+=W[g][fy][fx]*I[b][g][iy][ix]",
        "dimension_relations": ["ix=1*ox+1*fx", "iy=1*oy+1*fy"],
        "loop_dims": ["B", "G", "OY", "OX", "FY", "FX"],
        "loop_sizes": [1, 56, 1, 6, 1, 3],
    }
    entry = MappingEntry(name="default", memory_operand_links={"O": "O", "W": "I1", "I": "I2"})
    layer = build_layer(spec, [entry])
    for even in (True, False):
        options = {
            "lpf_limit": 2,
            "even": even,
            "flag": False,
            "opt": "latency",
            "nb": 1,
            "mixing": False,
        }
        assert check_case(layer, accelerator, options) > 0
        # the case still holds the tie: the scalar assigner leaves (G, 10) above l1 for one ordering
        array_mapping = generate_spatial_mappings(
            layer, accelerator, nb_mappings=1, enable_mixing=False
        )[0]
        fractional, _ = convert(array_mapping, layer, accelerator)
        mappings = temporal_mappings(
            layer, accelerator, fractional, lpf_limit=2, even=even, show_progress=False
        )
        assert any(tm["W"][-1] == [("G", 10)] for tm in mappings)
