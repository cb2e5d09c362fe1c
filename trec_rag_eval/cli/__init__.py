"""The ``trec-rag-eval`` command: a thin click layer over the library.

``trec-rag-eval QRELS RUN`` is short for ``trec-rag-eval evaluate QRELS RUN``. Subcommands are found by
what their modules declare (``commands``) and imported only when they run, so a small evaluation starts fast.
Library errors become one ``Error: ...`` line here, at a single boundary: exit 1 for bad data, 2 for bad usage.
"""

from __future__ import annotations

import functools
import gc
import importlib
import io
import os
import sys
import warnings
from typing import Any

import click

from trec_rag_eval.allocators import settings_for_the_command
from trec_rag_eval.call_scope import one_call
from trec_rag_eval.credentials import redact
from trec_rag_eval.errors import OutputError, TrecRagEvalError, TrecRagEvalWarning, Worded


@functools.cache
def commands() -> dict[str, tuple[str, str]]:
    """Every command: name -> (its module, its line in ``--help``), ``evaluate`` (the default command) first, then
    by name. A module of this package is a command module when it declares, at the start of a line, ``COMMANDS =
    {name: line of help, ...}`` (a literal): read from its source, not imported, so ``--help`` and the quick start
    import no command but the one that runs. The command ``name`` is the module's ``<name>_command`` (``-`` as
    ``_``). A helper module (options, params, ...) declares none and is no command. A package without its sources
    (bytecode alone, a zip) has each module of ``cli/`` imported to read its ``COMMANDS``."""
    found: dict[str, tuple[str, str]] = {}
    folder = os.path.dirname(__file__)
    files = sorted(file for file in os.listdir(folder) if file.endswith(".py") and file != "__init__.py") \
        if os.path.isdir(folder) else []
    for file in files:
        with open(os.path.join(folder, file), encoding="utf-8") as source:
            _add(found, _declared(source.read(), file), f"{__name__}.{file[:-3]}", file)
    if not files:  # no sources to read (bytecode alone, a zip): each module imported, its COMMANDS asked for
        import pkgutil

        for module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
            name = f"{__name__}.{module}"
            _add(found, getattr(importlib.import_module(name), "COMMANDS", {}), name, module)
    return {name: found[name] for name in sorted(found, key=lambda name: (name != "evaluate", name))}


def _add(found: dict[str, tuple[str, str]], declared: dict[str, str], module: str, file: str) -> None:
    """A module's declared commands added to those ``found``; a name declared twice is refused."""
    for name, line in declared.items():
        if name in found:
            raise ValueError(f"{file}: the command {name!r} is declared by {found[name][0]} too")
        found[name] = (module, line)


def _declared(text: str, file: str) -> dict[str, str]:
    """A module's ``COMMANDS = {...}``: the shortest run of its lines from there that is a whole literal."""
    import ast

    start = text.find("\nCOMMANDS = ")
    if start < 0:
        return {}
    lines = text[start + len("\nCOMMANDS = "):].split("\n")
    for end in range(1, len(lines) + 1):
        try:
            declared = ast.literal_eval("\n".join(lines[:end]))
        except SyntaxError:  # not whole yet: one more line
            continue
        except ValueError:  # whole, and not a literal
            break
        if isinstance(declared, dict) and all(isinstance(item, str) for pair in declared.items() for item in pair):
            return declared
        break
    raise ValueError(f"{file}: COMMANDS must be a dict literal {{command name: its line of help}}")


