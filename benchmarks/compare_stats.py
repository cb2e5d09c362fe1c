"""compare's statistics against scipy's, on the same seeded pairs, in the same run.

One line per method: our time, scipy's, the ratio, and that the two agree (bootstrap bounds within
Monte Carlo error; the randomization p-value within Monte Carlo error of scipy's permutation test).

    python benchmarks/compare_stats.py                  # 147 pairs of 50 queries (50 runs x 3 measures)
    python benchmarks/compare_stats.py --pairs 30 --queries 2000 --resamples 10000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats as scipy_stats

from trec_rag_eval.compare import stats


def _timed(function, pairs):
    start = time.perf_counter()
    out = [function(a, b) for a, b in pairs]
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=147)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    pairs = []
    for _ in range(args.pairs):
        a = rng.random(args.queries)
        delta = np.where(rng.random(args.queries) < 0.7, 0.0, rng.normal(0.03, 0.1, args.queries))  # many ties at 0
        pairs.append((a, a + delta))
    r = args.resamples
    rows = []
    ours, our_bounds = _timed(lambda a, b: stats.bootstrap_interval(a, b, n_resamples=r, rng=np.random.default_rng(1)),
                              pairs)
    theirs, their_bounds = _timed(lambda a, b: tuple(scipy_stats.bootstrap(
        (b - a,), np.mean, n_resamples=r, method="BCa", vectorized=True,
        rng=np.random.default_rng(2)).confidence_interval), pairs)
    gap = max(abs(x - y) for o, t in zip(our_bounds, their_bounds, strict=True) for x, y in zip(o, t, strict=True))
    rows.append(("bootstrap BCa interval", ours, theirs, f"largest bound gap {gap:.4f}"))
    ours, our_p = _timed(lambda a, b: stats.SignFlips(b - a, r, np.random.default_rng(1)).p_value(), pairs)
    theirs, their_p = _timed(lambda a, b: scipy_stats.permutation_test(
        (b, a), lambda x, y, axis=-1: np.mean(x - y, axis=axis), permutation_type="samples", vectorized=True,
        n_resamples=r, rng=np.random.default_rng(2)).pvalue, pairs)
    gap = max(abs(x - y) for x, y in zip(our_p, their_p, strict=True))
    rows.append(("randomization p-value", ours, theirs, f"largest p gap {gap:.4f}"))
    ours, _ = _timed(lambda a, b: stats.SignFlips(b - a, r, np.random.default_rng(1)).interval(), pairs)
    rows.append(("randomization p + its interval", ours, float("nan"), "scipy has no such interval"))
    ours, _ = _timed(stats.t_interval, pairs)
    rows.append(("t-interval (the default)", ours, float("nan"), ""))
    print(f"{args.pairs} pairs x {args.queries} queries, {r} resamples")
    print(f"{'method':32} {'ours s':>8} {'scipy s':>8} {'ratio':>6}  check")
    for name, ours, theirs, check in rows:
        ratio = f"{theirs / ours:5.1f}x" if theirs == theirs else "     -"
        print(f"{name:32} {ours:8.2f} {theirs:8.2f} {ratio}  {check}")


if __name__ == "__main__":
    main()
