"""The Student t distribution and the normal distribution, in plain Python floats.

A comparison's t-test, t-interval and detectable delta need three functions: the t CDF, its quantile and the
noncentral t CDF (``compare.noncentral_t``). scipy.special has them, but importing it (scipy 1.17) loads numpy's
whole namespace through array_api_compat (numpy.testing, numpy.f2py, numpy.ma, ...): some 0.3 s, nearly all of a
first comparison. These are the textbook formulas, each cited beside its function:

* the t CDF through the regularized incomplete beta function I_x(a, b) (Abramowitz & Stegun 26.7.1 with 26.5.27:
  P(T > t) = I_x(df/2, 1/2) / 2, x = df / (df + t^2)), itself the continued fraction of A&S 26.5.8 evaluated by
  the modified Lentz method (Numerical Recipes, 3rd ed., 5.2 and 6.4), on the side of the symmetry
  I_x(a, b) = 1 - I_{1-x}(b, a) (A&S 26.5.2) where it converges; x and 1 - x are both computed from t, never one
  from the other, so neither tail loses digits to cancellation; from df = 1e5 on, where the fraction loses digits,
  by I_x(df/2, 1/2)'s expansion in incomplete gamma functions for a large first parameter (Temme; DiDonato and
  Morris's BGRAT, ACM TOMS 708, 1992), which is the normal distribution and its corrections in 1/df;
* log B(a, b) from Stirling's series (A&S 6.1.40, 6.1.41) once an argument is 10 or more, written so that no two
  large logarithms are subtracted (``math.lgamma`` alone loses the digits of B(a, b) to lgamma(a) - lgamma(a + b)
  when a is large);
* the t quantile by Newton's method on log P in log t, kept inside a bracket (bisection when a step leaves it),
  and from df = 1e6 on by the normal quantile's Cornish-Fisher expansion (A&S 26.7.5), which the CDF's lost digits
  do not reach;
* the normal CDF from ``math.erf`` / ``math.erfc`` (whichever keeps the tail's digits) and its quantile from
  ``statistics.NormalDist`` (Wichura's AS 241).

Accuracy against scipy.special (and closed forms where scipy loses digits) over df from 1 to 1e7 and |t| from 1e-8
to 1e3 (``tests/test_distributions.py``): the t CDF within 1e-13 relative up to df = 1000, tails included (up to
7e-13 between df = 1e4 and 1e5, where the continued fraction loses digits), and from df = 1e5 to 1e15 within
1e-15 (1 + t^2) of the exact value, down to 1e-300 (the tail is ~e^(-t^2 / 2): a rounding of t^2 / 2 moves it by
t^2 / 2 ulps, in any evaluation in floats; scipy's is as far); the quantile within 2e-12 relative (6e-15 from
df = 1e5 on, 2e-15 from df = 1e6 to 1e15, p from 1e-300).
Arguments are plain floats; a NaN argument, or df <= 0, gives NaN, as scipy.special does. The noncentral t is
``compare.noncentral_t``'s.
"""

from __future__ import annotations

import math

_EPSILON = 2.3e-16
"""The continued fraction stops when a step changes it by less than this (a float's resolution near 1)."""
_TINY = 1e-300
"""The modified Lentz method's stand-in for a zero denominator."""
_MAX_STEPS = 1_000_000
"""A bound on any loop here; the continued fraction takes O(sqrt(max(a, b))) steps, ~2,000 at df = 1e7."""
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
"""B_2k / (2k (2k - 1)), k = 1..7: the terms of log Gamma(x) beyond Stirling's formula (A&S 6.1.41)."""
_LARGE = 1000.0
"""From here on the continued fraction loses digits (~1e-13 at a = 500, ~1e-10 at a = 5e6, its odd steps
each the difference of two numbers near 1): where the power series converges fast, it is used instead."""
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


def normal_cdf(z: float) -> float:
    """P(Z <= z), Z standard normal: erf near 0, erfc in the tails (``NormalDist.cdf``'s 1 + erf loses the
    lower tail's digits)."""
    if abs(z) < 1.0:
        return 0.5 + 0.5 * math.erf(z / math.sqrt(2.0))
    tail = 0.5 * math.erfc(abs(z) / math.sqrt(2.0))
    return 1.0 - tail if z > 0 else tail


