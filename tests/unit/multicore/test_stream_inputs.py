"""Stream mapping files, workloads, stacks and the seed's CN options: behaviour and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.multicore.cn_graph import build_cn_graph
from zigzag.multicore.inputs import cn_graph_from_files, load_cn_graph_inputs
from zigzag.multicore.mapping import load_stream_mapping, parse_stream_mapping
from zigzag.multicore.nodes import OPERANDS
from zigzag.multicore.stages import GenerateCNWorkloadHybridStage, Stage
from zigzag.multicore.tiling import SeedTiling, parse_layer_stacks
from zigzag.multicore.workload_onnx import read_stream_workload
from support import TESTS

REF = TESTS / "data" / "reference" / "stream"
SMALL = (
    REF / "small/dual_testing_core_offchip_v2.yaml",
    REF / "small/small_3conv.onnx",
    REF / "small/mapping_plain.yaml",
)
QUAD = REF / "stream/inputs/examples/hardware/tpu_like_quad_core.yaml"
RESNET = REF / "stream/inputs/examples/workload/resnet18.onnx"
RESNET_MAPPING = REF / "stream/inputs/examples/mapping/tpu_like_quad_core_resnet18_fixed_split.yaml"


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def small_graph(mode="fused", stacks=((0, 1, 2),), **kwargs):
    return cn_graph_from_files(
        *SMALL, mode, [tuple(s) for s in stacks] if stacks else None, cwd=str(REF), **kwargs
    )


# ----- mapping files -----------------------------------------------------------------------------
BAD_MAPPINGS = [
    ({"name": "default"}, "non-empty YAML list"),
    ([{"core_allocation": [0]}], "name"),
    (["default"], "must be a mapping"),
    ([{"name": "default", "cores": [0]}], "unknown field"),
    ([{"name": "default", "core_allocation": "0"}], "not a list of core ids"),
    ([{"name": "default", "core_allocation": [-1]}], "not a list of core ids"),
    ([{"name": "default", "core_allocation": [[0], []]}], "per-group allocation"),
    ([{"name": "default", "core_allocation_is_fixed": "yes"}], "not true or false"),
    ([{"name": "default", "intra_core_tiling": ["OY all"]}], "is not 'DIM, factor'"),
    ([{"name": "default", "inter_core_tiling": ["K, 0"]}], "at least 1"),
    ([{"name": "default", "inter_core_tiling": ["k, 2"]}], "upper-case dim"),
    ([{"name": "default", "spatial_mapping": {"D5": ["K, 2"]}}], "D1, D2, D3 or D4"),
    ([{"name": "default", "spatial_mapping": {"D1": ["K 2"]}}], "'DIM, size'"),
    ([{"name": "default", "memory_operand_links": {"O": "O", "I": "I1"}}], "exactly O, W and I"),
    ([{"name": "Conv", "core_allocation": [0]}], "no entry named 'default'"),
]


@pytest.mark.parametrize("data, message", BAD_MAPPINGS)
def test_bad_mapping_is_one_line(data, message):
    with pytest.raises(InputError) as exc:
        parse_stream_mapping(data, "m.yaml")
    text = one_line(exc)
    assert text.startswith("m.yaml") and message in text


def test_mapping_files_on_disk(tmp_path):
    (tmp_path / "bad.yaml").write_text("- name: default\n  core_allocation: [0\n")
    with pytest.raises(InputError) as exc:
        load_stream_mapping(tmp_path / "bad.yaml")
    assert "malformed YAML" in one_line(exc)
    with pytest.raises(InputError) as exc:
        load_stream_mapping(tmp_path / "missing.yaml")
    assert "does not exist" in one_line(exc)


def test_mapping_semantics():
    mapping = parse_stream_mapping(
        [
            {"name": "default", "core_allocation": [1], "intra_core_tiling": ["OY, all"]},
            {"name": "Conv", "core_allocation": [0, 1], "inter_core_tiling": ["K, 2"]},
            {
                "name": "Conv",
                "core_allocation": [2, 3],
                "inter_core_tiling": ["K, 2"],
            },  # later entry wins
            {"name": "/x/Relu", "core_allocation": [[0, 1], [2]], "intra_core_tiling": ["K", 4]},
        ]
    )
    conv = mapping.entry_for("/c/Conv", "Conv")
    assert conv.core_allocation == (2, 3) and conv.intra_core_tiling == (("OY", "all"),)
    assert mapping.entry_for("/y/Relu", "Relu").name == "default"
    relu = mapping.entry_for("/x/Relu", "Relu")
    assert relu.group_allocation == ((0, 1), (2,)) and relu.intra_core_tiling == (("K", 4),)
    assert relu.core_of_group(1) == 2


def test_reference_mappings_load_unchanged():
    mapping = load_stream_mapping(RESNET_MAPPING)
    assert (
        mapping.entries["/maxpool/MaxPool"].core_allocation_is_fixed is True
    )  # merged duplicate key
    assert mapping.entries["/avgpool/GlobalAveragePool"].core_allocation_is_fixed is False
    ksplit = load_stream_mapping(REF / "small/mapping_ksplit.yaml")
    assert ksplit.entries["/conv1/Conv"].inter_core_tiling == (("K", 2),)
    flexible = load_stream_mapping(REF / "stream/inputs/examples/mapping/tpu_like_quad_core.yaml")
    assert flexible.entries["Gemm"].inter_core_tiling == (("H", "*"),)


# ----- workloads ---------------------------------------------------------------------------------
def tiny_model(tmp_path, op="Relu", shape=(1, 4, 8, 8), **attrs) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    node = helper.make_node(op, ["x"], ["y"], name=f"/{op.lower()}", **attrs)
    graph = helper.make_graph([node], "g", [x], [y])
    path = tmp_path / f"{op}_{len(list(tmp_path.iterdir()))}.onnx"
    onnx.save(helper.make_model(graph), path)
    return path


def test_resnet18_without_its_weight_file_parses_as_stream_does():
    workload = read_stream_workload(RESNET, load_stream_mapping(RESNET_MAPPING))
    kinds = [type(n).__name__ for n in workload.nodes.values()]
    assert len(workload.nodes) == 49 and kinds.count("StreamLayer") == 48
    relu, pool, add, gemm = (workload.nodes[i] for i in (1, 2, 6, 48))
    assert relu.sizes == {"B": 1, "H": 64, "D": 112, "K": 112} and relu.constant_operands == ("W",)
    assert pool.sizes["OX"] == 56 and pool.layer.precision["W"] == 0
    assert add.input_operand_source == {"W": 5, "I": 2} and add.constant_operands == ()
    assert gemm.sizes == {"C": 512, "D": 1, "K": 1000}
    assert workload.nodes[47].kind == "flatten"


def test_softmax_becomes_four_layers(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 16])
    weight = helper.make_tensor("w", TensorProto.FLOAT, [8, 16], [0.0] * 128)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["y"], name="/mm"),
        helper.make_node("Softmax", ["y"], ["z"], name="/sm"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [x],
        [z],
        initializer=[weight],
        value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16])],
    )
    onnx.save(helper.make_model(graph), tmp_path / "sm.onnx")
    workload = read_stream_workload(
        tmp_path / "sm.onnx", parse_stream_mapping([{"name": "default"}])
    )
    assert [n.type for n in workload.layers] == ["matmul", "max", "exp", "sum", "div"]
    assert workload.nodes[2].input_operand_source == {"I": 0, "W": 1}
    assert workload.edges == ((0, 1), (0, 2), (1, 2), (2, 3), (2, 4), (3, 4))
    graph = build_cn_graph(workload, "fused", [(0, 1, 2, 3, 4)])
    assert len(graph) > 5 and graph.nb_edges > 0


def shapeless_input_model(tmp_path) -> Path:
    """A Relu whose input comes from a custom operator, whose output shape nothing can infer."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Mystery", ["x"], ["t"], name="/mystery", domain="example.custom"),
        helper.make_node("Relu", ["t"], ["y"], name="/relu"),
    ]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]))
    model.opset_import.append(helper.make_opsetid("example.custom", 1))
    path = tmp_path / "shapeless.onnx"
    onnx.save(model, path)
    return path


