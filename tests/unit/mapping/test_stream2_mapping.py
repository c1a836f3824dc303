"""Stream 2.x dict mapping files and the automatic mapping (zigzag.multicore.stream2_mapping, automap)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import yaml
from support import DATA

from zigzag.errors import InputError
from zigzag.multicore.automap import automatic_mapping, write_mapping
from zigzag.multicore.core_kinds import capable_cores
from zigzag.multicore.inputs import layer_stacks_of, load_cn_graph_inputs, mapping_for
from zigzag.multicore.mapping import load_stream_mapping
from zigzag.multicore.topology import load_multicore_accelerator

STREAM2 = DATA / "stream2"
QUAD = STREAM2 / "hardware" / "tpu_like_quad_core.yaml"
CNN = STREAM2 / "small_cnn.onnx"
CHOSEN = STREAM2 / "mapping" / "small_cnn_tpu_like_quad_core.yaml"


@pytest.fixture(scope="module")
def quad():
    return load_multicore_accelerator(QUAD)


def _layers(accelerator, mapping):
    _, workload, _ = load_cn_graph_inputs(accelerator, CNN, mapping)
    return workload, {layer.name: layer for layer in workload.layers}


def test_generic_dims_resolve_per_layer(quad):
    workload, layers = _layers(quad, CHOSEN)
    assert layers["conv0"].mapping.inter_core_tiling == (("OY", 4),)  # Conv D2: oy
    assert layers["conv0"].mapping.core_allocation == (0, 1, 2, 3)
    assert layers["conv0"].mapping.core_allocation_is_fixed  # split 4 over 4 cores
    assert layers["fc"].mapping.inter_core_tiling == (("K", 2), ("C", 2))  # Gemm (m, k, n)
    assert layers["relu0"].mapping.core_allocation == (5,)
    # fused groups' tile sizes: pool0 OY (16) in tiles of 1 -> 16 computation nodes along OY
    assert layers["pool0"].mapping.intra_core_tiling == (("OY", 16),)
    assert layer_stacks_of(workload) == [(0, 1, 2), (3, 4, 5, 6, 8)]


def test_shipped_op_type_mapping_reads(quad):
    # Stream's own dict mapping for this accelerator (op-type entries, fused groups of op types)
    _, layers = _layers(quad, STREAM2 / "mapping" / "tpu_like_quad_core.yaml")
    assert layers["conv1"].mapping.inter_core_tiling == (("K", 4),)  # Conv D6: k
    assert layers["relu1"].mapping.inter_core_tiling == (("K", 4),)  # 4-D element-wise D3
    assert layers["pool0"].mapping.core_allocation == (4,)
    mapping = load_stream_mapping(STREAM2 / "mapping" / "resnet18_tpu_quad_core.yaml", quad)
    assert len(mapping.fused_groups) == 11
    assert mapping.entries["default"].core_allocation == (0, 1, 2, 3)


def _write(tmp_path, data):
    path = tmp_path / "mapping.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_unknown_dimension_names_layer_and_dimension(quad, tmp_path):
    path = _write(
        tmp_path,
        {
            "layers": [
                {
                    "name": "fc",
                    "core_allocation": [[0]],
                    "inter_core_tiling": [[{"dim": "D5", "split": 2}]],
                }
            ]
        },
    )
    with pytest.raises(InputError, match=r"layer 'fc'.*dimension D5 does not exist") as error:
        _layers(quad, path)
    assert "\n" not in str(error.value)


def test_typo_gets_did_you_mean(quad, tmp_path):
    path = _write(tmp_path, {"layers": [{"name": "Conv", "core_alocation": [[0]]}]})
    with pytest.raises(InputError, match="did you mean 'core_allocation'"):
        load_stream_mapping(path, quad)
    path = _write(tmp_path, {"fused_group": []})
    with pytest.raises(InputError, match="did you mean 'fused_groups'"):
        load_stream_mapping(path, quad)


def test_core_that_is_not_compute_is_refused(quad, tmp_path):
    path = _write(tmp_path, {"layers": [{"name": "Conv", "core_allocation": [[6]]}]})
    with pytest.raises(InputError, match="core 6 is not a compute core"):
        load_stream_mapping(path, quad)


@pytest.mark.slow
def test_scheduled_with_the_release_mapping(quad):
    from zigzag.multicore.pipeline import run_stream

    result = run_stream(quad, CNN, CHOSEN, "lbl")
    assert result.latency > 0 and result.energy > 0


@pytest.mark.slow
def test_release_mapping_fused_splits_a_conv_across_cores(quad, tmp_path):
    """conv0's rows split over cores 0-3 inside its fused group (issue 44: was "CN 1: tensor 2
    is stored nowhere", the fused rows and the split cutting 32 rows 128 ways)."""
    from zigzag.multicore.pipeline import run_stream

    result = run_stream(quad, CNN, CHOSEN, "fused", cache=tmp_path)
    p = result.problem
    conv0 = p.layer == 0
    assert conv0.sum() == 32 and set(p.core[conv0].tolist()) == {0, 1, 2, 3}
    assert np.isfinite(result.end).all() and result.latency > 0 and result.energy > 0


