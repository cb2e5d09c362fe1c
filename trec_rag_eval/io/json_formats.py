"""Evaluation datasets and search results kept as JSON or JSONL, the way RAG pipelines keep them.

Datasets (read into ``Qrels`` with ``.topics = {query_id: query text}``):

* rows, as a JSON array or one object per line (JSONL): the seed lesson's
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

import json
import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.tables import Qrels, ResultsReport, Run, qrels_columns, query_id_set, run_columns
from trec_rag_eval.io.text import read_text

# Key aliases, in the order they are looked up. Keys are compared after NFC normalisation, so a
# "requête" typed with a combining accent (macOS) is the same key.
ID_KEYS = ("id", "query_id", "qid", "_id", "topic_id", "query-id")
QUERY_TEXT_KEYS = ("requête", "requete", "query", "question", "user_input", "query_text", "topic")
RELEVANT_KEYS = (
    "pertinents",
    "relevant",
    "relevant_docs",
    "relevant_ids",
    "reference_context_ids",
    "expected_ids",
    "qrels",
)
NON_RELEVANT_KEYS = ("non_pertinents", "non_relevant", "not_relevant", "irrelevant", "negatives")
RESULT_KEYS = (
    "résultats",
    "resultats",
    "results",
    "retrieved",
    "retrieved_ids",
    "retrieved_context_ids",
    "retrieved_docs",
    "hits",
    "candidates",
    "ranking",
    "documents",
    "docs",
)
DOC_ID_KEYS = ("id", "doc_id", "docid", "_id", "corpus_id", "corpus-id", "document_id", "node_id", "pid")
RELEVANCE_KEYS = ("relevance", "pertinence", "grade", "rel", "label", "score")
SCORE_KEYS = ("score", "similarity", "distance_score")

DATASET_SHAPES = ("rows", "llamaindex", "dict")
"""Shapes ``read_dataset`` knows; ``None`` detects the shape from the content."""


@dataclass
class _Entry:
    """One top-level element of a JSON document: a row of an array or JSONL file, or a key's value."""

    line: int | None
    position: int  # 1-based, in file order
    key: str | None
    value: Any
    label: str | None = None  # the query id once known, to name the row in errors

    def where(self) -> str:
        place = f"key {self.key!r}" if self.key is not None else f"item {self.position}"
        return f"{place} (query {self.label})" if self.label and self.label != self.key else place


@dataclass
class _Document:
    path: str
    kind: str  # "array", "lines" or "object"
    entries: list[_Entry] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Public readers


def read_dataset(path: str | os.PathLike[str], shape: str | None = None) -> Qrels:
    """Read an evaluation dataset (any shape listed in the module docstring) into Qrels with topics."""
    name = os.fspath(path)
    document = _parse_document(name)
    shape = shape or _detect_dataset_shape(document)
    if shape == "rows":
        queries = _dataset_rows(document)
    elif shape == "llamaindex":
        queries = _dataset_llamaindex(document)
    elif shape == "dict":
        queries = _dataset_keyed(document)
    else:
        raise ValueError(f"unknown dataset shape {shape!r}; expected one of {DATASET_SHAPES}")
    return _to_qrels(queries, name)


def read_dataset_rows(rows: list[Any], source: str = "<dataset>", require_text: bool = False) -> Qrels:
    """A dataset already in memory, as a list of row dicts (every row shape ``read_dataset`` reads,
    the seed's included); errors name the row by its position. ``require_text``: every row must
    hold its query text (a search harness needs it to ask the engine)."""
    document = _Document(source, "array", [_Entry(None, i, None, row) for i, row in enumerate(rows, start=1)])
    return _to_qrels(_dataset_rows(document, require_text), source)


def read_results(path: str | os.PathLike[str], qrels: Qrels | None = None, run_tag: str | None = None) -> Run:
    """Read search results into a Run; ``qrels`` (with topics) lets rows keyed by query text match."""
    return read_results_report(path, qrels, run_tag)[0]


