"""Qrels and topics by ir_datasets name: ``irds:msmarco-passage/trec-dl-2019`` (as ir_measures reads them).

ir_datasets is an optional dependency (the ``irds`` extra), imported only when such a name is read. The
dataset's qrels keep their iteration column (the subtopic of intent-aware qrels); its queries become the
topics (their text). ir_datasets downloads a dataset's files on first use: a download that fails (no
network, a file behind a licence) is reported with the dataset's name and the cause.
"""

from __future__ import annotations

from typing import Any

from trec_rag_eval.errors import InputFormatError, MissingDependencyError, UsageError
from trec_rag_eval.io.sources import IRDS_PREFIX
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Qrels, qrels_columns


def load_dataset(name: str) -> Any:
    """The ir_datasets dataset ``irds:<id>`` names."""
    try:
        import ir_datasets
    except ImportError:
        raise MissingDependencyError("ir-datasets", "irds", f"reading {name}") from None
    dataset_id = name[len(IRDS_PREFIX):]
    if not dataset_id:
        raise UsageError(f"{name!r}: expected irds:<dataset id>, e.g. irds:msmarco-passage/trec-dl-2019")
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise UsageError(f"{name}: ir_datasets has no dataset {dataset_id!r} (its catalogue: "
                         "https://ir-datasets.com)") from None


def _fetch(name: str, what: str, rows: Any) -> list[Any]:
    """Every record of ``rows``; a failure (ir_datasets downloads on first use) names the dataset."""
    try:
        return list(rows)
    except (MissingDependencyError, UsageError):
        raise
    except Exception as err:  # noqa: BLE001 - downloads fail in many ways (network, licence, disk)
        raise InputFormatError(name, None, f"ir_datasets could not provide the {what}: {type(err).__name__}: "
                               f"{err} (a dataset's files are downloaded on first use: is the network reachable, "
                               "or the file placed where ir_datasets expects it?)") from None


def read_irds_qrels(name: str) -> Qrels:
    """The qrels of ``irds:<id>``, with its queries' texts as topics when it has queries."""
    dataset = load_dataset(name)
    if not dataset.has_qrels():
        raise UsageError(f"{name}: this ir_datasets dataset has no qrels")
    rows = []
    seen: set[tuple[str, str, str]] = set()
    for record in _fetch(name, "qrels", dataset.qrels_iter()):
        row = (str(record.query_id), str(getattr(record, "iteration", "0")), str(record.doc_id), int(record.relevance))
        key = (row[0], row[1], row[2])
        if key in seen:
            raise InputFormatError(name, None, f"document {quote(row[2])} judged twice for query {quote(row[0])}")
        seen.add(key)
        rows.append(row)
    topics = read_irds_topics(name, dataset) if dataset.has_queries() else None
    return Qrels(qrels_columns(rows), name, topics or None, checked=True)


def read_irds_topics(name: str, dataset: Any = None) -> dict[str, str]:
    """``{query_id: text}`` of the queries of ``irds:<id>``."""
    dataset = dataset if dataset is not None else load_dataset(name)
    if not dataset.has_queries():
        raise UsageError(f"{name}: this ir_datasets dataset has no queries")
    topics: dict[str, str] = {}
    for query in _fetch(name, "queries", dataset.queries_iter()):
        text = query.default_text() if hasattr(query, "default_text") else getattr(query, "text", "")
        topics[str(query.query_id)] = str(text)
    return topics
