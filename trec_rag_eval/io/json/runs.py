"""Search results kept as JSON or JSONL, read into a ``Run`` (shapes: see ``content``)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping
from operator import countOf, itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.id_paths import IdLocator
from trec_rag_eval.io.ids import doc_ids_usable, has_whitespace
from trec_rag_eval.io.json.rows import (
    DOC_ID_KEYS,
    RESULT_KEYS,
    SCORE_KEYS,
    agreed_key,
    check_id,
    entry_error,
    find_key,
    id_values,
    is_rows,
    json_excerpt,
    missing_key_reason,
    nfc,
    require_object,
    row_entries,
    row_identity,
)
from trec_rag_eval.io.json.scanner import Entry, JsonDocument, parse_document
from trec_rag_eval.io.ranked_lists import list_scores
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Qrels, ResultsReport, Run, query_id_set, run_columns
from trec_rag_eval.tables.bulk import float_array, joined_strings


def read_results(path: str | os.PathLike[str], qrels: Qrels | None = None, run_tag: str | None = None,
                 id: IdLocator | None = None) -> Run:
    """Read search results into a Run; ``qrels`` (with topics) lets rows keyed by query text match;
    ``id``: where each result object keeps its document id, when none of the usual keys does
    (``io.id_paths``: ``"metadata.source"`` or a callable)."""
    return read_results_report(path, qrels, run_tag, id)[0]


def read_results_report(
    path: str | os.PathLike[str], qrels: Qrels | None = None, run_tag: str | None = None,
    id: IdLocator | None = None,
) -> tuple[Run, ResultsReport]:
    """Like ``read_results``, also returning the duplicates and empty lists it saw."""
    name = os.fspath(path)
    document = parse_document(name)
    same_file = qrels is not None and _same_file(qrels.source, name)
    resolver = _QueryResolver(qrels, name) if qrels is not None and not same_file else None
    rows: list[tuple[str, str, float]] = []
    duplicates: list[tuple[str, str, int]] = []
    empty: list[str] = []
    disordered: list[str] = []
    seen: dict[str, Entry] = {}
    for entry, query_id, ranking in _result_entries(document, resolver, id):
        if query_id in seen:
            raise entry_error(
                name,
                entry,
                f"query {query_id!r} already has results at {seen[query_id].where()}"
                f" (line {seen[query_id].line})",
            )
        seen[query_id] = entry
        docs, dups, rising = ranking
        if rising:
            disordered.append(query_id)
        duplicates.extend((query_id, doc_id, count) for doc_id, count in dups)
        if not docs:
            empty.append(query_id)
        rows.extend((query_id, doc_id, score) for doc_id, score in docs)
    columns = run_columns(rows)
    tag = run_tag or _default_run_tag(name)
    report = ResultsReport(tuple(duplicates), tuple(empty), tuple(disordered), searched=True)
    return Run(columns, tag, name, checked=True), report


def keyed_by_query_id(value: Mapping[Any, Any], qrels: Qrels, source: str) -> Mapping[Any, Any]:
    """``{query text: results}`` in memory (the French RAG tutorial's results) keyed by the qrels' query ids, as
    ``_QueryResolver`` matches a file's keys: a key that is a query id stays, one that is exactly
    one query's text becomes its id, any other stays (an extra query, warned about)."""
    assert qrels.topics is not None
    ids = set(qrels.topics) | set(qrels.query_ids)
    if all(key in ids for key in value):
        return value
    by_text: dict[str, list[str]] = {}
    for query_id, text in qrels.topics.items():
        by_text.setdefault(text, []).append(query_id)
    keyed: dict[Any, Any] = {}
    for key, results in value.items():
        query_id = key
        if isinstance(key, str) and key not in ids and key in by_text:
            if len(by_text[key]) > 1:
                raise InputFormatError(source, None, f"the query text {quote(key)} matches several queries "
                                       f"({', '.join(by_text[key])}); key the results by query id")
            query_id = by_text[key][0]
        if query_id in keyed:
            raise InputFormatError(source, None, f"query {query_id!r} has results twice: by its id and by its "
                                   "text")
        keyed[query_id] = results
    return keyed


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

    def by_key(self, entry: Entry, key: str) -> str:
        if key in self.ids:
            return key
        return self.by_text(entry, key) or key

    def by_text(self, entry: Entry, text: str) -> str | None:
        for index in (self.exact.get(text), self.loose.get(_loose(text))):
            if index:
                if len(index) > 1:
                    raise entry_error(
                        self.path,
                        entry,
                        f"the query text {json_excerpt(text)} matches several dataset "
                        f"queries ({', '.join(index)}); give each result row the query's id",
                    )
                return index[0]
        return None


def _result_entries(
    document: JsonDocument, resolver: _QueryResolver | None, id: IdLocator | None = None
) -> Iterator[tuple[Entry, str, tuple[list[tuple[str, float]], list[tuple[str, int]], bool]]]:
    path = document.path
    if not is_rows(document):  # an object keyed by query id or query text
        for entry in document.entries:
            assert entry.key is not None
            value = entry.value
            if isinstance(value, dict) and find_key(value, RESULT_KEYS) is not None:
                value = value[agreed_key(path, entry, value, RESULT_KEYS)]
            if resolver is not None:  # an unmatched key stays as it is: an extra query
                query_id = resolver.by_key(entry, entry.key)
            elif has_whitespace(entry.key):
                raise entry_error(
                    path,
                    entry,
                    "this key holds whitespace, so it is a query text, not a query id: "
                    "results keyed by query text need the dataset to match them",
                )
            else:
                query_id = check_id(path, entry, "query id", entry.key)
            entry.label = query_id
            yield entry, query_id, _ranking(path, entry, None, value, id)
        return
    for entry in row_entries(document):
        row = require_object(path, entry, "an object with the query and its results")
        query_id, text, explicit = row_identity(path, entry, row)
        key = agreed_key(path, entry, row, RESULT_KEYS)
        if key is None:
            raise entry_error(path, entry, missing_key_reason(row, RESULT_KEYS[:3] + RESULT_KEYS[5:6]))
        if resolver is not None and not explicit and text is not None:
            query_id = resolver.by_text(entry, text) or text
            entry.label = query_id
        yield entry, query_id, _ranking(path, entry, key, row[key], id)


def _ranking(
    path: str, entry: Entry, key: str | None, value: Any, id: IdLocator | None = None
) -> tuple[list[tuple[str, float]], list[tuple[str, int]], bool]:
    """(doc_id, score) without repeats, the repeats (doc_id, times listed), and whether the scores
    rise along the list. A list is ranked in its order (``io.ranked_lists``: its scores kept when
    they fall strictly along it, else n, n-1, ..., 1); an object ``{doc_id: score}`` is scored, as
    the same dict in memory is."""
    where = f"key {key!r}: " if key is not None else ""
    listed = _listed(value) if id is None else None
    if listed is not None:  # the usual list, read on whole columns
        ids, given = listed
        if len(set(ids)) == len(ids):
            scores, rising = list_scores(given, ids)
            return list(zip(ids, scores, strict=True)), [], rising
        pairs: list[tuple[str, float | None]] = list(zip(ids, given, strict=True))
    else:
        if isinstance(value, list) and value and all(_is_pair(item) for item in value):
            # [[id, score], ...]: (id, score) pairs as json.dumps writes them, read as they are in memory
            value = [{"id": item[0], "score": item[1]} for item in value]
        pairs = id_values(path, entry, where, value, SCORE_KEYS, _score, None, "a result", "score", id)
    with_score = sum(score is not None for _, score in pairs)
    if 0 < with_score < len(pairs):
        raise entry_error(
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
    if isinstance(value, dict):  # scored: trec_eval's rule ranks it
        return [(doc_id, float(score)) for doc_id, score in kept], repeats, False  # type: ignore[arg-type]
    scores, rising = list_scores([score for _, score in kept], [doc_id for doc_id, _ in kept])
    return [(doc_id, score) for (doc_id, _), score in zip(kept, scores, strict=True)], repeats, rising


def _listed(value: Any) -> tuple[list[str], list[float | None]] | None:
    """The document ids and scores (None each, when the results have none) of a list of result objects that all have
    the keys of the first, read on whole columns as ``id_values`` reads each result (the id under the first of
    ``DOC_ID_KEYS`` present, a string or an integer a TREC file can hold; the score under the first of
    ``SCORE_KEYS``, a finite number); None for any other list or when a check fails: then each result is read on
    its own, which names what is wrong."""
    if not isinstance(value, list) or not value or not isinstance(value[0], dict):
        return None
    first = value[0]
    if countOf(map(type, value), dict) != len(value) or countOf(map(dict.keys, value), first.keys()) != len(value):
        return None
    id_key, score_key = find_key(first, DOC_ID_KEYS), find_key(first, SCORE_KEYS)
    if id_key is None:
        return None
    ids = list(map(itemgetter(id_key), value))
    joined = joined_strings(ids)
    if joined is None and set(map(type, ids)) <= {str, int}:  # integer ids among them: their text
        ids = list(map(str, ids))
        joined = "".join(ids)
    if joined is None or not doc_ids_usable(ids, joined):
        return None
    if score_key is None:
        return ids, [None] * len(ids)
    scores = list(map(itemgetter(score_key), value))
    numbers = float_array(scores) if set(map(type, scores)) <= {int, float} else None
    if numbers is None or not np.isfinite(numbers).all():
        return None
    return ids, numbers.tolist()


def _is_pair(item: Any) -> bool:
    """An ``[id, score]`` pair: a string or integer id, then a number."""
    return (isinstance(item, list) and len(item) == 2 and isinstance(item[0], (str, int))
            and not isinstance(item[0], bool) and isinstance(item[1], (int, float)) and not isinstance(item[1], bool))


def _score(path: str, entry: Entry, where: str, doc_id: Any, score: Any) -> float:
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise entry_error(path, entry, f"{where}the score of {str(doc_id)!r} is not a number: {json_excerpt(score)}")
    return float(score)


def _loose(text: str) -> str:
    return " ".join(nfc(text).casefold().split())


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _default_run_tag(path: str) -> str:
    stem = Path(path).name.split(".")[0]
    return re.sub(r"\s+", "_", stem) or "run"
