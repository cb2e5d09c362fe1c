"""Evaluation datasets and search results kept as JSON or JSONL, the way RAG pipelines keep them.

Datasets (read into ``Qrels`` with ``.topics = {query_id: query text}``):

* rows, as a JSON array or one object per line (JSONL): the French RAG tutorial's
  ``{"requête": ..., "pertinents": [...], "non_pertinents": [...]}``, the English
  ``{"query": ..., "relevant": [...], "non_relevant": [...]}``, ragas rows
  (``user_input``, ``reference_context_ids``) and LlamaIndex eval results (``expected_ids``);
  an optional ``id`` per row;
* LlamaIndex's EmbeddingQAFinetuneDataset: ``{"queries": {...}, "corpus": {...}, "relevant_docs": {...}}``;
* the dict-of-dicts of ranx and pytrec_eval, ``{query_id: {doc_id: relevance}}`` (or a list of ids).

Relevant documents are a list of ids (relevance 1), a dict ``{doc_id: grade}`` or a list of
``{"id": ..., "relevance": ...}``; ``non_pertinents`` / ``non_relevant`` become relevance 0.

Query ids are stable: the row's ``id`` where it has one, else ``q1``, ``q2``, ... by position in the
file (1-based, counting rows, not lines). The same rule applies to results rows that carry no id
and no text, so a results file written in the dataset's order lines up with it.

Results (read into ``Run``): per query, an ordered list of ids, a list of ``{"id": ..., "score": ...}``
or a dict ``{doc_id: score}``; as rows (``results``, ``retrieved_ids``, ``retrieved_context_ids``,
``candidates``, ...) or keyed by query id or query text (matched to the dataset's topics). An
ordered list of n ids gets scores n, n-1, ..., 1: strictly decreasing, so no tie-breaking rule can
reorder it. An id listed twice in one list keeps its first (best) place; the repeat is dropped and
reported in ``ResultsReport.duplicates``, like empty lists in ``ResultsReport.empty``.

Every error is an ``InputFormatError`` naming the file, the line of the row and the key.
"""

from __future__ import annotations

import os

from trec_rag_eval.io.ids import has_whitespace
from trec_rag_eval.io.json.datasets import DATASET_SHAPES, detect_dataset_shape, read_dataset, read_dataset_rows
from trec_rag_eval.io.json.rows import (
    RELEVANT_KEYS,
    RESULT_KEYS,
    SCORE_KEYS,
    find_key,
    is_rows,
    looks_like_row,
    row_entries,
)
from trec_rag_eval.io.json.runs import read_results, read_results_report
from trec_rag_eval.io.json.scanner import parse_document

__all__ = ["DATASET_SHAPES", "json_content_kind", "looks_like_row", "read_dataset", "read_dataset_rows",
           "read_results", "read_results_report"]


def json_content_kind(path: str | os.PathLike[str]) -> str:
    """``"dataset"``, ``"results"`` or ``"both"`` (ragas rows hold both): what a JSON file holds.

    A dict-of-dicts with a float value is a run, with integer values a dataset (the
    ranx/pytrec_eval convention); an object keyed by query texts holds results; a bare
    ``{query_id: [ids]}`` is taken for a dataset. Used by ``convert --json`` to decide what to write.
    """
    document = parse_document(os.fspath(path))
    if document.kind == "object" and detect_dataset_shape(document) == "llamaindex":
        return "dataset"
    entries = row_entries(document) if is_rows(document) else document.entries
    if not is_rows(document) and any(has_whitespace(e.key or "") for e in entries):
        return "results"  # keyed by query text: datasets are never keyed that way
    for entry in entries[:50]:
        value = entry.value
        if isinstance(value, dict):
            results = find_key(value, RESULT_KEYS) is not None
            judgments = find_key(value, RELEVANT_KEYS) is not None
            if results or judgments:
                return "both" if results and judgments else "results" if results else "dataset"
            if not is_rows(document) and any(isinstance(v, float) for v in value.values()):
                return "results"
        elif isinstance(value, list) and any(isinstance(v, dict) and find_key(v, SCORE_KEYS) for v in value):
            return "results"
    return "dataset"
