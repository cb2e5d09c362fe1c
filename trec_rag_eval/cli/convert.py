"""``trec-rag-eval convert``: JSON datasets and results to TREC or Parquet files, and back."""

from __future__ import annotations

import click

from trec_rag_eval.api import QRELS_FORMATS, RUN_FORMATS
from trec_rag_eval.cli import tell
from trec_rag_eval.cli.options import say
from trec_rag_eval.cli.params import InputPath, LocalPath, OutputPath

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {"convert": "Convert JSON datasets/results to TREC files and back."}


@click.command("convert")
@click.argument("input_path", metavar="INPUT", type=InputPath(exists=True, allow_dash=True))
@click.option(
    "--qrels",
    "qrels_out",
    type=OutputPath(dir_okay=False),
    help="Write INPUT's judgments as a TREC qrels file (query_id 0 doc_id relevance), or as Parquet "
    "when FILE ends in .parquet (columns query_id, iteration, doc_id, relevance).",
)
@click.option(
    "--topics",
    "topics_path",
    type=OutputPath(dir_okay=False),
    help="Topics file (query_id<TAB>query text). Written with --qrels (default: the qrels "
    "path with the suffix .topics); read with --json, to put the query texts back.",
)
@click.option(
    "--run",
    "run_out",
    type=OutputPath(dir_okay=False),
    help="Write INPUT's results as a TREC run: ranks 1..n, strictly decreasing scores; as Parquet "
    "when FILE ends in .parquet (columns query_id, doc_id, rank, score, run_tag).",
)
@click.option(
    "--json",
    "json_out",
    type=OutputPath(dir_okay=False),
    help="Write INPUT (TREC qrels or run, Parquet, BEIR, any JSON shape) as JSON.",
)
@click.option(
    "--dataset",
    "dataset_path",
    type=LocalPath(exists=True, path_type=None),
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
    from trec_rag_eval import api

    report = api.convert(input_path, qrels=qrels_out, topics=topics_path, run=run_out, json=json_out,
                         dataset=dataset_path, kind=kind, qrels_format=qrels_format, run_format=run_format, keys=keys,
                         run_tag=run_tag, scores=not no_scores, force=force, warn=False)
    for line in report.written:  # once every file is in place
        say(line)
    for note in report.notes:
        tell(note)
