"""Topic set size design (``plan``): the query counts against statsmodels and against hand computations from
the noncentral t, F and studentized range distributions, the variance's interval, the inverse (the delta a
number of queries detects), and the plan's refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import first_by_default
from scipy import stats

from trec_rag_eval.compare import sample_size
from trec_rag_eval.compare.planning import plan_values
from trec_rag_eval.errors import TrecRagEvalWarning, UsageError
from trec_rag_eval.render.planning import plan_verdicts

statsmodels_power = pytest.importorskip("statsmodels.stats.power")


def pilot(seed: int, runs: int, queries: int, shift: float = 0.03,
          spread: float = 0.2) -> dict[str, dict[str, np.ndarray]]:
    """A seeded pilot: per-query values in [0, 1] of ``runs`` runs, each a little better than the last."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.9, queries)
    return {f"run{r}": {"nDCG@10": np.clip(base + r * shift + rng.normal(0, spread, queries), 0, 1)}
            for r in range(runs)}


def ids(n: int) -> list[str]:
    return [f"q{i}" for i in range(n)]


# --- two runs: the paired t-test, against statsmodels' TTestPower ---------------------------------------------
CASES = [(seed, queries, delta, alpha, power) for seed, (queries, delta, alpha, power) in enumerate([
    (8, 0.02, 0.05, 0.8), (30, 0.05, 0.05, 0.8), (12, 0.1, 0.01, 0.9), (50, 0.03, 0.1, 0.7), (5, 0.2, 0.05, 0.95),
    (20, 0.01, 0.05, 0.8), (100, 0.04, 0.05, 0.5), (15, 0.15, 0.2, 0.8),
])]


