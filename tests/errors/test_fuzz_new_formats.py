"""Property-based fuzzing of the newer formats, as tests/errors/test_fuzz_inputs.py does for the
accelerator, workload and mapping loaders: hardware sweeps (config entries and ``zigzag sweep``
flags), the expression evaluator, memory cost tables and multi-core variants. A mutated input ends
in our one-line error or in a result, and a result never carries an invalid value (a negative or
non-finite cost, a constraint whose metric is unknown, a variant that its validator rejects).

Examples are bounded and derandomised (ZIGZAG_FUZZ_EXAMPLES examples per test, default 120;
the heavier tests take fewer); nothing here evaluates a variant.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import DATA, REPO
from support.fuzz import EXAMPLES, FUZZ, VALUES, mutate
from zigzag.errors import InputError
from zigzag.hardware.memory_costs.tables import PortCounts, TableProblem, look_up, read_memory_table
from zigzag.sweep import read_sweep, variants_of
from zigzag.sweep.config import read_constraints
from zigzag.sweep.tables import check_constraints
from zigzag.variants import expressions

SCRATCH = Path(tempfile.mkdtemp(prefix="zigzag-fuzz-new-"))
BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
MESH = REPO / "inputs" / "stream" / "hardware" / "tpu_like_mesh_pooling.yaml"
UB = "memories.unified_buffer"

SWEEP = {
    "name": "ub",
    "base": str(BASE),
    "params": {"D1": "operational_array.sizes[0]", "ub": f"{UB}.size"},
    "vary": {"ub": ["64KiB", "1MiB"], f"{UB}.r_cost": [1.5, 3]},
    "zip": [{"D1": [16, 32]}],
    "derive": {
        f"{UB}.w_cost": "2 * D1 / 16",
        "memories.accumulators.ports[0].bandwidth_max": "D1 * 16",
    },
    "workloads": [str(WORKLOAD)],
    "mapping": str(MAPPING),
    "constraints": ["area <= 5 mm2", "latency < 1e9"],
    "clock_ghz": "1",
    "batch_size": 2,
}
MULTICORE = {
    "name": "mesh",
    "kind": "multicore",
    "base": str(MESH),
    "vary": {"mesh.cols": [1, 2], "bandwidth": [16, 64], "unit_energy_cost": [0, 0.5]},
    "workloads": [str(REPO / "inputs" / "stream" / "workload" / "small_3conv.onnx")],
    "mapping": str(REPO / "inputs" / "stream" / "mapping" / "mesh_all_cores.yaml"),
    "modes": ["lbl"],
}

#: a full row of variants.csv (what a constraint is evaluated on)
ROW = {
    "status": "ok",
    "reason": "",
    "variant": "v",
    "workload": "w",
    "area_mm2": 1.0,
    "energy_pJ": 1e6,
    "latency_cycles": 1e4,
    "latency_s": 1e-5,
    "edp_pJ_cycles": 1e10,
    "edp_Js": 1e-11,
    "utilization": 0.5,
    "mac_utilization": 0.5,
    "mac_energy_pJ": 1.0,
    "memory_energy_pJ": 2.0,
    "ideal_cycles": 1.0,
    "computation_cycles": 1.0,
    "onloading_cycles": 1.0,
    "offloading_cycles": 1.0,
    "clock_ghz": 1.0,
    "tclk_ns": 1.0,
    "latency_ns": 1.0,
    "layers": 4,
    "sram_energy_pJ": 1.0,
}


def one_line(exc: Exception) -> None:
    assert "\n" not in str(exc) and str(exc).strip(), str(exc)


def check_sweep(section: dict) -> None:
    """Read and expand a sweep: our one-line error, or variants each valid or with a one-line reason,
    and constraints that can all be evaluated on a complete row."""
    try:
        sweep = read_sweep(section, "config.yaml")
        variants = variants_of(sweep)
    except InputError as exc:
        one_line(exc)
        return
    for variant in variants:
        assert (variant.document is None) == (variant.problem is not None)
        if variant.problem:
            one_line(InputError(None, None, variant.problem))
    parameters = {name: 1 for name in sweep.spec.varied_names}
    for constraint in sweep.constraints:
        row = check_constraints({**ROW, **parameters}, (constraint,))
        assert "cannot be used" not in row["reason"], (constraint.text, row["reason"])


@pytest.mark.slow
@settings(FUZZ, max_examples=max(10, EXAMPLES // 4))
@given(st.data())
def test_fuzzed_sweep_config(data):
    check_sweep(mutate(data, SWEEP))


# ---- zigzag sweep flags ----------------------------------------------------------------------------

_PATHS = [
    "D1",
    "ub",
    f"{UB}.size",
    f"{UB}.r_cost",
    "operational_array.sizes[0]",
    "operational_array.sizes[7]",
    "memories.unified_bufer.size",
    "memories",
    "",
    "1x",
    "D1.x",
    "__class__",
]
_VALUES = [
    "[16, 32]",
    "[64KiB]",
    "[-64KiB, 64KiB]",
    "[1e3]",
    "[]",
    "16",
    "[16",
    "[a, b]",
    "[0.5MiB]",
    "[-1]",
    "[2 pJ]",
    "[.inf]",
    "[null]",
    "{a: 1}",
    "[true]",
]
_EXPRESSIONS = [
    "D1 * 16",
    "D1 / 0",
    "2 ** 99",
    "ceil(log2(D1))",
    "min(D1)",
    "D1 +",
    "open(1)",
    "3 pj",
    "x",
    "D1 * 1 KiB",
    "-D1",
    "D1 < 3",
    "'a'",
    "1e400",
    "abs(-D1)",
]
_CONSTRAINTS = [
    "area <= 5 mm2",
    "areaa < 1",
    "energy < 3 uJ",
    "latency <= 2 ms",
    "latency < 5 pJ",
    "edp < 1",
    "utilization >= 0.5 mm2",
    "area",
    "D1 <= 16",
    "ub <= 1MiB",
    "sram_energy_pJ < 1 nJ",
    "area <= 5 mm",
    "util_core2 > 0",
    "1 < 2",
    "area <= 5 mm2 or 1",
]


@settings(FUZZ, max_examples=max(10, EXAMPLES // 4))
@given(
    st.lists(
        st.sampled_from(["--vary", "--param", "--derive", "--constraint"]), min_size=1, max_size=4
    ),
    st.data(),
)
def test_fuzzed_sweep_flags(kinds, data):
    from zigzag.cli import build_parser
    from zigzag.sweep.flags import sweep_from_args

    argv = ["sweep", "--base", str(BASE), "--workload", str(WORKLOAD), "--mapping", str(MAPPING)]
    for kind in kinds:
        if kind == "--constraint":
            argv.append(f"--constraint={data.draw(st.sampled_from(_CONSTRAINTS))}")
        elif kind == "--param":
            argv.append(
                f"--param={data.draw(st.sampled_from(['D1', 'ub', '2x', 'q']))}="
                f"{data.draw(st.sampled_from(_PATHS))}"
            )
        else:
            pool = _VALUES if kind == "--vary" else _EXPRESSIONS
            argv.append(
                f"{kind}={data.draw(st.sampled_from(_PATHS))}={data.draw(st.sampled_from(pool))}"
            )
    args = build_parser().parse_args(argv)
    try:
        section = sweep_from_args(args)
    except InputError as exc:
        one_line(exc)
        return
    check_sweep(section)


# ---- the expression evaluator ------------------------------------------------------------------------

_TOKENS = [
    "D1",
    "ub",
    "memories.sb.size",
    "x[0]",
    "1",
    "0",
    "2.5",
    "-",
    "+",
    "*",
    "/",
    "//",
    "%",
    "**",
    "(",
    ")",
    "<",
    "<=",
    "==",
    "min(",
    "max(",
    "ceil(",
    "log2(",
    "round(",
    "abs(",
    ",",
    "KiB",
    "mm2",
    "pJ",
    "ms",
    "e3",
    " ",
    "1e308",
    "__",
    "'",
    "lambda",
    "[",
    "]",
    ".",
    "and",
    "not",
    "if",
    "=",
]


@FUZZ
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=10))
def test_fuzzed_expressions(tokens):
    text = "".join(tokens)

    def lookup(name: str):
        if name in ("D1", "ub", "memories.sb.size", "x[0]"):
            return {"D1": 16, "ub": 2**20}.get(name, 0)
        raise expressions.ExpressionError(f"unknown name '{name}'")

    try:
        value = expressions.evaluate(text, lookup)
    except expressions.ExpressionError as exc:
        one_line(exc)
        return
    assert isinstance(value, (int, float, bool)), (text, value)


@FUZZ
@given(
    st.sampled_from(["", "-", "+", " -", "--"]),
    st.sampled_from(["0", "64", "1.5", "1e3", "x", ""]),
    st.sampled_from(["", " ", "KiB", "kb", "mm2", "pJ", "ms", "cycles", "GHz"]),
)
def test_fuzzed_quantities_keep_their_sign(sign, number, unit):
    text = f"{sign}{number}{unit}"
    parsed = expressions.quantity(text)
    well_formed = (
        sign.strip() in ("", "-", "+")
        and number != "x"
        and number
        and unit.strip() in ("", *expressions.UNITS)
    )
    if (
        well_formed
    ):  # read, with its sign: a negative value is never read as a positive one, nor left as text
        assert parsed is not None and (parsed[0] < 0) == (
            sign.strip() == "-" and float(number) != 0
        ), (text, parsed)
    else:
        assert parsed is None, (text, parsed)


def test_every_constraint_the_fuzzer_draws_is_rejected_or_usable():
    """Each constraint of the flags' pool is a one-line error or can be evaluated on a complete row."""
    for text in _CONSTRAINTS:
        try:
            constraints = read_constraints([text], "test", ("D1", "ub"))
        except InputError as exc:
            one_line(exc)
            continue
        row = check_constraints({**ROW, "D1": 16, "ub": 2**20}, constraints)
        assert "cannot be used" not in row["reason"], (text, row["reason"])


