"""``typing.get_type_hints`` resolves every public class of the package and its public methods and properties (as
pydantic, cattrs, typeguard and editors ask for them), while ``import trec_rag_eval`` still imports neither polars
nor pandas: the names only type checkers import (``if TYPE_CHECKING:``) are there at run time too, the libraries as
modules imported when first read (``lazy_modules.LazyModule``)."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing

import pytest

import trec_rag_eval as tre

CLASSES = [name for name in tre.__all__ if inspect.isclass(getattr(tre, name))]


def _annotated(cls: type) -> list[tuple[str, object]]:
    """The class itself, and each public method and property the package defines on it (or on a base of its own)."""
    found: list[tuple[str, object]] = [(cls.__name__, cls)]
    for klass in cls.__mro__:
        if not klass.__module__.startswith("trec_rag_eval"):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") and name != "__init__":
                continue
            function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
            if inspect.isfunction(function):
                found.append((f"{klass.__name__}.{name}", function))
    return found


@pytest.mark.parametrize("name", CLASSES)
def test_the_type_hints_of_every_public_class_resolve(name):
    for where, item in _annotated(getattr(tre, name)):
        try:
            typing.get_type_hints(item)
        except Exception as err:  # noqa: BLE001 - the name of what failed, in the assertion
            pytest.fail(f"{where}: {type(err).__name__}: {err}")


def test_the_tables_name_the_libraries_own_classes():
    import polars as pl

    assert typing.get_type_hints(tre.Run)["data"] == pl.DataFrame | dict[str, typing.Any] | typing.Any
    assert typing.get_type_hints(tre.Qrels)["data"] == pl.DataFrame | dict[str, typing.Any]


def test_the_tables_import_neither_polars_nor_pandas_until_their_hints_are_asked_for():
    code = ("import sys, typing, trec_rag_eval as tre\n"
            "tre.evaluate({'q': {'a': 1}}, tre.Run({'q': {'a': 1.0}}))\n"
            "print('polars' in sys.modules, 'pandas' in sys.modules)\n"
            "typing.get_type_hints(tre.Run)\n"
            "print('polars' in sys.modules)")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert lines[:2] == ["False False", "True"]


def test_a_look_at_a_module_s_names_imports_nothing_and_survives_an_optional_library_missing():
    """doctest's finder and ``inspect.unwrap`` ask each name of a module for ``__wrapped__``: a stand-in answers such a
    question itself, without importing its library, so that pandas missing (an optional extra) does not stop
    ``pytest --doctest-modules`` over the package with "import of pandas halted", and polars present is not imported
    by a look."""
    code = ("import sys; sys.modules['pandas'] = None\n"
            "import doctest, trec_rag_eval.evaluation.evaluate as module\n"
            "print(len(doctest.DocTestFinder().find(module)) > 0, hasattr(module.pd, '__wrapped__'))\n"
            "print('polars' in sys.modules)")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split("\n")
    assert lines[:2] == ["True False", "False"]
