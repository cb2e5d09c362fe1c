"""Set measures (the retrieved list as an unordered set) and measures about unjudged documents."""

from __future__ import annotations

import numpy as np

from trec_rag_eval.core.kernel_context import Context, ratio
from trec_rag_eval.measures.model import Measure


def set_precision(ctx: Context, m: Measure) -> np.ndarray:
    """set_P = relevant retrieved / retrieved."""
    return ratio(ctx.rel_ret, ctx.N)


def set_recall(ctx: Context, m: Measure) -> np.ndarray:
    """set_recall = relevant retrieved / R."""
    return ratio(ctx.rel_ret, ctx.R)


def set_relative_precision(ctx: Context, m: Measure) -> np.ndarray:
    """set_relative_P = relevant retrieved / min(N, R)."""
    return ratio(ctx.rel_ret, np.minimum(ctx.N, ctx.R))


def set_map(ctx: Context, m: Measure) -> np.ndarray:
    """set_map = set_P * set_recall = relevant retrieved^2 / (N * R)."""
    rr = ctx.rel_ret.astype(np.float64)
    return ratio(rr * rr, ctx.N.astype(np.float64) * ctx.R)


def set_f(ctx: Context, m: Measure) -> np.ndarray:
    """set_F with beta^2 = x (default 1): (x+1) P R / (x P + R); 0 when nothing relevant is retrieved.

    With x >= 0 the divisor is at least R > 0. trec_eval takes any x: a negative one can make it 0, where
    trec_eval prints inf or nan; the division is then refused (``evaluation.evaluate``), never written as 0."""
    x = float(m.named.get("beta", m.spec.params["beta"].default))
    p = set_precision(ctx, m)
    r = set_recall(ctx, m)
    found = ctx.rel_ret > 0
    value = np.zeros(len(p))
    value[found] = (x + 1.0) * p[found] * r[found] / (x * p[found] + r[found])
    return value


def utility(ctx: Context, m: Measure) -> np.ndarray:
    """utility with coefficients a,b,c,d (default 1,-1,0,0):
    a*RR + b*(N-RR) + c*(R-RR) + d*(num_docs + RR - N - R), RR = relevant retrieved."""
    a, b, c, d = m.named.get("coefficients") or m.spec.defaults
    rr = ctx.rel_ret.astype(np.float64)
    n = ctx.N.astype(np.float64)
    r = ctx.R.astype(np.float64)
    num_docs = float(ctx.options.get("num_docs", 0))
    value = a * rr + b * (n - rr) + c * (r - rr) + d * (num_docs + rr - n - r)
    return np.where(ctx.reset_missing(m.text is not None), 0.0, value)


def unjudged_at(ctx: Context, m: Measure) -> np.ndarray:
    """unj_k: share of the top k that is unjudged or not in the pool (divided by k): the top min(k, N)
    less the judged documents among them."""
    k = int(m.at)
    value = (np.minimum(ctx.N, k) - ctx.judged_count(k)) / k
    return np.where(ctx.ranked.missing, 0.0, value)


def judged_at(ctx: Context, m: Measure) -> np.ndarray:
    """Judged@k (ir-measures): share of the top min(k, N) with a judgment; 0 when nothing is retrieved."""
    k = int(m.cutoff) if m.cutoff is not None else None
    judged = ctx.judged_count(k)
    depth = ctx.N if k is None else np.minimum(ctx.N, k)
    return np.where(ctx.ranked.missing, 0.0, ratio(judged, depth))


# the character of each judgment: the digit for 0-9, '>' above 9, '-' not in the pool, '.' unjudged
_SYMBOLS = np.frombuffer(b".-0123456789>", dtype=np.uint8)


def relstring(ctx: Context, m: Measure) -> list[str]:
    """relstring_L: the judgments of the top L documents as characters: the digit for 0-9,
    '>' above 9, '-' not in the pool, '.' in the pool but unjudged."""
    # the length is the measure's cutoff (relstring.3 is relstring@3, trec_eval's real read as a count)
    length = int(m.cutoff if m.cutoff is not None else m.spec.defaults[0])
    reset = ctx.reset_missing(m.text is not None)
    shown = np.where(reset, 0, np.minimum(ctx.N, length))  # the top rows of each query, read alone
    ends = np.cumsum(shown)
    starts = ends - shown
    rows = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) + np.repeat(ctx.offsets[:-1] - starts, shown)
    text = _SYMBOLS[np.clip(ctx.rel[rows].astype(np.int64), -2, 10) + 2].tobytes().decode("ascii")
    return [text[start:end] for start, end in zip(starts.tolist(), ends.tolist(), strict=True)]
