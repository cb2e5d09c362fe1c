"""Warnings from Python: each points at the caller's line, whichever
public function and path led to it, and says the same thing on every path; `compare` warns about
queries missing from a run as `evaluate` does; a run of chunk ids says how to map them (doc_map=)."""

from __future__ import annotations

import warnings

import pytest
from conftest import invoke

import trec_rag_eval as tre
from trec_rag_eval.errors import TrecRagEvalWarning

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}}
RUN = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}          # q3 missing: it scores 0
OTHER = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"c": 1.0}, "q3": {"d": 1.0}}


DISTANCES = {"q1": [{"id": "a", "score": 0.1}, {"id": "b", "score": 0.7}], "q2": [("c", 0.2)], "q3": [("d", 0.3)]}


def _distances_file(paths):
    import json

    path = paths[0].parent / "distances.json"
    path.write_text(json.dumps(DISTANCES))
    return path


def _recorded(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, TrecRagEvalWarning)]


def _files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items() for d, r in docs.items()))
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {i} {s} r\n" for q, docs in RUN.items()
                           for i, (d, s) in enumerate(docs.items(), 1)))
    return qrels, run


def test_compare_warns_about_missing_queries_as_evaluate_does(tmp_path):
    # tre.compare once scored q3 as 0 without a word, where evaluate warns
    said = _recorded(lambda: tre.evaluate(QRELS, RUN, "P@1"))
    compared = _recorded(lambda: tre.compare(QRELS, {"A": RUN, "B": OTHER}, "P@1"))
    expected = "1 qrels query missing from the run, scored 0: q3"
    assert [str(w.message) for w in said] == [f"run (dict): {expected}"]
    assert [str(w.message) for w in compared] == [f"run 'A' (dict): {expected}"]
    # a run file: the same words, led by its path, from evaluate and from compare
    qrels, run = _files(tmp_path)
    from_file = _recorded(lambda: tre.evaluate(str(qrels), str(run), "P@1"))
    assert [str(w.message) for w in from_file] == [f"{run}: {expected}"]
    compared = _recorded(lambda: tre.compare(str(qrels), [str(run), OTHER], "P@1"))
    assert [str(w.message) for w in compared] == [f"{run}: {expected}"]


def test_the_command_line_says_it_once(tmp_path):
    qrels, run = _files(tmp_path)
    other = tmp_path / "other.txt"
    other.write_text("".join(f"{q} Q0 {d} 1 {s} o\n" for q, docs in OTHER.items() for d, s in docs.items()))
    result = invoke("compare", "-m", "P@1", str(qrels), str(run), str(other))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("missing from the run") == 1
    assert f"Warning: {run}: 1 qrels query missing from the run, scored 0: q3\n" in result.stderr


CALLS = {
    "evaluate a dict": lambda paths: tre.evaluate(QRELS, RUN, "P@1"),
    "evaluate a file": lambda paths: tre.evaluate(str(paths[0]), str(paths[1]), "P@1"),
    "compare": lambda paths: tre.compare(QRELS, {"A": RUN, "B": OTHER}, "P@1"),
    "compare (library)": lambda paths: __import__("trec_rag_eval.compare", fromlist=["compare_runs"]).compare_runs(
        tre.Qrels(QRELS), {"A": tre.Run(RUN), "B": tre.Run(OTHER)}, "P@1"),
    "iter_evaluate": lambda paths: list(tre.iter_evaluate(QRELS, RUN, "P@1")),
    "nothing matches": lambda paths: tre.evaluate(QRELS, {"q1": {"x": 1.0}}, "P@1"),
    "no common query": lambda paths: tre.evaluate(QRELS, {"zz": {"a": 1.0}}, "P@1"),
    "empty run": lambda paths: tre.evaluate(QRELS, tre.Run({"query_id": [], "doc_id": [], "score": []}), "P@1"),
    "every engine call failed": lambda paths: tre.Evaluator(lambda q, k: 1 / 0).evaluate(
        [{"id": "q1", "query": "x", "relevant": ["a"]}], k_values=[1]),
    # scores rising along a list (distances), on each path that reads lists
    "distances in memory": lambda paths: tre.evaluate(QRELS, DISTANCES, "P@1"),
    "distances to compare": lambda paths: tre.compare(QRELS, {"A": DISTANCES, "B": OTHER}, "P@1"),
    "distances from an engine": lambda paths: tre.Evaluator(lambda q, k: DISTANCES["q1"]).evaluate(
        [{"id": "q1", "query": "x", "relevant": ["a"]}], k_values=[1], depth=2),
    "distances in a file": lambda paths: tre.evaluate(QRELS, str(_distances_file(paths)), "P@1"),
    "distances read": lambda paths: tre.read_run(str(_distances_file(paths))),
    "crosscheck": lambda paths: tre.crosscheck(QRELS, DISTANCES, ["P@1"]),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_every_warning_points_at_the_callers_line(tmp_path, name):
    # warnings once pointed into the library (the facade's own lines) on some paths
    said = _recorded(lambda: CALLS[name](_files(tmp_path)))
    assert said, name
    assert {w.filename for w in said} == {__file__}, [(w.filename, w.lineno, str(w.message)) for w in said]


def test_a_run_of_chunk_ids_is_told_about_doc_map():
    # from Python, nothing matches, and the sentence names the keyword that fixes it
    qrels = {"q1": {"docA": 1, "docB": 0}, "q2": {"docC": 1}}
    chunks = {"q1": {"docA::1": 2.0, "docB::2": 1.0}, "q2": {"docC::1": 1.0}}
    said = _recorded(lambda: tre.evaluate(qrels, chunks, "P@1"))
    # the command line's two lines, as two warnings: nothing matches, and the note naming the keyword
    nothing, hint = [str(w.message) for w in said]
    assert "none of the 3 retrieved ids appears in the qrels" in nothing
    assert "look like chunks of judged documents" in hint and "with doc_map='^(.*)::\\d+$'" in hint
    assert tre.evaluate(qrels, chunks, "P@1", doc_map="^(.*)::\\d+$").summary["P@1"] == 1.0
