"""Bad input across files (ONNX, workload + mapping, accelerator too small, workflow config): one line
naming the file, the field and the fix; and the warnings that name what was left out or looks wrong.

The per-file schema and rule cases are in tests/unit/io/test_validation.py, the option values in
tests/unit/mapping_search/test_options_table.py; test_at_least_fifty_distinct_bad_inputs counts all of them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from onnx import TensorProto, helper

from support import TESTS, reference_input
from support.bad_inputs import (
    SMALL,
    TPU,
    TPU_MAPPING,
    onnx_file,
    relu_softmax,
    warnings_of,
)
from zigzag.errors import InputError, MappingError
from zigzag.io.loaders import load_inputs
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.steps.experiments import check_input_files, expand_experiments
from zigzag.steps.multicore import resolve_multicore_experiments


# ---- building inputs -------------------------------------------------------------------------


def lstm(path: Path) -> str:
    node = helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="lstm", hidden_size=8)
    weights = [
        helper.make_tensor("w", TensorProto.FLOAT, [1, 32, 4], [0.0] * 128),
        helper.make_tensor("r", TensorProto.FLOAT, [1, 32, 8], [0.0] * 256),
    ]
    return onnx_file(path, [node], {"x": [5, 1, 4]}, {"y": [5, 1, 1, 8]}, weights)


def conv_then_conv_transpose(path: Path) -> str:
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [8, 3, 3, 3], [0.0] * 216)
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, [8, 4, 2, 2], [0.0] * 128)
    nodes = [
        helper.make_node(
            "Conv", ["x", "w1"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]
        ),
        helper.make_node(
            "ConvTranspose", ["c", "w2"], ["t1"], name="up1", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node("Relu", ["t1"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    ]
    return onnx_file(path, nodes, {"x": [1, 3, 8, 8]}, {"y": [1, 4, 8, 8]}, [w1, w2])


def written(path: Path, content: bytes) -> str:
    path.write_bytes(content)
    return str(path)


def write_yaml(path: Path, data) -> str:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def mapping_with(tmp_path: Path, mutate) -> str:
    entries = yaml.safe_load(Path(TPU_MAPPING).read_text())
    mutate(entries[0])  # the 'default' entry
    return write_yaml(tmp_path / "mapping.yaml", entries)


def hardware_with(tmp_path: Path, mutate) -> str:
    data = yaml.safe_load(Path(TPU).read_text())
    mutate(data)
    return write_yaml(tmp_path / "hardware.yaml", data)


def small_with(tmp_path: Path, mutate) -> str:
    layers = yaml.safe_load(SMALL.read_text())
    mutate(layers)
    return write_yaml(tmp_path / "small.yaml", layers)


def search_first_layer(workload, hardware, mapping, options=SearchOptions()):
    layers, accelerator = load_inputs(workload, hardware, mapping)
    return search_layer(layers.layers[0], accelerator, options, show_progress=False)


def config_with(mutate) -> dict:
    config = {
        "experiments": [
            {"name": "a", "workload": str(SMALL), "accelerator": TPU, "mapping": TPU_MAPPING}
        ],
        "sweeps": [
            {
                "name": "{accelerator}",
                "workload": str(SMALL),
                "accelerator": [TPU],
                "mapping": TPU_MAPPING,
            }
        ],
        "outputs": {"plot_format": "png"},
    }
    mutate(config)
    return config


def chain_puts(*mutators):
    def mutate(data):
        for mutator in mutators:
            mutator(data)

    return mutate


def put(*path_and_value):
    *path, value = path_and_value

    def mutate(data):
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value

    return mutate


def cut(*path):
    def mutate(data):
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]

    return mutate


def rename(*path_and_names):
    *path, old, new = path_and_names

    def mutate(data):
        for key in path:
            data = data[key]
        data[new] = data.pop(old)

    return mutate


# ---- the cases: (id, how to provoke the error from a tmp folder, file, where, pieces of the message) ----


def case(case_id, provoke, file, where, *needles, error=InputError):
    return pytest.param(provoke, file, where, needles, error, id=case_id)


CASES = [
    # ONNX models ZigZag cannot evaluate at all
    case(
        "onnx-relu-softmax",
        lambda t: load_inputs(relu_softmax(t / "act.onnx"), TPU, TPU_MAPPING),
        "act.onnx",
        None,
        "no operator of the model can be evaluated",
        "1 Relu, 1 Softmax",
        "Conv, QLinearConv",
        "with evaluate_all_operators also MaxPool",
    ),
    case(
        "onnx-lstm",
        lambda t: load_inputs(lstm(t / "lstm.onnx"), TPU, TPU_MAPPING),
        "lstm.onnx",
        None,
        "no operator of the model can be evaluated",
        "1 LSTM",
        "give a model with",
    ),
    case(
        "onnx-relu-softmax-all-operators",
        lambda t: load_inputs(
            relu_softmax(t / "act.onnx"), TPU, TPU_MAPPING, evaluate_all_operators=True
        ),
        "act.onnx",
        None,
        "(it has 1 Relu, 1 Softmax)",
        "Gemm, MatMul, MaxPool",
    ),
    case(
        "onnx-not-a-model",
        lambda t: load_inputs(written(t / "x.onnx", b"\x08\x07garbage"), TPU, TPU_MAPPING),
        "x.onnx",
        None,
        "not a valid ONNX model",
    ),
    case(
        "onnx-missing-file",
        lambda t: load_inputs(str(t / "none.onnx"), TPU, TPU_MAPPING),
        "none.onnx",
        None,
        "does not exist; check the path",
    ),
    # mapping dimensions that no layer has
    case(
        "map-typo-spatial",
        lambda t: load_inputs(
            str(SMALL), TPU, mapping_with(t, put("spatial_mapping", "D1", ["KK, 32"]))
        ),
        "mapping.yaml",
        "mapping entry 'default'.spatial_mapping.D1[0]",
        "'KK' is not a dimension of any layer",
        "B, C, FX, FY, K, OX, OY",
        "use one of those",
    ),
    case(
        "map-typo-temporal",
        lambda t: load_inputs(
            str(SMALL), TPU, mapping_with(t, put("temporal_ordering", [["OX", "*"], ["OXX", 2]]))
        ),
        "mapping.yaml",
        "mapping entry 'default'.temporal_ordering[1]",
        "'OXX' is not a dimension",
    ),
    case(
        "map-typo-hint",
        lambda t: load_inputs(
            str(SMALL), TPU, mapping_with(t, put("spatial_mapping_hint", {"D3": ["KX", "CX"]}))
        ),
        "mapping.yaml",
        "mapping entry 'default'.spatial_mapping_hint.D3",
        "'KX' / 'CX' is not a dimension",
    ),
    case(
        "map-typo-gemm-dims",
        lambda t: load_inputs(
            reference_input("workload", "gemm_layer.yaml"),
            TPU,
            mapping_with(t, put("spatial_mapping", "D2", ["D3, 8"])),
        ),
        "mapping.yaml",
        "mapping entry 'default'.spatial_mapping.D2[0]",
        "'D3' is not a dimension",
        "D0, D1, D2",
    ),
    # accelerators too small for a layer
    case(
        "hw-top-memory-too-small",
        lambda t: search_first_layer(
            str(SMALL), hardware_with(t, put("memories", "dram", "size", 10_000)), TPU_MAPPING
        ),
        None,
        None,
        "no loop ordering of layer conv_a fits the memories of tpu_like",
        "in memory dram, which holds 10000 bits",
        "top memory of",
        "make it at least",
        error=MappingError,
    ),
    case(
        "hw-inner-memory-too-small",
        lambda t: search_first_layer(
            str(SMALL), hardware_with(t, put("memories", "rf_2B", "size", 8)), TPU_MAPPING
        ),
        None,
        None,
        "no loop ordering of layer conv_a fits",
        "operand O needs at least 16 bits in memory rf_2B, which holds 8 bits",
        "or choose a smaller spatial unrolling",
        error=MappingError,
    ),
    case(
        "hw-partial-sums-without-port",
        lambda t: search_first_layer(
            str(SMALL),
            hardware_with(
                t,
                chain_puts(
                    put("memories", "rf_2B", "ports", 0, "allocation", []),
                    put("memories", "rf_2B", "ports", 2, "allocation", []),
                ),
            ),
            TPU_MAPPING,
        ),
        "accelerator 'tpu_like'",
        "memories.rf_2B.ports",
        "no port carries 'O, ",
        "the mapping of layer conv_a",
        "read_write port",
    ),
    case(
        "hw-salsa-nothing-fits",
        lambda t: search_first_layer(
            str(SMALL),
            hardware_with(t, put("memories", "dram", "size", 10_000)),
            TPU_MAPPING,
            SearchOptions(temporal_mapping_search_engine="salsa", salsa_iteration_number=5),
        ),
        None,
        None,
        "fits the memories of tpu_like: operand",
        "dram",
        error=MappingError,
    ),
    case(
        "hw-cost-nan",
        lambda t: load_inputs(
            str(SMALL),
            hardware_with(t, put("memories", "rf_2B", "r_cost", float("nan"))),
            TPU_MAPPING,
        ),
        "hardware.yaml",
        "memories.rf_2B.r_cost",
        "must be a finite number, got nan",
    ),
    case(
        "wl-loop-size-inf",
        lambda t: load_inputs(
            small_with(t, put(0, "loop_sizes", 1, float("inf"))), TPU, TPU_MAPPING
        ),
        "small.yaml",
        "layer[0] (id 0, conv_a).loop_sizes[1]",
        "must be a whole number, got inf",
    ),
    case(
        "hw-duplicate-port-name",
        lambda t: load_inputs(
            str(SMALL),
            hardware_with(t, put("memories", "rf_128B", "ports", 1, "name", "r_port_1")),
            TPU_MAPPING,
        ),
        "hardware.yaml",
        "memories.rf_128B.ports[1].name",
        "port name 'r_port_1' is already used by ports[0]",
        "its own name",
    ),
    # workflow config (Snakemake passes it as a dict)
    case(
        "config-plot-format",
        lambda t: expand_experiments(config_with(put("outputs", "plot_format", "jpg"))),
        "config",
        "outputs.plot_format",
        "'jpg' is not one of png, svg, pdf",
    ),
    case(
        "config-outputs-unknown",
        lambda t: expand_experiments(config_with(put("outputs", "dpi", 300))),
        "config",
        "outputs.dpi",
        "unknown key 'dpi'; known keys here: float_format, plot_format",
    ),
    case(
        "config-top-level-typo",
        lambda t: expand_experiments(config_with(put("default", {"opt": "energy"}))),
        "config",
        "default",
        "unknown key 'default'; did you mean 'defaults'?",
    ),
    case(
        "config-experiments-typo",
        lambda t: expand_experiments(config_with(rename("experiments", "experiment"))),
        "config",
        "experiment",
        "unknown key 'experiment'; did you mean 'experiments'?",
    ),
    case(
        "config-defaults-option-typo",
        lambda t: expand_experiments(config_with(put("defaults", {"lpf_limt": 6}))),
        "config",
        "defaults.lpf_limt",
        "unknown key 'lpf_limt'; did you mean 'lpf_limit'?",
    ),
    case(
        "config-required-key-typo",
        lambda t: expand_experiments(
            config_with(rename("experiments", 0, "accelerator", "acclerator"))
        ),
        "config",
        "experiments[0].acclerator",
        "unknown key 'acclerator'; did you mean 'accelerator'?",
    ),
    case(
        "config-sweep-option-typo",
        lambda t: expand_experiments(config_with(put("sweeps", 0, "optt", ["energy"]))),
        "config",
        "sweeps[0].optt",
        "unknown key 'optt'; did you mean 'opt'?",
    ),
    case(
        "config-stream-search-typo",
        lambda t: expand_experiments(
            config_with(
                put(
                    "stream_experiments",
                    [
                        {
                            "name": "s",
                            "accelerator": "a.yaml",
                            "workload": "w.onnx",
                            "mapping": "m.yaml",
                            "mode": "lbl",
                            "search": {"seeed": 1},
                        }
                    ],
                )
            )
        ),
        "config",
        "stream_experiments[0].search.seeed",
        "unknown key 'seeed'; did you mean 'seed'?",
    ),
    case(
        "config-missing-mapping",
        lambda t: expand_experiments(config_with(cut("experiments", 0, "mapping"))),
        "config",
        "experiments[0]",
        "'mapping' is missing",
        "add mapping:",
    ),
    case(
        "config-experiments-not-list",
        lambda t: expand_experiments(config_with(put("experiments", {"a": 1}))),
        "config",
        "experiments",
        "is not of type array",
    ),
    case(
        "config-name-with-space",
        lambda t: expand_experiments(config_with(put("experiments", 0, "name", "my run"))),
        "config",
        "experiments[0].name",
        "does not match",
        "letters, digits",
    ),
    case(
        "config-empty-sweep-list",
        lambda t: expand_experiments(config_with(put("sweeps", 0, "accelerator", []))),
        "config",
        "sweeps[0].accelerator",
        "the list is empty; give at least one entry",
    ),
    case(
        "config-lpf-limit-zero",
        lambda t: expand_experiments(config_with(put("defaults", {"lpf_limit": 0}))),
        "config",
        "defaults.lpf_limit",
        "0 is less than the minimum of 1",
    ),
    case(
        "config-unknown-option",
        lambda t: expand_experiments(config_with(put("experiments", 0, "lpf_limt", 3))),
        "config",
        "experiments[0].lpf_limt",
        "unknown key 'lpf_limt'; did you mean 'lpf_limit'?",
    ),
    case(
        "config-name-dot-dot",
        lambda t: expand_experiments(config_with(put("experiments", 0, "name", ".."))),
        "config",
        "experiments[0].name",
        "'..' is not a plain folder name",
    ),
    case(
        "config-name-dot",
        lambda t: expand_experiments(config_with(put("experiments", 0, "name", "."))),
        "config",
        "experiments[0].name",
        "'.' is not a plain folder name",
    ),
    case(
        "config-sweep-name-slash",
        lambda t: expand_experiments(config_with(put("sweeps", 0, "name", "a/{accelerator}"))),
        "config",
        "sweeps[0] (a/tpu_like).name",
        "'a/tpu_like' is not a plain folder name",
    ),
    case(
        "config-stream-name-dot-dot",
        lambda t: resolve_multicore_experiments(
            {
                "stream_experiments": [
                    {
                        "name": "..",
                        "accelerator": TPU,
                        "workload": str(SMALL),
                        "mapping": TPU_MAPPING,
                        "mode": "lbl",
                    }
                ]
            }
        ),
        "config",
        "stream_experiments[0].name",
        "'..' is not a plain folder name",
    ),
    case(
        "config-workload-missing",
        lambda t: check_input_files(
            expand_experiments(config_with(put("experiments", 0, "workload", str(t / "gone.onnx"))))
        ),
        "config",
        "experiment 'a'.workload",
        "gone.onnx does not exist; fix the path",
    ),
    case(
        "yaml-workload-missing",
        lambda t: load_inputs(str(t / "gone.yaml"), TPU, TPU_MAPPING),
        "gone.yaml",
        None,
        "does not exist; check the path",
    ),
    case(
        "config-sweep-pattern",
        lambda t: expand_experiments(config_with(put("sweeps", 0, "name", "{opt}"))),
        "config",
        "sweeps[0].name",
        "pattern names 'opt'",
    ),
    case(
        "config-duplicate-name",
        lambda t: expand_experiments(config_with(put("sweeps", 0, "name", "a"))),
        "config",
        "experiment 'a'",
        "name used twice",
    ),
    case(
        "config-no-experiment",
        lambda t: expand_experiments({"results": "r"}),
        "config",
        "top level",
        "no experiment defined",
        "'multicore_experiments' or 'hardware_sweeps'",
    ),
]


@pytest.mark.parametrize("provoke, file, where, needles, error", CASES)
def test_bad_input_gives_one_line(provoke, file, where, needles, error, tmp_path):
    with pytest.raises(error) as info:
        provoke(tmp_path)
    text = str(info.value)
    assert "\n" not in text, text
    if error is InputError:
        assert (Path(info.value.file).name if info.value.file else None) == file, text
        assert info.value.where == where, text
    for needle in needles:
        assert needle in text, (needle, text)


def case_count(path: Path, name: str) -> int:
    """How many cases the list ``name`` of a test module holds (read, not imported: test modules
    import no other test module)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == name for t in node.targets
        ):
            return len(node.value.elts)
    raise AssertionError(f"{path.name} has no list {name}")