FLAGS = {
    "force": "use --force",
    "qrels_format": "--qrels-format",
    "run_format": "--run-format",
    "base_url": "--base-url",
    "calibrate": "--calibrate",
    "cluster": "--cluster ",
    "engine": "--engine ",
    "tokenizer": "--tokenizer ",
    "corpus": "--corpus",
    "topics": "--topics",
    "primary": "--no-primary",
    "measures": "-m",
    "n": "-n",
    "no_summary": "-n",
    "per_query": "-q",
    "plot": "--plot",
    "optimize": "--optimize",
    "k": "--k ",
    "weights": "--weights",
    "measure": "-m",
    "folds": "--folds",
    "seed": "--seed",
    "n_resamples": "--n-resamples",
    "correction": "--correction",
    "norm": "--norm ",
    "step": "--step",
    "ks": "--ks",
    "relevance_level": "-l",
    "max_retrieved": "-M",
    "judged_only": "-J",
    "intersection": "--intersection",
    "doc_id_pattern": "--doc-id-pattern '",
    "doc_map": "--doc-id-pattern or --doc-map",
    "stream": "--stream",
    "shards": "--shards",
    "id": "--id-key ",
    "complete": "-c",
    "baseline": "--baseline ",
    "all_pairs": "--all-pairs",
    "json_out": "--json",
    "qrels_out": "--qrels",
    "run_out": "--run",
    "topics_out": "--topics",
    "topics_file": "--topics ",
    "kind": "--kind",
    "max_chars": "--max-chars",
    "delta": "--delta",
    "alpha": "--alpha",
    "power": "--power",
    "confidence": "--confidence",
    "ci_width": "--ci-width",
    "queries": "--queries",
    "zscores": "-Z",
    "crosscheck": "--crosscheck",
    "test": "--test ",
    "interval": "--interval",
    "judgments": "--judgments",
    "format": "--format ",
    "trec_format": "--qrels-format trec",
    "qrels_jg_format": "--qrels-format qrels_jg",
    "prefs_format": "--qrels-format prefs",
    "qrels_prefs_format": "--qrels-format qrels_prefs",
}
"""How the command line sets a library parameter that an error message names (``TrecRagEvalError.worded``)."""


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(commands())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in commands():
            return None
        module, _ = commands()[name]
        command: click.Command = getattr(importlib.import_module(module), f"{name.replace('-', '_')}_command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, short) for name, (_, short) in commands().items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="trec-rag-eval", prog_name="trec-rag-eval")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Retrieval evaluation you can trust: trec_eval's exact conventions, RAG formats, comparisons.

    \b
    trec-rag-eval QRELS RUN              evaluate (short for: evaluate QRELS RUN)
    trec-rag-eval -m all_trec -q QRELS RUN
    trec-rag-eval compare QRELS RUN_A RUN_B
    trec-rag-eval measures               every measure, its definition and names
    """
    # one command is one call of the library: its standard input or pipes read once, whatever it calls
    ctx.with_resource(one_call())


LONG_OPTIONS = {
    "--query_eval_wanted": "-q", "--complete_rel_info_wanted": "-c", "--level_for_rel": "-l",
    "--nosummary": "-n", "--Debug_level": "-D", "--Judged_docs_only": "-J", "--Number_docs_in_coll": "-N",
    "--Max_retrieved_per_topic": "-M", "--Rel_info_format": "-R", "--Results_format": "-T", "--Zscore": "-Z",
    "--Output_old_results_format": "--Output_old_results_format",
}
"""trec_eval's long options (trec_eval.c) and the short option each stands for; ``--help``, ``--version``
and ``--measure`` are spelt as ours."""


def trec_eval_spellings(args: list[str]) -> list[str]:
    """The arguments of ``evaluate`` with trec_eval's long options as the short ones (``--level_for_rel=2`` is
    ``-l 2``); ``-v`` or ``--version`` anywhere among the options asks for the version, as in trec_eval."""
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            return out + args[index:]
        if arg in ("-v", "--version"):
            return ["--version"]
        name, equals, value = arg.partition("=")
        if name in LONG_OPTIONS:
            out += [LONG_OPTIONS[name], value] if equals else [LONG_OPTIONS[name]]
        else:
            out.append(arg)
    return out


def _route(args: list[str]) -> list[str]:
    """Send ``trec-rag-eval [options] QRELS RUN`` to the evaluate command, trec_eval's spellings of its
    options read as ours (``trec_eval_spellings``)."""
    if not args or args[0] in ("-h", "--help", "--version") or (args[0] in commands() and args[0] != "evaluate"):
        return args
    rest = trec_eval_spellings(args[1:] if args[0] == "evaluate" else args)
    return rest if rest == ["--version"] else ["evaluate", *rest]


def tell(note: Worded | str, kind: str = "warning") -> None:
    """One line on stderr for something the library tells (a ``notes.Note``, a ``TrecRagEvalWarning``):
    ``Warning: ...`` or ``Note: ...``, its parameters said as this command line's flags."""
    kind = getattr(note, "kind", kind)
    # the library speaks of its parameters (judged_only); here the flags are the way to say them
    text = note.worded(FLAGS) if isinstance(note, Worded) else str(note)
    click.echo(f"{'Note' if kind == 'note' else 'Warning'}: {redact(text)}", err=True)


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    if issubclass(category, TrecRagEvalWarning):
        tell(message if isinstance(message, Worded) else str(message))
    else:
        _default_show_warning(message, category, filename, lineno, file, line)


