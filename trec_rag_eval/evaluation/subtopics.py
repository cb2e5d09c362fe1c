"""The subtopic judgments of intent-aware qrels, aligned with a ranking, for the diversity measures.

The run is ranked a second time against the judged documents numbered (one number per (query, doc_id),
its judgment's sign kept for -J), with the same settings: each ranked row then knows its document, so
the kernels find its judgment under every subtopic. The ranking rules stay in one place (core.ranking).
"""

from __future__ import annotations

import numpy as np

from trec_rag_eval.core.ranking import RankedQueries, rank
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.measures.diversity import Subtopics
from trec_rag_eval.tables import Qrels, Run


def subtopic_view(qrels: Qrels, run: Run, ranked: RankedQueries, settings: Settings) -> Subtopics:
    """``Subtopics`` for ``ranked`` (the run ranked against the qrels read one judgment per document)."""
    import polars as pl

    frame = qrels.frame
    docs = (frame.group_by("query_id", "doc_id", maintain_order=True).agg(pl.col("relevance").max())
            .with_row_index("doc")
            .with_columns(pl.col("doc_id").rank("ordinal", descending=True).over("query_id").alias("order")))
    numbered = Qrels(docs.select("query_id", pl.lit("0").alias("iteration"), "doc_id",
                                 pl.when(pl.col("relevance") >= 0).then(pl.col("doc").cast(pl.Int64))
                                 .otherwise(-1).alias("relevance")),
                     qrels.source, qrels.topics, qrels.unjudged, checked=True)
    again = rank(numbered, run, max_retrieved=settings.max_retrieved, judged_only=settings.judged_only,
                 queries=settings.queries, float32_scores=settings.trec_eval_9)
    if again.query_ids != ranked.query_ids or not np.array_equal(again.offsets, ranked.offsets):
        raise AssertionError("the subtopic ranking does not line up with the evaluation's")  # pragma: no cover
    index_of = {q: i for i, q in enumerate(ranked.query_ids)}
    doc_query = np.array([index_of.get(q, -1) for q in docs["query_id"].to_list()], dtype=np.int64)
    pairs = (frame.join(docs.select("query_id", "doc_id", "doc"), on=["query_id", "doc_id"], how="inner")
             .with_columns((pl.col("iteration").rank("dense").over("query_id") - 1).alias("subtopic")))
    pair_doc = pairs["doc"].to_numpy().astype(np.int64)
    keep = doc_query[pair_doc] >= 0  # judgments of queries not evaluated (--intersection)
    return Subtopics(
        row_doc=np.where(again.rel >= 0, again.rel, -1).astype(np.int64),
        doc_query=np.maximum(doc_query, 0),
        doc_order=docs["order"].to_numpy().astype(np.int64),
        pair_doc=pair_doc[keep],
        pair_subtopic=pairs["subtopic"].to_numpy().astype(np.int64)[keep],
        pair_relevance=pairs["relevance"].to_numpy().astype(np.int64)[keep],
    )
