"""Intent-aware measures over ndeval's subtopic qrels (``query_id subtopic doc_id relevance``): values
worked out by hand, the format read, converted and refused where it would lose subtopics, and 200
seeded random pairs against ir_measures' pyndeval provider, query by query, to 1e-9.

The example (subtopics 1 to 4 of query 1; alpha = beta = 0.5):

    qrels  a: s1 relevant, s2 judged 0    b: s2 (2)    c: s3    d: s1    e: s4 judged 0
           S = 3 subtopics with a relevant document (s4 has none)
    run    x 3.0 | a 2.0 | d 2.0 | b 1.0 | c 0.5      (a and d tie: d ranks first, doc_id descending)

    rank i        1    2     3     4     5
    document      x    d     a     b     c
    score_i       0    1     0.5   1     1        (a is the second document on s1: (1 - 0.5)^1)

    greedy ideal: d (1, the larger doc_id of a, d), c (1), b (1), a (0.5), e (0)
"""

from __future__ import annotations

from math import log2

import pytest
from conftest import first_by_default
from peer_data import random_pair

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels
from trec_rag_eval.measures.ir_notation import parse_notation
from trec_rag_eval.tables import Qrels, Run

QRELS_TEXT = "1 1 a 1\n1 2 a 0\n1 2 b 2\n1 3 c 1\n1 1 d 1\n1 4 e 0\n2 1 f 1\n"
RUN = {"1": {"x": 3.0, "a": 2.0, "d": 2.0, "b": 1.0, "c": 0.5}}

pytestmark = pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")


@pytest.fixture
def qrels_file(tmp_path):
    path = tmp_path / "diversity.qrels"
    path.write_text(QRELS_TEXT)
    return path


def _values(qrels_file, *measures: str) -> dict[str, float]:
    result = evaluate_tables(read_trec_qrels(qrels_file), Run.from_dict(RUN), list(measures))
    assert all(result.per_query["2"][m] == 0.0 for m in result.names)  # missing from the run
    return dict(result.per_query["1"])


def test_intent_aware_measures_by_hand(qrels_file) -> None:
    scores = [0, 1, 0.5, 1, 1]
    ideal = [1, 1, 1, 0.5, 0]
    dcg = sum(s / log2(i + 2) for i, s in enumerate(scores))
    ideal_dcg = sum(s / log2(i + 2) for i, s in enumerate(ideal))
    ideal_ideal_dcg = sum(3 * 0.5**i / log2(i + 2) for i in range(5))  # S = 3 at every rank, discounted
    err = sum(s / (i + 1) for i, s in enumerate(scores))
    ideal_err = sum(s / (i + 1) for i, s in enumerate(ideal))
    ideal_ideal_err = sum(3 * 0.5**i / (i + 1) for i in range(5))
    nrbp = sum(s * 0.5**i for i, s in enumerate(scores)) * (1 - 0.5 * 0.5) / 3
    ideal_nrbp = sum(s * 0.5**i for i, s in enumerate(ideal)) * (1 - 0.5 * 0.5) / 3
    # AP per subtopic: s1 has d (rank 2, 1st) and a (rank 3, 2nd): (1/2 + 2/3) / 2; s2 b at 4: 1/4; s3 c at 5
    ap_ia = ((1 / 2 + 2 / 3) / 2 + 1 / 4 + 1 / 5) / 3
    values = _values(qrels_file, "alpha_DCG@5", "alpha_nDCG@5", "ERR_IA@5", "nERR_IA@5", "NRBP", "nNRBP",
                     "P_IA@5", "AP_IA", "StRecall@2", "StRecall@5", "alpha_DCG@2", "P@5")
    assert values == pytest.approx({
        "alpha_DCG@5": dcg / ideal_ideal_dcg, "alpha_nDCG@5": dcg / ideal_dcg, "ERR_IA@5": err / ideal_ideal_err,
        "nERR_IA@5": err / ideal_err, "NRBP": nrbp, "nNRBP": nrbp / ideal_nrbp,
        "P_IA@5": 4 / (5 * 3),  # (d, s1), (a, s1), (b, s2), (c, s3) in the top 5
        "AP_IA": ap_ia, "StRecall@2": 1 / 3, "StRecall@5": 1.0,
        "alpha_DCG@2": (1 / log2(3)) / (3 + 1.5 / log2(3)),
        # every other measure reads a document's highest judgment: a, b, c, d are relevant
        "P@5": 4 / 5,
    }, abs=1e-12)


