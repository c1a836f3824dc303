"""Bad input in the newer formats: hardware sweeps (config entries and ``zigzag sweep`` flags),
expressions, constraints, memory tables, costs and memory types of accelerator files, and
multi-core accelerators and their variants. Each case is a one-line error naming the file (or the
flag) and the field, and saying what to fix; test_at_least_forty_distinct_cases counts them.
"""

from __future__ import annotations

import shutil

import pytest
import yaml

from support import DATA, REPO
from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.io.loaders import load_accelerator
from zigzag.io.stream_hardware import read_multicore
from zigzag.sweep import read_sweep, variants_of

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"
MESH = REPO / "inputs" / "stream" / "hardware" / "tpu_like_mesh_pooling.yaml"
MC_MAPPING = REPO / "inputs" / "stream" / "mapping" / "mesh_all_cores.yaml"
MC_WORKLOAD = REPO / "inputs" / "stream" / "workload" / "small_3conv.onnx"
TABLE_DATA = DATA / "cacti"
UB = "memories.unified_buffer"


# ---- provoking the errors ------------------------------------------------------------------------


def sweep_config(**changes):
    """A single-core sweep entry of a config file, changed."""
    section = {
        "name": "ub",
        "base": str(BASE),
        "params": {"D1": "operational_array.sizes[0]"},
        "vary": {"D1": [16, 32]},
        "workloads": [str(WORKLOAD)],
        "mapping": str(MAPPING),
        **changes,
    }
    return lambda tmp_path: read_sweep(section, "config.yaml")


def multicore_sweep(**changes):
    section = {
        "name": "mesh",
        "kind": "multicore",
        "base": str(MESH),
        "vary": {"mesh.cols": [1, 2]},
        "workloads": [str(MC_WORKLOAD)],
        "mapping": str(MC_MAPPING),
        **changes,
    }
    return lambda tmp_path: read_sweep(section, "config.yaml")


def flags(*extra):
    """``zigzag sweep`` with flags; its error line (exit status 2) is raised as the InputError text."""

    def provoke(tmp_path):
        status = main(
            [
                "sweep",
                "--base",
                str(BASE),
                "--workload",
                str(WORKLOAD),
                "--mapping",
                str(MAPPING),
                "--output",
                str(tmp_path / "out"),
                *extra,
            ]
        )
        assert status == 2

    return provoke


def variant_problem(**changes):
    """The reason a variant is invalid (a row, not an error: the rest of the sweep goes on)."""

    def provoke(tmp_path):
        variants = variants_of(sweep_config(**changes)(tmp_path))
        problems = [v.problem for v in variants if v.problem]
        assert problems
        raise InputError(None, None, problems[0])

    return provoke


def accelerator(mutate):
    """flow_tpu_32x32.yaml changed by ``mutate(document)``, loaded."""

    def provoke(tmp_path):
        document = yaml.safe_load(BASE.read_text())
        mutate(document)
        path = tmp_path / "acc.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        load_accelerator(path)

    return provoke


def memory(name, **fields):
    return accelerator(lambda d: d["memories"][name].update(fields))


def array(**fields):
    return accelerator(lambda d: d["operational_array"].update(fields))


def imc(**fields):
    def provoke(tmp_path):
        document = yaml.safe_load((REPO / "inputs" / "hardware" / "dimc.yaml").read_text())
        document["operational_array"].update(fields)
        path = tmp_path / "imc.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        load_accelerator(path)

    return provoke


def table(text):
    """eyeriss_like_cacti.yaml whose sram_8KB is costed by the memory table ``text``."""

    def provoke(tmp_path):
        document = yaml.safe_load((TABLE_DATA / "eyeriss_like_cacti.yaml").read_text())
        for each in document["memories"].values():
            if each.pop("auto_cost_extraction", False):
                each.update(r_cost=1.0, w_cost=1.0, area=0.0)
        sram = document["memories"]["sram_8KB"]
        for key in ("r_cost", "w_cost", "area"):
            sram.pop(key)
        sram["cost_table"] = "mem.csv"
        (tmp_path / "mem.csv").write_text(text)
        path = tmp_path / "acc.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        load_accelerator(path)

    return provoke


