"""The arguments every comparison takes (n_resamples, seed, alpha, confidence, correction) are refused with
the same sentence whichever entry point is called: compare (each run against a baseline), compare with
pairs="all", and agree; fuse's counts and seed too (trec_rag_eval.arguments). Before, four copies of the
checks said "must be an integer" / "must be a whole number >= 1" and "(numpy's seeds are)" or not, for the
same mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

import trec_rag_eval as tre

REPO = Path(__file__).resolve().parents[1]
QRELS = str(REPO / "fixtures" / "qrels.txt")
RUNS = [str(REPO / "fixtures" / "run_bm25.txt"), str(REPO / "fixtures" / "run_hybrid.txt")]

ENTRY_POINTS = {
    "compare": lambda **options: tre.compare(QRELS, RUNS, "AP", **options),
    "compare all pairs": lambda **options: tre.compare(QRELS, RUNS, "AP", pairs="all", **options),
    # two sets of judgments: the file, and the same judgments in memory
    "agree": lambda **options: tre.agree(QRELS, tre.read_qrels(QRELS), runs=RUNS, measures="AP", **options),
}

REFUSED = [
    ({"n_resamples": "1000"}, "n_resamples must be an integer, got '1000'"),
    ({"n_resamples": 2.5}, "n_resamples must be an integer, got 2.5"),
    ({"n_resamples": True}, "n_resamples must be an integer, got True"),
    ({"n_resamples": 0}, "n_resamples must be at least 1, got 0"),
    ({"n_resamples": -3}, "n_resamples must be at least 1, got -3"),
    ({"seed": -1}, "seed must be a non-negative integer (numpy's seeds are), got -1"),
    ({"seed": 4.5}, "seed must be a non-negative integer (numpy's seeds are), got 4.5"),
    ({"seed": "x"}, "seed must be a non-negative integer (numpy's seeds are), got 'x'"),
]


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("options, message", REFUSED)
def test_each_entry_point_refuses_a_bad_resampling_argument_in_the_same_words(entry, options, message):
    with pytest.raises(tre.UsageError) as refused:
        ENTRY_POINTS[entry](**options)
    assert str(refused.value) == message


@pytest.mark.parametrize("entry, options, message", [
    ("compare", {"alpha": 1.0}, "alpha must be between 0 and 1, got 1.0"),
    ("compare all pairs", {"alpha": 1.0}, "alpha must be between 0 and 1, got 1.0"),
    ("compare", {"confidence": 0}, "confidence must be between 0 and 1, got 0"),
    ("agree", {"confidence": 0}, "confidence must be between 0 and 1, got 0"),
    # below the smallest normal float (2^-1022) a float keeps few digits (1e-320 is held as 9.99989e-321) and the
    # detectable delta, a t quantile of alpha / 2, overflows: refused, not printed as inf or a 300-digit number
    ("compare", {"alpha": 1e-320}, "alpha must be at least 2.2250738585072014e-308 (the smallest normal float: "
                                   "below it a float keeps few of its digits), got 1e-320"),
    ("compare all pairs", {"alpha": 5e-324}, "alpha must be at least 2.2250738585072014e-308 (the smallest normal "
                                             "float: below it a float keeps few of its digits), got 5e-324"),
    ("compare", {"correction": "sidak"}, "unknown correction 'sidak'; expected one of holm, bonferroni, none"),
    ("compare all pairs", {"correction": "sidak"}, "unknown correction 'sidak'; expected one of holm, bonferroni, "
                                                   "none"),
])
def test_levels_and_corrections_are_refused_in_the_same_words(entry, options, message):
    with pytest.raises(tre.UsageError) as refused:
        ENTRY_POINTS[entry](**options)
    assert str(refused.value) == message


def test_the_smallest_normal_alpha_is_taken():
    # 2^-1022 is the edge the check lets through
    assert tre.compare(QRELS, RUNS, "AP", alpha=2.0 ** -1022).alpha == 2.0 ** -1022


def test_the_commands_refuse_an_alpha_below_the_smallest_normal_float_naming_the_flag():
    from conftest import invoke

    for command in (["compare"], ["plan", "--delta", "0.05"]):
        result = invoke(*command, "--alpha", "1e-320", QRELS, *RUNS)
        assert result.exit_code == 2
        assert result.stderr == ("Error: --alpha must be at least 2.2250738585072014e-308 (the smallest normal float: "
                                 "below it a float keeps few of its digits), got 1e-320\n")


def test_a_seed_of_none_and_one_resample_are_taken():
    # the edges the checks let through: None (fresh randomness) and the smallest count
    assert tre.compare(QRELS, RUNS, "AP", n_resamples=1, seed=None).n_resamples == 1
    assert ENTRY_POINTS["agree"](n_resamples=1, seed=None).n_resamples == 1


@pytest.mark.parametrize("level, message", [
    ("2", "relevance_level must be an integer, got '2'"),
    (1.5, "relevance_level must be an integer, got 1.5"),
    (-1, "relevance_level must be from 0 to 2147483647 (a negative level would make unjudged documents relevant), "
         "got -1"),
])
def test_agree_checks_the_relevance_level_as_evaluate_does(level, message):
    # agree said "must be a whole number" and let -1 through; evaluate's words and range are the rule
    with pytest.raises(tre.UsageError) as by_evaluate:
        tre.evaluate(QRELS, RUNS[0], "AP", relevance_level=level)
    with pytest.raises(tre.UsageError) as by_agree:
        ENTRY_POINTS["agree"](relevance_level=level)
    assert str(by_agree.value) == str(by_evaluate.value) == message


@pytest.mark.parametrize("options, message", [
    ({"depth": 0}, "depth must be at least 1, got 0"),
    ({"depth": "10"}, "depth must be an integer, got '10'"),
    ({"optimize": QRELS, "folds": 1}, "folds must be at least 2, got 1"),
    ({"optimize": QRELS, "folds": 2.0}, "folds must be an integer, got 2.0"),
    ({"optimize": QRELS, "seed": -1}, "seed must be a non-negative integer (numpy's seeds are), got -1"),
    # the folds are drawn at random: fuse's seed is never None
    ({"optimize": QRELS, "seed": None}, "seed must be a non-negative integer (numpy's seeds are), got None"),
])
def test_fuse_counts_and_seed_are_refused_in_the_same_words(options, message):
    with pytest.raises(tre.UsageError) as refused:
        tre.fuse(RUNS, "rrf", **options)
    assert str(refused.value) == message


def _search(query, k):
    return ["d1", "d2"][:k]


DATASET = [{"id": "q1", "query": "chat", "relevant": ["d1"]}]


@pytest.mark.parametrize("call, message", [
    # wrong types were a TypeError about '<' between str and int, from inside the library
    (lambda tmp: tre.Evaluator(_search).evaluate(DATASET, k_values=(1,), depth="10"),
     "the search depth must be an integer, got '10'"),
    (lambda tmp: tre.Evaluator(_search).evaluate(DATASET, k_values=(1,), depth=0),
     "the search depth must be at least 1, got 0"),
    (lambda tmp: tre.generate_queries(DATASET, tmp / "out.json", model="m", n="3"),
     "n (questions per document) must be an integer, got '3'"),
    (lambda tmp: tre.generate_queries(DATASET, tmp / "out.json", model="m", concurrency=0),
     "the concurrency must be at least 1, got 0"),
    (lambda tmp: tre.judge(QRELS, RUNS[0], DATASET, tmp / "out.txt", model="m", depth=2.5),
     "the depth must be an integer, got 2.5"),
    (lambda tmp: tre.judge(QRELS, RUNS[0], DATASET, tmp / "out.txt", model="m", max_chars="800"),
     "max_chars must be an integer, got '800'"),
    (lambda tmp: tre.judge(QRELS, RUNS[0], DATASET, tmp / "out.txt", model="m", calibrate=-1),
     "calibrate must be at least 0, got -1"),
    (lambda tmp: tre.generate_queries(DATASET, tmp / "out.json", model="m", timeout="60"),
     "the timeout must be a number, got '60'"),
    (lambda tmp: tre.generate_queries(DATASET, tmp / "out.json", model="m", timeout=float("nan")),
     "the timeout must be positive, got nan"),
    (lambda tmp: tre.judge(QRELS, RUNS[0], DATASET, tmp / "out.txt", model="m", max_retries=-1),
     "max_retries must be at least 0, got -1"),
])
def test_the_engine_counts_are_checked_in_the_same_words(call, message, tmp_path):
    with pytest.raises(tre.UsageError) as refused:
        call(tmp_path)
    assert str(refused.value) == message


# what a chosen test draws nothing with: said once (a note), never silently dropped
UNUSED = [
    (["--seed", "7", "--n-resamples", "50"], "--seed and --n-resamples change nothing: the paired t-test and its "
     "t-interval draw nothing at random"),
    (["--seed", "7", "--test", "randomization"], None),
    (["--n-resamples", "50", "--interval", "bootstrap"], None),
    (["--seed", "7", "--test", "t", "--interval", "randomization"], None),
    (["--all-pairs", "--test", "tukey", "--seed", "3"], "--seed changes nothing: the parametric Tukey HSD draws "
     "nothing at random"),
    (["--all-pairs", "--test", "t", "--n-resamples", "9"], "--n-resamples changes nothing: the paired t-test draws "
     "nothing at random"),
    (["--all-pairs", "--test", "tukey-hsd", "--correction", "none"], "--correction changes nothing: the Tukey HSD "
     "tests each measure's pairs as one family already"),
    (["--all-pairs", "--correction", "bonferroni"], "--correction changes nothing: the Tukey HSD"),  # its default
    (["--all-pairs", "--test", "randomization", "--seed", "3", "--correction", "bonferroni"], None),
    (["--all-pairs", "--seed", "3", "--n-resamples", "50"], None),  # the randomised Tukey HSD draws them
    (["--seed", "42", "--n-resamples", "10000"], None),  # the defaults, typed: nothing to say
]


@pytest.mark.parametrize("flags, said", UNUSED)
def test_a_setting_the_chosen_test_ignores_is_said_once(run_cli, flags, said):
    result = run_cli("compare", *flags, "-m", "map", QRELS, *RUNS)
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("Note: ")]
    if said is None:
        assert notes == []
    else:
        assert len(notes) == 1 and notes[0].startswith(f"Note: {said}"), result.stderr


def test_the_library_says_it_with_its_parameters_names():
    with pytest.warns(tre.TrecRagEvalWarning, match=r"^seed= changes nothing: the paired t-test"):
        tre.compare(QRELS, RUNS, "AP", seed=3)
    with pytest.warns(tre.TrecRagEvalWarning, match=r"^correction= changes nothing: the Tukey HSD"):
        tre.compare(QRELS, RUNS, "AP", pairs="all", test="tukey", correction="none")


def test_all_pairs_refuses_a_confidence_level_it_has_no_interval_for(run_cli):
    result = run_cli("compare", "--all-pairs", "--confidence", "0.9", "-m", "map", QRELS, *RUNS)
    assert result.exit_code == 2
    assert result.stderr == ("Error: --confidence shows deltas to a baseline (and their intervals); --all-pairs has "
                             "none\n")
