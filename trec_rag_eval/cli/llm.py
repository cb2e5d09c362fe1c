"""The options of the commands that ask an LLM (``generate-queries``, ``judge``): one definition, since
both go through the same client, retries and progress file (``llm.client``); and ``--judgments``, the
choice between human and LLM judgments of the commands that evaluate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from trec_rag_eval.cli.params import Integer, OutputPath, Real


def llm_options(language_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--model --base-url --language --concurrency --timeout --max-retries --temperature
    --progress-file``, passed by those names."""
    options = [
        click.option("--model", required=True, help="Model name, as the endpoint knows it."),
        click.option("--base-url", default=None,
                     help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (vLLM, Ollama, llama.cpp). "
                          "The key comes from OPENAI_API_KEY; local servers may need none."),
        click.option("--language", type=click.Choice(["fr", "en"]), default="fr", show_default=True,
                     help=language_help),
        click.option("--concurrency", type=Integer(1, 1024), default=4, show_default=True,
                     help="Requests in flight at once."),
        click.option("--timeout", type=Real(0.0, 86400.0, open=True), default=60.0, show_default=True,
                     help="Seconds to wait for one reply."),
        click.option("--max-retries", type=Integer(0, 100), default=5, show_default=True,
                     help="Retries on 429, 5xx, timeouts (exponential backoff, Retry-After honoured)."),
        click.option("--temperature", type=Real(0.0, 2.0), default=None,
                     help="Sampling temperature (the server's default if unset)."),
        click.option("--progress-file", type=OutputPath(local=True, dir_okay=False), default=None,
                     help="Resumable progress file [default: OUTPUT.progress.jsonl]: finished work is appended "
                          "to it, a rerun resumes from it, and it is removed once OUTPUT is written, so it is "
                          "never an input, OUTPUT or its sidecar (refused before any request)."),
    ]

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


judgments_option = click.option(
    "--judgments", type=click.Choice(["human", "llm", "both"]), default=None,
    help="Which judgments to use when `judge` filled holes (QRELS.llm.tsv beside QRELS): the humans' only, "
         "the LLM's only, or both (the default then).")
