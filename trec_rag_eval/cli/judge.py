"""``trec-rag-eval judge``: fill the holes of the judgments with an OpenAI-compatible LLM."""

from __future__ import annotations

from pathlib import Path

import click

from trec_rag_eval.cli import tell
from trec_rag_eval.cli.chunks import doc_map_options
from trec_rag_eval.cli.llm import llm_options
from trec_rag_eval.cli.options import say
from trec_rag_eval.cli.params import COUNT, LEVEL, InputPath, Integer, LocalPath, OutputPath
from trec_rag_eval.credentials import redact
from trec_rag_eval.number_formats import format_number
from trec_rag_eval.render.calibration import calibration_text
from trec_rag_eval.syntax import INT32

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {"judge": "Grade unjudged documents (holes) with an LLM."}


@click.command("judge", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("dataset", type=InputPath(exists=True, dir_okay=False, allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=InputPath(exists=True, dir_okay=False, allow_dash=True))
@click.option("--corpus", type=LocalPath(exists=True, dir_okay=False), required=True,
              help="JSONL corpus ({\"id\", \"text\"} a line): the passages shown to the model.")
@click.option("--topics", type=InputPath(exists=True, dir_okay=False), default=None,
              help="Query texts (query_id<TAB>text, as convert writes them) when DATASET is a TREC qrels file.")
@click.option("--depth", type=Integer(1, INT32[1]), default=10, show_default=True,
              help="Pool the top DEPTH documents of each run; the unjudged ones are graded.")
@llm_options("Language of the grading prompt.")
@click.option("-o", "--output", type=OutputPath(local=True, dir_okay=False), required=True,
              help="Judgments to write (TREC qrels, or a JSON dataset with the query texts when FILE ends in "
                   ".json): every human judgment as it was, plus the LLM's grades for the holes. "
                   "The LLM judgments are also listed in OUTPUT.llm.tsv (query_id, doc_id, grade, kind, model).")
@click.option("--calibrate", type=COUNT, default=0, show_default=True, metavar="N",
              help="Also ask about N human-judged documents per query and print Cohen's kappa and the "
                   "confusion matrix (needs scikit-learn: the 'llm' extra).")
@click.option("--seed", type=Integer(), default=42, show_default=True, help="Seed of the calibration draw.")
@click.option("--max-chars", type=Integer(1, INT32[1]), default=8000, show_default=True,
              help="Cut each passage shown to the model at this many characters (long documents would "
                   "overflow its context); the documents cut are counted.")
@click.option("-l", "--level", "relevance_level", type=LEVEL, default=1, show_default=True,
              help="Binary agreement: a grade >= LEVEL is relevant.")
@click.option("--allow-failures", is_flag=True,
              help="Write OUTPUT even if some documents got no grade (they stay holes).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT and its sidecar if they exist.")
@doc_map_options
def judge_command(dataset: str, runs: tuple[str, ...], corpus: Path, topics: str | None, depth: int, model: str,
                  base_url: str | None, output: Path, language: str, calibrate: int, seed: int, max_chars: int,
                  relevance_level: int, concurrency: int, timeout: float, max_retries: int,
                  temperature: float | None, progress_file: Path | None, allow_failures: bool,
                  force: bool, doc_id_pattern: str | None, doc_map: Path | None) -> None:
    """Grade the unjudged documents in the top DEPTH of RUN(s) with an LLM, on a 0-3 scale.

    \b
    0 unrelated, 1 related but does not answer, 2 partly answers, 3 answers.

    DATASET holds the human judgments and the query texts: a JSON dataset, or a TREC qrels file
    with --topics (an earlier judge output too: its LLM judgments are recognised by their sidecar
    and carried over). Human judgments are kept as they are. Finished documents are appended to a
    progress file as they come, so after a crash, Ctrl-C or failures, running the same command
    again only asks for what is missing. Runs of chunk ids are pooled as their documents with
    --doc-id-pattern or --doc-map (then --corpus holds the documents). Then evaluate with the filled
    holes, or without them:

    \b
      trec-rag-eval judge dataset.json run.txt --corpus corpus.jsonl --model M -o judged.qrels
      trec-rag-eval evaluate judged.qrels run.txt --judgments human|llm|both
    """
    from trec_rag_eval.api import judge, progress_path_for

    progress = progress_file or progress_path_for(output)

    try:
        report = judge(dataset, list(runs), corpus, output, model=model, topics=topics, depth=depth,
                       language=language, calibrate=calibrate, seed=seed, max_chars=max_chars,
                       relevance_level=relevance_level, base_url=base_url, concurrency=concurrency,
                       timeout=timeout, max_retries=max_retries, temperature=temperature, progress_path=progress,
                       doc_map=doc_map, doc_id_pattern=doc_id_pattern, allow_failures=allow_failures, force=force,
                       on_note=tell)
    except KeyboardInterrupt:
        click.echo(f"\nInterrupted: finished grades are kept in {progress}; "
                   "run the same command again to resume.", err=True)
        raise
    say(f"Queries: {report.queries}; pooled documents (top {depth} of {len(runs)} run"
        f"{'s' if len(runs) > 1 else ''}): {report.pooled}, of which {report.holes} unjudged")
    say(f"Asked: {report.asked} ({report.resumed} from an earlier run, {report.graded_now} graded now, "
        f"{len(report.failures)} failed)")
    say(f"Requests: {report.requests} ({report.retries} retries)")
    say(f"Tokens this run: {report.prompt_tokens} prompt + {report.completion_tokens} completion "
        f"= {report.total_tokens}")
    counts = report.grade_counts("hole")
    say("Grades of the holes: " + ", ".join(f"{grade}: {n}" for grade, n in counts.items()))
    if report.agreement is not None:
        say(calibration_text(report.agreement), nl=False)
    for path, before, after in report.coverage:
        say(f"Judged@{depth} of {path}: {format_number(before)} before, {format_number(after)} after")
    if report.failures:
        for query_id, doc_id, reason in report.failures:
            click.echo(redact(f"  failed: {query_id} {doc_id}: {reason}"), err=True)
        if not report.written:
            raise JudgingIncomplete(
                f"{len(report.failures)} of {report.asked} documents got no grade; {output} was not written. "
                f"Finished grades are kept in {progress}: run the same command again to retry the rest "
                "(or --allow-failures to write them as holes)."
            )
    say(f"Wrote {output} and {report.sidecar}")


class JudgingIncomplete(click.ClickException):
    """Some documents got no grade: exit 1 with one error line."""

    exit_code = 1
