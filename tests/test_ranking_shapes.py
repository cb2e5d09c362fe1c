"""One ranking rule per shape, wherever the data comes from.

A list of hits is an ordered list: ranked as given, best first, from memory, a JSON or JSONL file, a
search engine, or a TREC file ``convert`` wrote from it. A ``{doc_id: score}`` mapping (pytrec_eval's
and ranx's shape, in memory or in JSON), a DataFrame and a TREC run are scored: trec_eval's rule
(score descending, then doc id descending). One dataset, with distances (scores that rise along the
list) and with tied scores, goes through every shape and format; the expected values are worked out
by hand below, and the TREC files are also read by trec_eval 10 itself.

    q1: a (0.1), b (0.4), c (0.9): distances, a relevant.   As listed: a first.   By score: c, b, a.
    q2: a (1.0), b (1.0): tied, a relevant.                 As listed: a first.   By score: b, a (doc id desc).
    q3: y (0.9), z (0.5), x (0.2): falling, x and z relevant. Both rules: y, z, x.

    as listed:  RR 1, 1, 1/2     P@1 1, 1, 0   AP 1, 1, (1/2 + 2/3) / 2 = 7/12
    by score:   RR 1/3, 1/2, 1/2 P@1 0, 0, 0   AP 1/3, 1/2, 7/12
"""

from __future__ import annotations

import json
import subprocess
import warnings
from types import SimpleNamespace

import pytest
from conftest import NO_TREC_EVAL, invoke, trec_eval_binary

import trec_rag_eval as tre
from trec_rag_eval.core import ranking
from trec_rag_eval.errors import TrecRagEvalWarning
from trec_rag_eval.io.ranked_lists import list_scores, order_warning

TREC_EVAL = trec_eval_binary()
MEASURES = ["RR", "P@1", "AP"]
QRELS = {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"a": 1, "b": 0}, "q3": {"x": 1, "y": 0, "z": 1}}
HITS = {"q1": [("a", 0.1), ("b", 0.4), ("c", 0.9)], "q2": [("a", 1.0), ("b", 1.0)],
        "q3": [("y", 0.9), ("z", 0.5), ("x", 0.2)]}
AS_LISTED = {"q1": {"RR": 1.0, "P@1": 1.0, "AP": 1.0}, "q2": {"RR": 1.0, "P@1": 1.0, "AP": 1.0},
             "q3": {"RR": 0.5, "P@1": 0.0, "AP": 7 / 12}}
BY_SCORE = {"q1": {"RR": 1 / 3, "P@1": 0.0, "AP": 1 / 3}, "q2": {"RR": 0.5, "P@1": 0.0, "AP": 0.5},
            "q3": {"RR": 0.5, "P@1": 0.0, "AP": 7 / 12}}
WARNING = order_warning(["q1"])          # q1's distances rise along its list; q2's ties do not contradict it
DATASET = [{"id": q, "query": f"text of {q}", "relevant": [d for d, r in docs.items() if r],
            "non_relevant": [d for d, r in docs.items() if not r]} for q, docs in QRELS.items()]


def _values(evaluation):
    return {q: {m: pytest.approx(v) for m, v in row.items()} for q, row in evaluation.per_query.items()}


def _approx(expected, digits=None):
    tolerance = None if digits is None else 0.5 * 10 ** -digits   # trec_eval prints 4 decimals
    return {q: {m: pytest.approx(v, abs=tolerance) for m, v in row.items()} for q, row in expected.items()}


def _said(call):
    """What ``call`` returns, and the text of its TrecRagEvalWarnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = call()
    return value, [str(w.message) for w in caught if issubclass(w.category, TrecRagEvalWarning)]


def _order_warnings(said):
    return [text for text in said if "rise along" in text]


def _trec_eval(qrels_path, run_path):
    """trec_eval 10's per-query values of RR, P@1 and AP, as {query: {measure: value}}."""
    out = subprocess.run([TREC_EVAL, "-q", "-m", "recip_rank", "-m", "P.1", "-m", "map", str(qrels_path),
                          str(run_path)], capture_output=True, text=True, check=True).stdout
    names = {"recip_rank": "RR", "P_1": "P@1", "map": "AP"}
    values: dict[str, dict[str, float]] = {}
    for line in out.splitlines():
        name, query, value = line.split()
        if query != "all":
            values.setdefault(query, {})[names[name]] = float(value)
    return values


def _write_qrels(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items() for d, r in docs.items()))
    return path


def _json_hits(tmp_path):
    path = tmp_path / "hits.json"
    path.write_text(json.dumps({q: [{"id": d, "score": s} for d, s in hits] for q, hits in HITS.items()}))
    return path


