"""Hand-computed values for every measure family of the registry.

Every expected value below is arithmetic written out from the definitions in
docs/trec_eval_conventions.md (§8 for the formulas, §2-§4 for ranking and judgments, §5 for the
query set), never a number copied from our own output.

The main example, query "q" (used by most tests):

    qrels  d1:1  d2:0  d3:2  d4:1  d5:0  d6:-1 (in the pool, unjudged)  d7:1 (never retrieved)
    run    d3 5.0 | d2 4.0 | x1 3.0 (not in the pool) | d1 2.0 | d6 1.5 | d4 1.0 | d5 0.5

    rank k     1   2   3   4   5   6   7
    doc        d3  d2  x1  d1  d6  d4  d5
    rel_k      2   0   -1  1   -2  1   0        (-1 not in pool, -2 unjudged)
    rel(k)     1   0   0   1   0   1   0        (relevance level 1)
    cnt(k)     1   1   1   2   2   3   3

    N = 7, R = 4 (d1 d3 d4 d7), judged non-relevant in the qrels NonRel = 2 (d2 d5)
    ideal gains (judged, gain > 0, best first) I = [2, 1, 1, 1]
"""

from __future__ import annotations

import math
from math import log, log2

import pytest

from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.trec.qrels_runs import parse_qrels_text, parse_run_text
from trec_rag_eval.tables import Qrels, Run

pytestmark = pytest.mark.usefixtures("table_form")  # lists and polars frames alike

QRELS = {"q": {"d1": 1, "d2": 0, "d3": 2, "d4": 1, "d5": 0, "d6": -1, "d7": 1}}
RUN = {"q": {"d3": 5.0, "d2": 4.0, "x1": 3.0, "d1": 2.0, "d6": 1.5, "d4": 1.0, "d5": 0.5}}

EPS = 1e-5  # infAP's epsilon
approx = pytest.approx


def run_eval(qrels, run, measures, **kw):
    return evaluate_tables(Qrels.from_dict(qrels), Run.from_dict(run), measures, **kw)


def one(spec, qrels=QRELS, run=RUN, qid="q", **kw):
    """The per-query value of the one measure that ``spec`` names."""
    result = run_eval(qrels, run, [spec], **kw)
    assert len(result.measures) == 1, result.names
    return result.values[result.measures[0]][result.query_ids.index(qid)]


def values(spec, qrels=QRELS, run=RUN, qid="q", **kw):
    """{trec_eval name: per-query value} of every measure that ``spec`` names."""
    result = run_eval(qrels, run, [spec], **kw)
    i = result.query_ids.index(qid)
    return {m.trec_name: result.values[m][i] for m in result.measures}


# DCG pieces of the main example
DCG_Q = 2 / log2(2) + 1 / log2(5) + 1 / log2(7)          # gains 2, 1, 1 at ranks 1, 4, 6
IDCG_Q = 2 / log2(2) + 1 / log2(3) + 1 / log2(4) + 1 / log2(5)   # ideal [2, 1, 1, 1]
DCG_Q_AT4 = 2 / log2(2) + 1 / log2(5)                   # ranks 1..4


