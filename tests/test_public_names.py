"""One public name, one meaning: no two modules of the package define a public function or class of the
same name. The facade (``trec_rag_eval.api``, re-exported by the package) keeps the user's names
(``evaluate``, ``compare``, ``read_run``, ...); the layers under it name what they do (``evaluate_tables``,
``compare_runs``, ``read_trec_run``, ...). Thirteen names were defined twice with different behaviour."""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import trec_rag_eval as tre

PACKAGE = Path(tre.__file__).resolve().parent


def _public_definitions() -> dict[str, list[str]]:
    """name -> the modules defining it at their top level (a function, overloads included, or a class)."""
    where: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            definition = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            if definition and not node.name.startswith("_"):
                where[node.name].add(module)
    return {name: sorted(modules) for name, modules in where.items()}


def test_no_public_name_is_defined_twice():
    twice = {name: modules for name, modules in _public_definitions().items() if len(modules) > 1}
    assert twice == {}


def test_the_facade_keeps_the_users_names_and_the_layers_say_what_they_do():
    defined = _public_definitions()
    for name in ["evaluate", "compare", "crosscheck", "validate", "read_qrels", "read_run", "agree", "fuse",
                 "convert", "context_cost", "check_outputs"]:
        [module] = defined[name]
        assert module.startswith("trec_rag_eval.api."), name  # one module of the facade
    assert defined["evaluate_tables"] == ["trec_rag_eval.evaluation.evaluate"]
    assert defined["compare_runs"] == ["trec_rag_eval.compare"]
    assert defined["read_trec_run"] == ["trec_rag_eval.io.trec.qrels_runs"]
    assert defined["write_trec_run"] == ["trec_rag_eval.io.writers"]
    # the package's parse_measure is the function of that name and reads every notation; parse_notation reads
    # ir-measures notation only
    assert defined["parse_measure"] == ["trec_rag_eval.measures.requests"]
    assert tre.parse_measure.__name__ == "parse_measure"
    assert defined["parse_notation"] == ["trec_rag_eval.measures.ir_notation"]


def test_the_check_finds_a_name_defined_twice(tmp_path, monkeypatch):
    # the test can fail: a package with two modules defining one name is caught
    package = tmp_path / "trec_rag_eval"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def evaluate():\n    pass\n")
    (package / "b.py").write_text("class evaluate:\n    pass\n\ndef _private():\n    pass\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert _public_definitions() == {"evaluate": ["trec_rag_eval.a", "trec_rag_eval.b"]}
