"""The command-line reference (``docs/cli.md``), generated from the click commands themselves.

Every command (``cli.commands``), in its order: its line of help, its usage, its docstring and each option with
its help, choices and default, as the command declares them (the same objects ``--help`` reads). The text is
written here, not by click's help formatter, so it does not change with click's version or the terminal's width.
``tests/test_cli_reference.py`` fails when ``docs/cli.md`` differs from it; regenerate it with
``python -m trec_rag_eval.cli.reference > docs/cli.md``.
"""

from __future__ import annotations

import inspect
import re
import sys
import textwrap

import click

from trec_rag_eval.cli import cli, commands

PROGRAM = "trec-rag-eval"
HEADER = f"""# Command-line reference

Every command of `{PROGRAM}`, its options, their choices and defaults, generated from the commands themselves
(`python -m trec_rag_eval.cli.reference > docs/cli.md`; `tests/test_cli_reference.py` fails when this file is
stale). Do not edit it by hand: edit the command's docstring or option help. `{PROGRAM} QRELS RUN` is short for
`{PROGRAM} evaluate QRELS RUN`.
"""

_MARKDOWN = re.compile(r"([\\`*<\[\]|])")


def cli_reference() -> str:
    """The Markdown text of ``docs/cli.md``."""
    root = click.Context(cli, info_name=PROGRAM, **cli.context_settings)
    parts = [HEADER, "| command | what it does |", "|---|---|"]
    parts += [f"| [`{name}`](#{PROGRAM}-{name}) | {_escape(short)} |" for name, (_, short) in commands().items()]
    parts.append("")
    for name, (_, short) in commands().items():
        command = cli.get_command(root, name)
        assert command is not None  # every name of commands() is a command
        parts.append(_command(click.Context(command, info_name=name, parent=root, **command.context_settings), short))
    return "\n".join(parts)


def _command(ctx: click.Context, short: str) -> str:
    command = ctx.command
    usage = " ".join([PROGRAM, str(ctx.info_name), *command.collect_usage_pieces(ctx)])
    lines = [f"## `{PROGRAM} {ctx.info_name}`", "", _escape(short), "", "```text", usage, "```", ""]
    lines += _docstring(command.help or "")
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    # click makes the help option once per command, from the first context that asks: said here from ours
    options = [p for p in command.params if isinstance(p, click.Option)]
    if arguments:
        lines += ["Arguments: " + ", ".join(f"`{_argument(p)}`" for p in arguments) + ".", ""]
    lines += ["Options:", ""]
    lines += [_option(p) for p in options]
    lines.append(f"- {', '.join(f'`{opt}`' for opt in ctx.help_option_names)}: Show this message and exit.")
    lines.append("")
    return "\n".join(lines)


def _docstring(text: str) -> list[str]:
    """The docstring's paragraphs: a ``\\b`` paragraph (kept as written by click) as a text block, the others
    as one Markdown paragraph each."""
    lines: list[str] = []
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        if paragraph.startswith("\b"):
            block = textwrap.dedent(paragraph[1:].strip("\n"))
            lines += ["```text", *(line.rstrip() for line in block.splitlines()), "```", ""]
        elif paragraph.strip():
            lines += [_escape(" ".join(line.strip() for line in paragraph.splitlines())), ""]
    return lines


def _argument(param: click.Argument) -> str:
    name = (param.name or "").upper()
    return f"{name}..." if param.nargs == -1 else name


def _option(param: click.Option) -> str:
    names = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
    value = _value(param)
    head = f"{names} `{value}`" if value else names
    notes = []
    if param.multiple:
        notes.append("repeatable")
    if param.required:
        notes.append("required")
    default = _default(param)
    if default is not None:
        notes.append(f"default: `{default}`")
    text = f"- {head}" + (f" ({'; '.join(notes)})" if notes else "")
    return text + (f": {_escape(' '.join(param.help.split()))}" if param.help else "")


def _value(param: click.Option) -> str:
    """What follows the option on the command line: its metavar, its choices, nothing for a flag."""
    if param.is_flag or param.count:
        return ""
    if param.metavar:
        return param.metavar
    if isinstance(param.type, click.Choice):
        return "|".join(str(choice) for choice in param.type.choices)
    return param.type.name.upper()


def _default(param: click.Option) -> str | None:
    """The default ``--help`` shows (``show_default``), as text."""
    shown = param.show_default
    if not shown:
        return None
    if isinstance(shown, str):
        return shown
    value = param.default
    if value is None or param.is_flag or callable(value) or type(value).__name__ == "Sentinel":
        return None
    return str(value)


def _escape(text: str) -> str:
    return _MARKDOWN.sub(r"\\\1", text)


if __name__ == "__main__":
    sys.stdout.write(cli_reference())
