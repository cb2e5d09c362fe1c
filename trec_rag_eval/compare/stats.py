"""Paired statistics over per-query values: tests, intervals, effect sizes, corrections.

Every function takes per-query arrays aligned on the same query list (``baseline[i]`` and
``run[i]`` are the same query) and knows nothing about measures, files or rendering.
The t and normal distributions are ``compare.distributions``', the noncentral t ``compare.noncentral_t``'s (plain
Python: importing scipy.special would cost a first comparison about 0.3 s, scipy.stats about a second); the
resampling is numpy, vectorised over resamples: the sign flips of the randomization test and of its interval
(``SignFlips``), and the bootstrap (BCa, as ``scipy.stats.bootstrap`` computes it, without its per-call overhead).
Each test has the interval that agrees with it by construction: the t-interval with the t-test, the randomization
interval (the deltas the sign-flip test keeps) with the randomization test; the bootstrap is on request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from trec_rag_eval.compare.distributions import normal_cdf, normal_quantile, t_cdf, t_quantile
from trec_rag_eval.compare.noncentral_t import noncentral_t_cdf
from trec_rag_eval.notes import note

TESTS = ("t", "randomization")
ALL_PAIRS_TESTS = ("tukey-hsd", "tukey", "t", "randomization")
"""The tests of every pair of runs (``compare.allpairs``); named here, beside the baseline's, so that an option
check reads both without importing the all-pairs module."""
INTERVALS = ("t", "randomization", "bootstrap")
"""Interval methods; by default the test's own (``t`` with the t-test, ``randomization`` with the
randomization test), so the interval and the test cannot disagree."""
CORRECTIONS = ("holm", "bonferroni", "none")
DEFAULT_SEED = 42
"""The seed of every comparison's random draws unless the caller gives one."""
DEFAULT_RESAMPLES = 10_000
"""The resamples of the randomization tests, their intervals and the bootstrap unless the caller says."""


def say_unused(given: Mapping[str, bool], why: str) -> None:
    """Tell the caller that the parameters it set to other than their defaults (``given``: name -> set)
    change nothing in the comparison chosen, and ``why`` (a note: a ``TrecRagEvalWarning`` to a Python
    caller, a ``Note:`` line naming the flags on the command line)."""
    names = [name for name, set_ in given.items() if set_]
    if names:
        said = " and ".join(f"{name}=" for name in names)
        note(f"{said} change{'s' if len(names) == 1 else ''} nothing: {why}",
             parameters={f"{name}=": name for name in names}).warn()

# Two per-query values closer than this are a tie: measures are ratios of small integers, so a
# genuine difference is never this small, while float noise from different summation orders is.
TIE_TOLERANCE = 1e-12

# Resampling works on (batch x queries) arrays; this bounds one batch to ~16 MB of float64 so
# that tens of thousands of queries do not need gigabytes (unbatched, 2,000 queries took 1.5 GB).
BATCH_ELEMENTS = 2_000_000


