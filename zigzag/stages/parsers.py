"""Stages that turn the user's input files into model objects."""

from __future__ import annotations

from pathlib import Path

from zigzag.hardware.accelerator import Accelerator
from zigzag.io.loaders import load_accelerator, load_workload
from zigzag.stages.stage import Stage
from zigzag.workload.workload import Workload


class AcceleratorParserStage(Stage):
    """Replaces the ``accelerator`` path (YAML) by an :class:`Accelerator`; an Accelerator given
    instead of a path is passed on as it is."""

    def __init__(self, list_of_callables, *, accelerator, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator = accelerator

    @staticmethod
    def parse_accelerator(path: str | Path) -> Accelerator:
        return load_accelerator(path)

    def run(self):
        accelerator = self.accelerator
        if not isinstance(accelerator, Accelerator):
            accelerator = self.parse_accelerator(accelerator)
        yield from self.substage(accelerator=accelerator).run()


class WorkloadParserStage(Stage):
    """Replaces ``workload`` (a YAML path or a list of layer dicts) and ``mapping`` (a YAML path
    or a list of mapping entries) by a :class:`Workload` whose layers carry their mapping entry.

    ``mapping`` is not passed on. ``evaluate_all_operators`` (ours, default False) also turns
    ONNX pooling and element-wise operators into layers; ``operators="all"`` reads every ONNX operator
    as layers of the operator model (``causal_blocks`` as in ``read_onnx``).
    """

    def __init__(
        self,
        list_of_callables,
        *,
        workload,
        mapping,
        evaluate_all_operators=False,
        operators="zigzag",
        causal_blocks=8,
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.workload = workload
        self.mapping = mapping
        self.evaluate_all_operators = evaluate_all_operators
        self.onnx_options = {"operators": operators, "causal_blocks": causal_blocks}

    def parse_workload(self) -> Workload:
        if isinstance(self.workload, Workload):
            return self.workload
        return load_workload(
            self.workload,
            self.mapping,
            evaluate_all_operators=self.evaluate_all_operators,
            **self.onnx_options,
        )

    def run(self):
        yield from self.substage(workload=self.parse_workload()).run()


class ONNXModelParserStage(WorkloadParserStage):
    """As :class:`WorkloadParserStage` for an ONNX model (a ``.onnx`` path or a ``ModelProto``);
    also passes the model on as ``onnx_model``."""

    def run(self):
        workload = self.parse_workload()
        model = self.workload
        if isinstance(model, (str, Path)):
            import onnx

            model = onnx.load(str(model), load_external_data=False)
        yield from self.substage(workload=workload, onnx_model=model).run()
