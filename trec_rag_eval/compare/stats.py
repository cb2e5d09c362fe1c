"""Paired statistics over per-query values: tests, intervals, effect sizes, corrections.

Every function takes per-query arrays aligned on the same query list (``baseline[i]`` and
``run[i]`` are the same query) and knows nothing about measures, files or rendering.
Distributions and resampling come from scipy: ``ttest_rel``, ``permutation_test`` (paired
sign flips) and ``bootstrap`` (BCa); nothing here is a hand-written distribution.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import optimize, stats

TESTS = ("t", "randomization")
CORRECTIONS = ("holm", "bonferroni", "none")

# Two per-query values closer than this are a tie: measures are ratios of small integers, so a
# genuine difference is never this small, while float noise from different summation orders is.
TIE_TOLERANCE = 1e-12

# Resampling works on (batch x queries) arrays; this bounds one batch to ~16 MB of float64 so
# that tens of thousands of queries do not need gigabytes (unbatched, 2,000 queries took 1.5 GB).
BATCH_ELEMENTS = 2_000_000


def _rng_argument(function: Callable[..., Any], rng: np.random.Generator) -> dict[str, Any]:
    """scipy >= 1.15 takes ``rng=``; older releases only ``random_state=``."""
    if "rng" in inspect.signature(function).parameters:
        return {"rng": rng}
    return {"random_state": rng}


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
    return float(stats.ttest_rel(b, a).pvalue)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def randomization_test(
    baseline: np.ndarray, run: np.ndarray, n_resamples: int = 10_000, rng: np.random.Generator | None = None
) -> float:
    """Two-sided p-value of the paired randomization (sign-flip) test on the mean difference.

    ``scipy.stats.permutation_test(permutation_type='samples')`` swaps the two values of each
    query at random. When 2**n <= n_resamples scipy enumerates every flip (an exact test);
    otherwise it draws n_resamples flips and reports (hits + 1) / (n_resamples + 1).
    Cost: scipy draws each flip as a permutation, about 0.2-0.5 microseconds per query and
    resample (2,000 queries x 10,000 resamples: ~4 s per measure and run); the t-test is instant.
    """
    a, b = _as_pair(baseline, run)
    diff = b - a
    if diff.size < 2 or np.all(np.abs(diff) <= TIE_TOLERANCE):
        # one query: its two sign flips (d and -d) are equally extreme, so the exact p-value is 1
        return 1.0
    rng = rng if rng is not None else np.random.default_rng()
    result = stats.permutation_test(
        (b, a),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        batch=_batch(diff.size),
        alternative="two-sided",
        **_rng_argument(stats.permutation_test, rng),
    )
    return float(min(1.0, result.pvalue))


def bootstrap_interval(
    baseline: np.ndarray,
    run: np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """Bootstrap confidence interval of the mean per-query difference (run - baseline).

    ``scipy.stats.bootstrap`` with the BCa method, resampling queries. When every difference is
    the same the interval is that single value (BCa is undefined there).
    """
    a, b = _as_pair(baseline, run)
    diff = b - a
    if diff.size == 0:
        return (math.nan, math.nan)
    if _is_constant(diff):
        value = float(np.mean(diff))
        return (value, value)
    rng = rng if rng is not None else np.random.default_rng()

    def interval(method: str) -> tuple[float, float]:
        result = stats.bootstrap(
            (diff,),
            np.mean,
            confidence_level=confidence,
            n_resamples=n_resamples,
            method=method,
            vectorized=True,
            batch=_batch(diff.size),
            **_rng_argument(stats.bootstrap, rng),
        )
        return float(result.confidence_interval.low), float(result.confidence_interval.high)

    low, high = interval("BCa")
    if not (math.isfinite(low) and math.isfinite(high)):
        # BCa can fail on very lumpy data (e.g. one non-zero difference); percentile never does.
        low, high = interval("percentile")
    return (low, high)


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
    (``scipy.stats.nct``); we solve power(delta) = ``power`` for delta. NaN below two queries
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
    df = n - 1
    t_crit = float(stats.t.ppf(1 - alpha / 2, df))

    def shortfall(noncentrality: float) -> float:
        upper = float(stats.nct.sf(t_crit, df, noncentrality))
        # The far tail is below 1e-10 for any noncentrality that matters here, and scipy's
        # nct.cdf can return NaN out there, so a NaN counts as 0.
        lower = float(np.nan_to_num(stats.nct.cdf(-t_crit, df, noncentrality)))
        return upper + lower - power

    high = t_crit + 4.0
    while shortfall(high) < 0:
        high *= 2
    noncentrality = optimize.brentq(shortfall, 0.0, high, xtol=1e-10)
    return noncentrality * sd / math.sqrt(n)


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
