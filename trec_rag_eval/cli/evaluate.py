"""``trec-rag-eval [options] QRELS RUN [RUN ...]``: trec_eval's command line as ``trec-rag-eval`` reads it, every
output format that writes evaluations (``render.output_formats``).

trec_eval (``getopt_long``) spells each option two ways: ``-q`` and ``--query_eval_wanted``, ``-l 2`` and
``--level_for_rel=2``. The long spellings are read as the short ones when the command is chosen
(``cli.trec_eval_spellings``), so a command written for trec_eval runs as it is; the ``evaluate`` command
declares the short ones, and reads trec_eval's ``-v``, ``-R``, ``-T``, ``-D``, ``-o``. A mistake on that
command line is said in one ``Error:`` line (``TrecEvalCommand``), never click's usage screen.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from trec_rag_eval.cli import options, tell
from trec_rag_eval.cli.chunks import doc_map_options, id_key_option
from trec_rag_eval.cli.llm import judgments_option
from trec_rag_eval.cli.params import COUNT, InputPath, Integer, QrelsPath
from trec_rag_eval.credentials import redact
from trec_rag_eval.errors import TrecRagEvalError, UsageError
from trec_rag_eval.render.output_formats import EVALUATION, OUTPUT_FORMATS, context_token_formats
from trec_rag_eval.syntax import quote

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {"evaluate": "Evaluate runs against qrels (the default command)."}

if TYPE_CHECKING:
    from pathlib import Path


# -- trec_eval's command line ------------------------------------------------------------------------------

REL_INFO_FORMATS = {"qrels": "trec", "qrels_jg": "qrels_jg", "prefs": "prefs", "qrels_prefs": "qrels_prefs"}
"""trec_eval's ``-R`` formats and the judgments format each is read as."""
RESULTS_FORMATS = {"trec_results": "trec"}
"""trec_eval's ``-T`` formats and the run format each is read as."""


def rel_info_format(value: str | None, qrels_format: str) -> str:
    """The judgments format of ``-R VALUE`` (with ``--qrels-format``, which it must not contradict)."""
    return _trec_eval_format("-R", value, REL_INFO_FORMATS, "--qrels-format", qrels_format,
                             f"judgments as {', '.join(REL_INFO_FORMATS)} (--qrels-format also reads JSON, BEIR and "
                             "Parquet judgments)")


def results_format(value: str | None, run_format: str) -> str:
    """The run format of ``-T VALUE`` (with ``--run-format``, which it must not contradict)."""
    return _trec_eval_format("-T", value, RESULTS_FORMATS, "--run-format", run_format,
                             "runs as trec_results only (--run-format also reads JSON results and Parquet)")


def _trec_eval_format(flag: str, value: str | None, formats: dict[str, str], option: str, given: str,
                      reads: str) -> str:
    """The format trec_eval's ``flag VALUE`` names (``formats``), or ``given`` (the ``option``'s) without it; a
    VALUE trec_eval does not know, or one the option contradicts, is refused."""
    if value is None:
        return given
    if value not in formats:
        raise UsageError(f"{flag} {quote(value)}: trec_eval reads {reads}")
    chosen = formats[value]
    if given not in ("auto", chosen):
        raise UsageError(f"{flag} {value} and {option} {given} contradict each other: give one")
    return chosen


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


# -- the command ---------------------------------------------------------------------------------------------
@click.command(cls=TrecEvalCommand, context_settings={"help_option_names": ["-h", "--help"]})
# a file, or a BEIR folder; files, or folders of runs: their readers say which is missing, when they come to it
@click.argument("qrels", type=QrelsPath())
@click.argument("runs", nargs=-1, required=True, type=InputPath())
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="Measure(s): trec_eval names (P.5,10  map  ndcg_cut.10  all_trec  official) or our "
                   "notation (P@5  nDCG@10  AP  RR  F1@5  HitRate@5). Repeatable. Default: the RAG set "
                   "P/R/F1/HitRate/nDCG at 1,3,5,10 plus MRR and MAP.")
