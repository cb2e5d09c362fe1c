"""A run of chunk ids collapsed to documents (``collapse_run``): every retrieved id mapped to its document by a
``io.chunks.DocIdMap``, each document kept once per query at its best chunk's score, and what the collapse did
(``io.chunks.CollapseReport``). A mapping guessed from the ids when none is given is ``io.chunk_guess``'.

The conventions (an id the mapping does not cover is kept; judgments per chunk leave the run alone) are
``io.chunks``'."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import UsageError
from trec_rag_eval.io.chunks import CollapseReport, DocIdMap, as_doc_map
from trec_rag_eval.tables import Qrels, Run, column_list, duplicate_error, run_columns

if TYPE_CHECKING:
    import polars as pl


def _map_distinct(mapping: DocIdMap, distinct: list[str]) -> tuple[dict[str, str], set[str]]:
    """Each distinct id -> its document (itself when the mapping does not cover it), and the ids not
    covered. The mapping runs once per distinct id: a run repeats ids across queries."""
    doc_of: dict[str, str] = {}
    unmapped: set[str] = set()
    for doc_id, target in zip(distinct, mapping.map_ids(distinct), strict=True):
        if target is None:
            unmapped.add(doc_id)
            target = doc_id
        doc_of[doc_id] = target
    return doc_of, unmapped


def judges_chunks(qrels: Qrels, mapping: DocIdMap) -> tuple[int, int]:
    """(judged ids that the mapping turns into another id, distinct judged ids) of the qrels."""
    judged = list(dict.fromkeys(column_list(qrels, "doc_id")))
    chunks = 0
    for doc_id, target in zip(judged, mapping.map_ids(judged), strict=True):
        if target is not None and target != doc_id:
            chunks += 1
    return chunks, len(judged)


def collapse_run(run: Run, mapping: Any, qrels: Qrels | None = None) -> tuple[Run, CollapseReport]:
    """Map the run's ids to documents and keep each document once per query, at its best score.

    ``mapping`` is anything ``as_doc_map`` takes. With ``qrels``, judgments per chunk are detected
    (then the run is returned as it is) and the share of retrieved documents no query judges is
    reported. Rows keep their first-appearance order; the ranking re-sorts them anyway.
    """
    doc_map = as_doc_map(mapping)
    if doc_map is None:
        raise UsageError("collapse_run needs a mapping")
    judged = _Judged(qrels, *(judges_chunks(qrels, doc_map) if qrels is not None else (0, 0)))
    if isinstance(run.data, dict):   # small runs as lists: no polars needed
        return _collapse_lists(run, doc_map, judged)
    return _collapse_frame(run, doc_map, judged)


@dataclass(frozen=True)
class _Judged:
    qrels: Qrels | None
    chunk_judgments: int
    judged_ids: int

    @property
    def per_chunk(self) -> bool:
        """Most judged ids are chunks: the judgments are per chunk, the run is left alone."""
        return self.judged_ids > 0 and self.chunk_judgments * 2 > self.judged_ids


@dataclass(frozen=True)
class _Found:
    """What the collapsed run retrieved, against the qrels: for the warning of a wrong mapping."""

    unknown_share: float = 0.0
    queries_with_results: int = 0
    queries_with_judged: int = 0


def _report(doc_map: DocIdMap, judged: _Judged, rows_in: int, rows_out: int | None, distinct: int,
            counts: dict[str, int], found: Callable[[Qrels], _Found]) -> CollapseReport:
    """The report; ``rows_out`` None when the qrels judge chunks (nothing is collapsed then).
    ``found(qrels)`` is asked only when there are qrels and a collapse."""
    unmapped = tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    seen = found(judged.qrels) if rows_out is not None and judged.qrels is not None else _Found()
    return CollapseReport(str(doc_map), rows_out is not None, rows_in, rows_in if rows_out is None else rows_out,
                          distinct, distinct - len(unmapped), unmapped, seen.unknown_share, judged.chunk_judgments,
                          judged.judged_ids, seen.queries_with_results, seen.queries_with_judged)


def _found_in_lists(best: dict[tuple[str, str], float], qrels: Qrels) -> _Found:
    columns = [column_list(qrels, name) for name in ("query_id", "doc_id", "relevance")]
    pairs = {(q, d) for q, d, r in zip(*columns, strict=True) if r >= 0}
    documents = {d for _, d in best}
    return _Found(len(documents - set(columns[1])) / len(documents) if documents else 0.0,
                  len({q for q, _ in best}), len({q for q, d in best if (q, d) in pairs}))


def _found_in_frame(merged: pl.DataFrame, qrels: Qrels) -> _Found:
    import polars as pl

    judged = qrels.frame.filter(pl.col("relevance") >= 0).select("query_id", "doc_id")
    documents = merged.select(pl.col("doc_id").unique())
    known = documents.join(qrels.frame.select(pl.col("doc_id").unique()), on="doc_id", how="semi").height
    unknown = 1 - known / documents.height if documents.height else 0.0
    hits = merged.join(judged, on=["query_id", "doc_id"], how="semi")["query_id"].n_unique()
    return _Found(float(unknown), merged["query_id"].n_unique(), hits)


def _collapse_lists(run: Run, doc_map: DocIdMap, judged: _Judged) -> tuple[Run, CollapseReport]:
    doc_ids = column_list(run, "doc_id")
    distinct = list(dict.fromkeys(doc_ids))
    doc_of, not_covered = _map_distinct(doc_map, distinct)
    counts = dict(Counter(doc_id for doc_id in doc_ids if doc_id in not_covered)) if not_covered else {}
    if judged.per_chunk:
        return run, _report(doc_map, judged, len(doc_ids), None, len(distinct), counts, lambda _: _Found())
    # each (query, document) keeps its best chunk's score; NaN never wins over a real score
    best: dict[tuple[str, str], float] = {}
    seen: set[tuple[str, str]] = set()
    for query_id, doc_id, score in zip(column_list(run, "query_id"), doc_ids, column_list(run, "score"),
                                       strict=True):
        if (query_id, doc_id) in seen:  # a chunk listed twice is an error, as without a map (trec_eval's rule)
            raise duplicate_error(run, query_id, doc_id)
        seen.add((query_id, doc_id))
        key = (query_id, doc_of[doc_id])
        kept = best.get(key)
        if kept is None or score > kept or (math.isnan(kept) and not math.isnan(score)):
            best[key] = score
    collapsed = Run(run_columns([(q, d, float(score)) for (q, d), score in best.items()]), run.run_tag, run.source,
                    empty_queries=run.empty_queries, checked=True)
    return collapsed, _report(doc_map, judged, len(doc_ids), len(best), len(distinct), counts,
                              lambda qrels: _found_in_lists(best, qrels))


def _collapse_frame(run: Run, doc_map: DocIdMap, judged: _Judged) -> tuple[Run, CollapseReport]:
    import numpy as np
    import polars as pl

    frame = run.frame
    # a chunk listed twice is an error, as without a map (trec_eval's rule): told by sorted 64-bit hashes of
    # the pairs (a tenth of the time of polars' exact test, which runs only when two hashes are equal)
    hashes = np.sort(frame.select("query_id", "doc_id").hash_rows(seed=20240607).to_numpy())
    if bool(np.any(hashes[1:] == hashes[:-1])):
        again = frame.select((~pl.struct("query_id", "doc_id").is_first_distinct()).arg_true().first()).item()
        if again is not None:
            raise duplicate_error(run, frame["query_id"][again], frame["doc_id"][again])
    documents = doc_map.series(frame["doc_id"])
    uncovered = frame.filter(documents.is_null()).group_by("doc_id").len()
    counts = dict(zip(uncovered["doc_id"].to_list(), uncovered["len"].to_list(), strict=True))
    distinct = frame["doc_id"].n_unique()
    if judged.per_chunk:
        return run, _report(doc_map, judged, frame.height, None, distinct, counts, lambda _: _Found())
    merged = (frame.with_columns(documents.fill_null(frame["doc_id"]).alias("doc_id"))
              .group_by(["query_id", "doc_id"], maintain_order=True)
              .agg(pl.col("score").max()))       # polars' max skips NaN, as the list form does
    report = _report(doc_map, judged, frame.height, merged.height, distinct, counts,
                     lambda qrels: _found_in_frame(merged, qrels))
    return Run(merged, run.run_tag, run.source, empty_queries=run.empty_queries, checked=True), report
