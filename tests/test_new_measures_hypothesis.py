"""Hypothesis-drawn qrels and runs (graded and negative judgments, subtopics, unjudged documents, score
ties, queries missing from the run and run-only queries): every measure added for ir_measures' names
agrees with its provider query by query to 1e-9, up to the conventions each verdict names."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ir_measures")

from trec_rag_eval.checks.crosscheck import crosscheck_tables  # noqa: E402
from trec_rag_eval.tables import Qrels, Run, qrels_columns  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")

DOCS = [f"d{i}" for i in range(10)]
SCORES = [0.5, 1.0, 2.0, 3.0]


@st.composite
def collections(draw: st.DrawFn, subtopics: int = 1) -> tuple[Qrels, Run]:
    queries = draw(st.lists(st.sampled_from(["1", "2", "3"]), min_size=1, max_size=3, unique=True))
    rows = []
    for q in queries:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        for s in range(1, draw(st.integers(1, subtopics)) + 1):
            rows += [(q, str(s), d, draw(st.sampled_from([-1, 0, 1, 2, 3]))) for d in docs]
    run: dict[str, dict[str, float]] = {}
    for q in draw(st.lists(st.sampled_from(["1", "2", "3", "7"]), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        run[q] = {d: draw(st.sampled_from(SCORES)) for d in docs}
    return Qrels(qrels_columns(rows), "drawn", checked=True), Run.from_dict(run)


def _check(report, allowed: dict[str, set[str]]) -> None:
    assert report.ok, report.render()
    for verdict in report.verdicts:
        assert verdict.status in ("agree", "convention"), report.render()
        assert set(verdict.conventions) <= allowed.get(verdict.provider, set()), report.render()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_compat_and_accuracy(data: tuple[Qrels, Run]) -> None:
    report = crosscheck_tables(*data, ["Compat", "Compat(p=0.5,normalize=False)", "Accuracy", "Accuracy(rel=2)@3"])
    _check(report, {"compat": {"tie_order"}, "accuracy": {"all_relevant"}})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_cwl_family(data: tuple[Qrels, Run]) -> None:
    pytest.importorskip("cwl")
    report = crosscheck_tables(*data, ["SDCG(max_rel=3)@5", "NERR8(max_rel=3)@3", "NERR9(max_rel=2)@5",
                                       "NERR10(max_rel=3)", "NERR11(max_rel=3)", "INST(max_rel=3)",
                                       "INSQ(T=2.0,max_rel=3)", "BPM(max_rel=3)@5", "RBP(rel=1)"])
    _check(report, {})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(subtopics=3))
def test_intent_aware_family(data: tuple[Qrels, Run]) -> None:
    pytest.importorskip("pyndeval")
    report = crosscheck_tables(*data, ["alpha_nDCG@5", "alpha_DCG@3", "ERR_IA@5", "nERR_IA@5", "NRBP", "nNRBP",
                                       "P_IA@5", "AP_IA", "StRecall@5"])
    _check(report, {"pyndeval": {"tie_order", "no_subtopic"}})
