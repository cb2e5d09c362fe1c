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


def _public_functions() -> list[tuple[str, object]]:
    """Every function of the package's public names and of the facade (``api``), by the name users call it."""
    from trec_rag_eval import api

    found = [(f"tre.{name}", getattr(tre, name)) for name in tre.__all__ if inspect.isfunction(getattr(tre, name))]
    seen = {id(function) for _, function in found}
    return found + [(f"api.{name}", getattr(api, name)) for name in api.__all__
                    if inspect.isfunction(getattr(api, name)) and id(getattr(api, name)) not in seen]


def _classes_in(hint: object) -> list[type]:
    """The package's classes a resolved hint names (``Iterator[RunOutcome]``, ``Qrels | Preferences``)."""
    if inspect.isclass(hint) and hint.__module__.startswith("trec_rag_eval"):
        return [hint]
    return [cls for argument in typing.get_args(hint) for cls in _classes_in(argument)]


@pytest.mark.parametrize("where,function", _public_functions(), ids=[where for where, _ in _public_functions()])
def test_the_type_hints_of_every_public_function_and_of_what_it_returns_resolve(where, function):
    # the facade's modules name their types for type checkers only (``if TYPE_CHECKING:``): get_type_hints failed
    # with "name 'Evaluation' is not defined" on tre.evaluate, compare, fuse, read_qrels, ... (15 of them)
    try:
        hints = typing.get_type_hints(function)
    except Exception as err:  # noqa: BLE001 - the name of what failed, in the assertion
        pytest.fail(f"{where}: {type(err).__name__}: {err}")
    for cls in _classes_in(hints.get("return")):  # RunOutcome, CrosscheckReport, JudgeReport, ...: their methods
        for item_name, item in _annotated(cls):
            try:
                typing.get_type_hints(item)
            except Exception as err:  # noqa: BLE001
                pytest.fail(f"{where} returns {item_name}: {type(err).__name__}: {err}")


def test_the_facade_names_the_classes_themselves():
    from collections.abc import Iterator

    from trec_rag_eval.compare.comparison import Comparison
    from trec_rag_eval.evaluation.evaluate import Evaluation, QueryResult
    from trec_rag_eval.tables import Qrels
    from trec_rag_eval.tables.judgment_kinds import Preferences

    assert typing.get_type_hints(tre.evaluate)["return"] is Evaluation
    assert typing.get_type_hints(tre.iter_evaluate)["return"] == Iterator[QueryResult]
    assert typing.get_type_hints(tre.read_qrels)["return"] == Qrels | Preferences
    assert typing.get_type_hints(tre.compare)["return"] == Comparison | tre.AllPairs


def test_the_facade_s_result_types_are_the_classes_type_checkers_see_and_are_imported_when_read():
    # api.result_types names each class twice: imported for type checkers, and its module for run time (HOMES)
    import ast
    import importlib

    from trec_rag_eval.api import result_types

    tree = ast.parse(inspect.getsource(result_types))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {alias.name: node.module for node in block.body for alias in node.names}
    assert imported == result_types.HOMES
    for name, home in result_types.HOMES.items():
        assert getattr(result_types, name) is getattr(importlib.import_module(home), name)
    with pytest.raises(AttributeError):
        result_types.Nothing  # noqa: B018


def test_the_facade_imports_its_result_types_only_when_their_hints_are_asked_for():
    code = ("import sys, typing, trec_rag_eval as tre\n"
            "tre.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, ['P@5'])\n"
            "print('trec_rag_eval.compare.comparison' in sys.modules, 'trec_rag_eval.llm.judging' in sys.modules)\n"
            "typing.get_type_hints(tre.compare), typing.get_type_hints(tre.judge)\n"
            "print('trec_rag_eval.compare.comparison' in sys.modules, 'trec_rag_eval.llm.judging' in sys.modules)")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert lines[:2] == ["False False", "True True"]
