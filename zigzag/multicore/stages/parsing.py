"""The Stage API's parsing stages: Stream's entry point, the multi-core accelerator, the ONNX model
with its mapping, and the seed's K split of layers whose weights do not fit."""

from __future__ import annotations

from pathlib import Path

import onnx

from zigzag.errors import InputError
from zigzag.multicore.hardware import MultiCoreAccelerator
from zigzag.multicore.inputs import HardwareFacts
from zigzag.multicore.pipeline.prepared import load_mapping
from zigzag.multicore.schedule.tokens import AUTO_LATENCY, resolve_latency_model
from zigzag.multicore.splitting import split_layers, weight_split_factors
from zigzag.multicore.topology import load_multicore_accelerator
from zigzag.multicore.workload_onnx import read_stream_workload
from zigzag.stages.stage import MainStage as ZigZagMainStage
from zigzag.stages.stage import Stage

__all__ = [
    "AcceleratorParserStage",
    "LayerSplittingStage",
    "MainStage",
    "ONNXModelParserStage",
    "StreamONNXModelParserStage",
]


class MainStage(ZigZagMainStage):
    """Stream's entry point: as ZigZag's, but Stream's keyword names (``workload_path``,
    ``mapping_path``) are kept as they are (ZigZag's MainStage reads them as its older names)."""

    def __init__(self, list_of_callables, **kwargs):
        super().__init__(list_of_callables)
        self.kwargs = kwargs


class AcceleratorParserStage(Stage):
    """``accelerator``: a multi-core YAML path (core files found from ``cwd``, as Stream) or an
    already built :class:`MultiCoreAccelerator`."""

    def __init__(self, list_of_callables, *, accelerator, cwd=None, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.accelerator, self.cwd = accelerator, cwd

    def run(self):
        hardware = self.accelerator
        if not isinstance(hardware, MultiCoreAccelerator):
            hardware = load_multicore_accelerator(hardware, self.cwd)
        yield from self.substage(accelerator=hardware, cwd=self.cwd).run()


class ONNXModelParserStage(Stage):
    """``workload_path`` (ONNX) + ``mapping_path`` (Stream mapping YAML) → ``workload`` (parsed
    layers with their mapping entries). Run again after :class:`LayerSplittingStage`, it parses
    the split model that stage wrote."""

    def __init__(self, list_of_callables, *, workload_path, mapping_path, accelerator, **kwargs):
        super().__init__(list_of_callables, **kwargs)
        self.workload_path, self.mapping_path, self.accelerator = (
            workload_path,
            mapping_path,
            accelerator,
        )

    def run(self):
        if not isinstance(self.accelerator, MultiCoreAccelerator):
            raise InputError(
                None,
                type(self).__name__,
                "needs a multi-core accelerator: put AcceleratorParserStage first",
            )
        facts = HardwareFacts.of(self.accelerator)
        workload = read_stream_workload(
            self.workload_path,
            load_mapping(self.mapping_path, self.accelerator, self.workload_path),
            facts.dataflows,
        )
        yield from self.substage(
            workload_path=self.workload_path,
            mapping_path=self.mapping_path,
            accelerator=self.accelerator,
            workload=workload,
            latency_model=resolve_latency_model(
                self.kwargs.get("latency_model", AUTO_LATENCY), self.workload_path
            ),  # auto: bandwidth_bound for an LLM step, Stream's zigzag otherwise
        ).run()


StreamONNXModelParserStage = ONNXModelParserStage


class LayerSplittingStage(Stage):
    """The seed's K split of layers whose weights do not fit: every Conv/Gemm whose weights exceed
    its smallest candidate core's weight memory (half of it with ``split_W_double_buffered``) is
    split along K into ONNX nodes + Concat, saved as ``split_onnx_model_path``; the next stage
    reads that model (``workload_path``). Nothing to split: the model is passed on unchanged."""

    def __init__(
        self,
        list_of_callables,
        *,
        workload_path,
        workload,
        accelerator,
        split_onnx_model_path=None,
        split_W_double_buffered=False,
        **kwargs,
    ):
        super().__init__(list_of_callables, **kwargs)
        self.workload_path, self.workload, self.accelerator = workload_path, workload, accelerator
        self.output = split_onnx_model_path
        self.fraction = 0.5 if split_W_double_buffered else 1.0
        self.double = split_W_double_buffered

    def run(self):
        facts = HardwareFacts.of(self.accelerator)
        factors = weight_split_factors(self.workload, facts.weight_capacities, self.fraction)
        path = self.workload_path
        if factors:
            if not self.output:
                raise InputError(
                    None,
                    "split_onnx_model_path",
                    "layers must be split; give the file to write the split ONNX model to",
                )
            model = split_layers(onnx.load(str(path), load_external_data=False), factors, str(path))
            Path(self.output).parent.mkdir(parents=True, exist_ok=True)
            onnx.save(model, str(self.output))
            path = self.output
        yield from self.substage(
            workload_path=path,
            workload=self.workload,
            accelerator=self.accelerator,
            split_onnx_model_path=self.output,
            split_W_double_buffered=self.double,
            layer_splits=factors,
        ).run()
