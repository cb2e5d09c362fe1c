"""The RAG variants, on the French RAG tutorial's example relevance list [3, 2, 3, 0, 1].

Expected values are worked out by hand below (log2(3) = 1.5849625007, log2(5) = 2.3219280949,
log2(6) = 2.5849625007), and the exponential-gain nDCG and ERR are checked against gdeval.pl
through ir-measures.
"""

from __future__ import annotations

import pytest

from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.tables import Qrels, Run

# the tutorial's retrieved list, best first: d1..d5 judged 3, 2, 3, 0, 1 ...
RETRIEVED = {"d1": 3, "d2": 2, "d3": 3, "d4": 0, "d5": 1}
RUN = Run.from_dict({"1": {"d1": 5.0, "d2": 4.0, "d3": 3.0, "d4": 2.0, "d5": 1.0}})
# ... and one more document judged 3 that the system never returned
QRELS_WITH_MISSED = Qrels.from_dict({"1": {**RETRIEVED, "d6": 3}})
QRELS_TUTORIAL = Qrels.from_dict({"1": RETRIEVED})


def _value(qrels: Qrels, name: str) -> float:
    return float(evaluate_tables(qrels, RUN, [name]).value(name, "1"))


def test_seed_example_dcg_idcg_ndcg_over_the_retrieved_list() -> None:
    # DCG@5  = 3/1 + 2/log2(3) + 3/log2(4) + 0/log2(5) + 1/log2(6)
    #        = 3 + 1.2618595071 + 1.5 + 0 + 0.3868528072            = 6.1487123143
    # IDCG@5 over the retrieved list sorted: [3, 3, 2, 1, 0]
    #        = 3/1 + 3/log2(3) + 2/log2(4) + 1/log2(5) + 0
    #        = 3 + 1.8927892607 + 1 + 0.4306765581                  = 6.3234658188
    # nDCG@5 = 6.1487123143 / 6.3234658188                          = 0.9723643
    assert _value(QRELS_TUTORIAL, "DCG@5") == pytest.approx(6.1487123143, abs=1e-9)
    assert _value(QRELS_TUTORIAL, "nDCG(ideal='retrieved')@5") == pytest.approx(0.9723643, abs=1e-7)
    # here every judged document was retrieved, so trec_eval's ideal is the same list
    assert _value(QRELS_TUTORIAL, "nDCG@5") == pytest.approx(0.9723643, abs=1e-7)


def test_ideal_from_judged_documents_penalises_the_missed_one() -> None:
    # trec_eval's IDCG@5 uses every judged document: [3, 3, 3, 2, 1]
    #        = 3 + 3/log2(3) + 3/2 + 2/log2(5) + 1/log2(6)
    #        = 3 + 1.8927892607 + 1.5 + 0.8613531161 + 0.3868528072 = 7.6409951840
    # nDCG@5 = 6.1487123143 / 7.6409951840                          = 0.8047005
    assert _value(QRELS_WITH_MISSED, "nDCG@5") == pytest.approx(0.8047005, abs=1e-7)
    # the tutorial's IDCG only sorts what came back, so missing d6 costs nothing
    assert _value(QRELS_WITH_MISSED, "nDCG(ideal='retrieved')@5") == pytest.approx(0.9723643, abs=1e-7)


def test_exponential_gains() -> None:
    # gains 2^g - 1: retrieved [7, 3, 7, 0, 1]
    # DCG@5  = 7 + 3/log2(3) + 7/2 + 0 + 1/log2(6) = 7 + 1.8927892607 + 3.5 + 0.3868528072 = 12.7796420679
    # IDCG@5 (judged, with d6) [7, 7, 7, 3, 1]
    #        = 7 + 7/log2(3) + 7/2 + 3/log2(5) + 1/log2(6)
    #        = 7 + 4.4165082750 + 3.5 + 1.2920296742 + 0.3868528072  = 16.5953907564
    # nDCG@5 = 12.7796420679 / 16.5953907564                          = 0.7700730
    assert _value(QRELS_WITH_MISSED, "nDCG(dcg='exp-log2')@5") == pytest.approx(12.7796420679 / 16.5953907564,
                                                                               abs=1e-9)
    # IDCG over the retrieved list: [7, 7, 3, 1, 0] = 7 + 4.4165082750 + 1.5 + 0.4306765581 = 13.3471848331
    assert _value(QRELS_WITH_MISSED, "nDCG(dcg='exp-log2',ideal='retrieved')@5") == pytest.approx(
        12.7796420679 / 13.3471848331, abs=1e-9)


def test_err_as_gdeval() -> None:
    # R = (2^g - 1) / 16: [7/16, 3/16, 7/16, 0, 1/16]
    # ERR@5 = 7/16 + (3/16)(9/16)/2 + (7/16)(9/16)(13/16)/3 + 0 + (1/16)(9/16)(13/16)(9/16)/5
    #       = 0.4375 + 0.052734375 + 0.066650390625 + 0.0032135009765625 = 0.5600982666015625
    assert _value(QRELS_WITH_MISSED, "ERR@5") == pytest.approx(0.5600982666015625, abs=1e-12)
    # ERR@2 stops after two ranks: 0.4375 + 0.052734375
    assert _value(QRELS_WITH_MISSED, "ERR@2") == pytest.approx(0.490234375, abs=1e-12)


def test_precision_over_returned_documents() -> None:
    # 4 of the 5 returned documents are relevant (judgment >= 1)
    assert _value(QRELS_TUTORIAL, "P@10") == pytest.approx(4 / 10)  # trec_eval: always / k
    assert _value(QRELS_TUTORIAL, "P(denominator='returned')@10") == pytest.approx(4 / 5)
    assert _value(QRELS_TUTORIAL, "P(denominator='returned')@2") == pytest.approx(2 / 2)


def test_gdeval_agrees_on_the_example() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures.providers import registry

    if not registry["gdeval"].is_available():
        pytest.skip("gdeval needs perl")
    qrels = [ir_measures.Qrel("1", d, r) for d, r in {**RETRIEVED, "d6": 3}.items()]
    run = [ir_measures.ScoredDoc("1", d, s) for d, s in RUN.to_dict()["1"].items()]
    measures = [ir_measures.parse_measure("nDCG(dcg='exp-log2')@5"), ir_measures.parse_measure("ERR@5")]
    got = {m: v for m, v in registry["gdeval"].calc_aggregate(measures, qrels, run).items()}
    assert got[measures[0]] == pytest.approx(_value(QRELS_WITH_MISSED, "nDCG(dcg='exp-log2')@5"), abs=5e-6)
    assert got[measures[1]] == pytest.approx(_value(QRELS_WITH_MISSED, "ERR@5"), abs=5e-6)


def test_judged_only_per_measure() -> None:
    # an unjudged document at rank 1 pushes the relevant one to rank 2; judged_only closes the gap
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 0}})
    run = Run.from_dict({"1": {"x": 3.0, "a": 2.0, "b": 1.0}})
    result = evaluate_tables(qrels, run, ["RR", "RR(judged_only=True)", "nDCG", "nDCG(judged_only=True)"])
    assert result.value("RR", "1") == pytest.approx(0.5)
    assert result.value("RR(judged_only=True)", "1") == pytest.approx(1.0)
    assert result.value("nDCG", "1") == pytest.approx(1 / 1.5849625007)
    assert result.value("nDCG(judged_only=True)", "1") == pytest.approx(1.0)
