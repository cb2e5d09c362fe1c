"""Agreement with the ideal ordering: Compat (rank-biased overlap with an ideal ranking, Clarke et al.)
and Accuracy (how often a relevant document is ranked above a non-relevant one).

Both work on the ranked rows of every query at once; neither loops over queries.
"""

from __future__ import annotations

import numpy as np

from trec_rag_eval.core.column_operations import offsets_of
from trec_rag_eval.core.kernel_context import Context, ratio
from trec_rag_eval.measures.model import Measure


def _retrieved(ctx: Context) -> np.ndarray:
    """Documents ranked per query; 0 for a query missing from the run (its one row is a placeholder)."""
    return np.where(ctx.ranked.missing, 0, ctx.N)


def _ideal_positions(ctx: Context, rows: np.ndarray) -> np.ndarray:
    """The 1-based position in the ideal ranking of each given retrieved row (judgment > 0).

    The ideal ranking lists the judged documents with a judgment > 0, highest judgment first; among
    equal judgments the retrieved ones come first, in the run's order, then the others. So a row's
    position is 1 + the judged documents of its query with a higher judgment + the retrieved rows of
    the same judgment ranked above it.
    """
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    judged, offsets = ctx.ranked.judged, ctx.ranked.judged_offsets
    grades = ctx.rel[rows].astype(np.int64)
    queries = ctx.query_of(rows)
    top = int(max(int(judged.max()) if len(judged) else 0, int(grades.max()))) + 1
    # judged is sorted by judgment descending within each query: key ascending within each query
    judged_key = ctx.judged_qidx * top + (top - 1 - judged.astype(np.int64))
    row_key = queries * top + (top - 1 - grades)
    higher = np.searchsorted(judged_key, row_key, side="left") - offsets[queries]
    # rows are in rank order within each query; a stable sort by (query, judgment) keeps that order
    order = np.argsort(row_key, kind="stable")
    sorted_keys = row_key[order]
    starts = np.concatenate([[True], sorted_keys[1:] != sorted_keys[:-1]])
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
    above = np.empty(len(rows), dtype=np.int64)
    above[order] = np.arange(len(order)) - group_start
    return higher + above + 1


def compat(ctx: Context, m: Measure) -> np.ndarray:
    """Compat: rank-biased overlap (persistence p) of the run with the ideal ranking, over a depth of
    max(N, n) (n = judged documents with judgment > 0), normalised (by default) by the ideal ranking's
    own overlap with itself.

    RBO = sum over depths i of p^(i-1) |R_i & I_i| / i, divided by sum of p^(i-1), with R_i and I_i the
    first i documents of the run and of the ideal ranking. A relevant document at rank r and ideal
    position t is in the overlap at every depth >= max(r, t), so RBO sums H(depth) - H(max(r, t) - 1)
    over the relevant retrieved documents, H(i) = sum_{j<=i} p^(j-1)/j. 0 for a query with nothing
    retrieved; a query without a document judged > 0 scores 0.
    """
    p = float(m.named.get("p", 0.95))
    normalize = bool(m.named.get("normalize", True))
    retrieved = _retrieved(ctx)
    judged = ctx.ranked.judged
    ideal_size = np.bincount(ctx.judged_qidx[judged > 0], minlength=ctx.Q) if len(judged) else np.zeros(ctx.Q, int)
    depth = np.maximum(retrieved, ideal_size).astype(np.int64)
    longest = int(depth.max()) if ctx.Q else 0
    weights = np.cumprod(np.concatenate([[1.0], np.full(max(longest - 1, 0), p)]))[:longest]  # p^(i-1)
    harmonic = np.concatenate([[0.0], np.cumsum(weights / np.arange(1, longest + 1))])  # H(0..longest)
    normalizer = np.concatenate([[0.0], np.cumsum(weights)])[depth]
    rows = np.flatnonzero((ctx.rel > 0) & ~ctx.ranked.missing[ctx.qidx])
    queries = ctx.query_of(rows)
    meet = np.maximum(ctx.pos[rows], _ideal_positions(ctx, rows))
    score = np.bincount(queries, weights=harmonic[depth[queries]] - harmonic[meet - 1], minlength=ctx.Q)
    if normalize:
        # the ideal ranking against itself: its document at position t joins the overlap at depth t
        ideal_q = np.repeat(np.arange(ctx.Q), ideal_size)
        first = offsets_of(ideal_size)[:-1]
        t = np.arange(len(ideal_q)) - first[ideal_q] + 1
        best = np.bincount(ideal_q, weights=harmonic[depth[ideal_q]] - harmonic[t - 1], minlength=ctx.Q)
        value = np.where(best > 0, ratio(score, best), ratio(score, normalizer))
    else:
        value = ratio(score, normalizer)
    return np.where(retrieved > 0, value, 0.0)


def accuracy(ctx: Context, m: Measure) -> np.ndarray:
    """Accuracy: of the pairs (relevant, non-relevant) among the top k retrieved documents (all of them
    without a cutoff), the share where the relevant one is ranked above.

    1 - (sum over the relevant documents of the non-relevant ones above each) / (rel x nonrel), with rel
    and nonrel counted in the top k; unjudged documents count as non-relevant. 1 when the top k holds
    relevant documents and no non-relevant one (no pair is misordered); 0 when it holds no relevant one.
    """
    within = ctx.pos <= int(m.cutoff) if m.cutoff is not None else np.ones(len(ctx.rel), dtype=bool)
    within &= ~ctx.ranked.missing[ctx.qidx]
    relevant = within & (ctx.rel >= ctx.level)
    nonrel = within & ~relevant
    rel_count = ctx.count(relevant)
    nonrel_count = ctx.count(nonrel)
    # non-relevant documents above each relevant one: its rank minus the relevant ones up to it
    rows = np.flatnonzero(relevant)
    above = ctx.pos[rows] - ctx.rel_cnt[np.searchsorted(ctx.rel_rows, rows)]
    misordered = ctx.sum(above.astype(np.float64), rows)
    pairs = rel_count.astype(np.float64) * nonrel_count
    value = 1.0 - ratio(misordered, pairs)
    return np.where(rel_count > 0, np.where(nonrel_count > 0, value, 1.0), 0.0)
