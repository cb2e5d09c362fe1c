"""The t, noncentral t and normal distributions of ``compare.distributions`` and ``compare.noncentral_t`` against
scipy.special and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from trec_rag_eval.compare.distributions import (
    log_beta,
    normal_cdf,
    normal_quantile,
    t_cdf,
    t_quantile,
)
from trec_rag_eval.compare.noncentral_t import noncentral_t_cdf

DFS = [1, 2, 3, 4, 5, 7, 10, 29, 30, 100, 1000, 1e5, 1e7]
MAGNITUDES = [float(m) for m in 10.0 ** np.arange(-8, 3.0001, 0.125)]  # 1e-8 to 1e3, 8 a decade
TS = [0.0] + [sign * m for m in MAGNITUDES for sign in (1, -1)]

CDF_TOLERANCE = 1e-12
"""Relative error allowed against scipy (what we reach: 1e-13 up to df = 1000; from df = 1e5 on, the bound of the
test below, 9e-13 at |t| = 37, the far end of a float)."""


@pytest.mark.parametrize("df", DFS)
def test_the_t_cdf_is_scipys_to_the_last_digits_in_both_tails(df):
    for t in TS:
        ours, theirs = t_cdf(t, df), float(special.stdtr(df, t))
        if df == 1 and abs(t) < 1e-3:
            # scipy keeps only 9 digits of the Cauchy's CDF near 0 (5.0000000474e-1 at t = 1e-8): the closed form
            # 1/2 + atan(t) / pi is the reference there
            theirs = 0.5 + math.atan(t) / math.pi
        if theirs == 0.0:  # scipy underflows first (df = 1000, t = -1000: about 1e-1300)
            assert ours < 1e-300, (df, t)
            continue
        assert abs(ours - theirs) <= CDF_TOLERANCE * theirs, (df, t, ours, theirs)


HUGE_DFS = [1e5, 1e6, 1e7, 1e10, 1e12, 1e15]
FAR = [float(m) for m in 10.0 ** np.arange(-8, 1.5001, 0.125)] + [33.0, 35.0, 36.0, 37.0, 37.5, 38.0]
"""1e-8 to 37.5, where P(T <= -t) is ~1e-300 at these df (at 38 it is below 1e-310: scipy's may be 0 there)."""


@pytest.mark.parametrize("df", HUGE_DFS)
def test_the_t_cdf_of_many_degrees_of_freedom_is_scipys_in_both_tails(df):
    # the continued fraction of I_x(df/2, 1/2) lost digits as df grew (8e-8 at df = 1e10, |t| = 4.26; 1e-2 at 1e15,
    # where it stopped before converging). The bound is what any evaluation in floats can reach: the tail is ~e^-u,
    # u = (df/2 - 1/4) log(1 + t^2 / df) ~ t^2 / 2, and a few roundings of u move it by u times as many ulps, so
    # both ours and scipy's are within ~2 eps (1 + t^2) of the exact value (checked at 60 digits with mpmath)
    for t in [sign * m for m in FAR for sign in (-1, 1)]:
        ours, theirs = t_cdf(t, df), float(special.stdtr(df, t))
        if theirs == 0.0:  # below the smallest float for scipy
            assert ours < 1e-300, (df, t)
            continue
        assert abs(ours - theirs) <= 4 * 2.2e-16 * (1 + t * t) * theirs, (df, t, ours, theirs)


def test_the_expansions_coefficients_are_the_power_series_of_their_function():
    # g(z) = (sinh(z/2) / (z/2))^(-1/2) = sum_n c_n z^(2n), the expansion of the t tail at many degrees of freedom
    from trec_rag_eval.compare.distributions import _SINH_POWERS

    for z in (0.1, 0.25, 0.5):  # the first coefficient left out, c_8 z^16, is below 1e-18 there
        series = sum(c * z ** (2 * n) for n, c in enumerate(_SINH_POWERS))
        assert series == pytest.approx((math.sinh(z / 2) / (z / 2)) ** -0.5, rel=1e-15, abs=0), z


def test_the_t_cdf_of_one_and_two_degrees_of_freedom_is_their_closed_form():
    # df = 1, the Cauchy: 1/2 + atan(t) / pi, the lower tail atan(1 / |t|) / pi (no cancellation);
    # df = 2: 1/2 + t / (2 sqrt(2 + t^2)), the lower tail (1 - |t| / sqrt(2 + t^2)) / 2 = 1 / (sqrt(2 + t^2)
    # (sqrt(2 + t^2) + |t|)) written without cancellation
    for m in MAGNITUDES:
        lower = math.atan2(1.0, m) / math.pi
        assert t_cdf(-m, 1) == pytest.approx(lower, rel=1e-14)
        assert t_cdf(m, 1) == pytest.approx(1 - lower, rel=1e-15)
        root = math.sqrt(2 + m * m)
        lower = 1 / (root * (root + m))
        assert t_cdf(-m, 2) == pytest.approx(lower, rel=1e-14)
        assert t_cdf(m, 2) == pytest.approx(1 - lower, rel=1e-15)


@pytest.mark.parametrize("df", DFS)
def test_the_t_quantile_inverts_the_cdf(df):
    # p = P(T <= t) from scipy (the closed form at df = 1 near 0), and our quantile of p is t again, to 1e-10
    # relative (what we reach: 2e-12), plus what the rounding of p to a float leaves undetermined: two ulps of p
    # over the density at t (near p = 1/2, and near p = 1, where 1 - p keeps few digits)
    for t in TS:
        p = 0.5 + math.atan(t) / math.pi if df == 1 else float(special.stdtr(df, t))
        if p in (0.0, 1.0) or t == 0:
            continue
        density = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - (df + 1) / 2 * math.log1p(t * t / df)
                           ) / math.sqrt(df * math.pi)
        allowed = 1e-10 * abs(t) + 2 * math.ulp(p) / density
        assert abs(t_quantile(p, df) - t) <= allowed, (df, t, p, t_quantile(p, df))
        if abs(t) >= 1e-2:  # scipy's own quantile is good from here on (not near 0: 5e-9 off at df = 4, t = 1e-4)
            assert t_quantile(p, df) == pytest.approx(float(special.stdtrit(df, p)), rel=1e-10)