def read_results_report(
    path: str | os.PathLike[str], qrels: Qrels | None = None, run_tag: str | None = None
) -> tuple[Run, ResultsReport]:
    """Like ``read_results``, also returning the duplicates and empty lists it saw."""
    name = os.fspath(path)
    document = _parse_document(name)
    same_file = qrels is not None and _same_file(qrels.source, name)
    resolver = _QueryResolver(qrels, name) if qrels is not None and not same_file else None
    rows: list[tuple[str, str, float]] = []
    duplicates: list[tuple[str, str, int]] = []
    empty: list[str] = []
    seen: dict[str, _Entry] = {}
    for entry, query_id, ranking in _result_entries(document, resolver):
        if query_id in seen:
            raise _error(
                name,
                entry,
                f"query {query_id!r} already has results at {seen[query_id].where()}"
                f" (line {seen[query_id].line})",
            )
        seen[query_id] = entry
        docs, dups = ranking
        duplicates.extend((query_id, doc_id, count) for doc_id, count in dups)
        if not docs:
            empty.append(query_id)
        rows.extend((query_id, doc_id, score) for doc_id, score in docs)
    columns = run_columns(rows)
    tag = run_tag or _default_run_tag(name)
    return Run(columns, tag, name), ResultsReport(tuple(duplicates), tuple(empty))


def json_content_kind(path: str | os.PathLike[str]) -> str:
    """``"dataset"``, ``"results"`` or ``"both"`` (ragas rows hold both): what a JSON file holds.

    A dict-of-dicts with a float value is a run, with integer values a dataset (the
    ranx/pytrec_eval convention); an object keyed by query texts holds results; a bare
    ``{query_id: [ids]}`` is taken for a dataset. Used by ``convert --json`` to decide what to write.
    """
    document = _parse_document(os.fspath(path))
    if document.kind == "object" and _detect_dataset_shape(document) == "llamaindex":
        return "dataset"
    entries = _row_entries(document) if _is_rows(document) else document.entries
    if not _is_rows(document) and any(any(ch.isspace() for ch in e.key or "") for e in entries):
        return "results"  # keyed by query text: datasets are never keyed that way
    for entry in entries[:50]:
        value = entry.value
        if isinstance(value, dict):
            results = _find_key(value, RESULT_KEYS) is not None
            judgments = _find_key(value, RELEVANT_KEYS) is not None
            if results or judgments:
                return "both" if results and judgments else "results" if results else "dataset"
            if not _is_rows(document) and any(isinstance(v, float) for v in value.values()):
                return "results"
        elif isinstance(value, list) and any(isinstance(v, dict) and _find_key(v, SCORE_KEYS) for v in value):
            return "results"
    return "dataset"


# --------------------------------------------------------------------------------------------
# Parsing JSON and JSONL with the line of every top-level element


class _BadConstant(ValueError):
    pass


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_constant(name: str) -> float:
    raise _BadConstant(name)


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_pairs_without_duplicates)
_PLAIN_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _skip_whitespace(text: str, index: int) -> int:
    """The first index at or after ``index`` that is not JSON whitespace.

    The pattern matches the empty string, so ``match`` never returns None here."""
    return cast("re.Match[str]", _WHITESPACE.match(text, index)).end()


def _parse_document(path: str) -> _Document:
    text = read_text(path)
    start = _skip_whitespace(text, 0)
    if start == len(text):
        raise InputFormatError(path, None, "the file is empty (expected JSON or JSONL)")
    if text[start] == "[":
        return _Document(path, "array", list(_scan_array(path, text, start)))
    if text[start] == "{":
        end = _skip_value(path, text, start)
        rest = _skip_whitespace(text, end)
        if rest == len(text):
            return _Document(path, "object", list(_scan_object(path, text, start)))
        return _Document(path, "lines", list(_scan_lines(path, text)))
    try:  # not an array or object: let the decoder say what it is
        value, _ = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as err:
        raise _json_error(path, err) from None
    raise InputFormatError(
        path, _line_of(text, start), f"expected a JSON array or object, got {type(value).__name__}"
    )


def _json_error(path: str, err: json.JSONDecodeError) -> InputFormatError:
    return InputFormatError(path, err.lineno, f"invalid JSON at column {err.colno}: {err.msg}")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _decode(path: str, text: str, index: int, line: int, where: str) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, index)
    except json.JSONDecodeError as err:
        raise _json_error(path, err) from None
    except _BadConstant as err:
        raise InputFormatError(
            path, line, f"{where}: {err} is not valid JSON (scores must be finite numbers)"
        ) from None
    except _DuplicateKey as err:
        raise InputFormatError(path, line, f"{where}: duplicate key {err.key!r} in one JSON object") from None


