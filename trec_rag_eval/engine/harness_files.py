"""What the search harness reads and writes: its dataset (the queries it asks and their judgments) and the run
file it records."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.tables import Qrels, Run

# Files and in-memory lists both go through the shared JSON reader (trec_rag_eval.io.json.content).


def dataset_qrels(dataset: Any) -> Qrels:
    """Qrels (with topics) from a ``Qrels``, a dataset file path, or a list of dataset rows (dicts)."""
    if isinstance(dataset, Qrels):
        if not dataset.topics:
            raise UsageError(f"{dataset.source}: the qrels have no query texts (topics) to search with")
        return dataset
    if isinstance(dataset, (str, os.PathLike)):
        return _read_dataset_file(Path(dataset))
    if isinstance(dataset, (list, tuple)):
        return dataset_from_rows(list(dataset))
    raise UsageError(
        f"a dataset must be a path, a Qrels with topics, or a list of dicts; got {type(dataset).__name__}"
    )


def dataset_topics(dataset: Any) -> dict[str, str]:
    """query_id -> query text, in dataset order."""
    topics = dataset_qrels(dataset).topics
    assert topics is not None  # dataset_qrels guarantees it
    return dict(topics)


def _read_dataset_file(path: Path) -> Qrels:
    from trec_rag_eval.io.json.content import read_dataset

    qrels = read_dataset(path)
    if not qrels.topics:
        raise InputFormatError(str(path), None, "the dataset has no query texts to search with")
    return qrels


def dataset_from_rows(items: list[Any], source: str = "<dataset>") -> Qrels:
    """Read a dataset given as a list of dicts in the French RAG tutorial's shape (or any row shape the JSON
    reader takes): ``{"id"?, "requête"|"query", "pertinents"|"relevant", "non_pertinents"|"non_relevant"?}``.

    Relevant docs are a list (grade 1) or ``{doc_id: grade}``; non-relevant ones get grade 0 (judged).
    Items without an ``id`` are numbered ``q1, q2, ...`` by position. Every query needs its text,
    since it is what the engine is asked.
    """
    from trec_rag_eval.io.json.content import read_dataset_rows

    return read_dataset_rows(items, source, require_text=True)




def write_run_file(run: Run, path: str | os.PathLike[str], format: str = "trec", force: bool = False) -> None:
    """Write a run as TREC's six columns or as JSON results, through the shared atomic writers.

    Never overwrites an existing file unless ``force``.
    """
    from trec_rag_eval.io.writers import write_results_json, write_trec_run

    if format == "trec":
        write_trec_run(run, path, force=force)
    elif format == "json":
        write_results_json(run, path, force=force)
    else:
        raise UsageError(f"unknown run format {format!r}: expected 'trec' or 'json'")
