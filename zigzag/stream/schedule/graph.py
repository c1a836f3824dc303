"""Per-problem preparation of the scheduler: CN adjacency, needed tensors, initial priorities.

Everything here depends on the :class:`ScheduleProblem` only, so it is computed once per problem
(:attr:`ScheduleProblem.graph`) and shared by every schedule of it.
"""

from __future__ import annotations

from operator import itemgetter

import numpy as np

from zigzag.errors import InputError
from zigzag.stream.schedule.problem import O, ScheduleProblem


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


class CNGraph:
    """Adjacency of the CN graph and what each CN needs, in per-CN lists, prepared once per problem.

    Per tensor and top memory facts are flat lists indexed ``tensor * nb_memories + memory``.
    """

    def __init__(self, p: ScheduleProblem):
        n = p.nb_cns
        hw = p.hardware
        if (hw.top_memory[list(hw.cores)] < 0).any():
            raise InputError(None, "hardware", "every core needs a top memory for each of I1, I2 and O")
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
        out_ptr, out_dst, out_m = _csr(src[idx], [dst[idx], p.edge_operand[idx].astype(np.int64)], n)
        # compressed per-CN lists as Python lists (the scheduler's inner loops read single items):
        # CN n's items are [ptr[n], ptr[n + 1])
        # consumers in other layers grouped by producer, then by core: producer n's consumers on
        # core c are [consumer_ptr[n * nc + c], consumer_ptr[n * nc + c + 1])
        self.nb_core_slots = nc = len(hw.top_memory)
        group = np.repeat(np.arange(n), np.diff(out_ptr)) * nc + p.core[out_dst]
        self.consumers = out_dst[np.argsort(group, kind="stable")].tolist()
        self.consumer_ptr = _csr(group, [], n * nc)[0].tolist()
        # all successors (intra-layer ones too)
        idx = np.argsort(src, kind="stable")
        succ_ptr, succ = _csr(src[idx], [dst[idx]], n)
        self.succ_ptr, self.succ = succ_ptr.tolist(), succ.tolist()
        sink_layers = np.unique(layer[out_degree == 0])
        self.sink = (np.isin(layer, sink_layers) & p.final_output.astype(bool)).tolist()
        self._prepare_needed(p, in_ptr, in_src, in_m)
        self._prepare_priorities(p, out_ptr, out_dst, out_m)
        # constants, and inputs of CNs without predecessors: (tensor, operand), first occurrence each
        first = (self.in_degree == 0)[:, None] & (np.arange(3) != O)[None, :]
        cn, m = np.nonzero((_flags(p.constants, n) | first) & (p.operand_tensor >= 0))
        x = p.operand_tensor[cn, m]
        first_seen = np.sort(np.unique(x, return_index=True)[1])
        self.initial_offchip = list(zip(x[first_seen].tolist(), m[first_seen].tolist()))

    def _prepare_needed(self, p: ScheduleProblem, in_ptr, in_src, in_m) -> None:
        """Per CN, the tensors it needs on its core, smallest first (constants, then inputs from
        other layers by producer), without its streamed operands: (tensor, operand, memory) lists."""
        n, ot = p.nb_cns, p.operand_tensor
        c_cn = np.array([c for c, ms in enumerate(p.constants) for _ in ms], dtype=np.int64)
        c_m = np.array([m for ms in p.constants for m in ms], dtype=np.int64)
        c_seq = np.array([i for ms in p.constants for i in range(len(ms))], dtype=np.int64)
        i_cn = np.repeat(np.arange(n), np.diff(in_ptr))
        cn = np.concatenate([c_cn, i_cn])
        m = np.concatenate([c_m, in_m])
        seq = np.concatenate([c_seq, np.arange(len(i_cn)) - in_ptr[i_cn] + 3])
        x = np.concatenate([ot[c_cn, c_m], ot[in_src, O]])
        streamed = _flags(p.too_large, n)
        keep = ~streamed[cn, m]
        cn, m, seq, x = cn[keep], m[keep], seq[keep], x[keep]
        by = np.lexsort((seq, p.tensor_size.astype(np.int64)[x], cn))
        cn, m, x = cn[by], m[by], x[by]
        mems = p.hardware.top_memory[p.core[cn], m]
        _check_tops(mems)
        nm = len(p.hardware.memories)
        self.need_ptr = ptr = _csr(cn, [], n)[0].tolist()
        self.need_x, self.need_m = x.tolist(), m.tolist()
        self.need_idx = idx = (x * nm + mems).tolist()
        # per CN: its needed tensors' entries of a flat per (tensor, memory) sequence, ending with
        # two entries of the sentinel index nb_tensors * nb_memories (so that it always gives a tuple)
        end = p.nb_tensors * nm
        self.need_get = [itemgetter(*idx[a:b], end, end) for a, b in zip(ptr, ptr[1:])]

    def _prepare_priorities(self, p: ScheduleProblem, out_ptr, out_dst, out_m) -> None:
        """Initial per tensor and memory count of CNs still needing it there (Stream's instance
        priorities), and whether Stream has a priority there at all."""
        top = p.hardware.top_memory
        shape = (p.nb_tensors, len(p.hardware.memories))
        prio = np.zeros(shape, dtype=np.int64)
        has = np.zeros(shape, dtype=bool)
        # outputs: +1 per consuming CN of another layer, on the consumer's memory
        producers = np.repeat(np.arange(p.nb_cns), np.diff(out_ptr))
        x = p.operand_tensor[producers, O]
        inst = top[p.core[out_dst], out_m]
        _check_tops(inst)
        np.add.at(prio, (x, inst), 1)
        has[x, inst] = True
        # inputs and constants: the reuse count, on the CN's own memory
        cn, m = np.nonzero(p.operand_tensor[:, :O] >= 0)
        x = p.operand_tensor[cn, m]
        inst = top[p.core[cn], p.tensor_operand[x]]
        _check_tops(inst)
        prio[x, inst] = p.tensor_base_priority[x]
        has[x, inst] = True
        self.prio = prio.ravel().tolist()
        self.has_prio = has.ravel().tolist()
        self.prio_total = prio.sum(axis=1).tolist()