def _skip_value(path: str, text: str, index: int) -> int:
    """The end of the value at ``index``; checks of keys and constants are left to the scan."""
    try:
        return _PLAIN_DECODER.raw_decode(text, index)[1]
    except json.JSONDecodeError as err:
        raise _json_error(path, err) from None


class _LineCounter:
    """Line numbers of increasing offsets without rescanning the text."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def at(self, index: int) -> int:
        self.line += self.text.count("\n", self.offset, index)
        self.offset = index
        return self.line


def _expect(path: str, text: str, index: int, chars: str, what: str) -> int:
    index = _skip_whitespace(text, index)
    if index >= len(text) or text[index] not in chars:
        err = json.JSONDecodeError(f"Expecting {what}", text, index)
        raise _json_error(path, err)
    return index


def _scan_array(path: str, text: str, start: int) -> Iterator[_Entry]:
    lines = _LineCounter(text)
    index = _skip_whitespace(text, start + 1)
    position = 0
    if index < len(text) and text[index] == "]":
        index += 1
    else:
        while True:
            position += 1
            index = _skip_whitespace(text, index)
            line = lines.at(index)
            value, index = _decode(path, text, index, line, f"item {position}")
            yield _Entry(line, position, None, value)
            index = _expect(path, text, index, ",]", "',' delimiter")
            index += 1
            if text[index - 1] == "]":
                break
    _expect_end(path, text, index)


def _scan_object(path: str, text: str, start: int) -> Iterator[_Entry]:
    lines = _LineCounter(text)
    index = _skip_whitespace(text, start + 1)
    position = 0
    seen: dict[str, int] = {}
    if index < len(text) and text[index] == "}":
        return
    while True:
        position += 1
        index = _expect(path, text, index, '"', "property name enclosed in double quotes")
        line = lines.at(index)
        key, index = _decode(path, text, index, line, f"item {position}")
        if key in seen:
            raise InputFormatError(path, line, f"duplicate key {key!r} (first at line {seen[key]})")
        seen[key] = line
        index = _expect(path, text, index, ":", "':' delimiter") + 1
        index = _skip_whitespace(text, index)
        value, index = _decode(path, text, index, line, f"key {key!r}")
        yield _Entry(line, position, key, value)
        index = _expect(path, text, index, ",}", "',' delimiter") + 1
        if text[index - 1] == "}":
            break


def _expect_end(path: str, text: str, index: int) -> None:
    index = _skip_whitespace(text, index)
    if index != len(text):
        raise _json_error(path, json.JSONDecodeError("Extra data", text, index))


def _scan_lines(path: str, text: str) -> Iterator[_Entry]:
    """JSONL: one JSON value per non-blank line; positions count rows, line numbers count lines."""
    position = 0
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        position += 1
        try:
            value, end = _DECODER.raw_decode(line, _skip_whitespace(line, 0))
        except json.JSONDecodeError as err:
            raise InputFormatError(path, line_no, f"invalid JSON at column {err.colno}: {err.msg}") from None
        except _BadConstant as err:
            raise InputFormatError(
                path, line_no, f"{err} is not valid JSON (scores must be finite numbers)"
            ) from None
        except _DuplicateKey as err:
            raise InputFormatError(path, line_no, f"duplicate key {err.key!r} in one JSON object") from None
        if line[end:].strip():
            raise InputFormatError(
                path,
                line_no,
                f"invalid JSON at column {end + 1}: extra data after the value "
                "(JSONL holds one value per line)",
            )
        yield _Entry(line_no, position, None, value)


# --------------------------------------------------------------------------------------------
# Datasets


@dataclass
class _Query:
    query_id: str
    text: str | None
    judgments: list[tuple[str, int]]
    entry: _Entry


def _detect_dataset_shape(document: _Document) -> str:
    if document.kind == "object":
        keys = {_nfc(e.key or "") for e in document.entries}
        if {"queries", "relevant_docs"} <= keys:
            return "llamaindex"
        return "rows" if _is_rows(document) else "dict"
    return "rows"


def _is_rows(document: _Document) -> bool:
    """Rows (array, JSONL, single row, ragas samples) rather than an object keyed by query."""
    if document.kind != "object":
        return True
    obj = {cast(str, e.key): e.value for e in document.entries}  # an object's entries all have a key
    return _looks_like_row(obj) or (set(obj) == {"samples"} and isinstance(obj["samples"], list))


def _looks_like_row(obj: dict[str, Any]) -> bool:
    """One row (a one-line JSONL file) rather than an object keyed by query id: it has a judgments or
    results key, and a text or number beside it (the query, an id) or only known keys. An object
    keyed by query id holds only lists and objects, whatever its ids are (even "results")."""
    if not any(_find_key(obj, keys) is not None for keys in (RELEVANT_KEYS, RESULT_KEYS)):
        return False
    known = set(ID_KEYS + QUERY_TEXT_KEYS + RELEVANT_KEYS + NON_RELEVANT_KEYS + RESULT_KEYS)
    has_scalar = any(not isinstance(v, (list, dict)) for v in obj.values())
    query_object = any(  # TREC RAG requests: "query": {"qid": ..., "text": ...}
        isinstance(obj[k], dict) and _find_key(obj[k], ID_KEYS) and isinstance(obj[k].get("text"), str)
        for k in obj
        if _nfc(k).lower() in QUERY_TEXT_KEYS
    )
    return has_scalar or query_object or (len(obj) > 1 and all(k in known for k in obj))


def looks_like_row(obj: dict[str, Any]) -> bool:
    """Whether an object would be read as one row rather than as results keyed by query id
    (the writers use it to avoid writing a keyed object that reads back as a row)."""
    return _looks_like_row(obj)


def _row_entries(document: _Document) -> list[_Entry]:
    """The rows of an array, a JSONL file, a single-row object or ragas' ``{"samples": [...]}``."""
    if document.kind != "object":
        return document.entries
    obj = {e.key: e.value for e in document.entries}
    if set(obj) == {"samples"} and isinstance(obj["samples"], list):
        line = document.entries[0].line
        return [_Entry(line, i, None, row) for i, row in enumerate(obj["samples"], start=1)]
    return [_Entry(document.entries[0].line if document.entries else 1, 1, None, obj)]


