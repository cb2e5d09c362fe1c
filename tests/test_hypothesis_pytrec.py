"""Property test: every measure ir-measures computes through pytrec_eval agrees with ours per query.

pytrec_eval bundles trec_eval 9, which stores run scores as 32-bit floats: the scores generated
here are multiples of 1/8 in a small range, exact in float32 and full of ties (ties are broken by
doc_id descending in byte order, so the doc ids mix lengths and cases: "d9" > "d20" > "d10").
iprec_at_recall and 11pt_avg are left out: trec_eval 9 rounds their cutoff differently (another
test covers them). Every qrels query has at least one judgment >= 0: trec_eval 9 misbehaves on a
query whose judgments are all negative (it reuses the previous query's levels: docs/trec_eval_conventions.md §1.1).

Query sets: a qrels query missing from the run scores 0 in both (ir-measures fills it in; we do
what trec_eval -c does). The one exception is NumRel, which ir-measures fills with 0 while we
(like trec_eval -c) report the query's real R; it is checked against the qrels for those queries.
Run-only queries are ignored by both.
"""

from __future__ import annotations

import ir_measures

# imported directly, not skipped: ir-measures and pytrec-eval-terrier are test dependencies, and a
# missing one must fail the suite rather than silently drop the comparison
import pytest
import pytrec_eval  # noqa: F401  (ir-measures' pytrec_eval provider needs it)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from ir_measures import (
    AP,
    RR,
    Bpref,
    NumRel,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    Success,
    infAP,
    nDCG,
)

from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.tables import Qrels, Run

pytestmark = [
    pytest.mark.usefixtures("table_form"),  # lists and polars frames alike
    # drawn qrels and runs often share no query or no judged document: the warnings saying so are tested in
    # test_silent_zeros.py; here only the numbers are compared
    pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning"),
]

TOLERANCE = 1e-9

# evaluation settings of ours: name -> (measure specs, keyword arguments of evaluate)
OURS = {
    "l1": (["P.1,5,10", "recall.5,10", "map", "map_cut.5,10", "recip_rank", "ndcg", "ndcg_cut.5,10", "Rprec",
            "bpref", "infAP", "success.1,5", "set_P", "set_recall", "set_F", "set_map", "set_relative_P",
            "num_ret", "num_rel", "num_rel_ret"], {}),
    "l2": (["P.1,5,10", "map", "map_cut.5", "recip_rank", "Rprec", "bpref", "infAP", "success.1,5", "set_P",
            "set_recall", "set_F", "set_map", "set_relative_P", "num_rel_ret"], {"relevance_level": 2}),
    "J": (["P.5", "map", "recip_rank", "ndcg_cut.5", "ndcg", "success.5", "set_P"], {"judged_only": True}),
    "gains": (["ndcg.1=3,2=9"], {}),
}

# (ir-measures measure, our setting, our trec_eval name)
PAIRS = [
    (P @ 1, "l1", "P_1"), (P @ 5, "l1", "P_5"), (P @ 10, "l1", "P_10"),
    (R @ 5, "l1", "recall_5"), (R @ 10, "l1", "recall_10"),
    (AP, "l1", "map"), (AP @ 5, "l1", "map_cut_5"), (AP @ 10, "l1", "map_cut_10"),
    (RR, "l1", "recip_rank"),
    (nDCG, "l1", "ndcg"), (nDCG @ 5, "l1", "ndcg_cut_5"), (nDCG @ 10, "l1", "ndcg_cut_10"),
    (Rprec, "l1", "Rprec"), (Bpref, "l1", "bpref"), (infAP, "l1", "infAP"),
    (Success @ 1, "l1", "success_1"), (Success @ 5, "l1", "success_5"),
    (SetP, "l1", "set_P"), (SetR, "l1", "set_recall"), (SetF, "l1", "set_F"), (SetAP, "l1", "set_map"),
    (SetP(relative=True), "l1", "set_relative_P"),
    (NumRet, "l1", "num_ret"), (NumRel, "l1", "num_rel"), (NumRet(rel=1), "l1", "num_rel_ret"),
    # relevance level 2
    (P(rel=2) @ 1, "l2", "P_1"), (P(rel=2) @ 5, "l2", "P_5"), (P(rel=2) @ 10, "l2", "P_10"),
    (AP(rel=2), "l2", "map"), (AP(rel=2) @ 5, "l2", "map_cut_5"), (RR(rel=2), "l2", "recip_rank"),
    (Rprec(rel=2), "l2", "Rprec"), (Bpref(rel=2), "l2", "bpref"), (infAP(rel=2), "l2", "infAP"),
    (Success(rel=2) @ 1, "l2", "success_1"), (Success(rel=2) @ 5, "l2", "success_5"),
    (SetP(rel=2), "l2", "set_P"), (SetR(rel=2), "l2", "set_recall"), (SetF(rel=2), "l2", "set_F"),
    (SetAP(rel=2), "l2", "set_map"), (SetP(rel=2, relative=True), "l2", "set_relative_P"),
    (NumRet(rel=2), "l2", "num_rel_ret"),
    # -J (judged documents only)
    (P(judged_only=True) @ 5, "J", "P_5"), (AP(judged_only=True), "J", "map"),
    (RR(judged_only=True), "J", "recip_rank"), (nDCG(judged_only=True) @ 5, "J", "ndcg_cut_5"),
    (nDCG(judged_only=True), "J", "ndcg"), (Success(judged_only=True) @ 5, "J", "success_5"),
    (SetP(judged_only=True), "J", "set_P"),
    # custom gains (ir-measures maps the qrels values; trec_eval's ndcg takes level=gain pairs)
    (nDCG(gains={0: 0, 1: 3, 2: 9}), "gains", "ndcg_1=3,2=9"),
]

