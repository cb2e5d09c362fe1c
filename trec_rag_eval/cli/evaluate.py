"""``trec-rag-eval [options] QRELS RUN [RUN ...]``: trec_eval's options, four output formats."""

from __future__ import annotations

import os
import sys

import click

from trec_rag_eval.errors import UsageError


def _write_output(text: str, output: str | None, force: bool) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    from trec_rag_eval.io.atomic import write_text_atomic

    write_text_atomic(output, text, force=force)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path())
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="Measure(s): trec_eval names (P.5,10  map  ndcg_cut.10  all_trec  official) or our "
                   "notation (P@5  nDCG@10  AP  RR  F1@5  HitRate@5). Repeatable. Default: the RAG set "
                   "P/R/F1/HitRate/nDCG at 1,3,5,10 plus MRR and MAP.")
@click.option("-q", "--per-query", is_flag=True, help="Also print each query's values (trec_eval -q).")
@click.option("-c", "complete", is_flag=True,
              help="Evaluate every qrels query, missing ones scored 0 (the default already; accepted "
                   "for trec_eval compatibility, and reproduces its num_rel total under -c).")
@click.option("--intersection", is_flag=True,
              help="Evaluate only queries in both qrels and run (trec_eval 9, pytrec_eval).")
@click.option("-l", "--level", "relevance_level", type=int, default=1, show_default=True,
              help="Relevance threshold: judged relevance >= LEVEL is relevant (binary measures).")
@click.option("-J", "--judged-only", is_flag=True, help="Drop retrieved documents without a judgment first.")
@click.option("-M", "--max-retrieved", type=click.IntRange(min=0), default=None,
              help="Keep only the top N documents of each query (after sorting).")
@click.option("-n", "--no-summary", is_flag=True, help="Do not print the summary ('all') lines.")
@click.option("-N", "--num-docs", type=int, default=0, help="Collection size (only utility uses it).")
@click.option("--trec-eval-9", "trec_eval_9", is_flag=True,
              help="Reproduce trec_eval 9.0.x / pytrec_eval: float32 scores, iprec cut at floor(pR+0.9).")
@click.option("--format", "output_format", type=click.Choice(["trec", "table", "json", "csv"]), default=None,
              help="Output format. Default: table for the RAG set, trec when -m is given.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write to FILE instead of stdout (refuses to overwrite without --force).")
@click.option("--force", is_flag=True, help="Allow -o to replace an existing file.")
def evaluate_command(qrels: str, runs: tuple[str, ...], measures: tuple[str, ...], per_query: bool, complete: bool,
                     intersection: bool, relevance_level: int, judged_only: bool, max_retrieved: int | None,
                     no_summary: bool, num_docs: int, trec_eval_9: bool, output_format: str | None,
                     output: str | None, force: bool) -> None:
    """Evaluate RUN(s) against QRELS with trec_eval's exact conventions.

    \b
    Ranking: score descending, ties by doc_id descending (byte order); the rank column is ignored.
    Queries: every qrels query; one missing from the run scores 0 and is named on stderr.
    Relevant: judgment >= LEVEL (-l); graded measures (nDCG) use the judgments as gains.

    \b
    Examples:
      trec-rag-eval qrels.txt run.txt                    RAG table at k = 1, 3, 5, 10
      trec-rag-eval -q -m all_trec qrels.txt run.txt     every trec_eval measure, per query
      trec-rag-eval -m P.5,10 -m ndcg_cut.10 -l 2 qrels.txt run.txt
      trec-rag-eval -m nDCG@10 --format json qrels.txt run.txt
    """
    from trec_rag_eval.core.evaluate import evaluate
    from trec_rag_eval.io.trec import read_qrels, read_run
    from trec_rag_eval.measures.parse import parse_measures
    from trec_rag_eval.render.table import per_query_table, summary_table, to_csv, to_json
    from trec_rag_eval.render.trec import trec_lines

    if complete and intersection:
        raise UsageError("-c and --intersection contradict each other")
    fmt = output_format or ("trec" if measures else "table")
    if measures:
        resolved = parse_measures(list(measures))
    else:
        # trec_eval's default is its 'official' set; every other format shows the seeds' RAG set
        resolved = parse_measures(["official"] if fmt == "trec" else None)
    qrels_table = read_qrels(qrels)
    run_paths = _expand_runs(runs)
    evaluations = []
    for path in run_paths:
        run = read_run(path)
        evaluation = evaluate(
            qrels_table, run, resolved, relevance_level=relevance_level, judged_only=judged_only,
            max_retrieved=max_retrieved, queries="intersection" if intersection else "qrels",
            trec_eval_9=trec_eval_9, num_docs=num_docs, complete_flag=complete)
        _warn(path, evaluation)
        evaluations.append(evaluation)
    if fmt == "trec":
        text = "".join(line for e in evaluations for line in trec_lines(e, per_query, not no_summary))
    elif fmt == "table":
        parts = []
        for path, e in zip(run_paths, evaluations):
            title = f"run: {path}" if len(evaluations) > 1 else None
            parts.append(per_query_table(e) if per_query else summary_table(e, title))
        text = "\n".join(parts)
    elif fmt == "json":
        text = to_json(evaluations, per_query)
    else:
        text = to_csv(evaluations, per_query)
    _write_output(text, output, force)


def _expand_runs(runs: tuple[str, ...]) -> list[str]:
    """Run files as given; a directory stands for the files in it, in name order."""
    out: list[str] = []
    for path in runs:
        if os.path.isdir(path):
            out.extend(sorted(os.path.join(path, name) for name in os.listdir(path)
                              if not name.startswith(".") and os.path.isfile(os.path.join(path, name))))
        else:
            out.append(path)
    return out


def _warn(path: str, evaluation: object) -> None:
    missing = getattr(evaluation, "missing_queries")
    extra = getattr(evaluation, "extra_queries")
    if missing:
        shown = ", ".join(missing[:10]) + (f", ... ({len(missing) - 10} more)" if len(missing) > 10 else "")
        click.echo(f"Warning: {path}: {len(missing)} qrels quer{'y' if len(missing) == 1 else 'ies'} "
                   f"missing from the run, scored 0: {shown}", err=True)
    if extra:
        click.echo(f"Warning: {path}: {len(extra)} quer{'y' if len(extra) == 1 else 'ies'} in the run "
                   "but not in the qrels, ignored", err=True)
