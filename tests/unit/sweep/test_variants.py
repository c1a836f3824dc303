"""The variant engine (zigzag.variants): paths, safe expressions, expansion, dedupe, fragments,
mappings that follow the array, and the one-line errors of a bad sweep."""

from __future__ import annotations

import pytest
import yaml

from support import REPO
from zigzag.errors import InputError
from zigzag.variants import expand, follow_hardware, read_spec
from zigzag.variants import documents, expressions

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
PARAMS = {
    "D1": "operational_array.sizes[0]",
    "D2": "operational_array.sizes[1]",
    "ub": "memories.unified_buffer.size",
}


def spec(**section):
    from zigzag.sweep.config import accelerator_identity

    return read_spec({"base": str(BASE), **section}, "test", normalise=accelerator_identity)


def test_paths_read_write_add_remove():
    document = {"memories": {"a": {"size": 1, "ports": [{"bw": 8}]}, "b": {"size": 2}}}
    assert documents.get(document, "memories.a.ports[0].bw") == 8
    documents.set_value(document, "memories.a.ports[0].bw", 16)
    assert document["memories"]["a"]["ports"][0]["bw"] == 16
    documents.add(document, "memories.rf", {"size": 3}, before="b")
    assert list(document["memories"]) == ["a", "rf", "b"]
    documents.remove(document, "memories.a")
    assert list(document["memories"]) == ["rf", "b"]
    with pytest.raises(documents.PathError, match=r"did you mean 'memories.rf'"):
        documents.get(document, "memories.rff.size")
    with pytest.raises(documents.PathError, match=r"has 1 entries, so \[3\] does not exist"):
        documents.get({"x": [1]}, "x[3]")


@pytest.mark.parametrize(
    "text, value",
    [
        ("32KiB", 32 * 1024 * 8),
        ("1MiB", 8 * 1024 * 1024),
        ("512b", 512),
        ("2kB", 16000),
        ("D1 * D2 * 8", 32 * 16 * 8),
        ("max(D1, 64) // 2", 32),
        ("log2(D1)", 5),
        ("ceil(D2 / 3)", 6),
        ("2 ** 10", 1024),
        ("operational_array.sizes[0] + 1", 33),
        ("-D2 % 5", 4),
    ],
)
def test_expressions_evaluate(text, value):
    names = {"D1": 32, "D2": 16, "operational_array.sizes[0]": 32}
    assert expressions.evaluate(text, names.__getitem__) == value


@pytest.mark.parametrize(
    "text, message",
    [
        ("D1 / (D2 - 16)", "divides by zero"),
        ("D1 *", "does not parse"),
        ("__import__('os')", "calls something that is not one of"),
        ("D1.__class__", "may not start with '__'"),
        ("[D1]", "uses List"),
        ("'a' + 'b'", "only numbers"),
        ("D1 if D2 else 3", "uses IfExp"),
    ],
)
def test_expressions_refuse(text, message):
    names = {"D1": 32, "D2": 16}
    with pytest.raises(expressions.ExpressionError, match=message):
        expressions.evaluate(text, names.__getitem__)


def test_vary_and_zip_make_every_combination_with_readable_names():
    variants = expand(
        spec(params=PARAMS, vary={"ub": ["1MiB", "2MiB"]}, zip=[{"D1": [16, 8], "D2": [8, 16]}])
    )
    assert [v.name for v in variants] == [
        "flow_tpu_32x32-ub1MiB-D1_16-D2_8",
        "flow_tpu_32x32-ub1MiB-D1_8-D2_16",
        "flow_tpu_32x32-ub2MiB-D1_16-D2_8",
        "flow_tpu_32x32-ub2MiB-D1_8-D2_16",
    ]
    first = variants[0].document
    assert first["memories"]["unified_buffer"]["size"] == 8 * 1024 * 1024
    assert first["operational_array"]["sizes"] == [16, 8]
    assert len({v.id for v in variants}) == 4


def test_derived_fields_follow_the_varied_ones():
    variants = expand(
        spec(
            params=PARAMS,
            vary={"D1": [8, 16]},
            derive={
                "memories.accumulators.ports[0].bandwidth_max": "D1 * D2",
                "memories.unified_buffer.r_cost": "memories.unified_buffer.size / 8 / 1KiB",
            },
        )
    )
    ports = [v.document["memories"]["accumulators"]["ports"][0]["bandwidth_max"] for v in variants]
    assert ports == [8 * 32, 16 * 32]
    assert variants[0].document["memories"]["unified_buffer"]["r_cost"] == 3 * 1024 / 8


def test_identical_variants_are_one():
    variants = expand(spec(params=PARAMS, vary={"ub": ["1MiB", "8Mib", "1024KiB", "2MiB"]}))
    assert [v.name for v in variants] == ["flow_tpu_32x32-ub1MiB", "flow_tpu_32x32-ub2MiB"]
    assert variants[0].aliases == ("flow_tpu_32x32-ub8Mib", "flow_tpu_32x32-ub1024KiB")


def test_identity_is_taken_after_normalising():
    """Two documents that normalise alike (a default written out or left out) are one variant."""
    from zigzag.sweep.config import accelerator_identity

    written_out = {"add": [{"path": "memories.dram.mem_type", "value": "sram"}]}
    sweep = spec(fragments={"dram_type": {"left_out": {}, "written_out": written_out}})
    variants = expand(sweep, normalise=accelerator_identity)
    assert [v.name for v in variants] == ["flow_tpu_32x32-left_out"]
    assert variants[0].aliases == ("flow_tpu_32x32-written_out",)
    assert len(expand(sweep)) == 2  # without normalising, the documents differ