def test_the_quantiles_a_comparison_asks_for():
    # the t-interval's and the detectable delta's critical values, and a textbook figure: t(0.975; 10) = 2.228139
    for df in (1, 2, 7, 29, 49, 99, 999, 10_000):
        for p in (0.5 + 0.95 / 2, 1 - 0.05 / 2, 0.995, 0.9, 0.6):
            assert t_quantile(p, df) == pytest.approx(float(special.stdtrit(df, p)), rel=1e-12)
            assert t_quantile(1 - p, df) == pytest.approx(-t_quantile(p, df), rel=1e-12)
    assert round(t_quantile(0.975, 10), 6) == 2.228139


@pytest.mark.parametrize("df", [1e6, 1e7, 1e10, 1e12, 1e15])
def test_the_t_quantile_of_many_degrees_of_freedom_is_scipys(df):
    # the quantile inverted our t CDF, whose continued fraction loses digits as df grows (4e-7 of I_x(df/2, 1/2)
    # at df = 1e10, |t| = 4.26): it was 7e-9 off at df = 1e10, p = 1e-5, and 5e-5 at df = 1e14
    for p in (1e-300, 1e-100, 1e-20, 1e-5, 0.025, 0.3, 0.49, 0.6, 0.975, 1 - 1e-10):
        assert t_quantile(p, df) == pytest.approx(float(special.stdtrit(df, p)), rel=2e-15), (df, p)


@pytest.mark.parametrize("df", [1e5, 3e5, 9e5])
def test_the_t_quantile_below_its_expansion_is_scipys(df):
    # below df = 1e6 the quantile inverts the t CDF, whose lost digits it had (6e-13 off at df = 9e5)
    for p in (1e-300, 1e-100, 1e-20, 1e-5, 0.025, 0.3, 0.49, 0.6, 0.975):
        assert t_quantile(p, df) == pytest.approx(float(special.stdtrit(df, p)), rel=1e-14), (df, p)


