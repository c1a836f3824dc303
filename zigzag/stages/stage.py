"""The Stage protocol: a pipeline of generators, each building the next one.

A stage is built as ``StageClass(list_of_callables, **kwargs)``. ``list_of_callables`` is the
rest of the pipeline; the stage builds its child as
``list_of_callables[0](list_of_callables[1:], **kwargs_for_child)`` and passes (possibly
transformed) ``(result, extra_info)`` pairs upwards from ``run()``.

Keyword arguments a stage needs are declared as keyword-only parameters of its ``__init__`` and
are *consumed*: they reach the child only if the stage passes them on again. Everything else is
kept in ``self.kwargs`` and forwarded.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABCMeta, abstractmethod
from typing import Any, Iterator, Protocol, runtime_checkable

from zigzag.errors import InputError

Pair = tuple[Any, Any]

#: Where a keyword argument that stages need usually comes from (used in error messages).
PROVIDED_BY = {
    "accelerator": "AcceleratorParserStage",
    "workload": "WorkloadParserStage or ONNXModelParserStage",
    "layer": "WorkloadStage",
    "spatial_mapping": "SpatialMappingConversionStage (or SpatialMappingGeneratorStage)",
    "spatial_mapping_int": "SpatialMappingConversionStage (or SpatialMappingGeneratorStage)",
    "temporal_mapping": "TemporalMappingGeneratorStage, SalsaStage or TemporalOrderingConversionStage",
    "mem_update_list": "SearchInterLayerDataLocalityStage",
    "mem_update_weight": "SearchInterLayerDataLocalityStage",
    "multiprocessing_callback": "MultiProcessingGatherStage",
}


def missing_kwarg_error(stage_name: str, name: str, hint: str | None = None) -> InputError:
    """The error for a stage built without a keyword argument it needs."""
    if hint is None:
        provider = PROVIDED_BY.get(name, "")
        hint = (
            f"provided by {provider} placed earlier in the list of stages, or given to MainStage"
            if provider and stage_name not in provider
            else "give it to MainStage"
        )
    return InputError(None, stage_name, f"needs the keyword argument '{name}' ({hint})")


@functools.cache
def _required_kwargs(cls: type) -> tuple[str, ...]:
    parameters = inspect.signature(cls.__init__).parameters.values()
    return tuple(p.name for p in parameters if p.kind is p.KEYWORD_ONLY and p.default is p.empty)


class _StageMeta(ABCMeta):
    """Checks, before ``__init__`` runs, that every required keyword-only argument is given."""

    def __call__(cls, *args, **kwargs):
        for name in _required_kwargs(cls):
            if name not in kwargs:
                raise missing_kwarg_error(cls.__name__, name)
        return super().__call__(*args, **kwargs)


class Stage(metaclass=_StageMeta):
    """One step of a pipeline. Subclasses implement :meth:`run` as a generator of pairs."""

    def __init__(self, list_of_callables, **kwargs):
        self.list_of_callables = list_of_callables
        self.kwargs = kwargs
        has_children = bool(list_of_callables)
        if self.is_leaf() and has_children:
            raise ValueError("Leaf runnable received a non empty list_of_callables")
        if not self.is_leaf() and not has_children:
            raise ValueError(
                f"List of callables empty on a non leaf runnable ({type(self).__name__}), so nothing "
                "can be generated. Final callable in list_of_callables must return Stage instances "
                "that have is_leaf() == True"
            )

    @abstractmethod
    def run(self) -> Iterator[Pair]:
        """Yield ``(result, extra_info)`` pairs."""

    def is_leaf(self) -> bool:
        return False

    def __iter__(self) -> Iterator[Pair]:
        return self.run()

    def substage(self, **added) -> "Stage":
        """The child stage, given ``self.kwargs`` updated with ``added``."""
        return self.list_of_callables[0](self.list_of_callables[1:], **{**self.kwargs, **added})


@runtime_checkable
class StageCallable(Protocol):
    """Anything that builds a Stage from the rest of the pipeline and keyword arguments."""

    def __call__(self, list_of_callables, **kwargs) -> Stage: ...


#: Keyword names of older ZigZag versions (its stage documentation of 2022-23) -> current names.
LEGACY_KWARGS = {
    "accelerator_path": "accelerator",
    "onnx_model_path": "workload",
    "workload_path": "workload",
    "mapping_path": "mapping",
}


def current_kwargs(kwargs: dict) -> dict:
    """``kwargs`` with older ZigZag keyword names renamed to the current ones (a current name
    given as well wins)."""
    renamed = {}
    for name, value in kwargs.items():
        new = LEGACY_KWARGS.get(name)
        if new is None:
            renamed[name] = value
        elif new not in kwargs:
            renamed.setdefault(new, value)
    return renamed


class MainStage:
    """Entry point: builds the first stage and returns everything it yields as a list.

    Older ZigZag keyword names (``accelerator_path``, ``onnx_model_path``, ``mapping_path``) are
    accepted for the current ones (:data:`LEGACY_KWARGS`).
    """

    def __init__(self, list_of_callables, **kwargs):
        if not list_of_callables:
            raise ValueError("MainStage needs at least one stage")
        self.list_of_callables = list_of_callables
        self.kwargs = current_kwargs(kwargs)

    def run(self) -> list[Pair]:
        first = self.list_of_callables[0](self.list_of_callables[1:], **self.kwargs)
        return list(first.run())
