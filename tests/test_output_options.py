"""Every command that prints results takes the same output options, defined once (``cli.options.output_options``):
``-f/--format`` (the output-format registry's choices for what it writes), ``-o/--output FILE`` and ``--force``,
and writes through the one writer (``io.atomic``): a file appears whole, an existing one is kept without --force."""

from __future__ import annotations

import json
import os

import click
import pytest
from conftest import REPO, invoke

QRELS = os.path.join(REPO, "fixtures", "qrels.txt")
BM25 = os.path.join(REPO, "fixtures", "run_bm25.txt")
HYBRID = os.path.join(REPO, "fixtures", "run_hybrid.txt")
PRINTING = ("evaluate", "compare", "agree", "crosscheck", "validate", "plan")


def _command(name: str) -> click.Command:
    from trec_rag_eval.cli import cli

    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return command


@pytest.mark.parametrize("name", PRINTING)
def test_every_command_that_prints_results_has_the_three_output_options(name):
    options = {p.name: p for p in _command(name).params if isinstance(p, click.Option)}
    assert options["output_format"].opts == ["-f", "--format"]
    assert isinstance(options["output_format"].type, click.Choice)
    assert options["output_format"].help.startswith("Output format: ")
    assert options["output"].opts == ["-o", "--output"] and options["output"].metavar == "FILE"
    assert options["force"].opts == ["--force"] and options["force"].is_flag


def _published(tmp_path) -> str:
    reference = tmp_path / "published.txt"
    reference.write_text(invoke("-q", "-m", "P.5", "-m", "map", QRELS, BM25).stdout)
    return str(reference)


@pytest.mark.parametrize("command", [
    ["crosscheck", "-m", "P@5", QRELS, BM25],
    ["validate", QRELS, BM25, "{published}"],
])
def test_crosscheck_and_validate_write_to_o_as_they_print(tmp_path, command):
    args = [arg.replace("{published}", _published(tmp_path)) for arg in command]
    printed = invoke(*args, "-f", "json")
    assert printed.exit_code == 0, printed.stderr
    out = tmp_path / "out.json"
    written = invoke(*args, "-f", "json", "-o", str(out))
    assert written.exit_code == 0 and written.stdout == ""
    assert json.loads(out.read_text()) == json.loads(printed.stdout)
    refused = invoke(*args, "-o", str(out))  # an existing file is kept without --force, before any work
    assert refused.exit_code == 2 and "use --force" in refused.stderr and out.read_text() == printed.stdout
    assert invoke(*args, "-o", str(out), "--force").exit_code == 0
    assert not out.read_text().startswith("{")  # the text format, in place of the JSON


def test_an_output_that_is_an_input_is_refused_even_with_force(tmp_path):
    run = tmp_path / "run.txt"
    run.write_bytes(open(BM25, "rb").read())
    refused = invoke("crosscheck", QRELS, str(run), "-o", str(run), "--force")
    assert refused.exit_code == 2 and run.read_bytes() == open(BM25, "rb").read()


def test_a_command_that_prints_text_alone_takes_o_and_force_without_a_format(tmp_path):
    # output_options() with no kind of result: -o and --force as every command spells them, no -f (nothing to
    # choose from), no registry entry; the text written through the one writer
    from click.testing import CliRunner

    from trec_rag_eval.cli import options

    @click.command()
    @options.output_options()
    def toy(output: str | None, force: bool) -> None:
        options.write_results("two\nlines\n", output, force)

    params = {p.name: p.opts for p in toy.params}
    assert params == {"output": ["-o", "--output"], "force": ["--force"]}
    out = tmp_path / "out.txt"
    assert CliRunner().invoke(toy, ["-o", str(out)]).exit_code == 0
    assert out.read_text(encoding="utf-8") == "two\nlines\n"
    refused = CliRunner().invoke(toy, ["-o", str(out)])
    # outside the cli group (which words it with the flags), the writer's own refusal; the file kept
    assert f"{out} already exists; pass force=True" in str(refused.exception)
    assert out.read_text(encoding="utf-8") == "two\nlines\n"
    assert CliRunner().invoke(toy, ["-o", str(out), "--force"]).exit_code == 0