def test_ndeval_does_not_divide_at_rank_one(qrels_file) -> None:
    # ndeval normalises alpha-DCG and ERR-IA from rank 2 on: at k = 1 they are the first score itself
    run = Run.from_dict({"1": {"d": 2.0, "b": 1.0}})
    result = evaluate_tables(read_trec_qrels(qrels_file), run, ["alpha_DCG@1", "ERR_IA@1", "alpha_nDCG@1"])
    assert dict(result.per_query["1"]) == {"alpha_DCG@1": 1.0, "ERR_IA@1": 1.0, "alpha_nDCG@1": 1.0}


def test_alpha_and_beta_parameters(qrels_file) -> None:
    # alpha = 0: no novelty discount, a gains 1 at rank 3; beta = 0.9 in NRBP's weights
    values = _values(qrels_file, "alpha_nDCG(alpha=0.0)@3", "NRBP(alpha=0.5,beta=0.9)")
    ideal = 1 + 1 / log2(3) + 1 / log2(4)  # d, a, then b/c: every relevant document gains 1
    assert values["alpha_nDCG(alpha=0.0)@3"] == pytest.approx((1 / log2(3) + 1 / 2) / ideal, abs=1e-12)
    assert values["NRBP(alpha=0.5,beta=0.9)"] == pytest.approx(  # the name as asked (alpha=0.5 is the default)
        (1 * 0.9 + 0.5 * 0.81 + 0.9**3 + 0.9**4) * (1 - 0.5 * 0.9) / 3, abs=1e-12)


def test_ir_measures_spellings() -> None:
    assert parse_notation("α_nDCG@5") == parse_notation("alpha_nDCG@5")
    assert str(parse_notation("α_nDCG@5")) == "α_nDCG@5"
    assert parse_notation("MAP_IA") == parse_notation("AP_IA") and str(parse_notation("MAP_IA")) == "MAP_IA"
    for text in ["alpha_nDCG(alpha=0.3)@10", "NRBP(alpha=0.3,beta=0.8)", "ERR_IA(rel=2)@20", "StRecall@10"]:
        assert str(parse_notation(text)) == text


def test_the_same_subtopic_judged_twice_is_an_error(tmp_path) -> None:
    path = tmp_path / "bad.qrels"
    path.write_text("1 1 a 1\n1 2 a 0\n1 2 a 1\n")
    with pytest.raises(InputFormatError) as caught:
        read_trec_qrels(path)
    assert str(caught.value) == (f"{path}:3: document 'a' judged twice for query '1' in iteration (subtopic) '2' "
                                 "(first at line 2)")


def test_parquet_and_json_round_trips_keep_the_subtopics(run_cli, qrels_file, tmp_path) -> None:
    parquet, back, json_file, json_back = (tmp_path / "q.parquet", tmp_path / "back.qrels", tmp_path / "q.json",
                                           tmp_path / "json_back.qrels")
    assert run_cli("convert", str(qrels_file), "--qrels", str(parquet)).exit_code == 0
    assert run_cli("convert", str(parquet), "--qrels", str(back)).exit_code == 0
    assert back.read_text() == QRELS_TEXT
    assert run_cli("convert", str(qrels_file), "--json", str(json_file)).exit_code == 0
    assert run_cli("convert", str(json_file), "--qrels", str(json_back)).exit_code == 0
    assert sorted(json_back.read_text().splitlines()) == sorted(QRELS_TEXT.splitlines())  # grouped by subtopic
    import json

    item = json.loads(json_file.read_text())[0]
    # relevant / non_relevant: each document's highest grade, for readers that know no subtopic
    assert item["relevant"] == {"a": 1, "b": 2, "c": 1, "d": 1} and item["non_relevant"] == {"e": 0}
    assert item["subtopics"] == {"1": {"a": 1, "d": 1}, "2": {"a": 0, "b": 2}, "3": {"c": 1}, "4": {"e": 0}}
    run = Run.from_dict(RUN)
    from trec_rag_eval.io.loading import load_qrels

    measures = ["alpha_nDCG@5", "AP_IA", "nNRBP", "P@5"]
    expected = evaluate_tables(read_trec_qrels(qrels_file), run, measures).to_dict()
    for path in (parquet, json_file, json_back):
        assert evaluate_tables(load_qrels(path), run, measures).to_dict() == expected


