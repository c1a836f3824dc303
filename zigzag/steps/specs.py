"""A resolved experiment as the steps use it: a frozen object read once from its spec file.

The Snakefile writes each resolved experiment to a JSON spec file
(:func:`zigzag.steps.experiments.experiment_spec_text`; that file is the wire format between the
config and the jobs, and stays as it is). A step reads it once into an :class:`ExperimentSpec`
(single-core) or a :class:`MulticoreSpec` and uses attributes from then on. The step files that
carry an experiment on (``plan.json``, ``results.json``) keep its JSON form
(:meth:`ExperimentSpec.to_dict`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from zigzag.errors import InputError
from zigzag.mapping_search.options import SearchOptions

_FROZEN_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class ExperimentSpec:
    """One single-core experiment: its files, search options, workload options (how the workload
    is read: ``evaluate_all_operators``, ``operators``, ...) and named parameters."""

    name: str
    workload: str
    accelerator: str
    mapping: str
    options: SearchOptions
    workload_options: Mapping[str, Any] = field(default=_FROZEN_EMPTY)
    parameters: Mapping[str, Any] = field(default=_FROZEN_EMPTY)

    @classmethod
    def of(cls, experiment: ExperimentSpec | dict) -> ExperimentSpec:
        """``experiment`` as a spec (its JSON form read; a spec as it is)."""
        if isinstance(experiment, ExperimentSpec):
            return experiment
        known = {"name", "workload", "accelerator", "mapping", "options", "parameters"}
        return cls(
            name=experiment["name"],
            workload=experiment["workload"],
            accelerator=experiment["accelerator"],
            mapping=experiment["mapping"],
            options=SearchOptions(**experiment["options"]),
            workload_options=MappingProxyType(
                {k: v for k, v in experiment.items() if k not in known}
            ),
            parameters=MappingProxyType(dict(experiment.get("parameters") or {})),
        )

    def to_dict(self) -> dict:
        """The JSON form (as in the spec file; ``parameters`` only when there are some)."""
        document = {
            "name": self.name,
            "workload": self.workload,
            "accelerator": self.accelerator,
            "mapping": self.mapping,
            **self.workload_options,
            "options": self.options.to_dict(),
        }
        if self.parameters:
            document["parameters"] = dict(self.parameters)
        return document


@dataclass(frozen=True)
class MulticoreSpec:
    """One multi-core experiment with every default filled in (``mapping`` None: the automatic
    mapping; ``search`` None: a fixed allocation)."""

    name: str
    accelerator: str
    workload: str
    mapping: str | None
    mode: str
    lpf_limit: int
    latency_model: str
    prefetch: tuple[str, ...] = ()
    layer_stacks: str | None = None
    clock_ghz: float | None = None
    search: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, experiment: MulticoreSpec | dict) -> MulticoreSpec:
        """``experiment`` as a spec (its JSON form read; a spec as it is)."""
        if isinstance(experiment, MulticoreSpec):
            return experiment
        search = experiment.get("search")
        return cls(
            **{
                **experiment,
                "prefetch": tuple(experiment.get("prefetch") or ()),
                "search": None if search is None else MappingProxyType(dict(search)),
            }
        )


def read_spec_document(path: str | Path) -> dict:
    """The JSON of a spec file written by the Snakefile (one line on what is wrong with it)."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InputError(
            path, None, "experiment file not found (it is written by the Snakefile)"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}", f"not valid JSON ({exc.msg})") from None


def read_experiment(path: str | Path) -> ExperimentSpec:
    """A single-core experiment's spec file, read once."""
    return ExperimentSpec.of(read_spec_document(path))


def read_multicore(path: str | Path) -> MulticoreSpec:
    """A multi-core experiment's spec file, read once."""
    return MulticoreSpec.of(read_spec_document(path))


def experiment_of(document: dict) -> ExperimentSpec:
    """The experiment a step file carries on (``plan.json``, ``results.json``)."""
    return ExperimentSpec.of(document["experiment"])
