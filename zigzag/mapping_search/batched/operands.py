"""What the batched cost model (:class:`~zigzag.mapping_search.batched.model.BatchCostModel`)
reads of a layer's operands and ports besides the memories' sizes, costs and bandwidths: the
operands' relevancy masks over the loops, the port duties in a fixed order, the exactness
bound's layer figures; kept per set-up frame and loops for the hardware variants of one
structure (:func:`model_static`)."""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from zigzag.cost.model.setup import Operand
from zigzag.mapping_search.batched.candidates import LoopTable
from zigzag.memo import recent
from zigzag.workload.layer import Layer


class OperandInfo:
    """Static data of one layer operand for the batched model (masks over loop numbers and over
    dim codes, i.e. indices into ``LoopTable.dims``; code ``len(dims)`` = a dim without loops):
    ``operand`` with its :class:`OperandMasks`."""

    def __init__(self, operand: Operand, masks: "OperandMasks"):
        self.operand = operand
        self.name = operand.name
        self.n = operand.n
        self.r_of_loop = masks.r_of_loop
        self.ir_of_loop = masks.ir_of_loop
        self.keep = masks.keep
        self.relations = operand.pr_relations
        self.relevant_code = masks.relevant_code
        self.keep_code = masks.keep_code
        self._codes = masks.codes

    def code_of(self, dim: str) -> int:
        return self._codes.get(dim, -1)


class OperandMasks(NamedTuple):
    """What :class:`OperandInfo` reads of an operand's relevancy over the loops (read-only)."""

    r_of_loop: np.ndarray
    ir_of_loop: np.ndarray
    keep: frozenset
    relevant_code: np.ndarray
    keep_code: np.ndarray
    codes: dict

    @classmethod
    def of(cls, operand: Operand, loops: LoopTable) -> "OperandMasks":
        keep = operand.relevant | operand.irrelevant
        masks = cls(
            np.array([d in operand.relevant for d, _ in loops.distinct], dtype=bool),
            np.array([d in operand.irrelevant for d, _ in loops.distinct], dtype=bool),
            keep,
            np.array([d in operand.relevant_dec for d in loops.dims] + [False], dtype=bool),
            np.array([d in keep for d in loops.dims] + [False], dtype=bool),
            loops.dim_number,
        )
        for mask in masks[:2] + masks[3:5]:
            mask.setflags(write=False)
        return masks


class ModelStatic(NamedTuple):
    """What :class:`BatchCostModel` reads of a set-up's frame and the loops' distinct factors,
    the same for the hardware variants of one structure (kept in :data:`_STATICS`): the
    operands' masks, every port duty in a fixed order and its index, and the layer's largest
    count and precision for the exactness bound."""

    masks: dict
    duties: tuple
    duty_index: dict
    biggest: int
    precision: int


def _static_of(setup, layer: Layer, loops: LoopTable) -> ModelStatic:
    duties, duty_index = [], {}
    for port in setup.ports:
        for duty in port.duties:
            key = (duty.layer_op, duty.level, duty.direction)
            if key not in duty_index:
                duty_index[key] = len(duties)
                duties.append(key)
    biggest = layer.total_macs
    for op in setup.operands:
        biggest = max(biggest, layer.operand_size_elem(op))
    return ModelStatic(
        {op: OperandMasks.of(o, loops) for op, o in setup.operands.items()},
        tuple(duties),
        duty_index,
        biggest,
        max(list(layer.precision.values()) + [1]),
    )


#: :class:`ModelStatic` by (set-up frame, the loops' distinct factors), the last
#: :data:`STATICS_KEPT` used (a frame is one layer on one structure; it reads no memory's size,
#: cost or bandwidth)
_STATICS: OrderedDict = OrderedDict()
STATICS_KEPT = 1024


def model_static(setup, layer: Layer, loops: LoopTable) -> ModelStatic:
    """The :class:`ModelStatic` of ``layer``'s set-up ``setup`` and ``loops`` (kept)."""
    return recent(
        _STATICS,
        (setup.frame, tuple(loops.distinct)),
        lambda: _static_of(setup, layer, loops),
        STATICS_KEPT,
    )