def normal_quantile(p: float) -> float:
    """The z with P(Z <= z) = p (Wichura's AS 241, through ``statistics.NormalDist``); -inf at 0, inf at 1."""
    from statistics import NormalDist

    if math.isnan(p) or not 0.0 <= p <= 1.0:
        return math.nan
    if p in (0.0, 1.0):
        return math.inf if p else -math.inf
    return NormalDist().inv_cdf(p)


def _stirling_remainder(x: float) -> float:
    """log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), for x >= 10 (A&S 6.1.41; the next term is < 1e-15)."""
    square = 1.0 / (x * x)
    total = 0.0
    for coefficient in reversed(_STIRLING):
        total = total * square + coefficient
    return total / x


def _log_gamma_ratio(a: float, b: float) -> float:
    """log Gamma(a) - log Gamma(a + b), for a >= 10 and b >= 0, without subtracting two large logarithms:
    -(a - 1/2) log(1 + b/a) - b log(a + b) + b + the difference of Stirling's remainders."""
    return (-(a - 0.5) * math.log1p(b / a) - b * math.log(a + b) + b
            + _stirling_remainder(a) - _stirling_remainder(a + b))


def log_beta(a: float, b: float) -> float:
    """log B(a, b) = log Gamma(a) + log Gamma(b) - log Gamma(a + b), for a, b > 0."""
    small, large = min(a, b), max(a, b)
    if large < 10.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    if small < 10.0:
        return math.lgamma(small) + _log_gamma_ratio(large, small)
    total = small + large
    # Stirling's formula for all three, its large terms gathered: (s - 1/2) log(s / T) - l log(1 + s/l) - log(l) / 2
    return (_HALF_LOG_TWO_PI - 0.5 * math.log(large) + (small - 0.5) * math.log(small / total)
            - large * math.log1p(small / large)
            + _stirling_remainder(small) + _stirling_remainder(large) - _stirling_remainder(total))


def _beta_fraction(a: float, b: float, x: float, y: float) -> float:
    """The continued fraction of I_x(a, b) (A&S 26.5.8), by the modified Lentz method (Numerical Recipes 5.2,
    ``betacf`` of 6.4): I_x(a, b) = x^a y^b / (a B(a, b)) times this, y = 1 - x. Converges fast for
    x < (a + 1) / (a + b + 2)."""
    both, above, below = a + b, a + 1.0, a - 1.0
    c = 1.0
    # its first denominator, 1 - (a + b) x / (a + 1), from y: near the bound above it is the difference of two
    # numbers near 1 (at df = 1e7, |t| = 1.8 it lost 9 digits)
    d = (1.0 - b + both * y) / above
    d = 1.0 / (d if abs(d) >= _TINY else _TINY)
    fraction = d
    for m in range(1, _MAX_STEPS):
        twice = 2 * m
        for numerator in (m * (b - m) * x / ((below + twice) * (a + twice)),  # the even step, then the odd
                          -(a + m) * (both + m) * x / ((a + twice) * (above + twice))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) >= _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) >= _TINY else _TINY
            step = d * c
            fraction *= step
        if abs(step - 1.0) <= _EPSILON:
            break
    return fraction


def _beta_series(a: float, b: float, x: float) -> float:
    """I_x(a, b) / (x^a (1 - x)^b / B(a, b)) by A&S 26.5.4: (1 + sum_n B(a + 1, n + 1) / B(a + b, n + 1) x^(n + 1)) / a,
    terms all positive, the (n + 1)th the nth times x (a + b + n + 1) / (a + n + 2). Where the continued fraction
    loses digits (a large, x (a + b) small: the t distribution's centre at df >= 1e5) this keeps them."""
    term = x * (a + b) / (a + 1.0)
    total = 1.0 + term
    for n in range(_MAX_STEPS):
        term *= x * (a + b + n + 1.0) / (a + n + 2.0)
        total += term
        if term <= 1e-17 * total:
            break
    return total / a