def test_bad_workloads_are_one_line(tmp_path):
    mapping = parse_stream_mapping([{"name": "default"}])
    cases = [
        (tmp_path / "missing.onnx", "does not exist"),
        (tiny_model(tmp_path, "LpNormalization"), "LpNormalization is not supported"),
        (
            shapeless_input_model(tmp_path),
            "the shape of tensor 't' is unknown: the input shapes are static, but ONNX "
            "shape inference cannot derive it",
        ),
        (tiny_model(tmp_path, "MaxPool", kernel_shape=[3, 3, 3]), "kernel_shape"),
        (
            tiny_model(tmp_path, "MaxPool", shape=(1, 0, 8, 8), kernel_shape=[1, 1]),
            "unknown (0) dimension",
        ),
        (
            tiny_model(tmp_path, "Relu", shape=(1, 4, 8, 8)),
            "reads only graph inputs and initializers; an element-wise layer needs an input produced",
        ),
    ]
    (tmp_path / "text.onnx").write_text("not a model")
    cases.append((tmp_path / "text.onnx", "not a valid ONNX model"))
    for path, message in cases:
        with pytest.raises(InputError) as exc:
            read_stream_workload(path, mapping)
        text = one_line(exc)
        assert str(path) in text and message in text, text


# ----- stacks, tiling, allocation ----------------------------------------------------------------
def test_layer_stack_text():
    assert parse_layer_stacks("0-2;3,5; 6") == [(0, 1, 2), (3, 5), (6,)]
    for text, message in (
        ("a-b", "not a layer id"),
        ("4-2", "runs backwards"),
        (";", "no layer ids"),
    ):
        with pytest.raises(InputError) as exc:
            parse_layer_stacks(text)
        assert "--layer-stacks" in one_line(exc) and message in str(exc.value)


