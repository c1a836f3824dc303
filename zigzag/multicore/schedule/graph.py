"""Per-problem preparation of the scheduler: CN adjacency, needed tensors, initial priorities.

What depends on the CN graph only (adjacency, each CN's candidate needed tensors) is prepared once
per graph and shared by the problems that differ in cores and costs only (the allocation search's
problems, made from one base problem with ``dataclasses.replace``, share the graph's arrays).
What depends on the cores too is prepared once per problem (:func:`graph_of`).
Per tensor and top memory facts are flat lists indexed ``tensor * nb_memories + memory``.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from operator import itemgetter

import numpy as np

from zigzag.errors import InputError
from zigzag.multicore.schedule.problem import O, ScheduleProblem


def _csr(keys: np.ndarray, values: list[np.ndarray], n: int):
    """Group ``values`` (already sorted by ``keys``) per key 0..n-1: (pointers, values...)."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return (ptr, *values)


def _flags(operands: tuple[tuple[int, ...], ...], n: int) -> np.ndarray:
    """(n, 3) booleans: per CN, which memory operands are listed."""
    flags = np.zeros((n, 3), dtype=bool)
    rows = [c for c, ms in enumerate(operands) for _ in ms]
    flags[rows, [m for ms in operands for m in ms]] = True
    return flags


def _check_tops(inst: np.ndarray) -> None:
    if len(inst) and inst.min() < 0:
        raise InputError(None, "hardware", "a CN's core has no top memory for one of its operands")


class _Structure:
    """What the scheduler needs of the CN graph whatever the cores: per-CN lists, prepared once.

    Compressed per-CN lists are Python lists (the scheduler's loops read single items): CN n's
    items are ``[ptr[n], ptr[n + 1])``.
    """

    def __init__(self, p: ScheduleProblem):
        n = p.nb_cns
        src, dst = p.edge_src.astype(np.int64), p.edge_dst.astype(np.int64)
        layer, sub = p.layer, p.sub
        self.in_degree = np.bincount(dst, minlength=n)
        out_degree = np.bincount(src, minlength=n)
        # inter-layer inputs per consumer, producers in ascending (layer, sub)
        idx = np.flatnonzero(layer[src] != layer[dst])
        idx = idx[np.lexsort((sub[src[idx]], layer[src[idx]], dst[idx]))]
        in_ptr, in_src, in_m = _csr(dst[idx], [src[idx], p.edge_operand[idx].astype(np.int64)], n)
        # inter-layer consumers per producer, with the consumer's memory operand
        idx = idx[np.argsort(src[idx], kind="stable")]
        out_ptr, self.out_dst, self.out_m = _csr(
            src[idx], [dst[idx], p.edge_operand[idx].astype(np.int64)], n
        )
        self.producers = np.repeat(np.arange(n), np.diff(out_ptr))
        self.consumer_ptr, self.consumers = out_ptr.tolist(), self.out_dst.tolist()
        # per producer, an item getter of its consumers' entries (made when first asked)
        self.consumer_get: list[itemgetter | None] = [None] * n
        # all successors (intra-layer ones too)
        idx = np.argsort(src, kind="stable")
        succ_ptr, succ = _csr(src[idx], [dst[idx]], n)
        self.succ_ptr, self.succ = succ_ptr.tolist(), succ.tolist()
        sink_layers = np.unique(layer[out_degree == 0])
        self.sink = (np.isin(layer, sink_layers) & p.final_output.astype(bool)).tolist()
        self._candidates(p, in_ptr, in_src, in_m)
        # constants, and inputs of CNs without predecessors: (tensor, operand), first occurrence each
        first = (self.in_degree == 0)[:, None] & (np.arange(3) != O)[None, :]
        cn, m = np.nonzero((_flags(p.constants, n) | first) & (p.operand_tensor >= 0))
        x = p.operand_tensor[cn, m]
        first_seen = np.sort(np.unique(x, return_index=True)[1])
        self.initial_offchip = list(zip(x[first_seen].tolist(), m[first_seen].tolist()))

    def _candidates(self, p: ScheduleProblem, in_ptr, in_src, in_m) -> None:
        """Per CN, the tensors it may need on its core, smallest first (constants, then inputs from
        other layers by producer): (CN, operand, tensor) arrays, before streamed operands are left out."""
        n, ot = p.nb_cns, p.operand_tensor
        c_cn = np.array([c for c, ms in enumerate(p.constants) for _ in ms], dtype=np.int64)
        c_m = np.array([m for ms in p.constants for m in ms], dtype=np.int64)
        c_seq = np.array([i for ms in p.constants for i in range(len(ms))], dtype=np.int64)
        i_cn = np.repeat(np.arange(n), np.diff(in_ptr))
        cn = np.concatenate([c_cn, i_cn])
        m = np.concatenate([c_m, in_m])
        seq = np.concatenate([c_seq, np.arange(len(i_cn)) - in_ptr[i_cn] + 3])
        x = np.concatenate([ot[c_cn, c_m], ot[in_src, O]])
        by = np.lexsort((seq, p.tensor_size.astype(np.int64)[x], cn))
        self.need_cn, self.need_m, self.need_x = cn[by], m[by], x[by]

    def latest(self, ends: list[float], producer: int) -> float:
        """The latest of ``ends`` over the producer's consumers; ``ends[nb_cns]`` is -inf (an entry
        the item getter reads twice, so that it always gives a tuple)."""
        get = self.consumer_get[producer]
        if get is None:
            ptr, end = self.consumer_ptr, len(ends) - 1
            get = self.consumer_get[producer] = itemgetter(
                *self.consumers[ptr[producer] : ptr[producer + 1]], end, end
            )
        return max(get(ends))