def test_at_least_fifty_distinct_bad_inputs():
    assert len({p.id for p in CASES}) == len(CASES)  # test_validation checks its own ids
    count = len(CASES) + case_count(TESTS / "unit" / "io" / "test_validation.py", "BAD_INPUTS")
    count += case_count(TESTS / "unit" / "mapping_search" / "test_options_table.py", "BAD_OPTIONS")
    assert count >= 50, count


# ---- warnings: one line each, naming what was left out or looks wrong --------------------------


def size_warnings(caplog) -> list[str]:
    """The warnings other than about the reference files' own quirks: the mapping's unused
    'example_name_of_layer0' entry and tpu_like.yaml's repeated 'ports' (tests/errors/test_strict_yaml.py)."""
    quirks = ("mapping entry 'example_name_of_layer0'", "'ports' is given twice")
    return [m for m in warnings_of(caplog) if not any(q in m for q in quirks)]


@pytest.mark.parametrize("all_operators", [False, True])
def test_unsupported_operators_give_one_warning_per_type_with_a_count(
    all_operators, tmp_path, caplog
):
    path = conv_then_conv_transpose(tmp_path / "up.onnx")
    workload, _ = load_inputs(path, TPU, TPU_MAPPING, evaluate_all_operators=all_operators)
    assert [layer.name for layer in workload.layers] == ["conv"] + (
        ["pool"] if all_operators else []
    )
    messages = warnings_of(caplog)
    assert (
        f"{path}: 1 ConvTranspose node not evaluated (no cost model; kept as dependencies)"
        in messages
    )
    assert f"{path}: 1 Relu node not evaluated (no cost model; kept as dependencies)" in messages
    pool = f"{path}: 1 MaxPool node not evaluated (--evaluate-all-operators evaluates them)"
    assert (pool in messages) != all_operators
    assert all("\n" not in m for m in messages)