@pytest.mark.parametrize("seed, queries, delta, alpha, power", first_by_default(CASES, keep=4))
def test_paired_t_count_is_statsmodels_solve_power_rounded_up(seed, queries, delta, alpha, power):
    values = pilot(seed, 2, queries)
    result = plan_values(values, ids(queries), delta=delta, alpha=alpha, power=power)
    differences = values["run1"]["nDCG@10"] - values["run0"]["nDCG@10"]
    sd = float(np.std(differences, ddof=1))
    solver = statsmodels_power.TTestPower()
    expected = math.ceil(solver.solve_power(effect_size=delta / sd, alpha=alpha, power=power))
    size = result.plan("nDCG@10").design("paired_t")
    assert size.queries == expected
    # the pilot's own power for delta, and the power and detectable delta at another size
    assert size.pilot_power == pytest.approx(solver.power(effect_size=delta / sd, nobs=queries, alpha=alpha),
                                             rel=1e-9)
    at_n = max(2, expected // 2)  # a size short of the need: statsmodels' power is NaN where it nears 1
    at = plan_values(values, ids(queries), delta=delta, alpha=alpha, power=power, queries=at_n)
    at_size = at.plan("nDCG@10").design("paired_t")
    assert at_size.power_at_queries == pytest.approx(
        solver.power(effect_size=delta / sd, nobs=at_n, alpha=alpha), rel=1e-9)
    # the detectable delta is where statsmodels' power is the plan's (its own solve_power for an effect size
    # stops at about 1e-5 of it, so the power function is the check)
    assert solver.power(effect_size=at_size.detectable_delta / sd, nobs=at_n, alpha=alpha) == pytest.approx(
        power, abs=1e-9)


def test_the_normal_approximation_beside_is_guenthers_formula():
    # n ~ ((z(a/2) + z(b)) sd / delta)^2 + z(a/2)^2 / 2, as Sakai's design starts from it
    values = pilot(3, 2, 25)
    sd = float(np.std(values["run1"]["nDCG@10"] - values["run0"]["nDCG@10"], ddof=1))
    z_alpha, z_beta = stats.norm.isf(0.025), stats.norm.isf(0.2)
    by_hand = ((z_alpha + z_beta) * sd / 0.02) ** 2 + z_alpha ** 2 / 2
    result = plan_values(values, ids(25), delta=0.02)
    assert result.plan("nDCG@10").design("paired_t").approx_queries == math.ceil(by_hand)


# --- more runs: the one-way ANOVA on the two-way ANOVA's residual variance -------------------------------------
def residual_variance_by_hand(matrix: np.ndarray) -> tuple[float, int]:
    """V_E = S_E / ((m - 1)(n - 1)), S_E = sum over queries j and runs i of (x_ji - xbar_.i - xbar_j. + xbar)^2."""
    n, m = matrix.shape
    grand = matrix.mean()
    s_e = sum((matrix[j, i] - matrix[:, i].mean() - matrix[j, :].mean() + grand) ** 2
              for j in range(n) for i in range(m))
    return s_e / ((m - 1) * (n - 1)), (m - 1) * (n - 1)


def anova_count_by_hand(delta: float, variance: float, m: int, alpha: float, power: float) -> int:
    """The first n whose F-test over m runs has the power: lambda = n delta^2 / (2 sigma^2) (two runs delta
    apart, the others at the grand mean), df m - 1 and m(n - 1), P(F' > F(1 - alpha)) by scipy's ncf."""
    n = 2
    while True:
        dfn, dfd = m - 1, m * (n - 1)
        if stats.ncf.sf(stats.f.ppf(1 - alpha, dfn, dfd), dfn, dfd, n * delta ** 2 / (2 * variance)) >= power:
            return n
        n += 1


@pytest.mark.parametrize("seed, runs, queries, delta", first_by_default(
    [(11, 3, 8, 0.1), (12, 5, 20, 0.05), (13, 10, 15, 0.2), (14, 4, 40, 0.08)], keep=2))
def test_anova_count_is_the_noncentral_f_by_hand_and_statsmodels(seed, runs, queries, delta):
    values = pilot(seed, runs, queries)
    matrix = np.column_stack([values[run]["nDCG@10"] for run in values])
    variance, df = residual_variance_by_hand(matrix)
    plan = plan_values(values, ids(queries), delta=delta).plan("nDCG@10")
    assert plan.variance == pytest.approx(variance, rel=1e-12) and plan.variance_df == df
    expected = anova_count_by_hand(delta, variance, runs, 0.05, 0.8)
    assert plan.design("anova").queries == expected
    # statsmodels' FTestAnovaPower: Cohen's f^2 = sum of the effects^2 / (m sigma^2) = delta^2 / (2 m sigma^2),
    # over nobs = m n observations in all
    total = statsmodels_power.FTestAnovaPower().solve_power(
        effect_size=math.sqrt(delta ** 2 / (2 * runs * variance)), k_groups=runs, alpha=0.05, power=0.8)
    assert math.ceil(total / runs) == expected


def test_residual_variance_of_sakais_table_5_1():
    # Sakai, 情報アクセス評価方法論 (Information access evaluation methodology, Corona, 2015), Table 5.1: three
    # systems over twenty topics; the book's two-way ANOVA without replication gives S_E = 0.8317 and
    # V_E = 0.0219 (the figures as elinor's test of its two-way ANOVA quotes them, kampersanda/elinor)
    a = [0.70, 0.30, 0.20, 0.60, 0.40, 0.40, 0.00, 0.70, 0.10, 0.30, 0.50, 0.40, 0.00, 0.60, 0.50, 0.30, 0.10, 0.50,
         0.20, 0.10]
    b = [0.50, 0.10, 0.00, 0.20, 0.40, 0.30, 0.00, 0.50, 0.30, 0.30, 0.40, 0.40, 0.10, 0.40, 0.20, 0.10, 0.10, 0.60,
         0.30, 0.20]
    c = [0.00, 0.00, 0.20, 0.10, 0.30, 0.30, 0.10, 0.20, 0.40, 0.40, 0.40, 0.30, 0.30, 0.20, 0.20, 0.20, 0.10, 0.50,
         0.40, 0.30]
    variance, df = sample_size.residual_variance(np.column_stack([a, b, c]))
    assert df == 38 and round(variance * df, 4) == 0.8317 and round(variance, 4) == 0.0219


def test_anova_normal_approximation_is_the_noncentral_chi_square():
    # lambda for an infinite error df solves P(chi'^2(m - 1, lambda) > chi^2(1 - alpha, m - 1)) = power; for
    # m = 2 it is (z(a/2) + z(b))^2 up to the far tail: 7.85 at alpha 0.05, power 0.8
    assert sample_size.approx_anova(1.0, 0.5, 2, 0.05, 0.8) == pytest.approx(
        (stats.norm.isf(0.025) + stats.norm.isf(0.2)) ** 2, rel=1e-3)
    lam = sample_size.approx_anova(0.1, 0.02, 4, 0.05, 0.8) * 0.1 ** 2 / (2 * 0.02)
    assert stats.ncx2.sf(stats.chi2.isf(0.05, 3), 3, lam) == pytest.approx(0.8, abs=1e-9)


def test_tukey_count_is_the_studentized_range_by_hand():
    values = pilot(21, 4, 12)
    plan = plan_values(values, ids(12), delta=0.1).plan("nDCG@10")
    variance, runs = plan.variance, 4

    def power_by_hand(n: int) -> float:
        # |mean_i - mean_j| / sqrt(2 V / n) is noncentral t(m(n - 1), delta / sqrt(2 sigma^2 / n)); the HSD
        # rejects it beyond q(1 - alpha; m, m(n - 1)) / sqrt(2)
        df = runs * (n - 1)
        critical = stats.studentized_range.ppf(0.95, runs, df) / math.sqrt(2)
        nc = 0.1 / math.sqrt(2 * variance / n)
        return stats.nct.sf(critical, df, nc) + stats.nct.cdf(-critical, df, nc)

    needed = plan.design("tukey_hsd").queries
    assert power_by_hand(needed) >= 0.8 > power_by_hand(needed - 1)
    # the pairs need more queries than the omnibus test's range
    assert needed > plan.design("anova").queries


def test_interval_width_count_is_the_expected_t_interval_by_hand():
    values = pilot(31, 2, 20)
    sd = float(np.std(values["run1"]["nDCG@10"] - values["run0"]["nDCG@10"], ddof=1))

    def expected_width(n: int) -> float:
        # E[s] = sd sqrt(2 / (n - 1)) Gamma(n / 2) / Gamma((n - 1) / 2); the width 2 t(0.975, n - 1) s / sqrt(n)
        c4 = math.sqrt(2 / (n - 1)) * math.exp(math.lgamma(n / 2) - math.lgamma((n - 1) / 2))
        return 2 * stats.t.ppf(0.975, n - 1) * c4 * sd / math.sqrt(n)

    size = plan_values(values, ids(20), delta=0.05, ci_width=0.05).plan("nDCG@10").design("ci_width")
    assert expected_width(size.queries) <= 0.05 < expected_width(size.queries - 1)
    assert size.approx_queries == math.ceil((2 * stats.norm.isf(0.025) * sd / 0.05) ** 2)


def test_more_runs_interval_is_of_a_pairs_difference():
    # a pair's difference has the variance 2 V_E: the width design of three runs is two runs' with sd^2 = 2 V_E
    values = pilot(32, 3, 15)
    plan = plan_values(values, ids(15), delta=0.05, ci_width=0.08).plan("nDCG@10")
    assert plan.design("ci_width").queries == sample_size.queries_interval(0.08, math.sqrt(2 * plan.variance), 0.05)


# --- the variance's own uncertainty ----------------------------------------------------------------------------
def test_an_eight_query_pilot_gives_a_wide_range():
    values = pilot(41, 2, 8)
    result = plan_values(values, ids(8), delta=0.02)
    plan = result.plan("nDCG@10")
    # df s^2 / sigma^2 ~ chi^2(7): sigma^2 lies in [7 s^2 / chi2(0.975; 7), 7 s^2 / chi2(0.025; 7)]
    assert plan.variance_low == pytest.approx(7 * plan.variance / stats.chi2.ppf(0.975, 7), rel=1e-12)
    assert plan.variance_high == pytest.approx(7 * plan.variance / stats.chi2.ppf(0.025, 7), rel=1e-12)
    size = plan.design("paired_t")
    assert size.queries_low == sample_size.queries_paired_t(0.02, math.sqrt(plan.variance_low), 0.05, 0.8)
    assert size.queries_high == sample_size.queries_paired_t(0.02, math.sqrt(plan.variance_high), 0.05, 0.8)
    assert size.queries_high > 9 * size.queries_low  # chi2(0.975; 7) / chi2(0.025; 7) = 9.5
    verdict = dict(plan_verdicts(result))["nDCG@10"]
    assert "a wide range, as 8 queries pin the variance down only within a factor of 9.5" in verdict


def test_a_large_pilot_is_not_called_wide():
    plan = plan_values(pilot(42, 2, 400), ids(400), delta=0.02).plan("nDCG@10")
    assert not plan.wide and plan.variance_high < 1.4 * plan.variance_low


def test_a_narrower_confidence_gives_a_narrower_range():
    values = pilot(43, 2, 10)
    wide = plan_values(values, ids(10), delta=0.05).plan("nDCG@10").design("paired_t")
    narrow = plan_values(values, ids(10), delta=0.05, confidence=0.5).plan("nDCG@10").design("paired_t")
    assert wide.queries == narrow.queries
    assert wide.queries_low < narrow.queries_low <= narrow.queries <= narrow.queries_high < wide.queries_high


# --- edges --------------------------------------------------------------------------------------------------------
def test_runs_that_do_not_differ_have_no_variance_to_plan_from():
    same = np.array([0.2, 0.5, 0.7, 0.1])
    result = plan_values({"A": {"P@5": same}, "B": {"P@5": same + 0.1}}, ids(4), delta=0.02)
    plan = result.plan("P@5")
    assert plan.variance == 0 and not plan.plannable and plan.design("paired_t").queries is None
    assert ("P@5  the runs differ by the same amount on every query, so the pilot has no variance to plan from: "
            "judge queries on which they differ.") in str(result)
    three = plan_values({"A": {"P@5": same}, "B": {"P@5": same + 0.1}, "C": {"P@5": same - 0.2}}, ids(4), delta=0.02)
    assert three.plan("P@5").variance == 0 and three.plan("P@5").design("anova").queries is None
    assert "(the two-way ANOVA leaves no residual)" in str(three)


def test_a_delta_too_small_for_any_count_says_more_than_the_limit():
    result = plan_values(pilot(51, 2, 10), ids(10), delta=1e-7)
    size = result.plan("nDCG@10").design("paired_t")
    assert size.queries is None and "more than 1,000,000,000 queries" in str(result)


def test_a_detectable_delta_beyond_the_measures_range_is_not_shown_as_a_number():
    # two queries detect a difference only far beyond what nDCG@10 (between 0 and 1) can take: as compare's MDD
    values = {"A": {"nDCG@10": np.array([0.1, 0.5])}, "B": {"nDCG@10": np.array([0.3, 0.4])}}
    result = plan_values(values, ids(2), delta=0.1)
    size = result.plan("nDCG@10").design("paired_t")
    assert size.detectable_delta > 1 and result.plan("nDCG@10").value_span == 1
    text = str(result)
    assert text.splitlines()[3].endswith("  > 1")
    assert (f"the pilot's 2 queries detect no difference nDCG@10 can take (its values span 1; the test would need "
            f"{size.detectable_delta:.3f})") in text


def test_a_detectable_delta_far_beyond_the_range_is_said_in_a_few_digits():
    # as compare's: alpha 1e-50 and eight queries need a delta of some 3e6 on a measure between 0 and 1 (at 1e-100
    # scipy's noncentral t gave NaN and the command a traceback)
    values = pilot(3, 2, 8)
    for alpha in (1e-50, 1e-100, 1e-300):
        result = plan_values(values, ids(8), delta=0.05, alpha=alpha)
        size = result.plan("nDCG@10").design("paired_t")
        assert size.detectable_delta > 1e6, alpha
        assert f"the test would need {size.detectable_delta:.3g})" in str(result), alpha


def test_a_delta_wider_than_the_measure_is_said():
    with pytest.warns(TrecRagEvalWarning, match=r"delta 1\.500 is more than nDCG@10 can differ by"):
        plan_values(pilot(52, 2, 10), ids(10), delta=1.5)


@pytest.mark.parametrize("arguments, message", [
    (dict(delta=0), "delta must be positive, got 0"),
    (dict(delta=-0.02), "delta must be positive, got -0.02"),
    (dict(delta=0.02, alpha=1.0), "alpha must be between 0 and 1, got 1.0"),
    (dict(delta=0.02, alpha=0), "alpha must be between 0 and 1, got 0"),
    (dict(delta=0.02, power=1.2), "power must be between 0 and 1, got 1.2"),
    (dict(delta=0.02, confidence=0), "confidence must be between 0 and 1, got 0"),
    (dict(delta=0.02, ci_width=0.0), "ci_width must be positive, got 0.0"),
    (dict(delta=0.02, queries=1), "queries must be at least 2, got 1"),
    (dict(delta=0.02, queries=2.5), "queries must be an integer, got 2.5"),
])
def test_bad_arguments_are_refused(arguments, message):
    with pytest.raises(UsageError) as raised:
        plan_values(pilot(1, 2, 5), ids(5), **arguments)
    assert str(raised.value) == message


def test_a_detectable_delta_no_float_holds_is_null_in_json_as_compare_s():
    # two queries of DCG@5 with an sd of 1414 at the smallest normal alpha: the delta is beyond the largest float.
    # plan's JSON wrote it as Infinity, which is no JSON (compare's writes null); the text says it in words
    import json
    import sys

    values = {"A": {"DCG@5": np.array([0.0, 1000.0])}, "B": {"DCG@5": np.array([1000.0, 0.0])}}
    result = plan_values(values, ids(2), delta=0.5, alpha=sys.float_info.min)
    assert result.plan("DCG@5").design("paired_t").detectable_delta == math.inf
    def refuse(constant):
        raise ValueError(constant)

    written = json.loads(result.render("json"), parse_constant=refuse)
    assert written["measures"]["DCG@5"]["designs"]["paired_t"]["detectable_delta"] is None
    assert "the pilot's 2 queries detect no difference a float holds" in str(result)


def test_a_detectable_delta_no_float_holds_is_an_empty_csv_cell_as_in_compare_s_csv():
    # the same delta as above, null in the JSON: the CSV wrote "inf"; a value no float holds is an empty cell,
    # as NaN is in every CSV of ours
    import csv
    import io
    import sys

    values = {"A": {"DCG@5": np.array([0.0, 1000.0])}, "B": {"DCG@5": np.array([1000.0, 0.0])}}
    result = plan_values(values, ids(2), delta=0.5, alpha=sys.float_info.min)
    rows = list(csv.DictReader(io.StringIO(result.render("csv"))))
    row = next(r for r in rows if r["design"] == "paired_t")
    assert row["detectable_delta"] == ""
    assert "inf" not in result.render("csv")


def test_more_runs_refuse_an_alpha_the_studentized_range_cannot_answer():
    # the Tukey design's critical value is scipy's studentized range, whose upper tail is 1 - its cdf: at alpha
    # 1e-20 its quantile came out as 100 (the end of its search) and the search for the count never ended;
    # at 1e-10 and 3 df it had only one digit of alpha (sf(isf(1e-10)) = 6.2e-11). Two runs have no Tukey design
    with pytest.raises(UsageError) as raised:
        plan_values(pilot(3, 3, 8), ids(8), delta=0.05, alpha=1e-20)
    assert str(raised.value) == ("alpha must be at least 1e-08 for the Tukey HSD design of more than two runs (the "
                                 "studentized range's tail keeps too few digits below it), got 1e-20")
    assert raised.value.parameters == {"alpha": "alpha"}
    assert plan_values(pilot(3, 3, 8), ids(8), delta=0.05, alpha=1e-8).plan("nDCG@10").design("tukey_hsd").queries
    assert plan_values(pilot(3, 2, 8), ids(8), delta=0.05, alpha=1e-20).plan("nDCG@10").design("paired_t").queries


def test_a_pilot_needs_two_runs_and_two_queries():
    with pytest.raises(UsageError, match=r"^plan needs a pilot of at least two runs, got 1$"):
        plan_values({"A": {"m": [0.1, 0.2]}}, ids(2), delta=0.1)
    with pytest.raises(UsageError, match=r"^a pilot needs at least two queries to estimate a variance, got 1$"):
        plan_values({"A": {"m": [0.1]}, "B": {"m": [0.2]}}, ids(1), delta=0.1)


# --- simulation: the designed count has the power it promises ------------------------------------------------------
@pytest.mark.slow
def test_the_tukey_count_has_its_power_in_simulation():
    # normal data with the plan's variance, one pair delta apart, 20,000 simulated experiments at the designed
    # number of queries: the HSD (the studentized range of the pair's means over sqrt(MSE / n), beyond
    # q(0.95; m, m(n - 1)), as scipy's tukey_hsd tests equal groups) rejects that pair about `power` of the time
    rng = np.random.default_rng(7)
    runs, delta, variance, reps = 3, 0.1, 0.04, 20_000
    n = sample_size.queries_tukey(delta, variance, runs, 0.05, 0.8)
    data = rng.normal(np.array([0.0, delta, delta / 2])[None, :, None], math.sqrt(variance), (reps, runs, n))
    means = data.mean(axis=2)
    mse = ((data - means[:, :, None]) ** 2).sum(axis=(1, 2)) / (runs * (n - 1))
    q = stats.studentized_range.ppf(0.95, runs, runs * (n - 1))
    rejected = np.abs(means[:, 1] - means[:, 0]) / np.sqrt(mse / n) > q
    assert rejected.mean() == pytest.approx(sample_size.tukey_pair_power(n, delta, variance, runs, 0.05), abs=0.01)
    assert rejected.mean() >= 0.79
