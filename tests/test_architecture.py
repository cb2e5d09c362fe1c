"""The package's shape: layers that import one way (import-linter's contracts in pyproject.toml), no
import cycle between modules, and a library that speaks of parameters, not of the CLI's flags."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from conftest import pyproject

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "trec_rag_eval"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each a set of modules that
    import one another in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_between_modules():
    # function-level (lazy) imports count too: a cycle hidden in a function is still a cycle
    graph = grimp.build_graph("trec_rag_eval")
    assert _cycles(graph) == []


def test_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for name in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a")
    assert _cycles(graph) == [["p.a", "p.b"]]


def test_layer_contracts_hold():
    command = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(command).exists():
        pytest.fail("lint-imports is missing: pip install -e '.[test]' (import-linter)")
    result = subprocess.run([command, "--config", str(REPO / "pyproject.toml")], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _message_strings(path: Path) -> list[tuple[int, str]]:
    """String literals of a module that are not docstrings (a string standing alone as a statement):
    messages, labels, reasons."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_the_library_names_parameters_not_flags():
    # the CLI maps parameters to its flags at its boundary (cli.FLAGS); below it no message says "--force"
    offending = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        for line, text in _message_strings(path):
            for flag in FLAG.findall(text):
                offending.append(f"{path.relative_to(REPO)}:{line}: {flag} in {text[:60]!r}")
    assert offending == []


def test_the_command_line_contract_names_every_module_below_the_facade():
    """'The command line goes through the facade' lists what cli may not import; a module added to a
    lower layer (an io reader, say) must be added there, or cli could import it unseen."""
    config = pyproject()
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"]
                  if c["name"] == "The command line goes through the facade"]
    forbidden = set(contract["forbidden_modules"])
    allowed = {"trec_rag_eval.io.atomic"}  # the one writer of outputs
    modules = {"trec_rag_eval.io." + path.stem for path in (PACKAGE / "io").glob("*.py") if path.stem != "__init__"}
    unlisted = sorted(modules - forbidden - allowed)
    assert not unlisted, f"add to the contract's forbidden_modules: {unlisted}"


MAX_MODULE_LINES = 500
"""The one cap on a module's length, the facade's modules included: CONTRIBUTING states it with this number."""


def test_no_module_of_the_package_is_over_500_lines() -> None:
    """Modules stay small enough to read whole (split by responsibility when one grows past 500 lines): a rule a
    session once broke without a test noticing."""
    sizes = {path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGE.rglob("*.py")}
    assert len(sizes) > 100  # the package itself was read
    assert {path: lines for path, lines in sizes.items() if lines > MAX_MODULE_LINES} == {}
