"""The command-line reference (docs/cli.md) is generated from the click commands and kept current."""

from __future__ import annotations

import os

from conftest import REPO

DOCS_CLI = os.path.join(REPO, "docs", "cli.md")


def test_docs_cli_is_generated_from_the_commands():
    from trec_rag_eval.cli.reference import cli_reference

    with open(DOCS_CLI, encoding="utf-8") as handle:
        written = handle.read()
    assert written == cli_reference(), (
        "docs/cli.md is stale: regenerate it with `python -m trec_rag_eval.cli.reference > docs/cli.md`")


def test_the_reference_names_every_command_and_option():
    import click

    from trec_rag_eval.cli import cli, commands
    from trec_rag_eval.cli.reference import cli_reference

    text = cli_reference()
    root = click.Context(cli, info_name="trec-rag-eval")
    for name in commands():
        command = cli.get_command(root, name)
        assert f"## `trec-rag-eval {name}`" in text
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{name} {param.opts[0]} has no help"
                assert all(f"`{opt}`" in text for opt in param.opts)


def test_a_changed_help_makes_the_reference_stale(monkeypatch):
    # the check can fail: the text follows the option objects, not a copy of them
    import click

    from trec_rag_eval.cli import cli
    from trec_rag_eval.cli.reference import cli_reference

    command = cli.get_command(click.Context(cli), "measures")
    option = next(p for p in command.params if p.name == "markdown")
    monkeypatch.setattr(option, "help", "Something else.")
    assert "`--markdown`: Something else." in cli_reference()
