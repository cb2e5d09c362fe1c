"""``trec-rag-eval convert``: JSON datasets and results to TREC or Parquet files, and back."""

from __future__ import annotations

from pathlib import Path

import click

from trec_rag_eval.api import check_outputs
from trec_rag_eval.checks.rag import check_rag, order_warning
from trec_rag_eval.cli.options import say
from trec_rag_eval.errors import UsageError
from trec_rag_eval.io.atomic import all_or_none
from trec_rag_eval.io.load import (
    QRELS_FORMATS,
    RUN_FORMATS,
    detect_kind,
    load_qrels,
    load_run,
    load_run_report,
)
from trec_rag_eval.io.parquet import write_parquet_qrels, write_parquet_run
from trec_rag_eval.io.tables import Qrels, query_id_set
from trec_rag_eval.io.writers import (
    write_dataset_json,
    write_qrels,
    write_results_json,
    write_run,
    write_topics,
)


@click.command("convert")
@click.argument("input_path", metavar="INPUT", type=click.Path(exists=True, allow_dash=True))
@click.option(
    "--qrels",
    "qrels_out",
    type=click.Path(dir_okay=False),
    help="Write INPUT's judgments as a TREC qrels file (query_id 0 doc_id relevance), or as Parquet "
    "when FILE ends in .parquet (columns query_id, iteration, doc_id, relevance).",
)
@click.option(
    "--topics",
    "topics_path",
    type=click.Path(dir_okay=False),
    help="Topics file (query_id<TAB>query text). Written with --qrels (default: the qrels "
    "path with the suffix .topics); read with --json, to put the query texts back.",
)
@click.option(
    "--run",
    "run_out",
    type=click.Path(dir_okay=False),
    help="Write INPUT's results as a TREC run: ranks 1..n, strictly decreasing scores; as Parquet "
    "when FILE ends in .parquet (columns query_id, doc_id, rank, score, run_tag).",
)
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False),
    help="Write INPUT (TREC qrels or run, Parquet, BEIR, any JSON shape) as JSON.",
)
@click.option(
    "--dataset",
    "dataset_path",
    type=click.Path(exists=True),
    help="The dataset the results belong to: matches results keyed by query text, and "
    "checks the results against it.",
)
@click.option(
    "--kind",
    type=click.Choice(["dataset", "results"]),
    help="What INPUT holds, for --json when it cannot be told from the content.",
)
@click.option(
    "--qrels-format",
    type=click.Choice(QRELS_FORMATS),
    default="auto",
    show_default=True,
    help="Format of the dataset (INPUT or --dataset) instead of detecting it.",
)
@click.option(
    "--run-format",
    type=click.Choice(RUN_FORMATS),
    default="auto",
    show_default=True,
    help="Format of the results in INPUT instead of detecting it.",
)
@click.option(
    "--keys",
    type=click.Choice(["en", "fr"]),
    default="en",
    show_default=True,
    help="Key names of a JSON dataset written by --json: query/relevant/non_relevant or "
    "requête/pertinents/non_pertinents.",
)
@click.option("--run-tag", help="Tag of the written run (default: the results file's name).")
@click.option("--no-scores", is_flag=True, help="With --json for a run: plain id lists, best first.")
@click.option("--force", is_flag=True, help="Overwrite existing output files.")
def convert_command(
    input_path: str,
    qrels_out: str | None,
    topics_path: str | None,
    run_out: str | None,
    json_out: str | None,
    dataset_path: str | None,
    kind: str | None,
    qrels_format: str,
    run_format: str,
    keys: str,
    run_tag: str | None,
    no_scores: bool,
    force: bool,
) -> None:
    """Convert INPUT between JSON, TREC and Parquet files.

    \b
    Dataset -> TREC qrels and topics:
      trec-rag-eval convert eval_dataset.json --qrels eval.qrels --topics eval.topics
    Results -> TREC run (results keyed by query text need the dataset):
      trec-rag-eval convert results.json --run results.run --dataset eval_dataset.json
    TREC -> JSON:
      trec-rag-eval convert eval.qrels --topics eval.topics --json eval_dataset.json
      trec-rag-eval convert results.run --json results.json
    TREC <-> Parquet (the output's .parquet suffix chooses Parquet; INPUT is detected):
      trec-rag-eval convert eval.qrels --qrels eval.parquet
      trec-rag-eval convert results.run --run results.parquet
      trec-rag-eval convert results.parquet --run results.run

    Query ids are the items' ids, else q1, q2, ... in file order, recorded in the topics file.
    non_pertinents become relevance 0. Existing files are kept unless --force; every file is
    written atomically.
    """
    if json_out is not None and (qrels_out or run_out):
        raise UsageError("--json cannot be combined with --qrels or --run: convert one way at a time")
    if not (qrels_out or topics_path or run_out or json_out):
        raise UsageError("nothing to write: give --qrels (and --topics), --run, or --json")
    messages: list[tuple[str, bool]] = []  # (line, to stderr), printed once every file is in place
    if json_out is not None:
        check_outputs([json_out], force, [input_path, dataset_path, topics_path])  # --topics is read here
        with all_or_none(force=force):
            messages.append((_to_json(input_path, json_out, topics_path, dataset_path, kind, qrels_format,
                                      run_format, keys, no_scores, force), False))
    else:
        topics_is_default = qrels_out is not None and topics_path is None
        dataset = None
        if topics_is_default:
            # the default topics file is claimed only when there are topics to write: converting TREC
            # qrels (no texts) must not trip over the topics file an earlier conversion left beside them
            dataset = load_qrels(input_path, qrels_format)
            topics_path = _default_topics_path(qrels_out) if dataset.topics else None  # type: ignore[arg-type]
        check_outputs([qrels_out, topics_path, run_out], force, [input_path, dataset_path])
        with all_or_none(force=force):
            _to_trec(input_path, qrels_out, (topics_path, topics_is_default), run_out, dataset_path, qrels_format,
                     run_format, run_tag, force, messages, dataset)
    for line, to_stderr in messages:
        if to_stderr:
            click.echo(line, err=True)
        else:
            say(line)


