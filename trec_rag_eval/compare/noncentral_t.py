"""The noncentral t distribution's CDF, in plain Python floats (see ``compare.distributions`` for why not scipy's).

* the noncentral t CDF as the Poisson-weighted sum of incomplete beta functions (A&S 26.7.10's series, in Lenth's
  form, Applied Statistics algorithm AS 243, 1989), summed outward from the largest Poisson weight as Benton and
  Krishnamoorthy do (Computational Statistics & Data Analysis 43, 2003), the weights from Loader's
  deviance form ("Fast and accurate computation of binomial probabilities", 2000);
* from df = 1e5 on, the normal CDF mixed over the chi distribution, E[Phi(t S - delta)], S = chi_df / sqrt(df), by
  the trapezoid rule.

Accuracy against scipy.special (``tests/test_distributions.py``): within 2e-13 absolute up to df = 1000 and
|delta| = 100 (5e-13 at df = 1e5; the power of a test needs no more), 1e-14 beyond |delta| = 100 (to 1e8, where
scipy's is 1e-8 off or NaN); from df = 1e5 to 1e15 within 2e-15 of mpmath's (and of the expansion in 1/df where
that holds), where scipy's is up to 4e-9 off (df = 1e7 to 1e9). Arguments are plain floats; a NaN argument, or
df <= 0, gives NaN, as scipy.special does.
"""

from __future__ import annotations

import math

from trec_rag_eval.compare.distributions import (
    _EPSILON,
    _MAX_STEPS,
    _TINY,
    _bad,
    _log_gamma_ratio,
    _stirling_remainder,
    _t_parts,
    incomplete_beta,
    log_beta,
    normal_cdf,
    t_cdf,
)


def _log_poisson(k: float, mean: float) -> float:
    """log(e^-mean mean^k / Gamma(k + 1)), k an integer (or any real from 10 on), by Loader's deviance form from
    k = 10 on: -bd0(k, mean) - log(2 pi k)/2 - the Stirling remainder of k! (no two large logarithms subtracted)."""
    if k < 10:
        return -mean + (k * math.log(mean) if k else 0.0) - math.lgamma(k + 1.0)
    difference = k - mean
    if abs(difference) < 0.1 * (k + mean):  # k log(k / mean) + mean - k by the series of log((1 + v) / (1 - v))
        v = difference / (k + mean)
        deviance = difference * v
        power = 2.0 * k * v
        for j in range(1, _MAX_STEPS):
            power *= v * v
            following = deviance + power / (2 * j + 1)
            if following == deviance:
                break
            deviance = following
    else:
        deviance = k * math.log(k / mean) + mean - k
    return -deviance - 0.5 * math.log(2 * math.pi * k) - _stirling_remainder(k)


def noncentral_t_cdf(t: float, df: float, noncentrality: float) -> float:
    """P(T <= t), T ~ noncentral t with ``df`` degrees of freedom and noncentrality delta
    (``scipy.special.nctdtr(df, delta, t)``).

    For t >= 0 (A&S 26.7.10, Lenth's AS 243): Phi(-delta) + 1/2 sum_j (p_j I_x(j + 1/2, df/2) + q_j I_x(j + 1,
    df/2)), x = t^2 / (df + t^2), p_j = e^-h h^j / j!, q_j = delta e^-h h^j / (sqrt(2) Gamma(j + 3/2)),
    h = delta^2 / 2; for t < 0, 1 - P(T' <= -t) with T' of noncentrality -delta. Beyond |delta| = 100, the integral
    over Z of the chi distribution's tail instead (``_noncentral_t_far``). The sum starts at j = floor(h)
    (the largest weight) and goes both ways, each I from its neighbour (I_x(a + 1, b) = I_x(a, b) -
    x^a (1 - x)^b / (a B(a, b))), until what is left is below 1e-17 of the sum (Benton & Krishnamoorthy 2003).
    Absolute error ~1e-16: what a power needs; a CDF far below that (t < 0 far from delta) is not relatively
    accurate. From df = 1e5 on (and |t| below 57 sqrt(df)), the mixture over S instead (``_noncentral_t_mixture``)."""
    if _bad(df, t, noncentrality):
        return math.nan
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if math.isinf(df):
        return normal_cdf(t - noncentrality)
    if noncentrality == 0.0:
        return t_cdf(t, df)
    if df >= _MIXTURE_DF and abs(t) * _mixture_spread(df) <= _MIXTURE_SPREAD:
        return _noncentral_t_mixture(t, df, noncentrality)
    if t < 0:
        return 1.0 - _noncentral_t_nonnegative(-t, df, -noncentrality)
    return _noncentral_t_nonnegative(t, df, noncentrality)


