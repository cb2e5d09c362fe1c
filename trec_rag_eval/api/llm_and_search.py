"""The facade's jobs that call out of the process: an LLM writing test queries and judging
(``generate_queries``, ``judge``: their bodies in ``llm.jobs``) and a search engine (``search_engine``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from trec_rag_eval.api import result_types
from trec_rag_eval.call_scope import per_call
from trec_rag_eval.notes import Note

__all__ = ["generate_queries", "judge", "search_engine"]
"""The facade's names this module holds: ``trec_rag_eval.api`` takes them all (``api.<name>``)."""


@per_call
def search_engine(spec: str | None = None, corpus: str | os.PathLike[str] | None = None, *, language: str = "fr",
                  remove_stop_words: bool = True) -> Any:
    """A search engine for the ``Evaluator``: ``spec`` ``"module:callable"`` (your own, imported), or the
    built-in BM25 over a JSONL ``corpus`` (offline; ``language`` its stop words and accents)."""
    if (spec is None) == (corpus is None):
        from trec_rag_eval.errors import UsageError

        raise UsageError("give either an engine spec (module:callable) or a corpus (built-in BM25)",
                         {"an engine spec ": "engine", "a corpus": "corpus"})
    if spec is not None:
        from trec_rag_eval.engine.load import load_engine

        return load_engine(spec)
    from trec_rag_eval.engine.bm25 import BM25Engine

    return BM25Engine(corpus, language=language, remove_stop_words=remove_stop_words)  # type: ignore[arg-type]


# --- LLM test queries and judgments (the generate-queries and judge commands go through these) --------------


@per_call
def generate_queries(corpus: Any, output: str | os.PathLike[str], *, model: str, n: int = 3,
                     language: str = "fr", base_url: str | None = None, api_key: str | None = None,
                     client: Any = None, concurrency: int = 4, timeout: float = 60.0, max_retries: int = 5,
                     temperature: float | None = None, progress_path: str | os.PathLike[str] | None = None,
                     force: bool = False, progress: bool = True,
                     on_note: Callable[[Note], None] | None = None) -> result_types.GenerationReport:
    """Ask an OpenAI-compatible LLM for ``n`` questions per document of ``corpus`` and write the
    dataset (the French RAG tutorial's shape: id, requête/query, pertinents/relevant, lexical_overlap) to
    ``output``, as ``trec-rag-eval generate-queries`` does (it calls this function).

    ``corpus``: a JSONL path (``{"id", "text"}`` a line), a list of such dicts or ``{doc_id: text}``.
    The model: ``model`` at ``base_url`` (a local vLLM / Ollama / llama.cpp server, or OpenAI with
    ``OPENAI_API_KEY`` / ``api_key``), or an ``openai.OpenAI`` ``client`` of your own. Finished documents
    go to a progress file beside ``output`` (``progress_path``), so calling again after a failure or an
    interrupt asks only for the rest; ``output`` is written once every document is done (an existing
    one only with ``force``). Returns the ``GenerationReport``: ``report.dataset`` is the dataset
    itself (give it to ``Evaluator.evaluate``), ``report.written``, ``report.failures``, the requests
    and tokens spent, ``report.mean_overlap`` (a note says how much the questions copy their documents'
    words: ``on_note(note)`` receives it, by default a ``TrecRagEvalWarning``). Needs the ``llm`` extra (openai).

    >>> report = generate_queries("corpus.jsonl", "dataset.json", model="llama3", base_url="http://localhost:8000/v1")
    """
    from trec_rag_eval.llm.jobs import generate_queries_file

    return generate_queries_file(corpus, output, model=model, n=n, language=language, base_url=base_url,
                                 api_key=api_key, client=client, concurrency=concurrency, timeout=timeout,
                                 max_retries=max_retries, temperature=temperature, progress_path=progress_path,
                                 force=force, progress=progress, on_note=on_note)


@per_call
def judge(dataset: Any, runs: Any, corpus: Any, output: str | os.PathLike[str], *, model: str,
          topics: str | os.PathLike[str] | None = None, depth: int = 10, language: str = "fr",
          calibrate: int = 0, seed: int = 42, max_chars: int = 8000, relevance_level: int = 1,
          base_url: str | None = None, api_key: str | None = None, client: Any = None, concurrency: int = 4,
          timeout: float = 60.0, max_retries: int = 5, temperature: float | None = None,
          progress_path: str | os.PathLike[str] | None = None, doc_map: Any = None,
          doc_id_pattern: str | None = None, allow_failures: bool = False, force: bool = False, progress: bool = True,
          on_note: Callable[[Note], None] | None = None) -> result_types.JudgeReport:
    """Grade with an LLM, on a 0-3 scale, the unjudged documents in the top ``depth`` of ``runs``, and
    write the judgments with those holes filled to ``output`` (TREC qrels, or a JSON dataset when it
    ends in ``.json``) and the LLM's to its ``.llm.tsv`` sidecar, as ``trec-rag-eval judge`` does (it
    calls this function). Human judgments are kept as they are.

    ``dataset``: the human judgments with their query texts (a JSON dataset path or list of rows, a
    ``Qrels`` with topics, or a TREC qrels path with ``topics``; an earlier ``judge`` output too: its
    LLM judgments are recognised by their sidecar, not asked again and never taken for human ones).
    ``runs``: one run or a list (or mapping name -> run) in any shape ``evaluate`` takes; chunk ids
    pooled as their documents with ``doc_map`` (or ``doc_id_pattern``, as in ``evaluate``). ``corpus``: the
    passages shown to the model, as in ``generate_queries``. ``calibrate=N`` also asks about N human-judged
    documents per query and reports the agreement (``report.agreement``: Cohen's kappa; needs scikit-learn).
    The model, ``progress_path`` and resuming: as in ``generate_queries``. ``on_note(note)`` receives the notes
    (chunk mapping, earlier LLM judgments, then ``report.notes``: unjudged documents missing from the
    corpus or with an empty text, passages cut at ``max_chars``, run queries without a query text), by
    default each a ``TrecRagEvalWarning``.

    Returns the ``JudgeReport``: ``report.qrels`` (the filled judgments, to ``evaluate`` with),
    ``report.coverage`` (per run: Judged@depth before and after), grades, failures, tokens.
    Evaluate with the humans' judgments only, the LLM's or both: ``evaluate(output, run, judgments=...)``.
    """
    from trec_rag_eval.io.chunks import doc_map_asked
    from trec_rag_eval.llm.jobs import judge_runs
    from trec_rag_eval.service.inputs import as_qrels, read_whole_run

    return judge_runs(dataset, runs, corpus, output, model=model, topics=topics, depth=depth, language=language,
                      calibrate=calibrate, seed=seed, max_chars=max_chars, relevance_level=relevance_level,
                      base_url=base_url, api_key=api_key, client=client, concurrency=concurrency, timeout=timeout,
                      max_retries=max_retries, temperature=temperature, progress_path=progress_path,
                      doc_map=doc_map_asked(doc_map, doc_id_pattern),
                      allow_failures=allow_failures, force=force, progress=progress, on_note=on_note,
                      read_run=read_whole_run, read_qrels=as_qrels)
