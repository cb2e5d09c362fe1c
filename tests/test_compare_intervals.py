"""The interval shown agrees with the test by construction, and where two figures
could disagree the verdict says which one rules and why.

The shipped demo showed nDCG@10 +0.021, paired t-test p = 0.165, beside a 95% BCa bootstrap interval
[+0.001, +0.063] that excludes 0 (30 queries, 23 tied at a delta of 0). Now the t-test comes with the
t-interval and the randomization test with the interval of the deltas it does not reject, both at the
confidence 1 - alpha: an interval excludes 0 exactly when the uncorrected test rejects.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import invoke
from scipy import stats as scipy_stats
from test_compare_cli import CHANGE_B, CHANGE_C, HITS_A, write_seed_example

from trec_rag_eval.compare import compare_runs, compare_values
from trec_rag_eval.compare.stats import SignFlips, bootstrap_interval, randomization_test, t_interval
from trec_rag_eval.render.comparison import verdict


def _lumpy(seed: int, n: int = 30, tied: int = 23) -> tuple[np.ndarray, np.ndarray]:
    """The demo's shape: most queries tied at a delta of 0, a few small gains and losses."""
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    delta = np.zeros(n)
    delta[tied:] = rng.normal(0.06, 0.08, n - tied)
    return a, a + delta


@pytest.mark.parametrize("seed", range(40))
def test_each_interval_excludes_zero_exactly_when_its_test_rejects(seed):
    a, b = _lumpy(seed, tied=20 + seed % 8) if seed % 2 else (lambda x: (x, x + np.random.default_rng(seed).normal(
        0.02, 0.1, 30)))(np.random.default_rng(seed + 100).random(30))
    values = {"A": {"m": a}, "B": {"m": b}}
    queries = [f"q{i}" for i in range(30)]
    for test in ("t", "randomization"):
        pair = compare_values(values, queries, test=test, n_resamples=2000, seed=seed).pairs[0]
        excludes = pair.ci_low > 0 or pair.ci_high < 0
        assert excludes == (pair.p_value <= 0.05 if test == "randomization" else pair.p_value < 0.05), (test, pair)


def test_the_t_interval_is_the_textbook_one():
    # R@5 per query by hand (test_compare_cli's seed example): B - A and C - A
    for change in (CHANGE_B, CHANGE_C):
        delta = np.array(change) / 5
        expected = scipy_stats.t.interval(0.95, len(delta) - 1, loc=delta.mean(), scale=scipy_stats.sem(delta))
        low, high = t_interval(np.zeros(len(delta)), delta)
        assert (low, high) == pytest.approx(expected)
    assert t_interval(np.zeros(3), np.full(3, 0.25)) == (0.25, 0.25)


def test_the_randomization_interval_is_the_set_of_deltas_the_test_keeps():
    a, b = _lumpy(7)
    flips = SignFlips(b - a, 4000, np.random.default_rng(1))
    low, high = flips.interval(0.95)
    # just inside each bound the test keeps the delta, just outside it rejects it
    width = high - low
    assert flips.p_value(low + 1e-6 * width) > 0.05 and flips.p_value(high - 1e-6 * width) > 0.05
    assert flips.p_value(low - 1e-3 * width) <= 0.05 and flips.p_value(high + 1e-3 * width) <= 0.05
    # the p-value at 0 is the test's, and agrees with an exact enumeration within Monte Carlo error
    exact = SignFlips(np.array([0.3, -0.1, 0.2, 0.25, 0.05, 0.1, -0.05, 0.15]), 256)
    assert exact.exact and exact.p_value() == pytest.approx(randomization_test(np.zeros(8), exact.diff, 256))
    # by hand: 8 queries, 2**8 flips; |mean| >= observed for the flips that keep the sign sum as large
    diff = exact.diff
    signs = np.array([[1 - 2 * ((k >> j) & 1) for j in range(8)] for k in range(256)])
    hand = np.mean(np.abs(signs @ diff) >= abs(diff.sum()) - 1e-12)
    assert exact.p_value() == pytest.approx(hand)
    # too few queries for any flip to reach 5%: no finite bound
    assert SignFlips(np.array([0.1, 0.2, 0.3]), 100).interval(0.95) == (-math.inf, math.inf)