_MIXTURE_DF = 1e5
"""From here on the noncentral t is ``_noncentral_t_mixture``'s: the Poisson series' incomplete betas lose digits as df
grows (3e-11 at df = 1e7, 2e-9 at 1e10, where a call took 0.2 s; at 1e15 it did not end), while S = chi_df / sqrt(df)
narrows to a normal of sd 1 / sqrt(2 df) that a few dozen points integrate."""
_MIXTURE_SPREAD = 40.0
"""The mixture's bound on |t| / sqrt(2 (df - 1)), how fast Phi(t S - delta) turns over S's spread: its step is
1/4 of that turn, so 3,000 points at most; beyond (|t| > 57 sqrt(df)), the series as below df = 1e5."""


def _mixture_spread(df: float) -> float:
    """sqrt((df - 1) / df) / sqrt(2 (df - 1)) = 1 / sqrt(2 df): S's sd, times t the spread of t S."""
    return 1.0 / math.sqrt(2.0 * df)


def _log1p_beyond_square(e: float) -> float:
    """log(1 + e) - e + e^2 / 2 = e^3 / 3 - e^4 / 4 + ..., for |e| <= 0.03 (the terms beyond e^15 are below 1e-23
    of the first): log1p's difference with e - e^2 / 2 would keep only the digits of e^3 that e^2 leaves."""
    total, power = 0.0, e * e
    for k in range(3, 16):
        power *= -e
        total -= power / k
    return total


def _noncentral_t_mixture(t: float, df: float, delta: float) -> float:
    """P(T <= t) for large df, as the normal CDF mixed over the chi distribution: T = (Z + delta) / S, S =
    chi_df / sqrt(df), so P(T <= t) = E[Phi(t S - delta)], S's density c s^(df - 1) e^(-df s^2 / 2). With s = s0
    (1 + e), s0^2 = (df - 1) / df its mode, and e = x / sqrt(2 (df - 1)), the density in x is proportional to
    exp(-x^2 / 2 + (df - 1) (log(1 + e) - e + e^2 / 2)): a standard normal's, bent by O(x^3 / sqrt(df)). The trapezoid
    rule over |x| <= 9.5 (the density beyond is below e^-45) with weights normalised by their own sum (c never
    computed) is exact to the float for a smooth integrand against such a density (Trefethen and Weideman, SIAM
    Review 56, 2014): step 1/4, or 1/4 of Phi's turn, 1 / (|t| s0 / sqrt(2 (df - 1))), when that is shorter. Both
    tails directly (no 1 - P): absolute error ~1e-15, and relative in the lower tail."""
    m = df - 1.0
    scale = 1.0 / math.sqrt(2.0 * m)  # e per unit of x
    mode = math.sqrt(m / df)
    turn = abs(t) * mode * scale
    step = 0.25 if turn <= 1.0 else 0.25 / turn
    count = int(9.5 / step) + 1
    total = weights = 0.0
    for i in range(-count, count + 1):
        x = i * step
        e = x * scale
        weight = math.exp(-0.5 * x * x + m * _log1p_beyond_square(e))
        total += weight * normal_cdf(t * mode * (1.0 + e) - delta)
        weights += weight
    return total / weights


