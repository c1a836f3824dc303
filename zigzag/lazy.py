"""Package attributes loaded on first use (PEP 562), so that importing one light module of a
package does not import its heavy siblings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module


def lazy_api(package: str, api: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: each name of ``api`` is read from the submodule
    it maps to (``{"run_sweep": "api"}`` → ``package.api.run_sweep``) when first asked for."""

    def __getattr__(name: str):
        if name not in api:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{api[name]}"), name)

    return __getattr__
