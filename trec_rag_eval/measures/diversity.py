"""Intent-aware and diversity measures over subtopic judgments, as ndeval (TREC Web track) computes them:
alpha-DCG@k, alpha-nDCG@k, ERR-IA@k, nERR-IA@k, NRBP, nNRBP, P-IA@k, MAP-IA and subtopic recall@k.

The qrels are ndeval's ``query_id subtopic doc_id relevance``: the iteration column names the subtopic.
A document is relevant to a subtopic when its judgment there is >= the relevance level (ndeval's
judgments are binary). S is the number of subtopics of the query with at least one relevant document
(a subtopic nobody found relevant is ignored); every measure is 0 when S = 0.

The novelty-discounted gain of the document at rank i is score_i = sum over the subtopics it is relevant
to of (1 - alpha)^c, c = the documents ranked above it relevant to the same subtopic. The ideal ranking
is ndeval's greedy one: at each rank the judged document with the highest gain given those already
placed (ties to the larger doc_id). As in ndeval:

* alpha-DCG@k = sum_{i<=k} score_i / log2(i+1), divided by the "ideal ideal" sum_{i<=k} S (1-alpha)^(i-1)
  / log2(i+1) (every subtopic covered at every rank); alpha-nDCG@k divides by the greedy ideal's instead;
* ERR-IA@k = sum_{i<=k} score_i / i over the ideal ideal sum_{i<=k} S (1-alpha)^(i-1) / i; nERR-IA@k over
  the greedy ideal's; at k = 1 ndeval does not divide alpha-DCG and ERR-IA (kept here);
* NRBP = (1 - (1-alpha) beta) / S * sum_i score_i beta^(i-1), over the whole ranking; nNRBP divides it by
  the greedy ideal's;
* P-IA@k = (relevant (document, subtopic) pairs in the top k) / (k S);
* MAP-IA = (1/S) sum over subtopics of AP for that subtopic (its relevant documents in the qrels as R);
* StRecall@k = subtopics with a relevant document in the top k, divided by S.

Every kernel works on all queries at once: the (row, subtopic) hits of the ranked rows, sorted and
counted with numpy; the greedy ideal runs rank by rank over a (queries x documents x subtopics) array.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from trec_rag_eval.core.column_operations import offsets_of
from trec_rag_eval.core.kernel_context import Context, ratio
from trec_rag_eval.measures.model import Measure


@dataclass(frozen=True)
class Subtopics:
    """The subtopic judgments of the evaluated queries, aligned with the ranked rows.

    ``row_doc``: for each ranked row, the index of its judged document (-1 when not judged);
    ``doc_query``: each judged document's query (index in the ranking's queries);
    ``doc_order``: each judged document's place among its query's documents, doc_id descending
    (byte order; ndeval's tie-break in its ideal ranking);
    ``pair_doc``, ``pair_subtopic``, ``pair_relevance``: one judgment per (document, subtopic), the
    subtopic numbered within its query.
    """

    row_doc: np.ndarray
    doc_query: np.ndarray
    doc_order: np.ndarray
    pair_doc: np.ndarray
    pair_subtopic: np.ndarray
    pair_relevance: np.ndarray


def _view(ctx: Context) -> Subtopics:
    view = ctx.options.get("subtopics")
    if view is None:  # built by the evaluation for every request of an intent-aware measure
        raise ValueError("intent-aware measures need the subtopic judgments (evaluate builds them)")
    return cast(Subtopics, view)


def _shared(ctx: Context, key: tuple[Any, ...], make: Any) -> Any:
    cache = ctx.ranked.cache
    if key not in cache:
        cache[key] = make()
    return cache[key]


class _Hits:
    """The (row, subtopic) pairs where a ranked document is relevant to a subtopic, in rank order, with the
    number of earlier hits on the same subtopic of the query (``seen``), and per query S."""

    def __init__(self, ctx: Context) -> None:
        view = _view(ctx)
        relevant = view.pair_relevance >= ctx.level
        doc, subtopic = view.pair_doc[relevant], view.pair_subtopic[relevant]
        width = int(view.pair_subtopic.max()) + 1 if len(view.pair_subtopic) else 1
        self.width = width
        # S and the relevant documents of each (query, subtopic)
        keys = view.doc_query[doc].astype(np.int64) * width + subtopic
        per_key = np.bincount(keys, minlength=ctx.Q * width)
        self.relevant_of = per_key  # nrelSub
        self.S = (per_key.reshape(ctx.Q, width) > 0).sum(axis=1) if ctx.Q else np.zeros(0, dtype=np.int64)
        # relevant pairs of each document, as CSR rows
        order = np.argsort(doc, kind="stable")
        doc, subtopic = doc[order], subtopic[order]
        count = np.bincount(doc, minlength=len(view.doc_query))
        start = offsets_of(count)[:-1]
        rows = np.flatnonzero(view.row_doc >= 0)
        rows = rows[count[view.row_doc[rows]] > 0]
        per_row = count[view.row_doc[rows]]
        self.row = np.repeat(rows, per_row)
        first = np.repeat(start[view.row_doc[rows]], per_row)
        step = np.arange(len(self.row)) - np.repeat(offsets_of(per_row)[:-1], per_row)
        self.subtopic = subtopic[first + step]
        self.query = ctx.qidx[self.row]
        self.pos = ctx.pos[self.row]
        self.key = self.query * width + self.subtopic
        # earlier hits on the same (query, subtopic): rows ascend within a query, so a stable sort by key
        by_key = np.argsort(self.key, kind="stable")
        sorted_key = self.key[by_key]
        starts = np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]]) if len(sorted_key) else np.zeros(0, bool)
        group_start = np.maximum.accumulate(np.where(starts, np.arange(len(by_key)), 0)) if len(by_key) else by_key
        self.seen = np.empty(len(by_key), dtype=np.int64)
        self.seen[by_key] = np.arange(len(by_key)) - group_start


def _hits(ctx: Context) -> _Hits:
    return cast(_Hits, _shared(ctx, ("subtopic_hits", ctx.level), lambda: _Hits(ctx)))


def _scores(ctx: Context, alpha: float) -> np.ndarray:
    """score_i of every ranked row: sum of (1 - alpha)^seen over its hits."""
    hits = _hits(ctx)
    return np.bincount(hits.row, weights=np.power(1.0 - alpha, hits.seen), minlength=len(ctx.rel))


def _ideal_scores(ctx: Context, alpha: float, depth: int) -> np.ndarray:
    """The greedy ideal ranking's score_i for ranks 1..depth, a (queries x depth) array."""
    return cast(np.ndarray, _shared(ctx, ("subtopic_ideal", ctx.level, alpha, depth),
                                    lambda: _greedy(ctx, alpha, depth)))


def _greedy(ctx: Context, alpha: float, depth: int) -> np.ndarray:
    view, hits = _view(ctx), _hits(ctx)
    out = np.zeros((ctx.Q, depth))
    relevant = view.pair_relevance >= ctx.level
    doc, subtopic = view.pair_doc[relevant], view.pair_subtopic[relevant]
    if len(doc) == 0 or depth == 0:
        return out
    # the documents relevant to some subtopic, numbered within their query by doc_id descending
    docs = np.unique(doc)
    query = view.doc_query[docs]
    order = np.lexsort((view.doc_order[docs], query))
    docs, query = docs[order], query[order]
    first = ctx.query_offsets(query)
    slot = np.arange(len(docs)) - first[query]
    slot_of = np.full(len(view.doc_query), -1, dtype=np.int64)
    slot_of[docs] = slot
    most = int(slot.max()) + 1
    mask = np.zeros((ctx.Q, most, hits.width), dtype=bool)
    mask[view.doc_query[doc], slot_of[doc], subtopic] = True
    gain = np.ones((ctx.Q, hits.width))
    placed = np.zeros((ctx.Q, most), dtype=bool)
    placed[np.arange(most)[None, :] >= np.diff(first)[:, None]] = True  # padding
    queries = np.arange(ctx.Q)
    for rank in range(min(depth, most)):
        score = np.where(placed, -1.0, (mask * gain[:, None, :]).sum(axis=2))
        pick = np.argmax(score, axis=1)  # the first maximum: the larger doc_id on a tie
        best = score[queries, pick]
        out[:, rank] = np.maximum(best, 0.0)
        placed[queries, pick] = True
        chosen = mask[queries, pick] & (best >= 0)[:, None]
        gain = np.where(chosen, gain * (1.0 - alpha), gain)
    return out


def _discount(ranks: np.ndarray) -> np.ndarray:
    return np.log(2.0) / np.log(ranks + 1.0)


def _cut(ctx: Context, m: Measure) -> int:
    return int(m.cutoff) if m.cutoff is not None else max(int(ctx.N.max()) if ctx.Q else 1, 1)


def _ideal_ideal(S: np.ndarray, alpha: float, k: int, weight: np.ndarray) -> np.ndarray:
    """sum_{i<=k} S (1-alpha)^(i-1) weight_i, the bound ndeval normalises alpha-DCG and ERR-IA by."""
    return S * float(np.sum(np.power(1.0 - alpha, np.arange(k)) * weight[:k]))


def _cumulative(ctx: Context, m: Measure, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(the run's, the greedy ideal's) alpha-DCG or ERR-IA sums to rank k, before normalisation."""
    alpha, k = float(m.named.get("alpha", 0.5)), _cut(ctx, m)
    weight_of = _discount if kind == "dcg" else (lambda r: 1.0 / r)
    score = _scores(ctx, alpha)
    rows = np.flatnonzero((score > 0) & (ctx.pos <= k))
    run = ctx.sum(score[rows] * weight_of(ctx.pos[rows].astype(np.float64)), rows)
    ideal = _ideal_scores(ctx, alpha, k) @ weight_of(np.arange(1, k + 1, dtype=np.float64))
    return run, ideal


def _normalised_by_ideal_ideal(ctx: Context, m: Measure, kind: str) -> np.ndarray:
    alpha, k = float(m.named.get("alpha", 0.5)), _cut(ctx, m)
    run, _ = _cumulative(ctx, m, kind)
    S = _hits(ctx).S
    if k == 1:  # ndeval leaves its first rank undivided
        return np.where(S > 0, run, 0.0)
    ranks = np.arange(1, k + 1, dtype=np.float64)
    weight = _discount(ranks) if kind == "dcg" else 1.0 / ranks
    return ratio(run, _ideal_ideal(S, alpha, k, weight))


def alpha_dcg(ctx: Context, m: Measure) -> np.ndarray:
    return _normalised_by_ideal_ideal(ctx, m, "dcg")


def err_ia(ctx: Context, m: Measure) -> np.ndarray:
    return _normalised_by_ideal_ideal(ctx, m, "err")


def alpha_ndcg(ctx: Context, m: Measure) -> np.ndarray:
    run, ideal = _cumulative(ctx, m, "dcg")
    return ratio(run, ideal)


def nerr_ia(ctx: Context, m: Measure) -> np.ndarray:
    run, ideal = _cumulative(ctx, m, "err")
    return ratio(run, ideal)


def _nrbp_sum(ctx: Context, alpha: float, beta: float) -> np.ndarray:
    score = _scores(ctx, alpha)
    rows = np.flatnonzero(score > 0)
    return ctx.sum(score[rows] * np.power(beta, ctx.pos[rows] - 1.0), rows)


def nrbp(ctx: Context, m: Measure) -> np.ndarray:
    alpha, beta = float(m.named.get("alpha", 0.5)), float(m.named.get("beta", 0.5))
    return ratio(_nrbp_sum(ctx, alpha, beta) * (1.0 - (1.0 - alpha) * beta), _hits(ctx).S)


def nnrbp(ctx: Context, m: Measure) -> np.ndarray:
    alpha, beta = float(m.named.get("alpha", 0.5)), float(m.named.get("beta", 0.5))
    # the ideal's terms beyond the rank where beta^(i-1) < 1e-18 change nothing a double can hold
    most = int(np.bincount(_view(ctx).doc_query, minlength=ctx.Q).max()) if ctx.Q and len(_view(ctx).doc_query) else 0
    depth = most if beta >= 1.0 or beta <= 0.0 else min(most, int(np.ceil(np.log(1e-18) / np.log(beta))) + 1)
    depth = max(depth, 1)
    ideal = _ideal_scores(ctx, alpha, depth) @ np.power(beta, np.arange(depth, dtype=np.float64))
    return ratio(_nrbp_sum(ctx, alpha, beta), ideal)


def precision_ia(ctx: Context, m: Measure) -> np.ndarray:
    hits, k = _hits(ctx), _cut(ctx, m)
    count = np.bincount(hits.query[hits.pos <= k], minlength=ctx.Q)
    return ratio(count, k * hits.S)


def subtopic_recall(ctx: Context, m: Measure) -> np.ndarray:
    hits, k = _hits(ctx), _cut(ctx, m)
    covered = np.bincount(hits.query[(hits.pos <= k) & (hits.seen == 0)], minlength=ctx.Q)
    return ratio(covered, hits.S)


def ap_ia(ctx: Context, m: Measure) -> np.ndarray:
    hits = _hits(ctx)
    precision = (hits.seen + 1.0) / hits.pos
    per_key = np.bincount(hits.key, weights=precision, minlength=ctx.Q * hits.width)
    per_key = ratio(per_key, hits.relevant_of)
    return ratio(per_key.reshape(ctx.Q, hits.width).sum(axis=1), hits.S)