def _gamma_upper(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) = Gamma(a, x) / Gamma(a), for a, x > 0: its series
    (A&S 6.5.29) below x = a + 1, its continued fraction (A&S 6.5.31, by the modified Lentz method: Numerical Recipes
    6.2's ``gcf``) above; the front x^a e^-x / Gamma(a) by Loader's deviance form from a = 10 on (``_log_poisson``)."""
    if x == 0.0 or x == math.inf:
        return 1.0 if x == 0.0 else 0.0
    log_front = math.log(a) + _log_poisson(a, x) if a >= 10.0 else a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        for n in range(1, _MAX_STEPS):
            term *= x / (a + n)
            total += term
            if term <= 1e-17 * total:
                break
        return max(0.0, 1.0 - math.exp(log_front) * total)
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    fraction = d
    for n in range(1, _MAX_STEPS):
        numerator = -n * (n - a)
        b += 2.0
        d = numerator * d + b
        d = 1.0 / (d if abs(d) >= _TINY else _TINY)
        c = b + numerator / c
        c = c if abs(c) >= _TINY else _TINY
        step = d * c
        fraction *= step
        if abs(step - 1.0) <= _EPSILON:
            break
    return min(1.0, math.exp(log_front) * fraction)


_SERIES_NONCENTRALITY = 100.0
"""Beyond this |delta| the noncentral t is the integral over Z: the Poisson series needs ~10 sqrt(delta^2 / 2) terms
each way (10^9 at delta = 10^8, the detectable delta of two queries at alpha = 1e-8), and loses digits (1e-12 at
delta = 600, 7e-11 at df = 1e7) where the integral keeps 1e-14."""
_Z_STEP = 0.125
"""The trapezoidal rule's step over the standard normal's z: for a smooth integrand against the normal density its
error falls as exp(-2 pi^2 / step^2) (Trefethen and Weideman, SIAM Review 56, 2014), 1e-300 and below here."""


def _noncentral_t_far(t: float, df: float, delta: float) -> float:
    """P(T <= t) for t >= 0 and |delta| > 40, as the integral over Z of P(chi_df / sqrt(df) >= (Z + delta) / t)
    (T = (Z + delta) / (chi_df / sqrt(df))): Q(df / 2, df (z + delta)^2 / (2 t^2)) against the normal density, by
    the trapezoidal rule over |z| <= 38.5 (the density beyond is below 1e-322). Below delta = -40, Z + delta < 0
    <= t S but for a chance below 1e-300: 1."""
    if delta < 0.0:
        return 1.0
    if t == 0.0:
        return 0.0
    a = df / 2.0
    # Q(a, x(z)) turns from 1 to 0 over some delta / sqrt(df) of z: ten steps over that at least
    step = min(_Z_STEP, delta / math.sqrt(df) / 10.0)
    count = int(38.5 / step) + 1
    total = 0.0
    for i in range(-count, count + 1):
        z = i * step
        weight = math.exp(-0.5 * z * z)
        if weight == 0.0:
            continue
        ratio = (z + delta) / t
        total += weight * _gamma_upper(a, a * ratio * ratio)
    return min(1.0, max(0.0, total * step / math.sqrt(2.0 * math.pi)))


def _noncentral_t_nonnegative(t: float, df: float, delta: float) -> float:
    if abs(delta) > _SERIES_NONCENTRALITY:
        return _noncentral_t_far(t, df, delta)
    base = normal_cdf(-delta)
    y, x = _t_parts(t, df)  # x = t^2 / (df + t^2), y = 1 - x
    if x == 0.0 or y == 0.0:  # every I_x(a, b) is 0 (t = 0, or t^2 / df below the smallest float) or 1 (t^2 huge)
        return base if x == 0.0 else 1.0
    b = df / 2.0
    half = delta * delta / 2.0
    k = int(half)
    p_weight = math.exp(_log_poisson(k, half))
    ratio = (math.lgamma(k + 1.0) - math.lgamma(k + 1.5)) if k + 1 < 10 else _log_gamma_ratio(k + 1.0, 0.5)
    q_weight = math.copysign(math.exp(math.log(p_weight) + math.log(abs(delta) / math.sqrt(2.0)) + ratio)
                             if p_weight > 0 else 0.0, delta)
    a_p, a_q = k + 0.5, k + 1.0
    i_p, i_q = incomplete_beta(a_p, b, x, y)[0], incomplete_beta(a_q, b, x, y)[0]
    log_x = math.log1p(-y) if x > 0.5 else math.log(x)
    log_y = math.log1p(-x) if y > 0.5 else math.log(y)

    def step_of(a: float) -> float:  # I_x(a, b) - I_x(a + 1, b) = x^a y^b / (a B(a, b))
        return math.exp(a * log_x + b * log_y - math.log(a) - log_beta(a, b))

    g_p, g_q = step_of(a_p), step_of(a_q)
    total = 0.0
    # forward: j = k, k + 1, ...
    weight_p, weight_q, beyond_p, beyond_q, gap_p, gap_q = p_weight, q_weight, i_p, i_q, g_p, g_q
    for j in range(k, k + _MAX_STEPS):
        total += weight_p * beyond_p + weight_q * beyond_q
        shrink = half / (j + 1.0)  # the weights' ratio from here on is at most this
        if shrink < 1.0:
            left = (weight_p + abs(weight_q)) * beyond_p * shrink / (1.0 - shrink)
            if left <= 1e-17 * abs(base + 0.5 * total) or left < 1e-300:
                break
        beyond_p, beyond_q = max(0.0, beyond_p - gap_p), max(0.0, beyond_q - gap_q)
        gap_p *= x * (j + 0.5 + b) / (j + 1.5)
        gap_q *= x * (j + 1.0 + b) / (j + 2.0)
        weight_p *= half / (j + 1.0)
        weight_q *= half / (j + 1.5)
    # backward: j = k - 1, ..., 0
    weight_p, weight_q, beyond_p, beyond_q, gap_p, gap_q = p_weight, q_weight, i_p, i_q, g_p, g_q
    for j in range(k - 1, -1, -1):
        gap_p *= (j + 1.5) / (x * (j + 0.5 + b))
        gap_q *= (j + 2.0) / (x * (j + 1.0 + b))
        beyond_p, beyond_q = beyond_p + gap_p, beyond_q + gap_q
        weight_p *= (j + 1.0) / half
        weight_q *= (j + 1.5) / half
        total += weight_p * beyond_p + weight_q * beyond_q
        shrink = (j + 0.5) / half  # the weights' ratio further down is at most this; I_x is at most 1
        if (weight_p + abs(weight_q)) * shrink / (1.0 - shrink) <= 1e-17 * abs(base + 0.5 * total):
            break
    return min(1.0, max(0.0, base + 0.5 * total))
