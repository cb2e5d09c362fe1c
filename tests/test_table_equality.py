"""Two tables are equal when they hold the same rows: a run the same (query_id, doc_id, score) rows and the same
run_tag, judgments the same (query_id, iteration, doc_id, relevance) rows and the same kind; whatever form holds
them (lists, a polars frame, an Arrow table), whatever their order (the ranking ignores it) and wherever they were
read from (``source``). A NaN score equals a NaN score. Tables are not hashable: they hold arrays."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import trec_rag_eval as tre
from trec_rag_eval.tables.judgment_kinds import GroupedQrels

RUN = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"a": 0.5}}
QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}


def test_a_run_equals_a_run_of_the_same_rows_in_any_form_order_or_source(tmp_path):
    run = tre.Run(RUN)
    assert run == tre.Run(RUN)  # raised "the truth value of an array is ambiguous"
    reordered = tre.Run({"q2": {"a": 0.5}, "q1": {"b": 1.0, "a": 2.0}})
    assert run == reordered
    as_frame = tre.Run(pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"],
                                     "score": [2.0, 1.0, 0.5]}))
    assert run == as_frame
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 2.0 run\nq1 Q0 b 2 1.0 run\nq2 Q0 a 1 0.5 run\n")
    assert tre.read_run(str(path)) == run  # source differs: the file's name, "<run>"
    assert not run != tre.Run(RUN)


@pytest.mark.parametrize("other", [
    {"q1": {"a": 2.0, "b": 1.5}, "q2": {"a": 0.5}},   # a score differs
    {"q1": {"a": 2.0, "b": 1.0}, "q2": {"b": 0.5}},   # a doc id differs
    {"q1": {"a": 2.0, "b": 1.0}},                     # a row fewer
])
def test_runs_of_other_rows_differ(other):
    assert tre.Run(RUN) != tre.Run(other)
    assert not tre.Run(RUN) == tre.Run(other)


def test_the_run_tag_counts_and_a_nan_score_equals_a_nan_score():
    assert tre.Run(RUN, run_tag="bm25") != tre.Run(RUN, run_tag="dense")
    with_nan = {"q1": {"a": math.nan, "b": 1.0}}
    assert tre.Run.from_dict(with_nan) == tre.Run.from_dict(with_nan)
    assert tre.Run.from_dict(with_nan) != tre.Run.from_dict({"q1": {"a": 0.0, "b": 1.0}})


def test_judgments_equal_judgments_of_the_same_rows_and_kind():
    qrels = tre.Qrels(QRELS)
    assert qrels == tre.Qrels(QRELS)
    assert qrels == tre.Qrels({"q2": {"c": 2}, "q1": {"b": 0, "a": 1}})
    assert qrels == tre.Qrels(pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"],
                                            "relevance": [1, 0, 2]}))
    assert qrels != tre.Qrels({"q1": {"a": 1, "b": 1}, "q2": {"c": 2}})
    assert qrels != GroupedQrels(QRELS)  # another kind of judgments: scored by other measures
    assert qrels != tre.Run(RUN) and qrels != QRELS  # not a table of judgments


def test_tables_are_not_hashable():
    for table in (tre.Run(RUN), tre.Qrels(QRELS)):
        with pytest.raises(TypeError, match="unhashable type"):
            hash(table)


def test_preferences_equal_preferences_of_the_same_rows():
    rows = [("q1", "g", "s", "a", 2.0), ("q1", "g", "s", "b", 1.0)]
    prefs = tre.Preferences(rows)
    assert prefs == tre.Preferences(list(reversed(rows)))
    assert prefs != tre.Preferences([("q1", "g", "s", "a", 2.0), ("q1", "g", "s", "b", 0.5)])
    levels = np.array([2.0, 1.0])
    assert tre.Preferences(rows).data["level"].tolist() == levels.tolist()


def test_evaluations_of_the_same_numbers_are_equal():
    # dataclass equality compared the per-query arrays by their truth: "ambiguous" from two queries on
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0, "b": 0.5}, "q2": {"a": 1.0, "b": 0.5}}
    first = tre.evaluate(qrels, run, ["P@1", "AP"])
    assert first == tre.evaluate(qrels, run, ["P@1", "AP"])
    # q2's relevant document ranked first instead of second: P@1 1.0 where it was 0.0
    assert first != tre.evaluate(qrels, {**run, "q2": {"a": 0.5, "b": 1.0}}, ["P@1", "AP"])
    assert first.values != {"P@1": np.array([1.0, 1.0]), "AP": first.values["AP"]}
    assert first.values == {"P@1": np.array([1.0, 0.0]), "AP": np.array([1.0, 0.5])}