def test_stack_and_tiling_mistakes():
    with pytest.raises(InputError) as exc:
        small_graph("fused", ((0, 1), (1, 2)))
    assert "in two stacks" in one_line(exc)
    _, workload, _ = load_cn_graph_inputs(*SMALL, cwd=str(REF))
    with pytest.raises(InputError) as exc:
        build_cn_graph(workload, "pipelined")
    assert "not a layer mode" in one_line(exc)
    with pytest.raises(InputError) as exc:
        build_cn_graph(workload, "fused")
    assert "needs --layer-stacks" in one_line(exc)


def test_wildcard_intra_tiling_and_too_few_fixed_cores(tmp_path):
    (tmp_path / "star.yaml").write_text("- name: default\n  intra_core_tiling: ['OY, *']\n")
    with pytest.raises(InputError) as exc:
        cn_graph_from_files(
            SMALL[0], SMALL[1], tmp_path / "star.yaml", "fused", [(0, 1, 2)], cwd=str(REF)
        )
    assert "only allowed in inter_core_tiling" in one_line(exc)
    (tmp_path / "k.yaml").write_text(
        "- name: default\n  core_allocation: [0]\n  core_allocation_is_fixed: true\n  inter_core_tiling: ['K, 2']\n"
    )
    with pytest.raises(InputError) as exc:
        cn_graph_from_files(SMALL[0], SMALL[1], tmp_path / "k.yaml", "lbl", cwd=str(REF))
    assert "list one core (or one tuple of cores) per group" in one_line(exc)


def test_ksplit_mapping_gives_groups_on_their_cores():
    """mapping_ksplit: conv1 K split 2 over cores [1, 0] -> groups 0/1 with their own weights."""
    graph = cn_graph_from_files(
        SMALL[0], SMALL[1], REF / "small/mapping_ksplit.yaml", "lbl", cwd=str(REF)
    )
    rows = np.flatnonzero(graph.layer == 1)
    assert graph.group[rows].tolist() == [0, 1] and graph.core[rows].tolist() == [1, 0]
    assert [graph.loop_ranges(i)["K"] for i in rows] == [(0, 16), (16, 32)]
    w = OPERANDS.index("W")
    assert len(set(graph.tensor_id[rows, w].tolist())) == 2
    # both halves need all of conv0's output and feed conv2
    assert graph.nb_real_predecessors[rows].tolist() == [1, 1]
    assert graph.nb_real_predecessors[np.flatnonzero(graph.layer == 2)].tolist() == [2]