def test_far_quantiles_invert_the_cdf():
    # down to p = 1e-300, where the density underflows long before the tail: df = 2's quantile is
    # (2p - 1) / sqrt(2p(1 - p)) exactly; elsewhere the CDF of the quantile is p again
    for p in (1e-300, 1e-100, 1e-20):
        assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-12)
        assert t_quantile(p, 1) == pytest.approx(-1 / math.tan(math.pi * p), rel=1e-12)  # tan(pi (p - 1/2))
        for df in (3, 10, 1e7):
            assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, rel=1e-12)


def test_the_cdf_beyond_where_df_over_t_squared_underflows():
    # df / (df + t^2) is below the smallest float from |t| ~ 1e154 on; the tail is not: atan(1 / |t|) / pi at df = 1,
    # 1 / (sqrt(2 + t^2) (sqrt(2 + t^2) + |t|)) ~ 1 / (2 t^2) at df = 2 (|t|^-df from exp(-df log |t|): the
    # float's error in log |t|, 1e-16 of 370 at 1e160, is what is lost)
    for m in (1e160, 1e200, 1e300):
        assert t_cdf(-m, 1) == pytest.approx(math.atan2(1.0, m) / math.pi, rel=1e-13, abs=0)
        assert t_cdf(-m, 2) == pytest.approx(0.5 / m / m, rel=1e-13, abs=0)
        assert t_cdf(m, 1) == 1.0


def test_the_edges_are_scipys():
    nan = math.nan
    for df in (0, -1, nan):  # no distribution: NaN, as scipy.special
        assert math.isnan(t_cdf(1.0, df)) and math.isnan(special.stdtr(df, 1.0))
        assert math.isnan(t_quantile(0.3, df)) and math.isnan(special.stdtrit(df, 0.3))
        assert math.isnan(noncentral_t_cdf(1.0, df, 1.0)) and math.isnan(special.nctdtr(df, 1.0, 1.0))
    assert math.isnan(t_cdf(nan, 3)) and math.isnan(t_quantile(nan, 3)) and math.isnan(noncentral_t_cdf(1, 3, nan))
    assert math.isnan(t_quantile(1.5, 3)) and math.isnan(t_quantile(-0.1, 3))
    assert (t_cdf(math.inf, 3), t_cdf(-math.inf, 3), t_cdf(0.0, 3)) == (1.0, 0.0, 0.5)
    assert (t_quantile(1.0, 3), t_quantile(0.5, 3)) == (math.inf, 0.0)
    assert t_quantile(0.0, 3) == -math.inf  # scipy says +inf there; the quantile of 0 is -inf
    # df = inf: the normal distribution
    assert t_cdf(1.0, math.inf) == pytest.approx(float(special.ndtr(1.0)), rel=1e-15)
    assert t_quantile(0.975, math.inf) == pytest.approx(float(special.ndtri(0.975)), rel=1e-15)
    assert noncentral_t_cdf(1.0, math.inf, 1.0) == 0.5


def test_the_normal_distribution_keeps_both_tails():
    for z in (-38.0, -20.0, -8.0, -3.0, -1.0, -0.5, -1e-9, 0.0, 1e-9, 0.5, 1.0, 3.0, 8.0):
        assert normal_cdf(z) == pytest.approx(float(special.ndtr(z)), rel=1e-14)
    for p in (1e-300, 1e-20, 1e-5, 0.025, 0.3, 0.5, 0.7, 0.975, 1 - 1e-10):
        assert normal_quantile(p) == pytest.approx(float(special.ndtri(p)), rel=1e-14, abs=1e-300)
    assert (normal_quantile(0.0), normal_quantile(1.0)) == (-math.inf, math.inf)