def test_a_json_item_judging_a_document_twice_for_a_subtopic_is_refused(tmp_path) -> None:
    from trec_rag_eval.io.loading import load_qrels

    path = tmp_path / "bad.json"
    path.write_text('[{"id": "1", "relevant": ["a"], "subtopics": {"1": {"a": 1}, "2": "a"}}]')
    with pytest.raises(InputFormatError, match="expected a list of document ids"):
        load_qrels(path)
    path.write_text('[{"id": "1", "relevant": ["a"], "subtopics": ["a"]}]')
    with pytest.raises(InputFormatError, match="expected an object"):
        load_qrels(path)


def test_a_dataframe_with_an_iteration_column_is_read_the_same(qrels_file) -> None:
    pd = pytest.importorskip("pandas")
    rows = [line.split() for line in QRELS_TEXT.splitlines()]
    frame = pd.DataFrame({"query_id": [r[0] for r in rows], "iteration": [r[1] for r in rows],
                          "doc_id": [r[2] for r in rows], "relevance": [int(r[3]) for r in rows]})
    run = Run.from_dict(RUN)
    measures = ["alpha_nDCG@5", "NRBP", "P@5"]
    from_frame = evaluate_tables(Qrels(frame), run, measures).to_dict()
    assert from_frame == evaluate_tables(read_trec_qrels(qrels_file), run, measures).to_dict()


MEASURES = ["alpha_nDCG@5", "alpha_nDCG@20", "alpha_DCG@10", "alpha_DCG@1", "ERR_IA@5", "ERR_IA@20", "nERR_IA@10",
            "nERR_IA@1", "NRBP", "nNRBP", "NRBP(alpha=0.3,beta=0.8)", "nNRBP(beta=0.9)", "P_IA@5", "P_IA@20",
            "AP_IA", "StRecall@5", "StRecall@20", "alpha_nDCG(alpha=0.2)@10", "AP_IA(rel=2)", "P@5", "nDCG@10"]


@pytest.mark.parametrize("block", first_by_default(range(4)))  # 50 pairs by default, 200 with -m slow
def test_200_seeded_pairs_agree_with_pyndeval(block: int) -> None:
    pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    seen: set[str] = set()
    for seed in range(block * 50, block * 50 + 50):
        qrels, run = random_pair(seed, subtopics=4)
        report = crosscheck_tables(qrels, run, MEASURES, tolerance=1e-9)
        assert report.ok, (seed, report.render())
        for verdict in report.verdicts:
            if verdict.measure in ("P@5", "nDCG@10"):  # one judgment per document: pytrec_eval agrees
                assert verdict.provider == "pytrec_eval" and set(verdict.conventions) <= {"float32"}
                continue
            assert verdict.provider == "pyndeval", (seed, report.render())
            allowed = {"tie_order"} | ({"no_subtopic"} if verdict.measure.startswith("nNRBP") else set())
            assert set(verdict.conventions) <= allowed, (seed, report.render())
            seen |= set(verdict.conventions)
    assert "tie_order" in seen


def test_num_rel_recounted_under_c_counts_each_document_once(tmp_path) -> None:
    # a is relevant under subtopics 1 and 2 of query 1: one relevant document, as every measure but the
    # intent-aware ones reads it. Relevant documents: a, b (query 1), c (query 2): 3, not the 4 relevant lines;
    # -c recounts num_rel over the judgments (0-judged d not counted), whatever the run retrieved
    path = tmp_path / "twice.qrels"
    path.write_text("1 1 a 1\n1 2 a 2\n1 1 b 1\n1 2 d 0\n2 1 c 1\n")
    run = Run.from_dict({"1": {"a": 2.0, "x": 1.0}})
    per_query = evaluate_tables(read_trec_qrels(path), run, ["num_rel"])
    recounted = evaluate_tables(read_trec_qrels(path), run, ["num_rel"], complete=True)
    assert [per_query.per_query[q]["num_rel"] for q in ("1", "2")] == [2, 1]
    assert per_query.summary["num_rel"] == recounted.summary["num_rel"] == 3
