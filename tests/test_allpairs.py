"""All-pairs comparison: the randomised Tukey HSD against a hand computation and a reference written
from Carterette (2012), the parametric Tukey HSD against ranx's, the family-wise error under the null
on seeded simulations, the letters, the renderings and the command."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, first_by_default, invoke

import trec_rag_eval as tre
from trec_rag_eval.compare.allpairs import compare_all_pairs
from trec_rag_eval.errors import UsageError

FIXTURES = f"{REPO}/fixtures"


def reference_hsd(matrix: np.ndarray) -> np.ndarray:
    """Carterette (2012), Algorithm 1, with every permutation enumerated: for each way of permuting
    every query's values across the systems, the largest difference of system means; a pair's p-value
    is the share of those at least as large as the pair's observed difference. Plain Python loops."""
    n, m = matrix.shape
    observed = matrix.mean(axis=0)
    largest = []
    for combo in itertools.product(list(itertools.permutations(range(m))), repeat=n):
        sums = [0.0] * m
        for q, order in enumerate(combo):
            for system in range(m):
                sums[system] += matrix[q][order[system]]
        means = [total / n for total in sums]
        largest.append(max(means) - min(means))
    p = np.ones((m, m))
    for i in range(m):
        for j in range(m):
            p[i, j] = sum(r >= abs(observed[i] - observed[j]) - 1e-12 for r in largest) / len(largest)
    return p


def test_hand_computed_case():
    # five queries, each [1, 0, 0] for systems A, B, C: A's mean is 1, B's and C's 0. Permuting each
    # query's row puts its 1 on any system with probability 1/3, independently: the largest difference of
    # means reaches 1 only when all five land on one system, 3 * (1/3)^5 = 1/81. So p(A, B) = p(A, C) = 1/81
    # (< 0.05: A beats both) and p(B, C) = 1 (an observed difference of 0 is always reached).
    values = {"A": {"m": [1, 1, 1, 1, 1]}, "B": {"m": [0] * 5}, "C": {"m": [0] * 5}}
    result = compare_all_pairs(values, [f"q{i}" for i in range(5)])  # 6^5 = 7776 <= 10000: enumerated
    assert result.exact == {"m": True}
    assert result.pair("m", "A", "B").p_value == pytest.approx(1 / 81)
    assert result.pair("m", "A", "C").p_value == pytest.approx(1 / 81)
    assert result.pair("m", "B", "C").p_value == pytest.approx(1.0)
    assert [p.winner for p in result.pairs] == ["A", "A", None]
    assert result.letters("m") == {"A": "bc", "B": "", "C": ""}
    assert "1.0000ᵇᶜ" in str(result)
    # with four queries, 1/27 = 0.037: still below 0.05; with three, 1/9: no decision
    three = compare_all_pairs({k: {"m": v["m"][:3]} for k, v in values.items()}, ["q0", "q1", "q2"])
    assert three.pair("m", "A", "B").p_value == pytest.approx(1 / 9) and not any(p.significant for p in three.pairs)


def test_exact_test_equals_the_reference_implementation():
    rng = np.random.default_rng(3)
    matrix = rng.random((4, 3)).round(2)  # 6^4 = 1296 arrangements
    values = {name: {"m": matrix[:, i]} for i, name in enumerate("XYZ")}
    result = compare_all_pairs(values, ["a", "b", "c", "d"])
    expected = reference_hsd(matrix)
    for (i, a), (j, b) in itertools.combinations(enumerate("XYZ"), 2):
        assert result.pair("m", a, b).p_value == pytest.approx(expected[i, j], abs=1e-12)


def test_sampled_test_approaches_the_exact_p_values():
    rng = np.random.default_rng(5)
    matrix = rng.random((6, 3))
    matrix[:, 0] += 0.3  # one clearly better system
    values = {name: {"m": matrix[:, i]} for i, name in enumerate("XYZ")}
    sampled = compare_all_pairs(values, list("abcdef"), n_resamples=20_000, seed=1)  # 6^6 = 46656 > 20000
    assert sampled.exact == {"m": False}
    expected = reference_hsd(matrix)
    for (i, a), (j, b) in itertools.combinations(enumerate("XYZ"), 2):
        # binomial sampling error of 20,000 draws: sd <= 0.0036
        assert sampled.pair("m", a, b).p_value == pytest.approx(expected[i, j], abs=0.015)


