"""Topic set size design: the number of queries a test needs, from a variance, exactly.

The designs are Sakai's ("Topic set size design", Information Retrieval Journal 19(3), 2016; "Topic set size
design with variance estimates from two-way ANOVA", EVIA 2014; the book *Laboratory Experiments in
Information Retrieval*, 2018), after Nagata's sample size designs, and Webber, Moffat and Zobel's power
analysis ("Statistical power in retrieval experimentation", CIKM 2008). Each asks for the smallest number of
queries n that meets a requirement, and computes it from the exact distribution (scipy's noncentral t, F and
studentized range), not from the normal approximations the literature starts from; those are here too
(``approx_*``), to be shown beside.

* **Paired t-test** (two runs): the two-sided paired t-test at level alpha rejects with probability
  ``power`` when the runs' true mean difference is ``delta``; ``sd`` is the standard deviation of the
  per-query differences. Power = P(|T'| > t(1 - alpha/2, n - 1)), T' ~ noncentral t(n - 1, delta sqrt(n) / sd),
  as statsmodels' ``TTestPower`` computes it.
* **One-way ANOVA** (m runs): the F-test rejects with probability ``power`` whenever the best and worst runs'
  means are ``delta`` apart (Sakai's minimum detectable range). The least favourable case, two runs at
  +-delta/2 and the others at the grand mean, gives the noncentrality lambda = n delta^2 / (2 sigma^2);
  power = P(F'(m - 1, m(n - 1), lambda) > F(1 - alpha; m - 1, m(n - 1))).
* **Tukey HSD** (m runs): the test of every pair at once (family-wise level alpha) finds a given pair whose
  means are ``delta`` apart with probability ``power``. The pair's difference over its standard error is a
  noncentral t(m(n - 1), delta sqrt(n / (2 sigma^2))), rejected beyond q(1 - alpha; m, m(n - 1)) / sqrt(2),
  q the studentized range's quantile (``scipy.stats.studentized_range``).
* **Interval width**: the t-interval of a difference (level 1 - alpha) is expected to be no wider than
  ``width``: E[2 t(1 - alpha/2, n - 1) s / sqrt(n)] = 2 t c4(n) sd / sqrt(n) <= width, c4(n) =
  sqrt(2 / (n - 1)) Gamma(n/2) / Gamma((n - 1)/2) the expectation of s / sd (Sakai 2016's CI-based design).

Every power rises with n, so the smallest n is found by a search starting from the normal approximation
(``smallest_queries``); a requirement no n up to ``MAX_QUERIES`` meets gives None.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from scipy import optimize, special, stats

from trec_rag_eval.compare.stats import detectable_delta

MAX_QUERIES = 1_000_000_000
"""The largest number of queries a design looks at: past it, the answer is "more than this"."""


# --- the powers ------------------------------------------------------------------------------------------
def paired_t_power(n: int, delta: float, sd: float, alpha: float) -> float:
    """Power of the two-sided paired t-test with ``n`` queries at a true mean difference ``delta``."""
    df = n - 1
    critical = float(stats.t.isf(alpha / 2, df))
    return _two_sided(critical, df, delta * math.sqrt(n) / sd)


def anova_power(n: int, delta: float, variance: float, runs: int, alpha: float) -> float:
    """Power of the one-way ANOVA F-test over ``runs`` runs of ``n`` queries when the best and worst runs'
    means are ``delta`` apart (the others at the grand mean: the least favourable case)."""
    dfn, dfd = runs - 1, runs * (n - 1)
    critical = float(stats.f.isf(alpha, dfn, dfd))
    return float(stats.ncf.sf(critical, dfn, dfd, n * delta ** 2 / (2 * variance)))


def tukey_pair_power(n: int, delta: float, variance: float, runs: int, alpha: float) -> float:
    """Power of the Tukey HSD test over ``runs`` runs of ``n`` queries to find one pair ``delta`` apart."""
    df = runs * (n - 1)
    critical = _studentized_range(runs, df, alpha) / math.sqrt(2)
    return _two_sided(critical, df, delta * math.sqrt(n / (2 * variance)))


def expected_interval_width(n: int, sd: float, alpha: float) -> float:
    """Expected width of the (1 - alpha) t-interval of a mean difference over ``n`` queries (true sd ``sd``)."""
    c4 = math.sqrt(2 / (n - 1)) * math.exp(special.gammaln(n / 2) - special.gammaln((n - 1) / 2))
    return 2 * float(stats.t.isf(alpha / 2, n - 1)) * c4 * sd / math.sqrt(n)


def _two_sided(critical: float, df: float, noncentrality: float) -> float:
    upper = float(stats.nct.sf(critical, df, noncentrality))
    # the far tail is below 1e-10 wherever it matters, and scipy's nct.cdf can return NaN out there
    lower = float(np.nan_to_num(stats.nct.cdf(-critical, df, noncentrality)))
    return upper + lower


@functools.lru_cache(maxsize=4096)
def _studentized_range(runs: int, df: int, alpha: float) -> float:
    """q(1 - alpha; runs, df): a tenth of a second each below 10^5 df, so each is computed once."""
    return float(stats.studentized_range.ppf(1 - alpha, runs, df))


# --- the normal approximations the literature quotes ---------------------------------------------------
def approx_paired_t(delta: float, sd: float, alpha: float, power: float) -> float:
    """n ~ ((z(alpha/2) + z(beta)) sd / delta)^2 + z(alpha/2)^2 / 2: the normal approximation with Guenther's
    correction, the starting value of Sakai's paired t-test design (after Nagata)."""
    z_alpha, z_beta = stats.norm.isf(alpha / 2), stats.norm.isf(1 - power)
    return float(((z_alpha + z_beta) * sd / delta) ** 2 + z_alpha ** 2 / 2)