def test_per_group_core_tuples(tmp_path):
    (tmp_path / "g.yaml").write_text(
        "- name: default\n  core_allocation: [0]\n  core_allocation_is_fixed: true\n"
        "- name: /conv1/Conv\n  core_allocation: [[1, 0], [0, 1]]\n  core_allocation_is_fixed: true\n"
        "  inter_core_tiling: ['K, 2']\n"
    )
    graph = cn_graph_from_files(SMALL[0], SMALL[1], tmp_path / "g.yaml", "lbl", cwd=str(REF))
    rows = np.flatnonzero(graph.layer == 1)
    assert graph.core[rows].tolist() == [1, 0] and graph.layers[1].core_allocation == (1, 0)


def test_fused_single_stacks_follow_the_weight_capacity():
    """Without stacks, fused mode fuses until the weights fill the cores (counts from the reference)."""
    oracle = json.loads((TESTS / "data/stream/fused_single_resnet18_counts.json").read_text())
    graph = cn_graph_from_files(QUAD, RESNET, RESNET_MAPPING, "fused", cwd=str(REF))
    assert [list(s) for s in graph.stacks] == oracle["layer_stacks"]
    assert graph.stacks[0] == tuple(range(41)) and graph.stacks[1:] == (
        (41,),
        (42,),
        (43,),
        (44,),
        (45,),
        (46,),
        (48,),
    )
    assert (len(graph), graph.nb_edges, graph.nb_intra_layer_edges) == (
        oracle["nb_cns"],
        oracle["nb_edges"],
        oracle["nb_intra_layer_edges"],
    )


# ----- the seed's options --------------------------------------------------------------------------
def test_seed_mode_1_hint_loops_equal_fused_rows():
    fused = small_graph()
    seeded = small_graph(seed=SeedTiling(cn_define_mode=1, hint_loops=[("OY", "all")]))
    for name in ("layer", "sub_id", "start", "stop", "edge_src", "edge_dst", "edge_bits"):
        assert np.array_equal(getattr(fused, name), getattr(seeded, name)), name


def test_seed_k_hint_loops_make_groups(tmp_path):
    """A K hint loop cuts a layer into groups (each with its own weights) that may go to different cores."""
    (tmp_path / "flex.yaml").write_text("- name: default\n  core_allocation: [0, 1]\n")
    graph = cn_graph_from_files(
        SMALL[0],
        SMALL[1],
        tmp_path / "flex.yaml",
        "fused",
        [(0, 1, 2)],
        cwd=str(REF),
        seed=SeedTiling(cn_define_mode=1, hint_loops=[("OY", "all"), ("K", 2)]),
    )
    rows = np.flatnonzero(graph.layer == 1)
    assert len(rows) == 16 and np.bincount(graph.group[rows]).tolist() == [8, 8]
    assert set(graph.core[rows].tolist()) == {-1}
    assert graph.layers[1].inter_core_tiling == (("K", 2),) and graph.layers[
        1
    ].intra_core_tiling == (("OY", 8),)
    w = OPERANDS.index("W")
    assert len(set(graph.tensor_id[rows, w].tolist())) == 2


def test_seed_mode_2_inner_loops_are_the_complement():
    """Inner loops = everything but OY (at full size) gives the same CNs as outer loop (OY, all)."""
    inner = [
        ("B", 1),
        ("K", "all"),
        ("G", 1),
        ("OX", "all"),
        ("C", "all"),
        ("FX", "all"),
        ("FY", "all"),
    ]
    seeded = small_graph(seed=SeedTiling(cn_define_mode=2, hint_loops=inner))
    fused = small_graph()
    assert np.array_equal(seeded.start, fused.start) and seeded.nb_edges == fused.nb_edges
    halves = small_graph(
        seed=SeedTiling(cn_define_mode=2, hint_loops=inner[:3] + [("OX", 4)] + inner[4:])
    )
    assert len(halves) == 3 * 16  # rows x two column halves


