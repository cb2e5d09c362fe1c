"""Binary-relevance measures: a document is relevant when its judgment is >= the level (``-l``).

Notation: N = num_ret, R = num_rel, cnt(k) = relevant documents in the top k (cnt(N) for k > N).
Every ratio is 0 when its denominator is 0, as in trec_eval, so queries with no relevant
document score 0 and still count in the mean.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from trec_rag_eval.core.column_operations import offsets_of
from trec_rag_eval.core.kernel_context import Context, ratio, segment_cumsum_int, segment_suffix_max
from trec_rag_eval.core.matching import UNJUDGED
from trec_rag_eval.measures.model import Measure


def num_ret(ctx: Context, m: Measure) -> np.ndarray:
    return np.where(ctx.ranked.missing, 0, ctx.N).astype(np.float64)


def num_rel(ctx: Context, m: Measure) -> np.ndarray:
    return ctx.R.astype(np.float64)


def num_rel_ret(ctx: Context, m: Measure) -> np.ndarray:
    return ctx.rel_ret.astype(np.float64)


def num_nonrel_judged_ret(ctx: Context, m: Measure) -> np.ndarray:
    return np.bincount(ctx.pooled.q[ctx.nonrel_mask], minlength=ctx.Q).astype(np.float64)


def num_q(ctx: Context, m: Measure) -> np.ndarray:
    return np.ones(ctx.Q)


def precision(ctx: Context, m: Measure) -> np.ndarray:
    """P@k = cnt(k) / k: the denominator is always k (missing ranks count as non-relevant).

    ``P(denominator='returned')@k`` divides by min(k, N) instead, the documents actually returned
    in the top k (LlamaIndex's and the RAG tutorials' precision); 0 when nothing is returned.
    """
    k = int(m.at)
    if m.named.get("denominator", "k") == "returned":
        return ratio(ctx.cnt_at(k), np.where(ctx.ranked.missing, 0, np.minimum(ctx.N, k)))
    return ctx.cnt_at(k) / k


def recall(ctx: Context, m: Measure) -> np.ndarray:
    """R@k = cnt(k) / R."""
    return ratio(ctx.cnt_at(int(m.at)), ctx.R)


def f1(ctx: Context, m: Measure) -> np.ndarray:
    """F1@k: harmonic mean of P@k and R@k per query; 0 when both are 0."""
    p = precision(ctx, m)
    r = recall(ctx, m)
    return ratio(2 * p * r, p + r)


def relative_precision(ctx: Context, m: Measure) -> np.ndarray:
    """relative_P@k = cnt(k) / min(k, R)."""
    k = int(m.at)
    return ratio(ctx.cnt_at(k), np.minimum(k, ctx.R))


def success(ctx: Context, m: Measure) -> np.ndarray:
    """success@k (HitRate@k): 1 if a relevant document is in the top k."""
    return (ctx.cnt_at(int(m.at)) > 0).astype(np.float64)


def r_precision(ctx: Context, m: Measure) -> np.ndarray:
    """Rprec = cnt(R) / R: precision at rank R."""
    return ratio(ctx.cnt_at(ctx.R), ctx.R)


def r_precision_mult(ctx: Context, m: Measure) -> np.ndarray:
    """Rprec_mult_p = P@c with c = floor(p*R + 0.9) (both trec_eval 9 and 10); 0 when c < 1."""
    # a negative multiplier: no rank, and 0 / c would be -0.0 ('-0.0000'); a huge one (trec_eval takes any real,
    # Rprec_mult.1e300) a rank past every ranking, held below what an int64 takes
    c = np.clip(np.floor(float(m.at) * ctx.R + 0.9), 0, 2.0**62).astype(np.int64)
    return ratio(ctx.cnt_at(c), c)


def _precision_at_relevant(ctx: Context) -> np.ndarray:
    """P@k at the rank k of every relevant retrieved document (in ``ctx.rel_rows`` order)."""
    return ctx.rel_cnt / ctx.rel_pos


def average_precision(ctx: Context, m: Measure) -> np.ndarray:
    """AP = (1/R) * sum of P@k over the ranks k of relevant retrieved documents.

    Divides by R, all relevant documents, retrieved or not. With a cutoff (map_cut_k, AP@k),
    only ranks <= k count, and the divisor is still R.
    """
    values, queries = _precision_at_relevant(ctx), ctx.rel_q
    if m.cutoff is not None:
        keep = ctx.rel_pos <= int(m.cutoff)
        values, queries = values[keep], queries[keep]
    # bincount adds each query's terms in rank order, as trec_eval's loop does
    return ratio(np.bincount(queries, weights=values, minlength=ctx.Q), ctx.R)


def geometric_average_precision(ctx: Context, m: Measure) -> np.ndarray:
    """gm_map: AP per query (no cutoff, as ``m``'s), the summary the geometric mean with AP floored at 1e-5."""
    return average_precision(ctx, m)


def reciprocal_rank(ctx: Context, m: Measure) -> np.ndarray:
    """RR = 1 / rank of the first relevant document, 0 if none (within the top k with a cutoff)."""
    queries, positions = ctx.rel_q, ctx.rel_pos
    if m.cutoff is not None:
        keep = positions <= int(m.cutoff)
        queries, positions = queries[keep], positions[keep]
    out = np.zeros(ctx.Q)
    if len(queries):
        first = np.concatenate([[True], queries[1:] != queries[:-1]])
        out[queries[first]] = 1.0 / positions[first]
    return out


def bpref(ctx: Context, m: Measure) -> np.ndarray:
    """bpref: each relevant retrieved document scores 1 - min(n, R) / min(NonRel, R), where n is
    the number of judged non-relevant documents ranked above it; unjudged documents are skipped.
    Sum / R."""
    pooled = ctx.pooled
    n = segment_cumsum_int(ctx.nonrel_mask.astype(np.int64), pooled.offsets)[ctx.relevant_mask]
    q = ctx.rel_q
    R = ctx.R[q]
    denominator = np.minimum(ctx.nonrel_judged[q], R)
    penalty = ratio(np.minimum(n, R), denominator)
    contribution = np.where(n > 0, 1.0 - penalty, 1.0)
    return ratio(np.bincount(q, weights=contribution, minlength=ctx.Q), ctx.R)


def geometric_bpref(ctx: Context, m: Measure) -> np.ndarray:
    return bpref(ctx, m)


def inferred_ap(ctx: Context, m: Measure) -> np.ndarray:
    """infAP (Yilmaz & Aslam 2006), with qrels value -1 meaning "sampled out" (unjudged).

    At a relevant document with 0-based index j: 1 if j = 0, else
    1/(j+1) + (j/(j+1)) * ((r-1+n+u)/j) * ((r-1+eps)/(r-1+n+2 eps)), eps = 1e-5, where r counts
    relevant documents up to and including it, n judged non-relevant and u unjudged ones above it.
    """
    eps = 1e-5
    pooled, relevant = ctx.pooled, ctx.relevant_mask
    j = (ctx.rel_pos - 1).astype(np.float64)
    r_before = (ctx.rel_cnt - 1).astype(np.float64)
    n = segment_cumsum_int(ctx.nonrel_mask.astype(np.int64), pooled.offsets)[relevant].astype(np.float64)
    u = segment_cumsum_int((pooled.rel == UNJUDGED).astype(np.int64), pooled.offsets)[relevant].astype(np.float64)
    safe_j = np.where(j > 0, j, 1.0)
    later = 1.0 / (j + 1) + (j / (j + 1)) * ((r_before + n + u) / safe_j) * (
        (r_before + eps) / (r_before + n + 2 * eps))
    contribution = np.where(j == 0, 1.0, later)
    return ratio(np.bincount(ctx.rel_q, weights=contribution, minlength=ctx.Q), ctx.R)


def recall_cutoff_count(p: float | np.ndarray, R: np.ndarray, trec_eval_9: bool) -> np.ndarray:
    """How many relevant documents recall level p asks for.

    trec_eval 10 rounds p*R half away from zero (C lround); trec_eval 9 used floor(p*R + 0.9).
    """
    # a recall level outside [0, 1] is legal in trec_eval (nothing checks it): below 0 it asks for no relevant
    # document, above 1 for more than exist; past what a C long holds (iprec_at_recall.1e300), the conversion
    # gives LONG_MIN on x86-64, which asks for none
    with np.errstate(over="ignore", invalid="ignore"):
        x = p * R.astype(np.float64)
        x = np.floor(x + 0.9) if trec_eval_9 else np.floor(x + 0.5)
        inside = np.abs(x) < 2.0**63
        return np.where(inside, np.where(inside, x, 0.0).astype(np.int64), np.iinfo(np.int64).min)


def _interpolated_precision(ctx: Context, p: float, trec_eval_9: bool) -> np.ndarray:
    """iprec_at_recall_p: the highest P@i at or below the rank where recall p is reached.

    0 when fewer than c relevant documents are retrieved; NaN when nothing is retrieved and c = 0
    (trec_eval divides 0 by 0 there, which only -J or -M0 can cause) for a query of the run.
    At one of trec_eval's eleven recall levels, all eleven are computed at once and kept with the ranking
    (the official set asks for each, and 11pt_avg for them all): one pass of numpy for eleven measures.
    """
    leftovers = bool(ctx.options.get("leftovers"))
    cache = ctx.ranked.cache
    key = ("iprec", ctx.level, p, trec_eval_9, leftovers)
    if key not in cache:
        levels = RECALL_LEVELS if p in RECALL_LEVELS else (p,)
        for level, values in zip(levels, _interpolated_at(ctx, np.array(levels), trec_eval_9), strict=True):
            cache["iprec", ctx.level, level, trec_eval_9, leftovers] = values
    return cast(np.ndarray, cache[key]).copy()  # a measure's own values: its caller may keep them


RECALL_LEVELS = tuple(level / 10 for level in range(11))
"""trec_eval's recall levels 0.0, 0.1, ..., 1.0 (as its names give them: ``level / 10`` is the float of "0.3")."""


def _interpolated_at(ctx: Context, levels: np.ndarray, trec_eval_9: bool) -> np.ndarray:
    """``_interpolated_precision`` at each recall level of ``levels``: one row of queries a level."""
    key = ("iprec_suffix", ctx.level)
    if key not in ctx.ranked.cache:
        ctx.ranked.cache[key] = segment_suffix_max(_precision_at_relevant(ctx), ctx.rel_q, ctx.Q)
    suffix = cast(np.ndarray, ctx.ranked.cache[key])  # stored just above under this key
    first_rel = offsets_of(ctx.rel_ret)[:-1]
    c = recall_cutoff_count(levels[:, None], ctx.R, trec_eval_9)  # a level a row: each value as one level gives it
    reachable = c <= ctx.rel_ret
    index = first_rel + np.maximum(c, 1) - 1
    out = np.zeros(c.shape)
    has_rel = reachable & (ctx.rel_ret > 0)
    out[has_rel] = suffix[index[has_rel]]
    # a query missing from the run scores 0 (with -J its dummy document is gone, so trec_eval's
    # 0/0 would make it NaN and the mean NaN); trec_eval's leftovers keep the NaN (--format trec -c)
    out[reachable & (ctx.N == 0) & ~ctx.reset_missing(True)] = math.nan
    return out


def iprec_at_recall(ctx: Context, m: Measure) -> np.ndarray:
    return _interpolated_precision(ctx, float(m.at), bool(m.named.get("trec_eval_9", False)))


def eleven_point_average(ctx: Context, m: Measure) -> np.ndarray:
    """11pt_avg: mean of iprec_at_recall over the recall levels (default 0.0, 0.1, ..., 1.0), read as
    trec_eval reads them: from the last, assuming them ascending (it takes them in the order given).

    Trailing levels asking for more relevant documents than retrieved get 0. Reading on, a level whose count
    of relevant documents c is below 1, or above the count of the level after it, is never reached by
    trec_eval's walk up the ranking: it and every level before it get the precision interpolated at recall 0
    (``-m 11pt_avg.7,0.5``: 7 gets what 0 would). Ascending levels are each their own iprec_at_recall.
    """
    levels = m.named.get("levels") or m.spec.defaults
    trec_eval_9 = bool(m.named.get("trec_eval_9", False))
    at_zero = _interpolated_precision(ctx, 0.0, trec_eval_9)
    total = np.zeros(ctx.Q)
    trailing = np.ones(ctx.Q, dtype=bool)
    stuck = np.zeros(ctx.Q, dtype=bool)
    bound = ctx.rel_ret
    for level in reversed(levels):  # trec_eval adds them in this order
        count = recall_cutoff_count(level, ctx.R, trec_eval_9)
        trailing &= count > ctx.rel_ret
        stuck |= ~trailing & ((count < 1) | (count > bound))
        total = total + np.where(stuck, at_zero, _interpolated_precision(ctx, level, trec_eval_9))
        bound = np.where(trailing | stuck, bound, count)
    return total / len(levels)


def binary_g(ctx: Context, m: Measure) -> np.ndarray:
    """binG: (1/R) * sum over relevant retrieved documents of 1/log2(2 + non-relevant above)."""
    nonrel_above = (ctx.rel_pos - ctx.rel_cnt).astype(np.float64)
    return ratio(np.bincount(ctx.rel_q, weights=1.0 / np.log2(2.0 + nonrel_above), minlength=ctx.Q), ctx.R)


def yaap(ctx: Context, m: Measure) -> np.ndarray:
    """yaap: log((1 + S) / (1 + R - S)) with S the sum of P@k at relevant retrieved ranks."""
    s = np.bincount(ctx.rel_q, weights=_precision_at_relevant(ctx), minlength=ctx.Q)
    return np.log((1.0 + s) / (1.0 + ctx.R - s))