def test_automatic_mapping_follows_operator_types(quad):
    # tpu_like lists no operator_types (runs any); pooling and simd list theirs
    assert capable_cores(quad, "MaxPool") == (0, 1, 2, 3, 4)
    assert capable_cores(quad, "Add") == (0, 1, 2, 3, 5)
    assert capable_cores(quad, "Conv") == (0, 1, 2, 3)
    mapping = mapping_for(quad, CNN)
    assert mapping.entries["Relu"].core_allocation == (0, 1, 2, 3, 5)
    assert mapping.entries["Gemm"].core_allocation == (0, 1, 2, 3)


def test_late_2024_pooling_and_simd_cores():
    late = load_multicore_accelerator(
        DATA
        / "stream_compat"
        / "stream"
        / "inputs"
        / "examples"
        / "hardware"
        / "tpu_like_quad_core.yaml"
    )
    assert capable_cores(late, "MaxPool") == (0, 1, 2, 3, 4)
    assert capable_cores(late, "Conv") == (0, 1, 2, 3)


@pytest.mark.slow
def test_cores_that_cannot_map_a_layer_are_dropped(tmp_path):
    from zigzag.multicore.allocation.automatic import checked_automatic_mapping

    meta = STREAM2 / "hardware" / "meta_prototype_dual_core_simd_offchip.yaml"
    # the Gemm's best spatial mappings overflow the cores' 16-bit weight register: smaller ones fit
    mapping = checked_automatic_mapping(load_multicore_accelerator(meta), CNN)
    assert mapping.entries["Gemm"].core_allocation == (0, 1)
    # an output register narrower than one partial sum: no spatial mapping fits, no core maps a Conv
    shutil.copytree(STREAM2 / "hardware", tmp_path / "hw")
    core = tmp_path / "hw" / "cores" / "meta_prototype.yaml"
    data = yaml.safe_load(core.read_text())
    data["memories"]["rf_2B"]["size"] = 8
    core.write_text(yaml.safe_dump(data, sort_keys=False))
    accelerator = load_multicore_accelerator(tmp_path / "hw" / meta.name)
    with pytest.raises(InputError, match="layer 'conv0': no core can map this Conv layer") as error:
        checked_automatic_mapping(accelerator, CNN)
    assert "operand O needs at least 16 bits in memory rf_2B, which holds 8 bits" in str(
        error.value
    )


def test_automatic_mapping_written_and_read_back(quad, tmp_path):
    _, workload, _ = load_cn_graph_inputs(quad, CNN, None)
    mapping = automatic_mapping(quad, workload)
    path = write_mapping(mapping, tmp_path / "auto.yaml")
    again = load_stream_mapping(path, quad)
    assert {n: e.core_allocation for n, e in again.entries.items()} == {
        n: e.core_allocation for n, e in mapping.entries.items()
    }


def test_no_core_runs_the_operator(tmp_path):
    shutil.copytree(STREAM2 / "hardware", tmp_path / "hw")
    vpu = tmp_path / "hw" / "cores" / "tpu_v7_vpu.yaml"
    core = yaml.safe_load(vpu.read_text())
    core["operator_types"] = [t for t in core["operator_types"] if "Pool" not in t]
    vpu.write_text(yaml.safe_dump(core, sort_keys=False))
    accelerator = load_multicore_accelerator(tmp_path / "hw" / "tpu_v7_ironwood.yaml")
    with pytest.raises(InputError, match="no core runs MaxPool"):
        mapping_for(accelerator, CNN)


