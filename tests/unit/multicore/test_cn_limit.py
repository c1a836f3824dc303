"""The CN count is known before any CN is built: exact, warned about above CN_WARNING, refused
above the limit (``max_cns``, ``--max-cns``), with the seed's mode 2 kept as it cuts."""

from __future__ import annotations

import logging
import re

import pytest

from zigzag.cli import main
from zigzag.errors import InputError
from zigzag.multicore import cn_graph, cn_limit
from zigzag.multicore.inputs import cn_graph_from_files
from zigzag.multicore.stages import (
    AcceleratorParserStage,
    GenerateCNWorkloadHybridStage,
    MainStage,
    Stage,
    StreamONNXModelParserStage,
)
from zigzag.multicore.tiling import SeedTiling
from support import REPO

INPUTS = REPO / "inputs" / "stream"
HARDWARE = str(INPUTS / "hardware" / "dual_testing_core.yaml")
WORKLOAD = str(INPUTS / "workload" / "small_3conv.onnx")
MAPPING = str(INPUTS / "mapping" / "dual_testing_core.yaml")
COUNTED = re.compile(r"the tiling makes (\d+) computation nodes")


class _Built(Exception):
    """Raised instead of building the first CN."""


@pytest.fixture
def no_cn_is_built(monkeypatch):
    """Building a CN raises :class:`_Built` (the tiled layer it was asked for as its argument):
    what is checked must be known from the tiling alone."""

    def refuse(tiled):
        raise _Built(tiled)

    monkeypatch.setattr(cn_graph, "generate_cns", refuse)


@pytest.mark.parametrize(
    "mode, seed",
    [
        ("lbl", None),
        ("fused", None),
        ("fused", SeedTiling(1, [("OY", "all")])),
        ("fused", SeedTiling(1, [("OY", 4), ("K", 2)])),
        ("fused", SeedTiling(2, [("OY", "all"), ("OX", "all"), ("C", "all"), ("FX", "all")])),
    ],
)
def test_the_count_is_the_graph_size(mode, seed, monkeypatch, caplog):
    monkeypatch.setattr(cn_limit, "CN_WARNING", 0)  # every count is said
    with caplog.at_level(logging.WARNING, logger="zigzag.multicore.cn_limit"):
        graph = cn_graph_from_files(HARDWARE, WORKLOAD, MAPPING, mode, seed=seed)
    [said] = [int(m[1]) for r in caplog.records if (m := COUNTED.search(r.getMessage()))]
    assert said == len(graph) > 0


def test_mode_2_with_the_seed_hint_warns_with_its_count(no_cn_is_built, caplog):
    """``cn_define_mode=2, hint_loops=[("OY", "all")]``: every loop but OY cut to 1 (Stream's mode 2)."""
    seed = SeedTiling(2, [("OY", "all")])
    with caplog.at_level(logging.WARNING), pytest.raises(_Built) as built:
        cn_graph_from_files(HARDWARE, WORKLOAD, MAPPING, "fused", seed=seed)
    [line] = [r.getMessage() for r in caplog.records if COUNTED.search(r.getMessage())]
    assert "42368 computation nodes (largest: layer 1 '/conv1/Conv' with 36864)" in line
    assert "coarsen the tiling" in line and "\n" not in line
    tiled = built.value.args[0]
    loops = dict(tiled.outer_loops())
    assert "OY" not in loops and loops == {
        d: s for d, s in tiled.sizes.items() if d != "OY" and s > 1
    }


def test_above_the_limit_nothing_is_built(no_cn_is_built):
    with cn_limit.cn_limit(1000), pytest.raises(InputError) as raised:
        cn_graph_from_files(
            HARDWARE, WORKLOAD, MAPPING, "fused", seed=SeedTiling(2, [("OY", "all")])
        )
    message = str(raised.value)
    assert "42368 computation nodes" in message and "more than the limit of 1000" in message
    assert "--max-cns" in message and "\n" not in message


class _Stop(Stage):
    """A leaf that yields the CN graph it is given."""

    def is_leaf(self) -> bool:
        return True

    def run(self):
        yield self.kwargs["workload"], None


def chain(**kwargs):
    return MainStage(
        [AcceleratorParserStage, StreamONNXModelParserStage, GenerateCNWorkloadHybridStage, _Stop],
        accelerator=HARDWARE,
        workload_path=WORKLOAD,
        mapping_path=MAPPING,
        cn_define_mode=1,
        hint_loops=[("OY", "all")],
        **kwargs,
    )


def test_stage_keyword_max_cns(no_cn_is_built):
    with pytest.raises(InputError, match="more than the limit of 10;"):
        chain(max_cns=10).run()


def test_the_limit_must_be_a_positive_count():
    with pytest.raises(InputError, match="max_cns"):
        with cn_limit.cn_limit(0):
            pass


@pytest.mark.slow
def test_cli_max_cns_refuses_in_one_line(tmp_path, capsys, no_cn_is_built):
    status = main(
        [
            "stream",
            "nodes",
            "--accelerator",
            HARDWARE,
            "--workload",
            WORKLOAD,
            "--mapping",
            MAPPING,
            "--mode",
            "fused",
            "--output",
            str(tmp_path / "out"),
            "--max-cns",
            "5",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "more than the limit of 5" in err[0]
