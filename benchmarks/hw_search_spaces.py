"""The search spaces of ``bench_hw_search.py``: sweeps of the TPU-like example of different shapes.

* ``alexnet200``: 5 array shapes (D1 x D2 in step) x 8 unified-buffer sizes x 5 bandwidths on AlexNet
  (the space the first guided search was tuned on);
* ``infeasible168``: 7 array shapes (16x16 ... 64x64, both orientations) x 6 unified-buffer sizes
  (64 KiB ... 8 MiB) x 4 bandwidths (32 ... 2048 bit) on MobileNetV2: small buffers do not fit its
  layers and a 32-bit port is below the buffer's 64-bit access granularity, so 78 of the 168 variants
  cannot run;
* ``structural180``: an input register file present or absent (a memory level, a fragment) x 5 array
  shapes x 6 buffer sizes x 3 bandwidths on ResNet-18;
* ``two_workloads150``: 5 array shapes x 6 buffer sizes x 5 bandwidths, each variant on AlexNet and
  MobileNetV2 at once (objectives summed over both);

added to check the search on spaces unlike the ones it was built on (not tuned on them):

* ``transformer192``: 6 array shapes x 8 buffer sizes (32 KiB ... 2 MiB) x 4 bandwidths on a
  transformer block (its attention MatMuls need large buffers: half the grid cannot run);
* ``depthwise192``: an input register file present or absent x 6 shapes (4x64 ... 64x4, 32x32) x
  4 buffer sizes x 4 accumulator sizes (8 ... 512 KiB) on MobileNetV2 (depthwise layers leave most
  of a wide array idle): five axes, two of them structural, one of size 1;
* ``infeasible160``: 5 shapes x 8 buffer sizes (32 KiB ... 4 MiB) x 4 bandwidths (32 ... 1024 bit)
  on ResNet-18: 115 of the 160 variants cannot run (buffers below 256 KiB, 32-bit ports);
* ``small_budget80``: 4 shapes x 5 buffer sizes x 4 bandwidths on a transformer block and ResNet-18
  at once, with 16 evaluations (batches of 4);

added with the feasibility screen (``zigzag.sweep.guided_screen``), whose failures are not physical:

* ``constrained200``: the axes of ``alexnet200`` with two constraints, latency at most 9.6 M cycles
  and area at most 16 mm2: 140 of the 200 variants are ``out`` (25 of them also cannot run), and
  the screen sees only the 25.

Each space has the search budget used in the benchmark (population x (generations + 1) <= 20 % of it).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = REPO / "inputs" / "workload"
PARAMS = {
    "D1": "operational_array.sizes[0]",
    "D2": "operational_array.sizes[1]",
    "ub": "memories.unified_buffer.size",
    "bw": "memories.unified_buffer.ports[0].bandwidth_max",
}
DERIVED = {
    "memories.unified_buffer.ports[1].bandwidth_max": "bw",
    "memories.unified_buffer.ports[0].bandwidth_min": "min(64, bw)",
    "memories.unified_buffer.ports[1].bandwidth_min": "min(64, bw)",
    "memories.unified_buffer.r_cost": "10 * (ub / 8KiB) ** 0.5 * bw / 64",
    "memories.unified_buffer.w_cost": "10 * (ub / 8KiB) ** 0.5 * bw / 64",
    "memories.unified_buffer.area": "0.7 * ub + 2000 * bw",
    "memories.accumulators.ports[0].bandwidth_max": "D1 * 16",
    "memories.accumulators.ports[1].bandwidth_max": "D1 * 16",
}
ACC_DERIVED = {
    "memories.accumulators.r_cost": "10 * (acc / 8KiB) ** 0.5 * D1 * 16 / 64",
    "memories.accumulators.w_cost": "10 * (acc / 8KiB) ** 0.5 * D1 * 16 / 64",
    "memories.accumulators.area": "0.7 * acc + 2000 * D1 * 16",
}
INPUT_RF = {
    "size": 512,
    "r_cost": 0.5,
    "w_cost": 0.5,
    "area": 2560,
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


def _section(
    name: str,
    shapes,
    buffers,
    bandwidths,
    workloads,
    lpf_limit: int = 4,
    granularity: bool = True,
    accumulators=None,
    **extra,
) -> dict:
    derived = (
        dict(DERIVED)
        if granularity
        else {k: v for k, v in DERIVED.items() if "bandwidth_min" not in k}
    )
    params, vary = dict(PARAMS), {"ub": buffers, "bw": bandwidths}
    if (
        accumulators
    ):  # the accumulator SRAM's size as one more axis, its costs scaled as the buffer's
        params["acc"] = "memories.accumulators.size"
        vary["acc"] = accumulators
        derived.update(ACC_DERIVED)
    return {
        "name": name,
        "base": str(REPO / "inputs/hardware/flow_tpu_32x32.yaml"),
        "lpf_limit": lpf_limit,
        "params": params,
        "zip": [{"D1": [s[0] for s in shapes], "D2": [s[1] for s in shapes]}],
        "vary": vary,
        "derive": derived,
        "workloads": [str(WORKLOADS / w) for w in workloads],
        "mapping": str(REPO / "inputs/mapping/flow_tpu_array.yaml"),
        **extra,
    }


SPACES = {
    "alexnet200": (
        _section(
            "alexnet200",
            [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8)],
            ["128KiB", "256KiB", "512KiB", "1MiB", "1536KiB", "2MiB", "3MiB", "4MiB"],
            [64, 128, 256, 512, 1024],
            ["alexnet.onnx"],
        ),
        {"population": 8, "generations": 4},
    ),
    "infeasible168": (
        _section(
            "infeasible168",
            [(16, 16), (16, 32), (32, 16), (32, 32), (32, 64), (64, 32), (64, 64)],
            ["64KiB", "256KiB", "512KiB", "1MiB", "4MiB", "8MiB"],
            [32, 128, 512, 2048],
            ["mobilenetv2.onnx"],
            granularity=False,
        ),
        {"population": 8, "generations": 3},
    ),
    "structural180": (
        _section(
            "structural180",
            [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8)],
            ["128KiB", "256KiB", "512KiB", "1MiB", "2MiB", "4MiB"],
            [64, 256, 1024],
            ["resnet18.onnx"],
            fragments={
                "input_rf": {
                    "no_rf": {},
                    "with_rf": {
                        "add": [{"path": "memories.i_rf", "value": INPUT_RF, "before": "w_reg"}]
                    },
                }
            },
        ),
        {"population": 8, "generations": 3},
    ),
    "two_workloads150": (
        _section(
            "two_workloads150",
            [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8)],
            ["128KiB", "256KiB", "512KiB", "1MiB", "2MiB", "4MiB"],
            [64, 128, 256, 512, 1024],
            ["alexnet.onnx", "mobilenetv2.onnx"],
        ),
        {"population": 6, "generations": 4},
    ),
    # ----- added to check the search on spaces unlike the ones it was built on -----
    "transformer192": (
        _section(
            "transformer192",
            [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8), (64, 64)],
            ["32KiB", "64KiB", "96KiB", "128KiB", "256KiB", "512KiB", "1MiB", "2MiB"],
            [64, 128, 256, 512],
            ["transformer_block.onnx"],
        ),
        {"population": 6, "generations": 5},
    ),
    "depthwise192": (
        _section(
            "depthwise192",
            [(4, 64), (8, 32), (16, 16), (32, 8), (64, 4), (32, 32)],
            ["256KiB", "512KiB", "2MiB", "8MiB"],
            [256],
            ["mobilenetv2.onnx"],
            accumulators=["8KiB", "32KiB", "128KiB", "512KiB"],
            fragments={
                "input_rf": {
                    "no_rf": {},
                    "with_rf": {
                        "add": [{"path": "memories.i_rf", "value": INPUT_RF, "before": "w_reg"}]
                    },
                }
            },
        ),
        {"population": 7, "generations": 4},
    ),
    "infeasible160": (
        _section(
            "infeasible160",
            [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8)],
            ["32KiB", "64KiB", "96KiB", "128KiB", "192KiB", "256KiB", "1MiB", "4MiB"],
            [32, 64, 256, 1024],
            ["resnet18.onnx"],
            granularity=False,
        ),
        {"population": 8, "generations": 3},
    ),
    "small_budget80": (
        _section(
            "small_budget80",
            [(8, 64), (16, 32), (32, 16), (64, 8)],
            ["128KiB", "256KiB", "512KiB", "1MiB", "4MiB"],
            [64, 128, 512, 2048],
            ["transformer_block.onnx", "resnet18.onnx"],
        ),
        {"population": 4, "generations": 3},
    ),
    # ----- added with the feasibility screen: failures it cannot see -----
    "constrained200": (
        _section(
            "constrained200",
            [(8, 128), (16, 64), (32, 32), (64, 16), (128, 8)],
            ["128KiB", "256KiB", "512KiB", "1MiB", "1536KiB", "2MiB", "3MiB", "4MiB"],
            [64, 128, 256, 512, 1024],
            ["alexnet.onnx"],
            constraints=["latency <= 9600000", "area <= 16 mm2"],
        ),
        {"population": 8, "generations": 4},
    ),
}
