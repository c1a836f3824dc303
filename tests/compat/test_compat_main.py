"""ZigZag's example script (the reference repository's ``main.py``), rewritten: the same calls
through ZigZag's module paths, the same printed output as the reference gives; and every
ZigZag-named attribute of the per-layer results compared with the reference's own values.

Ground truth (tests/data/compat/): ``main_py_output.txt`` is what the reference's ``main.py``
printed (zigzag-dse 3.8.5); ``cme_attributes_*.json`` are the attributes of the reference's
per-layer results of the same run, dumped by ``tools/make_compat_oracle.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import pickle

import pytest
from support import TESTS

DATA = TESTS / "data"
INPUTS = DATA / "reference" / "zigzag"
COMPAT = DATA / "compat"


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The example script's body: API call, pickle reloaded, plot, printed mapping and figures."""
    from zigzag import api
    from zigzag.cost_model.cost_model import CostModelEvaluation
    from zigzag.visualization import bar_plot_cost_model_evaluations_breakdown, print_mapping

    folder = tmp_path_factory.mktemp("example")
    pickle_filename = folder / "cmes.pickle"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        energy, latency, results = api.get_hardware_performance_zigzag(
            workload=str(INPUTS / "workload" / "resnet18.onnx"),
            accelerator=str(INPUTS / "hardware" / "tpu_like.yaml"),
            mapping=str(INPUTS / "mapping" / "tpu_like.yaml"),
            opt="energy",
            dump_folder=str(folder),
            pickle_filename=str(pickle_filename),
            loma_show_progress_bar=False,
        )
        print(f"Total network energy = {energy:.2e} pJ")
        print(f"Total network latency = {latency:.2e} cycles")
        with open(pickle_filename, "rb") as handle:
            cmes = pickle.load(handle)
        cme: CostModelEvaluation = cmes[0]
        bar_plot_cost_model_evaluations_breakdown(cmes[0:5], save_path=f"{folder}/breakdown.png")
        print_mapping(cme)
        names = [level.memory_instance.name for level in cme.mem_level_list]
        print("Stall and slack per port of each memory instance:")
        for name, ports in zip(names, cme.stall_slack_comb_collect):
            print(f"  {name}: {ports}")
        stall = cme.latency_total0 - cme.ideal_temporal_cycle
        onload = cme.latency_total1 - cme.latency_total0
        offload = cme.latency_total2 - cme.latency_total1
        print(
            f"Latency: {cme.latency_total2:.3e} (bd: ideal -> {cme.ideal_temporal_cycle}, stall -> {stall} "
            f"onload -> {onload}, offload -> {offload})"
        )
    return {"printed": printed.getvalue(), "cmes": cmes, "folder": folder, "results": results}


def test_example_prints_what_the_reference_prints(example_run):
    assert example_run["printed"] == (COMPAT / "main_py_output.txt").read_text()


def test_example_writes_the_breakdown_and_the_pickle_holds_results_with_their_layer(example_run):
    from zigzag.cost_model.cost_model import (
        CostModelEvaluation,
        CostModelEvaluationABC,
        CumulativeCME,
    )

    assert (example_run["folder"] / "breakdown.png").stat().st_size > 10_000
    cmes = example_run["cmes"]
    assert len(cmes) == 21 and all(isinstance(c, CostModelEvaluation) for c in cmes)
    assert [c.layer.name for c in cmes] == [c.layer_name for c in cmes]
    assert cmes[0].accelerator.name == cmes[0].accelerator_name
    total, per_layer = example_run["results"][0]
    assert isinstance(total, CumulativeCME) and isinstance(total, CostModelEvaluationABC)
    assert isinstance(per_layer[0][0], CostModelEvaluationABC)
    assert [cme for cme, _ in per_layer] == cmes


def _close(ours, theirs, where=""):
    """Equal, floats to 1e-9 relative, containers element by element."""
    if isinstance(theirs, dict):
        assert set(map(str, ours)) == set(theirs), where
        ours = {str(k): v for k, v in ours.items()}
        for key in theirs:
            _close(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _close(a, b, f"{where}[{i}]")
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12), where
    else:
        assert ours == theirs, where


def _plain(value):
    """Our views in the oracle's plain JSON form."""
    from zigzag.hardware.zigzag_views import FourWay

    if isinstance(value, FourWay):
        return value.data
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


