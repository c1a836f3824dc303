"""The search options of the config (``defaults``, an experiment, a hardware sweep), made from the
option table (:data:`zigzag.mapping_search.options.OPTIONS`): one field per row, with its type, choices,
bounds, default and meaning. A grid sweep (``sweeps``) may give any option a list of values; those
are checked once the grid is expanded (:func:`zigzag.mapping_search.options.resolve_options`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, create_model

from zigzag.config.base import Section, number, whole
from zigzag.mapping_search.options import OPTIONS, Option


def _field(option: Option) -> tuple[Any, Any]:
    """``(type, FieldInfo)`` of one option."""
    bounds = {
        key: value
        for key, value in (("ge", option.minimum), ("gt", option.above))
        if value is not None
    }
    if option.choices:
        kind: Any = Literal[option.choices]
    elif option.type is int:
        kind = whole(**bounds)
    elif option.type is float:
        kind = number(**bounds)
    else:
        kind = Annotated[option.type, Field(**bounds)]
    return kind, Field(option.default, description=option.help)


#: every option of the table, each with its default; :meth:`Section.given` tells the ones set
Options = create_model(
    "Options",
    __base__=Section,
    __doc__="Search options: unset ones take the config's defaults, then the table's.",
    **{option.name: _field(option) for option in OPTIONS},
)

#: the options of a grid sweep: a value, or a list of values (one axis of the grid)
SweepOptions = create_model(
    "SweepOptions",
    __base__=Section,
    __doc__="Search options of a grid sweep: each a value or a list of values.",
    **{
        option.name: (Any, Field(None, description=f"{option.help}; or a list of values"))
        for option in OPTIONS
    },
)
