"""Agreement between two sets of judgments: kappa against scikit-learn, Krippendorff's alpha, tau and
tau_AP by hand, Kendall's tau against scipy, identical qrels, the judge sidecar, the command."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import REPO, invoke
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

import trec_rag_eval as tre
from trec_rag_eval.compare.agreement import kendall_tau, krippendorff_alpha, tau_ap
from trec_rag_eval.errors import UsageError

FIXTURES = f"{REPO}/fixtures"
RUNS = [f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt"]


@pytest.mark.parametrize("seed", range(5))
def test_kappa_equals_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    grades_a = rng.integers(0, 4, 60)
    grades_b = np.clip(grades_a + rng.integers(-1, 2, 60), 0, 3)
    a = {f"q{i % 6}": {} for i in range(60)}
    b = {f"q{i % 6}": {} for i in range(60)}
    for i, (x, y) in enumerate(zip(grades_a, grades_b, strict=True)):
        a[f"q{i % 6}"][f"d{i}"] = int(x)
        b[f"q{i % 6}"][f"d{i}"] = int(y)
    b["q0"]["extra"] = 1  # judged by B alone
    result = tre.agree(a, b, relevance_level=2)
    labels = result.labels
    assert (labels.shared, labels.only_a, labels.only_b) == (60, 0, 1)
    # the pairs come in the qrels' order; kappa does not depend on it
    assert labels.kappa_binary == pytest.approx(cohen_kappa_score(grades_a >= 2, grades_b >= 2))
    assert labels.kappa_linear == pytest.approx(cohen_kappa_score(grades_a, grades_b, weights="linear",
                                                                  labels=[0, 1, 2, 3]))
    assert sum(map(sum, labels.confusion)) == 60
    assert labels.confusion[0][0] == int(np.sum((grades_a == 0) & (grades_b == 0)))


def test_kappa_and_alpha_by_hand():
    # A: 0 1 1 2, B: 0 1 2 2 (level 2: binary A 0 0 0 1, B 0 0 1 1)
    a = {"q": {"d1": 0, "d2": 1, "d3": 1, "d4": 2}}
    b = {"q": {"d1": 0, "d2": 1, "d3": 2, "d4": 2}}
    labels = tre.agree(a, b, relevance_level=2).labels
    # binary: p_o = 3/4; p_e = (3/4)(1/2) + (1/4)(1/2) = 1/2; kappa = (3/4 - 1/2) / (1/2) = 1/2
    assert labels.kappa_binary == pytest.approx(0.5)
    # nominal alpha, binary: D_o = 1/4 (one unit of four disagrees); values 0 0 0 1 0 0 1 1 (five 0, three 1):
    # D_e = 2 * 5 * 3 / (8 * 7) = 30/56; alpha = 1 - (1/4) / (30/56) = 8/15
    assert labels.alpha_nominal == pytest.approx(8 / 15)
    # interval alpha: D_o = (0 + 0 + 1 + 0) / 4 = 1/4; values 0 1 1 2 0 1 2 2, sum over ordered pairs of
    # squared differences = 2 * 8 * 4.875 = 78, D_e = 78 / 56; alpha = 1 - (1/4) / (78/56) = 32/39
    assert labels.alpha_interval == pytest.approx(32 / 39)
    # linear kappa: observed disagreement 1/4 (one pair one grade apart); expected: sum of |i - j| p_a(i) p_b(j)
    # with p_a = (1/4, 1/2, 1/4), p_b = (1/4, 1/4, 1/2): grade 0 of A: (1 * 1/4 + 2 * 1/2) * 1/4 = 5/16;
    # grade 1: (1/4 + 1/2) * 1/2 = 6/16; grade 2: (2 * 1/4 + 1/4) * 1/4 = 3/16; total 14/16 = 7/8
    # -> 1 - (1/4) / (7/8) = 5/7
    assert labels.kappa_linear == pytest.approx(5 / 7)
    assert labels.same_grade == pytest.approx(3 / 4) and labels.grades == [0, 1, 2]
    assert labels.confusion == [[1, 0, 0], [0, 1, 1], [0, 0, 1]]


def test_krippendorff_alpha_of_identical_and_of_constant_labels():
    assert krippendorff_alpha(np.array([0, 1, 2]), np.array([0, 1, 2]), "interval") == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha(np.array([1, 1]), np.array([1, 1]), "nominal"))


def test_tau_and_tau_ap_by_hand():
    names = ["w", "x", "y", "z"]
    reference = [4.0, 3.0, 2.0, 1.0]  # w > x > y > z
    top_swapped = [3.0, 4.0, 2.0, 1.0]  # x > w > y > z
    bottom_swapped = [4.0, 3.0, 1.0, 2.0]  # w > x > z > y
    # one discordant pair of six either way: tau = (5 - 1) / 6 = 2/3
    assert kendall_tau(reference, top_swapped) == pytest.approx(2 / 3)
    assert kendall_tau(reference, bottom_swapped) == pytest.approx(2 / 3)
    assert kendall_tau(reference, top_swapped) == pytest.approx(kendalltau(reference, top_swapped).statistic)
    # tau_AP walks B's order: top swapped: w has x above it, wrongly (0/1); y: 2/2; z: 3/3 -> 2/3 * 2 - 1 = 1/3
    assert tau_ap(reference, top_swapped, names) == pytest.approx(1 / 3)
    # bottom swapped: x 1/1, z 2/2, y: w, x right, z wrong 2/3 -> 2/3 * (8/3) - 1 = 7/9: errors at the top cost more
    assert tau_ap(reference, bottom_swapped, names) == pytest.approx(7 / 9)
    assert tau_ap(reference, reference, names) == pytest.approx(1.0)


def test_identical_qrels_give_tau_one():
    result = tre.agree(f"{FIXTURES}/qrels.txt", tre.read_qrels(f"{FIXTURES}/qrels.txt"),
                       runs=[*RUNS, tre.fuse(RUNS, "combmnz").run], measures=["nDCG@10", "P@5"])
    assert result.labels.kappa_binary == pytest.approx(1.0) and result.labels.kappa_linear == pytest.approx(1.0)
    assert (result.labels.only_a, result.labels.only_b) == (0, 0)
    for ranking in result.rankings:
        assert ranking.tau == pytest.approx(1.0) and ranking.tau_ap == pytest.approx(1.0)
        assert (ranking.tau_low, ranking.tau_high) == (pytest.approx(1.0), pytest.approx(1.0))
        assert ranking.swaps == [] and ranking.scores_a == ranking.scores_b


def test_swapped_runs_are_listed_and_scored_against_scipy():
    # B judges the documents bm25 ranks first relevant: the order of the runs changes
    qrels = tre.read_qrels(f"{FIXTURES}/qrels.txt")
    bm25 = tre.read_run(RUNS[0]).to_dict()
    favour = {q: {max(docs, key=docs.get): 3} for q, docs in bm25.items() if q in qrels.query_ids}
    fused = tre.fuse(RUNS).run
    result = tre.agree(qrels, favour, runs={"bm25": RUNS[0], "hybrid": RUNS[1], "rrf": fused}, measures=["P@1"])
    ranking = result.ranking("P@1")
    assert ranking.tau == pytest.approx(kendalltau(ranking.scores_a, ranking.scores_b).statistic)
    assert ranking.ordering("b")[0] == "bm25"
    for swap in ranking.swaps:
        assert swap.delta_a * swap.delta_b < 0
    assert ranking.tau_low <= ranking.tau_high
    assert "swapped:" in str(result)


def write_judged(tmp_path):
    """A judged qrels file as judge writes it: human judgments, holes filled, the sidecar."""
    qrels = tmp_path / "judged.qrels"
    # humans judged d1..d4 of q1 and d5..d6 of q2; the LLM filled holes h1 (q1) and h2 (q2)
    qrels.write_text("q1 0 d1 3\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d4 2\nq1 0 h1 2\nq2 0 d5 1\nq2 0 d6 0\nq2 0 h2 0\n")
    (tmp_path / "judged.qrels.llm.tsv").write_text(
        "query_id\tdoc_id\tgrade\tkind\tmodel\n"
        "q1\th1\t2\thole\tm\nq2\th2\t0\thole\tm\n"
        "q1\td1\t3\tcalibration\tm\nq1\td2\t1\tcalibration\tm\nq2\td5\t1\tcalibration\tm\n")
    return qrels


def test_judge_sidecar_human_against_llm(tmp_path):
    qrels = write_judged(tmp_path)
    result = tre.agree(str(qrels))  # one judged file: its human judgments against the LLM's
    labels = result.labels
    # shared: the three calibration documents; only human: d3 d4 d6; only LLM: the two holes
    assert (labels.shared, labels.only_a, labels.only_b) == (3, 3, 2)
    # grades (human, LLM): (3, 3), (0, 1), (1, 1): binary at level 1: (1,1), (0,1), (1,1)
    # p_o = 2/3, p_e = (2/3)(1) + (1/3)(0) = 2/3 -> kappa 0
    assert labels.kappa_binary == pytest.approx(0.0)
    assert labels.kappa_linear == pytest.approx(cohen_kappa_score([3, 0, 1], [3, 1, 1], weights="linear",
                                                                  labels=[0, 1, 2, 3]))
    both = tre.agree(str(qrels), str(qrels), judgments=("human", "both"))
    assert (both.labels.shared, both.labels.only_a, both.labels.only_b) == (6, 0, 2)
    assert both.labels.kappa_linear == pytest.approx(1.0)
    command = invoke("agree", str(qrels), str(qrels))
    assert command.exit_code == 0, command.output
    assert command.stdout == str(result)
    command = invoke("agree", "--judgments", "human,both", "-f", "json", str(qrels), str(qrels))
    assert json.loads(command.stdout) == json.loads(both.to_json())


def test_command_with_runs_writes_what_the_library_computes(tmp_path):
    out = tmp_path / "agreement.json"
    llm = tmp_path / "llm.qrels"
    llm.write_text("".join(line.rsplit(" ", 1)[0] + (" 1\n" if int(line.split()[3]) > 0 else " 0\n")
                           for line in open(f"{FIXTURES}/qrels.txt")))
    command = invoke("agree", f"{FIXTURES}/qrels.txt", str(llm), *RUNS, "-m", "nDCG@10", "-f", "json", "-o", str(out))
    assert command.exit_code == 0, command.output
    library = tre.agree(f"{FIXTURES}/qrels.txt", str(llm), RUNS, ["nDCG@10"])
    assert json.loads(out.read_text()) == json.loads(library.to_json())
    assert library.to_pandas().shape == (2, 6) and list(library.to_pandas("confusion").columns)[0] == "grade_a"


def test_errors_are_named(tmp_path):
    with pytest.raises(UsageError, match="has no LLM judgments beside it"):
        tre.agree(f"{FIXTURES}/qrels.txt")
    with pytest.raises(UsageError, match="two views expected"):
        tre.agree(str(write_judged(tmp_path)), judgments="human")
    command = invoke("agree", "--judgments", "human", f"{FIXTURES}/qrels.txt", f"{FIXTURES}/qrels.txt")
    assert command.exit_code == 2 and "expected two of human, llm, both" in command.output
    copy = tmp_path / "b.qrels"
    copy.write_text(open(f"{FIXTURES}/qrels.txt").read())
    command = invoke("agree", f"{FIXTURES}/qrels.txt", str(copy), "-o", str(copy), "--force")
    assert command.exit_code == 2 and "is also an input" in command.output


def test_notebook_table_carries_the_statistics():
    result = tre.agree(f"{FIXTURES}/qrels.txt", tre.read_qrels(f"{FIXTURES}/qrels.txt"), runs=RUNS,
                       measures=["nDCG@10"])
    page = result._repr_html_()
    assert "Cohen&#x27;s kappa (binary)" in page and "<td>1.0000</td>" in page and "hybrid &gt; bm25" in page


def test_a_negative_grade_is_not_a_label(tmp_path):
    # d is in A's pool but not judged (-1): B alone judges it; a, b, c agree, so both kappas are 1
    qa, qb = tmp_path / "qa", tmp_path / "qb"
    qa.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq1 0 d -1\n")
    qb.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq1 0 d 2\n")
    labels = tre.agree(str(qa), str(qb)).labels
    assert (labels.shared, labels.only_a, labels.only_b) == (3, 0, 1)
    assert labels.grades == [0, 1, 2] and labels.confusion == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert labels.kappa_binary == pytest.approx(1.0) and labels.kappa_linear == pytest.approx(1.0)
    assert labels.alpha_interval == pytest.approx(1.0)
    command = invoke("agree", str(qa), str(qb))
    assert command.exit_code == 0, command.output
    assert "Pairs judged by both: 3; only in A: 0; only in B: 1\n" in command.stdout
    assert "A -1" not in command.stdout  # no confusion row for the grade that is no label
    # negative on both sides: judged by neither
    labels = tre.agree({"q": {"a": 1, "b": -2, "c": 0}}, {"q": {"a": 1, "b": -1, "c": 0}}).labels
    assert (labels.shared, labels.only_a, labels.only_b) == (2, 0, 0)


def test_one_set_of_judgments_is_refused_from_python_as_by_the_command():
    qrels = {"q": {"a": 1, "b": 0}}
    with pytest.raises(UsageError) as err:
        tre.agree(qrels)
    assert str(err.value) == ("b= is missing: give two sets of judgments (A, then B), or a file judge wrote (its LLM "
                              "judgments beside it), or judgments= naming the two views of one file")
    with pytest.raises(UsageError) as err:
        tre.agree(qrels, None)
    with pytest.raises(UsageError) as err:
        tre.agree(qrels, qrels)
    assert str(err.value) == "A and B are the same judgments (one object given twice): give two sets of judgments"


def test_undefined_agreement_is_null_in_json_not_nan(tmp_path):
    # both sides give every pair one grade: no disagreement is expected, so kappa and alpha are undefined, and
    # with two runs scored alike tau is too; JSON has no NaN (json.dumps wrote it, which JSON readers refuse)
    (tmp_path / "a").write_text("q1 0 a 1\nq1 0 b 1\nq2 0 a 1\n")
    (tmp_path / "b").write_text("q1 0 a 1\nq1 0 b 1\nq2 0 a 1\n")
    (tmp_path / "r1").write_text("q1 Q0 a 1 1 r1\nq2 Q0 a 1 1 r1\n")
    (tmp_path / "r2").write_text("q1 Q0 a 1 1 r2\nq2 Q0 a 1 1 r2\n")

    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    result = invoke("agree", "-f", "json", "-m", "P@1", *(str(tmp_path / n) for n in ("a", "b", "r1", "r2")))
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout, parse_constant=refuse)
    labels = document["labels"]
    assert [labels[k] for k in ("kappa_binary", "kappa_linear", "alpha_nominal", "alpha_interval")] == [None] * 4
    assert (labels["same_binary"], labels["same_grade"]) == (1.0, 1.0)
    ranking = document["rankings"]["P@1"]
    assert (ranking["kendall_tau"], ranking["tau_ap"]) == (None, None)
    agreement = tre.agree(str(tmp_path / "a"), str(tmp_path / "b"))
    assert json.loads(agreement.to_json(), parse_constant=refuse)["labels"]["kappa_binary"] is None
    assert math.isnan(agreement.labels.kappa_binary)  # the value itself stays NaN for Python


@pytest.mark.parametrize(("kwargs", "flags", "said"), [
    ({"measures": ["MAP"]}, ["-m", "MAP"], ("measures= applies", "-m applies", "it")),
    ({"seed": 3, "n_resamples": 50}, ["--seed", "3", "--n-resamples", "50"],
     ("n_resamples= and seed= apply", "--n-resamples and --seed apply", "them")),
    ({"confidence": 0.9}, ["--confidence", "0.9"], ("confidence= applies", "--confidence applies", "it")),
])
def test_what_ranks_runs_without_runs_is_refused_not_ignored(tmp_path, kwargs, flags, said):
    # without runs there is no ranking of systems: -m, the bootstrap's seed, resamples and level changed nothing
    python, command, pronoun = said
    other = tmp_path / "b.txt"
    other.write_text("q1 0 doc021 1\nq1 0 doc010 1\n")
    with pytest.raises(UsageError) as err:
        tre.agree(f"{FIXTURES}/qrels.txt", str(other), **kwargs)
    assert str(err.value) == (f"{python} to the ranking of runs, and no run is given: give runs, or leave {pronoun} "
                              "out")
    result = invoke("agree", *flags, f"{FIXTURES}/qrels.txt", str(other))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"Error: {command} to the ranking of runs, and no run is given: give runs, or leave "
                             f"{pronoun} out\n")


def test_the_facade_and_the_service_give_agree_the_same_defaults():
    """Without runs, what only the ranking reads is refused when it differs from its default, read from the
    service's signature (``service.analyses.agree_judgments``): the facade's must be the same."""
    import inspect

    from trec_rag_eval.service.analyses import agree_judgments

    def defaults(function):
        return {name: p.default for name, p in inspect.signature(function).parameters.items()}

    assert defaults(tre.agree) == defaults(agree_judgments)
