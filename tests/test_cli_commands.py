"""The commands are found, not listed: a module of ``trec_rag_eval/cli/`` that declares ``COMMANDS = {name: help}``
is a command module (its ``<name>_command``), read from its source without importing it; any other module
(options, params, ...) is a helper. ``--help`` and the quick start import no command module but the one that runs."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from trec_rag_eval.cli import _declared, commands

PACKAGE = Path(__file__).resolve().parent.parent / "trec_rag_eval"
CLI = PACKAGE / "cli"
HELPERS = {"chunks", "llm", "options", "params", "reference"}


def test_every_command_defined_is_found_and_every_module_found_defines_its_commands():
    found = commands()
    assert list(found) == ["evaluate", *sorted(set(found) - {"evaluate"})]  # the default first, then by name
    defined = {}
    for file in sorted(CLI.glob("*.py")):
        if file.stem == "__init__":
            continue
        module = importlib.import_module(f"trec_rag_eval.cli.{file.stem}")
        for value in vars(module).values():
            if isinstance(value, click.Command) and value.callback.__module__ == module.__name__:
                defined[value.name] = module.__name__
    assert {name: module for name, (module, _) in found.items()} == defined
    for name, (module, _) in found.items():
        assert getattr(importlib.import_module(module), f"{name.replace('-', '_')}_command").name == name
    assert not {module.rsplit(".", 1)[1] for module, _ in found.values()} & HELPERS
    assert HELPERS <= {file.stem for file in CLI.glob("*.py")}  # the helpers are there, and are no commands


def test_help_lists_every_command_with_its_declared_line_and_imports_none():
    code = ("import sys\nfrom trec_rag_eval.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('trec_rag_eval.cli.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *help_lines, loaded = done.stdout.splitlines()
    assert loaded == "[]"
    listed = "\n".join(help_lines).split("Commands:\n", 1)[1]
    assert [line.split()[0] for line in listed.splitlines() if not line.startswith(" " * 5)] == list(commands())
    assert "  fuse              Fuse runs into one (RRF, CombSUM/MNZ, weighted sum, Borda,\n" in listed


def test_the_quick_start_imports_the_evaluate_command_alone():
    fixtures = PACKAGE.parent / "fixtures"
    code = (f"import sys\nfrom trec_rag_eval.cli import main\ntry:\n    main([{str(fixtures / 'qrels.txt')!r}, "
            f"{str(fixtures / 'run_bm25.txt')!r}])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('trec_rag_eval.cli.')), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = eval(done.stderr.splitlines()[-1])
    assert "trec_rag_eval.cli.evaluate" in loaded
    assert not {module for module, _ in commands().values()} - {"trec_rag_eval.cli.evaluate"} & set(loaded)


@pytest.mark.parametrize(("text", "declared"), [
    ('"""A command."""\n\nCOMMANDS = {"toy": "A toy."}\n\n\ndef toy_command(): ...\n', {"toy": "A toy."}),
    ('import click\nCOMMANDS = {\n    "a": "One.",  # a comment\n    "b-c": ("Two, "\n            "long."),\n}\n'
     'X = 1\n',
     {"a": "One.", "b-c": "Two, long."}),
    ('"""A helper: no COMMANDS = here."""\nLEVELS = {"a": "b"}\n', {}),
])
def test_a_declaration_is_read_as_written(text, declared):
    assert _declared(text, "toy.py") == declared


@pytest.mark.parametrize("text", ['COMMANDS = {"toy": toy_command}\n', 'COMMANDS = ["toy"]\n',
                                  'COMMANDS = {"toy": "A toy."\n'])
def test_a_declaration_that_is_no_literal_of_names_and_lines_is_refused_with_its_file(text):
    refused = r"^toy.py: COMMANDS must be a dict literal \{command name: its line of help\}$"
    with pytest.raises(ValueError, match=refused):
        _declared("\n" + text, "toy.py")


TOY = '''"""``trec-rag-eval toy``: a command module dropped in, nothing else changed."""

import click

COMMANDS = {"toy": "Say hello (a toy command)."}


@click.command("toy")
@click.argument("who")
def toy_command(who: str) -> None:
    """Say hello to WHO."""
    click.echo(f"hello {who}")
'''


def test_a_command_module_dropped_in_is_a_command_and_nothing_else_changes(tmp_path):
    # Recipe 3's registration is the module itself: a copy of the package with one more module of cli/
    shutil.copytree(PACKAGE, tmp_path / "trec_rag_eval", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "trec_rag_eval" / "cli" / "toy.py").write_text(TOY, encoding="utf-8")
    code = ("from trec_rag_eval.cli import main\nimport sys\nfor args in (['--help'], ['toy', 'you'], ['toy', '-h']):\n"
            "    try:\n        main(args)\n    except SystemExit:\n        pass\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "  toy               Say hello (a toy command).\n" in done.stdout
    assert "\nhello you\n" in done.stdout
    assert "Usage: trec-rag-eval toy [OPTIONS] WHO\n\n  Say hello to WHO.\n" in done.stdout


def test_an_install_without_sources_still_lists_and_runs_its_commands(tmp_path):
    # a package shipped as bytecode alone (compileall's legacy .pyc beside each module, the .py files removed):
    # there is no source to read the declarations from, so each command module is imported to read them
    import compileall

    shutil.copytree(PACKAGE, tmp_path / "trec_rag_eval", ignore=shutil.ignore_patterns("__pycache__"))
    assert compileall.compile_dir(tmp_path / "trec_rag_eval", legacy=True, quiet=1)
    for source in (tmp_path / "trec_rag_eval").rglob("*.py"):
        source.unlink()
    fixtures = PACKAGE.parent / "fixtures"
    code = ("from trec_rag_eval.cli import main\nfor args in (['--help'], "
            f"[{str(fixtures / 'qrels.txt')!r}, {str(fixtures / 'run_bm25.txt')!r}, '-m', 'P@5']):\n"
            "    try:\n        main(args)\n    except SystemExit:\n        pass\n")
    runs = [subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(root)}) for root in (tmp_path, PACKAGE.parent)]
    assert runs[0].returncode == 0, runs[0].stderr
    listed = {line.split()[0] for line in runs[0].stdout.split("Commands:\n")[1].split("\n\n")[0].splitlines()
              if line.startswith("  ") and not line.startswith("   ")}
    assert listed == set(commands())
    assert runs[0].stdout == runs[1].stdout  # the help and the evaluation of the package with its sources