def approx_anova(delta: float, variance: float, runs: int, alpha: float, power: float) -> float:
    """n ~ lambda / (delta^2 / (2 sigma^2)), lambda the noncentrality for an infinite error df (noncentral
    chi-square): the starting value of Sakai's one-way ANOVA design."""
    return _chi_square_noncentrality(runs - 1, alpha, power) / (delta ** 2 / (2 * variance))


def approx_interval(width: float, sd: float, alpha: float) -> float:
    """n ~ (2 z(alpha/2) sd / width)^2: the normal interval, the starting value of Sakai's CI-based design."""
    return float((2 * stats.norm.isf(alpha / 2) * sd / width) ** 2)


def approx_tukey(delta: float, variance: float, runs: int, alpha: float, power: float) -> float:
    """A starting value for the Tukey design (the studentized range and the t as normal); not shown."""
    critical = _studentized_range(runs, 10 ** 9, alpha) / math.sqrt(2)
    return float(2 * variance * ((critical + stats.norm.isf(1 - power)) / delta) ** 2)


@functools.lru_cache(maxsize=256)
def _chi_square_noncentrality(df: int, alpha: float, power: float) -> float:
    critical = float(stats.chi2.isf(alpha, df))
    high = 1.0
    while float(stats.ncx2.sf(critical, df, high)) < power:
        high *= 2
    return float(optimize.brentq(lambda lam: float(stats.ncx2.sf(critical, df, lam)) - power, 0.0, high, xtol=1e-12))


# --- the searches ----------------------------------------------------------------------------------------
def smallest_queries(meets: Callable[[int], bool], guess: float, least: int = 2,
                     limit: int = MAX_QUERIES) -> int | None:
    """The smallest n >= ``least`` with ``meets(n)`` (which must hold from some n on), searched from ``guess``
    outward by doubling steps, then halving; None when even ``limit`` does not meet it."""
    start = min(max(least, math.ceil(guess) if math.isfinite(guess) else limit), limit)
    if meets(start):
        high, step = start, 1
        low = start - step
        while low >= least and meets(low):
            high, step = low, step * 2
            low = high - step
        low = max(low, least - 1)  # low does not meet it (or lies below least)
    else:
        low, step = start, 1
        high = min(start + step, limit)
        while not meets(high):
            if high >= limit:
                return None
            low, step = high, step * 2
            high = min(high + step, limit)
    while high - low > 1:
        middle = (low + high) // 2
        if meets(middle):
            high = middle
        else:
            low = middle
    return high


def queries_paired_t(delta: float, sd: float, alpha: float, power: float) -> int | None:
    return smallest_queries(lambda n: paired_t_power(n, delta, sd, alpha) >= power,
                            approx_paired_t(delta, sd, alpha, power))


