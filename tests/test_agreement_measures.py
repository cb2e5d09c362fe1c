"""Compat and Accuracy: values worked out by hand, and 200 seeded random pairs against ir_measures'
compat and accuracy providers, query by query, to 1e-9.

The example:

    qrels  a:2  b:1  c:1  d:0
    run    b 4.0 | x 3.0 (not judged) | a 2.0 | y 1.0 (not judged)

    ideal ranking (judged > 0, highest first; equal judgments in the run's order, unretrieved last):
    a, b, c  (n = 3); depth = max(N, n) = 4

    depth i          1      2        3            4
    run prefix       b      b x      b x a        b x a y
    ideal prefix     a      a b      a b c        a b c
    overlap          0      1        2            2
    ideal overlap    1      2        3            3
"""

from __future__ import annotations

import pytest
from peer_data import random_pair

from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.tables import Qrels, Run

QRELS = {"q": {"a": 2, "b": 1, "c": 1, "d": 0}}
RUN = {"q": {"b": 4.0, "x": 3.0, "a": 2.0, "y": 1.0}}

pytestmark = pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")


def _values(*measures: str) -> dict[str, float]:
    result = evaluate_tables(Qrels.from_dict(QRELS), Run.from_dict(RUN), list(measures))
    return dict(result.per_query["q"])


def test_compat_by_hand() -> None:
    # RBO sums p^(i-1) * overlap_i / i. With p = 0.5 (weights 1, .5, .25, .125):
    run = 0 + 0.5 * 1 / 2 + 0.25 * 2 / 3 + 0.125 * 2 / 4        # 0.4791666...
    ideal = 1 + 0.5 * 2 / 2 + 0.25 * 3 / 3 + 0.125 * 3 / 4      # 1.84375
    weights = 1 + 0.5 + 0.25 + 0.125                            # 1.875
    # with the default p = 0.95
    run95 = 0.95 * 1 / 2 + 0.95**2 * 2 / 3 + 0.95**3 * 2 / 4
    ideal95 = 1 + 0.95 + 0.95**2 + 0.95**3 * 3 / 4
    values = _values("Compat(p=0.5)", "Compat(p=0.5,normalize=False)", "Compat")
    assert values["Compat(p=0.5)"] == pytest.approx(run / ideal, abs=1e-12)
    assert values["Compat(p=0.5,normalize=False)"] == pytest.approx(run / weights, abs=1e-12)  # the name as asked
    assert values["Compat"] == pytest.approx(run95 / ideal95, abs=1e-12)


def test_compat_of_the_ideal_ranking_is_one() -> None:
    perfect = evaluate_tables(Qrels.from_dict(QRELS), Run.from_dict({"q": {"a": 3.0, "c": 2.0, "b": 1.0}}), ["Compat"])
    assert perfect.per_query["q"]["Compat"] == pytest.approx(1.0, abs=1e-12)


def test_accuracy_by_hand() -> None:
    # relevant (>= 1): b (rank 1, 0 non-relevant above), a (rank 3, 1 above: x); non-relevant x, y
    # Accuracy = 1 - (0 + 1) / (2 relevant x 2 non-relevant) = 0.75
    # @2: b above x: 1 - 0 / (1 x 1) = 1; @1: only b, no pair misordered: 1 (ir-measures divides by zero)
    # rel=2: a relevant, b x y non-relevant, 2 above a: 1 - 2 / (1 x 3) = 1/3
    values = _values("Accuracy", "Accuracy@2", "Accuracy@1", "Accuracy(rel=2)")
    assert values == pytest.approx({"Accuracy": 0.75, "Accuracy@2": 1.0, "Accuracy@1": 1.0,
                                    "Accuracy(rel=2)": 1 / 3}, abs=1e-12)


def test_accuracy_is_zero_without_a_relevant_document_retrieved() -> None:
    result = evaluate_tables(Qrels.from_dict(QRELS), Run.from_dict({"q": {"d": 1.0, "x": 0.5}}), ["Accuracy", "Compat"])
    assert dict(result.per_query["q"]) == {"Accuracy": 0.0, "Compat": 0.0}


MEASURES = ["Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.5,normalize=False)", "Accuracy",
            "Accuracy@3", "Accuracy(rel=2)@5", "Accuracy@10"]


@pytest.mark.parametrize("block", range(4))
def test_200_seeded_pairs_agree_with_the_providers(block: int) -> None:
    pytest.importorskip("ir_measures")
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    seen: set[str] = set()
    for seed in range(block * 50, block * 50 + 50):
        qrels, run = random_pair(seed)
        report = crosscheck_tables(qrels, run, MEASURES, tolerance=1e-9)
        assert report.ok, (seed, report.render())
        for verdict in report.verdicts:
            assert verdict.provider == ("compat" if verdict.measure.startswith("Compat") else "accuracy")
            allowed = {"tie_order"} if verdict.provider == "compat" else {"all_relevant"}
            assert set(verdict.conventions) <= allowed, (seed, report.render())
            seen |= set(verdict.conventions)
    assert seen == {"tie_order", "all_relevant"}  # the data reaches both conventions


def test_compat_conventions_are_named() -> None:
    pytest.importorskip("ir_measures")
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    qrels = Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 1}})
    # a tie: compat ranks a before b (doc_id ascending), trec_eval b before a; its ideal keeps qrels order
    tied = crosscheck_tables(qrels, Run.from_dict({"q": {"b": 1.0, "a": 1.0, "z": 2.0}}), ["Compat(p=0.5)"])
    assert tied.verdicts[0].status in ("agree", "convention")
    # negative scores: compat's ideal puts the unretrieved b and c (score 0) before the retrieved a (-1)
    low = crosscheck_tables(qrels, Run.from_dict({"q": {"a": -1.0, "z": -0.5}}), ["Compat(p=0.5)"])
    assert low.verdicts[0].conventions == {"unretrieved_first": ["q"]}, low.render()
    assert tied.ok and low.ok