# --- the rule itself --------------------------------------------------------------------------------
def test_a_list_keeps_falling_scores_and_otherwise_gets_n_down_to_1():
    assert list_scores([0.9, 0.5, 0.2]) == ([0.9, 0.5, 0.2], False)
    assert list_scores([1.0, 1.0]) == ([2.0, 1.0], False)             # ties: the list decides, silently
    assert list_scores([1.0, 1.0], ["a", "b"]) == ([2.0, 1.0], False)
    # ties already in trec_eval's tie order (doc id descending, byte order): kept, as a TREC run written as JSON
    assert list_scores([2.0, 1.0, 1.0], ["x", "b", "a"]) == ([2.0, 1.0, 1.0], False)
    assert list_scores([1.0, 1.0], ["é", "z"]) == ([1.0, 1.0], False)   # b"\xc3\xa9" > b"z"
    assert list_scores([0.1, 0.4, 0.9]) == ([3.0, 2.0, 1.0], True)    # rising: contradicts the order
    assert list_scores([None, None]) == ([2.0, 1.0], False)           # no scores
    assert list_scores([]) == ([], False)


# --- ordered lists: every shape and file gives the values worked out by hand ---------------------------
def _hit_dicts():
    return {q: [{"id": d, "score": s} for d, s in hits] for q, hits in HITS.items()}


def _pairs():
    return {q: list(hits) for q, hits in HITS.items()}


def _langchain():
    # LangChain's similarity_search_with_score: (Document, score) pairs, the id in the metadata
    return {q: [(SimpleNamespace(id=None, metadata={"id": d}, page_content=""), s) for d, s in hits]
            for q, hits in HITS.items()}


@pytest.mark.parametrize("shape", [_hit_dicts, _pairs, _langchain])
def test_hits_in_memory_are_ranked_as_listed_and_rising_scores_are_said(shape):
    evaluation, said = _said(lambda: tre.evaluate(QRELS, shape(), MEASURES))
    assert _values(evaluation) == _approx(AS_LISTED)
    assert said == [f"run (dict): {WARNING}"]


def test_id_lists_without_scores_are_ranked_as_listed():
    evaluation, said = _said(lambda: tre.evaluate(QRELS, {q: [d for d, _ in hits] for q, hits in HITS.items()},
                                                  MEASURES))
    assert _values(evaluation) == _approx(AS_LISTED) and said == []


def test_an_engine_s_results_are_ranked_as_listed():
    def engine(query, k):
        return [{"id": d, "score": s} for d, s in HITS[query.split()[-1]]][:k]

    report, said = _said(lambda: tre.Evaluator(engine).evaluate(DATASET, measures=MEASURES, depth=10))
    assert {q: dict(row) for q, row in report.per_query.items()} == _approx(AS_LISTED)
    assert said == [f"<engine engine>: {WARNING}"]
    assert report.outcome.disordered_queries == ["q1"]


def test_json_and_jsonl_files_are_ranked_as_listed(tmp_path):
    objects = _json_hits(tmp_path)
    rows = tmp_path / "hits.jsonl"
    rows.write_text("".join(json.dumps({"query_id": q, "results": [{"doc_id": d, "score": s} for d, s in hits]}) + "\n"
                            for q, hits in HITS.items()))
    pairs = tmp_path / "pairs.json"                       # json.dumps of the (id, score) pairs in memory
    pairs.write_text(json.dumps(_pairs()))
    for path in (objects, rows, pairs):
        evaluation, said = _said(lambda path=path: tre.evaluate(QRELS, str(path), MEASURES))
        assert _values(evaluation) == _approx(AS_LISTED), path
        assert _order_warnings(said) == [f"{path}: {WARNING}"]
        run, said = _said(lambda path=path: tre.read_run(str(path)))
        assert _values(tre.evaluate(QRELS, run, MEASURES)) == _approx(AS_LISTED)
        assert said == [f"{path}: {WARNING}"]


def test_compare_ranks_a_list_alike_in_memory_and_in_a_file(tmp_path):
    path = _json_hits(tmp_path)
    comparison, said = _said(lambda: tre.compare(QRELS, {"memory": _hit_dicts(), "file": str(path)}, MEASURES))
    assert comparison.per_query["memory"] == comparison.per_query["file"] == _approx(AS_LISTED)
    assert _order_warnings(said) == [f"run 'memory' (dict): {WARNING}", f"{path}: {WARNING}"]