@pytest.mark.slow
def test_stream2_entry_points(tmp_path):
    from stream.api import SolveOptions, evaluate_mapping, select_mapping

    options = SolveOptions(time_limit_s=30)
    automatic = evaluate_mapping(str(QUAD), str(CNN), str(tmp_path / "auto"), None, options)
    assert automatic.cycles == automatic.context.schedule.latency > 0
    assert (tmp_path / "auto" / "automatic_mapping.yaml").exists()
    assert (tmp_path / "auto" / "allocation.yaml").exists()
    shipped = str(STREAM2 / "mapping" / "tpu_like_quad_core.yaml")
    best = select_mapping(str(QUAD), str(CNN), str(tmp_path / "sel"), [shipped], options)
    assert best.mapping == shipped and best.energy > 0
    assert (tmp_path / "sel" / "candidate_0" / "summary.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in (STREAM2 / "hardware").glob("*.yaml")))
def test_every_shipped_accelerator_runs_without_mapping(name, tmp_path):
    from zigzag.multicore.pipeline.calls import optimize_co

    search = optimize_co(
        STREAM2 / "hardware" / name, CNN, None, "lbl", time_limit=5, output=tmp_path
    )
    assert search.schedule.latency > 0 and search.schedule.energy > 0
    written = load_stream_mapping(tmp_path / "automatic_mapping.yaml", STREAM2 / "hardware" / name)
    assert "Conv" in written.entries


@pytest.mark.slow
def test_command_line_without_mapping(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "out"
    command = [sys.executable, "-m", "zigzag", "stream", "run", "--accelerator", str(QUAD)]
    done = subprocess.run(
        [*command, "--workload", str(CNN), "--output", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "constraint optimisation: latency" in done.stdout
    rerun = subprocess.run(
        [*command, "--workload", str(CNN), "--mapping", str(out / "allocation.yaml"),
         "--output", str(tmp_path / "again")],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    first = yaml.safe_load((out / "summary.json").read_text())
    again = yaml.safe_load((tmp_path / "again" / "summary.json").read_text())
    assert again["latency"] == first["latency"]


@pytest.mark.slow
def test_workflow_experiment_without_mapping(tmp_path):
    import json
    import subprocess
    import sys

    from support import REPO

    shutil.copytree(STREAM2, tmp_path / "stream2")
    experiment = {
        "name": "s2-auto",
        "accelerator": "stream2/hardware/tpu_like_quad_core.yaml",
        "workload": "stream2/small_cnn.onnx",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"stream_experiments": [experiment]}))
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
         "--configfile", str(tmp_path / "config.yaml"), "--cores", "2"],
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "results" / "multicore" / "s2-auto"
    assert json.loads((run / "summary.json").read_text())["search"]["method"] == "co"
    assert (run / "automatic_mapping.yaml").exists() and (run / "allocation.yaml").exists()


@pytest.mark.slow
def test_multicore_sweep_without_mapping(tmp_path):
    from support import REPO

    from zigzag.sweep import run_sweep

    spec = {
        "kind": "multicore",
        "base": str(REPO / "inputs" / "stream" / "hardware" / "tpu_like_mesh_pooling.yaml"),
        "params": {"rows": "mesh.rows"},
        "workloads": [str(REPO / "inputs" / "stream" / "workload" / "small_3conv.onnx")],
    }
    rows = run_sweep(spec, tmp_path / "out", cache=tmp_path / "cache")
    assert rows[0]["status"] == "ok" and rows[0]["allocation"] == "constraint optimisation"


@pytest.mark.slow
def test_stage_api_without_mapping(tmp_path):
    from zigzag.multicore.api import CO_STAGES
    from zigzag.multicore.stages import MainStage

    answers = MainStage(
        CO_STAGES,
        accelerator=str(QUAD),
        workload_path=str(CNN),
        mapping_path=None,
        loma_lpf_limit=6,
        mode="lbl",
        layer_stacks=None,
        cost_lut_path=str(tmp_path / "lut.pickle"),
        operands_to_prefetch=[],
        latency_model="auto",
        max_cns=None,
    ).run()
    assert answers[0][0].latency > 0