MAIN_CASES = [
    # counts
    ("num_ret", 7),
    ("num_rel", 4),                      # d1 d3 d4 d7; d7 is never retrieved but counts
    ("num_rel_ret", 3),                  # d3 d1 d4
    ("num_nonrel_judged_ret", 2),        # d2 d5; x1 (not in pool) and d6 (unjudged) do not count
    # ranked binary measures
    ("map", (1 / 1 + 2 / 4 + 3 / 6) / 4),          # P@k at ranks 1, 4, 6, divided by R = 4
    ("MAP", (1 / 1 + 2 / 4 + 3 / 6) / 4),
    ("AP", (1 / 1 + 2 / 4 + 3 / 6) / 4),
    ("Rprec", 2 / 4),                              # cnt(R = 4) / 4
    ("recip_rank", 1 / 1),
    ("MRR", 1 / 1),
    ("RR", 1 / 1),
    # bpref: d3 (n = 0) adds 1; d2 makes n = 1; x1 and d6 are skipped;
    # d1 and d4 each add 1 - min(1, 4) / min(2, 4) = 1/2; sum 2, divided by R = 4
    ("bpref", (1 + (1 - 1 / 2) + (1 - 1 / 2)) / 4),
    # infAP, j is the 0-based index over every retrieved doc:
    #   j=0 d3 relevant r=1: adds 1;  j=1 d2: n=1;  j=2 x1: nothing
    #   j=3 d1 relevant r=2: 1/4 + (3/4) * ((1+1+0)/3) * ((1+eps)/(1+1+2eps))
    #   j=4 d6 unjudged: u=1
    #   j=5 d4 relevant r=3: 1/6 + (5/6) * ((2+1+1)/5) * ((2+eps)/(2+1+2eps));  j=6 d5: n=2
    ("infAP", (1
               + 1 / 4 + (3 / 4) * (2 / 3) * ((1 + EPS) / (2 + 2 * EPS))
               + 1 / 6 + (5 / 6) * (4 / 5) * ((2 + EPS) / (3 + 2 * EPS))) / 4),
    # precision / recall at k; N = 7 < 10 so P@10 still divides by 10
    ("P.5", 2 / 5),
    ("P@5", 2 / 5),
    ("P.10", 3 / 10),
    ("P.1", 1 / 1),
    ("recall.5", 2 / 4),
    ("R@10", 3 / 4),
    ("relative_P.5", 2 / min(5, 4)),
    ("relative_P.2", 1 / min(2, 4)),
    ("success.1", 1),
    ("HitRate@1", 1),
    # F1@5: P = 2/5, R = 2/4 -> 2PR/(P+R)
    ("F1@5", 2 * (2 / 5) * (2 / 4) / (2 / 5 + 2 / 4)),
    ("F1@1", 2 * (1 / 1) * (1 / 4) / (1 / 1 + 1 / 4)),
    # Rprec_mult: c = floor(p*R + 0.9); P@c
    ("Rprec_mult.0.2", 1 / 1),           # floor(0.8 + 0.9) = 1 -> P@1
    ("Rprec_mult.0.5", 1 / 2),           # floor(2.0 + 0.9) = 2 -> P@2
    ("Rprec_mult.2.0", 3 / 8),           # floor(8.0 + 0.9) = 8 -> cnt(8)/8 = 3/8
    # utility a*RR + b*(N-RR) + c*(R-RR) + d*(Ncoll+RR-N-R); RR = 3, N = 7, R = 4
    ("utility", 1 * 3 - 1 * (7 - 3)),
    ("utility.2,-1,1,0", 2 * 3 - 1 * (7 - 3) + 1 * (4 - 3)),
    # binG: relevant at ranks 1, 4, 6 with 0, 2, 3 non-relevant above them
    ("binG", (1 / log2(2 + 0) + 1 / log2(2 + 2) + 1 / log2(2 + 3)) / 4),
    # G: g = [2,0,0,1,0,1,0], S_k = [2,2,2,3,3,4,4], C_k = cumsum(max(I_j, 1)) = [2,3,4,5,6,7,8];
    # terms where g_k != 0: k=1: 2/log2(2+2-2), k=4: 1/log2(2+5-3), k=6: 1/log2(2+7-4); / sum(I) = 5
    ("G", (2 / log2(2) + 1 / log2(4) + 1 / log2(5)) / 5),
    # graded: the gain is the judgment; the ideal list is not cut to N
    ("dcg", DCG_Q),
    ("ideal_dcg", IDCG_Q),
    ("ndcg", DCG_Q / IDCG_Q),
    ("nDCG", DCG_Q / IDCG_Q),
    # custom gains 1 -> 3, 2 -> 9: run gains [9,0,0,3,0,3,0], ideal [9,3,3,3]
    ("ndcg.1=3,2=9", (9 / log2(2) + 3 / log2(5) + 3 / log2(7))
     / (9 / log2(2) + 3 / log2(3) + 3 / log2(4) + 3 / log2(5))),
    ("dcg.1=3,2=9", 9 / log2(2) + 3 / log2(5) + 3 / log2(7)),
    # ndcg_rel: n = 4 ideal docs, m = 3 retrieved with gain > 0 (ranks 1, 4, 6);
    # (1/n) [DCG@1/IDCG@1 + DCG@4/IDCG@4 + DCG@6/IDCG@4 + (n - m) * DCG@7/IDCG@4]
    ("ndcg_rel", (2 / 2 + DCG_Q_AT4 / IDCG_Q + DCG_Q / IDCG_Q + 1 * DCG_Q / IDCG_Q) / 4),
    # Rndcg: the ideal gain changes after b = 1 (2 -> 1) and b = 4 (1 -> 0); N = 7 >= n + 2 = 6 adds
    # DCG@N/IDCG@n: mean of DCG@1/IDCG@1, DCG@4/IDCG@4, DCG@7/IDCG@4
    ("Rndcg", (2 / 2 + DCG_Q_AT4 / IDCG_Q + DCG_Q / IDCG_Q) / 3),
    # ndcg_cut: both DCG and IDCG cut at k
    ("ndcg_cut.1", (2 / log2(2)) / (2 / log2(2))),
    ("ndcg_cut.3", (2 / log2(2)) / (2 / log2(2) + 1 / log2(3) + 1 / log2(4))),
    ("ndcg_cut.5", DCG_Q_AT4 / IDCG_Q),   # IDCG@5 = IDCG@4: only 4 ideal docs
    ("nDCG@5", DCG_Q_AT4 / IDCG_Q),
    # map_cut: only ranks <= k, still divided by R = 4
    ("map_cut.1", (1 / 1) / 4),
    ("map_cut.5", (1 / 1 + 2 / 4) / 4),
    ("map_cut.10", (1 / 1 + 2 / 4 + 3 / 6) / 4),
    # sets: RR = 3, N = 7, R = 4
    ("set_P", 3 / 7),
    ("set_relative_P", 3 / min(7, 4)),
    ("set_recall", 3 / 4),
    ("set_map", 3 ** 2 / (7 * 4)),
    ("set_F", 2 * (3 / 7) * (3 / 4) / (3 / 7 + 3 / 4)),                        # = 6/11
    ("set_F.0.25", (0.25 + 1) * (3 / 7) * (3 / 4) / (0.25 * (3 / 7) + 3 / 4)),  # = 11.25/24
    # yaap: S = 1/1 + 2/4 + 3/6 = 2 -> log((1+2)/(1+4-2)) = log(1) = 0
    ("yaap", log((1 + 2) / (1 + 4 - 2))),
    # rbp, p = 0.9: gains rescaled g / maxlevel = g / 2 -> [1,0,0,1/2,0,1/2,0]
    ("rbp", (1 - 0.9) * (1 * 0.9 ** 0 + 0.5 * 0.9 ** 3 + 0.5 * 0.9 ** 5)),
    ("rbp.p=0.5", (1 - 0.5) * (1 * 0.5 ** 0 + 0.5 * 0.5 ** 3 + 0.5 * 0.5 ** 5)),
    # rbp_resid: ranks 3 (x1) and 5 (d6) have rel < 0: p^N + (1-p)(p^2 + p^4)
    ("rbp_resid", 0.9 ** 7 + (1 - 0.9) * (0.9 ** 2 + 0.9 ** 4)),
    # unj: x1 and d6 are in the top 5
    ("unj.5", 2 / 5),
    ("unj.10", 2 / 10),
    # Judged@k (ir-measures): judged docs in the top min(k, N): d3 d2 d1 of 5; d3 d2 d1 d4 d5 of 7
    ("Judged@5", 3 / 5),
    ("Judged@10", 5 / 7),
    # ERR@k as gdeval.pl: stopping probability (2^g - 1) / 2^4 (gdeval's maximum judgment is fixed at 4)
    # g = [2,0,0,1,0,1,0] -> R = [3/16, 0, 0, 1/16, 0, 1/16, 0]; sum of (1/r) R_r prod_{i<r} (1 - R_i)
    ("ERR@1", 3 / 16),
    ("ERR@5", 3 / 16 + (1 - 3 / 16) * (1 / 16) / 4),
    ("ERR@10", 3 / 16 + (1 - 3 / 16) * (1 / 16) / 4 + (1 - 3 / 16) * (1 - 1 / 16) * (1 / 16) / 6),
]


