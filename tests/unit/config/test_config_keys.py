"""Unknown keys of a workflow config are found from its schema alone (zigzag/config/keys.py)."""

from __future__ import annotations

import pytest

from zigzag.errors import InputError
from zigzag.config.keys import check_unknown_keys, unknown_keys

SCHEMA = {
    "type": "object",
    "$defs": {"knobs": {"type": "object", "properties": {"size": {}, "depth": {}}}},
    "properties": {
        "runs": {
            "type": "array",
            "items": {"allOf": [{"$ref": "#/$defs/knobs"}, {"properties": {"name": {}}}]},
        },
        "hardware_sweeps": {
            "type": "object",
            "properties": {
                "memories": {
                    "type": "object",
                    "additionalProperties": {"type": "object", "properties": {"size": {}}},
                }
            },
        },
    },
}


def test_a_new_section_is_checked_at_every_level_through_references():
    config = {
        "runs": [{"name": "a", "size": 1}, {"name": "b", "dpeth": 2}],
        "hardware_sweeps": {"memories": {"sram": {"szie": 3}, "dram": {"size": 4}}},
    }
    assert [(place, key) for place, key, _ in unknown_keys(config, SCHEMA)] == [
        ("runs[1].dpeth", "dpeth"),
        ("hardware_sweeps.memories.sram.szie", "szie"),
    ]


def test_user_chosen_names_are_not_unknown_keys():
    assert (
        list(unknown_keys({"hardware_sweeps": {"memories": {"any_name": {"size": 1}}}}, SCHEMA))
        == []
    )


def test_the_error_names_the_place_and_the_closest_key():
    with pytest.raises(InputError) as info:
        check_unknown_keys({"runs": [{"name": "a", "dpeth": 2}]}, SCHEMA)
    assert str(info.value) == "config: runs[0].dpeth: unknown key 'dpeth'; did you mean 'depth'?"
