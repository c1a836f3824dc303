"""The workflow config's models (zigzag/config): the shipped JSON schema is generated from them,
a config is read once into them, and they accept what the repository's configs say."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from support import REPO
from zigzag.config import WorkflowConfig, load_config
from zigzag.config.check import SCHEMA_FILE
from zigzag.config.schema import config_schema, schema_text
from zigzag.errors import InputError
from zigzag.multicore.pipeline import search_defaults

CONFIGS = [REPO / "config.yaml", *sorted((REPO / "config").glob("*.yaml"))]


def test_the_shipped_schema_is_the_generated_one():
    assert SCHEMA_FILE.read_text() == schema_text(), "run: python -m zigzag.config.schema"


def test_the_schema_is_a_valid_json_schema_closed_everywhere():
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    closed = [d for d in schema["$defs"].values() if "properties" in d]
    assert closed and all(d["additionalProperties"] is False for d in closed)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_the_repository_configs_pass_the_models_and_the_schema(path):
    config = yaml.safe_load(path.read_text())
    assert isinstance(load_config(config), WorkflowConfig)
    jsonschema.validate(config, config_schema())


def test_a_section_keeps_the_keys_given_in_their_order():
    config = load_config(
        {
            "defaults": {"opt": "energy"},
            "sweeps": [{"mapping": "m.yaml", "workload": ["w.onnx"], "accelerator": ["a.yaml"]}],
        }
    )
    assert config.defaults.given() == {"opt": "energy"}
    assert config.defaults.lpf_limit == 6  # the table's default, not given
    assert list(config.sweeps[0].given()) == ["mapping", "workload", "accelerator"]


MULTICORE = {"name": "m", "accelerator": "a", "workload": "w", "mapping": "m", "mode": "lbl"}


@pytest.mark.parametrize("key", ["multicore_experiments", "stream_experiments"])
def test_multicore_experiments_under_either_name(key):
    config = load_config({key: [{**MULTICORE, "search": {"method": "co"}}]})
    entry = config.multicore_experiments[0]
    assert config.multicore_section == key
    # the allocation search's defaults are the multi-core run description's
    assert entry.search.model_dump() == {**search_defaults(), "method": "co"}
    with pytest.raises(InputError) as info:
        load_config({key: [{**MULTICORE, "mode": "stacked"}]})
    assert str(info.value) == f"config: {key}[0].mode: 'stacked' is not one of lbl, fused"


def test_both_names_of_the_multicore_section_are_refused():
    with pytest.raises(InputError, match="under multicore_experiments only"):
        load_config({"multicore_experiments": [MULTICORE], "stream_experiments": [MULTICORE]})


@pytest.mark.parametrize(
    "config, where, message",
    [
        ({"results": "r"}, "top level", "no experiment defined; add an entry under"),
        (
            {"sweeps": [{"workload": 3, "accelerator": "a", "mapping": "m"}]},
            "sweeps[0].workload",
            "3 is neither a file path nor a non-empty list of file paths",
        ),
        (
            {"stream_experiments": [{**MULTICORE, "clock_ghz": 0}]},
            "stream_experiments[0].clock_ghz",
            "0 is not a clock frequency in GHz; give a number > 0",
        ),
        (
            {"stream_experiments": [{**MULTICORE, "lpf_limit": 2.5}]},
            "stream_experiments[0].lpf_limit",
            "2.5 is not of type integer; give an integer",
        ),
        (
            {"hardware_sweeps": [{"name": "h", "base": "b", "workloads": "w", "batch_size": 0}]},
            "hardware_sweeps[0].batch_size",
            "0 is neither a positive whole number nor 'auto'",
        ),
        (
            {"hardware_sweeps": [{"name": "h", "base": "b", "workloads": "w", "layer_stacks": ""}]},
            "hardware_sweeps[0].layer_stacks",
            "give stacks of layer ids such as '0-10;11-21'",
        ),
        (
            {"experiments": [{"name": "a", "workload": "w", "accelerator": "a", "mapping": None}]},
            "experiments[0].mapping",
            "None is not of type string; give a string",
        ),
    ],
)
def test_a_bad_value_is_one_line_naming_its_place(config, where, message):
    with pytest.raises(InputError) as info:
        load_config(config)
    assert info.value.where == where
    assert message in str(info.value) and "\n" not in str(info.value)


def test_whole_numbers_written_with_a_point_are_kept_as_written():
    """A JSON-schema integer accepts 8.0, as the config check did before the models."""
    config = load_config({"stream_experiments": [{**MULTICORE, "search": {"generations": 8.0}}]})
    assert config.multicore_experiments[0].search.generations == 8.0