@pytest.mark.parametrize("spec, expected", MAIN_CASES, ids=[c[0] for c in MAIN_CASES])
def test_main_example(spec, expected):
    assert one(spec) == approx(expected, rel=1e-12, abs=1e-15)


def test_iprec_at_recall_and_11pt_avg():
    # c = lround(p * R), R = 4. c = 0 or 1 -> best precision anywhere = P@1 = 1;
    # c = 2 -> from rank 4 on: max(P@4, P@5, P@6, P@7) = max(2/4, 2/5, 3/6, 3/7) = 1/2;
    # c = 3 -> from rank 6: max(3/6, 3/7) = 1/2; c = 4 > cnt(N) = 3 -> 0
    got = values("iprec_at_recall")
    expected = {
        0.0: 1.0,        # c = 0
        0.1: 1.0,        # lround(0.4) = 0
        0.2: 1.0,        # lround(0.8) = 1
        0.3: 1.0,        # lround(1.2) = 1
        0.4: 1 / 2,      # lround(1.6) = 2
        0.5: 1 / 2,      # 2
        0.6: 1 / 2,      # lround(2.4) = 2
        0.7: 1 / 2,      # lround(2.8) = 3
        0.8: 1 / 2,      # lround(3.2) = 3
        0.9: 0.0,        # lround(3.6) = 4 > 3
        1.0: 0.0,        # 4 > 3
    }
    assert got == {f"iprec_at_recall_{p:3.2f}": approx(v) for p, v in expected.items()}
    assert one("11pt_avg") == approx((4 * 1.0 + 5 * (1 / 2) + 2 * 0.0) / 11)
    assert one("11pt_avg.0.5,1") == approx((1 / 2 + 0.0) / 2)