ORACLE = json.loads((COMPAT / "cme_attributes_resnet18_onnx_tpu_like_energy.json").read_text())
PLAIN_NAMES = [
    "energy_total",
    "mac_energy",
    "mem_energy",
    "latency_total0",
    "latency_total1",
    "latency_total2",
    "ideal_cycle",
    "ideal_temporal_cycle",
    "stall_slack_comb",
    "data_onloading_cycle",
    "data_offloading_cycle",
    "cycles_per_op",
    "access_same_data_considered_as_no_access",
    "mem_utili_individual",
    "mem_utili_shared",
    "effective_mem_utili_individual",
    "effective_mem_utili_shared",
    "double_buffer_true",
    "data_loading_individual_part",
    "data_loading_half_shared_part",
    "data_loading_shared_part",
    "data_loading_cc_pair_combined_per_op",
    "active_mem_level",
    "mem_size_dict",
    "mem_sharing_tuple",
    "stall_slack_comb_collect",
    "mem_updating_window_union_collect",
    "real_data_trans_cycle",
    "allowed_mem_update_cycle",
    "data_loading_cc_per_op",
    "data_offloading_cc_per_op",
    "data_offloading_cc_pair_combined",
    "memory_operand_links",
    "data_offloading_per_mem_inst",
    "loading_offloading_cycles_borrowed_from_computation",
    "loading_offloading_bandwidth_borrowed_from_computation",
    "mac_spatial_utilization",
    "mac_utilization0",
    "mac_utilization1",
    "mac_utilization2",
    "cumulative_layer_ids",
    "mem_energy_breakdown",
    "mem_energy_breakdown_further",
]
PER_PORT_NAMES = [  # keyed by (memory, port) here, "<memory>/<port>" in the oracle
    "loading_cycles_during_computation",
    "loading_bw_during_computation",
    "total_loading_cycles_during_computation",
    "total_loading_bw_during_computation",
]


@pytest.mark.parametrize("index", range(len(ORACLE)), ids=[entry["layer"] for entry in ORACLE])
def test_attributes_equal_the_references(example_run, index):
    cme, expected = example_run["cmes"][index], ORACLE[index]
    assert cme.layer.name == expected["layer"]
    for name in PLAIN_NAMES:
        _close(_plain(getattr(cme, name)), expected[name], name)
    _close([level.memory_instance.name for level in cme.mem_level_list], expected["mem_level_list"])
    _close(
        {op: [level.name for level in levels] for op, levels in cme.mem_hierarchy_dict.items()},
        expected["mem_hierarchy_dict"],
    )
    _close(
        [
            {
                port: [
                    [
                        a.real_cycle,
                        a.allowed_cycle,
                        a.period,
                        a.period_count,
                        list(a.served_op_lv_dir),
                        a.stall_or_slack,
                        a.mem_updating_window,
                    ]
                    for a in acts
                ]
                for port, acts in ports.items()
            }
            for ports in cme.port_activity_collect
        ],
        expected["port_activity_collect"],
        "port_activity_collect",
    )
    for view in ("mapping", "mapping_int"):
        for name in (
            "data_elem_per_level_unrolled",
            "data_bit_per_level_unrolled",
            "data_elem_per_level",
            "data_bit_per_level",
            "effective_data_bit",
        ):
            _close(getattr(getattr(cme, view), name), expected[f"{view}.{name}"], f"{view}.{name}")
    _close(cme.mapping.mem_level, expected["mapping.mem_level"])
    _close(cme.mapping_int.mem_level, expected["mapping_int.mem_level"])
    _close(
        _plain(cme.spatial_mapping_dict_int),
        expected["spatial_mapping_dict_int"],
        "spatial_mapping_dict_int",
    )
    _close(
        _plain(cme.temporal_mapping),
        expected["temporal_mapping.mapping_dic_origin"],
        "temporal_mapping",
    )
    for name in PER_PORT_NAMES:
        _close(
            {f"{memory}/{port}": v for (memory, port), v in getattr(cme, name).items()},
            expected[name],
            name,
        )
    _close(
        [
            {
                port: [
                    [a.real_cycle, a.data_in_charge, a.mem_bw, list(a.served_op_lv_dir)]
                    for a in acts
                ]
                for port, acts in ports.items()
            }
            for ports in cme.data_loading_per_mem_inst
        ],
        expected["data_loading_per_mem_inst"],
        "data_loading_per_mem_inst",
    )
    words = {
        op: [
            {
                d: level[s]
                for s, d in (
                    ("tl", "rd_out_to_low"),
                    ("fl", "wr_in_by_low"),
                    ("th", "rd_out_to_high"),
                    ("fh", "wr_in_by_high"),
                )
            }
            for level in levels
        ]
        for op, levels in cme.memory_word_access.items()
    }
    _close(words, expected["memory_word_access"], "memory_word_access")