def incomplete_beta(a: float, b: float, x: float, y: float) -> tuple[float, float]:
    """The regularized incomplete beta function and its complement, (I_x(a, b), I_y(b, a)), for a, b > 0 and
    x + y = 1, both given: the one of the two the continued fraction converges for is computed, the other is
    1 minus it (A&S 26.5.2), so the smaller is never the difference of two numbers near 1 (x < 1/2 or so)."""
    if x <= 0.0:
        return (0.0, 1.0)
    if y <= 0.0:
        return (1.0, 0.0)
    # log(x) and log(y) through log1p of the other when near 1: y = 1 - x is known to more digits than x
    log_x = math.log1p(-y) if x > 0.5 else math.log(x)
    log_y = math.log1p(-x) if y > 0.5 else math.log(y)
    front = math.exp(a * log_x + b * log_y - log_beta(a, b))
    if a >= _LARGE and y * (a + b) <= 5.0:
        other = front * _beta_series(b, a, y)
        return (1.0 - other, other)
    if b >= _LARGE and x * (a + b) <= 5.0:
        direct = front * _beta_series(a, b, x)
        return (direct, 1.0 - direct)
    if x < (a + 1.0) / (a + b + 2.0):
        direct = front * _beta_fraction(a, b, x, y) / a
        return (direct, 1.0 - direct)
    other = front * _beta_fraction(b, a, y, x) / b
    return (1.0 - other, other)


def _t_parts(t: float, df: float) -> tuple[float, float]:
    """(df / (df + t^2), t^2 / (df + t^2)), each from its own ratio (neither 1 minus the other), t^2 never formed
    where it could overflow."""
    if t * (t / df) > 1.0:  # |t| > sqrt(df): by df / t^2
        r = (df / t) / t
        return (r / (1.0 + r), 1.0 / (1.0 + r))
    s = t * (t / df)
    return (1.0 / (1.0 + s), s / (1.0 + s))


def _t_halves(t: float, df: float) -> tuple[float, float]:
    """(P(T > |t|), P(0 < T < |t|)) for T ~ t(df): I_x(df/2, 1/2) / 2 and I_{1-x}(1/2, df/2) / 2 with
    x = df / (df + t^2) (A&S 26.7.1, 26.5.27). Where x would be a subnormal float (|t| > 1e140 sqrt(df)), the tail is
    its first term, df^(df/2 - 1) |t|^-df / B(df/2, 1/2), exact to the float there (the next is df / t^2 smaller).
    From df = 1e5 on, both are their expansions in incomplete gamma functions (``_t_halves_expanded``)."""
    if df >= _EXPANSION_DF:
        return _t_halves_expanded(t, df)
    if abs(t) > 1e140 * math.sqrt(df):
        beyond = math.exp((df / 2.0 - 1.0) * math.log(df) - df * math.log(abs(t)) - log_beta(df / 2.0, 0.5))
        return (beyond, 0.5 - beyond)
    x, y = _t_parts(t, df)
    beyond, within = incomplete_beta(df / 2.0, 0.5, x, y)
    return (0.5 * beyond, 0.5 * within)


_EXPANSION_DF = 1e5
"""From here on the t distribution is ``_t_halves_expanded``'s: the continued fraction of I_x(df/2, 1/2) takes
O(sqrt(df)) steps, each losing a little (7e-13 off at df = 1e5, 8e-8 at 1e10, 1e-2 at 1e15 where it stopped before
converging), while the expansion's fifth term is below 1e-20 of the first here. Below, the fraction is kept as it was
(within 1e-13 up to df = 1000)."""
_SINH_POWERS = (1.0, -1 / 48, 1 / 2560, -61 / 7741440, 1261 / 7431782400, -79 / 20761804800,
                66643 / 761775532277760, -16820653 / 8227175748599808000)
"""c_n in (sinh(z/2) / (z/2))^(-1/2) = sum_n c_n z^(2n): the power series of sinh(w) / w = sum_k w^(2k) / (2k + 1)!
raised to the power -1/2 (J. C. P. Miller's recurrence), w = z / 2. They shrink as (2 pi)^(-2n) (the nearest zero of
sinh(z/2) is z = 2 pi i)."""