def test_iprec_rounds_half_away_from_zero():
    # R = 2, p = 0.25: p*R = 0.5 -> lround gives 1 (Python's round would give 0).
    # Ranking: n r n r -> c = 1 -> from rank 2: max(P@2, P@3, P@4) = max(1/2, 1/3, 2/4) = 1/2;
    # c = 0 would also give 1/2, so use p = 0.75: 1.5 -> 2 -> from rank 4: 2/4 = 1/2, and
    # p = 1.25: 2.5 -> 3 > cnt -> 0 (round() would give 2 -> 1/2).
    qrels = {"q": {"a": 0, "b": 1, "c": 0, "d": 1}}
    run = {"q": {"a": 4, "b": 3, "c": 2, "d": 1}}
    got = values("iprec_at_recall.0.75,1.25", qrels, run)
    assert got == {"iprec_at_recall_0.75": approx(2 / 4), "iprec_at_recall_1.25": 0.0}


def test_relstring():
    # digits for judgments, '-' not in the pool (x1), '.' in the pool but unjudged (d6)
    assert one("relstring") == "20-1.10"
    assert one("relstring.3") == "20-"


def test_utility_fourth_coefficient_uses_collection_size():
    # d * (Ncoll + RR - N - R) = 1 * (100 + 3 - 7 - 4)
    assert one("utility.0,0,0,1", num_docs=100) == approx(100 + 3 - 7 - 4)


# -- the tutorial's example ---------------------------------------------------------------------