def multicore(mutate_top=None, mutate_core=None):
    """The mesh accelerator (copied with its core files) with its top file and/or its TPU core changed."""

    def provoke(tmp_path):
        folder = tmp_path / "mc"
        shutil.copytree(MESH.parent, folder)
        top = yaml.safe_load(MESH.read_text())
        if mutate_top:
            mutate_top(top)
        (folder / "mesh.yaml").write_text(yaml.safe_dump(top, sort_keys=False))
        if mutate_core:
            core = yaml.safe_load((folder / "cores" / "tpu_like.yaml").read_text())
            mutate_core(core)
            (folder / "cores" / "tpu_like.yaml").write_text(yaml.safe_dump(core, sort_keys=False))
        read_multicore(folder / "mesh.yaml")

    return provoke


def core_memory(name, **fields):
    def mutate(core):
        core["memories"][name].update(fields)

    return multicore(mutate_core=mutate)


def case(case_id, provoke, file, where, *needles):
    return pytest.param(provoke, file, where, needles, id=case_id)


CASES = [
    # constraints: checked before any variant is evaluated
    case(
        "constraint-unknown-metric",
        sweep_config(constraints=["areaa <= 1 mm2"]),
        "config.yaml (ub)",
        "constraints[0]",
        "'areaa' is not a metric (did you mean 'area'?)",
        "a parameter (D1)",
    ),
    case(
        "constraint-time-unit-on-area",
        sweep_config(constraints=["area <= 5 ms"]),
        "config.yaml (ub)",
        "constraints[0]",
        "'ms' is a unit of time but area takes a unit of area (mm2, um2)",
    ),
    case(
        "constraint-size-unit-on-energy",
        sweep_config(constraints=["energy <= 1 KiB"]),
        "config.yaml (ub)",
        "constraints[0]",
        "'KiB' is a unit of size but energy takes a unit of energy",
    ),
    case(
        "constraint-unit-on-a-plain-number",
        sweep_config(constraints=["utilization >= 0.5 mm2"]),
        "config.yaml (ub)",
        "constraints[0]",
        "utilization is a plain number, so it takes no unit",
    ),
    case(
        "constraint-unknown-unit",
        sweep_config(constraints=["area <= 5 mm"]),
        "config.yaml (ub)",
        "constraints[0]",
        "'mm' is not a unit (did you mean 'mm2'?)",
    ),
    case(
        "constraint-energy-unit-on-latency",
        sweep_config(constraints=["latency <= 3 pJ"]),
        "config.yaml (ub)",
        "constraints[0]",
        "'pJ' is a unit of energy but latency takes a unit of time",
    ),
    case(
        "constraint-unknown-column",
        sweep_config(constraints=["energy_pj <= 1e9"]),
        "config.yaml (ub)",
        "constraints[0]",
        "'energy_pj' is not a metric (did you mean 'energy_pJ'?)",
    ),
    case(
        "constraint-and",
        sweep_config(constraints=["area <= 5 mm2 and energy < 1"]),
        "config.yaml (ub)",
        "constraints[0]",
        "uses BoolOp, which expressions do not allow",
    ),
    case(
        "constraint-not-a-list",
        sweep_config(constraints="area <= 5 mm2"),
        "config.yaml (ub)",
        "constraints",
        "is not a list; write e.g. ['area <= 5 mm2']",
    ),
    case(
        "constraint-flag-unknown-metric",
        flags(
            "--vary",
            "memories.unified_buffer.size=[1MiB]",
            "--constraint",
            "area <= 5 mm2",
            "--constraint",
            "lattency <= 2 ms",
        ),
        "zigzag sweep",
        "--constraint #2",
        "'lattency' is not a metric (did you mean 'latency'?)",
    ),
    case(
        "constraint-multicore-unknown-metric",
        multicore_sweep(constraints=["utilisation >= 0.5"]),
        "config.yaml (mesh)",
        "constraints[0]",
        "'utilisation' is not a metric (did you mean 'utilization'?)",
    ),
    # sweep flags
    case(
        "vary-without-equals",
        flags("--vary", "memories.unified_buffer.size"),
        "--vary",
        "memories.unified_buffer.size",
        "write PATH=VALUE",
    ),
    case(
        "vary-misspelt-path",
        flags("--vary", "memories.unified_buffer.sise=[1MiB]"),
        "zigzag sweep",
        "--vary memories.unified_buffer.sise",
        "did you mean 'memories.unified_buffer.size'?",
    ),
    case(
        "vary-not-a-list",
        flags("--vary", "memories.unified_buffer.size=1MiB"),
        "zigzag sweep",
        "--vary memories.unified_buffer.size",
        "is not a list; write the values as a list",
    ),
    case(
        "vary-empty-list",
        flags("--vary", "memories.unified_buffer.size=[]"),
        "zigzag sweep",
        "--vary memories.unified_buffer.size",
        "the list is empty",
    ),
    case(
        "derive-does-not-parse",
        flags(
            "--vary",
            "memories.unified_buffer.size=[1MiB]",
            "--derive",
            "memories.unified_buffer.r_cost=2 *",
        ),
        "zigzag sweep",
        "--derive memories.unified_buffer.r_cost",
        "does not parse",
    ),
    case(
        "derive-unknown-unit",
        flags(
            "--vary",
            "memories.unified_buffer.size=[1MiB]",
            "--derive",
            "memories.unified_buffer.r_cost=3 pj",
        ),
        "zigzag sweep",
        "--derive memories.unified_buffer.r_cost",
        "'pj' is not a unit (did you mean 'pJ'?)",
    ),
    case(
        "param-not-a-word",
        flags("--param", "1st=operational_array.sizes[0]", "--vary", "1st=[16]"),
        "zigzag sweep",
        "--param 1st",
        "a parameter name must be a word",
    ),
    case(
        "param-bad-path",
        flags("--param", "D1=operational_array.sizes[x]", "--vary", "D1=[16]"),
        "zigzag sweep",
        "--param D1",
        "sizes[x]",
    ),
    case(
        "zip-different-lengths",
        flags("--zip", "operational_array.sizes[0]=[8,16];operational_array.sizes[1]=[8]"),
        "zigzag sweep",
        "--zip #1",
        "zipped lists must have the same length",
    ),
    case(
        "clock-unknown-unit",
        flags("--vary", "memories.unified_buffer.size=[1MiB]", "--clock-ghz", "1 GHz"),
        "zigzag sweep",
        "--clock-ghz",
        "'GHz' is not a unit",
    ),
    case(
        "multicore-flags-without-multicore",
        flags("--mode", "fused"),
        "zigzag sweep",
        "--mode/--layer-stacks/--allocation-*",
        "add --multicore",
    ),
    # sweep config entries
    case(
        "sweep-unknown-key",
        sweep_config(constrains=["area < 1"]),
        "config.yaml (ub)",
        "constrains",
        "did you mean 'constraints'?",
    ),
    case(
        "sweep-unknown-kind",
        sweep_config(kind="multi"),
        "config.yaml (ub)",
        "kind",
        "is not one of single, multicore",
    ),
    case(
        "sweep-bad-name",
        sweep_config(name="ub sweep"),
        "config.yaml",
        "name",
        "use letters, digits and _ . + - only",
    ),
    case(
        "sweep-search-too-small",
        sweep_config(search={"population": 2}),
        "config.yaml (ub)",
        "search.population",
        "is less than the minimum of 4",
    ),
    case(
        "sweep-search-unknown-key",
        sweep_config(search={"seeds": 1}),
        "config.yaml (ub)",
        "search.seeds",
        "unknown key 'seeds'; did you mean 'seed'?",
    ),
    case(
        "sweep-spatial-mapping-mode",
        sweep_config(spatial_mapping="search"),
        "config.yaml (ub)",
        "spatial_mapping",
        "is not one of given, generate",
    ),
    case(
        "sweep-name-format-not-text",
        sweep_config(name_format=3),
        "config.yaml (ub)",
        "name_format",
        "give a text such as",
    ),
    case(
        "sweep-workloads-empty",
        sweep_config(workloads=[]),
        "config.yaml (ub)",
        "workloads",
        "give a list of workload files",
    ),
    case(
        "multicore-choose",
        multicore_sweep(allocation_search={"choose": "area"}),
        "config.yaml (mesh)",
        "allocation_search.choose",
        "is not one of latency, energy, edp",
    ),
    case(
        "multicore-allocation-unknown-key",
        multicore_sweep(allocation_search={"population": 4}),
        "config.yaml (mesh)",
        "allocation_search.population",
        "unknown key 'population'; known keys here: method, time_limit, gap, individuals",
    ),
    case(
        "multicore-vary-not-a-mapping",
        multicore_sweep(vary=3),
        "config.yaml (mesh)",
        "vary",
        "3 is not a mapping",
    ),
    case(
        "fragment-remove-not-a-list",
        sweep_config(fragments={"ub": {"small": {"remove": 1}}}),
        "config.yaml (ub)",
        "fragments.ub.small.remove",
        "1 is not of type array; give an array",
    ),
    # expressions (derive, clock_ghz), evaluated per variant
    case(
        "expression-divides-by-zero",
        lambda p: variants_of(sweep_config(derive={f"{UB}.r_cost": "1 / (D1 - 16)"})(p)),
        "config.yaml (ub)",
        f"derive.{UB}.r_cost",
        "divides by zero",
    ),
    case(
        "expression-disallowed-call",
        sweep_config(derive={f"{UB}.r_cost": "open('x')"}),
        "config.yaml (ub)",
        f"derive.{UB}.r_cost",
        "calls something that is not one of min, max",
    ),
    case(
        "expression-dunder",
        sweep_config(derive={f"{UB}.r_cost": "D1.__class__"}),
        "config.yaml (ub)",
        f"derive.{UB}.r_cost",
        "names may not start with '__'",
    ),
    case(
        "expression-text-constant",
        sweep_config(derive={f"{UB}.r_cost": "'a' * 3"}),
        "config.yaml (ub)",
        f"derive.{UB}.r_cost",
        "only numbers are allowed as constants",
    ),
    case(
        "expression-huge-exponent",
        lambda p: variants_of(sweep_config(derive={f"{UB}.r_cost": "D1 ** 1000"})(p)),
        "config.yaml (ub)",
        f"derive.{UB}.r_cost",
        "exponent 1000 is too large",
    ),
    case(
        "expression-unknown-name",
        lambda p: variants_of(sweep_config(derive={f"{UB}.r_cost": "D3 * 2"})(p)),
        "config.yaml (ub)",
        f"derive.{UB}.r_cost",
        "unknown name or path",
    ),
    case(
        "clock-does-not-parse",
        sweep_config(clock_ghz="1 +"),
        "config.yaml (ub)",
        "clock_ghz",
        "does not parse",
    ),
    # values with units are checked for sign and range as plain ones (a variant's reason)
    case(
        "vary-negative-size-with-unit",
        variant_problem(vary={f"{UB}.size": ["-64KiB"]}),
        None,
        f"{UB}.size",
        "must be positive, got -524288",
    ),
    case(
        "vary-negative-cost",
        variant_problem(vary={f"{UB}.r_cost": [-2]}),
        None,
        f"{UB}.r_cost",
        "must be zero or more, got -2",
    ),
    # costs and memory types of accelerator files
    case(
        "negative-r-cost",
        memory("dram", r_cost=-1950),
        "acc.yaml",
        "memories.dram.r_cost",
        "must be zero or more, got -1950",
    ),
    case(
        "negative-w-cost",
        memory("unified_buffer", w_cost=-0.5),
        "acc.yaml",
        f"{UB}.w_cost",
        "must be zero or more, got -0.5",
    ),
    case(
        "negative-area",
        memory("unified_buffer", area=-1000000),
        "acc.yaml",
        f"{UB}.area",
        "must be zero or more, got -1000000",
    ),
    case(
        "negative-unit-energy",
        array(unit_energy=-0.5),
        "acc.yaml",
        "operational_array.unit_energy",
        "must be zero or more, got -0.5",
    ),
    case(
        "negative-unit-area",
        array(unit_area=-1),
        "acc.yaml",
        "operational_array.unit_area",
        "must be zero or more, got -1",
    ),
    case(
        "negative-adc-resolution",
        imc(adc_resolution=-8),
        "imc.yaml",
        "operational_array.adc_resolution",
        "must be zero or more, got -8",
    ),
    case(
        "mem-type-swapped-letters",
        memory("unified_buffer", mem_type="srma"),
        "acc.yaml",
        f"{UB}.mem_type",
        "unknown memory type 'srma' (did you mean 'sram'?)",
    ),
    case(
        "mem-type-extra-letter",
        memory("unified_buffer", mem_type="rff"),
        "acc.yaml",
        f"{UB}.mem_type",
        "(did you mean 'rf'?)",
    ),
    case(
        "mem-type-upper-case",
        memory("dram", mem_type="DRAM"),
        "acc.yaml",
        "memories.dram.mem_type",
        "(did you mean 'dram'?)",
    ),
    # memory tables
    case(
        "table-negative-energy",
        table("size,width,read_energy,write_energy,area\n65536,128,-3,4,0.02\n"),
        "acc.yaml",
        "memories.sram_8KB.cost_table",
        "row 2: read_energy -3 must be a finite number >= 0",
    ),
    case(
        "table-negative-area",
        table("size,width,read_energy,write_energy,area\n65536,128,3,4,-1\n"),
        "acc.yaml",
        "memories.sram_8KB.cost_table",
        "area -1 must be a finite number >= 0",
    ),
    case(
        "table-infinite-energy",
        table("size,width,read_energy,write_energy,area\n65536,128,3,inf,1\n"),
        "acc.yaml",
        "memories.sram_8KB.cost_table",
        "write_energy inf must be a finite number",
    ),
    case(
        "table-fractional-size",
        table("size,width,read_energy,write_energy,area\n65536.5,128,3,4,1\n"),
        "acc.yaml",
        "memories.sram_8KB.cost_table",
        "size 65536.5 must be a whole number of bits",
    ),
    case(
        "table-other-width",
        table("size,width,read_energy,write_energy,area\n65536,64,3,4,1\n"),
        "acc.yaml",
        "memories.sram_8KB.cost_table",
        "has no row of width 128",
        "widths with these ports: 64",
    ),
    # multi-core accelerators and their core files
    case(
        "multicore-negative-link-energy",
        multicore(lambda t: t.update(unit_energy_cost=-1)),
        "mesh.yaml",
        "unit_energy_cost",
        "must be zero or more, got -1",
    ),
    case(
        "multicore-zero-bandwidth",
        multicore(lambda t: t.update(bandwidth=0)),
        "mesh.yaml",
        "bandwidth",
        "must be a positive number of bits per cycle, got 0",
    ),
    case(
        "multicore-core-negative-r-cost",
        core_memory("sram_2MB", r_cost=-1),
        "tpu_like.yaml",
        "memories.sram_2MB.r_cost",
        "must be zero or more, got -1",
    ),
    case(
        "multicore-core-mem-type",
        core_memory("sram_2MB", mem_type="sarm"),
        "tpu_like.yaml",
        "memories.sram_2MB.mem_type",
        "did you mean 'sram'?",
    ),
    case(
        "multicore-variant-negative-bandwidth",
        lambda p: _raise_first_problem(variants_of(multicore_sweep(vary={"bandwidth": [-32]})(p))),
        None,
        "bandwidth",
        "must be a positive number of bits per cycle, got -32",
    ),
]


def _raise_first_problem(variants):
    problems = [v.problem for v in variants if v.problem]
    assert problems
    raise InputError(None, None, problems[0])


@pytest.mark.parametrize("provoke, file, where, needles", CASES)
def test_bad_input_gives_one_line(provoke, file, where, needles, tmp_path, capsys):
    try:
        provoke(tmp_path)
    except InputError as exc:
        text = str(exc)
    else:
        text = capsys.readouterr().err.strip()
        assert text.startswith("error: "), f"no error for {needles}"
        text = text.removeprefix("error: ")
    assert "\n" not in text and "Traceback" not in text, text
    if file is not None:
        assert file in text, text
    assert where in text, text
    for needle in needles:
        assert needle in text, text


def test_at_least_forty_distinct_cases():
    ids = [param.id for param in CASES]
    assert len(ids) == len(set(ids)) >= 40