def _t_halves_expanded(t: float, df: float) -> tuple[float, float]:
    """(P(T > |t|), P(0 < T < |t|)), T ~ t(df), for large df, by the expansion of I_x(a, b) for large a and small b
    (Temme; DiDonato and Morris, ACM TOMS 708, 1992, BGRAT) at b = 1/2, a = df/2, x = df / (df + t^2).

    With s = e^-z in the integral of I_x and T = a - 1/4: I_x(a, 1/2) = 1 / B(a, 1/2) int_z0^inf e^(-T z) z^(-1/2)
    g(z) dz, z0 = log(1 + t^2 / df), g(z) = (sinh(z/2) / (z/2))^(-1/2) = sum_n c_n z^(2n), and term by term
    P(T > |t|) = R / 2 sum_n c_n G_2n / T^(2n), G_m = Gamma(m + 1/2, u) / Gamma(1/2), u = T z0,
    R = Gamma(a + 1/2) / (Gamma(a) sqrt(T)) = 1 + O(a^-2); P(0 < T < |t|) the same with the lower incomplete gamma
    g_m = gamma(m + 1/2, u) / Gamma(1/2) (the integral from 0 to z0). G_0 = erfc(sqrt(u)), g_0 = erf(sqrt(u)), and
    G_(m+1) = (m + 1/2) G_m + u^(m + 1/2) e^-u / sqrt(pi), g_(m+1) = (m + 1/2) g_m - u^(m + 1/2) e^-u / sqrt(pi)
    (A&S 6.5.22). The nth term is about c_n max(z0, 2n / T)^(2n) of the first: below 1e-20 from the fifth on at
    df >= 1e5, where z0 <= 0.016 wherever the tail is a float (u <= 745; g <= 1 on the real line, so the tail is below
    e^-u: beyond u = 745, 0). g_m's recurrence subtracts, but what it loses is eps sqrt(u) (2n)! / T^(2n) of the
    centre's first term at most. The centre is 1/2 minus the tail once that is below 1/4 (no digit lost there)."""
    a = df / 2.0
    big_t = a - 0.25
    u = big_t * math.log1p(t * (t / df))
    if u > 745.0:  # NaN never reaches here: t_cdf refuses it
        return (0.0, 0.5)
    # log R = log Gamma(a + 1/2) - log Gamma(a) - log(T) / 2 from Stirling's series, its large terms cancelled by hand
    # (-_log_gamma_ratio(a, 1/2) - log(a - 1/4) / 2 would subtract two logarithms of a)
    log_ratio = ((a - 0.5) * math.log1p(0.5 / a) - 0.5 + 0.5 * math.log1p(0.75 / big_t)
                 - _stirling_remainder(a) + _stirling_remainder(a + 0.5))
    upper, lower = math.erfc(math.sqrt(u)), math.erf(math.sqrt(u))
    front = math.exp(-u) * math.sqrt(u / math.pi)  # u^(m + 1/2) e^-u / sqrt(pi), m = 0
    beyond, within, scale, shrink = upper, lower, 1.0, 1.0 / (big_t * big_t)
    for n in range(1, len(_SINH_POWERS)):
        for m in (2 * n - 2, 2 * n - 1):
            upper, lower = (m + 0.5) * upper + front, (m + 0.5) * lower - front
            front *= u
        scale *= shrink
        term = _SINH_POWERS[n] * scale
        beyond += term * upper
        within += term * lower
        if abs(term) * max(upper, abs(lower)) <= 1e-17 * min(beyond, within):
            break
    half = 0.5 * math.exp(log_ratio)
    beyond *= half
    return (beyond, 0.5 - beyond if beyond <= 0.25 else half * within)


def _bad(df: float, *values: float) -> bool:
    return math.isnan(df) or df <= 0.0 or any(math.isnan(value) for value in values)


def t_cdf(t: float, df: float) -> float:
    """P(T <= t), T ~ Student t with ``df`` degrees of freedom (``scipy.special.stdtr(df, t)``); df = inf is the
    normal distribution."""
    if _bad(df, t):
        return math.nan
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if math.isinf(df):
        return normal_cdf(t)
    beyond, within = _t_halves(t, df)
    if t < 0:
        return beyond
    return 0.5 + within if within < beyond else 1.0 - beyond


