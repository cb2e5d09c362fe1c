"""Paired statistics of ``trec_rag_eval.compare``, checked against scipy, hand arithmetic and simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from trec_rag_eval.compare import compare_values
from trec_rag_eval.compare.stats import (
    adjust_p_values,
    bootstrap_interval,
    effect_size,
    minimum_detectable_delta,
    paired_t_test,
    randomization_test,
    root_of_increasing,
    wins_ties_losses,
)
from trec_rag_eval.errors import UsageError
from trec_rag_eval.render.comparison import comparison_dict, verdict


def _pair(seed: int, n: int = 30, shift: float = 0.03, noise: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 1, n)
    return a, np.clip(a + rng.normal(shift, noise, n), 0, 1)


# --- paired t-test ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_t_test_p_value_equals_scipy_ttest_rel(seed: int) -> None:
    a, b = _pair(seed)
    assert paired_t_test(a, b) == pytest.approx(scipy_stats.ttest_rel(b, a).pvalue, rel=1e-12)


def test_comparison_t_test_raw_p_values_equal_scipy_for_every_measure_and_run() -> None:
    a, b = _pair(10)
    _, c = _pair(11)
    values = {"A": {"m1": a, "m2": a**2}, "B": {"m1": b, "m2": b**2}, "C": {"m1": c, "m2": c**2}}
    comparison = compare_values(values, [f"q{i}" for i in range(30)], correction="none")
    for pair in comparison.pairs:
        base = values["A"][pair.measure]
        run = values[pair.run][pair.measure]
        expected = scipy_stats.ttest_rel(run, base).pvalue
        assert pair.p_value == pytest.approx(expected, rel=1e-12)
        assert pair.p_adjusted == pair.p_value


def test_t_test_degenerate_differences() -> None:
    a = np.array([0.1, 0.5, 0.9])
    assert paired_t_test(a, a) == 1.0  # identical runs: nothing to detect
    assert paired_t_test(a, a + 0.1) == 0.0  # better by the same amount on every query


# --- randomization test ----------------------------------------------------------------------
def _exact_sign_flip_p(a: np.ndarray, b: np.ndarray) -> float:
    """Enumerate all 2**n sign flips of the paired differences: P(|mean| >= |observed mean|)."""
    diff = b - a
    observed = abs(diff.mean())
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=diff.size):
        total += 1
        if abs((diff * np.array(signs)).mean()) >= observed - 1e-12:
            hits += 1
    return hits / total


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_randomization_p_value_within_monte_carlo_error_of_exact_enumeration(seed: int) -> None:
    a, b = _pair(seed, n=10, shift=0.05, noise=0.1)
    exact = _exact_sign_flip_p(a, b)
    n_resamples = 999  # below 2**10, so scipy samples instead of enumerating
    p = randomization_test(a, b, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    standard_error = math.sqrt(exact * (1 - exact) / n_resamples)
    # 4 standard errors, plus the (hits + 1) / (n + 1) offset of a sampled p-value.
    assert abs(p - exact) <= 4 * standard_error + 1 / (n_resamples + 1)
    assert 0 < exact < 1


def test_randomization_test_is_exact_when_resamples_cover_every_flip() -> None:
    a, b = _pair(6, n=10, shift=0.04, noise=0.1)
    p = randomization_test(a, b, n_resamples=2**10, rng=np.random.default_rng(0))
    assert p == pytest.approx(_exact_sign_flip_p(a, b), abs=1e-12)


def test_randomization_test_identical_runs() -> None:
    a = np.linspace(0, 1, 12)
    assert randomization_test(a, a, rng=np.random.default_rng(0)) == 1.0


# --- corrections -----------------------------------------------------------------------------
def test_holm_by_hand() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert adjust_p_values([0.01, 0.04, 0.03, 0.005], "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_keeps_order() -> None:
    # 0.5*2 = 1.0; 0.6*1 = 0.6 -> running max 1.0
    assert adjust_p_values([0.6, 0.5], "holm") == pytest.approx([1.0, 1.0])


def test_bonferroni_by_hand_and_none() -> None:
    assert adjust_p_values([0.01, 0.04, 0.03, 0.005], "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert adjust_p_values([0.3, 0.6], "bonferroni") == pytest.approx([0.6, 1.0])
    assert adjust_p_values([0.01, 0.04], "none") == [0.01, 0.04]


def test_holm_family_is_every_measure_and_run() -> None:
    a, b = _pair(20, shift=0.05)
    _, c = _pair(21, shift=-0.02)
    values = {"A": {"x": a, "y": a / 2}, "B": {"x": b, "y": b / 2}, "C": {"x": c, "y": 1 - c}}
    comparison = compare_values(values, [str(i) for i in range(30)], correction="holm")
    raw = [p.p_value for p in comparison.pairs]
    assert len(raw) == 4
    order = sorted(range(4), key=lambda i: raw[i])
    expected = [0.0] * 4
    running = 0.0
    for rank, index in enumerate(order):  # Holm written out again: p_(i) * (m - i), running max, cap 1
        running = max(running, min(1.0, raw[index] * (4 - rank)))
        expected[index] = running
    assert [p.p_adjusted for p in comparison.pairs] == pytest.approx(expected, rel=1e-12)


# --- bootstrap interval ----------------------------------------------------------------------
def test_bootstrap_interval_covers_true_delta_at_about_nominal_rate() -> None:
    rng = np.random.default_rng(2024)
    true_delta = 0.05
    covered = 0
    trials = 200
    for _ in range(trials):
        a = rng.uniform(0, 1, 30)
        # skewed differences with mean exactly true_delta: exponential(0.1) - 0.1 + true_delta
        b = a + rng.exponential(0.1, 30) - 0.1 + true_delta
        low, high = bootstrap_interval(a, b, confidence=0.95, n_resamples=2000, rng=rng)
        covered += low <= true_delta <= high
    assert 0.88 <= covered / trials <= 0.99


def test_bootstrap_interval_of_constant_difference_is_that_value() -> None:
    a = np.array([0.2, 0.4, 0.6, 0.8])
    assert bootstrap_interval(a, a + 0.25, rng=np.random.default_rng(0)) == pytest.approx((0.25, 0.25))


def test_bootstrap_interval_brackets_the_mean() -> None:
    a, b = _pair(8)
    low, high = bootstrap_interval(a, b, rng=np.random.default_rng(0))
    assert low < float(np.mean(b - a)) < high


# --- effect size, wins/ties/losses, detectable delta -----------------------------------------
def test_effect_size_by_hand() -> None:
    a = np.array([0.0, 0.0, 0.0, 0.0])
    b = np.array([0.1, 0.2, 0.3, 0.4])
    # mean 0.25, sd (ddof 1) = sqrt(((.15)^2 + (.05)^2) * 2 / 3) = sqrt(0.05/3)
    assert effect_size(a, b) == pytest.approx(0.25 / math.sqrt(0.05 / 3))
    assert math.isnan(effect_size(a, a))


def test_wins_ties_losses_by_hand() -> None:
    a = np.array([0.5, 0.5, 0.5, 0.5, 0.1])
    b = np.array([0.6, 0.5, 0.4, 0.5 + 1e-15, 0.9])
    assert wins_ties_losses(a, b) == (2, 2, 1)


def test_minimum_detectable_delta_matches_the_textbook_figure() -> None:
    # G*Power / Cohen: a paired t-test on 30 pairs at alpha 0.05 (two-sided) and power 0.8
    # detects an effect of d = 0.529 (n = 34 for d = 0.5).
    d = np.random.default_rng(1).normal(0, 1, 30)
    d = (d - d.mean()) / d.std(ddof=1)  # sd exactly 1
    assert minimum_detectable_delta(np.zeros(30), d) == pytest.approx(0.529, abs=0.001)
    d34 = np.random.default_rng(1).normal(0, 1, 34)
    d34 = (d34 - d34.mean()) / d34.std(ddof=1) * 0.2
    assert 0.2 * 0.49 < minimum_detectable_delta(np.zeros(34), d34) < 0.2 * 0.50


def test_minimum_detectable_delta_has_the_stated_power_by_simulation() -> None:
    rng = np.random.default_rng(7)
    n, sd = 30, 0.12
    base = np.zeros(n)
    spread = rng.normal(0, 1, n)
    mdd = minimum_detectable_delta(base, spread / spread.std(ddof=1) * sd)
    rejections = 0
    trials = 2000
    for _ in range(trials):
        diff = rng.normal(mdd, sd, n)
        rejections += scipy_stats.ttest_rel(diff, np.zeros(n)).pvalue < 0.05
    assert abs(rejections / trials - 0.8) < 0.035


@pytest.mark.parametrize("n", [2, 3, 8, 30, 500])
@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5), (0.2, 0.99)])
def test_minimum_detectable_delta_solves_the_noncentral_t_power_as_scipy_optimize_does(n, alpha, power) -> None:
    # the power of the two-sided paired t-test at noncentrality nc, P(|T| > t_crit) with T ~ nct(n - 1, nc), set
    # equal to ``power`` and solved by scipy's own brentq on scipy.stats' distributions: the same delta
    from scipy import optimize

    diff = np.random.default_rng(n).normal(0, 1, n)
    sd = float(np.std(diff, ddof=1))
    t_crit = scipy_stats.t.ppf(1 - alpha / 2, n - 1)

    def shortfall(nc: float) -> float:
        # the far tail (below 1e-10 wherever it matters) is NaN in scipy.stats out there: counted as 0
        lower = float(np.nan_to_num(scipy_stats.nct.cdf(-t_crit, n - 1, nc)))
        return float(scipy_stats.nct.sf(t_crit, n - 1, nc)) + lower - power

    high = t_crit + 4.0
    while shortfall(high) < 0:
        high *= 2
    expected = optimize.brentq(shortfall, 0.0, high, xtol=1e-12) * sd / math.sqrt(n)
    assert minimum_detectable_delta(np.zeros(n), diff, alpha, power) == pytest.approx(expected, rel=1e-9)


def test_a_small_comparison_imports_neither_scipy_stats_nor_scipy_optimize() -> None:
    # scipy.stats costs a first comparison about a second of imports; the t-test, its interval and the MDD need
    # the distributions of compare.distributions alone (tests/test_imports.py: no scipy at all)
    import subprocess
    import sys

    code = ("import sys, trec_rag_eval as tre\n"
            "q = {'1': {'a': 1, 'b': 0}, '2': {'c': 2}, '3': {'d': 1}}\n"
            "runs = {'x': {'1': {'a': 2.0, 'b': 1.0}, '2': {'c': 1.0, 'e': 3.0}, '3': {'d': 1.0}},\n"
            "        'y': {'1': {'a': 1.0, 'b': 2.0}, '2': {'c': 3.0, 'e': 1.0}, '3': {'f': 1.0}}}\n"
            "str(tre.compare(q, runs, 'nDCG@10'))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('scipy.stats', 'scipy.optimize'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(("function", "low", "high", "root"), [
    (lambda x: x ** 3 - 2, 0.0, 10.0, 2 ** (1 / 3)),
    (lambda x: math.tanh(50 * (x - 0.3)), 0.0, 1.0, 0.3),  # flat at both ends, steep at the root
    (lambda x: math.expm1(x) - 1e-9, -5.0, 700.0, math.log1p(1e-9)),  # one end's value huge
    (lambda x: x - 1.0, 1.0, 2.0, 1.0),  # the root at an end
])
def test_root_of_increasing_brackets_the_root_to_its_tolerance_in_few_evaluations(function, low, high, root) -> None:
    calls = []

    def counted(x: float) -> float:
        calls.append(x)
        return function(x)

    assert abs(root_of_increasing(counted, low, high) - root) <= 1e-10
    assert len(calls) < math.log2((high - low) / 1e-10)  # fewer than bisection's


def test_minimum_detectable_delta_edges() -> None:
    assert math.isnan(minimum_detectable_delta(np.array([0.1]), np.array([0.2])))
    assert math.isnan(minimum_detectable_delta(np.zeros(5), np.full(5, 0.1)))


# --- compare_values: seeds, verdict, validation ----------------------------------------------
def _three_runs() -> tuple[dict[str, dict[str, np.ndarray]], list[str]]:
    a, b = _pair(30, shift=0.08, noise=0.05)
    _, c = _pair(31, shift=0.0, noise=0.1)
    return {"A": {"nDCG@10": a}, "B": {"nDCG@10": b}, "C": {"nDCG@10": c}}, [f"q{i}" for i in range(30)]


def test_same_seed_same_numbers_and_pairs_do_not_depend_on_each_other() -> None:
    values, queries = _three_runs()
    first = compare_values(values, queries, test="randomization", n_resamples=500, seed=5)
    again = compare_values(values, queries, test="randomization", n_resamples=500, seed=5)
    assert comparison_dict(first) == comparison_dict(again)
    alone = compare_values(
        {k: values[k] for k in ("A", "B")}, queries, test="randomization", n_resamples=500, seed=5
    )
    assert alone.pairs[0].p_value == first.pair("nDCG@10", "B").p_value
    assert (alone.pairs[0].ci_low, alone.pairs[0].ci_high) == (first.pairs[0].ci_low, first.pairs[0].ci_high)


def test_verdict_line_in_the_issue_style() -> None:
    values, queries = _three_runs()
    comparison = compare_values(values, queries, n_resamples=2000)
    pair = comparison.pair("nDCG@10", "B")
    raw = scipy_stats.ttest_rel(values["B"]["nDCG@10"], values["A"]["nDCG@10"]).pvalue
    assert pair.significant and raw < 0.001
    assert verdict(comparison, pair) == (
        f"B better: {pair.delta:+.3f}, p < 0.001 after Holm over 2 comparisons (p < 0.001 uncorrected), "
        f"95% CI [{pair.ci_low:+.3f}, {pair.ci_high:+.3f}]"
    )
    noise = comparison.pair("nDCG@10", "C")
    assert not noise.significant
    assert verdict(comparison, noise) == (
        f"C vs A: not significant after Holm over 2 comparisons (p = {noise.p_value:.3f} uncorrected), "
        f"{noise.delta:+.3f}, 95% CI [{noise.ci_low:+.3f}, {noise.ci_high:+.3f}]; this query set detects about "
        f"{noise.min_detectable_delta:.3f}"
    )


def test_baseline_option_and_delta_sign() -> None:
    values, queries = _three_runs()
    comparison = compare_values(values, queries, baseline="B", n_resamples=200)
    assert comparison.others == ["A", "C"]
    pair = comparison.pair("nDCG@10", "A")
    assert pair.delta == pytest.approx(float(np.mean(values["A"]["nDCG@10"] - values["B"]["nDCG@10"])))
    assert pair.direction == "worse"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": "Z"}, "baseline 'Z' is not one of the runs: A, B, C"),
        ({"test": "wilcoxon"}, "unknown test 'wilcoxon'; expected one of t, randomization"),
        ({"correction": "fdr"}, "unknown correction 'fdr'; expected one of holm, bonferroni, none"),
        ({"alpha": 1.5}, "alpha must be between 0 and 1, got 1.5"),
    ],
)
def test_usage_errors(kwargs: dict[str, object], message: str) -> None:
    values, queries = _three_runs()
    with pytest.raises(UsageError) as err:
        compare_values(values, queries, **kwargs)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_needs_two_runs_and_aligned_arrays() -> None:
    with pytest.raises(UsageError, match="at least two runs, got 1"):
        compare_values({"A": {"m": [0.1, 0.2]}}, ["q1", "q2"])
    with pytest.raises(
        UsageError, match=r"run 'B', measure 'm': expected 2 per-query values, got shape \(3,\)"
    ):
        compare_values({"A": {"m": [0.1, 0.2]}, "B": {"m": [0.1, 0.2, 0.3]}}, ["q1", "q2"])