def _as_pair(
    baseline: Sequence[float] | np.ndarray, run: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(baseline, dtype=np.float64)
    b = np.asarray(run, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"paired values must be two 1-d arrays of one length, got {a.shape} and {b.shape}")
    return a, b


def _batch(n_queries: int, elements: int = BATCH_ELEMENTS) -> int:
    return max(1, elements // max(1, n_queries))


def _is_constant(diff: np.ndarray) -> bool:
    return diff.size == 0 or bool(np.all(np.abs(diff - diff[0]) <= TIE_TOLERANCE))


def paired_t_test(baseline: np.ndarray, run: np.ndarray) -> float:
    """Two-sided p-value of the paired t-test (``scipy.stats.ttest_rel``).

    When every difference is the same, scipy returns NaN (zero variance): we return 1.0 if the
    runs are identical and 0.0 if one run is better on every query by the same amount.
    """
    a, b = _as_pair(baseline, run)
    diff = b - a
    if diff.size < 2 or _is_constant(diff):
        return 1.0 if diff.size == 0 or abs(float(diff[0])) <= TIE_TOLERANCE else 0.0
    n = diff.size
    t = float(np.mean(diff)) / math.sqrt(float(np.var(diff, ddof=1)) / n)  # as scipy.stats.ttest_rel computes it
    return 2 * t_cdf(-abs(t), n - 1)


class SignFlips:
    """The paired randomization (sign-flip) test of one pair's differences, for any hypothesised mean.

    Each resample flips the sign of every query's difference at random (swaps the two runs'
    values), as ``scipy.stats.permutation_test(permutation_type='samples')`` does: when 2**n <=
    n_resamples every flip is enumerated (an exact test, p = hits / 2**n), otherwise n_resamples
    flips are drawn and p = (hits + 1) / (n_resamples + 1). Vectorised: the flips are drawn once, in
    batches of at most ``BATCH_ELEMENTS`` signs, and kept as two numbers each (the flipped sum of the
    differences and the sum of the signs), so the p-value of the hypothesis "the mean difference is
    delta" costs one pass over n_resamples numbers: ``p_value(delta)``. The interval
    (``interval``) is the set of deltas the test does not reject, found with the same flips: it
    excludes 0 exactly when ``p_value(0)`` is at most 1 - confidence, by construction.
    """

    def __init__(self, diff: np.ndarray, n_resamples: int = 10_000, rng: np.random.Generator | None = None) -> None:
        self.diff = np.asarray(diff, dtype=np.float64)
        n = self.diff.size
        self.mean = float(np.mean(self.diff)) if n else math.nan
        rng = rng if rng is not None else np.random.default_rng()
        self.exact = n < 63 and 2 ** n <= n_resamples
        sums: list[np.ndarray] = []
        signs: list[np.ndarray] = []
        if self.exact:
            # every sign vector: bit j of the flip number says whether query j is flipped
            flips = np.arange(2 ** n, dtype=np.int64)
            matrix = 1.0 - 2.0 * ((flips[:, None] >> np.arange(n)) & 1)
            sums.append(matrix @ self.diff)
            signs.append(matrix.sum(axis=1))
        else:
            batch = _batch(n)
            for start in range(0, n_resamples, batch):
                count = min(batch, n_resamples - start)
                matrix = rng.integers(0, 2, size=(count, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
                sums.append(matrix @ self.diff)
                signs.append(matrix.sum(axis=1))
        self.flipped_sums = np.concatenate(sums) if sums else np.zeros(0)
        self.sign_sums = np.concatenate(signs) if signs else np.zeros(0)

    def p_value(self, delta: float = 0.0) -> float:
        """Two-sided p-value of "the mean difference is ``delta``" (the test proper: delta = 0)."""
        n = self.diff.size
        observed = abs(self.mean - delta)
        null = np.abs(self.flipped_sums - delta * self.sign_sums) / n
        # a flip as extreme as the data, up to float noise in the sums (scipy's own allowance)
        hits = int(np.count_nonzero(null >= observed * (1 - 1e-14) - TIE_TOLERANCE))
        if self.exact:
            return min(1.0, hits / self.flipped_sums.size)
        return min(1.0, (hits + 1) / (self.flipped_sums.size + 1))

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """The deltas the test does not reject at level 1 - ``confidence``: each bound is found by
        bisection between a delta the test keeps and one it rejects. On the side of the mean where
        0 lies, 0 itself is one end of the bracket, so the interval holds 0 exactly when the test
        keeps it (``p_value(0) > 1 - confidence``). A bound no delta reaches (too few queries for any
        flip count to go below the level) is infinite."""
        alpha = 1 - confidence
        if self.diff.size == 0:
            return (math.nan, math.nan)
        keeps_zero = self.p_value(0.0) > alpha
        spread = float(np.max(np.abs(self.diff - self.mean))) or abs(self.mean) or 1.0
        bounds = []
        for side in (-1.0, 1.0):
            zero_on_this_side = (0.0 - self.mean) * side > 0
            if zero_on_this_side and not keeps_zero:
                kept, rejected = self.mean, 0.0
            else:
                kept = 0.0 if zero_on_this_side else self.mean
                beyond = self._rejected_beyond(kept, side, spread, alpha)
                if beyond is None:
                    bounds.append(side * math.inf)
                    continue
                rejected = beyond
            for _ in range(100):
                middle = (kept + rejected) / 2
                if middle in (kept, rejected):
                    break
                if self.p_value(middle) > alpha:
                    kept = middle
                else:
                    rejected = middle
            bounds.append(kept)
        return (bounds[0], bounds[1])

    def _rejected_beyond(self, start: float, side: float, spread: float, alpha: float) -> float | None:
        """A delta beyond ``start`` on ``side`` that the test rejects, or None if none is."""
        step = spread
        for _ in range(64):
            candidate = start + side * step
            if self.p_value(candidate) <= alpha:
                return candidate
            step *= 2
        return None


def randomization_test(
    baseline: np.ndarray, run: np.ndarray, n_resamples: int = 10_000, rng: np.random.Generator | None = None
) -> float:
    """Two-sided p-value of the paired randomization (sign-flip) test on the mean difference
    (``SignFlips``: exact when 2**n <= n_resamples)."""
    a, b = _as_pair(baseline, run)
    diff = b - a
    if diff.size < 2 or np.all(np.abs(diff) <= TIE_TOLERANCE):
        # one query: its two sign flips (d and -d) are equally extreme, so the exact p-value is 1
        return 1.0
    return SignFlips(diff, n_resamples, rng).p_value()


def randomization_interval(
    baseline: np.ndarray, run: np.ndarray, confidence: float = 0.95, n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """The interval of mean differences the randomization test does not reject (``SignFlips.interval``).
    Every difference the same: that value (no flip can say otherwise about it)."""
    a, b = _as_pair(baseline, run)
    diff = b - a
    if diff.size == 0:
        return (math.nan, math.nan)
    if _is_constant(diff):
        value = float(np.mean(diff))
        return (value, value)
    return SignFlips(diff, n_resamples, rng).interval(confidence)


def t_interval(baseline: np.ndarray, run: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The paired t-interval of the mean difference: mean +- t(n - 1) x sd / sqrt(n). It excludes 0
    exactly when the paired t-test's p-value is below 1 - ``confidence`` (the same statistic).
    Every difference the same: that value (the test's p is then 0 or 1, see ``paired_t_test``)."""
    a, b = _as_pair(baseline, run)
    diff = b - a
    if diff.size == 0:
        return (math.nan, math.nan)
    mean = float(np.mean(diff))
    if diff.size < 2 or _is_constant(diff):
        return (mean, mean)
    # from the lower tail: (1 + confidence) / 2 keeps few digits of 1 - confidence near 1 (a fifth off at 1 - 1e-15)
    half = -t_quantile((1 - confidence) / 2, diff.size - 1) * float(np.std(diff, ddof=1)) / math.sqrt(diff.size)
    return (mean - half, mean + half)


def bootstrap_interval(
    baseline: np.ndarray,
    run: np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """Bootstrap confidence interval of the mean per-query difference (run - baseline), BCa.

    Resamples queries with replacement, vectorised: the means of ``n_resamples`` resamples come from
    index arrays drawn in batches of at most ``BATCH_ELEMENTS``, with no Python loop over resamples.
    The bias correction z0 and the acceleration (from the jackknife of the mean) are Efron's, as
    ``scipy.stats.bootstrap(method='BCa')`` computes them; when they are undefined (every resample on
    one side of the mean) the percentile interval is given. Every difference the same: that value.
    """
    a, b = _as_pair(baseline, run)
    diff = b - a
    n = diff.size
    if n == 0:
        return (math.nan, math.nan)
    if _is_constant(diff):
        value = float(np.mean(diff))
        return (value, value)
    rng = rng if rng is not None else np.random.default_rng()
    means = np.empty(n_resamples)
    batch = _batch(n)
    for start in range(0, n_resamples, batch):
        count = min(batch, n_resamples - start)
        # 32-bit indices and np.take: a quarter less time than int64 fancy indexing, for the same draws' role
        indices = rng.integers(0, n, size=(count, n), dtype=np.int32 if n < 2**31 else np.int64)
        means[start:start + count] = np.take(diff, indices).sum(axis=1) / n
    estimate = float(np.mean(diff))
    levels = np.array([(1 - confidence) / 2, (1 + confidence) / 2])
    below = float(np.mean(means < estimate))
    jackknife = (diff.sum() - diff) / (n - 1)
    spread = jackknife.mean() - jackknife
    denominator = 6.0 * float(np.sum(spread ** 2)) ** 1.5
    if 0 < below < 1 and denominator > 0:
        bias = normal_quantile(below)
        acceleration = float(np.sum(spread ** 3)) / denominator
        z = np.array([normal_quantile(level) for level in levels])  # two levels: a comprehension is enough
        levels = np.array([normal_cdf(value) for value in bias + (bias + z) / (1 - acceleration * (bias + z))])
    low, high = np.percentile(means, 100 * levels)
    return (float(low), float(high))


def effect_size(baseline: np.ndarray, run: np.ndarray) -> float:
    """Cohen's d for paired samples (d_z): mean difference / standard deviation of the differences.

    NaN when the differences do not vary (the ratio is undefined).
    """
    a, b = _as_pair(baseline, run)
    diff = b - a
    if diff.size < 2:
        return math.nan
    sd = float(np.std(diff, ddof=1))
    if sd <= TIE_TOLERANCE:
        return math.nan
    return float(np.mean(diff)) / sd


def wins_ties_losses(baseline: np.ndarray, run: np.ndarray) -> tuple[int, int, int]:
    """Queries where ``run`` beats, ties or loses to ``baseline`` (ties within TIE_TOLERANCE)."""
    a, b = _as_pair(baseline, run)
    diff = b - a
    wins = int(np.count_nonzero(diff > TIE_TOLERANCE))
    losses = int(np.count_nonzero(diff < -TIE_TOLERANCE))
    return wins, diff.size - wins - losses, losses


def minimum_detectable_delta(
    baseline: np.ndarray, run: np.ndarray, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest mean difference a two-sided paired t-test would detect with this power.

    Uses the observed standard deviation of the differences and n queries: the power of the
    test at true difference delta is P(|T| > t_crit) with T ~ noncentral t(n - 1, delta*sqrt(n)/sd)
    (``distributions.noncentral_t_cdf``); we solve power(delta) = ``power`` for delta. NaN below two queries
    and when the differences do not vary (no spread to base the power on).
    """
    a, b = _as_pair(baseline, run)
    diff = b - a
    n = diff.size
    if n < 2:
        return math.nan
    sd = float(np.std(diff, ddof=1))
    if sd <= TIE_TOLERANCE:
        return math.nan
    return detectable_delta(n, sd, alpha, power)


def detectable_delta(n: int, sd: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The mean difference a two-sided paired t-test over ``n`` queries detects with ``power`` when the differences'
    standard deviation is ``sd`` (``minimum_detectable_delta``'s, and the plan's at a number of queries); inf when
    no float noncentrality reaches the power."""
    df = n - 1
    # from the lower tail: 1 - alpha / 2 keeps none of a tiny alpha's digits (1.0 below 2.2e-16, whose quantile is inf)
    t_crit = -t_quantile(alpha / 2, df)

    def shortfall(noncentrality: float) -> float:
        upper = 1.0 - noncentral_t_cdf(t_crit, df, noncentrality)
        lower = noncentral_t_cdf(-t_crit, df, noncentrality)  # the far tail: below 1e-10 wherever it matters
        return upper + lower - power

    high = t_crit + 4.0
    while shortfall(high) < 0:
        if high == math.inf:  # no float noncentrality reaches the power (a critical value near the largest float)
            return math.inf
        high *= 2
    return root_of_increasing(shortfall, 0.0, high) * sd / math.sqrt(n)


def root_of_increasing(function: Callable[[float], float], low: float, high: float, tolerance: float = 1e-10) -> float:
    """The root of an increasing ``function`` with ``function(low) <= 0 <= function(high)``, to within ``tolerance``.

    Regula falsi with the Illinois modification (the value of an end kept twice in a row is halved, so the other
    end moves too: Dowell and Jarratt, BIT 11, 1971), a bisection whenever two steps did not halve the bracket;
    the root stays bracketed throughout and the answer is the bracket's middle once it is ``tolerance`` wide. About
    10 evaluations of a power where bisection took 36 (each a noncentral t: 4 ms of a first comparison's pair);
    scipy.optimize's brentq would cost 0.3-1 s of imports."""
    f_low, f_high = function(low), function(high)
    if f_low == 0 or f_high == 0:
        return low if f_low == 0 else high
    widths = [math.inf, math.inf]
    kept = 0  # 1: the low end was kept by the last step, -1: the high end
    while high - low > tolerance:
        if high - low > widths[-2] / 2 or not f_low < 0 < f_high:
            middle = (low + high) / 2
        else:
            middle = low - f_low * (high - low) / (f_high - f_low)
            # a quarter of the tolerance inside, so that a point landing on the root from one side closes the bracket
            middle = min(max(middle, low + tolerance / 4), high - tolerance / 4)
        if not low < middle < high:  # the tolerance is below the ends' spacing (a root near 1e6 and beyond)
            middle = (low + high) / 2
            if not low < middle < high:  # adjacent floats: the root is as close as a float says
                break
        widths.append(high - low)
        value = function(middle)
        if value < 0:
            low, f_low = middle, value
            if kept == -1:
                f_high /= 2
            kept = -1
        else:
            high, f_high = middle, value
            if kept == 1:
                f_low /= 2
            kept = 1
    return (low + high) / 2


def adjust_p_values(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """Adjust a family of p-values for multiple comparisons.

    ``holm``: sort ascending, p_(i) * (m - i + 1) (i from 1), made non-decreasing by a running
    maximum, capped at 1 (Holm 1979, the step-down form). ``bonferroni``: p * m capped at 1.
    ``none``: unchanged. NaN p-values stay NaN and do not count in m.
    """
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; expected one of {', '.join(CORRECTIONS)}")
    values = np.asarray(p_values, dtype=np.float64)
    adjusted = values.copy()
    finite = np.flatnonzero(~np.isnan(values))
    m = finite.size
    if method == "none" or m == 0:
        return [float(v) for v in adjusted]
    if method == "bonferroni":
        adjusted[finite] = np.minimum(1.0, values[finite] * m)
        return [float(v) for v in adjusted]
    order = finite[np.argsort(values[finite], kind="stable")]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, values[index] * (m - rank)))
        adjusted[index] = running
    return [float(v) for v in adjusted]