# the structures of the last few graphs, by the identity of the arrays they are made of
_STRUCTURES: OrderedDict[tuple[int, ...], tuple[tuple, _Structure]] = OrderedDict()


def _structure(p: ScheduleProblem) -> _Structure:
    parts = (
        p.layer,
        p.sub,
        p.edge_src,
        p.edge_dst,
        p.edge_operand,
        p.operand_tensor,
        p.constants,
        p.final_output,
        p.tensor_size,
    )
    key = tuple(map(id, parts))
    hit = _STRUCTURES.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], parts)):
        _STRUCTURES.move_to_end(key)
        return hit[1]
    structure = _Structure(p)
    _STRUCTURES[key] = (parts, structure)
    if len(_STRUCTURES) > 4:
        _STRUCTURES.popitem(last=False)
    return structure


class CNGraph:
    """Adjacency of the CN graph and what each CN needs on its core, prepared once per problem."""

    def __init__(self, p: ScheduleProblem):
        hw = p.hardware
        if (hw.top_memory[list(hw.cores)] < 0).any():
            raise InputError(
                None, "hardware", "every core needs a top memory for each of I1, I2 and O"
            )
        s = self.structure = _structure(p)
        self.in_degree, self.succ_ptr, self.succ = s.in_degree, s.succ_ptr, s.succ
        self.sink, self.initial_offchip = s.sink, s.initial_offchip
        self._prepare_needed(p, s)
        self._prepare_priorities(p, s)

    def _prepare_needed(self, p: ScheduleProblem, s: _Structure) -> None:
        """Per CN, the tensors it needs on its core without its streamed operands: (tensor,
        operand, flat tensor-memory index) lists, and an item getter of the latter (made when
        first asked)."""
        n = p.nb_cns
        keep = ~_flags(p.too_large, n)[s.need_cn, s.need_m]
        cn, m, x = s.need_cn[keep], s.need_m[keep], s.need_x[keep]
        mems = p.hardware.top_memory[p.core[cn], m]
        _check_tops(mems)
        self.need_ptr = _csr(cn, [], n)[0].tolist()
        self.need_x, self.need_m = x.tolist(), m.tolist()
        self.need_idx = (x * len(p.hardware.memories) + mems).tolist()
        self.need_get: list[itemgetter | None] = [None] * n
        self._need_cn, self._need_tensor, self._users = cn, x, None

    def waiting(self, x: int, end_at: list[float]) -> int:
        """How many needs of tensor ``x`` CNs not scheduled yet (``end_at`` -inf) still have.

        Stream frees a tensor once its priorities (reuse counts) reach zero. A count can fall
        short of the CNs sharing the tensor: outer loops along OX and FX (or OY and FY) give
        several CNs the same input ranges, hence one tensor, while the count only follows the
        irrelevant loops. The scheduler then keeps the tensor until these needs are met. (The
        index of each tensor's needing CNs is made when first asked.)"""
        if self._users is None:
            by = np.argsort(self._need_tensor, kind="stable")
            ptr = _csr(self._need_tensor[by], [], int(self._need_tensor.max(initial=-1)) + 1)[0]
            self._users = (ptr.tolist(), self._need_cn[by].tolist())
        ptr, cns = self._users
        users = cns[ptr[x] : ptr[x + 1]] if x + 1 < len(ptr) else []
        return sum(1 for c in users if end_at[c] == -math.inf)

    def _prepare_priorities(self, p: ScheduleProblem, s: _Structure) -> None:
        """Initial per tensor and memory count of CNs still needing it there (Stream's instance
        priorities), and whether Stream has a priority there at all."""
        top, nm = p.hardware.top_memory, len(p.hardware.memories)
        # outputs: +1 per consuming CN of another layer, on the consumer's memory
        inst = top[p.core[s.out_dst], s.out_m]
        _check_tops(inst)
        at = p.operand_tensor[s.producers, O] * nm + inst
        prio = np.bincount(at, minlength=p.nb_tensors * nm)
        has = np.zeros(p.nb_tensors * nm, dtype=bool)
        has[at] = True
        # inputs and constants: the reuse count, on the CN's own memory
        cn, m = np.nonzero(p.operand_tensor[:, :O] >= 0)
        x = p.operand_tensor[cn, m]
        inst = top[p.core[cn], p.tensor_operand[x]]
        _check_tops(inst)
        prio[x * nm + inst] = p.tensor_base_priority[x]
        has[x * nm + inst] = True
        self.prio = prio.tolist()
        self.has_prio = has.tolist()
        self.prio_total = prio.reshape(p.nb_tensors, nm).sum(axis=1).tolist()


def graph_of(problem: ScheduleProblem) -> CNGraph:
    """The scheduler's per-problem preparation (adjacency, needed tensors), computed once per
    problem and kept on it."""
    cached = problem.__dict__.get("_cn_graph")
    if cached is None:
        cached = problem.__dict__["_cn_graph"] = CNGraph(problem)
    return cached
