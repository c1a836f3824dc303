"""The SHA-256 of every file the workflow hands its jobs for a config (each experiment's spec,
a hardware sweep's batches, settings and search file), computed as workflow/rules/common.smk does.

    python tools/spec_texts.py before.json config.yaml config/*.yaml
    (change the code)
    python tools/spec_texts.py after.json config.yaml config/*.yaml && cmp before.json after.json

Equal files before and after a change mean the jobs read exactly the same inputs.
"""

import hashlib
import json
import sys

import yaml

from zigzag.config import load_config
from zigzag.io.yaml_files import load_yaml, with_strict_numbers
from zigzag.steps.experiments import expand_experiments, experiment_spec_text
from zigzag.steps.multicore import resolve_multicore_experiments
from zigzag.sweep.workflow import (
    json_text,
    resolve_hardware_sweeps,
    write_point_files,
    write_search_files,
    write_sweep_settings,
)


def spec_texts(config_file: str) -> dict[str, str]:
    """path (under ``C/``) -> text of every file the jobs of ``config_file`` read."""
    texts = {}

    def text(path, content):
        texts[str(path)] = content
        return str(path)

    def data(path, content):
        return text(path, json_text(content))

    with open(config_file) as stream:  # as Snakemake reads it, then strictly (common.smk)
        config = load_config(with_strict_numbers(yaml.safe_load(stream), load_yaml(config_file)))
    for experiment in expand_experiments(config):
        text(f"C/experiments/{experiment['name']}.json", experiment_spec_text(experiment))
    for name, experiment in resolve_multicore_experiments(config).items():
        text(f"C/experiments/multicore/{name}.json", experiment_spec_text(experiment))
    for sweep, variants in resolve_hardware_sweeps(config).values():
        if variants is not None:
            write_point_files(sweep, variants, "C/sweeps", write=data)
        write_sweep_settings(sweep, "C/sweeps", write=data)
    write_search_files(config, "C/sweeps", write=data)
    return texts


def main(output: str, configs: list[str]) -> None:
    digests = {}
    for config in configs:
        texts = spec_texts(config)
        digests[config] = {
            path: hashlib.sha256(content.encode()).hexdigest()
            for path, content in sorted(texts.items())
        }
        print(f"{config}: {len(texts)} files")
    with open(output, "w") as stream:
        json.dump(digests, stream, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
