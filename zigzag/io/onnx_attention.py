"""What the operator-model import needs to know about a model's tensors before building layers.

* the *data path*: tensors reachable from an embedding lookup (a Gather of a constant table) or a float
  graph input; the rest is computed from constants and integer inputs (input preprocessing);
* the KV cache: past K/V graph inputs (float, rank 4), their appends (a Concat of a past tensor, possibly
  moved or sliced to a sliding window first, and the new token's) and what is moved or scaled from them;
* grouped-query attention: a matrix product whose K or V went through an ``Expand`` of the kv heads
  (``repeat_kv``), or whose query rows fold the query heads of one kv head (packed forms, rank 4 or 5), is
  written with ``H`` = kv heads and ``G`` = query heads per kv head; the attention scores get the canonical
  shape ``[B, H*G, S, keys]`` either way;
* causal prefill: an attention whose mask, evaluated with all tokens present, masks exactly the entries
  above the diagonal (and, with a sliding window, those before each query's window) is split into
  query-row blocks (``causal_split``).
"""

from __future__ import annotations

import logging
import math

import numpy as np
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from zigzag.workload import operators as ops
from zigzag.workload.operators import causal_split

logger = logging.getLogger(__name__)

MOVES = frozenset(
    {
        "Reshape",
        "Transpose",
        "Squeeze",
        "Unsqueeze",
        "Expand",
        "Flatten",
        "Cast",
        "Identity",
        "Dropout",
        "CastLike",
        "Tile",
    }
)
SCALING = frozenset({"Mul", "Div"})
FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE}
MASKED_BELOW = -1e4  # an additive mask entry below this masks the score