def test_log_beta_keeps_its_digits_for_large_arguments():
    # Gamma(n) / Gamma(n + 1/2) = (n - 1)! 4^n n! / ((2n)! sqrt(pi)) exactly, for integer n; B(n, 1/2) is sqrt(pi)
    # times it. scipy.special.betaln(5e4, 0.5) is 3.5e-11 off, math.lgamma's difference as much
    from decimal import Decimal, localcontext
    from fractions import Fraction

    for n in (1, 2, 10, 11, 50, 500, 50_000):
        ratio = Fraction(math.factorial(n - 1) * 4 ** n * math.factorial(n), math.factorial(2 * n))
        with localcontext() as context:
            context.prec = 40
            exact = float((Decimal(ratio.numerator) / Decimal(ratio.denominator)).ln())
        assert log_beta(n, 0.5) == pytest.approx(exact, rel=1e-15, abs=1e-15)
        assert log_beta(0.5, n) == log_beta(n, 0.5)
    # both large (Stirling's series for the three Gammas): B(n, n) = 2 (n - 1)!^2 / (2n - 1)! ... exactly
    for n in (10, 20, 300):
        exact = math.log(Fraction(math.factorial(n - 1) ** 2, math.factorial(2 * n - 1)))
        assert log_beta(n, n) == pytest.approx(exact, rel=1e-14)


NONCENTRALITIES = [-100.0, -40.0, -10.0, -2.8, -1.0, -0.1, 0.0, 0.1, 1.0, 2.8, 10.0, 40.0, 100.0]


@pytest.mark.parametrize("df", [1, 2, 3, 7, 10, 30, 100, 1000, 1e5])
def test_the_noncentral_t_cdf_is_scipys(df):
    # absolute error: what a power needs (what we reach: 2e-13 at df <= 1000, 5e-13 at df = 1e5); scipy's NaN
    # (its series fails far out: 56 of these points) is not compared
    for nc in NONCENTRALITIES:
        for t in [0.0, 0.1, 1.0, 2.0, 3.0, 10.0, 30.0, 100.0, 1000.0, -0.1, -1.0, -2.0, -3.0, -10.0, -100.0]:
            theirs = float(special.nctdtr(df, nc, t))
            ours = noncentral_t_cdf(t, df, nc)
            assert 0.0 <= ours <= 1.0
            if not math.isnan(theirs):
                assert abs(ours - theirs) <= 1e-12, (df, nc, t, ours, theirs)
    # noncentrality 0 is the central t
    assert noncentral_t_cdf(1.5, 7, 0.0) == t_cdf(1.5, 7)


@pytest.mark.parametrize("df", [1e5, 1e6, 1e10, 1e12, 1e15])
def test_the_noncentral_t_cdf_of_many_degrees_of_freedom_is_scipys(df):
    # the Poisson series' incomplete betas lost digits as df grew (1.6e-12 at df = 1e6, 3e-11 at 1e7, 2e-9 at 1e10,
    # 0.2 s a call there; at 1e15 it did not end). scipy's own loses digits from 1e7 to 1e9 (4e-9 at 1e9: against
    # mpmath, ours is within 1e-16 there), so it is the reference at these df only (its 9e-13 at 1e6 the bound)
    for nc in NONCENTRALITIES + [1e3]:
        for t in [0.0, 0.1, 1.0, 2.0, 3.0, 10.0, 30.0, 100.0, 1000.0, -0.1, -1.0, -2.0, -3.0, -10.0, -100.0]:
            theirs = float(special.nctdtr(df, nc, t))
            if not math.isnan(theirs):
                assert abs(noncentral_t_cdf(t, df, nc) - theirs) <= 1e-12, (df, nc, t, theirs)


