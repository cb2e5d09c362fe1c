"""Random qrels and runs: our per-query values equal ir-measures' within 1e-9, and the only
differences are the documented conventions, each where it is expected.

The data has graded and negative judgments, unjudged documents, score ties (exact, and equal
only at float32 precision), queries missing from the run, run-only queries and short runs.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ir_measures")

from trec_rag_eval.checks.crosscheck import crosscheck_tables  # noqa: E402
from trec_rag_eval.tables import Qrels, Run  # noqa: E402

# drawn qrels and runs often share no query or no judged document: the warnings saying so are tested in
# test_silent_zeros.py; here only the numbers are compared
pytestmark = pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")

PYTREC_MEASURES = [
    "P@5", "P(rel=2)@5", "P(judged_only=True)@3", "R@5", "AP", "AP@5", "RR", "RR(rel=2)", "nDCG", "nDCG@5",
    "nDCG(judged_only=True)", "nDCG(gains={1:2,2:5})@5", "Rprec", "Bpref", "infAP", "Success@3", "SetP", "SetR",
    "SetF", "SetF(beta=2.0)", "SetAP", "IPrec@0.0", "IPrec@0.3", "IPrec@0.5", "NumQ", "NumRel", "NumRet",
    "NumRelRet", "MAP", "MRR", "HitRate@3",
]
OTHER_MEASURES = ["RR@3", "RR@10", "Judged@5", "Judged", "nDCG(dcg='exp-log2')@5", "ERR@5"]

DOCS = [f"d{i}" for i in range(12)]
# 1.0 and 1.00000001 are distinct doubles but the same float32: a tie only for trec_eval 9
SCORES = [0.5, 1.0, 1.00000001, 2.0, 2.5, 3.0]


@st.composite
def collections(draw: st.DrawFn) -> tuple[Qrels, Run]:
    qrels_queries = draw(st.lists(st.sampled_from(["1", "2", "3", "4", "5"]), min_size=1, max_size=5, unique=True))
    judgments: dict[str, dict[str, int]] = {}
    for q in qrels_queries:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        grades = [draw(st.sampled_from([-1, 0, 0, 1, 1, 2, 3])) for _ in docs]
        if all(g < 0 for g in grades):
            grades[0] = 0  # trec_eval 9 misreads a query judged only -1 (stale data); not a convention
        judgments[q] = dict(zip(docs, grades, strict=False))
    run_queries = draw(st.lists(st.sampled_from(["1", "2", "3", "4", "5", "9"]), min_size=1, max_size=6, unique=True))
    scores: dict[str, dict[str, float]] = {}
    for q in run_queries:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
        scores[q] = {d: draw(st.sampled_from(SCORES)) for d in docs}
    return Qrels.from_dict(judgments), Run.from_dict(scores)


def _conventions(report) -> dict[str, set[str]]:
    return {v.measure: set(v.conventions) for v in report.verdicts}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_trec_eval_9_mode_equals_pytrec_eval_exactly(data: tuple[Qrels, Run]) -> None:
    qrels, run = data
    report = crosscheck_tables(qrels, run, PYTREC_MEASURES, trec_eval_9=True, tolerance=1e-9)
    assert report.ok, report.render()
    for verdict in report.verdicts:
        assert verdict.provider == "pytrec_eval", verdict
        # the only allowed difference: ir-measures gives a missing query 0 where trec_eval -c
        # keeps its num_rel and counts it in num_q
        if verdict.conventions:
            assert set(verdict.conventions) == {"missing_zero"}, report.render()
            assert verdict.measure in ("NumRel", "NumQ"), report.render()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_trec_eval_10_mode_differs_only_by_float32_and_iprec(data: tuple[Qrels, Run]) -> None:
    qrels, run = data
    report = crosscheck_tables(qrels, run, PYTREC_MEASURES, tolerance=1e-9)
    assert report.ok, report.render()
    for verdict in report.verdicts:
        allowed = {"float32", "missing_zero"} | ({"iprec9"} if verdict.measure.startswith("IPrec") else set())
        assert set(verdict.conventions) <= allowed, report.render()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_other_providers_differ_only_by_tie_order_and_judgment_counting(data: tuple[Qrels, Run]) -> None:
    qrels, run = data
    report = crosscheck_tables(qrels, run, OTHER_MEASURES, tolerance=1e-9)
    assert report.ok, report.render()
    providers = {v.measure: v.provider for v in report.verdicts}
    assert providers == {"RR@3": "msmarco", "RR@10": "msmarco", "Judged@5": "judged", "Judged": "judged",
                         "nDCG(dcg='exp-log2')@5": "gdeval", "ERR@5": "gdeval"}
    for verdict in report.verdicts:
        if verdict.provider == "gdeval":
            assert not verdict.conventions, report.render()  # gdeval sorts ties as trec_eval does
        elif verdict.provider == "msmarco":
            assert set(verdict.conventions) <= {"tie_order"}, report.render()
        else:
            assert set(verdict.conventions) <= {"tie_order", "negative_judged"}, report.render()


def test_tie_order_is_named_for_the_msmarco_provider() -> None:
    # two documents tie; trec_eval ranks d2 first (doc_id descending), msmarco d1 (ascending)
    qrels = Qrels.from_dict({"1": {"d1": 1, "d2": 0}})
    run = Run.from_dict({"1": {"d1": 1.0, "d2": 1.0}})
    report = crosscheck_tables(qrels, run, ["RR", "RR@10"])
    rr, rr10 = report.verdicts
    assert (rr.status, rr.provider) == ("agree", "pytrec_eval")  # RR = 1/2 in both
    assert (rr10.status, rr10.conventions, rr10.max_difference) == ("convention", {"tie_order": ["1"]}, 0.5)
    assert report.ok


def test_float32_ties_are_named_in_trec_eval_10_mode() -> None:
    qrels = Qrels.from_dict({"1": {"a": 1, "b": 0}})
    run = Run.from_dict({"1": {"a": 1.00000001, "b": 1.0}})  # one float32 value: b ranks first there
    report = crosscheck_tables(qrels, run, ["RR"])
    assert report.verdicts[0].conventions == {"float32": ["1"]}
    assert crosscheck_tables(qrels, run, ["RR"], trec_eval_9=True).verdicts[0].status == "agree"
