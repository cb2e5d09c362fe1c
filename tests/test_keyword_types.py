"""A keyword the library knows, given a value of the wrong type, is refused as the library's UsageError naming the
keyword (and, as Python's own are, a TypeError: ``InputTypeError``), not a bare TypeError from deep inside; a
keyword it does not know stays a TypeError, as Python's convention has it, and says the keywords it takes."""
from __future__ import annotations

import pytest
from conftest import REPO

import trec_rag_eval as tre
from trec_rag_eval.errors import UsageError

FIXTURES = f"{REPO}/fixtures"
QRELS = {"q1": {"d1": 1}}
RUN = {"q1": {"d1": 1.0}}


def test_settings_of_the_wrong_type_is_a_usage_error_naming_settings():
    with pytest.raises(UsageError) as raised:
        tre.evaluate(QRELS, RUN, ["P@1"], settings=[("judged_only", True)])
    assert str(raised.value) == "settings must be a Settings or a dict of its fields, got list"
    assert isinstance(raised.value, TypeError)


def test_an_unknown_setting_stays_a_type_error_that_lists_the_settings():
    with pytest.raises(TypeError) as raised:
        tre.evaluate(QRELS, RUN, ["P@1"], level=2)
    assert not isinstance(raised.value, UsageError)
    assert "expected one of relevance_level, judged_only" in str(raised.value)


@pytest.mark.parametrize(("measures", "message"), [
    (5, "measures must be a name ('nDCG@10'), a Measure, or a list of them; got int"),
    ([5], "a measure must be a name, a Measure or an ir_measures measure, got int: 5"),
])
def test_measures_of_the_wrong_type_are_a_usage_error(measures, message):
    with pytest.raises(UsageError) as raised:
        tre.evaluate(QRELS, RUN, measures)
    assert str(raised.value) == message
    assert isinstance(raised.value, TypeError)


def test_a_measure_name_of_the_wrong_type_is_a_usage_error():
    from trec_rag_eval.measures.requests import parse_measure

    with pytest.raises(UsageError) as raised:
        parse_measure(5)  # type: ignore[arg-type]
    assert str(raised.value) == "a measure name must be a string, got int"


def test_a_corpus_of_the_wrong_type_is_a_usage_error_naming_corpus(tmp_path):
    with pytest.raises(UsageError) as raised:
        tre.generate_queries(42, tmp_path / "out.json", model="m", base_url="http://127.0.0.1:9/v1")
    assert str(raised.value).startswith("corpus must be a JSONL path")
    assert raised.value.parameters == {"corpus": "corpus"}


def test_preferences_of_the_wrong_type_are_a_usage_error():
    from trec_rag_eval.tables.judgment_kinds import Preferences

    with pytest.raises(UsageError) as raised:
        Preferences(42)
    assert str(raised.value).startswith("preferences must be a DataFrame or a dict with the columns")
    assert str(raised.value).endswith("; got int")


def test_fuse_reads_run_files_in_the_run_format_given(tmp_path):
    # the fuse command takes --run-format; the library's fuse said "unknown evaluation setting 'run_format'"
    runs = [f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt"]
    assert tre.fuse(runs, run_format="trec").run == tre.fuse(runs).run
    with pytest.raises(UsageError) as raised:
        tre.fuse([RUN, RUN], run_format="trec")
    assert str(raised.value) == "run_format= describes a run file: give the run as its path"


def test_agree_reads_run_files_in_the_run_format_given():
    runs = [f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt"]
    qrels = f"{FIXTURES}/qrels.txt"
    other = tre.read_qrels(qrels)
    given = tre.agree(qrels, other, runs, run_format="trec", n_resamples=10)
    assert given.to_dict() == tre.agree(qrels, other, runs, n_resamples=10).to_dict()
    with pytest.raises(UsageError) as raised:
        tre.agree(qrels, other, [RUN, RUN], run_format="trec", n_resamples=10)
    assert str(raised.value) == "run_format= describes a run file: give the run as its path"