def queries_anova(delta: float, variance: float, runs: int, alpha: float, power: float) -> int | None:
    return smallest_queries(lambda n: anova_power(n, delta, variance, runs, alpha) >= power,
                            approx_anova(delta, variance, runs, alpha, power))


def queries_tukey(delta: float, variance: float, runs: int, alpha: float, power: float) -> int | None:
    return smallest_queries(lambda n: _tukey_meets(n, delta, variance, runs, alpha, power),
                            approx_tukey(delta, variance, runs, alpha, power))


def _tukey_meets(n: int, delta: float, variance: float, runs: int, alpha: float, power: float) -> bool:
    """Whether ``tukey_pair_power(n, ...) >= power``, from one evaluation of the studentized range's cdf
    (a fortieth of a second) instead of its quantile (ten times that): the power falls as the critical
    value rises, so it is met exactly when q(1 - alpha) is at most the critical value giving ``power``."""
    df = runs * (n - 1)
    noncentrality = delta * math.sqrt(n / (2 * variance))
    high = 4.0
    while _two_sided(high, df, noncentrality) > power:
        high *= 2
    critical = float(optimize.brentq(lambda c: _two_sided(c, df, noncentrality) - power, 0.0, high, xtol=1e-12))
    return float(stats.studentized_range.cdf(critical * math.sqrt(2), runs, df)) >= 1 - alpha


def queries_interval(width: float, sd: float, alpha: float) -> int | None:
    return smallest_queries(lambda n: expected_interval_width(n, sd, alpha) <= width,
                            approx_interval(width, sd, alpha))


# --- the inverse: the delta a number of queries detects ------------------------------------------------------
def detectable_paired_t(n: int, sd: float, alpha: float, power: float) -> float:
    """The mean difference the paired t-test over ``n`` queries detects with ``power``: compare's detectable delta
    (``compare.stats.detectable_delta``), whose noncentral t keeps its digits where scipy's gives NaN (at alpha
    1e-100 and eight queries)."""
    return detectable_delta(n, sd, alpha, power)


def detectable_anova(n: int, variance: float, runs: int, alpha: float, power: float) -> float:
    """The range between the best and worst runs the one-way ANOVA over ``n`` queries detects with ``power``."""
    dfn, dfd = runs - 1, runs * (n - 1)
    critical = float(stats.f.isf(alpha, dfn, dfd))
    lam = _noncentrality(lambda lam: float(stats.ncf.sf(critical, dfn, dfd, lam)), power)
    return math.sqrt(2 * variance * lam / n)


def detectable_tukey(n: int, variance: float, runs: int, alpha: float, power: float) -> float:
    """The difference of a pair the Tukey HSD test over ``n`` queries finds with ``power``."""
    df = runs * (n - 1)
    critical = _studentized_range(runs, df, alpha) / math.sqrt(2)
    return _noncentrality(lambda nc: _two_sided(critical, df, nc), power) * math.sqrt(2 * variance / n)


def _noncentrality(power_at: Callable[[float], float], power: float) -> float:
    high = 4.0
    while power_at(high) < power:
        high *= 2
    return float(optimize.brentq(lambda value: power_at(value) - power, 0.0, high, xtol=1e-12))


# --- the variance and its own uncertainty -------------------------------------------------------------------
def residual_variance(matrix: np.ndarray) -> tuple[float, int]:
    """The residual mean square V_E of a two-way ANOVA without replication of ``matrix`` (queries x runs) and
    its degrees of freedom (runs - 1)(queries - 1): Sakai's estimate of the within-run variance (EVIA 2014)."""
    n, m = matrix.shape
    residuals = matrix - matrix.mean(axis=0, keepdims=True) - matrix.mean(axis=1, keepdims=True) + matrix.mean()
    df = (m - 1) * (n - 1)
    return float(np.sum(residuals ** 2) / df), df


def variance_interval(variance: float, df: int, confidence: float) -> tuple[float, float]:
    """The ``confidence`` interval of a normal variance estimated with ``df`` degrees of freedom:
    df s^2 / chi2(1 - a/2, df) to df s^2 / chi2(a/2, df), a = 1 - confidence."""
    tail = (1 - confidence) / 2
    return (df * variance / float(stats.chi2.isf(tail, df)), df * variance / float(stats.chi2.ppf(tail, df)))