def test_fields_left_to_their_default_can_be_varied():
    variants = expand(spec(vary={"memories.dram.mem_type": ["sram", "dram"]}))
    assert [v.document["memories"]["dram"]["mem_type"] for v in variants] == ["sram", "dram"]
    with pytest.raises(InputError, match=r"did you mean 'memories.dram.mem_type'"):
        spec(vary={"memories.dram.mem_typ": ["dram"]})


def test_fragments_add_and_remove_memories():
    register_file = {
        "size": 512,
        "r_cost": 0.5,
        "w_cost": 0.5,
        "area": 100,
        "latency": 1,
        "operands": ["I1"],
        "ports": [
            {
                "name": "r_port_1",
                "type": "read",
                "bandwidth_min": 8,
                "bandwidth_max": 8,
                "allocation": ["I1, tl"],
            },
            {
                "name": "w_port_1",
                "type": "write",
                "bandwidth_min": 8,
                "bandwidth_max": 8,
                "allocation": ["I1, fh"],
            },
        ],
        "served_dimensions": ["D1"],
    }
    variants = expand(
        spec(
            fragments={
                "rf": {
                    "no_rf": {},
                    "with_rf": {
                        "add": [
                            {"path": "memories.i_rf", "value": register_file, "before": "w_reg"}
                        ]
                    },
                }
            },
            vary={"memories.i_rf.size": [512, 1024]},
        )
    )
    names = [v.name for v in variants]
    assert names == [
        "flow_tpu_32x32-no_rf-size512",
        "flow_tpu_32x32-with_rf-size512",
        "flow_tpu_32x32-with_rf-size1024",
    ]  # without the register file, its size changes nothing
    assert variants[0].aliases == ("flow_tpu_32x32-no_rf-size1024",)
    assert list(variants[2].document["memories"])[0] == "i_rf"
    assert variants[2].document["memories"]["i_rf"]["size"] == 1024
    assert "i_rf" not in variants[0].document["memories"]


def test_invalid_variant_keeps_its_row():
    from zigzag.sweep.config import accelerator_identity

    variants = expand(
        spec(vary={"memories.dram.ports[0].bandwidth_min": [64, 0]}), normalise=accelerator_identity
    )
    assert variants[0].problem is None
    assert variants[1].document is None
    assert "bandwidth_min" in variants[1].problem and "\n" not in variants[1].problem


@pytest.mark.parametrize(
    "section, where, message",
    [
        (
            {"vary": {"memories.unified_bufer.size": [1]}},
            "vary.memories.unified_bufer.size",
            "did you mean 'memories.unified_buffer'",
        ),
        ({"vary": {"memories.dram.size": "1MiB"}}, "vary.memories.dram.size", "is not a list"),
        ({"vary": {"memories.dram.size": []}}, "vary.memories.dram.size", "the list is empty"),
        (
            {"derive": {"memories.dram.r_cost": "1 +"}},
            "derive.memories.dram.r_cost",
            "does not parse",
        ),
        (
            {"zip": [{"memories.dram.size": [1, 2], "memories.dram.latency": [1]}]},
            "zip[0]",
            "same length",
        ),
        ({"params": PARAMS, "vary": {"D1": [1]}, "zip": [{"D1": [2]}]}, "D1", "varied twice"),
        (
            {"fragments": {"rf": {"a": {"remove": ["memories.nope"]}}}},
            "fragments.rf.a",
            "memories has no 'nope'",
        ),
        (
            {"fragments": {"rf": {"a": {"delete": ["memories.dram"]}}}},
            "fragments.rf.a.delete",
            "unknown edit",
        ),
    ],
)
def test_bad_sweeps_are_one_line_errors(section, where, message):
    with pytest.raises(InputError, match=message) as caught:
        spec(**section)
    assert caught.value.where == where
    assert "\n" not in str(caught.value)


def test_division_by_zero_names_the_derived_field():
    with pytest.raises(
        InputError, match=r"derive.memories.dram.r_cost: '1 / \(D1 - 32\)' divides by zero"
    ):
        expand(
            spec(params=PARAMS, vary={"D2": [8]}, derive={"memories.dram.r_cost": "1 / (D1 - 32)"})
        )


def test_mapping_follows_the_array():
    mapping = yaml.safe_load((REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml").read_text())
    mapping[0]["spatial_mapping"] = {"D1": ["K, D1"], "D2": ["C, D2 // 2"]}
    accelerator = {"operational_array": {"dimensions": ["D1", "D2"], "sizes": [16, 64]}}
    resolved = follow_hardware(mapping, accelerator)
    assert resolved[0]["spatial_mapping"] == {"D1": ["K, 16"], "D2": ["C, 32"]}
    assert resolved[1] == mapping[1]  # plain numbers stay
    mapping[0]["spatial_mapping"] = {"D1": ["K, D1 / 3"]}
    with pytest.raises(
        InputError, match=r"spatial_mapping.D1\[0\]: 'D1 / 3' gives 5.33.*not a whole number"
    ):
        follow_hardware(mapping, accelerator)
