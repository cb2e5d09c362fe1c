"""ir_measures' own spellings of the measures computed here, RBP with a cutoff and binary gains, and NumQ
per query.

The example (values worked out by hand below):

    qrels  q1: d1:2  d2:0  d3:1          q2: d4:1 (q2 is missing from the run)
    run    q1: d1 3.0 | d2 2.0 | d3 1.0 | d5 0.5 (not judged)
"""

from __future__ import annotations

import pytest

from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.measures.ir_notation import parse_notation
from trec_rag_eval.tables import Qrels, Run

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d5": 0.5}}

pytestmark = pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")


def _evaluate(*measures: str):
    return evaluate_tables(Qrels.from_dict(QRELS), Run.from_dict(RUN), list(measures))


@pytest.mark.parametrize(("theirs", "ours"), [
    ("Precision@10", "P@10"), ("Recall@10", "R@10"), ("RPrec", "Rprec"), ("BPref", "Bpref"),
    ("Precision(rel=2)@5", "P(rel=2)@5"), ("Recall(judged_only=True)@3", "R(judged_only=True)@3"),
    ("BPref(rel=2)", "Bpref(rel=2)"),
])
def test_ir_measures_spellings_are_the_same_measure_shown_as_asked(theirs: str, ours: str) -> None:
    assert parse_notation(theirs) == parse_notation(ours)
    assert str(parse_notation(theirs)) == theirs  # shown under the name asked for, like MAP
    result = _evaluate(theirs, ours)
    assert result.summary[theirs] == result.summary[ours]
    assert result.per_query["q1"][theirs] == result.per_query["q1"][ours]


def test_rbp_binary_and_with_a_cutoff_by_hand() -> None:
    # RBP = (1 - p) * sum of gain_k p^(k-1); p = 0.9 (trec_eval's default) unless given
    # binary (rel=1): gains 1, 0, 1, 0       -> 0.1 * (1 + 0.81) = 0.181
    # binary at 2: only d1 (judged 2)        -> 0.1 * 1 = 0.1
    # binary, p=0.5, @2: gains 1, 0          -> 0.5 * 1 = 0.5
    # graded (judgment / max judged, here 2): gains 1, 0, 0.5, 0; @3 -> 0.1 * (1 + 0.81 * 0.5) = 0.1405
    # graded @1 -> 0.1; graded, no cutoff -> 0.1405 too (d5 is not judged)
    result = _evaluate("RBP(rel=1)", "RBP(rel=2)", "RBP(p=0.5,rel=1)@2", "RBP@3", "RBP@1", "RBP")
    q1 = result.per_query["q1"]
    assert q1["RBP(rel=1)"] == pytest.approx(0.181, abs=1e-12)
    assert q1["RBP(rel=2)"] == pytest.approx(0.1, abs=1e-12)
    assert q1["RBP(rel=1,p=0.5)@2"] == pytest.approx(0.5, abs=1e-12)
    assert q1["RBP@3"] == pytest.approx(0.1405, abs=1e-12)
    assert q1["RBP@1"] == pytest.approx(0.1, abs=1e-12)
    assert q1["RBP"] == pytest.approx(0.1405, abs=1e-12)
    assert result.per_query["q2"]["RBP(rel=1)"] == 0.0  # missing from the run
    assert result.summary["RBP(rel=1)"] == pytest.approx(0.181 / 2, abs=1e-12)


def test_a_cutoff_trec_eval_cannot_print_gets_the_notation_in_trec_output(run_cli, tmp_path) -> None:
    # RR@10 and RBP@3 are not recip_rank and rbp: they must not print under trec_eval's names
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\n")
    run.write_text("q1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d3 3 1.0 t\n")
    out = run_cli("--format", "trec", "-m", "recip_rank", "-m", "RR@1", "-m", "rbp", "-m", "RBP@1",
                  str(qrels), str(run)).stdout
    names = [line.split()[0] for line in out.splitlines()]
    assert names == ["recip_rank", "rbp", "RR@1", "RBP@1"]
    values = dict(line.split()[::2] for line in out.splitlines())
    assert values["recip_rank"] == "0.5000" and values["RR@1"] == "0.0000"  # the first relevant is at rank 2


def test_num_q_is_one_per_query_and_summed() -> None:
    result = _evaluate("NumQ", "P@5")
    assert [result.per_query[q]["NumQ"] for q in ("q1", "q2")] == [1, 1]
    assert result.summary["NumQ"] == 2
    assert result.to_dict()["q2"]["NumQ"] == 1


def test_trec_output_prints_num_q_in_the_summary_only(run_cli, tmp_path) -> None:
    # trec_eval -q prints no per-query num_q line
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 3.0 t\n")
    out = run_cli("--format", "trec", "-q", "-m", "num_q", "-m", "P.5", str(qrels), str(run)).stdout
    assert out.splitlines() == ["P_5                   \tq1\t0.2000", "num_q                 \tall\t1",
                                "P_5                   \tall\t0.2000"]


def test_crosscheck_binary_rbp_with_cwl_eval_and_says_why_graded_rbp_is_not() -> None:
    pytest.importorskip("ir_measures")
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    report = crosscheck_tables(Qrels.from_dict(QRELS), Run.from_dict(RUN), ["RBP(rel=1)", "RBP(p=0.5,rel=2)", "RBP"])
    by_name = {v.measure: v for v in report.verdicts}
    if by_name["RBP(rel=1)"].status != "unsupported":  # cwl_eval installed
        assert by_name["RBP(rel=1)"].status == "agree" and by_name["RBP(rel=1)"].provider == "cwl_eval"
        assert by_name["RBP(p=0.5,rel=2)"].status == "agree"   # the name as asked
    else:
        assert "cwl_eval" in by_name["RBP(rel=1)"].reason
    graded = by_name["RBP"]
    assert graded.status == "unsupported" and "trectools" in graded.reason
    assert report.ok


def test_crosscheck_names_cwl_evals_depth_for_a_persistent_rbp() -> None:
    pytest.importorskip("cwl")
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    # p = 0.99: cwl_eval's weights over 1000 ranks sum to 1 - 0.99^1000, about 1 - 4.3e-5: its RBP is ours
    # divided by that, which the verdict names; p = 0.9 leaves 1.7e-46, nothing a double holds
    report = crosscheck_tables(Qrels.from_dict(QRELS), Run.from_dict(RUN), ["RBP(p=0.99,rel=1)", "RBP(rel=1)"])
    persistent, usual = report.verdicts
    assert persistent.status == "convention" and persistent.conventions == {"cwl_depth": ["q1"]}
    assert persistent.max_difference == pytest.approx(0.01 * (1 + 0.99**2) * (1 / (1 - 0.99**1000) - 1), rel=1e-6)
    assert usual.status == "agree" and report.ok
