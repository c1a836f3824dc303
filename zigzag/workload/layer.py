"""One layer of a workload: its loops, operands, relevancy and sizes.

Vocabulary (ZigZag's):

* *loop dims* (``K``, ``C``, ``OX`` ...) are the nested loops of the layer, with sizes;
* *operands* are the tensors of the equation: the output (first) and the inputs, in equation order;
* an operand's *relevant* (r) loops index it, its *irrelevant* (ir) loops do not, and
  *partially relevant* (pr) loops index it through a dimension relation such as ``ix = 2*ox + fx``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property

from zigzag.mapping.entry import MappingEntry

_EQUATION_TOKEN = re.compile(r"[A-Za-z0-9_=*+,]+")
_RELATION = re.compile(
    r"^\s*(\w+)\s*=\s*(?:(\w+)\s*\*\s*)?(\w+)\s*\+\s*(?:(\w+)\s*\*\s*)?(\w+)\s*$"
)


def normalise_equation(equation: str) -> str:
    """Canonical spelling of an equation: ``O[k] = W[k][c] * I[c]``."""
    text = equation.replace("+=", "=").replace("++", "+")
    for symbol in "*=+":
        text = text.replace(symbol, f" {symbol} ")
    return " ".join(text.split())


def parse_equation(equation: str) -> dict[str, tuple[str, ...]]:
    """Operands of an equation in order (output first) with their upper-cased index dims."""
    tokens = _EQUATION_TOKEN.findall(
        normalise_equation(equation).replace("[", " ").replace("]", " ")
    )
    operands: dict[str, list[str]] = {}
    current: list[str] | None = None
    expect_operand = True
    for token in tokens:
        if token in ("=", "*", "+"):
            expect_operand = True
            continue
        if expect_operand:
            current = operands.setdefault(token, [])
            expect_operand = False
        else:
            assert current is not None
            current.append(token.upper())
    return {name: tuple(dims) for name, dims in operands.items()}


@dataclass(frozen=True)
class DimRelation:
    """``data_dim = coef_a * dim_a + coef_b * dim_b`` (e.g. ``IX = 2*OX + 1*FX``)."""

    data_dim: str
    dim_a: str
    coef_a: int
    dim_b: str
    coef_b: int

    @classmethod
    def parse(cls, text: str) -> "DimRelation":
        match = _RELATION.match(text)
        if not match:
            raise ValueError(f"dimension relation '{text}' is not of the form 'ix=2*ox+1*fx'")
        data, ca, a, cb, b = match.groups()
        return cls(data.upper(), a.upper(), int(ca or 1), b.upper(), int(cb or 1))

    @property
    def reduced_coefficients(self) -> tuple[int, int]:
        """``coef_a`` and ``coef_b`` divided by their greatest common divisor."""
        g = math.gcd(self.coef_a, self.coef_b)
        return self.coef_a // g, self.coef_b // g

    def unique_count(self, size_a: int, size_b: int) -> int:
        """Distinct values of the data dim when dim_a takes size_a values and dim_b size_b."""
        a, b = self.reduced_coefficients
        return size_a * size_b - max(0, size_b - a) * (size_a - b)

    def __str__(self) -> str:
        return f"{self.data_dim} = {self.coef_a}*{self.dim_a} + {self.coef_b}*{self.dim_b}"


@dataclass(frozen=True, eq=False)
class Layer:
    """A layer with everything the search and the cost model need to know about it."""

    id: int
    name: str
    operator_type: str
    equation: str
    loop_sizes: dict[str, int]
    operand_dims: dict[str, tuple[str, ...]]
    relations: tuple[DimRelation, ...]
    precision: dict[str, int]
    operand_source: dict[str, int]
    mapping: MappingEntry
    given_pr_sizes: dict[str, int] = field(default_factory=dict)
    padding: dict[str, tuple[int, int]] = field(default_factory=dict)
    operand_roles: dict[str, str] = field(
        default_factory=dict
    )  # operand -> weight / activation / kv_cache
    vector_op: str | None = (
        None  # operation class of a vector layer (zigzag.workload.operators); None: MAC layer
    )

    # ----- operands -------------------------------------------------------------------------
    @property
    def operands(self) -> tuple[str, ...]:
        return tuple(self.operand_dims)

    @property
    def output(self) -> str:
        return self.operands[0]

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.operands[1:]

    @property
    def memory_operand_links(self) -> dict[str, str]:
        return self.mapping.memory_operand_links

    def memory_operand(self, operand: str) -> str:
        return self.memory_operand_links[operand]

    @cached_property
    def layer_operand_of(self) -> dict[str, str]:
        """Memory operand -> layer operand."""
        return {mem: op for op, mem in self.memory_operand_links.items()}

    @property
    def constant_operands(self) -> tuple[str, ...]:
        return tuple(op for op, src in self.operand_source.items() if src == self.id)

    @property
    def input_operand_source(self) -> dict[str, int]:
        return {op: src for op, src in self.operand_source.items() if src != self.id}

    @property
    def final_output_precision(self) -> int:
        return self.precision.get("O_final", self.precision[self.output])

    # ----- loops and relevancy --------------------------------------------------------------
    @property
    def loop_dims(self) -> tuple[str, ...]:
        return tuple(self.loop_sizes)

    def size(self, dim: str) -> int:
        return self.loop_sizes.get(dim, 1)

    @cached_property
    def total_macs(self) -> int:
        return math.prod(self.loop_sizes.values())

    @cached_property
    def _relation_dims(self) -> frozenset[str]:
        dims = set()
        for rel in self.relations:
            dims.update((rel.data_dim, rel.dim_a, rel.dim_b))
        return frozenset(dims)

    @cached_property
    def pr_map(self) -> dict[str, DimRelation]:
        return {rel.data_dim: rel for rel in self.relations}

    def is_pr_operand(self, operand: str) -> bool:
        return any(d in self.pr_map for d in self.operand_dims[operand])

    @cached_property
    def relevant(self) -> dict[str, tuple[str, ...]]:
        """r dims per operand (ZigZag's rules: size-1 dims dropped, except for a pr operand)."""
        result = {}
        for op, dims in self.operand_dims.items():
            if self.is_pr_operand(op):
                result[op] = tuple(d for d in dims if d not in self._relation_dims)
            else:
                result[op] = tuple(d for d in dims if self.size(d) != 1)
        return result

    @cached_property
    def irrelevant(self) -> dict[str, tuple[str, ...]]:
        """ir dims per operand, in loop order."""
        result = {}
        for op, dims in self.operand_dims.items():
            excluded = set(dims) | (self._relation_dims if self.is_pr_operand(op) else set())
            result[op] = tuple(
                d for d, s in self.loop_sizes.items() if d not in excluded and s != 1
            )
        return result

    @cached_property
    def partially_relevant(self) -> dict[str, dict[str, DimRelation]]:
        return {op: (dict(self.pr_map) if self.is_pr_operand(op) else {}) for op in self.operands}

    @cached_property
    def pr_sizes(self) -> dict[str, int]:
        """Full size of each pr data dim (given, or derived from the relation minus padding)."""
        sizes = {}
        for rel in self.relations:
            if rel.data_dim in self.given_pr_sizes:
                sizes[rel.data_dim] = self.given_pr_sizes[rel.data_dim]
            else:
                low, high = self.padding.get(rel.data_dim, (0, 0))
                unique = rel.unique_count(self.size(rel.dim_a), self.size(rel.dim_b))
                sizes[rel.data_dim] = int(unique - (low + high))
        return sizes

    def pr_extent(self, data_dim: str, sizes: dict[str, float]) -> int:
        """Clipped number of distinct data_dim values for (possibly fractional) loop sizes."""
        rel = self.pr_map[data_dim]
        a = int(sizes.get(rel.dim_a, 1))
        b = int(sizes.get(rel.dim_b, 1))
        return min(self.pr_sizes[data_dim], rel.unique_count(a, b))

    def footprint(self, operand: str, sizes: dict[str, float]) -> float:
        """Elements of ``operand`` touched by loops of the given cumulative sizes."""
        count = 1
        for dim in self.relevant[operand]:
            count *= sizes.get(dim, 1)
        for data_dim in self.partially_relevant[operand]:
            count *= self.pr_extent(data_dim, sizes)
        return count

    def operand_size_elem(self, operand: str) -> int:
        return self.footprint(operand, self.loop_sizes)

    def operand_size_bit(self, operand: str) -> int:
        return int(self.operand_size_elem(operand) * self.precision[operand])

    # ----- serialisation --------------------------------------------------------------------
    def to_spec(self) -> dict:
        """The workload-YAML form of this layer (plus its mapping entry under ``mapping``); ``operand_roles``
        and ``vector_op`` only when set, so the specs of MAC layers without roles are as they always were."""
        pr_dims = list(self.given_pr_sizes or self.padding)
        extra = {"operand_roles": dict(self.operand_roles)} if self.operand_roles else {}
        if self.vector_op is not None:
            extra["vector_op"] = self.vector_op
        return extra | {
            "id": self.id,
            "name": self.name,
            "operator_type": self.operator_type,
            "equation": self.equation,
            "dimension_relations": [str(r).replace(" ", "") for r in self.relations],
            "loop_dims": list(self.loop_sizes),
            "loop_sizes": list(self.loop_sizes.values()),
            "operand_precision": dict(self.precision),
            "operand_source": dict(self.operand_source),
            "pr_loop_dims": pr_dims or None,
            "pr_loop_sizes": [self.given_pr_sizes[d] for d in pr_dims]
            if self.given_pr_sizes
            else None,
            "padding": [list(self.padding[d]) for d in pr_dims] if self.padding else None,
            "mapping": self.mapping.to_dict(),
        }

    def signature(self) -> dict:
        """What determines this layer's cost: the spec without its identity and dependencies."""
        spec = self.to_spec()
        for key in ("id", "name", "operand_source"):
            spec.pop(key)
        spec["mapping"].pop("name")
        return spec

    def __repr__(self) -> str:
        return f"Layer({self.id}, {self.name!r})"

    def __str__(self) -> str:
        return self.name


def activation_and_weight_operands(layer: Layer) -> tuple[str, str]:
    """(activation, weight) layer operands, by ZigZag's rules for constant operands."""
    inputs = layer.inputs
    constants = [op for op in inputs if op in layer.constant_operands]
    if len(constants) == 1:
        weight = constants[0]
        return next(op for op in inputs if op != weight), weight
    if not constants:
        return inputs[1], inputs[0]
    if not layer.relations:
        return inputs[0], inputs[1]
    first_pr = layer.relations[0].data_dim
    act = next(op for op in inputs if first_pr in layer.operand_dims[op])
    return act, next(op for op in inputs if op != act)