# ---- memory cost tables -------------------------------------------------------------------------------

_CELLS = [
    "65536",
    "128",
    "3.0",
    "0",
    "-1",
    "1e400",
    "nan",
    "inf",
    "x",
    "",
    "65536.5",
    "1r1w",
    "1rw",
    "2q",
    "0.02",
]


@FUZZ
@given(
    st.lists(st.lists(st.sampled_from(_CELLS), min_size=4, max_size=6), min_size=0, max_size=4),
    st.sampled_from(
        [
            "size,width,read_energy,write_energy,area",
            "size,width,read_energy,write_energy,area,ports",
            "size,width,read_energy,area",
            "size,width,read_energy,write_energy,area,extra",
        ]
    ),
    st.sampled_from(["none", "linear", "log2"]),
    st.sampled_from([65536, 131072, 1]),
)
def test_fuzzed_memory_tables(rows, header, interpolation, size):
    path = SCRATCH / "table.csv"
    path.write_text("\n".join([header, *(",".join(row) for row in rows)]) + "\n")
    try:
        table = read_memory_table(path)
        figures = look_up(table, size, 128, PortCounts.parse("1rw"), interpolation)
    except TableProblem as exc:
        one_line(exc)
        return
    for row in table:
        assert all(
            math.isfinite(v) and v >= 0 for v in (row.read_energy, row.write_energy, row.area)
        )
        assert row.size > 0 and row.width > 0
    assert all(math.isfinite(v) and v >= 0 for v in (figures.r_cost, figures.w_cost, figures.area))


# ---- multi-core variants ----------------------------------------------------------------------------


@settings(FUZZ, max_examples=max(10, EXAMPLES // 6))
@given(st.data())
def test_fuzzed_multicore_variants(data):
    section = mutate(data, MULTICORE)
    vary = section.get("vary")
    if isinstance(vary, dict) and data.draw(st.booleans(), label="fuzz a varied value"):
        key = data.draw(
            st.sampled_from(
                ["mesh.rows", "mesh.cols", "bandwidth", "unit_energy_cost", "mesh.core"]
            )
        )
        vary[key] = [data.draw(VALUES, label="value")]
    try:
        variants = variants_of(read_sweep(section, "config.yaml"))
    except InputError as exc:
        one_line(exc)
        return
    for variant in variants:
        if variant.problem:
            one_line(InputError(None, None, variant.problem))
            continue
        document = variant.document
        for key in ("bandwidth", "unit_energy_cost"):
            value = document.get(key, 0)
            assert isinstance(value, (int, float)) and math.isfinite(value) and value >= 0, (
                key,
                value,
            )
        assert document.get("bandwidth", 1) > 0
