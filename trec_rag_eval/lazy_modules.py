"""Modules named in annotations and imported only when read: ``typing.get_type_hints`` resolves a public class's
annotations (``data: pl.DataFrame | Columns``) to the libraries' own classes, while ``import trec_rag_eval`` (and
a small evaluation) imports neither polars nor pandas; and names a module gives whose modules it imports when a name
is first read (``lazy_names``: the package's public names, the facade's result types)."""

from __future__ import annotations

from importlib import import_module

# not `from typing import ...`: the package imports this module, and importing it loads no typing (test_imports.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


class LazyModule:
    """Stands for the module ``name`` in a module's globals, where type checkers import it under ``TYPE_CHECKING``
    (``else: pl = LazyModule("polars")``): reading an attribute imports the module (once; Python keeps it) and
    gives the module's own attribute, so nothing is imported until an annotation is resolved (a dunder name, which
    tools ask of any object, is no attribute here)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            # what tools ask of any name (doctest's finder and inspect.unwrap: __wrapped__) is answered here, without
            # importing the library: a look imports nothing, and an optional library missing (pandas) stops no look
            raise AttributeError(attribute)
        return getattr(import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported when first read>"


def lazy_names(namespace: dict[str, Any], homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module's ``__getattr__`` (PEP 562) for the names of ``homes`` (name -> the module that defines it): a name is
    imported from its module when first read and kept in the module's ``namespace`` (its ``globals()``), so that the
    next read is a plain attribute; any other name is an AttributeError naming the module."""
    module = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(import_module(homes[name]), name)
        namespace[name] = value
        return value

    return __getattr__
