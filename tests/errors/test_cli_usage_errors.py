"""Command-line usage errors are one line with the nearest valid choice or flag, not the usage text."""

from __future__ import annotations

import pytest

from zigzag.cli import main


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["run", "--opt", "enrgy"],
            "zigzag run: error: argument --opt: invalid choice: 'enrgy' (choose from 'energy', "
            "'latency', 'EDP') (did you mean 'energy'?); see 'zigzag run --help'",
        ),
        (
            ["rn"],
            "zigzag: error: argument command: invalid choice: 'rn' (choose from 'run', "
            "'export-workload', 'sweep', 'report', 'step', 'multicore', 'stream', 'cache') "
            "(did you mean 'run'?); see 'zigzag --help'",
        ),
        (
            ["stream", "run", "--mode", "fusd"],  # the alias names the command it stands for
            "zigzag multicore run: error: argument --mode: invalid choice: 'fusd' (choose from "
            "'lbl', 'fused') (did you mean 'fused'?); see 'zigzag multicore run --help'",
        ),
    ],
)
def test_an_invalid_choice_is_one_line_with_the_nearest(argv, line, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err == line + "\n"


def test_an_unknown_flag_suggests_the_nearest_flag(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--workload", "w", "--accelerator", "a", "--mapping", "m", "--lpf-limt", "6"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "unrecognized arguments: --lpf-limt 6 (did you mean '--lpf-limit'?)" in err