@click.option("-q", "--per-query", is_flag=True, help="Also print each query's values (trec_eval -q).")
@click.option("-c", "complete", is_flag=True,
              help="Evaluate every qrels query, missing ones scored 0 (the default already; accepted "
                   "for trec_eval compatibility, and reproduces its num_rel total under -c).")
@options.intersection()
@options.level()
@options.judged_only()
@options.max_retrieved()
@click.option("-n", "--no-summary", is_flag=True,
              help="Leave out the summary: with -q, each query's values without the rows of query 'all' "
                   "(trec_eval's 'all' lines, the table's 'all' row, the JSON document's \"summary\"). Without -q "
                   "only --format trec accepts it and prints nothing, as trec_eval does.")
@click.option("-N", "--num-docs", type=COUNT, default=0, help="Collection size (only utility uses it).")
@options.trec_eval_9()
@options.output_options(EVALUATION, default=None, help="Default: table for the RAG set, trec when -m is given.")
@options.qrels_format()
@options.run_format()
@click.option("-R", "rel_info", metavar="FORMAT", default=None,
              help="trec_eval's judgments formats: qrels (TREC qrels), qrels_jg (the iteration column names a "
                   "judgment group: the *_avgjg measures), prefs (query_id group subgroup doc_id level: the "
                   "prefs_* measures), qrels_prefs (qrels read as preferences).")
@click.option("-T", "results", metavar="FORMAT", default=None,
              help="trec_eval's run formats: trec_results (a TREC run; --run-format reads others).")
@click.option("-Z", "zscores", metavar="FILE", type=InputPath(dir_okay=False, exists=True), default=None,
              help="Print z-scores against FILE's per-query means and standard deviations (lines: query_id "
                   "measure mean stddev), as trec_eval -Z: Z before each name, -1000000 where FILE lacks one.")
@click.option("-D", "debug_level", metavar="LEVEL", default=None,
              help="trec_eval's debug level: refused, its debugging output is not reproduced.")
@click.option("--Output_old_results_format", "obsolete_output", metavar="X", default=None,
              help="trec_eval's obsolete option: refused, it changes nothing.")
@click.option("--topics", "topics_path", type=QrelsPath(dir_okay=False, exists=True), default=None,
              help="Topics file (query_id<TAB>text) of TREC qrels, or irds:<dataset id>: its queries with no "
                   "judgment at all "
                   "are evaluated too (scored 0), as in the JSON dataset they came from.")
@click.option("--stream", is_flag=True,
              help="Read each run in pieces, in bounded memory (needs the run grouped by query). "
                   "Chosen automatically for a run larger than a quarter of the available memory.")
@click.option("--chunk-size", type=Integer(1, 4096), default=64, show_default=True, metavar="MB",
              help="With --stream: size of each piece, in megabytes.")
@click.option("--progress/--no-progress", default=None,
              help="Progress on stderr while streaming or on a cluster (default: when stderr is a terminal).")
@click.option("-j", "--jobs", type=Integer(1, 1024), default=None,
              help="Runs evaluated at once (default: the number of cores).")
@click.option("--cluster", metavar="ADDRESS|local:N", default=None,
              help="Evaluate on a Dask cluster (the 'dask' extra): a scheduler address (tcp://host:8786) or "
                   "local:N, N worker processes on this machine. One task per run, read by the worker "
                   "where it lies (every worker must see the files, by path or URL); a lone run (Parquet, or "
                   "TREC text: read in 128 MB byte ranges), or --shards, is split by query id over the workers "
                   "(a run of chunk ids to map, or a gzip file, is one task). A run with bad input fails alone.")
@click.option("--shards", is_flag=True,
              help="The RUN files (or the files of a RUN folder) are pieces of one run, in any order "
                   "of queries: evaluated as one run (over the workers with --cluster).")
@click.option("--crosscheck", is_flag=True,
              help="Also compute every measure with ir-measures and report agreement (needs the "
                   "'crosscheck' extra).")
@click.option("--corpus", "corpus", type=InputPath(dir_okay=False, exists=True), default=None,
              help="JSONL corpus ({\"id\", \"text\"} a line) of the retrieved ids: also report the context "
                   "tokens of the top k results per query (mean and p95, whitespace words) beside the measures at "
                   f"each k ({context_token_formats()} formats).")
