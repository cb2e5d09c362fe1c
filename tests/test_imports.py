"""Heavy dependencies load only when a command needs them (STYLE: lazy imports)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout.split()
    return set(out)


HEAVY = {"polars", "numpy", "scipy", "matplotlib", "ir_measures", "openai", "bm25s"}


def test_importing_the_package_loads_nothing_heavy():
    assert not HEAVY & _modules_after("import trec_rag_eval")


def test_help_loads_nothing_heavy():
    code = "from trec_rag_eval.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    assert not HEAVY & _modules_after(code)


@pytest.mark.parametrize("command", ["evaluate", "convert", "measures"])
def test_evaluating_does_not_load_the_optional_extras(command):
    # each subcommand imports what it uses: none of these needs scipy, plotting, an LLM client or BM25
    code = f"import trec_rag_eval.cli.{command}"
    assert not {"scipy", "matplotlib", "ir_measures", "openai", "bm25s"} & _modules_after(code)