SEED_QRELS = {"s": {"a": 3, "b": 2, "c": 3, "d": 0, "e": 1}}
SEED_RUN = {"s": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
# relevance in rank order [3, 2, 3, 0, 1]
# DCG@5  = 3/log2(2) + 2/log2(3) + 3/log2(4) + 0/log2(5) + 1/log2(6)
#        = 3 + 1.2618595 + 1.5 + 0 + 0.3868528               ≈ 6.1487123
# IDCG@5 = ideal [3, 3, 2, 1, 0]: 3/log2(2) + 3/log2(3) + 2/log2(4) + 1/log2(5) + 0/log2(6)
#        = 3 + 1.8927893 + 1 + 0.4306766 + 0                  ≈ 6.3234659
# nDCG@5 = 6.1487123 / 6.3234659                              ≈ 0.9723643
SEED_DCG5 = 3 / log2(2) + 2 / log2(3) + 3 / log2(4) + 0 / log2(5) + 1 / log2(6)
SEED_IDCG5 = 3 / log2(2) + 3 / log2(3) + 2 / log2(4) + 1 / log2(5) + 0 / log2(6)


def test_tutorial_example_written_out():
    assert SEED_DCG5 == approx(6.1487123, abs=1e-7)
    assert SEED_IDCG5 == approx(6.3234659, abs=1e-7)
    assert SEED_DCG5 / SEED_IDCG5 == approx(0.9723643, abs=1e-7)


@pytest.mark.parametrize("spec", ["ndcg_cut.5", "nDCG@5", "ndcg"])
def test_tutorial_ndcg(spec):
    # ndcg (no cut) equals ndcg_cut.5 here: N = 5 and the ideal list has 4 positive gains
    assert one(spec, SEED_QRELS, SEED_RUN, "s") == approx(SEED_DCG5 / SEED_IDCG5, rel=1e-12)


def test_tutorial_dcg_and_ideal_dcg():
    assert one("dcg", SEED_QRELS, SEED_RUN, "s") == approx(SEED_DCG5, rel=1e-12)
    assert one("ideal_dcg", SEED_QRELS, SEED_RUN, "s") == approx(SEED_IDCG5, rel=1e-12)


def test_tutorial_ndcg_ignores_relevance_level():
    # graded measures use raw gains whatever -l says
    got = one("ndcg_cut.5", SEED_QRELS, SEED_RUN, "s", relevance_level=2)
    assert got == approx(SEED_DCG5 / SEED_IDCG5, rel=1e-12)
    # but P@5 counts only judgments >= 2: a, b, c
    assert one("P.5", SEED_QRELS, SEED_RUN, "s", relevance_level=2) == approx(3 / 5)


def test_tutorial_ndcg_cut_3():
    # DCG@3 = 3 + 2/log2(3) + 3/2 ; IDCG@3 = 3 + 3/log2(3) + 2/2
    expected = (3 + 2 / log2(3) + 3 / 2) / (3 + 3 / log2(3) + 2 / 2)
    assert one("nDCG@3", SEED_QRELS, SEED_RUN, "s") == approx(expected, rel=1e-12)


# -- R = 0 ---------------------------------------------------------------------------------------

ZERO_QRELS = {"z": {"a": 0, "b": 0}}
ZERO_RUN = {"z": {"a": 3.0, "b": 2.0, "c": 1.0}}


@pytest.mark.parametrize("spec", [
    "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P.5", "recall.5", "infAP",
    "Rprec_mult.1.0", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut.5",
    "map_cut.5", "relative_P.5", "success.5", "set_P", "set_relative_P", "set_recall", "set_map",
    "set_F", "rbp", "F1@5", "HitRate@5", "nDCG@5", "ERR@5", "11pt_avg",
])
def test_no_relevant_document_scores_zero(spec):
    assert one(spec, ZERO_QRELS, ZERO_RUN, "z") == 0.0


def test_no_relevant_document_other_values():
    # yaap = log((1 + 0)/(1 + 0 - 0)) = 0; utility = 0 - 3; judged a b of 3; num_nonrel_judged_ret a b
    assert one("yaap", ZERO_QRELS, ZERO_RUN, "z") == 0.0
    assert one("utility", ZERO_QRELS, ZERO_RUN, "z") == -3.0
    assert one("Judged@10", ZERO_QRELS, ZERO_RUN, "z") == approx(2 / 3)
    assert one("num_nonrel_judged_ret", ZERO_QRELS, ZERO_RUN, "z") == 2
    assert one("unj.5", ZERO_QRELS, ZERO_RUN, "z") == approx(1 / 5)   # c is not in the pool
    # rbp_resid: c (rank 3) has no judgment -> p^3 + (1 - p) p^2
    assert one("rbp_resid", ZERO_QRELS, ZERO_RUN, "z") == approx(0.9 ** 3 + 0.1 * 0.9 ** 2)


def test_rbp_resid_is_zero_when_everything_is_judged():
    # every retrieved doc judged: 0, although p^N > 0
    assert one("rbp_resid", ZERO_QRELS, {"z": {"a": 1.0, "b": 2.0}}, "z") == 0.0


# -- ties: score descending, then doc_id descending in byte order ---------------------------------

def test_ties_broken_by_doc_id_descending_byte_order():
    # equal scores: "d9" > "d20" > "d10" in byte order, so the ranking is d9, d20, d10
    qrels = {"q": {"d10": 1, "d9": 0, "d20": 0}}
    run = {"q": {"d10": 1.0, "d9": 1.0, "d20": 1.0}}
    assert one("recip_rank", qrels, run) == approx(1 / 3)
    assert one("relstring", qrels, run) == "001"
    # with d9 relevant instead it comes first
    assert one("recip_rank", {"q": {"d10": 0, "d9": 1}}, run) == 1.0


def test_ties_are_case_sensitive_bytes():
    # "a" (0x61) > "B" (0x42): a comes first
    qrels = {"q": {"B": 1, "a": 0}}
    run = {"q": {"B": 2.0, "a": 2.0}}
    assert one("recip_rank", qrels, run) == approx(1 / 2)


def test_rank_column_and_file_order_are_ignored():
    qrels = parse_qrels_text("q 0 d1 1\nq 0 d2 0\n")
    # the rank column says d1 first, the scores say d2 first
    run = parse_run_text("q Q0 d1 1 0.5 t\nq Q0 d2 2 0.9 t\n")
    result = evaluate_tables(qrels, run, ["recip_rank"])
    assert result.value("recip_rank", "q") == approx(1 / 2)


# -- unjudged (-1) vs not in the pool --------------------------------------------------------------

def test_infap_counts_unjudged_but_not_unpooled():
    # ranking: n(judged 0), x (-1 unjudged or absent), r
    # unjudged: at j=2, r=1, n=1, u=1: 1/3 + (2/3) * ((0+1+1)/2) * ((0+eps)/(0+1+2eps))
    # not in the pool: u=0:            1/3 + (2/3) * ((0+1+0)/2) * ((0+eps)/(0+1+2eps))
    run = {"q": {"n": 3.0, "x": 2.0, "r": 1.0}}
    unjudged = one("infAP", {"q": {"n": 0, "x": -1, "r": 1}}, run)
    unpooled = one("infAP", {"q": {"n": 0, "r": 1}}, run)
    assert unjudged == approx(1 / 3 + (2 / 3) * (2 / 2) * (EPS / (1 + 2 * EPS)), rel=1e-12)
    assert unpooled == approx(1 / 3 + (2 / 3) * (1 / 2) * (EPS / (1 + 2 * EPS)), rel=1e-12)


def test_unjudged_is_neither_relevant_nor_judged_nonrelevant():
    # -1 in the qrels: not in R, not in NonRel, skipped by bpref, shown as '.'
    qrels = {"q": {"u": -1, "n": 0, "r": 1}}
    run = {"q": {"u": 3.0, "n": 2.0, "r": 1.0}}
    assert one("num_rel", qrels, run) == 1
    assert one("num_nonrel_judged_ret", qrels, run) == 1
    # bpref: u skipped, n -> n=1, r adds 1 - min(1,1)/min(1,1) = 0
    assert one("bpref", qrels, run) == 0.0
    assert one("relstring", qrels, run) == ".01"
    # recip_rank: u still takes rank 1
    assert one("recip_rank", qrels, run) == approx(1 / 3)


# -- options: -l, -M, -J ---------------------------------------------------------------------------

def test_relevance_level_2():
    # -l 2: only d3 is relevant, R = 1; judged non-relevant d1 d2 d4 d5 d7 (0 <= rel < 2)
    assert one("num_rel", relevance_level=2) == 1
    assert one("map", relevance_level=2) == approx(1 / 1)
    assert one("P.5", relevance_level=2) == approx(1 / 5)
    assert one("num_nonrel_judged_ret", relevance_level=2) == 4     # d2 d1 d4 d5
    assert one("bpref", relevance_level=2) == approx(1.0)           # d3 first, n = 0
    assert one("set_P", relevance_level=2) == approx(1 / 7)
    # graded measures ignore -l
    assert one("ndcg", relevance_level=2) == approx(DCG_Q / IDCG_Q)


def test_max_retrieved():
    # -M 3: d3 d2 x1; cnt = 1 1 1
    assert one("num_ret", max_retrieved=3) == 3
    assert one("map", max_retrieved=3) == approx((1 / 1) / 4)
    assert one("P.5", max_retrieved=3) == approx(1 / 5)
    assert one("ndcg", max_retrieved=3) == approx((2 / log2(2)) / IDCG_Q)
    assert one("num_ret", max_retrieved=0) == 0
    assert one("map", max_retrieved=0) == 0.0


def test_judged_only():
    # -J removes x1 (not in pool) and d6 (unjudged): d3 d2 d1 d4 d5, rel 2 0 1 1 0, ranks close up
    assert one("num_ret", judged_only=True) == 5
    assert one("map", judged_only=True) == approx((1 / 1 + 2 / 3 + 3 / 4) / 4)
    assert one("P.5", judged_only=True) == approx(3 / 5)
    assert one("relstring", judged_only=True) == "20110"
    assert one("ndcg", judged_only=True) == approx((2 / log2(2) + 1 / log2(4) + 1 / log2(5)) / IDCG_Q)


def test_max_retrieved_applies_before_judged_only():
    # -M 3 keeps d3 d2 x1, then -J drops x1: N = 2 (not 3, which -J then -M would give)
    assert one("num_ret", max_retrieved=3, judged_only=True) == 2
    assert one("map", max_retrieved=3, judged_only=True) == approx((1 / 1) / 4)


# -- which queries count ---------------------------------------------------------------------------

TWO_QRELS = {"q": QRELS["q"], "m": {"a": 1, "b": 2, "c": 0}}


def test_qrels_query_missing_from_run_scores_zero():
    result = run_eval(TWO_QRELS, RUN, ["map", "P.5", "ndcg", "num_ret", "num_rel", "recip_rank", "bpref"])
    assert result.query_ids == ["m", "q"]          # byte order
    assert result.missing_queries == ["m"]
    for name in ("map", "P_5", "ndcg", "num_ret", "recip_rank", "bpref"):
        assert result.value(name, "m") == 0.0, name
    assert result.value("num_rel", "m") == 2          # its real R (trec_eval -c)
    # means divide by 2 queries: map (0 + 1/2) / 2
    assert result.value("map") == approx((0 + (1 / 1 + 2 / 4 + 3 / 6) / 4) / 2)
    assert result.value("num_rel") == 2 + 4            # a sum


def test_run_only_query_is_ignored():
    run = {**RUN, "extra": {"a": 1.0, "b": 0.5}}
    result = run_eval(QRELS, run, ["map", "num_ret"])
    assert result.query_ids == ["q"]
    assert result.extra_queries == ["extra"]
    assert result.value("map") == approx((1 / 1 + 2 / 4 + 3 / 6) / 4)
    assert result.value("num_ret") == 7


# -- summary-only and aggregate rules ---------------------------------------------------------------

def test_num_q_and_sums():
    run = {**RUN, "z": ZERO_RUN["z"]}
    result = run_eval({**QRELS, **ZERO_QRELS}, run, ["num_q", "num_ret", "num_rel", "num_rel_ret",
                                                      "num_nonrel_judged_ret", "P.5"])
    assert result.value("num_q") == 2
    assert result.value("num_ret") == 7 + 3
    assert result.value("num_rel") == 4 + 0
    assert result.value("num_rel_ret") == 3 + 0
    assert result.value("num_nonrel_judged_ret") == 2 + 2
    assert result.value("P_5") == approx((2 / 5 + 0) / 2)


def test_gm_map_and_gm_bpref_are_floored_geometric_means():
    # q: AP = 1/2, bpref = 1/2; z: AP = 0 and bpref = 0, floored at 1e-5
    run = {**RUN, "z": ZERO_RUN["z"]}
    result = run_eval({**QRELS, **ZERO_QRELS}, run, ["gm_map", "gm_bpref"])
    assert result.value("gm_map") == approx(math.exp((log(1 / 2) + log(1e-5)) / 2), rel=1e-12)
    assert result.value("gm_bpref") == approx(math.exp((log(1 / 2) + log(1e-5)) / 2), rel=1e-12)


def test_gm_map_single_query_is_its_ap():
    result = run_eval(QRELS, RUN, ["gm_map"])
    assert result.value("gm_map") == approx(1 / 2)


# -- smaller families, second queries ----------------------------------------------------------------

def test_success_and_hitrate_first_relevant_at_3():
    qrels = {"q": {"a": 0, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert values("success.1,2,3", qrels, run) == {"success_1": 0, "success_2": 0, "success_3": 1}
    assert one("HitRate@3", qrels, run) == 1
    assert one("HitRate@1", qrels, run) == 0
    assert one("MRR", qrels, run) == approx(1 / 3)


def test_yaap_nonzero():
    # ranking n r r; R = 3 (one never retrieved); S = 1/2 + 2/3; log((1 + S)/(1 + 3 - S))
    qrels = {"q": {"a": 0, "b": 1, "c": 1, "d": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    s = 1 / 2 + 2 / 3
    assert one("yaap", qrels, run) == approx(log((1 + s) / (1 + 3 - s)), rel=1e-12)


def test_rbp_binary_gains_are_not_rescaled():
    # binary qrels: gains stay 0/1; ranking r n r: (1 - p)(p^0 + p^2)
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert one("rbp", qrels, run) == approx(0.1 * (1 + 0.9 ** 2))


def test_rndcg_no_extra_point_when_n_equals_n_plus_1():
    # ideal I = [1] (n = 1), ranking n r (N = 2 = n + 1): only the point b = 1: DCG@1/IDCG@1 = 0/1
    qrels = {"q": {"a": 0, "b": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    assert one("Rndcg", qrels, run) == 0.0
    # N = 3 >= n + 2 adds DCG@3/IDCG@1 = (1/log2(3)) / 1: mean of 0 and that
    run3 = {"q": {"a": 2.0, "b": 1.0, "c": 0.5}}
    assert one("Rndcg", qrels, run3) == approx((0 + 1 / log2(3)) / 2)


def test_f1_is_zero_when_precision_and_recall_are_zero():
    qrels = {"q": {"a": 0, "b": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    assert one("F1@1", qrels, run) == 0.0
    # F1@3: P = 1/3, R = 1/1
    assert one("F1@3", qrels, run) == approx(2 * (1 / 3) * 1 / (1 / 3 + 1))


def test_ndcg_ideal_not_cut_to_num_ret():
    # one doc retrieved (gain 1) but ideal [2, 1]: ndcg = 1 / (2 + 1/log2(3)); ndcg_cut.1 = 1/2
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 1.0}}
    assert one("ndcg", qrels, run) == approx(1 / (2 + 1 / log2(3)))
    assert one("ndcg_cut.1", qrels, run) == approx(1 / 2)
    assert one("ndcg_cut.10", qrels, run) == approx(1 / (2 + 1 / log2(3)))


def test_missing_query_special_values():
    # trec_eval -c evaluates a missing query against one dummy doc that is in no qrels, then
    # forces num_ret, utility, unj, rbp_resid to 0 and relstring to ''. Query m: a:1 b:2 c:0.
    result = run_eval(TWO_QRELS, RUN, ["utility", "unj.5", "rbp_resid", "relstring", "ideal_dcg", "yaap",
                                       "num_nonrel_judged_ret", "Judged@5"])
    for name in ("utility", "unj_5", "rbp_resid", "num_nonrel_judged_ret"):
        assert result.value(name, "m") == 0.0, name
    assert result.value("relstring", "m") == ""
    # its real IDCG: ideal [2, 1]
    assert result.value("ideal_dcg", "m") == approx(2 / log2(2) + 1 / log2(3))
    # yaap is not reset: S = 0, R = 2 -> log((1 + 0)/(1 + 2 - 0))
    assert result.value("yaap", "m") == approx(log(1 / 3))


def test_gm_map_counts_a_missing_query_at_the_floor():
    result = run_eval(TWO_QRELS, RUN, ["gm_map"])
    assert result.value("gm_map") == approx(math.exp((log(1e-5) + log(1 / 2)) / 2), rel=1e-12)


def test_rprec_mult_with_a_negative_multiplier_is_plain_zero(tmp_path):
    # c = floor(-1 * R + 0.9) is negative for every query: no rank to take a precision at, so 0,
    # as trec_eval prints it ('0.0000'); 0 / c gave -0.0, printed '-0.0000'
    from conftest import invoke

    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n1 0 b 1\n2 0 a 1\n")
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 a 1 3 r\n2 Q0 b 1 3 r\n")
    result = invoke("-f", "trec", "-q", "-m", "Rprec_mult.-1", str(qrels), str(run))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"Rprec_mult_-1.00      \t{q}\t0.0000" for q in ("1", "2", "all")]


def test_ndcg_variants_evaluated_together_keep_their_own_gains_and_ideals():
    """nDCG at several cutoffs share the scan of the rows for gains and the ideal rankings (cached
    per ranking); variants with other gains, dcg or ideal each keep their own. Main example, k = 5:
    DCG@5 = 2/log2(2) + 1/log2(5) (ranks 1 and 4)."""
    specs = ["nDCG@5", "nDCG@3", "nDCG(gains={1:3,2:9})@5", "nDCG(dcg='exp-log2')@5", "nDCG(ideal='retrieved')@5"]
    result = run_eval(QRELS, RUN, specs)
    got = {str(m): result.values[m][0] for m in result.measures}
    assert got["nDCG@5"] == approx(DCG_Q_AT4 / IDCG_Q)  # all 4 ideal docs fit in 5
    assert got["nDCG@3"] == approx((2 / log2(2)) / (2 / log2(2) + 1 / log2(3) + 1 / log2(4)))
    # gains 1 -> 3, 2 -> 9: run [9, ., ., 3, .], ideal [9, 3, 3, 3]
    assert got["nDCG(gains={1:3,2:9})@5"] == approx(
        (9 / log2(2) + 3 / log2(5)) / (9 / log2(2) + 3 / log2(3) + 3 / log2(4) + 3 / log2(5)))
    # 2^g - 1: run [3, ., ., 1, .], ideal [3, 1, 1, 1]
    assert got["nDCG(dcg='exp-log2')@5"] == approx(
        (3 / log2(2) + 1 / log2(5)) / (3 / log2(2) + 1 / log2(3) + 1 / log2(4) + 1 / log2(5)))
    # the ideal of the retrieved documents only: [2, 1, 1] (d7 was never retrieved)
    assert got["nDCG(ideal='retrieved')@5"] == approx(DCG_Q_AT4 / (2 / log2(2) + 1 / log2(3) + 1 / log2(4)))
