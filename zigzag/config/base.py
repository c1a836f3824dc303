"""What every section of the workflow config shares: closed, strict, frozen, and its keys as given.

A section is a pydantic model that refuses unknown keys and any value not of its field's type (no
``"3"`` read as 3, no ``true`` as 1), cannot be changed once read, and remembers which keys the
user wrote and in which order (:meth:`Section.given`): a sweep's axes and the options an
experiment sets itself (rather than inherits) depend on both.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    WithJsonSchema,
    WrapValidator,
    model_validator,
)
from pydantic_core import PydanticCustomError

#: a plain folder name: experiment and sweep names (their results folders)
NAME_PATTERN = r"^[A-Za-z0-9_.+-]+$"
Name = Annotated[str, Field(pattern=NAME_PATTERN)]
#: one file, or a non-empty list of files
FileOrList = Union[StrictStr, Annotated[list[StrictStr], Field(min_length=1)]]


def _integral(value: float) -> float:
    if not value.is_integer():
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


def whole(**bounds) -> Any:
    """A whole number within ``bounds``: an int, or a float without a fraction (``2.0``, which a
    JSON-schema ``integer`` accepts too), kept as written."""
    schema = {"type": "integer", **{_BOUND_WORDS[k]: v for k, v in bounds.items()}}
    return Annotated[
        Union[
            Annotated[StrictInt, Field(**bounds)],
            Annotated[StrictFloat, Field(**bounds), AfterValidator(_integral)],
        ],
        WithJsonSchema(schema),
    ]


_BOUND_WORDS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum"}


def number(**bounds) -> Any:
    """A number kept as written (an int stays an int, as the results show it) within ``bounds``
    (``gt``, ``ge``, ``lt``); a JSON-schema ``number``."""
    schema = {"type": "number", **{_BOUND_WORDS[k]: v for k, v in bounds.items()}}
    return Annotated[
        Union[Annotated[StrictInt, Field(**bounds)], Annotated[StrictFloat, Field(**bounds)]],
        WithJsonSchema(schema),
    ]


class Section(BaseModel):
    """A mapping of the config with the keys its fields name, checked on reading."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler):
        section = handler(data)
        if isinstance(data, dict):
            section._order = tuple(str(key) for key in data)
        return section

    def given(self) -> dict[str, Any]:
        """The keys the user wrote, in their order, with their checked values (sections as dicts)."""
        values = self.model_dump(exclude_unset=True)
        return {key: values[key] for key in self._order if key in values}


def problem(message: str, field: str | None = None) -> PydanticCustomError:
    """A failed check of a value, said as ``message`` (what is wrong and how to fix it); from a
    section's own check, ``field`` names the field it is about (:func:`zigzag.config.check.explain`
    places the message there)."""
    return PydanticCustomError("problem", "{message}", {"message": message, "field": field})


def said(message: str, when=None) -> WrapValidator:
    """A field's own message (``{value!r}``: the value) for a value its type refuses (and for
    which ``when(value)`` holds, if given), where the field's meaning says more than its type."""

    def check(value, handler):
        try:
            return handler(value)
        except ValidationError:
            if when is not None and not when(value):
                raise
            raise problem(message.format(value=value)) from None

    return WrapValidator(check)
