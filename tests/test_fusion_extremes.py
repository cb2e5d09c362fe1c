"""Fusion with infinite, huge and tiny scores and parameters: every method and normalisation gives finite
fused scores (or keeps an infinity that ``norm="none"`` adds up to), never NaN, never a numpy warning, and
a file our own reader takes back; what has no value (inf - inf) or does not fit a double is refused.

The rule (docs/fusion.md, "Infinite, huge and tiny scores"): rank methods and ``rank`` read ranks (inf first, -inf
last); before minmax, zscore, sum or max, each run's infinite scores of a query stand one spread beyond its
finite ones (+inf at max + s, -inf at min - s, s = max - min, or |max| when they are all equal, or 1),
so the run's order is kept; ``none`` adds the scores as they are.
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from conftest import REPO, invoke

import trec_rag_eval as tre
from trec_rag_eval.errors import UsageError

INF = math.inf
METHODS = ("combsum", "combmnz", "combmax", "combmin", "combanz", "wsum", "rrf", "isr", "borda")
NORMS = ("minmax", "zscore", "sum", "max", "rank", "none")
RANK_METHODS = ("rrf", "isr", "borda")

# q: A scores d1 inf, d2 2, d3 -inf; B scores d1 3, d2 2, d4 1
A = {"q": {"d1": INF, "d2": 2.0, "d3": -INF}}
B = {"q": {"d1": 3.0, "d2": 2.0, "d4": 1.0}}
# A's finite scores are {2}: spread 0, so s = |max| = 2: inf stands at 4, -inf at 0 -> A reads as 4, 2, 0
MINMAX_A = {"d1": 1.0, "d2": 0.5, "d3": 0.0}
MINMAX_B = {"d1": 1.0, "d2": 0.5, "d4": 0.0}


def _no_nan(fused: dict) -> None:
    for query, docs in fused.items():
        for doc, score in docs.items():
            assert not math.isnan(score), (query, doc)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_infinite_scores_under_minmax_by_hand():
    expected = {
        "combsum": {"d1": 2.0, "d2": 1.0, "d3": 0.0, "d4": 0.0},
        "combmnz": {"d1": 2 * 2.0, "d2": 2 * 1.0, "d3": 0.0, "d4": 0.0},
        "combanz": {"d1": 1.0, "d2": 0.5, "d3": 0.0, "d4": 0.0},
        "combmax": {"d1": 1.0, "d2": 0.5, "d3": 0.0, "d4": 0.0},
        "combmin": {"d1": 1.0, "d2": 0.5, "d3": 0.0, "d4": 0.0},
        "wsum": {"d1": 0.5 + 0.5, "d2": 0.25 + 0.25, "d3": 0.0, "d4": 0.0},
    }
    for method, values in expected.items():
        assert tre.fuse({"A": A, "B": B}, method).run.to_dict()["q"] == pytest.approx(values), method


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_infinite_scores_under_the_other_normalisations_by_hand():
    # A reads as 4, 2, 0 (mean 2, population sd sqrt(8/3)); B is 3, 2, 1 (mean 2, sd sqrt(2/3))
    sd_a, sd_b = math.sqrt(8 / 3), math.sqrt(2 / 3)
    assert tre.fuse({"A": A, "B": B}, "combsum", "zscore").run.to_dict()["q"] == pytest.approx(
        {"d1": 2 / sd_a + 1 / sd_b, "d2": 0.0, "d3": -2 / sd_a, "d4": -1 / sd_b})
    # sum: (s - min) / sum(s - min): A 4/6, 2/6, 0; B 2/3, 1/3, 0
    assert tre.fuse({"A": A, "B": B}, "combsum", "sum").run.to_dict()["q"] == pytest.approx(
        {"d1": 4 / 6 + 2 / 3, "d2": 2 / 6 + 1 / 3, "d3": 0.0, "d4": 0.0})
    # max: s / max: A 1, 0.5, 0; B 1, 2/3, 1/3
    assert tre.fuse({"A": A, "B": B}, "combsum", "max").run.to_dict()["q"] == pytest.approx(
        {"d1": 2.0, "d2": 0.5 + 2 / 3, "d3": 0.0, "d4": 1 / 3})
    # rank reads ranks: A d1 1, d2 2/3, d3 1/3; B d1 1, d2 2/3, d4 1/3
    assert tre.fuse({"A": A, "B": B}, "combsum", "rank").run.to_dict()["q"] == pytest.approx(
        {"d1": 2.0, "d2": 4 / 3, "d3": 1 / 3, "d4": 1 / 3})


def test_the_spread_is_the_finite_scores_range():
    # finite 1, 3: s = 2, inf stands at 5, -inf at -1; minmax over [-1, 5]
    run = {"q": {"a": INF, "b": 3.0, "c": 1.0, "d": -INF}}
    other = {"q": {"e": 1.0}}
    fused = tre.fuse({"A": run, "B": other}, "combmax", "minmax").run.to_dict()["q"]
    assert fused == pytest.approx({"a": 1.0, "b": 4 / 6, "c": 2 / 6, "d": 0.0, "e": 0.0})
    # only infinite scores: they stand at +1 and -1
    fused = tre.fuse({"A": {"q": {"a": INF, "b": -INF}}, "B": other}, "combmax", "max").run.to_dict()["q"]
    assert fused == {"a": 1.0, "b": -1.0, "e": 1.0}


def test_none_adds_infinite_scores_as_numbers():
    fused = tre.fuse({"A": A, "B": B}, "combsum", "none").run.to_dict()["q"]
    assert fused == {"d1": INF, "d2": 4.0, "d3": -INF, "d4": 1.0}
    assert tre.fuse({"A": A, "B": B}, "combmin", "none").run.to_dict()["q"] == {"d1": 3.0, "d2": 2.0, "d3": -INF,
                                                                               "d4": 1.0}


@pytest.mark.parametrize("method", ["combsum", "combmnz", "combanz", "wsum"])
def test_none_refuses_a_sum_of_inf_and_minus_inf(method):
    with pytest.raises(UsageError) as err:
        tre.fuse({"A": A, "B": {"q": {"d1": -INF}}}, method, "none")
    assert str(err.value) == (
        "query 'q', document 'd1': run A scores it inf and run B -inf, and their sum has no value: normalise "
        "the scores (norm='minmax', 'zscore', 'sum', 'max' or 'rank') or fuse ranks (rrf, isr, borda)")


def test_a_zero_weight_counts_nothing_even_against_an_infinite_score():
    fused = tre.fuse({"A": A, "B": B}, "wsum", "none", weights=[0, 1]).run.to_dict()["q"]
    assert fused == {"d1": 3.0, "d2": 2.0, "d3": 0.0, "d4": 1.0}


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("norm", NORMS)
def test_every_method_and_normalisation_with_infinite_scores_writes_a_readable_file(tmp_path, method, norm):
    a, b = tmp_path / "inf.txt", tmp_path / "b.txt"
    a.write_text("q1 Q0 d1 1 inf a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 -inf a\n")
    b.write_text("q1 Q0 d1 1 3 b\nq1 Q0 d2 2 2 b\nq1 Q0 d4 3 1 b\nq2 Q0 d1 1 1 b\n")
    out = tmp_path / "o.txt"
    args = ["fuse", "--method", method, *(["--norm", norm] if method not in RANK_METHODS else []), str(a), str(b),
            "-o", str(out)]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "nan" not in out.read_text().lower() and "Warning" not in result.stderr
    fused = tre.read_run(str(out)).to_dict()
    _no_nan(fused)
    # the documents every run ranks at the top and the bottom keep their places
    order = sorted(fused["q1"], key=lambda d: -fused["q1"][d])
    assert order[0] == "d1" and fused["q1"]["d1"] > fused["q1"]["d2"], (method, norm, fused)


# --- huge and tiny values ---------------------------------------------------------------------------------

@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("scale", [1e300, 1e-300, 5e-324 * 2 ** 10])
def test_huge_and_tiny_scores_normalise_as_their_ratios_say(scale):
    # 2, 1, 0 times any scale: minmax 1, 0.5, 0; zscore +-sqrt(3/2), 0 (mean 1, sd sqrt(2/3))
    run = {"q": {"a": 2 * scale, "b": scale, "c": 0.0}}
    other = {"q": {"e": 1.0}}
    assert tre.fuse({"A": run, "B": other}, "combmax", "minmax").run.to_dict()["q"] == pytest.approx(
        {"a": 1.0, "b": 0.5, "c": 0.0, "e": 0.0})
    assert tre.fuse({"A": run, "B": other}, "combmax", "zscore").run.to_dict()["q"] == pytest.approx(
        {"a": math.sqrt(1.5), "b": 0.0, "c": -math.sqrt(1.5), "e": 0.0})


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_spread_wider_than_a_double_normalises():
    run = {"q": {"a": 1.5e308, "b": -1.5e308, "c": 0.0}}
    fused = tre.fuse({"A": run, "B": {"q": {"e": 1.0}}}, "combmax", "minmax").run.to_dict()["q"]
    assert fused == pytest.approx({"a": 1.0, "b": 0.0, "c": 0.5, "e": 0.0})


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_tiny_fused_scores_are_written_as_they_are():
    run = {"q": {"a": 1e-320, "b": 5e-324}}
    fused = tre.fuse({"A": run, "B": {"q": {"a": 1e-320}}}, "combsum", "none").run.to_dict()["q"]
    assert fused == {"a": 2e-320, "b": 5e-324}


def test_a_sum_beyond_a_double_is_refused():
    run = {"q": {"a": 1.5e308}}
    with pytest.raises(UsageError) as err:
        tre.fuse({"A": run, "B": run}, "combsum", "none")
    assert str(err.value) == (
        "query 'q', document 'a': the fused score is beyond a double's range (about 1.8e308): the scores or "
        "weights are too large to combine as they are; normalise the scores (norm='minmax', 'zscore', 'sum', "
        "'max' or 'rank') or scale the weights down")


def test_weights_too_small_for_a_double_are_refused():
    with pytest.raises(UsageError) as err:
        tre.fuse({"A": A, "B": B}, "wsum", weights=[1e-320, 1e-320])
    assert str(err.value).startswith(
        "run A's weight 1e-320 times its scores falls below the normal doubles (about 2.2e-308: its share of the "
        "fused scores loses its digits): weights are relative (0.3,0.7 and 3,7 rank alike): scale them up")


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("k", [1e300, 1.7e308, 1e-300, 5e-324])
def test_huge_and_tiny_k_give_rrf_scores(k):
    fused = tre.fuse({"A": A, "B": B}, "rrf", k=k).run.to_dict()["q"]
    # A ranks d1, d2, d3; B ranks d1, d2, d4
    expected = {"d1": 2 / (k + 1), "d2": 2 / (k + 2), "d3": 1 / (k + 3), "d4": 1 / (k + 3)}
    assert fused == pytest.approx(expected, rel=1e-11, abs=0)
    _no_nan({"q": fused})


def test_a_k_so_large_that_ranks_no_longer_count_is_said():
    with pytest.warns(tre.TrecRagEvalWarning, match=r"^k=1e\+300 is so large that 1 / \(k \+ r\) is the same to "
                                                    r"12 significant digits for every rank r up to 3"):
        tre.fuse({"A": A, "B": B}, "rrf", k=1e300)


def test_huge_k_from_the_command_line_and_in_the_tuning_grid(tmp_path):
    runs = [f"{REPO}/fixtures/run_bm25.txt", f"{REPO}/fixtures/run_hybrid.txt"]
    for flags in (["--k", "1e300"], ["--optimize", f"{REPO}/fixtures/qrels.txt", "--ks", "1e300,1", "--folds", "2"]):
        out = tmp_path / "o.txt"
        result = invoke("fuse", *runs, *flags, "-o", str(out), "--force")
        assert result.exit_code == 0, result.output
        assert "nan" not in out.read_text() and "RuntimeWarning" not in result.stderr
        _no_nan(tre.read_run(str(out)).to_dict())


def test_the_command_with_infinite_scores_prints_no_numpy_warning(tmp_path):
    """The reproduction as a user runs it: a separate process, its stderr as it is."""
    a, b = tmp_path / "inf.txt", tmp_path / "b.txt"
    a.write_text("q1 Q0 d1 1 inf a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 -inf a\n")
    b.write_text("q1 Q0 d1 1 3 b\nq1 Q0 d2 2 2 b\n")
    out = tmp_path / "o.txt"
    done = subprocess.run([sys.executable, "-m", "trec_rag_eval", "fuse", "--method", "combsum", str(a), str(b),
                           "-o", str(out), "--k", "60"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == "Error: --k 60 is rrf's constant: combsum has none\n"
    done = subprocess.run([sys.executable, "-m", "trec_rag_eval", "fuse", "--method", "combsum", str(a), str(b),
                           "-o", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert out.read_text() == ("q1 Q0 d1 1 2 fused-combsum\nq1 Q0 d2 2 0.5 fused-combsum\n"
                               "q1 Q0 d3 3 0 fused-combsum\n")


# --- --optimize with the parameter it chooses -----------------------------------------------------------------

RUNS = [f"{REPO}/fixtures/run_bm25.txt", f"{REPO}/fixtures/run_hybrid.txt"]
QRELS = f"{REPO}/fixtures/qrels.txt"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "wsum", "weights": [0.5, 0.5]},
     "weights= and optimize= both set wsum's weights: optimize= chooses them (every vector of multiples of step= "
     "summing to 1); give one or the other"),
    ({"method": "rrf", "k": 30},
     "k=30 and optimize= both set rrf's k: optimize= chooses it among ks=; give one or the other (ks= with "
     "that one value keeps it, with the cross-validated score)"),
    ({"method": "rrf", "k": 60},
     "k=60 and optimize= both set rrf's k: optimize= chooses it among ks=; give one or the other (ks= with "
     "that one value keeps it, with the cross-validated score)"),
])
def test_optimize_refuses_the_parameter_it_would_replace(kwargs, message):
    with pytest.raises(UsageError) as err:
        tre.fuse(RUNS, optimize=QRELS, folds=2, **kwargs)
    assert str(err.value) == message


@pytest.mark.parametrize(("flags", "message"), [
    (["--method", "wsum", "--weights", "0.5,0.5"],
     "Error: --weights and --optimize both set wsum's weights: --optimize chooses them (every vector of multiples "
     "of --step summing to 1); give one or the other\n"),
    (["--method", "rrf", "--k", "30"],
     "Error: --k 30 and --optimize both set rrf's k: --optimize chooses it among --ks; give one or the other "
     "(--ks with that one value keeps it, with the cross-validated score)\n"),
])
def test_the_command_refuses_them_too(tmp_path, flags, message):
    out = tmp_path / "o.txt"
    result = invoke("fuse", *RUNS, "--optimize", QRELS, "--folds", "2", *flags, "-o", str(out))
    assert (result.exit_code, result.stderr) == (2, message)
    assert not out.exists()


# the grid of the other method's parameter: wsum tunes its weights on a grid of step=, rrf its k among ks=
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "wsum", "ks": [1, 2]},
     "ks= lists the values of rrf's k that optimize= tries: wsum's weights are chosen on a grid of step=; "
     "leave ks= out"),
    ({"method": "rrf", "step": 0.5},
     "step= is the grid step of wsum's weights: optimize= chooses rrf's k among ks=; leave step= out"),
])
def test_optimize_refuses_the_grid_of_the_other_method(kwargs, message):
    with pytest.raises(UsageError) as err:
        tre.fuse(RUNS, optimize=QRELS, folds=2, **kwargs)
    assert str(err.value) == message


@pytest.mark.parametrize(("flags", "message"), [
    (["--method", "wsum", "--ks", "1,2"],
     "Error: --ks lists the values of rrf's k that --optimize tries: wsum's weights are chosen on a grid of "
     "--step; leave --ks out\n"),
    (["--method", "rrf", "--step", "0.5"],
     "Error: --step is the grid step of wsum's weights: --optimize chooses rrf's k among --ks; leave --step out\n"),
])
def test_the_command_refuses_the_grid_of_the_other_method(tmp_path, flags, message):
    out = tmp_path / "o.txt"
    result = invoke("fuse", *RUNS, "--optimize", QRELS, "--folds", "2", *flags, "-o", str(out))
    assert (result.exit_code, result.stderr) == (2, message)
    assert not out.exists()


def test_rrf_weights_are_kept_through_the_tuning_of_k():
    fusion = tre.fuse(RUNS, "rrf", weights=[1, 3], optimize=QRELS, folds=2, ks=[1, 60])
    assert fusion.weights == [1.0, 3.0]
    assert fusion.run.to_dict() == tre.fuse(RUNS, "rrf", weights=[1, 3], k=fusion.k).run.to_dict()


@pytest.mark.parametrize("k", ["x", True, [60]])
def test_a_k_of_the_wrong_type_with_another_method_is_named_not_a_format_error(k):
    with pytest.raises(UsageError) as err:
        tre.fuse({"A": A, "B": B}, "combsum", k=k)
    assert str(err.value) == f"k={k!r} is rrf's constant: combsum has none"


@pytest.mark.parametrize("infinity", [INF, -INF])
def test_an_infinite_share_is_the_score_whatever_a_huge_weighted_share_beside_it(infinity):
    # 1e300 x 1e300 has no double, but inf (or -inf) plus any finite number is that infinity
    fused = tre.fuse({"A": {"q": {"d": 1e300}}, "B": {"q": {"d": infinity}}}, "wsum", "none",
                     weights=[1e300, 1]).run.to_dict()["q"]
    assert fused == {"d": infinity}
    with pytest.raises(UsageError, match="beyond a double's range"):  # without the infinity: no double
        tre.fuse({"A": {"q": {"d": 1e300}}, "B": {"q": {"d": 1.0}}}, "wsum", "none", weights=[1e300, 1])


def test_a_run_of_weight_0_does_not_make_an_overflow_infinite():
    # B's inf counts nothing (weight 0): A's -1.5e308 x 1e300 is beyond a double, refused, not written -inf
    with pytest.raises(UsageError, match="beyond a double's range"):
        tre.fuse({"A": {"q": {"d": -1.5e308}}, "B": {"q": {"d": INF}}}, "wsum", "none", weights=[1e300, 0])


def test_a_subnormal_score_keeps_its_value_under_a_tiny_top():
    # max normalisation: -5e-324 / 1e-300 is about -4.94e-24, a normal double; ordinary scores are not rescaled
    # first (which would flush -5e-324 to 0)
    run = {"q": {"a": 1e-300, "b": -3.0, "c": -5e-324}}
    fused = tre.fuse({"A": run, "B": {"q": {"a": 1.0}}}, "combmin", "max").run.to_dict()["q"]
    assert fused["c"] == pytest.approx(-5e-324 / 1e-300, rel=1e-11, abs=0) and fused["b"] == pytest.approx(-3e300)


@pytest.mark.parametrize(("step", "count"), [(1e-300, "about 1e+300"), (0.0001, "10001")])
def test_a_grid_too_large_is_said_with_its_size_in_a_few_digits(step, count):
    # (1 / step + 1) weight vectors for two runs: a step of 1e-300 printed a 301-digit count
    with pytest.raises(UsageError) as err:
        tre.fuse(RUNS, "wsum", optimize=QRELS, step=step)
    assert str(err.value) == (f"a step of {step:g} over 2 runs makes {count} weight vectors (more than 5000): "
                              "choose a larger step")
