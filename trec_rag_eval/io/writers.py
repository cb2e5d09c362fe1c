"""Writers for TREC qrels, runs and topics, and for JSON datasets and results.

Every writer is atomic: the text goes to a temporary file in the destination's folder, which then
replaces the destination in one ``os.replace``, so a crash never leaves half a file. An existing
file is never overwritten unless ``force=True``. Ids that a TREC file cannot hold (empty, with
whitespace or a NUL) are refused with an ``InputFormatError`` naming the query and the document, by
the JSON writers too: the readers refuse them, so such a file could not be read back.

Runs are written in ranking order: score descending, then doc_id descending (byte order), the
rule trec_eval applies; ranks are 1..n in that order. Scores are written with ``repr`` (shortest
text that reads back to the same float), so TREC -> JSON -> TREC keeps every score exactly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import polars as pl

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.atomic import write_atomic
from trec_rag_eval.io.ids import check_ids, has_whitespace
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Qrels, Run, has_subtopics, per_document

DATASET_KEYS = {
    "en": ("id", "query", "relevant", "non_relevant"),
    "fr": ("id", "requête", "pertinents", "non_pertinents"),
}
"""Key names written by ``write_dataset_json`` (``keys="en"`` or ``"fr"``, the French RAG tutorial's)."""


def write_trec_qrels(qrels: Qrels, path: str | os.PathLike[str], *, force: bool = False) -> int:
    """Write ``query_id iteration doc_id relevance`` lines in the table's row order; return the count."""
    frame = qrels.frame
    if frame.is_empty():  # trec_eval (and our reader) refuse an empty qrels file: do not make one
        raise InputFormatError(qrels.source, None, "no judgments to write: every list of documents is empty")
    check_ids(qrels.source, frame["query_id"].to_list(), frame["doc_id"].to_list())
    lines = [
        f"{q} {it} {d} {r}\n"
        for q, it, d, r in frame.select("query_id", "iteration", "doc_id", "relevance").iter_rows()
    ]
    write_atomic(path, "".join(lines), force)
    return len(lines)


def write_trec_run(
    run: Run, path: str | os.PathLike[str], *, run_tag: str | None = None, force: bool = False
) -> int:
    """Write ``query_id Q0 doc_id rank score run_tag`` lines; queries in order of first appearance,
    documents in ranking order with ranks 1..n. Return the number of lines."""
    tag = run_tag or run.run_tag
    if not tag or has_whitespace(tag):
        raise UsageError(f"run tag {quote(tag)} cannot be written to a TREC run (empty or with whitespace)")
    if run.frame.is_empty():
        raise InputFormatError(run.source, None, "no results to write: every result list is empty")
    frame = ranked(run)
    check_ids(run.source, frame["query_id"].to_list(), frame["doc_id"].to_list())
    lines = [
        f"{q} Q0 {d} {rank} {format_score(s)} {tag}\n"
        for q, d, s, rank in frame.select("query_id", "doc_id", "score", "rank").iter_rows()
    ]
    write_atomic(path, "".join(lines), force)
    return len(lines)


def write_topics(topics: Mapping[str, str], path: str | os.PathLike[str], *, force: bool = False) -> int:
    """Write ``query_id<TAB>query text`` lines in the mapping's order; return the count.

    A text holding a tab or a line break cannot be written on one line: refused, not mangled.
    """
    lines = []
    for query_id, text in topics.items():
        check_ids("<topics>", [query_id], [])
        if any(ch in text for ch in "\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
            raise InputFormatError(
                str(path),
                None,
                f"query {query_id}: the text {quote(text)} holds a tab or a "
                "line break, which a topics file (one query per line) cannot hold",
            )
        lines.append(f"{query_id}\t{text}\n")
    write_atomic(path, "".join(lines), force)
    return len(lines)


def write_dataset_json(
    qrels: Qrels, path: str | os.PathLike[str], *, keys: str = "en", force: bool = False
) -> int:
    """Write the judgments as a JSON dataset, one item per query; return the number of items.

    Items follow the topics' order, then the order of first appearance in the table. Grades 0 and
    1 only: ``relevant`` / ``non_relevant`` are lists of ids. Other grades: ``relevant`` is an object
    ``{doc_id: grade}`` of the positive grades and ``non_relevant`` one of the others (0, and the
    negative "unjudged" grades of trec_eval). Intent-aware qrels (ndeval's: a document judged under
    several subtopics) add ``subtopics``: ``{subtopic: {doc_id: grade}}``, every judgment, which the
    reader takes back; ``relevant`` / ``non_relevant`` then hold each document's highest grade.
    """
    if keys not in DATASET_KEYS:
        raise UsageError(f"unknown key set {keys!r}; expected one of {', '.join(DATASET_KEYS)}")
    id_key, text_key, relevant_key, other_key = DATASET_KEYS[keys]
    frame = qrels.frame
    check_ids(qrels.source, frame["query_id"].to_list(), frame["doc_id"].to_list())  # what the reader refuses
    topics = qrels.topics or {}
    judgments: dict[str, list[tuple[str, int]]] = {query_id: [] for query_id in topics}
    # intent-aware qrels (a document judged under several subtopics): every judgment goes under "subtopics",
    # and relevant / non_relevant hold each document's highest grade, what other readers understand
    subtopics: dict[str, dict[str, dict[str, int]]] | None = None
    if has_subtopics(qrels):
        subtopics = {}
        for q, it, d, r in qrels.frame.select("query_id", "iteration", "doc_id", "relevance").iter_rows():
            subtopics.setdefault(q, {}).setdefault(it, {})[d] = r
    for q, d, r in per_document(qrels).frame.select("query_id", "doc_id", "relevance").iter_rows():
        judgments.setdefault(q, []).append((d, r))
    binary = all(r in (0, 1) for pairs in judgments.values() for _, r in pairs)
    items: list[dict[str, Any]] = []
    for query_id, pairs in judgments.items():
        item: dict[str, Any] = {id_key: query_id}
        if query_id in topics:
            item[text_key] = topics[query_id]
        if binary:
            item[relevant_key] = [d for d, r in pairs if r > 0]
            item[other_key] = [d for d, r in pairs if r <= 0]
        else:
            item[relevant_key] = {d: r for d, r in pairs if r > 0}
            item[other_key] = {d: r for d, r in pairs if r <= 0}
        if subtopics is not None and query_id in subtopics:
            item["subtopics"] = subtopics[query_id]
        items.append(item)
    write_atomic(path, json.dumps(items, ensure_ascii=False, indent=2) + "\n", force)
    return len(items)


def write_results_json(
    run: Run, path: str | os.PathLike[str], *, scores: bool = True, force: bool = False
) -> int:
    """Write ``{query_id: [{"id": doc_id, "score": score}, ...]}`` in ranking order (or plain id lists
    with ``scores=False``, which read back as ranks). Return the number of queries."""
    out: dict[str, list[Any]] = {}
    check_ids(run.source, run.frame["query_id"].to_list(), run.frame["doc_id"].to_list())  # what the reader refuses
    for q, d, s in ranked(run).select("query_id", "doc_id", "score").iter_rows():
        out.setdefault(q, []).append({"id": d, "score": s} if scores else d)
    write_atomic(path, _dump_results(out), force)
    return len(out)


def ranked(run: Run) -> pl.DataFrame:
    """The run's rows in output order with a ``rank`` column: queries by first appearance, then
    score descending, then doc_id descending (byte order, as trec_eval breaks ties)."""
    frame = run.frame.with_row_index("_row")
    frame = frame.with_columns(pl.col("_row").min().over("query_id").alias("_query_order"))
    frame = frame.sort(["_query_order", "score", "doc_id"], descending=[False, True, True])
    frame = frame.with_columns(pl.int_range(1, pl.len() + 1).over("query_id").alias("rank"))
    return frame.drop("_row", "_query_order")


def format_score(score: float) -> str:
    """The shortest text that reads back to the same float; whole numbers without ``.0``."""
    text = repr(float(score))
    return text[:-2] if text.endswith(".0") else text


def _dump_results(out: dict[str, list[Any]]) -> str:
    """One query per line: readable diffs, still one JSON document. Should the query ids all be key
    names of a results row ({"query": ..., "results": ...}), rows with ids are written instead, so
    the file cannot read back as a single row."""
    from trec_rag_eval.io.json.content import looks_like_row

    if not out:
        return "{}\n"
    if looks_like_row(out):
        rows = [json.dumps({"id": q, "results": docs}, ensure_ascii=False) for q, docs in out.items()]
        return "[\n  " + ",\n  ".join(rows) + "\n]\n"
    body = ",\n".join(
        f"  {json.dumps(q, ensure_ascii=False)}: {json.dumps(docs, ensure_ascii=False)}"
        for q, docs in out.items()
    )
    return "{\n" + body + "\n}\n"

