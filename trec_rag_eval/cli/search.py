"""``trec-rag-eval search`` (any engine -> run + metrics) and ``trec-rag-eval demo`` (offline BM25 loop)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from trec_rag_eval.cli import options as common
from trec_rag_eval.cli import tell
from trec_rag_eval.cli.chunks import doc_map_options
from trec_rag_eval.cli.params import Integer, LocalPath, OutputPath
from trec_rag_eval.credentials import redact
from trec_rag_eval.io.atomic import write_stream

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {
    "search": "Run a dataset's queries through a search engine.",
    "demo": "Run search -> evaluate -> compare offline on the shipped fixtures.",
}

DEMO_MEASURES = ["nDCG@10", "R@5", "P@1", "MRR", "MAP"]


def echo_failures(evaluation: Any) -> None:
    """Each failed query, then how many failed."""
    for failure in evaluation.failures:
        # an engine's error may quote its server's URL with a password in it (a client's connection error)
        click.echo(redact(f"  failed: {failure.query_id} ({failure.query!r}): {failure.error}"), err=True)
    if evaluation.failures_note is not None:
        tell(evaluation.failures_note)


@click.command("search")
@click.argument("dataset", type=LocalPath(exists=True, dir_okay=False))
@click.option("--engine", "engine_spec", metavar="MODULE:CALLABLE", default=None,
              help="Engine to import: a callable (query, k), an object with a search or rechercher "
                   "method, or a class built without arguments. Default: BM25 over --corpus.")
@click.option("--corpus", type=LocalPath(exists=True, dir_okay=False), default=None,
              help="JSONL corpus ({\"id\", \"text\"}) for the built-in BM25 engine.")
@click.option("--language", type=click.Choice(["fr", "en"]), default="fr", show_default=True,
              help="Stop words of the built-in BM25 engine.")
@click.option("-k", "depth", type=Integer(1, 1_000_000), default=10, show_default=True,
              help="Results asked of the engine per query.")
@click.option("-m", "--measure", "measures", multiple=True,
              help="Measure to report (repeatable); default: P, R, F1, HitRate, nDCG at 1, 3, 5, 10, "
                   "MRR, MAP.")
@common.level()
@click.option("-o", "--output", type=OutputPath(local=True, dir_okay=False), default=None,
              help="Write the run here.")
@click.option("-f", "--format", "run_format", type=click.Choice(["trec", "json"]), default="trec",
              show_default=True, help="TREC's six columns, or JSON {query_id: [{id, score}]}.")
@click.option("--run-tag", default=None, help="Run tag [default: the engine's name].")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr [default: from 50 queries].")
@click.option("--tokenizer", metavar="MODULE:CALLABLE", default=None,
              help="Count the context tokens of the top k with this function (text -> number of tokens, or list "
                   "of tokens), when the texts are known (--corpus, or results carrying text). Default: words.")
@doc_map_options
@click.option("--allow-failures", is_flag=True,
              help="Exit 0 even if some queries failed. By default the run and the metrics (failed queries "
                   "scored 0) are still written and printed, then the command exits 1.")
def search_command(
    dataset: Path,
    engine_spec: str | None,
    corpus: Path | None,
    language: str,
    depth: int,
    measures: tuple[str, ...],
    relevance_level: int,
    output: Path | None,
    run_format: str,
    run_tag: str | None,
    force: bool,
    progress: bool | None,
    tokenizer: str | None,
    doc_id_pattern: str | None,
    doc_map: Path | None,
    allow_failures: bool,
) -> None:
    """Run every query of DATASET through a search engine, write the run, print the metrics.

    A query whose engine call raises is scored 0 and named on stderr; the others go on. Unless
    --allow-failures is given, the command then exits 1, so a script notices numbers that a broken
    engine pulled down.

    \b
    trec-rag-eval search dataset.json --engine my_search:search -k 10 -o run.txt
    trec-rag-eval search dataset.json --corpus corpus.jsonl -o bm25.txt
    """
    from trec_rag_eval import api
    from trec_rag_eval.render.engine import engine_report

    if output is not None:
        api.check_outputs([output], force, [dataset, corpus, doc_map])
    engine = api.search_engine(engine_spec, corpus, language=language)
    tag = run_tag or (engine_spec.rpartition(":")[2].replace(".", "-") if engine_spec is not None else "bm25")
    # the built-in engine's corpus gives the texts: the table shows the context tokens of the top k
    evaluator = api.Evaluator(engine, run_tag=tag, progress=progress,
                              doc_map=doc_map, doc_id_pattern=doc_id_pattern, corpus=corpus, tokenizer=tokenizer)
    k_values = sorted({k for k in (1, 3, 5, 10) if k <= depth} | {depth})
    # its notes are told here: the mapping before the table, the failures' count after the failed queries
    evaluation = evaluator.evaluate(str(dataset), k_values=k_values, measures=list(measures) or None,
                                    depth=depth, relevance_level=relevance_level, warn=False)
    if output is not None:
        evaluation.write_run(output, format=run_format, force=force)
    for note in evaluation.mapping_notes:
        tell(note)
    common.say(engine_report(evaluation, title=f"{tag} on {dataset.name}"), nl=False)
    echo_failures(evaluation)
    if output is not None:
        common.say(f"Wrote {output}")
    if evaluation.failures and not allow_failures:
        from trec_rag_eval.errors import SearchFailedError

        failed, total = len(evaluation.failures), len(evaluation.result.query_ids)
        raise SearchFailedError(f"{failed} of {total} queries failed and were scored 0 "
                                "(--allow-failures to exit 0 anyway)")


def demo_files() -> tuple[Path, Path]:
    """The shipped French corpus and dataset (a copy of fixtures/ inside the package)."""
    data = Path(__file__).resolve().parent.parent / "engine" / "data"
    return data / "corpus_fr.jsonl", data / "eval_dataset_fr.json"


@click.command("demo")
def demo_command() -> None:
    """Search -> evaluate -> compare, offline, on the shipped French corpus (50 passages, 30 queries).

    BM25 with stop words removed is the baseline; the same BM25 keeping stop words is compared with
    it, with a paired test over the 30 queries.
    """
    from trec_rag_eval import api
    from trec_rag_eval.render.engine import latency_line
    from trec_rag_eval.render.table import summary_table

    corpus, dataset = demo_files()
    write_stream(f"Corpus: {corpus} (50 French passages); dataset: {dataset} (30 queries, grades 1-3)\n\n",
                 sys.stdout)
    baseline = api.Evaluator(api.search_engine(corpus=corpus), run_tag="bm25", progress=False).evaluate(str(dataset))
    title = "BM25 (k1=1.5, b=0.75, accents folded, French stop words removed)"
    common.say(summary_table(baseline.result, title=title))
    write_stream(latency_line(baseline) + "\n\n", sys.stdout)
    variant = api.Evaluator(api.search_engine(corpus=corpus, remove_stop_words=False), run_tag="bm25-keep-stop-words",
                            progress=False).evaluate(str(dataset))
    from trec_rag_eval.render.comparison import render_table

    comparison = api.compare(baseline.qrels, {"bm25": baseline.run, "bm25-keep-stop-words": variant.run},
                         measures=DEMO_MEASURES)
    common.say(render_table(comparison))
    write_stream("\nNext: trec-rag-eval search DATASET --engine your_module:search -o run.txt\n", sys.stdout)