@pytest.mark.parametrize("df", [1e8, 1e10, 1e12, 1e15])
def test_the_noncentral_t_cdf_of_many_degrees_of_freedom_is_its_expansion_in_one_over_df(df):
    # T = (Z + delta) / S, S = chi_df / sqrt(df) = 1 + eps with E[eps] = -1 / (4 df), E[eps^2] = 1 / (2 df) (E[chi_k] =
    # sqrt(k) (1 - 1 / (4k) + O(k^-2)), E[S^2] = 1), the next moments O(df^-2); so, a = t - delta, P(T <= t) =
    # E[Phi(a + t eps)] = Phi(a) + phi(a) t E[eps] + phi'(a) t^2 E[eps^2] / 2 = Phi(a) - phi(a) t (1 + a t) / (4 df),
    # to O(t^4 / df^2) (below 1e-16 for |t|, |a| <= 8 from df = 1e10 on; 1e-13 at 1e8)
    tolerance = 2e-15 if df >= 1e10 else 1e-13
    for nc in (-3.0, -1.0, 0.5, 1.0, 2.8, 5.0):
        for t in (-5.0, -3.0, -1.0, -0.1, 0.0, 0.1, 1.0, 2.0, 3.0, 5.0):
            a = t - nc
            expanded = normal_cdf(a) - math.exp(-a * a / 2) / math.sqrt(2 * math.pi) * t * (1 + a * t) / (4 * df)
            assert noncentral_t_cdf(t, df, nc) == pytest.approx(expanded, abs=tolerance), (df, nc, t)


def test_the_noncentral_t_cdf_where_t_squared_over_df_underflows_or_overflows():
    # P(T <= t) at t = +-1e-200 is P(Z <= -delta) (T's sign is Z + delta's), at +1e300 1 and at -1e300 0, as scipy
    for df, delta in ((5, 1.0), (1, -2.0), (1e5, 40.0)):
        assert noncentral_t_cdf(1e-200, df, delta) == pytest.approx(float(special.ndtr(-delta)), rel=1e-14)
        assert noncentral_t_cdf(-1e-200, df, delta) == pytest.approx(float(special.ndtr(-delta)), rel=1e-14)
        assert (noncentral_t_cdf(1e300, df, delta), noncentral_t_cdf(-1e300, df, delta)) == (1.0, 0.0)


@pytest.mark.parametrize("df", [1, 3, 9, 30, 200, 1000])
def test_the_noncentral_t_cdf_beyond_the_series_is_scipys_where_scipys_is_good(df):
    # the integral over Z that takes over from the Poisson series above |delta| = 100, at delta from 45 to 100, where
    # scipy's series is good to ~1e-13 (beyond, scipy's loses digits: 1e-8 off at delta = 1e4, NaN at 1e6)
    from trec_rag_eval.compare.noncentral_t import _noncentral_t_far

    for delta in (45.0, 80.0, 100.0):
        for fraction in (0.5, 0.9, 0.97, 1.0, 1.03, 1.1, 2.0):
            t = fraction * delta
            theirs = float(special.nctdtr(df, delta, t))
            assert _noncentral_t_far(t, df, delta) == pytest.approx(theirs, abs=1e-12), (delta, t)
            assert _noncentral_t_far(t, df, -delta) == 1.0  # 1 - P(T <= t) is P(Z - delta > t S) < Phi(-delta)


def test_the_noncentral_t_cdf_of_a_huge_noncentrality_is_its_closed_form_at_two_degrees_of_freedom():
    # df = 2: chi_2^2 is exponential with mean 2, so P(T <= t) = P(Z + delta <= t sqrt(V / 2)) = E[exp(-(Z + delta)^2
    # / t^2)] (Z + delta > 0 but for a chance below Phi(-40)), and the Gaussian integral of that is
    # t / sqrt(t^2 + 2) exp(-delta^2 / (t^2 + 2)). The series would need ~10 sqrt(delta^2 / 2) terms each way.
    for delta in (150.0, 1e4, 1e6, 1e8):
        for fraction in (0.5, 0.9, 1.0, 1.1, 2.0):
            t = fraction * delta
            exact = t / math.sqrt(t * t + 2) * math.exp(-delta * delta / (t * t + 2))
            assert noncentral_t_cdf(t, 2, delta) == pytest.approx(exact, rel=1e-13, abs=1e-300), (delta, t)
            assert noncentral_t_cdf(-t, 2, -delta) == pytest.approx(1 - exact, rel=1e-13)



