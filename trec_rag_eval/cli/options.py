"""The options every command spells the same way: one definition each, so ``-l/--level`` means the
same thing in ``evaluate``, ``compare``, ``report``, ``search``, ``crosscheck`` and ``validate``.

Older spellings stay accepted as second names (``--relevance-level`` for ``--level``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import click

from trec_rag_eval.api import QRELS_FORMATS, RUN_FORMATS
from trec_rag_eval.cli.params import COUNT, LEVEL, OutputPath
from trec_rag_eval.credentials import redact
from trec_rag_eval.io.atomic import write_stream
from trec_rag_eval.render.output_formats import choices, choices_help

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def say(text: str, nl: bool = True) -> None:
    """``click.echo`` to standard output through the one writer: a full disk or a closed pipe is one
    ``Error:`` line, not a traceback. A line said to a person: no credential in it (``credentials.redact``)."""
    write_stream(redact(text) + ("\n" if nl else ""), sys.stdout)


def level(help: str = "Relevance threshold: judged relevance >= LEVEL is relevant (binary measures).") -> Decorator:
    return click.option("-l", "--level", "--relevance-level", "relevance_level", type=LEVEL, default=1,
                        show_default=True, help=help)


def judged_only(help: str = "Drop retrieved documents without a judgment first.") -> Decorator:
    return click.option("-J", "--judged-only", is_flag=True, help=help)


def max_retrieved(help: str = "Keep only the top N documents of each query (after sorting).") -> Decorator:
    return click.option("-M", "--max-retrieved", type=COUNT, default=None, metavar="N", help=help)


def intersection(help: str = "Evaluate only queries in both qrels and run (trec_eval 9, pytrec_eval).") -> Decorator:
    return click.option("--intersection", is_flag=True, help=help)


def trec_eval_9(help: str = "Reproduce trec_eval 9.0.x / pytrec_eval: float32 scores, iprec cut at "
                            "floor(pR+0.9).") -> Decorator:
    return click.option("--trec-eval-9", "trec_eval_9", is_flag=True, help=help)


def output_options(*kinds: str, default: str | None = None, help: str | None = None,
                   only: Mapping[str, str] | None = None,
                   force_help: str = "Allow -o to replace an existing file (never an input).") -> Decorator:
    """The options of every command that prints results, one definition: ``-f/--format`` (the formats of the
    output-format registry that write these ``kinds``, said with what each is; ``help`` adds to that),
    ``-o/--output`` and ``--force``. The command writes with ``write_results`` (or ``io.atomic.output_to``).
    No ``kinds``: a command that prints text alone, ``-o`` and ``--force`` without ``-f`` (no registry entry)."""
    options: list[Decorator] = [output(), force(force_help)]
    if kinds:
        said = f"Output format: {choices_help(*kinds, only=only)}." + (f" {help}" if help else "")
        options.insert(0, click.option("-f", "--format", "output_format", type=click.Choice(choices(*kinds)),
                                       default=default, show_default=default is not None, help=said))

    def apply(function: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            function = option(function)
        return function

    return apply


def write_results(text: str, output: str | None, force: bool) -> None:
    """A command's results: printed, or written to ``-o`` through the one writer (``io.atomic``)."""
    from trec_rag_eval.io.atomic import write_output

    write_output(text, output, force)


def qrels_format() -> Decorator:
    return click.option("--qrels-format", type=click.Choice(QRELS_FORMATS), default="auto", show_default=True,
                        help="Format of QRELS (detected from the content by default): TREC, a JSON/JSONL dataset "
                             "(the French RAG tutorial's rows, ragas rows, LlamaIndex, ranx/pytrec_eval dict), BEIR "
                             "or Parquet.")


def run_format() -> Decorator:
    return click.option("--run-format", type=click.Choice(RUN_FORMATS), default="auto", show_default=True,
                        help="Format of RUN: a TREC run, JSON/JSONL results or Parquet (detected by default).")


def output(help: str = "Write to FILE, a local path, instead of stdout (refuses to overwrite without --force).",
           required: bool = False, metavar: str = "FILE") -> Decorator:
    # no explicit default: click 8.4 takes default=None for a value given, and lets a required -o be missing
    return click.option("-o", "--output", type=OutputPath(dir_okay=False), required=required, metavar=metavar,
                        help=help)


def force(help: str = "Allow -o to replace an existing file.") -> Decorator:
    return click.option("--force", is_flag=True, help=help)
