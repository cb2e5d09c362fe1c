"""``trec-rag-eval crosscheck QRELS RUN`` and ``trec-rag-eval validate QRELS RUN REFERENCE``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from trec_rag_eval.cli import options as common
from trec_rag_eval.cli import tell
from trec_rag_eval.cli.chunks import doc_map_options
from trec_rag_eval.cli.params import InputPath, QrelsPath, Real
from trec_rag_eval.credentials import without_credentials
from trec_rag_eval.io.atomic import output_to
from trec_rag_eval.render.output_formats import CROSSCHECK, OUTPUT_FORMATS, VALIDATION

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {
    "crosscheck": "Cross-check our numbers against ir-measures.",
    "validate": "Compare our scores with a reference scores file.",
}


def _options(func):  # the evaluation settings both commands share
    for option in reversed([
        click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
                     help="Measure(s), either notation (P@5, nDCG@10, ndcg_cut.10, all_trec). Repeatable."),
        common.level("Relevance threshold for binary measures."),
        common.judged_only("Drop retrieved documents without a judgment."),
        common.max_retrieved("Keep only the top N documents of each query."),
        common.intersection("Only queries in both qrels and run."),
        common.trec_eval_9("trec_eval 9.0.x / pytrec_eval conventions: float32 scores, iprec at floor(pR+0.9)."),
        common.qrels_format(),
        common.run_format(),
    ]):
        func = option(func)
    return func


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=QrelsPath(exists=True, allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=InputPath(exists=True, dir_okay=False, allow_dash=True))
@_options
@common.output_options(CROSSCHECK, default="text")
@click.option("--tolerance", type=Real(0.0), default=1e-9, show_default=True,
              help="Largest difference counted as agreement (gdeval's 5 printed decimals are allowed for).")
@doc_map_options
def crosscheck_command(qrels: str, runs: tuple[str, ...], measures: tuple[str, ...], relevance_level: int,
                       judged_only: bool, max_retrieved: int | None, intersection: bool, trec_eval_9: bool,
                       output_format: str, output: str | None, force: bool, qrels_format: str, run_format: str,
                       tolerance: float, doc_id_pattern: str | None, doc_map: Path | None) -> None:
    """Compare every (query, measure) value and aggregate with ir-measures.

    \b
    Verdict per measure: agree; agree up to a named convention (pytrec_eval's 32-bit scores,
    trec_eval 9's iprec rounding, the msmarco provider's tie order, missing queries scored 0);
    DIFFER (largest difference, which queries); or not supported by ir-measures.
    Exit status 1 when any measure differs. ir-measures comes with the package; the crosscheck
    extra (pip install 'trec-rag-eval[crosscheck]') adds its cwl_eval and pyndeval providers,
    which check the CWL and intent-aware measures (else reported as not supported).

    \b
    Examples:
      trec-rag-eval crosscheck qrels.txt run.txt
      trec-rag-eval crosscheck --trec-eval-9 -m all_trec qrels.txt run.txt
    """
    from trec_rag_eval import api

    api.check_outputs([output], force, [qrels, *runs, doc_map])  # before any work
    qrels_table = _judgments(qrels, qrels_format)
    failed = False

    def reports() -> Iterator[tuple[str, Any]]:  # each run's, as it is made: text shows it at once
        nonlocal failed
        for path in runs:
            report = api.crosscheck(qrels_table, path, list(measures) or None, run_format=run_format,
                                    doc_map=doc_map, doc_id_pattern=doc_id_pattern,
                                    relevance_level=relevance_level, judged_only=judged_only,
                                    max_retrieved=max_retrieved, queries="intersection" if intersection else "qrels",
                                    trec_eval_9=trec_eval_9, tolerance=tolerance)
            failed |= not report.ok
            yield without_credentials(path), report  # a URL's password, if it holds one, is not shown

    with output_to(output, force) as out:  # stdout, or -o FILE through the one writer (io.atomic)
        for piece in OUTPUT_FORMATS[output_format].render(CROSSCHECK, reports()):
            out.write(piece)
        out.commit()
    if failed:
        sys.exit(1)  # click.exceptions.Exit is swallowed by main() (standalone_mode=False)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=QrelsPath(exists=True, allow_dash=True))
@click.argument("run", type=InputPath(exists=True, dir_okay=False, allow_dash=True))
@click.argument("reference", type=InputPath(exists=True, dir_okay=False, allow_dash=True))
@_options
@common.output_options(VALIDATION, default="text")
@doc_map_options
def validate_command(qrels: str, run: str, reference: str, measures: tuple[str, ...], relevance_level: int,
                     judged_only: bool, max_retrieved: int | None, intersection: bool, trec_eval_9: bool,
                     output_format: str, output: str | None, force: bool, qrels_format: str,
                     run_format: str, doc_id_pattern: str | None, doc_map: Path | None) -> None:
    """Check our scores against REFERENCE: trec_eval (-q) output, ir-measures (-q) output or JSON.

    Every value further from ours than the reference's printed precision (half a unit of its
    last digit) is listed; a difference that a known convention explains (trec_eval 9 /
    pytrec_eval, averages over the run's queries) is named as such. Exit status 1 when any
    value differs. Every value of the reference is compared, or with -m those of the measures
    named (each must be in the reference).

    \b
    Examples:
      trec-rag-eval validate qrels.txt run.txt published_scores.txt
      trec-rag-eval validate -m MAP -m nDCG@10 qrels.txt run.txt published_scores.txt
    """
    from trec_rag_eval import api

    api.check_outputs([output], force, [qrels, run, reference, doc_map])  # before any work
    report = api.validate(_judgments(qrels, qrels_format), run, reference, measures=list(measures) or None,
                          run_format=run_format, doc_map=doc_map, doc_id_pattern=doc_id_pattern,
                          relevance_level=relevance_level, judged_only=judged_only, max_retrieved=max_retrieved,
                          queries="intersection" if intersection else "qrels", trec_eval_9=trec_eval_9)
    common.write_results(OUTPUT_FORMATS[output_format].render(VALIDATION, report), output, force)
    if not report.ok:
        sys.exit(1)  # click.exceptions.Exit is swallowed by main() (standalone_mode=False)


def _judgments(qrels: str, qrels_format: str) -> Any:
    """The judgments as every command reads them, their notes said once."""
    from trec_rag_eval import api

    table, notes = api.read_judgments(qrels, format=qrels_format)
    for note in notes:
        tell(note)
    return table
