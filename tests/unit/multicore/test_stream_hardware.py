"""Multi-core accelerators (Stream's YAML format): the reference examples, routes, memories, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from zigzag.errors import InputError
from zigzag.multicore.hardware import ANY
from zigzag.multicore.topology import load_multicore_accelerator
from support import REPO, TESTS

DATA = TESTS / "data"
STREAM = DATA / "reference" / "stream"
QUAD = STREAM / "stream" / "inputs" / "examples" / "hardware" / "tpu_like_quad_core.yaml"
DUAL = STREAM / "small" / "dual_testing_core_offchip_v2.yaml"
CASES = {"lbl": QUAD, "small_lbl": DUAL, "small_fused": DUAL}
#: the copies for users under inputs/stream/hardware build the same as the reference's files
USER_COPIES = {"lbl": "tpu_like_quad_core.yaml", "small_lbl": "dual_testing_core.yaml"}

_DUMPS: dict[str, dict] = {}


def dump(case: str) -> dict:
    if case not in _DUMPS:
        _DUMPS[case] = json.loads((STREAM / f"{case}.json").read_text())
    return _DUMPS[case]


def _node(value) -> str:
    return str(value)


def _cases():
    yield from ((case, CASES[case]) for case in sorted(CASES))
    root = REPO / "inputs" / "stream" / "hardware"
    yield from ((case, root / name) for case, name in USER_COPIES.items())


@pytest.mark.parametrize(("case", "path"), list(_cases()), ids=lambda v: getattr(v, "name", v))
def test_links_equal_the_reference_dump(case, path):
    accelerator = load_multicore_accelerator(path)
    ours = sorted(
        (
            _node(l.sender),
            _node(l.receiver),
            l.bandwidth,
            l.unit_energy_cost,
            l.bidirectional,
            tuple(sorted(l.edges)),
        )
        for l in accelerator.links
    )
    theirs = sorted(
        (
            l["sender"],
            l["receiver"],
            l["bandwidth"],
            l["unit_energy_cost"],
            l["bidirectional"],
            tuple(sorted(tuple(e) for e in l["graph_edges"])),
        )
        for l in dump(case)["links"]
    )
    assert ours == theirs


@pytest.mark.parametrize(("case", "path"), list(_cases()), ids=lambda v: getattr(v, "name", v))
def test_top_memories_equal_the_reference_dump(case, path):
    accelerator = load_multicore_accelerator(path)
    ours = sorted((m.name, ids, m.operands, m.capacity) for m, ids in accelerator.memory_instances)
    theirs = sorted(
        (m["name"], tuple(m["cores"]), tuple(m["memory_operands"][0]), m["capacity_bits"])
        for m in dump(case)["memories"]
    )
    assert ours == theirs


def test_quad_core_shape_and_routes():
    accelerator = load_multicore_accelerator(QUAD)
    assert [c.name for c in accelerator.cores] == ["tpu_like"] * 4 + [
        "pooling",
        "pooling",
        "offchip",
    ]
    assert accelerator.offchip_core_id == 6 and accelerator.offchip_core.is_offchip
    assert len(accelerator.compute_cores) == 6
    assert list(accelerator.graph.nodes) == [0, 1, 2, 3, 4, 5, 6]
    hops = {(s, t): [l.receiver for l in links] for (s, t), links in accelerator.routes.items()}
    # networkx's bidirectional BFS with insertion-ordered adjacency (docs/models/multi-core.md#hardware)
    assert hops[(0, 2)] == [1, 2] and hops[(1, 3)] == [2, 3] and hops[(2, 0)] == [1, 0]
    assert hops[(3, 1)] == [0, 1] and hops[(4, 5)] == [0, 5] and hops[(5, 4)] == [0, 4]
    dram = accelerator.link(0, 6)
    assert (
        dram is accelerator.link(6, 3)
        and dram.sender == 6
        and dram.receiver == ANY
        and dram.bidirectional
    )
    assert accelerator.route(2, 2) == ()
    assert accelerator.core(0).dataflows == {"D1": (("K", 32),), "D2": (("C", 32),)}
    assert accelerator.core(6).dataflows is None
    assert (
        accelerator.core(4).top_memory("O").r_bw == 576
        and accelerator.core(4).top_memory("O").w_bw == 512
    )


def test_plain_data_is_json():
    data = json.loads(json.dumps(load_multicore_accelerator(QUAD).to_dict()))
    assert len(data["links"]) == 25 and data["offchip_core_id"] == 6
    assert data["routes"] and data["memory_instances"][0]["cores"] == [0]


ORACLE = json.loads((DATA / "stream_hardware_oracle.json").read_text())
SHIPPED = sorted(name for name, record in ORACLE.items() if isinstance(record, dict))


def test_every_shipped_example_is_in_the_oracle():
    shipped = sorted(p.name for p in (REPO / "inputs" / "stream" / "hardware").glob("*.yaml"))
    assert set(SHIPPED) <= set(shipped) and len(SHIPPED) == 7
    assert set(shipped) - set(SHIPPED) == {
        "dual_testing_core.yaml",
        "tpu_like_mesh_2x2.yaml",  # ours
        "tpu_like_mesh_pooling.yaml",
        "split_buffer_mesh_2x2.yaml",
        "tpu_like_mesh_4x4.yaml",
        "tpu_like_quad_core_vector.yaml",
        "tpu_like_mesh_llm.yaml",
        "hbm_mesh_llm.yaml",
    }
    # the one example the reference itself rejects is not shipped
    assert [name for name, record in ORACLE.items() if isinstance(record, str)] == [
        "meta_prototype_dual_core_simd_offchip.yaml"
    ]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_examples_build_as_the_reference_builds_them(name, monkeypatch):
    monkeypatch.chdir(REPO)  # from the repository root, as users run them
    accelerator = load_multicore_accelerator(f"inputs/stream/hardware/{name}")
    record = ORACLE[name]
    links = sorted(
        [
            _node(l.sender),
            _node(l.receiver),
            l.bandwidth,
            l.unit_energy_cost,
            l.bidirectional,
            sorted([list(e) for e in l.edges]),
        ]
        for l in accelerator.links
    )
    assert links == sorted([*l[:5], sorted(l[5])] for l in record["links"])
    memories = sorted(
        [c.id, m.name, m.capacity, list(m.operands), m.memory_group]
        for c in accelerator.cores
        for m in c.top_memories
    )
    assert memories == record["memories"]
    assert list(accelerator.graph.nodes) == record["nodes"]
    assert accelerator.offchip_core_id == record["offchip_core_id"]
    routes = {f"{s}-{t}": list(path) for (s, t), path in accelerator.paths.items() if s != t}
    assert routes == record["routes"]


# ---- mesh shorthand, per-link override, bus ---------------------------------------------------

HARDWARE = REPO / "inputs" / "stream" / "hardware"


def _write(
    folder: Path, top: dict, cores: tuple[str, ...] = ("tpu_like", "pooling", "simd", "offchip")
) -> Path:
    """A top file in `folder` whose core files (copied from the shipped examples) sit in cores/."""
    (folder / "cores").mkdir(exist_ok=True)
    for name in cores:
        (folder / "cores" / f"{name}.yaml").write_text(
            (HARDWARE / "cores" / f"{name}.yaml").read_text()
        )
    path = folder / "top.yaml"
    path.write_text(yaml.safe_dump(top, sort_keys=False))
    return path


def test_mesh_links_in_the_seed_era_order():
    accelerator = load_multicore_accelerator(HARDWARE / "tpu_like_mesh_2x2.yaml")
    edges = [(s, r) for s, r, _ in accelerator.graph_edges]
    mesh = [(0, 2), (2, 0), (1, 3), (3, 1), (0, 1), (1, 0), (2, 3), (3, 2)]  # rows, then columns
    pooling = [e for c in range(4) for e in ((c, 4), (4, c))]
    simd = [e for c in range(4) for e in ((c, 5), (5, c))] + [(4, 5), (5, 4)]
    dram = [e for c in range(6) for e in ((c, 6), (6, c))]
    assert edges == mesh + pooling + simd + dram
    assert [c.name for c in accelerator.cores] == ["tpu_like"] * 4 + [
        "pooling",
        "pooling",
        "offchip",
    ]
    assert (
        accelerator.link(1, 5).bandwidth == float("inf")
        and accelerator.link(1, 5).unit_energy_cost == 0
    )
    # the per-link override of the file replaces the free SIMD link 0 <-> 5, in place
    assert (accelerator.link(0, 5).bandwidth, accelerator.link(5, 0).unit_energy_cost) == (64, 0.5)
    assert len(accelerator.links) == 8 + 8 + 10 + 1
    assert accelerator.paths[(0, 3)] == (0, 1, 3) and accelerator.paths[(3, 0)] == (3, 2, 0)


def test_mesh_skips_cores_that_share_memory(tmp_path):
    top = {
        "name": "m",
        "mesh": {"rows": 1, "cols": 3, "core": "tpu_like.yaml"},
        "offchip_core": "offchip.yaml",
        "bandwidth": 8,
        "core_memory_sharing": ["0, 1"],
    }
    accelerator = load_multicore_accelerator(_write(tmp_path, top))
    assert [(s, r) for s, r, _ in accelerator.graph_edges][:2] == [(1, 2), (2, 1)]
    assert [ids for _, ids in accelerator.memory_instances] == [(0, 1), (2,), (3,)]


def test_link_override_and_bus(tmp_path):
    top = {
        "name": "b",
        "cores": {i: "tpu_like.yaml" for i in range(4)},
        "offchip_core": "offchip.yaml",
        "bandwidth": 32,
        "unit_energy_cost": 1.5,
        "core_connectivity": [
            {"type": "bus", "cores": [0, 1, 2], "bandwidth": 96},
            "2, 3",
            {"cores": [3, 2], "unit_energy_cost": 4},
        ],
    }
    accelerator = load_multicore_accelerator(_write(tmp_path, top))
    bus = accelerator.link(0, 2)
    assert (bus.sender, bus.receiver, bus.bandwidth, bus.unit_energy_cost) == (ANY, ANY, 96, 1.5)
    assert bus.bidirectional
    assert sorted(bus.edges) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    assert accelerator.link(1, 0) is bus
    assert (accelerator.link(2, 3).bandwidth, accelerator.link(2, 3).unit_energy_cost) == (32, 4)
    assert [(s, r) for s, r, _ in accelerator.graph_edges][6:8] == [(2, 3), (3, 2)]
    assert len(accelerator.links) == 1 + 2 + 1
    assert accelerator.paths[(0, 3)] == (0, 2, 3)


def test_core_files_next_to_the_top_file_win_over_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    top = {"name": "x", "cores": {0: "tpu_like.yaml"}, "bandwidth": 1, "core_connectivity": []}
    path = _write(tmp_path / "mine", top)
    elsewhere = tmp_path / "cwd" / "stream" / "inputs" / "hardware"
    elsewhere.mkdir(parents=True)
    (elsewhere / "tpu_like.yaml").write_text((HARDWARE / "cores" / "pooling.yaml").read_text())
    monkeypatch.chdir(tmp_path / "cwd")
    assert load_multicore_accelerator(path).core(0).name == "tpu_like"
    (path.parent / "cores" / "tpu_like.yaml").unlink()
    assert (
        load_multicore_accelerator(path).core(0).name == "pooling"
    )  # Stream's own rule as fallback


def test_require_dataflows(tmp_path):
    core = yaml.safe_load((HARDWARE / "cores" / "tpu_like.yaml").read_text())
    del core["dataflows"]
    (tmp_path / "cores").mkdir()
    (tmp_path / "cores" / "plain.yaml").write_text(yaml.safe_dump(core))
    path = _write(
        tmp_path,
        {
            "name": "x",
            "cores": {0: "tpu_like.yaml", 1: "plain.yaml"},
            "bandwidth": 1,
            "core_connectivity": ["0, 1"],
        },
    )
    accelerator = load_multicore_accelerator(path)
    accelerator.require_dataflows([0], "mapping.yaml", "default.core_allocation")
    with pytest.raises(InputError) as error:
        accelerator.require_dataflows([0, 1], "mapping.yaml", "default.core_allocation")
    message = str(error.value)
    assert (
        message.startswith("mapping.yaml: default.core_allocation: core 1")
        and "dataflows" in message
    )


# ---- bad inputs: one line naming the file, the field and the fix -------------------------------


def _quad(**changes) -> dict:
    top = {
        "name": "quad",
        "cores": {0: "tpu_like.yaml", 1: "tpu_like.yaml", 2: "pooling.yaml", 3: "simd.yaml"},
        "offchip_core": "offchip.yaml",
        "core_connectivity": ["0, 1", "1, 2", "0, 3"],
        "bandwidth": 32,
        "unit_energy_cost": 0,
    }
    for key, value in changes.items():
        if value is None:
            top.pop(key)
        else:
            top[key] = value
    return top


def _core_with(**changes) -> dict:
    core = yaml.safe_load((HARDWARE / "cores" / "tpu_like.yaml").read_text())
    for path, value in changes.items():
        *keys, last = path.split("__")
        node = core
        for key in keys:
            node = node[key]
        node[last] = value
    return core


def _dram_without_outputs() -> dict:
    core = yaml.safe_load((HARDWARE / "cores" / "offchip.yaml").read_text())
    core["memories"]["dram"]["operands"] = ["I1", "I2"]
    core["memories"]["dram"]["ports"] = core["memories"]["dram"]["ports"][:2]
    return core


MESH = {"rows": 2, "cols": 2, "core": "tpu_like.yaml"}

# case: (top-file changes, a core file to write as cores/bad.yaml or None, the file named, field, words)
BAD = {
    "core id is text": (
        dict(cores={"a": "tpu_like.yaml"}),
        None,
        "top",
        "cores.a",
        "not a whole number",
    ),
    "core id negative": (
        dict(cores={-1: "tpu_like.yaml", 0: "tpu_like.yaml"}),
        None,
        "top",
        "cores.-1",
        ">= 0",
    ),
    "core ids with a gap": (
        dict(cores={0: "tpu_like.yaml", 2: "tpu_like.yaml"}, core_connectivity=[]),
        None,
        "top",
        "cores",
        "without gaps",
    ),
    "cores empty": (dict(cores={}), None, "top", "cores", "non-empty"),
    "cores missing": (dict(cores=None), None, "top", "cores", "missing"),
    "core file missing": (
        dict(cores={0: "nowhere.yaml", 1: "tpu_like.yaml"}, core_connectivity=[]),
        None,
        "top",
        "cores.0",
        "not found",
    ),
    "core file not text": (
        dict(cores={0: 7}, core_connectivity=[]),
        None,
        "top",
        "cores.0",
        "must be text",
    ),
    "offchip file missing": (
        dict(offchip_core="dram.yaml"),
        None,
        "top",
        "offchip_core",
        "not found",
    ),
    "unknown top field": (dict(bandwith=32), None, "top", "bandwith", "did you mean 'bandwidth'"),
    "name missing": (dict(name=None), None, "top", "name", "missing"),
    "bandwidth missing": (dict(bandwidth=None), None, "top", "bandwidth", "missing"),
    "bandwidth zero": (dict(bandwidth=0), None, "top", "bandwidth", "positive"),
    "bandwidth text": (dict(bandwidth="fast"), None, "top", "bandwidth", "must be a number"),
    "energy negative": (dict(unit_energy_cost=-1), None, "top", "unit_energy_cost", "zero or more"),
    "connectivity missing": (
        dict(core_connectivity=None),
        None,
        "top",
        "core_connectivity",
        "missing",
    ),
    "connectivity not a list": (
        dict(core_connectivity="0, 1"),
        None,
        "top",
        "core_connectivity",
        "must be a list",
    ),
    "link to a missing core": (
        dict(core_connectivity=["0, 7"]),
        None,
        "top",
        "core_connectivity[0]",
        "core 7 does not exist",
    ),
    "link to the off-chip core": (
        dict(core_connectivity=["0, 4"]),
        None,
        "top",
        "core_connectivity[0]",
        "off-chip core",
    ),
    "link with one core": (
        dict(core_connectivity=["0, 1", "2"]),
        None,
        "top",
        "core_connectivity[1]",
        "not a list of core ids",
    ),
    "link with three cores": (
        dict(core_connectivity=["0, 1, 2"]),
        None,
        "top",
        "core_connectivity[0]",
        "type: bus",
    ),
    "link written oddly": (
        dict(core_connectivity=["0 - 1"]),
        None,
        "top",
        "core_connectivity[0]",
        "'0, 1'",
    ),
    "link to itself": (
        dict(core_connectivity=["1, 1"]),
        None,
        "top",
        "core_connectivity[0]",
        "twice",
    ),
    "link entry unknown key": (
        dict(core_connectivity=[{"cores": [0, 1], "bw": 3}]),
        None,
        "top",
        "core_connectivity[0].bw",
        "unknown field",
    ),
    "link entry bad type": (
        dict(core_connectivity=[{"type": "ring", "cores": [0, 1]}]),
        None,
        "top",
        "core_connectivity[0].type",
        "link, bus",
    ),
    "link entry without cores": (
        dict(core_connectivity=[{"bandwidth": 3}]),
        None,
        "top",
        "core_connectivity[0].cores",
        "missing",
    ),
    "link entry bad bandwidth": (
        dict(core_connectivity=[{"cores": [0, 1], "bandwidth": -4}]),
        None,
        "top",
        "core_connectivity[0].bandwidth",
        "positive",
    ),
    "link entry core id text": (
        dict(core_connectivity=[{"cores": [0, "one"]}]),
        None,
        "top",
        "core_connectivity[0].cores[1]",
        "whole number",
    ),
    "bus of one core": (
        dict(core_connectivity=[{"type": "bus", "cores": [2]}]),
        None,
        "top",
        "core_connectivity[0].cores",
        "at least two",
    ),
    "sharing unknown core": (
        dict(core_memory_sharing=["0, 9"]),
        None,
        "top",
        "core_memory_sharing[0]",
        "core 9 does not exist",
    ),
    "sharing cores linked": (
        dict(core_memory_sharing=["0, 1"]),
        None,
        "top",
        "core_connectivity[0]",
        "share memory",
    ),
    "sharing cores differ": (
        dict(core_memory_sharing=["1, 2"], core_connectivity=[]),
        None,
        "top",
        "core_memory_sharing[0]",
        "identical",
    ),
    "sharing group twice": (
        dict(core_memory_sharing=["0, 1", "1, 3"], core_connectivity=[]),
        None,
        "top",
        "core_memory_sharing[1]",
        "merge",
    ),
    "sharing not a list": (
        dict(core_memory_sharing="0, 1"),
        None,
        "top",
        "core_memory_sharing",
        "must be a list",
    ),
    "mesh with cores": (dict(mesh=MESH), None, "top", "mesh", "either cores"),
    "mesh zero rows": (
        dict(cores=None, mesh=dict(MESH, rows=0)),
        None,
        "top",
        "mesh.rows",
        "positive",
    ),
    "mesh without core": (
        dict(cores=None, mesh={"rows": 2, "cols": 2}),
        None,
        "top",
        "mesh.core",
        "missing",
    ),
    "mesh unknown key": (
        dict(cores=None, mesh=dict(MESH, pool="pooling.yaml")),
        None,
        "top",
        "mesh.pool",
        "unknown field",
    ),
    "mesh override to a missing core": (
        dict(cores=None, mesh=MESH, core_connectivity=["0, 4"]),
        None,
        "top",
        "core_connectivity[0]",
        "does not exist",
    ),
    "bad core file field": (
        dict(),
        _core_with(memories__sram_2MB__r_bw=0),
        "core",
        "memories.sram_2MB.r_bw",
        "positive",
    ),
    "core dataflow on a missing dimension": (
        dict(),
        _core_with(dataflows={"D1": ["K, 32"], "D3": ["C, 2"]}),
        "core",
        "dataflows.D3",
        "no dimension D3",
    ),
    "core dataflow badly written": (
        dict(),
        _core_with(dataflows={"D1": ["K,32"]}),
        "core",
        "dataflows.D1[0]",
        "expected form",
    ),
    "off-chip core without O": (
        dict(offchip_core="bad.yaml"),
        _dram_without_outputs(),
        "core",
        "memories",
        "no memory holding O",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_multicore_input_gives_one_line_error(case, tmp_path):
    changes, core, blamed, where, words = BAD[case]
    top = _quad(**changes)
    if core is not None:
        (tmp_path / "cores").mkdir()
        (tmp_path / "cores" / "bad.yaml").write_text(yaml.safe_dump(core))
        if "offchip_core" not in changes:
            top["cores"][1] = "bad.yaml"
    path = _write(tmp_path, top)
    with pytest.raises(InputError) as error:
        load_multicore_accelerator(path, cwd=tmp_path)
    message = str(error.value)
    file = str(path) if blamed == "top" else str(tmp_path / "cores" / "bad.yaml")
    assert "\n" not in message
    assert message.startswith(f"{file}: {where}: "), message
    assert words in message, message
    if blamed == "core":
        assert f"in {path}" in message  # says which accelerator file uses the core


def test_empty_and_malformed_files(tmp_path):
    for text, words in (
        ("", "empty"),
        ("- 1\n- 2\n", "must contain a mapping"),
        ("name: [", "malformed YAML"),
    ):
        path = tmp_path / "top.yaml"
        path.write_text(text)
        with pytest.raises(InputError) as error:
            load_multicore_accelerator(path)
        assert str(error.value).startswith(str(path)) and words in str(error.value)


def test_document_round_trips_through_json():
    from zigzag.multicore.topology import build_multicore

    for name in ("tpu_like_mesh_2x2.yaml", "fusemax.yaml"):
        accelerator = load_multicore_accelerator(HARDWARE / name)
        again = build_multicore(json.loads(json.dumps(accelerator.document)))
        assert again.to_dict() == accelerator.to_dict()


def test_a_core_outside_the_graph_has_no_route(tmp_path):
    path = _write(
        tmp_path,
        {
            "name": "x",
            "cores": {0: "tpu_like.yaml", 1: "tpu_like.yaml", 2: "tpu_like.yaml"},
            "bandwidth": 1,
            "core_connectivity": ["0, 1"],
        },
    )
    accelerator = load_multicore_accelerator(path)
    assert list(accelerator.graph.nodes) == [
        0,
        1,
    ]  # core 2 has no link and no off-chip core joins it
    with pytest.raises(LookupError):
        accelerator.route(0, 2)


# ---- Stream's mid-2024 `graph:` format ---------------------------------------------------------

MID = DATA / "stream_mid2024"


def _edges(accelerator) -> list:
    return [
        (s, r, _node(link.sender), _node(link.receiver), link.bandwidth, link.bidirectional)
        for s, r, link in accelerator.graph_edges
    ]


def test_mid_2024_format_builds_like_its_rewrite():
    old = load_multicore_accelerator(MID / "dual_testing_core_offchip.yaml", cwd=STREAM)
    assert _edges(old) == _edges(load_multicore_accelerator(DUAL, cwd=STREAM))
    assert [c.name for c in old.cores] == ["testing_core1", "testing_core2", "offchip"]


def test_mid_2024_mesh_with_offchip():
    accelerator = load_multicore_accelerator(MID / "quad_testing_core_offchip.yaml", cwd=STREAM)
    edges = [(s, r) for s, r, _ in accelerator.graph_edges]
    assert edges[:8] == [(0, 2), (2, 0), (1, 3), (3, 1), (0, 1), (1, 0), (2, 3), (3, 2)]
    assert edges[8:] == [e for c in range(4) for e in ((c, 4), (4, c))]
    assert accelerator.offchip_core_id == 4 and len(accelerator.links) == 9


def test_mid_2024_bus_with_pooling_and_simd(tmp_path):
    top = {
        "name": "bus",
        "cores": ["tpu_like.yaml", "tpu_like.yaml", "pooling.yaml", "simd.yaml", "offchip.yaml"],
        "graph": {
            "type": "bus",
            "bandwidth": 16,
            "pooling_core_id": 2,
            "simd_core_id": 3,
            "offchip_core_id": 4,
        },
    }
    accelerator = load_multicore_accelerator(_write(tmp_path, top))
    bus = accelerator.link(0, 1)
    assert (
        bus.sender == ANY
        and bus.bidirectional
        and accelerator.link(3, 0) is bus
        and accelerator.link(2, 3) is bus
    )
    assert accelerator.link(0, 2) is not bus and accelerator.link(0, 2).bandwidth == 16
    assert sorted(bus.edges) == [(0, 1), (0, 3), (1, 0), (1, 3), (2, 3), (3, 0), (3, 1), (3, 2)]


@pytest.mark.parametrize(
    ("graph", "where", "words"),
    [
        ({"type": "ring", "bandwidth": 1}, "graph.type", "2d_mesh, bus"),
        ({"type": "2d_mesh", "bandwidth": 1, "nb_rows": 1}, "graph.nb_cols", "missing"),
        (
            {"type": "2d_mesh", "bandwidth": 1, "nb_rows": 2, "nb_cols": 2, "offchip_core_id": 1},
            "graph",
            "equal",
        ),
        (
            {"type": "bus", "bandwidth": 1, "offchip_core_id": 0},
            "graph.offchip_core_id",
            "last entry",
        ),
        (
            {"type": "bus", "bandwidth": 1, "simd_core_id": 5},
            "graph.simd_core_id",
            "not a position",
        ),
        (
            {"type": "bus", "bandwidth": 1, "simd_core_id": 1, "pooling_core_id": 1},
            "graph.simd_core_id",
            "role",
        ),
    ],
)
def test_bad_mid_2024_files(graph, where, words, tmp_path):
    path = _write(
        tmp_path, {"name": "x", "cores": ["tpu_like.yaml", "offchip.yaml"], "graph": graph}
    )
    with pytest.raises(InputError) as error:
        load_multicore_accelerator(path)
    assert str(error.value).startswith(f"{path}: {where}: ") and words in str(error.value), str(
        error.value
    )
