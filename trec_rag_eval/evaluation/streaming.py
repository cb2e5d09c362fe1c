"""Evaluate a run that arrives in pieces (each holding whole queries), in bounded memory.

Each piece is evaluated on its own against the judgments of its queries; per-query values are
then put in trec_eval's query order and aggregated exactly as the in-memory path does, so both
paths print the same numbers.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import polars as pl

from trec_rag_eval.core.ranking import _byte_sorted
from trec_rag_eval.core.settings import Settings, settings_of
from trec_rag_eval.errors import TrecRagEvalWarning, UsageError
from trec_rag_eval.evaluation.evaluate import Evaluation, aggregate, evaluate, warn_no_common_query
from trec_rag_eval.io.tables import RUN_SCHEMA, Qrels, Run, qrels_query_ids
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.measures.parse import parse_measures


def evaluate_pieces(
    qrels: Qrels,
    pieces: Iterable[Run],
    measures: list[str] | list[Measure] | None = None,
    settings: Settings | None = None,
    **overrides: Any,
) -> Evaluation:
    """Evaluate a run given as pieces that never split a query (see ``io.trec.iter_run_chunks``);
    ``settings`` as for ``evaluate``."""
    chosen = settings_of(settings, **overrides)
    # each piece is evaluated on the queries it holds; the query set and -c apply to the whole
    per_piece = chosen.but(queries="intersection", complete=False)
    resolved = measures if measures and isinstance(measures[0], Measure) else parse_measures(
        None if measures is None else [str(m) for m in measures])
    qrels_ids = set(qrels_query_ids(qrels, qrels.frame["query_id"].unique().to_list()))
    found: dict[str, dict[Measure, Any]] = {}
    missing_ids: set[str] = set()
    extra: set[str] = set()
    run_tag = ""
    source = "<run>"
    for piece in pieces:
        run_tag, source = piece.run_tag, piece.source
        ids = set(piece.frame["query_id"].unique().to_list())
        extra |= ids - qrels_ids
        judged = ids & qrels_ids
        if not judged:
            continue
        with warnings.catch_warnings():
            # a piece may hold only unjudged documents; what matters is the whole run (below)
            warnings.simplefilter("ignore", TrecRagEvalWarning)
            part = evaluate(_subset(qrels, judged), piece, resolved, per_piece)
        _collect(part, found, missing_ids)
    if extra and not found:
        warn_no_common_query(_byte_sorted(list(qrels_ids)), _byte_sorted(list(extra)), source)
    if chosen.queries == "intersection":
        query_ids = _byte_sorted(list(found))
    else:
        query_ids = _byte_sorted(list(qrels_ids))
        missing = set(query_ids) - set(found)
        if missing:
            empty = Run(pl.DataFrame(schema=RUN_SCHEMA), run_tag, source)
            _collect(evaluate(_subset(qrels, missing), empty, resolved, chosen.but(complete=False)), found, missing_ids)
    if not query_ids:
        raise UsageError("no query to evaluate: the qrels and the run share no query id")
    values: dict[Measure, Any] = {}
    summary: dict[Measure, Any] = {}
    for measure in resolved:
        if measure.family == "runid":
            summary[measure] = run_tag
            continue
        column = [found[q][measure] for q in query_ids]
        values[measure] = column if measure.spec.value_type == "str" else np.array(column, dtype=np.float64)
        summary[measure] = aggregate(measure, values[measure], len(query_ids), qrels, chosen.complete, run_tag)
    return Evaluation(
        query_ids=query_ids,
        measures=list(resolved),
        values=values,
        summary=summary,
        run_tag=run_tag,
        missing_queries=[q for q in query_ids if q in missing_ids],
        extra_queries=_byte_sorted(list(extra)),
        settings=chosen,
    )


def _subset(qrels: Qrels, ids: set[str]) -> Qrels:
    topics = {q: t for q, t in (qrels.topics or {}).items() if q in ids}
    return Qrels(qrels.frame.filter(pl.col("query_id").is_in(list(ids))), qrels.source, topics or None)


def _collect(part: Evaluation, found: dict[str, dict[Measure, Any]], missing_ids: set[str]) -> None:
    """Keep each query's values, and which queries were missing from the run."""
    missing_ids.update(part.missing_queries)
    for index, query_id in enumerate(part.query_ids):
        found[query_id] = {m: part.values[m][index] for m in part.values}