def _dataset_rows(document: _Document, require_text: bool = False) -> list[_Query]:
    queries = []
    for entry in _row_entries(document):
        row = _require_object(document.path, entry, "an object with the query and its relevant documents")
        query_id, text, _ = _row_identity(document.path, entry, row)
        if require_text:
            if text is None:
                raise _error(document.path, entry, _missing_key_reason(row, ("requête", "query")))
            if not text.strip():
                raise _error(document.path, entry, "the query text is empty: there is nothing to search with")
        key = _find_key(row, RELEVANT_KEYS)
        if key is None:
            raise _error(
                document.path, entry, _missing_key_reason(row, RELEVANT_KEYS[:2] + RELEVANT_KEYS[4:5])
            )
        judgments = _judgments(document.path, entry, key, row[key], default=1)
        other = _find_key(row, NON_RELEVANT_KEYS)
        if other is not None:
            judgments += _judgments(document.path, entry, other, row[other], default=0)
        queries.append(_Query(query_id, text, judgments, entry))
    return queries


def _dataset_keyed(document: _Document) -> list[_Query]:
    """``{query_id: {doc_id: grade}}`` (ranx, pytrec_eval), ``{query_id: [doc ids]}`` or
    ``{query_id: row}``."""
    queries = []
    for entry in document.entries:
        assert entry.key is not None
        query_id = _check_id(document.path, entry, "query id", entry.key)
        value, text = entry.value, None
        if isinstance(value, dict) and _find_key(value, RELEVANT_KEYS) is not None:
            text_key = _find_key(value, QUERY_TEXT_KEYS)
            text = _query_text(document.path, entry, text_key, value[text_key]) if text_key else None
            key = _find_key(value, RELEVANT_KEYS)
            judgments = _judgments(document.path, entry, key, value[key], default=1)
            other = _find_key(value, NON_RELEVANT_KEYS)
            if other is not None:
                judgments += _judgments(document.path, entry, other, value[other], default=0)
        else:
            judgments = _judgments(document.path, entry, None, value, default=1)
        queries.append(_Query(query_id, text, judgments, entry))
    return queries


