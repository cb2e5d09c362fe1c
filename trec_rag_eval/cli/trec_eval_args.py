"""trec_eval's command line as ``trec-rag-eval`` reads it: its long options, its ``-v``, ``-R``, ``-T``, ``-D``,
``-o``, and its errors as one ``Error:`` line.

trec_eval (``getopt_long``) spells each option two ways: ``-q`` and ``--query_eval_wanted``, ``-l 2`` and
``--level_for_rel=2``. The long spellings are read here as the short ones (``trec_eval_spellings``), so a
command written for trec_eval runs as it is; the ``evaluate`` command declares the short ones. A mistake on
that command line is said in one ``Error:`` line (``TrecEvalCommand``), never click's usage screen.
"""

from __future__ import annotations

from typing import Any

import click

from trec_rag_eval.errors import UsageError
from trec_rag_eval.syntax import quote

LONG_OPTIONS = {
    "--query_eval_wanted": "-q", "--complete_rel_info_wanted": "-c", "--level_for_rel": "-l",
    "--nosummary": "-n", "--Debug_level": "-D", "--Judged_docs_only": "-J", "--Number_docs_in_coll": "-N",
    "--Max_retrieved_per_topic": "-M", "--Rel_info_format": "-R", "--Results_format": "-T", "--Zscore": "-Z",
    "--Output_old_results_format": "--Output_old_results_format",
}
"""trec_eval's long options (trec_eval.c) and the short option each stands for; ``--help``, ``--version``
and ``--measure`` are spelt as ours."""

REL_INFO_FORMATS = {"qrels": "trec", "qrels_jg": "qrels_jg", "prefs": "prefs", "qrels_prefs": "qrels_prefs"}
"""trec_eval's ``-R`` formats and the judgments format each is read as."""
RESULTS_FORMATS = {"trec_results": "trec"}
"""trec_eval's ``-T`` formats and the run format each is read as."""


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


def rel_info_format(value: str | None, qrels_format: str) -> str:
    """The judgments format of ``-R VALUE`` (with ``--qrels-format``, which it must not contradict)."""
    if value is None:
        return qrels_format
    if value not in REL_INFO_FORMATS:
        raise UsageError(f"-R {quote(value)}: trec_eval reads judgments as {', '.join(REL_INFO_FORMATS)} "
                         "(--qrels-format also reads JSON, BEIR and Parquet judgments)")
    chosen = REL_INFO_FORMATS[value]
    if qrels_format not in ("auto", chosen):
        raise UsageError(f"-R {value} and --qrels-format {qrels_format} contradict each other: give one")
    return chosen


def results_format(value: str | None, run_format: str) -> str:
    """The run format of ``-T VALUE`` (with ``--run-format``, which it must not contradict)."""
    if value is None:
        return run_format
    if value not in RESULTS_FORMATS:
        raise UsageError(f"-T {quote(value)}: trec_eval reads runs as trec_results only (--run-format also reads "
                         "JSON results and Parquet)")
    if run_format not in ("auto", "trec"):
        raise UsageError(f"-T {value} and --run-format {run_format} contradict each other: give one")
    return RESULTS_FORMATS[value]


def refuse_debug_level(value: str | None) -> None:
    """trec_eval's ``-D``: its debugging dumps are not reproduced, so it is refused rather than ignored."""
    if value is not None:
        raise UsageError(f"-D {quote(value)}: trec_eval's debugging output is not reproduced; drop -D (to evaluate "
                         "one query, as -D N.QUERY does, keep only that query's judgments)")


def refuse_obsolete_output(value: str | None) -> None:
    """trec_eval's ``--Output_old_results_format``: obsolete there, changing nothing."""
    if value is not None:
        raise UsageError("--Output_old_results_format is obsolete in trec_eval and changes nothing: drop it")


class TrecEvalCommand(click.Command):
    """A command whose usage mistakes are one ``Error:`` line (exit 2), as the library's are: trec_eval's
    options either work or are refused in words, never with click's usage screen."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, list(args), parent, **extra)
        except click.exceptions.Exit:
            raise
        except click.UsageError as err:
            raise UsageError(_worded(err, list(args))) from None


def _worded(err: click.UsageError, args: list[str]) -> str:
    """click's message, or what went wrong with ``-o`` when trec_eval's (which takes no value) was meant."""
    options = args[:args.index("--")] if "--" in args else args
    if "-o" in options and isinstance(err, click.MissingParameter):
        taken = options[options.index("-o") + 1] if options.index("-o") + 1 < len(options) else ""
        return (f"-o names the output file here, and took {quote(taken)}, which leaves no RUN: trec_eval's -o "
                "(obsolete, taking no value) has no place here: drop it")
    return err.format_message()


def refuse_option_as_output(output: str | None, options: list[str]) -> None:
    """``-o -q``: the next option taken as the output's name (trec_eval's -o takes none)."""
    if output is not None and output.startswith("-") and output != "-" and output.split("=")[0] in options:
        raise UsageError(f"-o names the output file, and took the option {quote(output)}: trec_eval's -o "
                         "(obsolete, taking no value) has no place here: drop it")