@pytest.mark.slow  # 1,000 simulated experiments: a property of the test, not of one code path
def test_family_wise_error_under_the_null_is_at_most_alpha():
    # 1,000 simulated experiments, 5 interchangeable systems over 20 queries (a query effect plus noise of the
    # same law for every system): any significant pair is a family-wise error
    rng = np.random.default_rng(2012)
    queries = [f"q{i}" for i in range(20)]
    errors = {"tukey-hsd": 0, "t-none": 0, "t-holm": 0}
    trials = 1000
    for trial in range(trials):
        matrix = rng.beta(2, 3, size=(20, 1)) + rng.normal(0, 0.1, size=(20, 5))
        values = {f"s{i}": {"m": matrix[:, i]} for i in range(5)}
        hsd = compare_all_pairs(values, queries, n_resamples=300, seed=trial)
        errors["tukey-hsd"] += any(p.significant for p in hsd.pairs)
        errors["t-none"] += any(p.significant for p in compare_all_pairs(values, queries, test="t",
                                                                         correction="none").pairs)
        errors["t-holm"] += any(p.significant for p in compare_all_pairs(values, queries, test="t").pairs)
    rate = {name: count / trials for name, count in errors.items()}
    # at or below alpha, allowing two standard errors of the estimate (sqrt(.05 * .95 / 1000) = 0.0069);
    # at this seed: tukey-hsd 0.039
    assert rate["tukey-hsd"] <= 0.05 + 2 * 0.0069, rate
    assert rate["t-holm"] <= 0.05 + 2 * 0.0069, rate
    # the simulation can tell: ten uncorrected tests make a family-wise error far more often than alpha
    assert rate["t-none"] > 0.15, rate


def random_experiment(seed: int):
    """Three runs with distinct scores over 15 queries and random graded qrels: no tie for any tool to break."""
    rng = np.random.default_rng(seed)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in rng.choice(30, 12, replace=False)}
             for q in range(15)}
    runs = {}
    for name in ("alpha", "beta", "gamma"):
        runs[name] = {q: {f"d{d}": float(s) for d, s in zip(rng.choice(30, 20, replace=False),
                                                            rng.permutation(20) + rng.random(20) / 2, strict=True)}
                      for q in qrels}
    return qrels, runs


@pytest.mark.parametrize("seed", first_by_default(range(3)))
def test_parametric_tukey_matches_ranx(seed):
    import ranx  # in the test extra: ranx's compare(stat_test="tukey") is scipy's tukey_hsd over per-query scores

    qrels, runs = random_experiment(seed)
    ours = tre.compare(qrels, runs, ["nDCG@10", "R@5"], pairs="all", test="tukey")
    report = ranx.compare(ranx.Qrels(qrels), [ranx.Run(run, name=name) for name, run in runs.items()],
                          metrics=["ndcg@10", "recall@5"], stat_test="tukey", max_p=0.05)
    theirs = report.to_dict()
    for ours_name, ranx_name in (("nDCG@10", "ndcg@10"), ("R@5", "recall@5")):
        for a, b in itertools.combinations(runs, 2):
            assert ours.means[a][ours_name] == pytest.approx(theirs[a]["scores"][ranx_name])
            pair = ours.pair(ours_name, a, b)
            assert pair.p_value == pytest.approx(float(theirs[a]["comparisons"][b][ranx_name]), rel=1e-9)


def test_renderings_carry_the_letters():
    values = {"A": {"m": [1, 1, 1, 1, 1]}, "B": {"m": [0] * 5}, "C": {"m": [0] * 5}}
    result = compare_all_pairs(values, [f"q{i}" for i in range(5)])
    assert "\\textbf{1.0000}$^{bc}$" in result.render("latex") and "\\toprule" in result.render("latex")
    assert "1.0000<sup>bc</sup>" in result.render("html") and result._repr_html_() == result.render("html")
    assert "1.0000<sup>bc</sup>" in result.render("markdown")
    data = json.loads(result.render("json"))
    assert data["measures"]["m"]["beats"] == {"A": ["B", "C"], "B": [], "C": []}
    assert result.to_dict() == data
    assert result.to_pandas().shape == (3, 10) and list(result.to_pandas("means")["m beats"]) == ["bc", "", ""]
    assert result.render("csv").splitlines()[1].startswith("m,A,B,1.0,0.0,1.0,")


