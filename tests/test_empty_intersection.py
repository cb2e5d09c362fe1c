"""An empty run under queries="intersection": no query to evaluate, as pytrec_eval's suite expects
(``RelevanceEvaluator(qrels, {"map"}).evaluate({}) == {}``), not an error; the summary holds the counts
(0) and no mean, since a mean over no query has no value. Without intersection, every qrels query scores 0."""

from __future__ import annotations

import pytest

import trec_rag_eval as tre
from trec_rag_eval.errors import EmptyRunWarning, UsageError

QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}


@pytest.mark.parametrize("run", [{}, {"q1": {}, "q2": {}}, {"q1": []}])
def test_an_empty_run_has_no_query_under_intersection(run):
    with pytest.warns(EmptyRunWarning, match="so no query is evaluated"):
        result = tre.evaluate(QRELS, run, ["P@5", "AP", "num_ret", "num_q"], queries="intersection")
    assert result.query_ids == [] and result.to_dict() == {}
    assert dict(result.summary) == {"P@5": None, "AP": None, "NumRet": 0.0, "NumQ": 0.0}
    assert "nan" not in result.render("json").lower() and "nan" not in result.render("trec").lower()


def test_without_intersection_every_qrels_query_scores_zero():
    with pytest.warns(tre.TrecRagEvalWarning):
        result = tre.evaluate(QRELS, {}, "P@5")
    assert result.query_ids == ["q1", "q2"] and result.summary["P@5"] == 0.0


def test_a_run_of_other_queries_is_still_refused():
    # a run that retrieved something, for no query of the qrels, is a mistake to say (ids that do not meet)
    with pytest.raises(UsageError, match="share no query id"):
        tre.evaluate(QRELS, {"q9": {"d1": 1.0}}, "P@5", queries="intersection")
