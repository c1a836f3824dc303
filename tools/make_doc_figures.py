"""Redraw the documentation's figures (docs/figures/*.png) from a real run of the workflow.

    python tools/make_doc_figures.py [--keep DIR]

Runs a small config with `snakemake --cores 2` into a temporary folder: ResNet-18 on the three
example accelerators for two optimisation targets (the energy/latency plane and its Pareto
front), and ResNet-18 on Stream's quad-core example, layer-fused with the fixed allocation (Gantt
chart, memory use) and layer by layer with the allocation searched (its front). Then copies the
figures the docs show into docs/figures/, shrunk to at most 1400 pixels wide, in 256 colours.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
FIGURES = REPO / "docs" / "figures"
MAX_WIDTH = 1400
STREAM = "inputs/stream"

CONFIG = {
    "defaults": {"lpf_limit": 6},
    "sweeps": [
        {
            "name": "{workload}-{accelerator}-{opt}",
            "workload": ["inputs/workload/resnet18.onnx"],
            "accelerator": [
                f"inputs/hardware/{name}.yaml"
                for name in ("flow_tpu_32x32", "flow_eyeriss_14x12", "flow_edgetpu_4x4x8x8")
            ],
            "mapping": "inputs/mapping/{accelerator}.yaml",
            "opt": ["latency", "energy"],
        }
    ],
    "outputs": {"plot_format": "png"},
    "stream_experiments": [
        {
            "name": "resnet18-quad_core-fused",
            "accelerator": f"{STREAM}/hardware/tpu_like_quad_core.yaml",
            "workload": f"{STREAM}/workload/resnet18.onnx",
            "mapping": f"{STREAM}/mapping/tpu_like_quad_core_resnet18_fixed_split.yaml",
            "mode": "fused",
            "layer_stacks": "0-10;11-21",
        },
        {
            "name": "resnet18-quad_core-lbl-search",
            "accelerator": f"{STREAM}/hardware/tpu_like_quad_core.yaml",
            "workload": f"{STREAM}/workload/resnet18.onnx",
            "mapping": f"{STREAM}/mapping/tpu_like_quad_core.yaml",
            "mode": "lbl",
            "search": {"individuals": 16, "generations": 8, "seed": 0},
        },
    ],
}

# figure in docs/figures/ <- file of the run, relative to its results folder
FIGURE_SOURCES = {
    "layers.png": "resnet18-flow_tpu_32x32-latency/plots/layers.png",
    "comparison.png": "comparison.png",
    "gantt.png": "stream/resnet18-quad_core-fused/plots/gantt.png",
    "memory.png": "stream/resnet18-quad_core-fused/plots/memory.png",
    "allocation_front.png": "stream/resnet18-quad_core-lbl-search/plots/pareto.png",
}


def run_workflow(results: Path) -> None:
    """Run the figures' config into `results` with the checkout's Snakefile."""
    config = dict(CONFIG, results=str(results))
    config_file = results.parent / "figures.yaml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    snakemake = Path(sys.executable).with_name("snakemake")
    subprocess.run(
        [str(snakemake), "--cores", "2", "--configfile", str(config_file)], cwd=REPO, check=True
    )


def copy_figures(results: Path) -> None:
    """Copy the figures the docs show, shrunk to `MAX_WIDTH`; the memory hierarchy is found by its folder."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    sources = {name: results / path for name, path in FIGURE_SOURCES.items()}
    hierarchy = sorted((results / "accelerators").glob("flow_tpu_32x32-*/memory_hierarchy.png"))
    sources["memory_hierarchy.png"] = hierarchy[0]
    for name, source in sources.items():
        with Image.open(source) as image:
            if image.width > MAX_WIDTH:
                image = image.resize(
                    (MAX_WIDTH, round(image.height * MAX_WIDTH / image.width)), Image.LANCZOS
                )
            image.convert("RGB").quantize(colors=256).save(
                FIGURES / name, optimize=True
            )  # plots need few colours
        print(f"{FIGURES / name} ({(FIGURES / name).stat().st_size // 1024} KiB) <- {source}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--keep", type=Path, help="run into this folder and keep it (default: a temporary one)"
    )
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        run_workflow(args.keep.resolve() / "results")
        copy_figures(args.keep.resolve() / "results")
        return
    with tempfile.TemporaryDirectory() as folder:
        run_workflow(Path(folder) / "results")
        copy_figures(Path(folder) / "results")


if __name__ == "__main__":
    main()
