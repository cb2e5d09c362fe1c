"""One Settings value carries how a run is evaluated; a duplicate found by the ranking is cited by
the layer that read the file."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from trec_rag_eval.core.ranking import rank
from trec_rag_eval.core.settings import Settings, settings_of
from trec_rag_eval.errors import DuplicateDocumentError, InputFormatError, UsageError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.trec.qrels_runs import parse_qrels_text, read_trec_qrels, read_trec_run
from trec_rag_eval.tables import Run

QRELS = "1 0 a 1\n1 0 b 2\n1 0 c 0\n2 0 d 1\n"
RUN = "1 Q0 a 1 3 t\n1 Q0 x 2 2 t\n1 Q0 b 3 1 t\n3 Q0 d 1 1 t\n"


def test_defaults_are_trec_eval_s():
    assert Settings() == Settings(relevance_level=1, judged_only=False, max_retrieved=None, queries="qrels",
                                  trec_eval_9=False, complete=False, num_docs=0)


@pytest.mark.parametrize("changes, message", [
    ({"queries": "run"}, "queries must be 'qrels' or 'intersection', got 'run'"),
    ({"max_retrieved": -1}, "max_retrieved must be from 0 to 9223372036854775807, got -1"),
    ({"complete": True, "queries": "intersection"}, "complete=True and queries='intersection' contradict each other"),
])
def test_bad_settings_say_which_parameter(changes, message):
    with pytest.raises(UsageError) as err:
        Settings(**changes)
    assert str(err.value) == message


@pytest.mark.parametrize("changes, message", [
    ({"relevance_level": "2"}, "relevance_level must be an integer, got '2'"),
    ({"relevance_level": 2.5}, "relevance_level must be an integer, got 2.5"),
    ({"relevance_level": True}, "relevance_level must be an integer, got True"),
    ({"max_retrieved": "10"}, "max_retrieved must be an integer or None, got '10'"),
    ({"num_docs": 1e6}, "num_docs must be an integer, got 1000000.0"),
    # 'no' is a true string: taken as a flag it would silently switch -J on
    ({"judged_only": "no"}, "judged_only must be True or False, got 'no'"),
    ({"trec_eval_9": 1}, "trec_eval_9 must be True or False, got 1"),
    ({"complete": None}, "complete must be True or False, got None"),
    ({"leftovers": "yes"}, "leftovers must be True or False, got 'yes'"),
    ({"queries": ["qrels"]}, "queries must be 'qrels' or 'intersection', got ['qrels']"),
])
def test_settings_of_the_wrong_type_say_which_parameter(changes, message):
    with pytest.raises(UsageError) as err:
        Settings(**changes)
    assert str(err.value) == message
    with pytest.raises(UsageError) as err:
        evaluate_tables(parse_qrels_text(QRELS), Run.from_dict({"1": {"a": 1.0}}), ["P@2"], **changes)
    assert str(err.value) == message


def test_numpy_integers_are_integers():
    given = Settings(relevance_level=np.int64(2), max_retrieved=np.int32(5), num_docs=np.uint8(7))
    assert given == Settings(relevance_level=2, max_retrieved=5, num_docs=7)
    assert type(given.relevance_level) is int and type(given.max_retrieved) is int


def test_settings_as_a_mapping_are_keywords():
    assert settings_of({"relevance_level": 2}, judged_only=True) == Settings(relevance_level=2, judged_only=True)
    with pytest.raises(TypeError, match="unknown evaluation setting 'level'"):
        settings_of({"level": 2})
    with pytest.raises(TypeError, match="settings must be a Settings or a dict of its fields, got list"):
        settings_of([("relevance_level", 2)])  # type: ignore[arg-type]


def test_settings_are_frozen_and_keywords_override_them():
    base = Settings(relevance_level=2)
    with pytest.raises(AttributeError):
        base.relevance_level = 3  # type: ignore[misc]
    assert settings_of(base, judged_only=True) == Settings(relevance_level=2, judged_only=True)
    assert settings_of(None) == Settings()
    with pytest.raises(TypeError, match="unknown evaluation setting 'level'"):
        settings_of(level=2)


def test_a_settings_value_and_its_keywords_give_the_same_numbers():
    qrels, run = parse_qrels_text(QRELS), Run.from_dict({"1": {"a": 3, "x": 2, "b": 1}, "3": {"d": 1}})
    given = Settings(relevance_level=2, max_retrieved=2, queries="intersection")
    by_value = evaluate_tables(qrels, run, ["P@2", "RR", "num_q"], given)
    by_keywords = evaluate_tables(qrels, run, ["P@2", "RR", "num_q"], relevance_level=2, max_retrieved=2,
                           queries="intersection")
    assert by_value.settings == by_keywords.settings == given
    # by hand: only query 1 is in both; at level 2 only b is relevant; -M 2 keeps a, x: P@2 = 0, RR = 0
    assert by_value.summary["P@2"] == by_keywords.summary["P@2"] == 0.0
    assert by_value.summary["num_q"] == 1
    assert evaluate_tables(qrels, run, ["RR"], relevance_level=2).value("RR", "1") == pytest.approx(1 / 3)


def test_the_ranking_reports_a_duplicate_without_opening_the_file(tmp_path):
    # core only knows the run's name: it raises the pair, and the run's places (its reader's) find the lines
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 a 3 1 t\n")
    qrels, run = read_trec_qrels(str(_qrels(tmp_path))), read_trec_run(str(path))
    with pytest.raises(DuplicateDocumentError) as raw:
        rank(qrels, run)
    assert (raw.value.query_id, raw.value.doc_id, raw.value.line_no) == ("1", "a", None)
    with pytest.raises(Exception) as cited:
        evaluate_tables(qrels, run, ["P@5"])
    assert str(cited.value) == f"{path}:3: document 'a' listed twice for query '1' (first at line 1)"
    # a run built in memory has no lines: its own rows are cited (1 and 2, by hand)
    columns = {"query_id": ["1", "1"], "doc_id": ["a", "a"], "score": np.array([1.0, 2.0])}
    with pytest.raises(InputFormatError, match=r"^<run>: row 2: document 'a' listed twice for query '1' "
                                               r"\(first at row 1\)$"):
        evaluate_tables(qrels, Run(columns, checked=True), ["P@5"])  # a table's own columns, as a reader's
    assert pickle.loads(pickle.dumps(raw.value)).doc_id == "a"


def _qrels(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text(QRELS)
    return path