def test_seed_mode_3_hint_loops_per_layer_range():
    seeded = small_graph(
        seed=SeedTiling(
            cn_define_mode=3, hint_loops=[[("OY", "all")], [("OY", 2)]], layer_cutoffs=[0, 2]
        )
    )
    assert np.bincount(seeded.layer).tolist() == [8, 2, 2]


def test_seed_mode_4_splits_weights_that_do_not_fit():
    """conv1's 36 864 weight bits in half of a 32 768-bit memory -> K split 3 -> 4 (a divisor of 32)."""
    seed = SeedTiling(
        cn_define_mode=4,
        hint_loops=[],
        split_W_percentage=0.5,
        weight_capacities={0: 32768, 1: 32768},
    )
    _, workload, _ = load_cn_graph_inputs(*SMALL, cwd=str(REF))
    layer = workload.nodes[1]
    assert seed.k_split_factor(layer) == 1  # a single candidate core is never split (as the seed)
    multi = layer.mapping.__class__(name="x", core_allocation=(0, 1))
    split_layer = type(layer)(
        layer.id, layer.name, layer.op_type, layer.type, layer.layer, multi, layer.reshape
    )
    assert seed.k_split_factor(split_layer) == 4
    with pytest.raises(InputError) as exc:
        SeedTiling(cn_define_mode=4)
    assert "split_W_percentage" in one_line(exc)
    with pytest.raises(InputError):
        SeedTiling(cn_define_mode=5)


def test_seed_with_capacities_fills_only_a_mode_4_seed_without_them():
    """The cores' weight memories complete a mode-4 seed; given capacities and other modes stay."""
    cores = {0: 32768, 1: 65536}
    bare = SeedTiling(cn_define_mode=4, split_W_percentage=0.5)
    filled = bare.with_capacities(cores)
    assert filled.weight_capacities == cores and bare.weight_capacities == {}
    assert (filled.cn_define_mode, filled.split_W_percentage) == (4, 0.5)
    given = SeedTiling(cn_define_mode=4, split_W_percentage=0.5, weight_capacities={0: 8})
    assert given.with_capacities(cores) is given
    mode_1 = SeedTiling(cn_define_mode=1)
    assert mode_1.with_capacities(cores) is mode_1


def test_seed_mode_4_on_resnet18():
    """Half of the 16.8 Mbit TPU weight memory: the 4.7-18.9 Mbit layer-4 convs are cut into K groups
    placed on their fixed per-group cores."""
    graph = cn_graph_from_files(
        QUAD,
        RESNET,
        RESNET_MAPPING,
        "lbl",
        cwd=str(REF),
        seed=SeedTiling(cn_define_mode=4, hint_loops=[], split_W_percentage=0.5),
    )
    split = {
        i: info.inter_core_tiling
        for i, info in graph.layers.items()
        if info.inter_core_tiling[0][1] != "*"
    }
    assert split == {35: (("K", 2),), 37: (("K", 4),), 41: (("K", 4),), 43: (("K", 4),)}
    rows = np.flatnonzero(graph.layer == 37)
    assert graph.core[rows].tolist() == [2, 1, 2, 2] and len(graph) == 48 + 1 + 3 * 3
    # the seed's Stage API fills the capacities the same way
    accelerator, workload, _ = load_cn_graph_inputs(QUAD, RESNET, RESNET_MAPPING, str(REF))
    stage = GenerateCNWorkloadHybridStage(
        [Stage],
        workload=workload,
        accelerator=accelerator,
        cn_define_mode=4,
        hint_loops=[],
        split_W_percentage=0.5,
    )
    staged = stage.graph(workload, "lbl", None, stage.seed)
    assert {i: info.inter_core_tiling for i, info in staged.layers.items()} == {
        i: info.inter_core_tiling for i, info in graph.layers.items()
    }