def _dataset_llamaindex(document: _Document) -> list[_Query]:
    """EmbeddingQAFinetuneDataset: ``queries`` {id: text}, ``relevant_docs`` {id: [node ids]};
    the corpus is ignored."""
    parts = {_nfc(e.key or ""): e for e in document.entries}
    queries_entry, relevant_entry = parts["queries"], parts["relevant_docs"]
    for part in (queries_entry, relevant_entry):
        if not isinstance(part.value, dict):
            raise _error(
                document.path, part, f"expected an object keyed by query id, got {_kind(part.value)}"
            )
    texts: dict[str, str] = {}
    for query_id, text in queries_entry.value.items():
        texts[_check_id(document.path, queries_entry, "query id", query_id)] = _query_text(
            document.path, queries_entry, query_id, text
        )
    queries = []
    order = list(texts) + [q for q in relevant_entry.value if q not in texts]
    for position, query_id in enumerate(order, start=1):
        entry = _Entry(relevant_entry.line, position, query_id, relevant_entry.value.get(query_id, []))
        _check_id(document.path, entry, "query id", query_id)
        judgments = _judgments(document.path, entry, "relevant_docs", entry.value, default=1)
        queries.append(_Query(query_id, texts.get(query_id), judgments, entry))
    return queries


def _row_identity(path: str, entry: _Entry, row: dict[str, Any]) -> tuple[str, str | None, bool]:
    """The row's query id (its id, else q<position>), its query text (or None), and whether the id
    was given. Sets ``entry.label`` so later errors name the query."""
    text_key = _find_key(row, QUERY_TEXT_KEYS)
    text_value = row[text_key] if text_key is not None else None
    explicit_id = None
    if isinstance(text_value, dict):  # TREC RAG requests: "query": {"qid": ..., "text": ...}
        inner_id = _find_key(text_value, ID_KEYS)
        explicit_id = text_value[inner_id] if inner_id else None
        text_value = text_value.get("text")
    id_key = _find_key(row, ID_KEYS)
    if id_key is not None:
        explicit_id = row[id_key]
    text = _query_text(path, entry, text_key, text_value) if text_value is not None else None
    if explicit_id is None:
        entry.label = f"q{entry.position}"
        return entry.label, text, False
    entry.label = _check_id(path, entry, f"query id ({id_key or text_key!r})", explicit_id)
    return entry.label, text, True


def _query_text(path: str, entry: _Entry, key: str | None, value: Any) -> str:
    if not isinstance(value, str):
        raise _error(path, entry, f"key {key!r}: the query text must be a string, got {_kind(value)}")
    return value


def _judgments(path: str, entry: _Entry, key: str | None, value: Any, default: int) -> list[tuple[str, int]]:
    """A list of ids (each gets ``default``), a dict {doc_id: grade} or a list of {"id", "relevance"}."""
    where = f"key {key!r}: " if key is not None else ""
    if isinstance(value, str):
        raise _error(path, entry, f"{where}expected a list of document ids, got the string {_short(value)}")
    return _id_values(path, entry, where, value, RELEVANCE_KEYS, _grade, default, "a document", "relevance")


def _id_values(path: str, entry: _Entry, where: str, value: Any, value_keys: tuple[str, ...],
               read_value: Callable[[str, _Entry, str, Any, Any], Any], default: Any, element: str,
               value_name: str) -> list[tuple[str, Any]]:
    """(doc_id, value) pairs, in order, from what a dataset row holds as judgments or a results row as
    its ranking: an object ``{doc_id: value}``, or a list of ids (each gets ``default``) or of
    ``{"id": ..., <one of value_keys>: ...}`` objects (``element`` names one in errors). ``read_value``
    checks a value; ``value_name`` names it in the error for anything else."""
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for doc_id, item in value.items():
            checked = _check_id(path, entry, f"{where}document id", doc_id)
            out.append((checked, read_value(path, entry, where, doc_id, item)))
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                doc_id = _element_id(path, entry, where, item, element)
                value_key = _find_key(item, value_keys)
                found = default if value_key is None else read_value(path, entry, where, doc_id, item[value_key])
                out.append((doc_id, found))
            else:
                out.append((_check_id(path, entry, f"{where}document id", item), default))
    else:
        raise _error(
            path,
            entry,
            f"{where}expected a list of document ids or an object {{doc_id: {value_name}}}, got {_kind(value)}",
        )
    return out


