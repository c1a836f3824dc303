"""The same options on every command: ``--quiet`` and ``--output`` everywhere, ``--seed`` where
the work is random, ``--workers`` where it runs in parallel, each with the same name and meaning;
the command-line reference (docs/cli.md) is generated from these parsers."""

from __future__ import annotations

import argparse

from support import REPO
from zigzag.cli import build_parser, main
from zigzag.command_options import QUIET_HELP

#: commands whose work draws random numbers / can run in several processes
RANDOM = {"run", "sweep", "multicore search", "stream search"}
PARALLEL = {"sweep", "multicore search", "stream search"}


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every user command (the workflow's ``step`` commands aside), by its name."""
    found = {}

    def visit(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if name != "step":
                        visit(sub, f"{prefix} {name}".strip())
                return
        found[prefix] = parser

    visit(build_parser(), "")
    return found


def flags(parser) -> dict[str, argparse.Action]:
    return {flag: action for action in parser._actions for flag in action.option_strings}


def test_every_command_takes_the_common_options():
    found = commands()
    assert {
        "run",
        "export-workload",
        "sweep",
        "multicore nodes",
        "multicore run",
        "multicore search",
        "multicore plot",
    } <= set(found)
    for name, parser in found.items():
        given = flags(parser)
        assert "--quiet" in given and given["--quiet"].help == QUIET_HELP, name
        # the report is written into the results folder it reads (one page per folder), not elsewhere
        assert ("--output" in given) == (name not in ("report", "cache prune")), name
        assert ("--seed" in given) == (name in RANDOM), name
        assert ("--workers" in given) == (name in PARALLEL), name


def test_seed_means_the_commands_random_search():
    parser = build_parser()
    assert parser.parse_args(["sweep", "--seed", "3"]).search_seed == 3
    assert parser.parse_args(["sweep", "--search-seed", "3"]).search_seed == 3
    run = ["run", "--workload", "w", "--accelerator", "a", "--mapping", "m"]
    assert parser.parse_args([*run, "--seed", "5"]).salsa_seed == 5
    assert parser.parse_args([*run, "--salsa-seed", "5"]).salsa_seed == 5


def test_quiet_sweep_prints_only_the_summary(tmp_path, capsys):
    def sweep(size: str) -> int:
        return main(
            [
                "sweep",
                "--base",
                str(REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"),
                "--vary",
                f"memories.unified_buffer.size=[{size}]",
                "--workload",
                str(REPO / "tests" / "data" / "workflow" / "small_convs.yaml"),
                "--mapping",
                str(REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"),
                "--output",
                str(tmp_path / "out"),
                "--quiet",
            ]
        )

    assert sweep("8") == 1  # a buffer of 8 bits: valid, but no mapping fits
    out, err = capsys.readouterr()
    assert out.strip().splitlines() == [
        f"1 rows (1 infeasible); tables and figures written to {tmp_path / 'out'}"
    ]
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(
            "error: sweep: no variant is ok (1 infeasible of 1 rows); e.g. flow_tpu_32x32-size8 on "
            "small_convs: no loop ordering of layer conv_a fits"
        )
    )
    # a value the accelerator file cannot take is refused before any variant runs
    assert sweep("-8") == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().splitlines() == [
        "error: zigzag sweep: vary.memories.unified_buffer.size: the value -8 cannot be used: must "
        "be positive, got -8; give capacity in bits, a whole number"
    ]


def test_the_cli_reference_is_generated_from_the_parsers():
    page = (REPO / "docs" / "cli.md").read_text()
    assert ":module: zigzag.cli" in page and ":func: build_parser" in page
    assert "--quiet" in page and "--seed" in page and "--workers" in page