def test_layer_splitting_makes_k_pieces_joined_by_a_concat():
    plain = small_graph("lbl", None)
    split = small_graph("lbl", None, layer_splits={"/conv1/Conv": 2})
    names = {i: layer.name for i, layer in split.layers.items()}
    assert names == {0: "/conv0/Conv", 1: "/conv1/Conv_0", 2: "/conv1/Conv_1", 4: "/conv2/Conv"}
    assert (
        split.layers[1].sizes["K"] == 16 and split.layers[1].zigzag_operand_bits["W"] * 2 == 36864
    )
    consumer = split.index(4, 0)
    assert sorted(int(split.layer[s]) for s in split.edge_src[split.edge_dst == consumer]) == [1, 2]
    assert split.nb_real_predecessors[consumer] == 2 and len(split) == len(plain) + 1
    with pytest.raises(InputError) as exc:
        small_graph("lbl", None, layer_splits={"/conv1/Conv": 3})
    assert "does not divide the 32 output channels" in one_line(exc)
    with pytest.raises(InputError) as exc:
        small_graph("lbl", None, layer_splits={"/nope": 2})
    assert "no node with that name" in one_line(exc)


def test_automatic_layer_splitting_by_weight_capacity():
    graph = cn_graph_from_files(
        QUAD, RESNET, RESNET_MAPPING, "lbl", cwd=str(REF), split_W_fraction=0.5
    )
    split = sorted(info.name for info in graph.layers.values() if info.name.endswith("_1"))
    # 512x512x3x3 weights (18.9 Mbit) exceed half of the 16.8 Mbit TPU memory: split in 4
    assert "/layer4/layer4.1/conv1/Conv_1" in split
    assert len(graph.layers) > 48


# ----- command line --------------------------------------------------------------------------------
def test_cli_writes_graph_table_and_picture(tmp_path, capsys):
    code = main(
        [
            "stream",
            "nodes",
            "--accelerator",
            str(SMALL[0]),
            "--workload",
            str(SMALL[1]),
            "--mapping",
            str(SMALL[2]),
            "--mode",
            "fused",
            "--layer-stacks",
            "0-2",
            "--output",
            str(tmp_path),
            "--cwd",
            str(REF),
        ]
    )
    assert code == 0
    assert "24 CNs in 3 layers, 51 edges (21 intra-layer)" in capsys.readouterr().out
    table = (tmp_path / "cn_graph.csv").read_text().splitlines()
    assert len(table) == 25 and table[1].startswith("0,0,/conv0/Conv,conv,0,0,0,B=0:1 K=0:16")
    assert (tmp_path / "cn_graph.png").stat().st_size > 1000 and (
        tmp_path / "cn_graph.npz"
    ).exists()


def test_cli_layer_splits(tmp_path, capsys):
    args = [
        "stream",
        "nodes",
        "--accelerator",
        str(SMALL[0]),
        "--workload",
        str(SMALL[1]),
        "--mapping",
        str(SMALL[2]),
        "--mode",
        "lbl",
        "--output",
        str(tmp_path),
        "--cwd",
        str(REF),
        "--no-picture",
    ]
    assert main(args + ["--split-layers", "/conv1/Conv=2"]) == 0
    assert "4 CNs in 4 layers" in capsys.readouterr().out
    assert main(args + ["--split-layers", "/conv1/Conv"]) == 2
    assert "--split-layers" in capsys.readouterr().err


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    code = main(
        [
            "stream",
            "nodes",
            "--accelerator",
            str(SMALL[0]),
            "--workload",
            str(SMALL[1]),
            "--mapping",
            str(SMALL[2]),
            "--mode",
            "fused",
            "--layer-stacks",
            "2-0",
            "--output",
            str(tmp_path),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "runs backwards" in err
    code = main(
        [
            "stream",
            "nodes",
            "--accelerator",
            str(SMALL[0]),
            "--workload",
            str(SMALL[1]),
            "--mapping",
            str(SMALL[2]),
            "--mode",
            "lbl",
            "--seed-options",
            "{bad",
            "--output",
            str(tmp_path),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--seed-options" in err