# byte-order traps: "d9" > "d20" > "d10" > "d1", "a" > "D5"
DOCS = ["d1", "d2", "d3", "d9", "d10", "d11", "d20", "D5", "a", "b"]
QIDS = ["1", "2", "10", "q"]


def theirs(qrels: dict, run: dict) -> dict:
    provider = ir_measures.pytrec_eval
    return {(m.query_id, m.measure): m.value for m in provider.iter_calc([p[0] for p in PAIRS], qrels, run)}


def ours(qrels: dict, run: dict) -> dict:
    q, r = Qrels.from_dict(qrels), Run.from_dict(run)
    return {key: evaluate_tables(q, r, specs, **kw) for key, (specs, kw) in OURS.items()}


def disagreements(qrels: dict, our_results: dict, their_values: dict) -> list[tuple]:
    """Every (query, measure, ours, theirs) that differs by more than TOLERANCE."""
    out = []
    query_ids = our_results["l1"].query_ids
    assert sorted(query_ids) == sorted(qrels)
    assert {qid for qid, _ in their_values} == set(query_ids)
    missing = set(our_results["l1"].missing_queries)
    for measure, setting, name in PAIRS:
        result = our_results[setting]
        for qid in query_ids:
            mine = float(result.value(name, qid))
            if measure == NumRel and qid in missing:
                # ir-measures fills a missing query with 0; we report its real R (trec_eval -c)
                other = float(sum(1 for v in qrels[qid].values() if v >= 1))
            else:
                other = their_values[(qid, measure)]
            if abs(mine - other) > TOLERANCE:
                out.append((qid, str(measure), mine, other))
    return out


@st.composite
def qrels_and_run(draw):
    qrels = {}
    for qid in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=len(QIDS), unique=True)):
        judged = draw(st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1, 0, 0, 1, 1, 2]),
                                      min_size=1, max_size=len(DOCS)))
        if all(v < 0 for v in judged.values()):
            judged[next(iter(judged))] = 0  # trec_eval 9 mishandles all-negative queries
        qrels[qid] = judged
    run = {}
    # may drop qrels queries (missing) and add a run-only one ("extra")
    run_qids = st.lists(st.sampled_from(QIDS + ["extra"]), min_size=1, max_size=len(QIDS) + 1, unique=True)
    for qid in draw(run_qids):
        pool = DOCS + ["x1", "x2", "x10"]  # x*: not in any qrels
        docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=12, unique=True))
        # multiples of 1/8 in [-1, 1.5]: exact in float32, and many ties
        run[qid] = {doc: draw(st.integers(-8, 12)) / 8 for doc in docs}
    return qrels, run


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels_and_run())
def test_agrees_with_pytrec_eval_per_query(case):
    qrels, run = case
    event(f"qrels queries missing from the run: {bool(set(qrels) - set(run))}")
    event(f"run-only queries: {bool(set(run) - set(qrels))}")
    event(f"score ties: {any(len(set(docs.values())) < len(docs) for docs in run.values())}")
    event(f"unjudged (-1) retrieved: {any(qrels.get(q, {}).get(d, 0) < 0 for q in run for d in run[q])}")
    bad = disagreements(qrels, ours(qrels, run), theirs(qrels, run))
    assert not bad, f"qrels={qrels!r} run={run!r} disagreements={bad[:10]!r}"


FIXED_QRELS = {"1": {"d1": 1, "d2": 0, "d3": 2, "d9": -1, "d10": 1}, "2": {"a": 1, "b": 0}, "10": {"d1": 2}}
FIXED_RUN = {"1": {"d1": 0.5, "d2": 1.0, "d3": 0.25, "d9": 1.0, "x1": 0.5, "d10": 0.5},
             "2": {"a": 0.125, "b": 0.75}, "extra": {"d1": 1.0}}


def test_fixed_case_agrees():
    bad = disagreements(FIXED_QRELS, ours(FIXED_QRELS, FIXED_RUN), theirs(FIXED_QRELS, FIXED_RUN))
    assert bad == []


def test_comparison_can_fail():
    # a deliberately different run (scores negated) must be caught by the comparison
    reversed_run = {q: {d: -s for d, s in docs.items()} for q, docs in FIXED_RUN.items()}
    bad = disagreements(FIXED_QRELS, ours(FIXED_QRELS, reversed_run), theirs(FIXED_QRELS, FIXED_RUN))
    assert {measure for _, measure, _, _ in bad} >= {"AP", "RR", "nDCG@5", "P@1"}
