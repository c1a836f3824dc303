"""One option table (zigzag/mapping_search/options.py) behind the command line, the config schema and the API."""

from __future__ import annotations

import dataclasses
import re

import pytest

from support import REPO, reference_input
from zigzag import api
from zigzag.cli import build_parser
from zigzag.command_options import options_from_args
from zigzag.errors import InputError
from zigzag.mapping_search.options import (
    OPTION_BY_NAME,
    OPTIONS,
    SearchOptions,
    resolve_options,
)
from zigzag.steps.experiments import resolve_experiment


# A value other than the default for every option of the table.
OTHER_VALUE = {
    "opt": "EDP",
    "lpf_limit": 3,
    "nb_spatial_mappings_generated": 2,
    "temporal_mapping_search_engine": "salsa",
    "temporal_mapping_type": "even",
    "exploit_data_locality": True,
    "enable_mix_spatial_mapping": True,
    "access_same_data_considered_as_no_access": False,
    "salsa_iteration_number": 20,
    "salsa_start_temperature": 0.5,
    "salsa_opt_criterion": "latency",
    "salsa_seed": 7,
    "evaluate_all_operators": True,
    "operators": "all",
    "causal_blocks": 4,
    "latency_model": "bandwidth_bound",
}


def test_every_option_has_a_test_value():
    assert set(OTHER_VALUE) == set(OPTION_BY_NAME)
    for name, value in OTHER_VALUE.items():
        assert value != OPTION_BY_NAME[name].default, name


def test_search_options_are_the_search_rows_of_the_table():
    search_rows = [o for o in OPTIONS if o.scope == "search"]
    assert [f.name for f in dataclasses.fields(SearchOptions)] == [o.name for o in search_rows]
    assert SearchOptions().to_dict() == {o.name: o.default for o in search_rows}


def test_config_options_are_made_from_the_table():
    """The config's option fields (zigzag/config/options.py) are the table's rows: same names,
    defaults, choices and bounds, in the generated JSON schema too."""
    from zigzag.config.options import Options
    from zigzag.config.schema import config_schema

    assert list(Options.model_fields) == [o.name for o in OPTIONS]
    properties = config_schema()["$defs"]["Options"]["properties"]
    for option in OPTIONS:
        field = properties[option.name]
        assert field["default"] == option.default, option.name
        assert field.get("enum", []) == list(option.choices), option.name
        assert field.get("minimum") == option.minimum, option.name
        assert field.get("exclusiveMinimum") == option.above, option.name
        assert field["description"] == option.help, option.name
        assert Options.model_validate({option.name: OTHER_VALUE[option.name]}).given() == {
            option.name: OTHER_VALUE[option.name]
        }


def test_config_reference_lists_every_option():
    page = (REPO / "docs" / "reference" / "workflow-config.md").read_text()
    assert set(re.findall(r"^\| `defaults\.(\w+)` \|", page, re.M)) == set(OPTION_BY_NAME)


def test_command_line_has_a_flag_for_every_option():
    help_text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    for option in OPTIONS:
        assert "--" + option.name.replace("_", "-") in help_text, option.name


@pytest.mark.parametrize("name", list(OPTION_BY_NAME))
def test_command_line_sets_each_option(name):
    value = OTHER_VALUE[name]
    flag = "--" + name.replace("_", "-")
    given = (
        ([flag] if value is True else [f"--no-{flag[2:]}"])
        if isinstance(value, bool)
        else [flag, str(value)]
    )
    args = build_parser().parse_args(
        ["run", "--workload", "w", "--accelerator", "a", "--mapping", "m", *given]
    )
    search, workload = options_from_args(args)
    assert {**search.to_dict(), **workload}[name] == value


def test_command_line_defaults_are_the_table_defaults():
    args = build_parser().parse_args(
        ["run", "--workload", "w", "--accelerator", "a", "--mapping", "m"]
    )
    search, workload = options_from_args(args)
    assert {**search.to_dict(), **workload} == {o.name: o.default for o in OPTIONS}


@pytest.mark.parametrize("name", list(OPTION_BY_NAME))
def test_config_sets_each_option(name):
    spec = {
        "name": "x",
        "workload": "w.yaml",
        "accelerator": "a.yaml",
        "mapping": "m.yaml",
        name: OTHER_VALUE[name],
    }
    experiment = resolve_experiment(spec, {}, "experiments[0]")
    assert {**experiment["options"], **experiment}[name] == OTHER_VALUE[name]


