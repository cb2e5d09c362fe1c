"""Graded measures: the judgment is the gain (trec_eval's default), or a custom gain per level.

The relevance level (``-l``) plays no part here, as in trec_eval: a level-1 document still gains
1 under ``-l 2``. The ideal ranking holds every judged document of the query with a positive
gain, retrieved or not; it is not cut to the number retrieved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np

from trec_rag_eval.core.kernel_context import Context, Rows, ratio, segment_cumsum_float
from trec_rag_eval.core.matching import NOT_IN_POOL
from trec_rag_eval.measures.model import Measure

T = TypeVar("T")


def _gains(m: Measure) -> dict[int, float]:
    return dict(m.named.get("gains") or ())


def row_gains(ctx: Context, m: Measure) -> np.ndarray:
    """Gain of every ranked document: its judgment (0 when not judged), unless overridden;
    2^gain - 1 with ``dcg='exp-log2'`` (gdeval's exponential gain)."""
    return gain_of(ctx.rel, m)


def gain_of(relevance: np.ndarray, m: Measure) -> np.ndarray:
    """The gains of the given judgments (see ``row_gains``)."""
    gains = np.where(relevance >= 0, relevance, 0).astype(np.float64)
    for level, gain in _gains(m).items():
        gains[relevance == level] = gain
    return _exponential(gains, m)


def _shared(ctx: Context, key: tuple[Any, ...], make: Callable[[], T], judged: bool = False) -> T:
    """``make()``, once per ranking: nDCG at several cutoffs (the RAG set has four) share the scan of
    every row for its gains and the ideal rankings. The callers never write to what it returns. ``judged``:
    made of the judgments alone (an ideal of every judged document), so kept with them
    (``RankedQueries.judged_cache``): once per ``Qrels``, whatever the runs."""
    cache = ctx.ranked.judged_cache if judged else ctx.ranked.cache
    if key not in cache:
        cache[key] = make()
    return cast(T, cache[key])


def _gain_setting(m: Measure) -> tuple[str, tuple[tuple[int, float], ...], str]:
    """What a measure's gains and ideal ranking depend on, the key of everything shared between its cutoffs and
    kin: (the ideal ranking, ``judged`` or ``retrieved``; the gain of each level given; the DCG's discount)."""
    return m.named.get("ideal", "judged"), tuple(sorted(_gains(m).items())), m.named.get("dcg", "log2")


class Gained(NamedTuple):
    """The ranked rows with a non-zero gain (ascending), with their query, rank and gain; ``offsets``
    as in ``core.kernel_context.Rows``. A row with no gain adds 0.0 to a running sum, which leaves it as it
    is, so the running sums over these rows are bit for bit those over every row."""

    rows: np.ndarray
    q: np.ndarray
    pos: np.ndarray
    gains: np.ndarray
    offsets: np.ndarray


def gained(ctx: Context, m: Measure) -> Gained:
    """The rows with a non-zero gain, once per gain setting: every graded measure reads these."""
    def make() -> Gained:
        # a custom gain for documents outside the pool (-1) is the only way one of them gains
        candidates = ctx.candidates(every_row=NOT_IN_POOL in _gains(m))
        gains = gain_of(candidates.rel, m)
        keep = gains != 0
        q = candidates.q[keep]
        offsets = ctx.query_offsets(q)
        return Gained(candidates.rows[keep], q, candidates.pos[keep], gains[keep], offsets)

    return _shared(ctx, ("gained", *_gain_setting(m)[1:]), make)


def _exponential(gains: np.ndarray, m: Measure) -> np.ndarray:
    """gdeval's gain 2^g - 1 when ``dcg='exp-log2'`` (Burges et al. 2005); g itself otherwise."""
    if m.named.get("dcg", "log2") == "exp-log2":
        return np.power(2.0, gains) - 1.0
    return gains


def ideal(ctx: Context, m: Measure, positive_only: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Ideal gains of every query, best first: (flat gains, offsets).

    By default (trec_eval) every judged document of the query, retrieved or not. With
    ``ideal='retrieved'`` only the retrieved documents, re-sorted by gain: the RAG tutorials'
    IDCG (the French RAG tutorial's ``idcg_at_k`` sorts the retrieved relevance list), which ignores
    relevant documents the system never returned, so a run that misses them can still score 1.
    """
    key = ("ideal", *_gain_setting(m), positive_only)
    return _shared(ctx, key, lambda: _ideal(ctx, m, positive_only), judged=key[1] == "judged")


def _ideal(ctx: Context, m: Measure, positive_only: bool) -> tuple[np.ndarray, np.ndarray]:
    if m.named.get("ideal", "judged") == "retrieved":
        gains, qidx = row_gains(ctx, m), ctx.qidx
        order = np.lexsort((-gains, qidx))
        gains, qidx = gains[order], qidx[order]
        keep = gains > 0 if positive_only else np.ones(len(gains), dtype=bool)
        gains, qidx = gains[keep], qidx[keep]
        offsets = ctx.query_offsets(qidx)
        return gains, offsets
    judged = ctx.ranked.judged
    qidx = ctx.judged_qidx
    gains = judged.astype(np.float64)
    overrides = _gains(m)
    if overrides:
        for level, gain in overrides.items():
            gains[judged == level] = gain
        order = np.lexsort((-gains, qidx))
        gains, qidx = gains[order], qidx[order]
    gains = _exponential(gains, m)
    keep = gains > 0 if positive_only else np.ones(len(gains), dtype=bool)
    gains, qidx = gains[keep], qidx[keep]
    offsets = ctx.query_offsets(qidx)
    return gains, offsets


def _ideal_positions(offsets: np.ndarray) -> np.ndarray:
    return np.arange(offsets[-1]) - offsets[:-1].repeat(offsets[1:] - offsets[:-1]) + 1  # type: ignore[no-any-return]


def dcg(ctx: Context, m: Measure) -> np.ndarray:
    """DCG = sum over retrieved ranks k of gain_k / log2(k + 1); with a cutoff, ranks <= k."""
    rows = gained(ctx, m)
    queries, positions, gains = rows.q, rows.pos, rows.gains
    if m.cutoff is not None:
        keep = positions <= int(m.cutoff)
        queries, positions, gains = queries[keep], positions[keep], gains[keep]
    # bincount adds each query's terms in rank order, as trec_eval's loop does
    return np.bincount(queries, weights=gains / np.log2(positions + 1.0), minlength=ctx.Q)


def ideal_dcg(ctx: Context, m: Measure) -> np.ndarray:
    """IDCG: DCG of the ideal ranking of all judged documents (cut at k with a cutoff)."""
    gains, offsets = ideal(ctx, m)

    def make() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        positions = _ideal_positions(offsets)
        return positions, np.arange(ctx.Q).repeat(offsets[1:] - offsets[:-1]), gains / np.log2(positions + 1.0)

    # every cutoff of the same gain setting (ndcg_cut's nine) reads the same ideal terms
    key = ("ideal_terms", *_gain_setting(m))
    positions, qidx, terms = _shared(ctx, key, make, judged=key[1] == "judged")
    if m.cutoff is None:
        return np.bincount(qidx, weights=terms, minlength=ctx.Q)
    keep = positions <= int(m.cutoff)
    return np.bincount(qidx[keep], weights=terms[keep], minlength=ctx.Q)


def ndcg(ctx: Context, m: Measure) -> np.ndarray:
    """nDCG = DCG / IDCG, 0 when IDCG = 0. Without a cutoff, IDCG uses the full ideal list."""
    return ratio(dcg(ctx, m), ideal_dcg(ctx, m))


def ndcg_cut(ctx: Context, m: Measure) -> np.ndarray:
    """nDCG@k (trec_eval ndcg_cut_k): DCG and IDCG both cut at k; gains are the raw judgments
    (trec_eval's ndcg_cut takes no parameters; the notation's dcg, gains and ideal apply here)."""
    return ratio(dcg(ctx, m), ideal_dcg(ctx, m))


def _running(ctx: Context, m: Measure) -> tuple[Gained, np.ndarray, np.ndarray, np.ndarray]:
    """(the rows with a gain, running DCG at each of them, ideal gains, running IDCG per ideal position)."""
    rows = gained(ctx, m)
    running = _shared(ctx, ("running_dcg", *_gain_setting(m)[1:]),
                      lambda: segment_cumsum_float(rows.gains / np.log2(rows.pos + 1.0), rows.offsets))
    best, best_offsets = ideal(ctx, m)
    key = ("running_idcg", *_gain_setting(m))
    best_running = _shared(ctx, key, lambda: segment_cumsum_float(best / np.log2(_ideal_positions(best_offsets) + 1.0),
                                                                  best_offsets), judged=key[1] == "judged")
    return rows, running, best, best_running


def _dcg_at(ctx: Context, rows: Gained, running: np.ndarray, depth: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Running DCG of each query at depth (0 where depth is 0): the running sum at its last row with a
    gain at or above that rank (0 when there is none)."""
    depth = np.minimum(depth, ctx.N[query])
    last = np.searchsorted(rows.rows, ctx.offsets[query] + depth - 1, side="right") - 1
    inside = (depth > 0) & (last >= rows.offsets[query])
    return np.where(inside, running[np.maximum(last, 0)] if len(running) else 0.0, 0.0)


def ndcg_rel(ctx: Context, m: Measure) -> np.ndarray:
    """ndcg_rel: nDCG averaged over the ranks of the retrieved documents with positive gain,
    with the relevant documents never retrieved scored at the end of the ranking."""
    rows, running, best, best_running = _running(ctx, m)
    _, best_offsets = ideal(ctx, m)
    n = np.diff(best_offsets)
    positive = rows.gains > 0
    q = rows.q[positive]
    depth = np.minimum(rows.pos[positive], n[q])
    idcg = np.where(depth > 0, best_running[np.maximum(best_offsets[q] + depth - 1, 0)], 0.0)
    terms = ratio(running[positive], idcg)
    total = np.bincount(q, weights=terms, minlength=ctx.Q)
    m_count = np.bincount(q, minlength=ctx.Q)
    dcg_all = _dcg_at(ctx, rows, running, ctx.N, np.arange(ctx.Q))
    idcg_all = np.where(n > 0, best_running[np.maximum(best_offsets[1:] - 1, 0)] if len(best) else 0.0, 0.0)
    total = total + (n - m_count) * ratio(dcg_all, idcg_all)
    return np.where((n > 0) & (total > 0), ratio(total, n), 0.0)


def r_ndcg(ctx: Context, m: Measure) -> np.ndarray:
    """Rndcg: mean nDCG at the points where the ideal gain changes, plus DCG@N/IDCG@n when N >= n+2."""
    rows, running, best, best_running = _running(ctx, m)
    _, best_offsets = ideal(ctx, m)
    n = np.diff(best_offsets)
    bq = np.repeat(np.arange(ctx.Q), n)
    b = _ideal_positions(best_offsets)
    following = np.append(best[1:], 0.0)
    following[best_offsets[1:][n > 0] - 1] = 0.0
    point = best != following
    point &= best_running > 0
    values = ratio(_dcg_at(ctx, rows, running, b[point], bq[point]), best_running[point])
    total = np.bincount(bq[point], weights=values, minlength=ctx.Q)
    count = np.bincount(bq[point], minlength=ctx.Q).astype(np.float64)
    extra = (ctx.N >= n + 2) & (n > 0)
    last = best_offsets[1:] - 1
    idcg_n = np.where(n > 0, best_running[np.maximum(last, 0)] if len(best) else 0.0, 0.0)
    extra_value = ratio(_dcg_at(ctx, rows, running, ctx.N, np.arange(ctx.Q)), idcg_n)
    total = total + np.where(extra & (idcg_n > 0), extra_value, 0.0)
    count = count + (extra & (idcg_n > 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        value = total / count
    return np.where(ctx.R == 0, 0.0, value)


def cumulative_gain_g(ctx: Context, m: Measure) -> np.ndarray:
    """G: gain over ranks discounted by log2(2 + ideal cumulative minus actual cumulative gain)."""
    rows = gained(ctx, m)
    running_gain = segment_cumsum_float(rows.gains, rows.offsets)
    best, best_offsets = ideal(ctx, m)
    n = np.diff(best_offsets)
    floor_one = segment_cumsum_float(np.maximum(best, 1.0), best_offsets)
    q, k = rows.q, rows.pos
    within = np.minimum(k, n[q])
    ideal_part = np.where(within > 0, floor_one[np.maximum(best_offsets[q] + within - 1, 0)] if len(best) else 0.0, 0.0)
    c_k = ideal_part + np.maximum(k - n[q], 0)
    terms = rows.gains / np.log2(2.0 + c_k - running_gain)
    total_ideal = np.bincount(np.repeat(np.arange(ctx.Q), n), weights=best, minlength=ctx.Q)
    return ratio(np.bincount(q, weights=terms, minlength=ctx.Q), total_ideal)


def _rbp_gains(ctx: Context, m: Measure) -> tuple[Rows, np.ndarray]:
    """The rows an RBP gain may come from, and their gains in [0, 1]: if any gain of the query's table
    is outside, rescale (g-min)/(max-min) with min and max over the table and 0 (by default g / max
    judged level). Outside the pool the gain is 0, unless a custom gain is given to -1."""
    overrides = _gains(m)
    rows = ctx.candidates(every_row=NOT_IN_POOL in overrides)
    gains = gain_of(rows.rel, m)
    if overrides:
        table_max, table_min = _table_extremes(ctx, overrides)
    else:
        table_max, table_min = ctx.max_level.astype(np.float64), np.zeros(ctx.Q)
    q = rows.q
    rescale = (table_max[q] > 1) | (table_min[q] < 0)
    span = table_max[q] - table_min[q]
    scaled = np.where(rescale & (span > 0), (gains - table_min[q]) / np.where(span > 0, span, 1.0), gains)
    return rows, np.where(rows.rel >= 0, scaled, gains)


def _table_extremes(ctx: Context, overrides: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    # only reached with custom gains, a rare request: one small dict per query is fine here
    table_max = np.zeros(ctx.Q)
    table_min = np.zeros(ctx.Q)
    for q in range(ctx.Q):
        table = {v: float(v) for v in range(int(ctx.max_level[q]) + 1)}
        table.update({k: v for k, v in overrides.items()})
        table_max[q] = max(0.0, *table.values())
        table_min[q] = min(0.0, *table.values())
    return table_max, table_min


def _powers(ctx: Context, p: float) -> np.ndarray:
    """p^0, p^1, ..., p^maxN, each the previous times p, as trec_eval's loop makes them: pow() can
    differ in the last bit, enough to move a mean across a rounding tie of the 4th decimal."""
    depth = int(ctx.N.max()) if ctx.Q else 0
    return np.cumprod(np.concatenate([[1.0], np.full(depth, p)]))


def rbp(ctx: Context, m: Measure) -> np.ndarray:
    """Rank-biased precision (Moffat & Zobel 2008): (1-p) * sum of gain_k * p^(k-1), summed in rank
    order then multiplied once, as trec_eval does.

    ``RBP(rel=r)`` (ir_measures' binary RBP): gain 1 for a judgment >= r, 0 otherwise. ``RBP@k``: only
    the ranks <= k add (the sum is truncated; the weights are not renormalised)."""
    p = float(m.named.get("p", 0.9))
    if m.rel is not None:
        rows = ctx.pooled
        gains = (rows.rel >= ctx.level).astype(np.float64)
    else:
        rows, gains = _rbp_gains(ctx, m)
    keep = gains != 0
    if m.cutoff is not None:
        keep &= rows.pos <= int(m.cutoff)
    with np.errstate(over="ignore", invalid="ignore"):  # p^k past a ranking's end may overflow, unused
        terms = gains[keep] * _powers(ctx, p)[rows.pos[keep] - 1]
        return _finite((1.0 - p) * np.bincount(rows.q[keep], weights=terms, minlength=ctx.Q))


def rbp_resid(ctx: Context, m: Measure) -> np.ndarray:
    """RBP residual: what unjudged or unpooled documents could still add, p^N + (1-p) * sum over
    them of p^(k-1) (trec_eval's order of operations); 0 when every retrieved document is judged.
    A query missing from the run is 0, except for trec_eval's leftovers (``Settings.leftovers``)."""
    p = float(m.named.get("p", 0.9))
    has_unknown = ctx.judged_count() < ctx.N
    with np.errstate(over="ignore", invalid="ignore"):  # a query with nothing unknown does not read them
        powers = _powers(ctx, p)
        unknown = ctx.sum_by_rank(powers, lambda rel: rel < 0) if has_unknown.any() else np.zeros(ctx.Q)
        value = powers[ctx.N] + (1.0 - p) * unknown
        return _finite(np.where(has_unknown & ~ctx.reset_missing(m.text is not None), value, 0.0))


def _finite(values: np.ndarray) -> np.ndarray:
    """``values``, or the error the evaluation refuses a measure with when one is not finite: a persistence
    above 1 (trec_eval takes any) whose powers overflow where they are read, where trec_eval prints inf or
    nan."""
    if not np.isfinite(values).all():
        raise FloatingPointError("overflow encountered in the powers of p")
    return values


ERR_MAX_JUDGMENT = 4  # gdeval.pl's $MAX_JUDGMENT


def expected_reciprocal_rank(ctx: Context, m: Measure) -> np.ndarray:
    """ERR@k (Chapelle et al., CIKM 2009) exactly as gdeval.pl (TREC Web track) computes it.

    ERR = sum over ranks r <= k of (1/r) * R_r * prod_{i<r} (1 - R_i), with the stopping
    probability R = (2^g - 1) / 2^4: gdeval fixes the maximum judgment at 4 for every query
    (judgments above 4 are refused by gdeval; here they count as 4). Unjudged and negative
    judgments give g = 0.
    """
    k = int(m.cutoff) if m.cutoff is not None else None
    g = np.clip(ctx.rel, 0, ERR_MAX_JUDGMENT).astype(np.float64)
    prob = (np.power(2.0, g) - 1.0) / 2.0 ** ERR_MAX_JUDGMENT
    keep = np.ones(len(g), dtype=bool) if k is None else ctx.pos <= k
    log_stop = np.log1p(-np.where(keep, prob, 0.0))  # prob <= 15/16, so log1p is finite
    before = segment_cumsum_float(log_stop, ctx.offsets) - log_stop
    terms = np.exp(before) * prob / ctx.pos
    rows = np.flatnonzero(keep & (prob > 0))
    return ctx.sum(terms[rows], rows)
