"""Judgments and runs from any value the library takes: a ``Qrels`` or ``Run`` as it is, a path to any
file ``io.loading`` reads, or an in-memory shape (``tables.shapes``: dicts, DataFrames, Arrow tables,
ir_measures tuples, lists of dataset rows; results keyed by query text matched to their query ids)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.id_paths import IdLocator
from trec_rag_eval.io.loading import load_qrels, load_run
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Qrels, Run
from trec_rag_eval.tables.judgment_kinds import Preferences
from trec_rag_eval.tables.shapes import (
    QRELS_KINDS,
    RUN_KINDS,
    empty_keys,
    qrels_data,
    run_data,
    source_name,
)


def as_qrels(value: Any, name: str = "qrels") -> Qrels:
    """Judgments from any object ``tables.shapes`` accepts, a path to any file ``load_qrels`` reads, or a
    ``Qrels`` as it is."""
    if isinstance(value, Qrels):
        return value
    if isinstance(value, Preferences):  # preference judgments pass as they are (tables.judgment_kinds)
        return value  # type: ignore[return-value]
    if isinstance(value, (str, os.PathLike)):
        return load_qrels(value)
    if isinstance(value, list) and value and isinstance(value[0], Mapping) and "doc_id" not in value[0]:
        from trec_rag_eval.io.json.content import read_dataset_rows

        return read_dataset_rows(value, f"{name} (list of dataset rows)")
    return Qrels(qrels_data(value, name, QRELS_KINDS, frames_checked=True), source_name(value, name),
                 unjudged=empty_keys(value))


def _keyed_by_query_id(value: Mapping[Any, Any], qrels: Qrels, source: str) -> Mapping[Any, Any]:
    """``{query text: results}`` (the French RAG tutorial's results) keyed by the qrels' query ids, as the
    JSON results reader matches a file's keys: a key that is a query id stays, one that is exactly
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


def as_run(value: Any, qrels: Qrels | None = None, name: str = "run", run_tag: str = "run",
           id: IdLocator | None = None) -> Run:
    """A run from any object ``tables.shapes`` accepts, a path to any file ``load_run`` reads, or a
    ``Run`` as it is; ``qrels`` (with topics) lets JSON results keyed by query text find their query ids."""
    if isinstance(value, Run):
        return value
    if isinstance(value, (str, os.PathLike)):
        return load_run(value, qrels=qrels, id=id)
    source = source_name(value, name)
    if isinstance(value, Mapping) and qrels is not None and qrels.topics:
        value = _keyed_by_query_id(value, qrels, source)
    return Run(run_data(value, name, RUN_KINDS, frames_checked=True), run_tag, source)