def test_repeated_operators_are_counted_in_one_line(caplog):
    load_inputs(reference_input("workload", "resnet18.onnx"), TPU, TPU_MAPPING)
    relu = [m for m in warnings_of(caplog) if "Relu" in m]
    assert relu == [
        f"{reference_input('workload', 'resnet18.onnx')}: 17 Relu nodes not evaluated "
        "(no cost model; kept as dependencies)"
    ]


def test_inconsistent_producer_and_consumer_sizes_warn_naming_both(tmp_path, caplog):
    path = small_with(tmp_path, put(1, "loop_sizes", 2, 16))  # conv_b reads C=16 from conv_a (K=32)
    load_inputs(path, TPU, TPU_MAPPING)
    assert size_warnings(caplog) == [
        f"{path}: layer 'conv_b' (id 1) reads I from layer 'conv_a' (id 0) with B=1, C=16, but 'conv_a' "
        "produces B=1, K=32; check the loop_sizes of both layers"
    ]


def test_consistent_sizes_do_not_warn(caplog):
    load_inputs(str(SMALL), TPU, TPU_MAPPING)
    load_inputs(reference_input("workload", "resnet18.yaml"), TPU, TPU_MAPPING)
    assert size_warnings(caplog) == []


def test_dimension_of_other_layers_only_stays_a_warning(tmp_path, caplog):
    """'OX' is no dimension of the pooling-free Gemm layer but is one of the convolutions: a warning."""
    gemm = {
        "id": 4,
        "name": "fc",
        "operator_type": "Gemm",
        "equation": "O[b][k]+=W[k][c]*I[b][c]",
        "loop_dims": ["B", "K", "C"],
        "loop_sizes": [1, 10, 64],
        "operand_precision": {"W": 8, "I": 8, "O": 16, "O_final": 8},
        "operand_source": {"I": 3, "W": 4},
    }
    workload = small_with(tmp_path, lambda layers: layers.append(gemm))
    mapping = mapping_with(tmp_path, put("spatial_mapping", "D2", ["OX, 4"]))
    layers, accelerator = load_inputs(workload, TPU, mapping)
    search_layer(layers.layers[-1], accelerator, SearchOptions(lpf_limit=2), show_progress=False)
    assert "fc: spatial unrolling of OX on D2 removed: not a loop dim" in warnings_of(caplog)


