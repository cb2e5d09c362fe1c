"""Evaluate a run that arrives in pieces (each holding whole queries), in bounded memory.

Each piece is evaluated on its own against the judgments of its queries (``evaluate_piece``);
per-query values are then put in trec_eval's query order and aggregated exactly as the in-memory
path does (``combine_pieces``), so both paths print the same numbers. The Dask path
(``trec_rag_eval.cluster``) evaluates its partitions with the same two steps.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl

from trec_rag_eval.core.ranking import byte_sorted
from trec_rag_eval.core.settings import Settings, settings_of
from trec_rag_eval.errors import TrecRagEvalWarning
from trec_rag_eval.evaluation.aggregation import aggregate, recounted_under_c
from trec_rag_eval.evaluation.disjoint import no_query_error, warn_no_common_query
from trec_rag_eval.evaluation.evaluate import Evaluation, evaluate_tables
from trec_rag_eval.measures.by_measure import ByMeasure
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.measures.requests import MeasuresArg, resolve_measures
from trec_rag_eval.tables import RUN_SCHEMA, Qrels, Run, per_document, qrels_query_ids


def evaluate_pieces(
    qrels: Qrels,
    pieces: Iterable[Run],
    measures: MeasuresArg = None,
    settings: Settings | None = None,
    **overrides: Any,
) -> Evaluation:
    """Evaluate a run given as pieces that never split a query (see ``io.trec.pieces.iter_run_chunks``);
    ``settings`` as for ``evaluate``."""
    chosen = settings_of(settings, **overrides)
    resolved = resolve_measures(measures)
    qrels_ids = set(qrels_query_ids(qrels, qrels.frame["query_id"].unique().to_list()))
    parts: list[Evaluation] = []
    extra: set[str] = set()
    run_tag = ""
    source = "<run>"
    for piece in pieces:
        run_tag, source = piece.run_tag, piece.source
        part, piece_extra = evaluate_piece(qrels, piece, resolved, chosen, qrels_ids)
        extra |= piece_extra
        if part is not None:
            parts.append(part)
    return combine_pieces(qrels, parts, resolved, chosen, run_tag=run_tag, source=source, extra_queries=extra)


def evaluate_piece(qrels: Qrels, piece: Run, measures: list[Measure], settings: Settings,
                   qrels_ids: set[str] | None = None) -> tuple[Evaluation | None, set[str]]:
    """One piece (whole queries) against the judgments of its queries: its per-query values (None
    when it holds no judged query) and the ids of its queries that the qrels do not know.
    ``qrels_ids``: the qrels' query set (``tables.qrels_query_ids``), when the caller has it."""
    if qrels_ids is None:
        qrels_ids = set(qrels_query_ids(qrels, qrels.frame["query_id"].unique().to_list()))
    ids = set(piece.frame["query_id"].unique().to_list())
    judged = ids & qrels_ids
    if not judged:
        return None, ids - qrels_ids
    # each piece is evaluated on the queries it holds; the query set and -c apply to the whole
    per_piece = settings.but(queries="intersection", complete=False)
    with warnings.catch_warnings():
        # a piece may hold only unjudged documents; what matters is the whole run (combine_pieces)
        warnings.simplefilter("ignore", TrecRagEvalWarning)
        return evaluate_tables(_subset(qrels, judged), piece, measures, per_piece), ids - qrels_ids


def combine_pieces(qrels: Qrels, parts: list[Evaluation], measures: list[Measure], settings: Settings, *,
                   run_tag: str, source: str, extra_queries: set[str]) -> Evaluation:
    """One evaluation from pieces that evaluated disjoint queries: values put in trec_eval's query
    order, qrels queries no piece held evaluated as missing, then aggregated with ``aggregate``,
    exactly as the in-memory path does (so both print the same bytes)."""
    qrels_ids = set(qrels_query_ids(qrels, qrels.frame["query_id"].unique().to_list()))
    parts = list(parts)
    found: dict[str, tuple[int, int]] = {}  # query id -> (its part, its row there)
    missing_ids: set[str] = set()
    for number, part in enumerate(parts):
        _collect(part, number, found, missing_ids)
    if extra_queries and not found:
        warn_no_common_query(byte_sorted(list(qrels_ids)), byte_sorted(list(extra_queries)), source)
    if settings.queries == "intersection":
        query_ids = byte_sorted(list(found))
    else:
        query_ids = byte_sorted(list(qrels_ids))
        missing = set(query_ids) - set(found)
        if missing:
            empty = Run(pl.DataFrame(schema=RUN_SCHEMA), run_tag, source, checked=True)
            with warnings.catch_warnings():  # the empty run is ours: "the run holds no result" is not the user's
                warnings.simplefilter("ignore", TrecRagEvalWarning)
                scored = evaluate_tables(_subset(qrels, missing), empty, measures, settings.but(complete=False))
            parts.append(scored)
            _collect(scored, len(parts) - 1, found, missing_ids)
    if not query_ids:
        raise no_query_error(qrels, Run(pl.DataFrame(schema=RUN_SCHEMA), run_tag, source, checked=True))
    # each query's row among the parts' rows put end to end: every column is then one gather
    starts = np.cumsum([0] + [len(part.query_ids) for part in parts])
    order = np.array([starts[found[q][0]] + found[q][1] for q in query_ids], dtype=np.int64)
    values: dict[Measure, Any] = {}
    summary: dict[Measure, Any] = {}
    # -c recounts num_rel over the judgments one per document, as the ranking of every piece reads them
    recounted = any(recounted_under_c(measure, settings.complete) for measure in measures)
    judgments = per_document(qrels).data["relevance"] if recounted else None
    for measure in measures:
        if measure.spec.run_tag:
            summary[measure] = run_tag
            continue
        pieces = [part.values[str(measure)] for part in parts]
        if measure.spec.value_type == "str":
            joined = [value for piece in pieces for value in piece]
            values[measure] = [joined[i] for i in order]
        else:
            values[measure] = np.concatenate([np.asarray(piece, dtype=np.float64) for piece in pieces])[order]
        summary[measure] = aggregate(measure, values[measure], len(query_ids), judgments, settings.complete, run_tag)
    return Evaluation(
        query_ids=query_ids,
        measures=list(measures),
        values=ByMeasure.of(list(measures), values),
        summary=ByMeasure.of(list(measures), summary),
        run_tag=run_tag,
        missing_queries=[q for q in query_ids if q in missing_ids],
        extra_queries=byte_sorted(list(extra_queries)),
        settings=settings,
    )


def _subset(qrels: Qrels, ids: set[str]) -> Qrels:
    """The judgments of the queries ``ids``, of the same kind (``tables.judgment_kinds``)."""
    topics = {q: t for q, t in (qrels.topics or {}).items() if q in ids}
    return replace(qrels, data=qrels.frame.filter(pl.col("query_id").is_in(list(ids))), topics=topics or None,
                   unjudged=tuple(q for q in qrels.unjudged if q in ids), checked=True)


def _collect(part: Evaluation, number: int, found: dict[str, tuple[int, int]], missing_ids: set[str]) -> None:
    """Where each query's values are (part ``number``, row), and which queries were missing from the run."""
    missing_ids.update(part.missing_queries)
    for index, query_id in enumerate(part.query_ids):
        found[query_id] = (number, index)