@click.option("--tokenizer", metavar="MODULE:CALLABLE", default=None,
              help="With --corpus: count the tokens with this function (text -> number of tokens, or list of "
                   "tokens; a class is built without arguments), e.g. a model's tokenizer. Default: words.")
@doc_map_options
@id_key_option
@judgments_option
def evaluate_command(qrels: str, runs: tuple[str, ...], measures: tuple[str, ...], per_query: bool, complete: bool,
                     intersection: bool, relevance_level: int, judged_only: bool, max_retrieved: int | None,
                     no_summary: bool, num_docs: int, trec_eval_9: bool, output_format: str | None,
                     qrels_format: str, run_format: str, rel_info: str | None, results: str | None,
                     zscores: str | None, debug_level: str | None, obsolete_output: str | None,
                     topics_path: str | None, stream: bool, chunk_size: int,
                     progress: bool | None,
                     jobs: int | None, cluster: str | None, shards: bool, crosscheck: bool,
                     corpus: str | None, tokenizer: str | None, doc_id_pattern: str | None, doc_map: Path | None,
                     id_key: str | None, judgments: str | None,
                     output: str | None, force: bool) -> None:
    """Evaluate RUN(s) against QRELS with trec_eval's exact conventions.

    \b
    Ranking: score descending, ties by doc_id descending (byte order); the rank column is ignored.
    Queries: every qrels query; one missing from the run scores 0 and is named on stderr.
    Relevant: judgment >= LEVEL (-l); graded measures (nDCG) use the judgments as gains.
    Inputs: TREC files (plain or .gz) or JSON datasets and results, detected from the content.
    Parquet: a file or a directory of partitions (columns query_id, doc_id, score / relevance).
    URLs: any input may be one (s3://, gs://, file://, ...; the 'cloud' extra), read where it
    lies (on a cluster, by the workers); -o is a local path.
    Several runs (or a directory of runs) are evaluated in parallel, the qrels read once.

    \b
    Examples:
      trec-rag-eval qrels.txt run.txt                    RAG table at k = 1, 3, 5, 10
      trec-rag-eval -q -m all_trec qrels.txt run.txt     every trec_eval measure, per query
      trec-rag-eval -m P.5,10 -m ndcg_cut.10 -l 2 qrels.txt run.txt
      trec-rag-eval -m nDCG@10 --format json qrels.txt run.txt
      trec-rag-eval -q -m AP --format jsonl qrels.txt run.txt
                                                         JSON Lines: {"run", "query_id", "measure", "value"} a line
      trec-rag-eval eval_dataset.json results.json      a RAG dataset and its results
      trec-rag-eval qrels.txt runs/                      every run in a folder
      trec-rag-eval --cluster local:4 qrels.txt runs/    the same, on 4 Dask worker processes
      trec-rag-eval --cluster tcp://sched:8786 qrels.txt logs/   one Parquet run split by query
      trec-rag-eval --cluster tcp://sched:8786 s3://bucket/qrels.txt s3://bucket/runs/
                                                         runs read by the workers from S3
      trec-rag-eval --doc-id-pattern '^(.*)#\\d+$' qrels.txt chunk_run.txt
                                                         chunks scored as their documents
      trec-rag-eval --judgments human judged.qrels run.txt
                                                         without the holes an LLM filled
      trec-rag-eval irds:msmarco-passage/trec-dl-2019 run.txt   qrels by ir_datasets name (the irds extra)
      trec-rag-eval -q -m all_prefs -R prefs prefs.txt run.txt  trec_eval's preference judgments and measures
      trec-rag-eval -q -m all_trec -Z zscores.txt qrels.txt run.txt
                                                         z-scores against per-query means, as trec_eval -Z
    """
    from trec_rag_eval import api

    refuse_debug_level(debug_level)
    refuse_obsolete_output(obsolete_output)
    ctx = click.get_current_context()
    refuse_option_as_output(output, [name for param in ctx.command.params for name in getattr(param, "opts", [])])
    qrels_format = rel_info_format(rel_info, qrels_format)
    run_format = results_format(results, run_format)
    fmt = output_format or ("trec" if measures or zscores else "table")
    layout = OUTPUT_FORMATS[fmt]
    # the settings as the library's keywords, checked there (said with the flags); trec_eval's exact bytes
    # (leftovers) where the output format claims them
    settings: dict[str, Any] = dict(
        relevance_level=relevance_level, judged_only=judged_only, max_retrieved=max_retrieved,
        queries="intersection" if intersection else "qrels", trec_eval_9=trec_eval_9, num_docs=num_docs,
        complete=complete, leftovers=complete and layout.trec_eval)
    from trec_rag_eval.render.output import RunRenderer, document_to

    shown = sys.stderr.isatty() if progress is None else progress  # progress bars on stderr
    if crosscheck:  # crosscheck of each run evaluated: what it cannot follow is refused before any work
        api.check_crosscheck(qrels_format, shards)
    # the options that cannot go together, and a cluster that cannot be, are refused by the library at this
    # call, before any work (local:100000 not after a minute of starting processes), and said with the flags
    outcomes = api.evaluate_many(
        qrels, list(runs), list(measures) or None, None, order="trec" if layout.trec_eval else "asked", **settings,
        qrels_format=qrels_format, topics=topics_path, judgments=judgments, run_format=run_format,
        doc_map=doc_map, doc_id_pattern=doc_id_pattern, stream=True if stream else None, chunk_bytes=chunk_size << 20,
        jobs=jobs,
        progress=shown, cluster=cluster, shards=shards, corpus=corpus, tokenizer=tokenizer,
        render=RunRenderer(fmt, per_query, not no_summary, context=corpus is not None, zscored=zscores is not None),
        # (made on the thread or worker that evaluated the run; what the format cannot show refused now)
        **({"id": id_key} if id_key is not None else {}), **({"zscores": zscores} if zscores is not None else {}))
    labels: list[str] = []  # of the runs written: what --crosscheck computes again
    measures_done: list[Any] = []
    failures: list[TrecRagEvalError] = []
    # stdout, or -o FILE put in place when the runs are written; a missing folder, an existing file or an input
    # (a run inside a RUN folder too) as -o fails before any run is read
    with document_to(fmt, output, force, [qrels, *runs, topics_path, doc_map]) as document:
        for outcome in outcomes:  # in run order, whatever finished first; each written, then released
            for note in outcome.notes:
                tell(note.about(outcome.label))
            if outcome.error is not None:
                failures.append(outcome.error)
                document.skip()  # the runs asked are several: each one printed is labelled
                continue
            labels.append(outcome.label)
            measures_done = measures_done or outcome.rendered.measures
            document.add(outcome.label, outcome.rendered)
        if failures and not document.count and len(failures) == 1:
            raise failures[0]  # the one run, or every run, failed: nothing to write
    for error in failures:  # the runs that failed alone, after what the others gave
        click.echo(f"Error: {error}", err=True)
    if crosscheck and labels:
        _crosscheck(qrels, labels, measures_done, settings, qrels_format, topics_path, judgments, run_format,
                    doc_map, doc_id_pattern)
    if failures:
        raise click.exceptions.Exit(1)


def _crosscheck(qrels: str, run_paths: list[str], measures: list[Any], settings: dict[str, Any], qrels_format: str,
                topics: str | None, judgments: str | None, run_format: str, doc_map: Path | None,
                doc_id_pattern: str | None) -> None:
    from trec_rag_eval import api
    from trec_rag_eval.render.crosscheck import crosscheck_text

    failed = False
    for path in run_paths:
        report = api.crosscheck(qrels, path, measures, api.Settings(**settings), qrels_format=qrels_format,
                                topics=topics, judgments=judgments, run_format=run_format, doc_map=doc_map,
                                doc_id_pattern=doc_id_pattern)
        click.echo(redact(f"Cross-check of {path} against ir-measures:"), err=True)
        click.echo(crosscheck_text(report), err=True)
        failed |= not report.ok
    if failed:
        raise click.exceptions.Exit(1)