def _grade(path: str, entry: _Entry, where: str, doc_id: Any, grade: Any) -> int:
    if isinstance(grade, bool) or not isinstance(grade, (int, float)):
        raise _error(path, entry, f"{where}the relevance of {str(doc_id)!r} is not a number: {_short(grade)}")
    if isinstance(grade, float) and not grade.is_integer():
        raise _error(
            path,
            entry,
            f"{where}the relevance of {str(doc_id)!r} must be a whole number "
            f"(qrels hold integer grades), got {grade!r}",
        )
    return int(grade)


def _to_qrels(queries: list[_Query], path: str) -> Qrels:
    rows: list[tuple[str, str, str, int]] = []
    topics: dict[str, str] = {}
    owner: dict[str, _Query] = {}
    for query in queries:
        if query.query_id in owner:
            first = owner[query.query_id]
            raise _error(
                path,
                query.entry,
                f"query id {query.query_id!r} is used twice "
                f"(first by {first.entry.where()}{'' if first.entry.line is None else f', line {first.entry.line}'})",
            )
        owner[query.query_id] = query
        if query.text is not None:
            topics[query.query_id] = query.text
        grades: dict[str, int] = {}
        for doc_id, grade in query.judgments:
            if doc_id in grades and grades[doc_id] != grade:
                raise _error(
                    path,
                    query.entry,
                    f"document {doc_id!r} is judged twice with different "
                    f"relevance ({grades[doc_id]} and {grade})",
                )
            if doc_id not in grades:
                grades[doc_id] = grade
                rows.append((query.query_id, "0", doc_id, grade))
    columns = qrels_columns(rows)
    return Qrels(columns, path, topics if topics else None)


# --------------------------------------------------------------------------------------------
# Results


class _QueryResolver:
    """Maps a results key or row to a dataset query id: by id first, then by exact query text,
    then by text with case and spacing normalised. An unmatched text stays as it is (an extra query)."""

    def __init__(self, qrels: Qrels, path: str) -> None:
        self.path = path
        self.ids = query_id_set(qrels) | set(qrels.topics or {})
        self.exact: dict[str, list[str]] = {}
        self.loose: dict[str, list[str]] = {}
        for query_id, text in (qrels.topics or {}).items():
            self.exact.setdefault(text, []).append(query_id)
            self.loose.setdefault(_loose(text), []).append(query_id)

    def by_key(self, entry: _Entry, key: str) -> str:
        if key in self.ids:
            return key
        return self.by_text(entry, key) or key

    def by_text(self, entry: _Entry, text: str) -> str | None:
        for index in (self.exact.get(text), self.loose.get(_loose(text))):
            if index:
                if len(index) > 1:
                    raise _error(
                        self.path,
                        entry,
                        f"the query text {_short(text)} matches several dataset "
                        f"queries ({', '.join(index)}); give each result row the query's id",
                    )
                return index[0]
        return None


def _result_entries(
    document: _Document, resolver: _QueryResolver | None
) -> Iterator[tuple[_Entry, str, tuple[list[tuple[str, float]], list[tuple[str, int]]]]]:
    path = document.path
    if not _is_rows(document):  # an object keyed by query id or query text
        for entry in document.entries:
            assert entry.key is not None
            value = entry.value
            if isinstance(value, dict) and _find_key(value, RESULT_KEYS) is not None:
                value = value[_find_key(value, RESULT_KEYS)]
            if resolver is not None:  # an unmatched key stays as it is: an extra query
                query_id = resolver.by_key(entry, entry.key)
            elif any(ch.isspace() for ch in entry.key):
                raise _error(
                    path,
                    entry,
                    "this key holds whitespace, so it is a query text, not a query id: "
                    "results keyed by query text need the dataset to match them",
                )
            else:
                query_id = _check_id(path, entry, "query id", entry.key)
            entry.label = query_id
            yield entry, query_id, _ranking(path, entry, None, value)
        return
    for entry in _row_entries(document):
        row = _require_object(path, entry, "an object with the query and its results")
        query_id, text, explicit = _row_identity(path, entry, row)
        key = _find_key(row, RESULT_KEYS)
        if key is None:
            raise _error(path, entry, _missing_key_reason(row, RESULT_KEYS[:3] + RESULT_KEYS[5:6]))
        if resolver is not None and not explicit and text is not None:
            query_id = resolver.by_text(entry, text) or text
            entry.label = query_id
        yield entry, query_id, _ranking(path, entry, key, row[key])