_default_show_warning = warnings.showwarning


def _flush_stdout() -> None:
    """What is still buffered: a full disk or a closed pipe is reported once, as the one writer
    reports it (``io.atomic.write_stream``), not by the interpreter at exit. io.atomic is imported
    only on failure, so ``--help`` stays light (io loads numpy)."""
    try:
        sys.stdout.flush()
    except OSError as err:
        from trec_rag_eval.io.atomic import STANDARD_OUTPUT, discard

        discard(sys.stdout)
        raise OutputError(STANDARD_OUTPUT, err.strerror or str(err)) from None


def _without_secrets(text: str) -> str:
    """The last line of defence: no credential a command sent (an API key, a URL's password, in any form)
    and no URL's password reaches the terminal (``credentials.redact``)."""
    return redact(text)


def main(args: list[str] | None = None) -> None:
    """Console-script entry point: one clean error line, never a traceback, for known errors. Given ``args``, the
    command runs in its caller's process (a test, a notebook), which gets its collector's threshold back after it
    (``allocators.settings_for_the_command`` raises it for the command alone)."""
    collector = gc.get_threshold()
    settings_for_the_command()  # the command owns its process (see trec_rag_eval.allocators)
    try:
        _command(args)
    finally:
        if args is not None:
            gc.set_threshold(*collector)


def _command(args: list[str] | None) -> None:
    """``main``'s command: its output written, its errors said, and the process ended (os._exit for the console
    script) or its exit code raised (SystemExit)."""
    argv = _route(list(sys.argv[1:] if args is None else args))
    try:
        with warnings.catch_warnings():
            # the library's warnings (warnings.warn, so a notebook shows them) become one stderr line each
            warnings.simplefilter("always", TrecRagEvalWarning)
            warnings.showwarning = _show_warning
            code = cli.main(args=argv, prog_name="trec-rag-eval", standalone_mode=False)
        _flush_stdout()
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as err:
        # click's own wording (usage, hint), the key redacted from it; its message is final in click 8.5
        shown = io.StringIO()
        err.show(file=shown)
        sys.stderr.write(_without_secrets(shown.getvalue()))
        sys.exit(err.exit_code)
    except TrecRagEvalError as err:
        # the library speaks of its parameters (force=True); here the flags are the way to say them
        click.echo(f"Error: {_without_secrets(err.worded(FLAGS))}", err=True)
        sys.exit(err.exit_code)
    except BrokenPipeError:  # a reader closed the pipe during a click.echo: said once, like any output error
        from trec_rag_eval.io.atomic import STANDARD_OUTPUT, discard

        discard(sys.stdout)
        click.echo(f"Error: {OutputError(STANDARD_OUTPUT, 'Broken pipe')}", err=True)
        sys.exit(OutputError.exit_code)
    # without standalone mode click returns the code of ctx.exit(n) / Exit(n) instead of raising it
    code = code if isinstance(code, int) else 0
    if args is None:
        # the console script: everything is written, so skip tearing down millions of objects
        # one by one (a third of a second on a 7-million-line run)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
