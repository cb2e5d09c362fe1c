"""The one place that decides ranking, ties, relevance and which queries count (trec_eval's form_res_rels).

For every evaluated query:

1. Queries: every query of the qrels, in byte order of the id (``"10"`` before ``"2"``). A qrels
   query missing from the run is evaluated as trec_eval ``-c`` does: against a ranking of one
   document that is in no qrels, after which num_ret is 0 and every measure scores 0.
   ``queries="intersection"`` keeps only queries present in both (trec_eval 9, pytrec_eval).
   Queries only in the run are never evaluated.
2. Order: score descending, then doc_id descending in byte order. The rank column is ignored.
3. ``max_retrieved`` (``-M``) keeps the first n documents, then ``judged_only`` (``-J``) removes
   every document without a judgment >= 0, and the ranks close up.
4. Relevance of a ranked document: its qrels value when >= 0; -2 when the qrels give a negative
   value ("in the pool, not judged"); -1 when the qrels do not mention it ("not in the pool").
   Relevant means value >= relevance_level (``-l``); graded measures use the values as gains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.tables import Qrels, Run

NOT_IN_POOL = -1
UNJUDGED = -2
_DUMMY_DOC = "ceci_nest_pas_un_docno"


@dataclass
class RankedQueries:
    """Aligned arrays for all evaluated queries; kernels read these and nothing else.

    Rows of ``rel`` are ranked documents, query after query; ``offsets[i]:offsets[i+1]`` are the
    rows of query i. Judged documents (relevance >= 0) of query i, retrieved or not, are
    ``judged[judged_offsets[i]:judged_offsets[i+1]]``, sorted by relevance descending.
    """

    query_ids: list[str]
    offsets: np.ndarray
    rel: np.ndarray
    judged_offsets: np.ndarray
    judged: np.ndarray
    missing: np.ndarray
    run_tag: str
    extra_queries: list[str] = field(default_factory=list)
    cache: dict[object, object] = field(default_factory=dict, repr=False)

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def missing_queries(self) -> list[str]:
        return [q for q, m in zip(self.query_ids, self.missing) if m]


def _byte_sorted(values: list[str]) -> list[str]:
    return sorted(values, key=lambda text: text.encode("utf-8", "surrogateescape"))


def rank(
    qrels: Qrels,
    run: Run,
    *,
    max_retrieved: int | None = None,
    judged_only: bool = False,
    queries: str = "qrels",
    float32_scores: bool = False,
) -> RankedQueries:
    """Align a run with its qrels into ``RankedQueries`` (see the module docstring for the rules).

    ``float32_scores`` rounds scores to 32-bit floats before ranking, as trec_eval 9 and
    pytrec_eval do, so scores equal at float precision tie and doc_id decides.
    """
    if queries not in ("qrels", "intersection"):
        raise UsageError(f"queries must be 'qrels' or 'intersection', got {queries!r}")
    if max_retrieved is not None and max_retrieved < 0:
        raise UsageError(f"max_retrieved must be >= 0, got {max_retrieved}")
    qrels_ids = qrels.frame["query_id"].unique()
    run_ids = run.frame["query_id"].unique()
    run_id_set = set(run_ids.to_list())
    qrels_id_list = qrels_ids.to_list()
    extra = _byte_sorted(list(run_id_set.difference(qrels_id_list)))
    if queries == "intersection":
        query_ids = _byte_sorted([q for q in qrels_id_list if q in run_id_set])
    else:
        query_ids = _byte_sorted(qrels_id_list)
    index = pl.DataFrame({"query_id": query_ids, "qidx": np.arange(len(query_ids), dtype=np.int64)},
                         schema={"query_id": pl.Utf8, "qidx": pl.Int64})

    scores = pl.col("score").cast(pl.Float32).cast(pl.Float64) if float32_scores else pl.col("score")
    ranked = (
        run.frame.lazy()
        .join(index.lazy(), on="query_id", how="inner")
        # + 0.0 turns -0.0 into 0.0: C compares them equal, so they must tie here too
        .with_columns((scores + 0.0).alias("score"))
        .sort(["qidx", "score", "doc_id"], descending=[False, True, True])
        .collect()
    )
    missing = np.ones(len(query_ids), dtype=bool)
    present = ranked["qidx"].unique().to_numpy()
    missing[present] = False
    if missing.any():
        dummies = pl.DataFrame({
            "query_id": [query_ids[i] for i in np.flatnonzero(missing)],
            "doc_id": _DUMMY_DOC, "score": 1.0,
            "qidx": np.flatnonzero(missing).astype(np.int64),
        }).select(ranked.columns).cast(ranked.schema)
        ranked = pl.concat([ranked, dummies]).sort("qidx", maintain_order=True)

    qidx = ranked["qidx"].to_numpy()
    counts = np.bincount(qidx, minlength=len(query_ids))
    offsets = np.concatenate([[0], np.cumsum(counts)])
    if max_retrieved is not None:
        position = np.arange(len(qidx)) - offsets[qidx]
        ranked = ranked.filter(pl.Series(position < max_retrieved))

    judgments = qrels.frame.lazy().join(index.lazy(), on="query_id", how="inner")
    with_rel = ranked.lazy().join(
        judgments.select("qidx", "doc_id", "relevance"), on=["qidx", "doc_id"], how="left", maintain_order="left",
    ).collect()
    relevance = with_rel["relevance"]
    rel = np.where(relevance.is_null().to_numpy(), NOT_IN_POOL, relevance.fill_null(0).to_numpy())
    rel = np.where(rel < 0, np.where(relevance.is_null().to_numpy(), NOT_IN_POOL, UNJUDGED), rel).astype(np.int64)
    qidx = with_rel["qidx"].to_numpy()
    if judged_only:
        keep = rel >= 0
        rel, qidx = rel[keep], qidx[keep]
        with_rel = with_rel.filter(pl.Series(keep))
    _reject_duplicates(with_rel, run)

    counts = np.bincount(qidx, minlength=len(query_ids))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    judged_frame = (
        judgments.filter(pl.col("relevance") >= 0)
        .select("qidx", "relevance")
        .sort(["qidx", "relevance"], descending=[False, True])
        .collect()
    )
    judged_counts = np.bincount(judged_frame["qidx"].to_numpy(), minlength=len(query_ids))
    judged_offsets = np.concatenate([[0], np.cumsum(judged_counts)]).astype(np.int64)
    return RankedQueries(
        query_ids=query_ids,
        offsets=offsets,
        rel=rel,
        judged_offsets=judged_offsets,
        judged=judged_frame["relevance"].to_numpy().astype(np.int64),
        missing=missing,
        run_tag=run.run_tag,
        extra_queries=extra,
    )


def _reject_duplicates(ranked: pl.DataFrame, run: Run) -> None:
    keys = ranked.select("qidx", "doc_id")
    if keys.height == keys.unique().height:
        return
    dup = keys.filter(keys.is_duplicated()).row(0)
    query_id = ranked.filter(pl.col("qidx") == dup[0])["query_id"][0]
    raise InputFormatError(run.source, None, f"document {dup[1]!r} listed twice for query {query_id!r}")