def test_the_detectable_delta_of_a_tiny_alpha_over_few_queries():
    # two queries at alpha = 1e-8 (t_crit 6.4e7) ended in a division by zero, three at 1e-12 (t_crit 1e6) ran for hours:
    # the noncentralities there are ~1e8 and ~1e6. df = 2 has the closed form above: power(delta) = 1 - t / sqrt(t^2
    # + 2) exp(-delta^2 / (t^2 + 2)) (the lower tail is 0), so power 0.8 is delta = sqrt((t^2 + 2) log(5 t /
    # sqrt(t^2 + 2))), t = t_crit = (2p - 1) / sqrt(2p (1 - p)), p = 1 - alpha / 2, that is (1 - alpha) / sqrt(alpha
    # (1 - alpha / 2)) (1 - alpha / 2 as a float keeps 4 digits of alpha = 1e-12); the detectable delta is
    # delta sd / sqrt(3).
    from trec_rag_eval.compare.stats import minimum_detectable_delta

    baseline = np.zeros(3)
    run = np.array([0.1, 0.2, 0.6])
    sd = float(np.std(run, ddof=1))
    alpha = 1e-12
    t = (1 - alpha) / math.sqrt(alpha * (1 - alpha / 2))
    delta = math.sqrt((t * t + 2) * math.log(5 * t / math.sqrt(t * t + 2)))
    mdd = minimum_detectable_delta(baseline, run, alpha=alpha)
    assert mdd == pytest.approx(delta * sd / math.sqrt(3), rel=1e-7)
    two = minimum_detectable_delta(np.zeros(2), np.array([0.1, 0.5]), alpha=1e-8)
    assert math.isfinite(two) and two > minimum_detectable_delta(np.zeros(2), np.array([0.1, 0.5]), alpha=1e-4)


def test_the_detectable_delta_of_an_alpha_below_the_floats_resolution_near_one():
    # 1 - alpha / 2 is 1.0 below alpha ~ 2.2e-16: the critical value was the quantile of 1, inf, and the search for the
    # power's root doubled inf for ever. Here from alpha / 2 itself: at df = 2, t_crit = (1 - alpha) / sqrt(alpha (1 -
    # alpha / 2)) (2p - 1 and 2p (1 - p) of the closed form above, p = 1 - alpha / 2), and the closed-form power;
    # at df = 1, far out, Z is nothing beside delta: power = P(|Y| < delta / t_crit) = 2 Phi(delta / t_crit) - 1, so
    # delta = t_crit Phi^-1((1 + power) / 2), t_crit = 1 / tan(pi alpha / 2)
    from statistics import NormalDist

    from trec_rag_eval.compare.stats import minimum_detectable_delta

    alpha = 1e-300
    run = np.array([0.1, 0.2, 0.6])
    t = (1 - alpha) / math.sqrt(alpha * (1 - alpha / 2))
    delta = math.sqrt((t * t + 2) * math.log(5 * t / math.sqrt(t * t + 2)))
    sd = float(np.std(run, ddof=1))
    assert minimum_detectable_delta(np.zeros(3), run, alpha=alpha) == pytest.approx(delta * sd / math.sqrt(3), rel=1e-7)
    run = np.array([0.1, 0.5])
    delta = NormalDist().inv_cdf(0.9) / math.tan(math.pi * alpha / 2)
    sd = float(np.std(run, ddof=1))
    assert minimum_detectable_delta(np.zeros(2), run, alpha=alpha) == pytest.approx(delta * sd / math.sqrt(2), rel=1e-7)


def test_the_t_interval_of_a_confidence_near_one_keeps_its_digits():
    # (1 + confidence) / 2 as a float keeps a fifth of 1 - confidence = 1e-15 wrong; the interval's half width is
    # t_crit sd / sqrt(n), t_crit = 1 / tan(pi (1 - confidence) / 2) at df = 1 (1 - confidence exact in floats)
    from trec_rag_eval.compare.stats import t_interval

    confidence = 1 - 1e-15
    run = np.array([0.1, 0.5])
    half = 1 / math.tan(math.pi * (1 - confidence) / 2) * float(np.std(run, ddof=1)) / math.sqrt(2)
    low, high = t_interval(np.zeros(2), run, confidence)
    assert (high - low) / 2 == pytest.approx(half, rel=1e-12)
