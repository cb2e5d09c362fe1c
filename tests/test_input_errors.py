"""An input named on the command line that is missing, unreadable, or a folder where a file is needed is said one
way by every command and every argument: ``Error: NAME: reason``, one line, exit 1, no usage screen (the evaluate
command's words, which are its readers'). The arguments are found in the click commands themselves, so a new
command or a new input option is covered without a line here.

The machine that runs the tests may be root (where chmod does not stop a read), so an unreadable file is injected
where it is asked about and where it is opened.
"""

from __future__ import annotations

import builtins
import errno
import os

import click
import pytest
from conftest import REPO, invoke

from trec_rag_eval.cli import cli, commands
from trec_rag_eval.cli.params import InputPath, OutputPath

FIXTURES = os.path.join(REPO, "fixtures")
# a valid file for a required input, by the start of its parameter's name; a run for the others
VALID = {"qrels": "qrels.txt", "dataset": "eval_dataset_fr.json", "corpus": "corpus_fr.jsonl", "run": "run_bm25.txt"}


def _command(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return command


def _paths(command: click.Command) -> list[click.Parameter]:
    return [param for param in command.params if isinstance(param.type, click.Path)]


def _inputs() -> list[tuple[str, str]]:
    """(command, parameter name) for every parameter of every command that names an input file."""
    return [(name, param.name or "") for name in commands() for param in _paths(_command(name))
            if isinstance(param.type, InputPath)]


INPUTS = _inputs()


def test_every_path_argument_says_whether_it_is_read_or_written():
    # a plain click.Path would check a file in click's words (the usage screen, exit 2): each is one or the other
    unsaid = [(name, param.name) for name in commands() for param in _paths(_command(name))
              if not isinstance(param.type, (InputPath, OutputPath))]
    assert unsaid == []
    names = {f"{command} {param}" for command, param in INPUTS}
    # a few that must be among them, so that the enumeration is seen to find arguments and options alike
    assert {"evaluate qrels", "evaluate runs", "evaluate zscores", "evaluate topics_path", "evaluate corpus",
            "evaluate doc_map", "compare runs", "fuse runs", "fuse optimize", "agree qrels_a", "plan qrels",
            "crosscheck qrels", "validate reference", "convert input_path", "convert dataset_path", "judge corpus",
            "generate-queries corpus", "search dataset", "search corpus"} <= names


def _arguments(command_name: str, target: str, bad: str, tmp_path) -> list[str]:
    """A command line of ``command_name`` whose every required parameter has a valid value, and ``target`` ``bad``."""
    args: list[str] = [command_name]
    for param in _command(command_name).params:
        if param.name == target:
            value = bad
        elif not param.required:
            continue
        elif isinstance(param.type, InputPath):
            value = _valid(command_name, param.name or "", target)
        elif isinstance(param.type, OutputPath):
            value = str(tmp_path / f"out-{param.name}.txt")
        else:
            value = "x"  # --model
        args += [value] if isinstance(param, click.Argument) else [param.opts[0], value]
    return args


def _valid(command: str, name: str, target: str) -> str:
    if command == "convert" and target in ("qrels_out", "topics_path"):  # judgments to write as qrels
        return os.path.join(FIXTURES, VALID["qrels"])
    start = next((start for start in VALID if name.startswith(start)), "run")
    return os.path.join(FIXTURES, VALID[start])


def _one_error(result) -> str:
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    return result.stderr


@pytest.mark.parametrize(("command", "param"), INPUTS, ids=[f"{c} {p}" for c, p in INPUTS])
def test_a_missing_input_is_one_line(tmp_path, monkeypatch, command, param):
    monkeypatch.chdir(tmp_path)
    result = invoke(*_arguments(command, param, "nope.txt", tmp_path))
    assert (result.exit_code, _one_error(result)) == (1, "Error: nope.txt: no such file\n")


FILES_ONLY = [(command, param) for command, param in INPUTS
              if not next(p for p in _command(command).params if p.name == param).type.dir_okay]


@pytest.mark.parametrize(("command", "param"), FILES_ONLY, ids=[f"{c} {p}" for c, p in FILES_ONLY])
def test_a_folder_where_a_file_is_needed_is_one_line(tmp_path, monkeypatch, command, param):
    monkeypatch.chdir(tmp_path)
    os.mkdir("folder")
    result = invoke(*_arguments(command, param, "folder", tmp_path))
    assert (result.exit_code, _one_error(result)) == (1, "Error: folder: is a directory, expected a file\n")


def test_the_folder_arguments_are_those_that_read_folders():
    # BEIR folders of judgments, folders of runs (evaluate), what convert converts: no other argument takes one
    folders = sorted(f"{c} {p}" for c, p in set(INPUTS) - set(FILES_ONLY))
    assert folders == ["agree qrels_a", "agree qrels_b", "compare qrels", "convert dataset_path", "convert input_path",
                       "crosscheck qrels", "evaluate qrels", "evaluate runs", "fuse optimize", "plan qrels",
                       "report qrels", "validate qrels"]


@pytest.mark.parametrize(("command", "param"), INPUTS, ids=[f"{c} {p}" for c, p in INPUTS])
def test_an_unreadable_input_is_one_line(tmp_path, monkeypatch, command, param):
    monkeypatch.chdir(tmp_path)
    with open(os.path.join(FIXTURES, VALID["run"]), "rb") as source, open("locked.txt", "wb") as locked:
        locked.write(source.read())
    real_open, real_access = builtins.open, os.access

    def guarded_open(file, *args, **kwargs):
        if os.fspath(file) in ("locked.txt", str(tmp_path / "locked.txt")):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real_open(file, *args, **kwargs)

    def guarded_access(path, mode, *args, **kwargs):
        if os.fspath(path) in ("locked.txt", str(tmp_path / "locked.txt")):
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(os, "access", guarded_access)
    result = invoke(*_arguments(command, param, "locked.txt", tmp_path))
    assert (result.exit_code, _one_error(result)) == (1, "Error: locked.txt: cannot read the file: Permission denied\n")


OUTPUTS = [(name, param.name or "") for name in commands() for param in _paths(_command(name))
           if isinstance(param.type, OutputPath)]
# what a command needs besides its required arguments before it looks at its outputs
# (the LLM commands: a key, and an endpoint that refuses at once, should they go as far as asking it)
ENDPOINT = ["--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"]
BESIDES = {"plan": ["--delta", "0.02"], "convert topics_path": ["--qrels", "qrels-out.txt"],
           "judge": ENDPOINT, "generate-queries": ENDPOINT}


def _written(command: str, param: str, out: str, tmp_path) -> list[str]:
    return [*_arguments(command, param, out, tmp_path), *BESIDES.get(command, []),
            *BESIDES.get(f"{command} {param}", [])]


@pytest.mark.parametrize(("command", "param"), OUTPUTS, ids=[f"{c} {p}" for c, p in OUTPUTS])
def test_an_output_into_a_missing_folder_is_one_line(tmp_path, monkeypatch, command, param):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    result = invoke(*_written(command, param, os.path.join("nowhere", "out.svg"), tmp_path))
    assert (result.exit_code, _one_error(result)) == (
        1, f"Error: cannot write {os.path.join('nowhere', 'out.svg')}: the folder nowhere does not exist\n")


@pytest.mark.parametrize(("command", "param"), OUTPUTS, ids=[f"{c} {p}" for c, p in OUTPUTS])
def test_an_output_that_is_a_folder_is_one_line(tmp_path, monkeypatch, command, param):
    # an output is checked by the one writer (api.check_outputs), not by click, whose words would come under
    # the usage screen with exit 2 ("Invalid value for '-o' / '--output': File 'out.svg' is a directory.")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    os.mkdir("out.svg")
    result = invoke(*_written(command, param, "out.svg", tmp_path))
    expected = "the name of a progress file" if param == "progress_file" else "a file name"
    assert (result.exit_code, _one_error(result)) == (
        1, f"Error: cannot write out.svg: is a folder, expected {expected}\n")


@pytest.mark.parametrize(("command", "param"), OUTPUTS, ids=[f"{c} {p}" for c, p in OUTPUTS])
def test_an_output_named_by_a_url_is_one_line(tmp_path, monkeypatch, command, param):
    # inputs may be URLs; what is written stays on this machine, whichever command writes it
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    result = invoke(*_written(command, param, "memory://bucket/out.svg", tmp_path))
    assert (result.exit_code, _one_error(result)) == (
        1, "Error: cannot write memory://bucket/out.svg: is a URL: outputs are written to local paths; write it "
           "here, then copy it with your storage's own tool\n")
