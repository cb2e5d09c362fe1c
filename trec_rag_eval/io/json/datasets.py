"""Evaluation datasets kept as JSON or JSONL, read into ``Qrels`` with ``.topics``.

The shapes are listed in ``content``' docstring: rows (the French RAG tutorial's, English, ragas,
LlamaIndex eval results), LlamaIndex's EmbeddingQAFinetuneDataset, and ranx / pytrec_eval's
``{query_id: {doc_id: relevance}}``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.json.rows import (
    NON_RELEVANT_KEYS,
    QUERY_TEXT_KEYS,
    RELEVANCE_KEYS,
    RELEVANT_KEYS,
    agreed_key,
    check_id,
    entry_error,
    find_key,
    id_values,
    is_rows,
    json_excerpt,
    kind_of,
    missing_key_reason,
    nfc,
    query_text,
    require_object,
    row_entries,
    row_identity,
)
from trec_rag_eval.io.json.scanner import Entry, JsonDocument, parse_document
from trec_rag_eval.syntax import RELEVANCE_RANGE, quote
from trec_rag_eval.tables import Qrels, qrels_columns

DATASET_SHAPES = ("rows", "llamaindex", "dict")
"""Shapes ``read_dataset`` knows; ``None`` detects the shape from the content."""


def read_dataset(path: str | os.PathLike[str], shape: str | None = None) -> Qrels:
    """Read an evaluation dataset (any shape listed in the module docstring) into Qrels with topics."""
    name = os.fspath(path)
    document = parse_document(name)
    shape = shape or detect_dataset_shape(document)
    if shape == "rows":
        queries = _dataset_rows(document)
    elif shape == "llamaindex":
        queries = _dataset_llamaindex(document)
    elif shape == "dict":
        queries = _dataset_keyed(document)
    else:
        raise ValueError(f"unknown dataset shape {shape!r}; expected one of {DATASET_SHAPES}")
    if not queries:
        raise InputFormatError(name, None, "the dataset holds no query")
    return _to_qrels(queries, name)


def read_dataset_rows(rows: list[Any], source: str = "<dataset>", require_text: bool = False) -> Qrels:
    """A dataset already in memory, as a list of row dicts (every row shape ``read_dataset`` reads,
    the French RAG tutorial's included); errors name the row by its position. ``require_text``: every row must
    hold its query text (a search harness needs it to ask the engine)."""
    document = JsonDocument(source, "array", [Entry(None, i, None, row) for i, row in enumerate(rows, start=1)])
    return _to_qrels(_dataset_rows(document, require_text), source)


@dataclass
class _Query:
    query_id: str
    text: str | None
    judgments: list[tuple[str, int]]
    entry: Entry
    subtopics: list[tuple[str, str, int]] = field(default_factory=list)
    """(subtopic, doc_id, grade) of an intent-aware item (``"subtopics": {subtopic: judgments}``)."""


SUBTOPICS_KEY = "subtopics"
"""An item's intent-aware judgments, ``{subtopic: {doc_id: grade}}`` (ndeval's qrels as JSON): when present,
they are the item's judgments, its ``relevant`` being each document's highest grade for other readers."""


def _subtopics(path: str, entry: Entry, value: Any) -> list[tuple[str, str, int]]:
    if not isinstance(value, dict):
        raise entry_error(path, entry, f"key {SUBTOPICS_KEY!r}: expected an object {{subtopic: {{doc_id: grade}}}}, "
                                       f"got {kind_of(value)}")
    out: list[tuple[str, str, int]] = []
    for subtopic, judgments in value.items():
        name = check_id(path, entry, "subtopic", subtopic)
        out += [(name, doc_id, grade)
                for doc_id, grade in _judgments(path, entry, f"{SUBTOPICS_KEY}.{name}", judgments, default=1)]
    return out


def detect_dataset_shape(document: JsonDocument) -> str:
    if document.kind == "object":
        keys = {nfc(e.key or "") for e in document.entries}
        if {"queries", "relevant_docs"} <= keys:
            return "llamaindex"
        return "rows" if is_rows(document) else "dict"
    return "rows"


def _dataset_rows(document: JsonDocument, require_text: bool = False) -> list[_Query]:
    queries = []
    for entry in row_entries(document):
        row = require_object(document.path, entry, "an object with the query and its relevant documents")
        query_id, text, _ = row_identity(document.path, entry, row)
        if require_text:
            if text is None:
                raise entry_error(document.path, entry, missing_key_reason(row, ("requête", "query")))
            if not text.strip():
                raise entry_error(document.path, entry, "the query text is empty: there is nothing to search with")
        key = agreed_key(document.path, entry, row, RELEVANT_KEYS)
        if key is None:
            raise entry_error(
                document.path, entry, missing_key_reason(row, RELEVANT_KEYS[:2] + RELEVANT_KEYS[4:5])
            )
        judgments = _judgments(document.path, entry, key, row[key], default=1)
        other = agreed_key(document.path, entry, row, NON_RELEVANT_KEYS)
        if other is not None:
            judgments += _judgments(document.path, entry, other, row[other], default=0)
        subtopics = _subtopics(document.path, entry, row[SUBTOPICS_KEY]) if SUBTOPICS_KEY in row else []
        queries.append(_Query(query_id, text, judgments, entry, subtopics))
    return queries


def _dataset_keyed(document: JsonDocument) -> list[_Query]:
    """``{query_id: {doc_id: grade}}`` (ranx, pytrec_eval), ``{query_id: [doc ids]}`` or
    ``{query_id: row}``."""
    queries = []
    for entry in document.entries:
        assert entry.key is not None
        query_id = check_id(document.path, entry, "query id", entry.key)
        value, text = entry.value, None
        if isinstance(value, dict) and find_key(value, RELEVANT_KEYS) is not None:
            text_key = agreed_key(document.path, entry, value, QUERY_TEXT_KEYS)
            text = query_text(document.path, entry, text_key, value[text_key]) if text_key else None
            key = agreed_key(document.path, entry, value, RELEVANT_KEYS)
            assert key is not None
            judgments = _judgments(document.path, entry, key, value[key], default=1)
            other = agreed_key(document.path, entry, value, NON_RELEVANT_KEYS)
            if other is not None:
                judgments += _judgments(document.path, entry, other, value[other], default=0)
        else:
            judgments = _judgments(document.path, entry, None, value, default=1)
        queries.append(_Query(query_id, text, judgments, entry))
    return queries


def _dataset_llamaindex(document: JsonDocument) -> list[_Query]:
    """EmbeddingQAFinetuneDataset: ``queries`` {id: text}, ``relevant_docs`` {id: [node ids]};
    the corpus is ignored."""
    parts = {nfc(e.key or ""): e for e in document.entries}
    queries_entry, relevant_entry = parts["queries"], parts["relevant_docs"]
    for part in (queries_entry, relevant_entry):
        if not isinstance(part.value, dict):
            raise entry_error(
                document.path, part, f"expected an object keyed by query id, got {kind_of(part.value)}"
            )
    texts: dict[str, str] = {}
    for query_id, text in queries_entry.value.items():
        texts[check_id(document.path, queries_entry, "query id", query_id)] = query_text(
            document.path, queries_entry, query_id, text
        )
    queries = []
    order = list(texts) + [q for q in relevant_entry.value if q not in texts]
    for position, query_id in enumerate(order, start=1):
        entry = Entry(relevant_entry.line, position, query_id, relevant_entry.value.get(query_id, []))
        check_id(document.path, entry, "query id", query_id)
        judgments = _judgments(document.path, entry, "relevant_docs", entry.value, default=1)
        queries.append(_Query(query_id, texts.get(query_id), judgments, entry))
    return queries


def _judgments(path: str, entry: Entry, key: str | None, value: Any, default: int) -> list[tuple[str, int]]:
    """A list of ids (each gets ``default``), a dict {doc_id: grade} or a list of {"id", "relevance"}."""
    where = f"key {key!r}: " if key is not None else ""
    if isinstance(value, str):
        raise entry_error(path, entry, f"{where}expected a list of document ids, got the string {json_excerpt(value)}")
    return id_values(path, entry, where, value, RELEVANCE_KEYS, _grade, default, "a document", "relevance")


def _grade(path: str, entry: Entry, where: str, doc_id: Any, grade: Any) -> int:
    if isinstance(grade, bool) or not isinstance(grade, (int, float)):
        raise entry_error(path, entry,
                          f"{where}the relevance of {str(doc_id)!r} is not a number: {json_excerpt(grade)}")
    if isinstance(grade, float) and not grade.is_integer():
        raise entry_error(
            path,
            entry,
            f"{where}the relevance of {str(doc_id)!r} must be a whole number "
            f"(qrels hold integer grades), got {grade!r}",
        )
    low, high = RELEVANCE_RANGE
    if not low <= grade <= high:
        raise entry_error(path, entry, f"{where}the relevance of {quote(str(doc_id))} must be an integer from "
                                       f"{low} to {high}, got {json_excerpt(grade)}")
    return int(grade)


def _to_qrels(queries: list[_Query], path: str) -> Qrels:
    rows: list[tuple[str, str, str, int]] = []
    topics: dict[str, str] = {}
    owner: dict[str, _Query] = {}
    for query in queries:
        if query.query_id in owner:
            first = owner[query.query_id]
            raise entry_error(
                path,
                query.entry,
                f"query id {query.query_id!r} is used twice "
                f"(first by {first.entry.where()}{'' if first.entry.line is None else f', line {first.entry.line}'})",
            )
        owner[query.query_id] = query
        if query.text is not None:
            topics[query.query_id] = query.text
        if query.subtopics:
            seen: dict[tuple[str, str], int] = {}
            for subtopic, doc_id, grade in query.subtopics:
                if (subtopic, doc_id) in seen:
                    raise entry_error(path, query.entry, f"document {doc_id!r} is judged twice for subtopic "
                                                         f"{subtopic!r}")
                seen[(subtopic, doc_id)] = grade
                rows.append((query.query_id, subtopic, doc_id, grade))
            continue
        grades: dict[str, int] = {}
        for doc_id, grade in query.judgments:
            if doc_id in grades and grades[doc_id] != grade:
                raise entry_error(
                    path,
                    query.entry,
                    f"document {doc_id!r} is judged twice with different "
                    f"relevance ({grades[doc_id]} and {grade})",
                )
            if doc_id not in grades:
                grades[doc_id] = grade
                rows.append((query.query_id, "0", doc_id, grade))
    columns = qrels_columns(rows)
    return Qrels(columns, path, topics if topics else None, checked=True)