def _log_t_density(t: float, df: float) -> float:
    """log of t(df)'s density at t: (1 + t^2 / df)^-((df + 1)/2) / (sqrt(df) B(df/2, 1/2)), t^2 never formed."""
    if t * (t / df) > 1.0:
        log_spread = 2.0 * math.log(abs(t)) - math.log(df) + math.log1p((df / t) / t)
    else:
        log_spread = math.log1p(t * (t / df))
    return -(df + 1.0) / 2.0 * log_spread - 0.5 * math.log(df) - log_beta(df / 2.0, 0.5)


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p, T ~ Student t with ``df`` degrees of freedom (``scipy.special.stdtrit(df, p)``);
    -inf at p = 0 and inf at p = 1.

    Solved for |t| on the side that keeps p's digits: P(0 < T < |t|) = |p - 1/2| for p in [1/4, 3/4] (exact
    in floats there), P(T > |t|) = min(p, 1 - p) otherwise, by Newton's method on log P as a function of log |t|
    (nearly straight for both: log P(T > t) ~ -df log t far out), inside a bracket that every evaluation narrows,
    by bisection (in log |t|) when a step would leave it. The tail's bracket: the normal quantile below (t's tail
    is heavier), from Hastings' approximation (A&S 26.2.23, within 4.5e-4: ``statistics`` costs a first comparison
    ~4 ms of imports for nothing more), and the quantile of its power-law bound above (P(T > t) <= c t^-df / df,
    c t^-(df+1) bounding the density); the start, the normal quantile's first correction z + (z^3 + z) / (4 df)
    (A&S 26.7.5). From df = 1e6 on, that expansion to its fifth term (``_t_quantile_expanded``)."""
    if _bad(df, p) or not 0.0 <= p <= 1.0:
        return math.nan
    if p in (0.0, 1.0):
        return math.inf if p else -math.inf
    if p == 0.5:
        return 0.0
    if math.isinf(df):
        return normal_quantile(p)
    if df >= _CORNISH_FISHER_DF:
        return _t_quantile_expanded(p, df)
    central = 0.25 <= p <= 0.75
    target = abs(p - 0.5) if central else min(p, 1.0 - p)
    log_density_scale = -0.5 * math.log(df) - log_beta(df / 2.0, 0.5)  # log of the density at 0
    if central:
        low = start = target / math.exp(log_density_scale)  # P(0 < T < t) <= t x density(0)
        high = max(2.0 * low, 1.0)
        while _t_halves(high, df)[1] < target:
            high *= 2.0
    else:
        w = math.sqrt(-2.0 * math.log(target))
        z = w - (2.515517 + w * (0.802853 + w * 0.010328)) / (1.0 + w * (1.432788 + w * (0.189269 + w * 0.001308)))
        low = max(0.6744, z - 5e-4)  # the normal quantile of 3/4 and above: target <= 1/4
        log_high = (log_density_scale + (df - 1.0) / 2.0 * math.log(df) - math.log(target)) / df
        high = math.exp(min(log_high + 0.01, 709.0))
        while high < math.inf and _t_halves(high, df)[0] > target:
            high *= 2.0
        start = z + (z ** 3 + z) / (4.0 * df)
    magnitude = _newton_in_log(df, target, central, low, high, start)
    return magnitude if p > 0.5 else -magnitude


_CORNISH_FISHER_DF = 1e6
"""From here on the t quantile is the normal quantile's Cornish-Fisher expansion, not the inverse of the t CDF: the
CDF's continued fraction loses digits as df grows (the quantile was 7e-9 off at df = 1e10), while the expansion's
fifth term is below 1e-17 of the quantile down to p = 1e-300 (|z| = 37: z^2 / df < 1.4e-3)."""


def _t_quantile_expanded(p: float, df: float) -> float:
    """t(p; df) = z + g1(z) / df + g2(z) / df^2 + g3(z) / df^3 + g4(z) / df^4, z the normal quantile of p (A&S
    26.7.5), from the lower tail: 1 - p is exact for p >= 1/2, so the upper quantile is the lower one negated."""
    z = normal_quantile(min(p, 1.0 - p))
    z2 = z * z
    terms = ((z2 + 1.0) / 4.0, ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0, (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0)
             / 384.0, ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0)
    correction = 0.0
    for term in reversed(terms):
        correction = (correction + term) / df
    t = z * (1.0 + correction)
    return t if p < 0.5 else -t


def _newton_in_log(df: float, target: float, central: bool, low: float, high: float, start: float) -> float:
    """The root t in [low, high] of P(t) = target, P the central half (increasing) or the tail (decreasing), from
    ``start``."""
    t = start if low <= start <= high else math.sqrt(low) * math.sqrt(high)
    log_target = math.log(target)
    for _ in range(_MAX_STEPS):
        beyond, within = _t_halves(t, df)
        value = within if central else beyond
        if value == target:
            return t
        too_far = (value > target) if central else (value < target)
        if too_far:
            high = t
        else:
            low = t
        following = math.nan
        if value > 0.0:
            # d log P / d log t = +-t density(t) / P, in logarithms: far out the density alone underflows
            slope = math.exp(math.log(t) + _log_t_density(t, df) - math.log(value))
            if 0.0 < slope < math.inf:
                following = t * math.exp(min(700.0, (log_target - math.log(value)) / (slope if central else -slope)))
                if abs(following - t) <= 4e-16 * t:
                    return following
        if not low < following < high:  # NaN included
            following = math.sqrt(low) * math.sqrt(high) if low > 0 else high / 2
            if following in (low, high):
                return following
        t = following
    return t