def _to_trec(input_path: str, qrels_out: str | None, topics: tuple[str | None, bool], run_out: str | None,
             dataset_path: str | None, qrels_format: str, run_format: str, run_tag: str | None, force: bool,
             messages: list[tuple[str, bool]], dataset: Qrels | None = None) -> None:
    """Write the qrels, topics (path, whether it is the default one) and run asked for; ``messages``
    gets what to say once they are all in place. ``dataset``: INPUT's judgments, if already read."""
    topics_path, topics_is_default = topics
    if qrels_out is not None or topics_path is not None:
        dataset = dataset or load_qrels(input_path, qrels_format)
        if qrels_out is not None:
            write = write_parquet_qrels if _is_parquet_name(qrels_out) else write_qrels
            count = write(dataset, qrels_out, force=force)
            queries = dataset.frame["query_id"].n_unique()
            messages.append((f"wrote {qrels_out}: {count} judgments for {queries} queries", False))
        if dataset.topics and topics_path is not None:
            count = write_topics(dataset.topics, topics_path, force=force)
            messages.append((f"wrote {topics_path}: {count} query texts", False))
            unjudged = sorted(set(dataset.topics) - query_id_set(dataset))
            if unjudged and qrels_out is not None:
                # a qrels file has no line for a query without any judgment: the topics file keeps it
                shown = ", ".join(unjudged[:10]) + (", ..." if len(unjudged) > 10 else "")
                messages.append((
                    f"Note: {len(unjudged)} quer{'y has' if len(unjudged) == 1 else 'ies have'} no judged document, "
                    f"so no line in {qrels_out}: {shown}. {topics_path} keeps "
                    f"{'it' if len(unjudged) == 1 else 'them'}: evaluate with --topics {topics_path} to count "
                    f"{'it' if len(unjudged) == 1 else 'them'} (scored 0), as the JSON dataset does.", True))
        elif not topics_is_default:
            raise UsageError(f"{input_path} holds no query texts to write to {topics_path}")
    if run_out is not None:
        if dataset_path is not None:
            dataset = load_qrels(dataset_path, qrels_format)
        elif dataset is None and detect_kind(input_path) == "both":
            dataset = load_qrels(input_path, qrels_format)
        run, report = load_run_report(input_path, run_format, dataset)
        write_table = write_parquet_run if _is_parquet_name(run_out) else write_run
        count = write_table(run, run_out, run_tag=run_tag, force=force)
        queries = run.frame["query_id"].n_unique()
        unit = "rows" if _is_parquet_name(run_out) else "lines"
        messages.append((f"wrote {run_out}: {count} {unit} for {queries} queries", False))
        if dataset is not None:
            messages.extend((f"Warning: {warning}", True) for warning in check_rag(dataset, run, report))
        elif report.disordered:  # said with a dataset by check_rag, in the same words
            messages.append((f"Warning: {order_warning(report.disordered)}", True))


def _to_json(
    input_path: str,
    json_out: str,
    topics_path: str | None,
    dataset_path: str | None,
    kind: str | None,
    qrels_format: str,
    run_format: str,
    keys: str,
    no_scores: bool,
    force: bool,
) -> str:
    """Write INPUT as JSON; return what to say once it is in place."""
    if kind is None:
        kind = detect_kind(input_path)
        if kind == "both":
            raise UsageError(f"{input_path} holds both judgments and results: say which with --kind")
    if kind == "dataset":
        qrels = load_qrels(input_path, qrels_format, topics=topics_path)
        count = write_dataset_json(qrels, json_out, keys=keys, force=force)
        return f"wrote {json_out}: {count} queries"
    dataset = load_qrels(dataset_path, qrels_format) if dataset_path is not None else None
    run = load_run(input_path, run_format, dataset)
    count = write_results_json(run, json_out, scores=not no_scores, force=force)
    return f"wrote {json_out}: results for {count} queries"


def _is_parquet_name(path: str) -> bool:
    return path.lower().endswith(".parquet")


def _default_topics_path(qrels_out: str) -> str:
    path = Path(qrels_out)
    candidate = path.with_suffix(".topics")
    return str(candidate if candidate != path else path.with_name(path.name + ".topics"))