class AttentionPlan:
    """The data path, KV cache, grouped-query and causal facts of a model (see the module docstring)."""

    def __init__(self, model, causal_blocks: int, causal: bool | None):
        self.model = model
        self.graph = model.model.graph
        self.shapes = model.shapes
        self.producer = {t: n for n in self.graph.node for t in n.output}
        self.consumers: dict[str, list] = {}
        for node in self.graph.node:
            for tensor in node.input:
                self.consumers.setdefault(tensor, []).append(node)
        self.initializers = {i.name for i in self.graph.initializer}
        self.inputs = {
            i.name: i.type.tensor_type for i in self.graph.input if i.name not in self.initializers
        }
        self.path: set[str] = set()
        self.kv: set[str] = set()
        self.past: set[str] = set()
        self.canon: dict[str, list[int]] = {}  # tensor -> canonical shape (grouped-query attention)
        self.groups: dict[str, int] = {}  # tensor -> query heads per kv head, along an attention
        self.attention: dict[
            str, tuple[int, int, int]
        ] = {}  # MatMul output -> (kv heads, groups, rows)
        self.causal_nodes: dict[
            str, tuple[int, int]
        ] = {}  # node's first output -> (query rows, keys)
        self.causal_scores: set[str] = set()  # outputs of the causal Q.K^T products
        self.windows: dict[
            str, int
        ] = {}  # causal node's first output -> sliding window (keys per query)
        self.blocks = causal_blocks
        self._key_scales: frozenset[str] | None = None
        self._find_path()
        self._find_repeats()
        self._find_attention()
        if causal_blocks > 0 and causal is not False:
            self._find_causal(causal)

    # ----- tensor facts ----------------------------------------------------------------------------
    def shape(self, tensor: str) -> list[int]:
        return self.canon.get(tensor) or self.shapes.get(tensor) or []

    def dims(self, tensor: str, shape: list[int]) -> dict[str, int]:
        return ops.vector_dims(self.canon.get(tensor) or shape)

    def is_constant(self, tensor: str) -> bool:
        """An initializer, a Constant, a folded value, or one of these moved (e.g. an Identity of a weight)."""
        while tensor not in self.path:
            if tensor in self.initializers or tensor in self.shapes.constants:
                return True
            node = self.producer.get(tensor)
            if node is None or node.op_type not in MOVES | {"Constant"}:
                return False
            if node.op_type == "Constant":
                return True
            tensor = node.input[0]
        return False

    def is_weight(self, tensor: str) -> bool:
        return self.is_constant(tensor)

    def is_scalar(self, tensor: str) -> bool:
        """A constant of at most one element: an immediate of the operation, not an operand."""
        shape = self.shapes.get(tensor)
        return self.is_constant(tensor) and shape is not None and math.prod(shape) <= 1

    def is_key_scale(self, proto) -> bool:
        """A scaling of the keys folded into the query's (:func:`key_scales`)."""
        if self._key_scales is None:
            self._key_scales = key_scales(self.graph, self.is_scalar)
        return bool(proto.output) and proto.output[0] in self._key_scales

    def on_path_tensor(self, tensor: str) -> bool:
        return tensor in self.path

    def on_path(self, proto) -> bool:
        """Does the node compute data-path tensors (from activations, or an embedding lookup)?"""
        return any(t in self.path for t in proto.output)

    def role(self, tensor: str) -> str:
        if tensor in self.kv:
            return "kv_cache"
        return "weight" if self.is_weight(tensor) else "activation"

    # ----- data path and KV cache ------------------------------------------------------------------
    def _find_path(self) -> None:
        for name, tensor_type in self.inputs.items():
            if tensor_type.elem_type in FLOAT_TYPES:
                self.path.add(name)
                if len(tensor_type.shape.dim) == 4:
                    self.past.add(name)
        index = self.shapes.index_values | set(self.shapes.constants)
        for node in self.graph.node:
            seeded = (
                node.op_type == "Gather"
                and self.is_constant(node.input[0])
                and node.input[0] not in index
            )
            data_in = [t for t in node.input if t in self.path and t not in index]
            if (seeded or data_in) and not self.model.is_shape_arithmetic(_Proxy(node)):
                self.path.update(node.output)
            moves = node.op_type in MOVES | {"Slice"} or (
                node.op_type == "Concat" and len(data_in) == 1
            )
            if moves and data_in and all(t in self.past for t in data_in):
                self.past.update(node.output)
        self.kv = set(self.past)
        for node in self.graph.node:
            data_in = [t for t in node.input if t in self.path]
            if node.op_type == "Concat" and self.is_cache_append(node):
                self.kv.update(node.output)
            elif (
                data_in
                and all(t in self.kv for t in data_in)
                and (node.op_type in MOVES or node.op_type in SCALING)
            ):
                self.kv.update(node.output)

    def is_cache_append(self, proto) -> bool:
        data = [t for t in proto.input if t in self.path]
        return len(data) == 2 and sum(t in self.past for t in data) == 1

    def cache_new_input(self, proto) -> str:
        return next(t for t in proto.input if t in self.path and t not in self.past)

    def is_nan_guard(self, proto) -> bool:
        """``IsNaN(p)`` feeding only ``Where(IsNaN(p), c, p)``, or that ``Where``."""
        if proto.op_type == "IsNaN":
            users = self.consumers.get(proto.output[0], [])
            return bool(users) and all(
                u.op_type == "Where" and u.input[0] == proto.output[0] for u in users
            )
        if proto.op_type == "Where":
            cond = self.producer.get(proto.input[0])
            return cond is not None and cond.op_type == "IsNaN" and cond.input[0] in proto.input[1:]
        return False

    # ----- grouped-query attention -----------------------------------------------------------------
    def _find_repeats(self) -> None:
        """Tensors holding kv heads repeated to their query groups (``repeat_kv``: an Expand of the kv heads,
        then moves and scalings): a vector layer on them does the work once per kv head, so their canonical
        shape has the kv heads (rank 4: heads on axis 1; rank 5: the group axis dropped)."""
        repeats: dict[str, int] = {}
        for node in self.graph.node:
            if not node.output or not node.input or node.input[0] not in self.path:
                continue
            out = node.output[0]
            if node.op_type == "Expand":
                groups = self._expand_ratio(node)
            elif (
                node.input[0] in repeats
                and (node.op_type in MOVES or node.op_type in SCALING)
                and all(
                    t == node.input[0] or self.is_scalar(t) or t not in self.path
                    for t in node.input[1:]
                )
            ):
                groups = repeats[node.input[0]]
            else:
                continue
            shape = self.shapes.get(out) or []
            if not groups:
                continue
            if len(shape) == 5 and shape[2] == groups:
                canon = shape[:2] + shape[3:]
            elif len(shape) == 4 and shape[1] % groups == 0:
                canon = [shape[0], shape[1] // groups] + shape[2:]
            else:
                continue
            repeats[out] = groups
            self.canon[out] = canon
            self.groups[out] = groups

    def _expand_ratio(self, node) -> int | None:
        """The factor an Expand repeats the kv heads by (1 -> g on the group axis after the heads of a
        ``[B, H, 1, S, d]`` tensor, or on the heads of a ``[B, 1, S, d]`` one), else None."""
        before, after = self.shapes.get(node.input[0]), self.shapes.get(node.output[0])
        if not before or not after or len(before) != len(after) or len(after) not in (4, 5):
            return None
        axis = 2 if len(after) == 5 else 1
        changed = [i for i, (x, y) in enumerate(zip(before, after)) if y != x]
        if changed != [axis] or before[axis] != 1 or after[axis] <= 1:
            return None
        return after[axis]

    def _find_attention(self) -> None:
        for node in self.graph.node:
            data_in = [t for t in node.input if t in self.path]
            if node.op_type == "MatMul" and len(data_in) == 2:
                self._attention_matmul(node)
            elif data_in and node.output and node.op_type not in ("MatMul", "Gemm"):
                source = next((t for t in data_in if t in self.canon), None)
                out_shape = self.shapes.get(node.output[0])
                if source and out_shape == self.shapes.get(source):
                    self.canon[node.output[0]] = self.canon[source]
                    self.groups[node.output[0]] = self.groups[source]

    def _attention_matmul(self, node) -> None:
        a, b = node.input[0], node.input[1]
        sa, sb, out = self.shapes.get(a), self.shapes.get(b), self.shapes.get(node.output[0])
        if not sa or not sb or len(sa) not in (4, 5) or len(sa) != len(sb):
            return
        if len(sa) == 5:
            if sb[2] != 1 or sa[2] <= 1:
                return
            heads, groups, rows = sa[1], sa[2], sa[3]
        else:
            groups = self.groups.get(a) or self._repeated(b) or self._folded(a, sa)
            if not groups:
                return
            if (
                a in self.canon
            ):  # attention probabilities, already in the canonical [B, H*G, S, keys]
                query = self.canon[a]
            elif self._repeated(b):  # queries over all query heads, K / V repeated to them
                query = sa
            else:  # the group's query heads folded into the rows (and so the queries scaled before)
                query = [sa[0], sa[1] * groups, sa[2] // groups, sa[3]]
                for t in self._ancestors(a):
                    if self.shapes.get(t) == sa:
                        self.canon[t] = query
            heads, rows = query[1] // groups, query[2]
        self.attention[node.output[0]] = (heads, groups, rows)
        self.canon[node.output[0]] = [out[0], heads * groups, rows, out[-1]]
        self.groups[node.output[0]] = groups

    def _ancestors(self, tensor: str):
        """Tensors a tensor is moved or scaled from (itself first), through single-input moves."""
        while tensor:
            yield tensor
            node = self.producer.get(tensor)
            if node is None or node.op_type not in MOVES | SCALING:
                return
            tensor = node.input[0]

    def _repeated(self, tensor: str) -> int | None:
        """Query heads per kv head if ``tensor`` went through an Expand of its kv heads (repeat_kv)."""
        for t in self._ancestors(tensor):
            node = self.producer.get(t)
            if node is not None and node.op_type == "Expand":
                return self._expand_ratio(node)
        return None

    def _folded(self, tensor: str, shape: list[int]) -> int | None:
        """Query heads per kv head folded into the rows of ``tensor`` (packed form): a Reshape on its way that
        moves a factor of the head axis into the rows (``[B, H*g, S, d] -> [B, H, g*S, d]`` or
        ``[B, H, g, S, d] -> [B, H, g*S, d]``). Sizes alone never decide: a multi-head query whose head count
        happens to divide its rows is not folded."""
        for t in self._ancestors(tensor):
            node = self.producer.get(t)
            if node is None or node.op_type != "Reshape":
                continue
            before, after = self.shapes.get(node.input[0]) or [], self.shapes.get(t) or []
            if len(after) != 4 or after[1] != shape[1] or after[2] != shape[2] or not after[1]:
                return None
            if (
                len(before) == 5
                and before[:2] == after[:2]
                and before[2] > 1
                and before[2] * before[3] == after[2]
                and before[4] == after[3]
            ):
                return before[2]
            if (
                len(before) == 4
                and before[0] == after[0]
                and before[3] == after[3]
                and before[1] > after[1]
                and before[1] % after[1] == 0
                and before[2] * (before[1] // after[1]) == after[2]
            ):
                return before[1] // after[1]
            return None
        return None

    # ----- causal prefill --------------------------------------------------------------------------
    def _find_causal(self, forced: bool | None) -> None:
        for node in self.graph.node:
            if node.op_type not in ("Softmax", "ReduceMax") or not self.on_path(node):
                continue
            qk, mask = self._score_source(node.input[0])
            if qk is None:
                continue
            rows, keys = self.shape(qk.output[0])[-2:]
            causal, window = (True, None) if forced else self._causal_mask(mask, rows, keys)
            if rows > 1 and causal:
                self._mark_causal(qk, rows, keys, window)

    def _score_source(self, tensor: str):
        """(the QK MatMul producing attention scores, the mask use (node, mask tensor) on the way) or (None, None)."""
        mask = None
        while tensor in self.path:
            node = self.producer.get(tensor)
            if node is None:
                return None, None
            if node.op_type == "MatMul":
                return node, mask
            data = [t for t in node.input if t in self.path]
            off = [t for t in node.input if t and t not in self.path and not self.is_scalar(t)]
            if node.op_type in ("Add", "Where") and off and mask is None:
                mask = (node, off[0])
            if len(data) != 1:
                return None, None
            tensor = data[0]
        return None, None

    def _causal_mask(self, mask, rows: int, keys: int) -> tuple[bool, int | None]:
        """(is the mask causal, its sliding window or None): the last ``rows`` of ``keys`` positions query; a
        causal mask hides the keys after each query, a sliding window also those ``window`` or more before."""
        if mask is None:
            return False, None
        node, tensor = mask
        value = self._evaluate(tensor)
        if value is None or value.ndim < 2 or value.shape[-2:] != (rows, keys):
            return False, None
        value = value.reshape(-1, rows, keys)[0]
        if node.op_type == "Add":
            masked = value < MASKED_BELOW
        else:
            masked = ~value.astype(bool) if node.input[1] in self.path else value.astype(bool)
        query = np.arange(rows)[:, None] + keys - rows
        key = np.arange(keys)[None, :]
        if (masked == (key > query)).all():
            return True, None
        window = int((~masked).sum(axis=1).max())
        if 0 < window < keys and (masked == ((key > query) | (key <= query - window))).all():
            return True, window
        return False, None

    def _evaluate(self, tensor: str) -> np.ndarray | None:
        """The value of an off-path tensor with every token present (integer inputs all ones)."""
        needed, stack, nodes = set(), [tensor], []
        while stack:
            t = stack.pop()
            node = self.producer.get(t)
            if node is None or id(node) in needed:
                continue
            needed.add(id(node))
            stack.extend(i for i in node.input if i)
        nodes = [n for n in self.graph.node if id(n) in needed]
        used = {i for n in nodes for i in n.input}
        inits = [i for i in self.graph.initializer if i.name in used]
        if any(i.data_location == TensorProto.EXTERNAL for i in inits):
            return None
        feeds = {}
        for name, tensor_type in self.inputs.items():
            if name in used:
                shape = [d.dim_value or 1 for d in tensor_type.shape.dim]
                dtype = helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
                feeds[name] = np.ones(shape, dtype=dtype)
        graph = helper.make_graph(
            nodes,
            "mask",
            [helper.make_tensor_value_info(n, self.inputs[n].elem_type, None) for n in feeds],
            [helper.make_empty_tensor_value_info(tensor)],
            inits,
        )
        try:
            model = helper.make_model(graph, opset_imports=list(self.model.model.opset_import))
            return np.asarray(ReferenceEvaluator(model).run(None, feeds)[0])
        except Exception as exc:  # noqa: BLE001 - a mask that cannot be evaluated is not taken as causal
            logger.info(
                "attention mask '%s' could not be evaluated (%s); attention counted in full",
                tensor,
                exc,
            )
            return None

    def _mark_causal(self, qk, rows: int, keys: int, window: int | None) -> None:
        scores = {qk.output[0]}
        self.causal_nodes[qk.output[0]] = (rows, keys)
        self.causal_scores.add(qk.output[0])
        if window:
            self.windows[qk.output[0]] = window
        for node in self.graph.node:
            data = [t for t in node.input if t in scores]
            if (
                not data
                or not node.output
                or node.output[0] in self.causal_nodes
                and node is not qk
            ):
                continue
            self.causal_nodes[node.output[0]] = (rows, keys)
            if window:
                self.windows[node.output[0]] = window
            if node.op_type == "MatMul":
                continue
            for out in node.output:
                if self.shape(out)[-2:] == [rows, keys]:
                    scores.add(out)

    def blocked(self, proto, dims: dict[str, int], first_id: int, make) -> list[dict]:
        """``make(id, dims)``'s layers, once per causal block when the node is in a causal attention (the
        last two dims being its query rows and keys)."""
        key = proto.output[0]
        if key not in self.causal_nodes or list(dims.values())[-2:] != list(self.causal_nodes[key]):
            made = make(first_id, dims)
            return made if isinstance(made, list) else [made]
        rows, keys = self.causal_nodes[key]
        names = list(dims)
        layers: list[dict] = []
        split = causal_split(rows, self.blocks, keys - rows, self.windows.get(key))
        for index, (block_rows, block_keys) in enumerate(split):
            made = make(
                first_id + len(layers), dims | {names[-2]: block_rows, names[-1]: block_keys}
            )
            for layer in made if isinstance(made, list) else [made]:
                layer["name"] = f"{layer['name']}/causal{index}"
                layers.append(layer)
        return layers


def key_scales(graph, is_scalar) -> frozenset[str]:
    """Outputs of the scalar ``Mul``/``Div`` nodes that scale the keys of a Q.K^T product whose queries are
    scaled too (sdpa's form, each by the fourth root of the head width). Scaling the keys is scaling the
    scores, so the key scale is folded into the query's: a kernel never rewrites the cache to scale it
    (docs/models/operators.md). ``is_scalar``: is a tensor a constant of at most one element."""
    producer = {t: n for n in graph.node for t in n.output}

    def scale_behind(tensor: str):
        node = producer.get(tensor)
        while node is not None and node.op_type in MOVES and node.input:
            node = producer.get(node.input[0])
        if node is None or node.op_type not in SCALING or len(node.input) != 2:
            return None
        if node.op_type == "Div" and not is_scalar(node.input[1]):
            return None
        return node if sum(not is_scalar(t) for t in node.input) == 1 else None

    found = set()
    for node in graph.node:
        if node.op_type == "MatMul" and len(node.input) == 2:
            query, key = scale_behind(node.input[0]), scale_behind(node.input[1])
            if query is not None and key is not None and query is not key:
                found.add(key.output[0])
    return frozenset(found)


class _Proxy:
    """A bare NodeProto in the form ``_Model.is_shape_arithmetic`` takes."""

    def __init__(self, proto):
        self.proto = proto
        self.where = f"node '{proto.name}' ({proto.op_type})"


def plan_attention(model, causal_blocks: int, causal: bool | None) -> AttentionPlan:
    return AttentionPlan(model, causal_blocks, causal)