def test_library_and_command_agree():
    runs = [f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt"]
    library = tre.compare(f"{FIXTURES}/qrels.txt", runs, ["R@5", "nDCG@10"], pairs="all")
    command = invoke("compare", "--all-pairs", "-m", "R@5", "-m", "nDCG@10", "-f", "json", f"{FIXTURES}/qrels.txt",
                     *runs)
    assert command.exit_code == 0, command.output
    assert json.loads(command.stdout) == json.loads(library.render("json"))
    text = invoke("compare", "--all-pairs", "-m", "R@5", f"{FIXTURES}/qrels.txt", *runs).stdout
    assert text == str(tre.compare(f"{FIXTURES}/qrels.txt", runs, ["R@5"], pairs="all"))


@pytest.mark.parametrize("args, message", [
    (["--all-pairs", "-b", "bm25"], "--all-pairs compares every pair"),
    (["--test", "tukey-hsd"], "--test tukey-hsd tests every pair of runs: use --all-pairs"),
    (["-f", "html"], "--format html writes the all-pairs table, not a comparison with a baseline: a comparison "
                     "with a baseline is written as table, markdown, latex, json or csv, or as an HTML page by "
                     "the report command"),
    (["--all-pairs", "--per-query"], "--all-pairs has none"),
    (["--all-pairs", "--interval", "bootstrap"], "--all-pairs has none"),
])
def test_command_refuses_what_does_not_apply(args, message):
    result = invoke("compare", *args, f"{FIXTURES}/qrels.txt", f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt")
    assert result.exit_code == 2 and message in result.output


def test_library_refuses_a_baseline_with_all_pairs():
    with pytest.raises(UsageError, match="pairs='all' compares every pair") as caught:
        tre.compare(f"{FIXTURES}/qrels.txt", [f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt"],
                    baseline="bm25", pairs="all")
    # one check, the library's, said by the command with its flags (its own module holds no such sentence)
    from trec_rag_eval.cli import FLAGS

    said = "--baseline names the run the others are compared with; --all-pairs compares every pair"
    assert caught.value.worded(FLAGS) == said
    result = invoke("compare", "--all-pairs", "-b", "bm25", f"{FIXTURES}/qrels.txt", f"{FIXTURES}/run_bm25.txt",
                    f"{FIXTURES}/run_hybrid.txt")
    assert (result.exit_code, result.stderr) == (2, f"Error: {said}\n")
    assert "compares every pair" not in (Path(REPO) / "trec_rag_eval" / "cli" / "compare.py").read_text()


def test_the_json_carries_the_seed_of_a_test_that_draws_alone():
    from trec_rag_eval.compare.allpairs import compare_all_pairs

    values = {run: {"m": np.array(v)} for run, v in (("A", [0.1, 0.5, 0.3]), ("B", [0.2, 0.4, 0.6]),
                                                    ("C", [0.3, 0.3, 0.2]))}
    for test in ("tukey", "t"):  # scipy's Tukey HSD and the t-test draw nothing at random
        data = compare_all_pairs(values, ["q1", "q2", "q3"], test=test).to_dict()
        assert "seed" not in data and "n_resamples" not in data, test
    for test in ("tukey-hsd", "randomization"):
        data = compare_all_pairs(values, ["q1", "q2", "q3"], test=test, seed=5, n_resamples=100).to_dict()
        assert (data["seed"], data["n_resamples"]) == (5, 100), test


def test_a_p_value_no_test_gives_is_null_in_json_and_an_empty_csv_field():
    # B and C score 0 on every query and A 1: no spread within any run, so scipy's Tukey HSD has a standard
    # error of 0 and B vs C's p-value is 0/0, NaN. The CSV wrote "nan" and the JSON NaN (no JSON): as in every
    # data format of ours, no value is null in JSON and an empty field in CSV
    import csv
    import io
    import warnings

    values = {"A": {"m": [1, 1, 1, 1, 1]}, "B": {"m": [0] * 5}, "C": {"m": [0] * 5}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's division by the zero standard error
        result = compare_all_pairs(values, [f"q{i}" for i in range(5)], test="tukey")

    def refuse(constant):
        raise ValueError(constant)

    pairs = json.loads(result.render("json"), parse_constant=refuse)["measures"]["m"]["pairs"]
    assert [(p["run_a"], p["run_b"], p["p_value"]) for p in pairs][2] == ("B", "C", None)
    rows = list(csv.DictReader(io.StringIO(result.render("csv"))))
    assert (rows[2]["run_a"], rows[2]["run_b"], rows[2]["p_value"], rows[2]["p_adjusted"]) == ("B", "C", "", "")