# ---- the command line: one line, exit status 2, no traceback -----------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("model", [relu_softmax, lstm])
def test_command_line_reports_a_model_without_layers_in_one_line(model, tmp_path):
    path = model(tmp_path / "m.onnx")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            path,
            "--accelerator",
            TPU,
            "--mapping",
            TPU_MAPPING,
            "--output",
            str(tmp_path / "out"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    errors = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(
        f"error: {path}: no operator of the model can be evaluated"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gone.onnx", "gone.yaml"])
def test_command_line_reports_a_missing_workload_in_one_line(name, tmp_path):
    path = str(tmp_path / name)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            path,
            "--accelerator",
            TPU,
            "--mapping",
            TPU_MAPPING,
            "--output",
            str(tmp_path / "out"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2 and "Traceback" not in completed.stderr
    assert completed.stderr.strip().splitlines() == [
        f"error: {path}: does not exist; check the path "
        "(relative paths start at the working directory)"
    ]


def test_command_line_reports_a_mapping_typo_in_one_line(tmp_path):
    mapping = mapping_with(tmp_path, put("spatial_mapping", "D1", ["KK, 32"]))
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "zigzag",
            "run",
            "--workload",
            str(SMALL),
            "--accelerator",
            TPU,
            "--mapping",
            mapping,
            "--output",
            str(tmp_path / "out"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2 and "Traceback" not in completed.stderr
    assert (
        completed.stderr.strip()
        .splitlines()[-1]
        .startswith(
            f"error: {mapping}: mapping entry 'default'.spatial_mapping.D1[0]: 'KK' is not a dimension"
        )
    )


def test_a_config_is_read_once_and_a_bad_one_always_refused(monkeypatch):
    """The workflow reads its config once (zigzag.config.load_config); the resolvers take the
    typed config as it is, without checking it again."""
    from zigzag.config import WorkflowConfig, load_config

    good = config_with(lambda c: None)
    expected = expand_experiments(good)
    typed = load_config(good)

    def no_check(*args, **kwargs):
        raise AssertionError("the config was checked again")

    monkeypatch.setattr(WorkflowConfig, "model_validate", no_check)
    assert expand_experiments(typed) == expected
    monkeypatch.undo()
    bad = config_with(put("experiments", 0, "name", "my run"))
    for _ in range(2):
        with pytest.raises(InputError, match="does not match"):
            expand_experiments(bad)


def test_a_sweep_may_list_the_values_of_any_option():
    config = config_with(put("sweeps", 0, "opt", ["energy", "latency"]))
    config["sweeps"][0]["name"] = "{accelerator}-{opt}"
    names = [experiment["name"] for experiment in expand_experiments(config)]
    assert names == ["a", "tpu_like-energy", "tpu_like-latency"]