def _ranking(
    path: str, entry: _Entry, key: str | None, value: Any
) -> tuple[list[tuple[str, float]], list[tuple[str, int]]]:
    """(doc_id, score) in list order without repeats, and the repeats (doc_id, times listed)."""
    where = f"key {key!r}: " if key is not None else ""
    pairs: list[tuple[str, float | None]] = _id_values(path, entry, where, value, SCORE_KEYS, _score, None,
                                                       "a result", "score")
    with_score = sum(score is not None for _, score in pairs)
    if 0 < with_score < len(pairs):
        raise _error(
            path,
            entry,
            f"{where}{with_score} of {len(pairs)} results have a score and the others "
            "do not; give every result a score or none",
        )
    counts: dict[str, int] = {}
    kept: list[tuple[str, float | None]] = []
    for doc_id, score in pairs:
        counts[doc_id] = counts.get(doc_id, 0) + 1
        if counts[doc_id] == 1:
            kept.append((doc_id, score))
    repeats = [(doc_id, n) for doc_id, n in counts.items() if n > 1]
    n = len(kept)
    # An ordered list: rank r gets score n - r + 1, strictly decreasing, so ties cannot arise.
    docs = [
        (doc_id, float(n - rank) if score is None else score) for rank, (doc_id, score) in enumerate(kept)
    ]
    return docs, repeats


def _score(path: str, entry: _Entry, where: str, doc_id: Any, score: Any) -> float:
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise _error(path, entry, f"{where}the score of {str(doc_id)!r} is not a number: {_short(score)}")
    return float(score)


# --------------------------------------------------------------------------------------------
# Small helpers


def _element_id(path: str, entry: _Entry, where: str, element: dict[str, Any], what: str) -> str:
    """The document id of a ``{"id": ..., ...}`` element of a list (judgment or result)."""
    id_key = _find_key(element, DOC_ID_KEYS)
    if id_key is None:
        raise _error(path, entry, f"{where}{what} has no id key "
                     f"(expected one of {', '.join(DOC_ID_KEYS[:4])}): {_short(element)}")
    return _check_id(path, entry, f"{where}document id", element[id_key])


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _find_key(obj: dict[str, Any], aliases: tuple[str, ...]) -> str | None:
    """The key of ``obj`` that is one of ``aliases`` (NFC-normalised, case-insensitive), or None."""
    wanted = {alias: i for i, alias in enumerate(aliases)}
    best: tuple[int, str] | None = None
    for key in obj:
        rank = wanted.get(_nfc(key).lower()) if isinstance(key, str) else None
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, key)
    return best[1] if best else None


def _missing_key_reason(row: dict[str, Any], aliases: tuple[str, ...]) -> str:
    names = " or ".join(repr(a) for a in aliases)
    present = ", ".join(repr(k) for k in list(row)[:6]) or "none"
    return f"missing required key {names} (keys present: {present})"


def _require_object(path: str, entry: _Entry, what: str) -> dict[str, Any]:
    if not isinstance(entry.value, dict):
        raise _error(path, entry, f"expected {what}, got {_kind(entry.value)}")
    return entry.value


def _check_id(path: str, entry: _Entry, what: str, value: Any) -> str:
    """An id as text; refused if a TREC file could not hold it (empty, whitespace, not text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _error(path, entry, f"{what} must be a string or an integer, got {_short(value)}")
    text = str(value)
    if not text:
        raise _error(path, entry, f"{what} is empty")
    if any(ch.isspace() for ch in text):
        raise _error(path, entry, f"{what} {text!r} contains whitespace, which a TREC file cannot hold")
    if text.startswith("#") and what.startswith("query id"):
        raise _error(path, entry, f"{what} {text!r} starts with '#', which a TREC file reads as a comment")
    return text


def _error(path: str, entry: _Entry, reason: str) -> InputFormatError:
    return InputFormatError(path, entry.line, f"{entry.where()}: {reason}")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _loose(text: str) -> str:
    return " ".join(_nfc(text).casefold().split())


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _default_run_tag(path: str) -> str:
    stem = Path(path).name.split(".")[0]
    return re.sub(r"\s+", "_", stem) or "run"