def test_the_command_line_ranks_a_json_list_as_listed_and_says_the_same(tmp_path):
    qrels, path = _write_qrels(tmp_path), _json_hits(tmp_path)
    result = invoke("-q", "-m", "recip_rank", str(qrels), str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [f"recip_rank            \t{q}\t{v}"
                                              for q, v in (("q1", "1.0000"), ("q2", "1.0000"), ("q3", "0.5000"))]
    assert WARNING in result.stderr
    compared = invoke("compare", "-m", "RR", str(qrels), str(path), str(path))
    assert compared.exit_code == 0 and compared.stderr.count(WARNING) == 2


def test_convert_writes_a_list_trec_eval_ranks_as_listed(tmp_path):
    qrels, path = _write_qrels(tmp_path), _json_hits(tmp_path)
    run = tmp_path / "hits.run"
    result = invoke("convert", str(path), "--run", str(run))
    assert result.exit_code == 0, result.stderr
    assert f"Warning: {WARNING}" in result.stderr
    # ranks 1..n in the list's order; the distances and the ties become n..1, the falling scores stay
    assert run.read_text().splitlines() == [
        "q1 Q0 a 1 3 hits", "q1 Q0 b 2 2 hits", "q1 Q0 c 3 1 hits", "q2 Q0 a 1 2 hits", "q2 Q0 b 2 1 hits",
        "q3 Q0 y 1 0.9 hits", "q3 Q0 z 2 0.5 hits", "q3 Q0 x 3 0.2 hits"]
    assert _values(tre.evaluate(str(qrels), str(run), MEASURES)) == _approx(AS_LISTED)
    # and back to JSON: the same lists, in the same order
    back = tmp_path / "back.json"
    assert invoke("convert", str(run), "--json", str(back)).exit_code == 0
    assert _values(_said(lambda: tre.evaluate(QRELS, str(back), MEASURES))[0]) == _approx(AS_LISTED)


def test_the_harness_writes_runs_that_read_back_as_listed(tmp_path):
    def engine(query, k):
        return [(d, s) for d, s in HITS[query.split()[-1]]][:k]

    report, _ = _said(lambda: tre.Evaluator(engine).evaluate(DATASET, measures=MEASURES))
    report.write_run(tmp_path / "run.txt")
    report.write_run(tmp_path / "run.json", format="json")
    for name in ("run.txt", "run.json"):
        assert _values(tre.evaluate(QRELS, str(tmp_path / name), MEASURES)) == _approx(AS_LISTED), name


# --- scored shapes: trec_eval's rule, whatever the container ---------------------------------------------
def _scored_dict():
    return {q: dict(hits) for q, hits in HITS.items()}


def _pandas():
    pd = pytest.importorskip("pandas")
    return pd.DataFrame([{"query_id": q, "doc_id": d, "score": s} for q, hits in HITS.items() for d, s in hits])


def _records():
    return [SimpleNamespace(query_id=q, doc_id=d, score=s) for q, hits in HITS.items() for d, s in hits]


@pytest.mark.parametrize("shape", [_scored_dict, _pandas, _records])
def test_scored_shapes_follow_trec_eval_s_rule_in_silence(shape):
    evaluation, said = _said(lambda: tre.evaluate(QRELS, shape(), MEASURES))
    assert _values(evaluation) == _approx(BY_SCORE) and said == []


def test_scored_files_follow_trec_eval_s_rule(tmp_path):
    trec = tmp_path / "scored.run"
    trec.write_text("".join(f"{q} Q0 {d} 0 {s} scored\n" for q, hits in HITS.items() for d, s in hits))
    objects = tmp_path / "scored.json"
    objects.write_text(json.dumps(_scored_dict()))
    for path in (trec, objects):
        evaluation, said = _said(lambda path=path: tre.evaluate(QRELS, str(path), MEASURES))
        assert _values(evaluation) == _approx(BY_SCORE) and _order_warnings(said) == [], path
    # a scored run written as JSON results lists each query in trec_eval's order: read back, the same values
    back = tmp_path / "back.json"
    assert invoke("convert", str(trec), "--json", str(back)).exit_code == 0
    assert json.loads(back.read_text())["q2"] == [{"id": "b", "score": 1.0}, {"id": "a", "score": 1.0}]
    assert _values(_said(lambda: tre.evaluate(QRELS, str(back), MEASURES))[0]) == _approx(BY_SCORE)


@pytest.mark.skipif(TREC_EVAL is None, reason=NO_TREC_EVAL)
def test_trec_eval_itself_agrees_on_the_converted_and_the_scored_files(tmp_path):
    qrels, path = _write_qrels(tmp_path), _json_hits(tmp_path)
    converted = tmp_path / "hits.run"
    assert invoke("convert", str(path), "--run", str(converted)).exit_code == 0
    assert _trec_eval(qrels, converted) == _approx(AS_LISTED, 4)
    scored = tmp_path / "scored.run"
    scored.write_text("".join(f"{q} Q0 {d} 0 {s} scored\n" for q, hits in HITS.items() for d, s in hits))
    assert _trec_eval(qrels, scored) == _approx(BY_SCORE, 4)
    written = tmp_path / "engine.run"
    report, _ = _said(lambda: tre.Evaluator(lambda q, k: HITS[q.split()[-1]][:k]).evaluate(DATASET, measures=MEASURES))
    report.write_run(written)
    assert _trec_eval(qrels, written) == _approx(AS_LISTED, 4)


def test_a_nan_score_ranks_alike_in_every_form_of_table():
    # a run held as lists (a small dict, tre.Run.from_dict) is ordered by the same sort as a polars frame: NaN took
    # the last place in lists (numpy's lexsort) and the first in frames
    scores = {"q1": {f"d{i}": float("nan") if i == 3 else float(i % 4) for i in range(10)}}
    qrels = tre.Qrels.from_dict({"q1": {"d3": 1, "d1": 2}})
    as_lists = tre.Run.from_dict(scores)
    as_frame = tre.Run(tre.Run.from_dict(scores).frame, checked=True)  # .frame keeps the frame in place of the lists
    assert isinstance(as_lists.data, dict)
    assert ranking.rank(qrels, as_lists).rel.tolist() == ranking.rank(qrels, as_frame).rel.tolist()