@pytest.mark.parametrize("name", list(OPTION_BY_NAME))
def test_api_passes_each_option_on(name, monkeypatch, tmp_path):
    seen = {}

    def fake_run(workload, accelerator, mapping, options, **kwargs):
        seen.update(options.to_dict(), **{k: v for k, v in kwargs.items() if k in OPTION_BY_NAME})
        raise StopIteration

    monkeypatch.setattr(api, "run", fake_run)
    with pytest.raises(StopIteration):
        api.get_hardware_performance_zigzag(
            "w.yaml", "a.yaml", "m.yaml", dump_folder=tmp_path, **{name: OTHER_VALUE[name]}
        )
    assert seen[name] == OTHER_VALUE[name]


def test_mixing_implies_data_locality_unless_set_everywhere(monkeypatch):
    assert resolve_options({"enable_mix_spatial_mapping": True})[0].exploit_data_locality
    assert not resolve_options(
        {"enable_mix_spatial_mapping": True, "exploit_data_locality": False}
    )[0].exploit_data_locality
    args = build_parser().parse_args(
        [
            "run",
            "--workload",
            "w",
            "--accelerator",
            "a",
            "--mapping",
            "m",
            "--enable-mix-spatial-mapping",
        ]
    )
    assert options_from_args(args)[0].exploit_data_locality


# Bad option values: one line naming the option (counted among the bad inputs, see test_bad_inputs.py).
BAD_OPTIONS = [
    ({"opt": "speed"}, "opt: 'speed' is not one of energy, latency, EDP"),
    ({"lpf_limit": 0}, "lpf_limit: must be at least 1, got 0"),
    ({"lpf_limit": 2.5}, "lpf_limit: 2.5 is not a whole number; give e.g. lpf_limit: 6"),
    ({"lpf_limit": "6"}, "lpf_limit: '6' is not a whole number"),
    ({"nb_spatial_mappings_generated": 0}, "nb_spatial_mappings_generated: must be at least 1"),
    (
        {"temporal_mapping_search_engine": "genetic"},
        "temporal_mapping_search_engine: 'genetic' is not one of loma, salsa",
    ),
    ({"temporal_mapping_type": "odd"}, "temporal_mapping_type: 'odd' is not one of uneven, even"),
    ({"exploit_data_locality": "yes"}, "exploit_data_locality: 'yes' is not true or false"),
    ({"salsa_start_temperature": 0}, "salsa_start_temperature: must be greater than 0"),
    (
        {"salsa_start_temperature": float("inf")},
        "salsa_start_temperature: must be a finite number, got inf",
    ),
    ({"salsa_opt_criterion": "EDP"}, "salsa_opt_criterion: 'EDP' is not one of energy, latency"),
    ({"salsa_iteration_number": True}, "salsa_iteration_number: True is not a whole number"),
    ({"lpf_limt": 3}, "lpf_limt: unknown option; known options: opt, lpf_limit"),
]


@pytest.mark.parametrize(
    "given, message",
    BAD_OPTIONS,
    ids=[next(iter(g)) + "=" + repr(next(iter(g.values()))) for g, _ in BAD_OPTIONS],
)
def test_bad_option_value_is_one_line_error_in_api(given, message, tmp_path):
    with pytest.raises(InputError) as info:
        api.get_hardware_performance_zigzag(
            reference_input("workload", "gemm_layer.yaml"),
            reference_input("hardware", "gemm_l1.yaml"),
            reference_input("mapping", "gemm_l1.yaml"),
            dump_folder=tmp_path,
            **given,
        )
    assert message in str(info.value) and "\n" not in str(info.value)


def test_latency_model_choices_are_the_cost_models():
    from zigzag.cost.model import LATENCY_MODELS

    # auto chooses one of the cost model's latency models per workload (issue 45)
    assert OPTION_BY_NAME["latency_model"].choices == ("auto", *LATENCY_MODELS)
    assert OPTION_BY_NAME["latency_model"].default == "auto" and LATENCY_MODELS[0] == "zigzag"
