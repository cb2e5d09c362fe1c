"""``trec-rag-eval generate-queries``: LLM-generated test queries from a JSONL corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from trec_rag_eval.cli import tell
from trec_rag_eval.cli.llm import llm_options
from trec_rag_eval.cli.options import say
from trec_rag_eval.cli.params import Integer, LocalPath, OutputPath
from trec_rag_eval.credentials import redact

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {"generate-queries": "Generate test queries with an LLM."}


@click.command("generate-queries")
@click.argument("corpus", type=LocalPath(exists=True, dir_okay=False))
@click.option("-n", "n", type=Integer(1, 1000), default=3, show_default=True, help="Questions per document.")
@click.option("-o", "--output", type=OutputPath(local=True, dir_okay=False), required=True,
              help="Dataset JSON to write (rows: id, requête, pertinents, lexical_overlap; query, relevant in "
                   "English).")
@llm_options("Prompt language: the French RAG tutorial's prompt or its English translation.")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
def generate_queries_command(
    corpus: Path,
    n: int,
    model: str,
    base_url: str | None,
    output: Path,
    language: str,
    concurrency: int,
    timeout: float,
    max_retries: int,
    temperature: float | None,
    progress_file: Path | None,
    force: bool,
) -> None:
    """Ask an LLM for N questions per document of CORPUS.jsonl ({"id", "text"} lines).

    Each question's relevant document is its source. Finished documents are appended to a
    progress file as they come, so after a crash, Ctrl-C or failed documents, running the same
    command again only asks for what is missing. OUTPUT is written once every document is done,
    and the progress file is then removed. Documents left with fewer than N questions are named.
    """
    from trec_rag_eval.api import generate_queries, progress_path_for

    progress = progress_file or progress_path_for(output)
    said: list[Any] = []  # the overlap is said after the counts, as the command always said it
    try:
        report = generate_queries(corpus, output, model=model, n=n, language=language, base_url=base_url,
                                  concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                                  temperature=temperature, progress_path=progress, force=force, on_note=said.append)
    except KeyboardInterrupt:
        click.echo(f"\nInterrupted: finished documents are kept in {progress}; "
                   "run the same command again to resume.", err=True)
        raise
    say(
        f"Documents: {report.documents} ({report.resumed_documents} from an earlier run, "
        f"{report.generated_documents} generated now, {len(report.failures)} failed)"
    )
    say(f"Requests: {report.requests} ({report.retries} retries)")
    say(f"Tokens this run: {report.prompt_tokens} prompt + {report.completion_tokens} completion "
        f"= {report.total_tokens}")
    say(f"Questions: {len(report.dataset)} ({report.duplicates_removed} duplicates removed)")
    for note in said:
        tell(note)
    if report.failures:
        for doc_id, reason in report.failures:
            click.echo(redact(f"  failed: {doc_id}: {reason}"), err=True)
        raise GenerationIncomplete(
            f"{len(report.failures)} of {report.documents} documents failed; {output} was not written. "
            f"Done documents are kept in {progress}: run the same command again to retry the rest."
        )
    say(f"Wrote {output}")


class GenerationIncomplete(click.ClickException):
    """Some documents failed: exit 1 with one error line."""

    exit_code = 1