def test_the_demo_disagreement_is_gone_and_the_bootstrap_is_still_there(tmp_path):
    paths = write_seed_example(tmp_path)
    files = [str(paths["qrels"]), str(paths["A"]), str(paths["B"])]
    shown = invoke("compare", "-m", "nDCG@10", "-m", "R@5", "-f", "csv", *files)
    assert shown.exit_code == 0, shown.stderr
    for line in shown.stdout.splitlines()[1:]:
        cells = line.split(",")
        if cells[2] == "B":
            header = shown.stdout.splitlines()[0].split(",")
            row = dict(zip(header, cells, strict=True))
            excludes = float(row["ci_low"]) > 0 or float(row["ci_high"]) < 0
            assert excludes == (float(row["p_value"]) < 0.05), row
    boot = invoke("compare", "-m", "R@5", "--interval", "bootstrap", *files)
    assert "95% CI: bootstrap BCa, 10000 resamples, not adjusted" in boot.stdout
    assert "95% CI: paired t-interval, not adjusted" in invoke("compare", "-m", "R@5", *files).stdout
    randomization = invoke("compare", "-m", "R@5", "--test", "randomization", *files).stdout
    assert "95% CI: randomization interval (the deltas the sign-flip test keeps, 10000 resamples)" in randomization


def test_the_vectorised_bootstrap_matches_scipy_s_bca():
    a, b = _lumpy(3, n=40, tied=10)
    ours = bootstrap_interval(a, b, n_resamples=20000, rng=np.random.default_rng(0))
    theirs = scipy_stats.bootstrap((b - a,), np.mean, n_resamples=20000, method="BCa",
                                   rng=np.random.default_rng(1)).confidence_interval
    # two independent draws of 20,000 resamples: the bounds agree within their Monte Carlo error
    assert ours == pytest.approx((theirs.low, theirs.high), abs=0.006)


def test_the_verdict_says_which_figure_rules_and_why():
    rng = np.random.default_rng(11)
    queries = [f"q{i}" for i in range(30)]
    base = rng.random(30)
    # B beats A by about 0.05 with p about 0.02: significant alone, not after Holm over 6 comparisons
    values = {"A": {m: base for m in "uvwxyz"}, "B": {m: base + rng.normal(0.05, 0.11, 30) for m in "uvwxyz"}}
    comparison = compare_values(values, queries, n_resamples=500)
    disagreeing = [p for p in comparison.pairs if not p.significant and (p.ci_low > 0 or p.ci_high < 0)]
    assert disagreeing
    assert "(the test rules: the interval is not adjusted for the 6 comparisons)" in verdict(comparison, disagreeing[0])
    agreeing = [p for p in comparison.pairs if not p.significant and p.ci_low <= 0 <= p.ci_high]
    assert all("rules" not in verdict(comparison, p) for p in agreeing)
    # a delta above the detectable delta, not significant after Holm over 22 measures: not a contradiction
    ms = [f"m{i}" for i in range(22)]
    drift = np.random.default_rng(0)
    wide = compare_values({"A": {m: base for m in ms}, "B": {m: base + drift.normal(0.05, 0.09, 30) for m in ms}},
                          queries, n_resamples=200)
    [above, *_] = [p for p in wide.pairs if not p.significant and abs(p.delta) >= p.min_detectable_delta]
    assert verdict(wide, above).endswith(f"this query set detects about {above.min_detectable_delta:.3f} (80% of "
                                         "the time only: a planning figure, the test rules here)")
    # a bootstrap interval asked for beside a t-test, on the demo's shape (23 of 30 deltas at 0): p = 0.107,
    # the BCa interval [+0.002, +0.036] excludes 0; the verdict names the method as the cause
    a, b = _lumpy(10)
    lumpy = compare_values({"A": {"m": a}, "B": {"m": b}}, queries, interval="bootstrap", n_resamples=2000)
    pair = lumpy.pairs[0]
    assert not pair.significant and pair.ci_low > 0
    assert ("(the test rules: the interval is a bootstrap interval, not the paired t-test's own, and can disagree "
            "with it)") in verdict(lumpy, pair)
    # the same data with the test's own interval: no disagreement to explain
    own = compare_values({"A": {"m": a}, "B": {"m": b}}, queries, n_resamples=2000).pairs[0]
    assert own.ci_low < 0 < own.ci_high


def test_python_takes_the_interval_too(tmp_path):
    from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels, read_trec_run

    paths = write_seed_example(tmp_path)
    qrels, runs = read_trec_qrels(paths["qrels"]), [read_trec_run(paths[t]) for t in ("A", "B")]
    hand = (np.array([(h + c) / 5 for h, c in zip(HITS_A, CHANGE_B, strict=True)]) - np.array(HITS_A) / 5)
    comparison = compare_runs(qrels, runs, ["R@5"])
    assert comparison.interval == "t"
    pair = comparison.pair("R@5", "B")
    assert (pair.ci_low, pair.ci_high) == pytest.approx(
        scipy_stats.t.interval(0.95, 29, loc=hand.mean(), scale=scipy_stats.sem(hand)))
    assert compare_runs(qrels, runs, ["R@5"], interval="bootstrap").interval == "bootstrap"
    with pytest.raises(Exception, match="unknown interval 'bca'"):
        compare_runs(qrels, runs, ["R@5"], interval="bca")
