"""The drop-in called again and again, as a training loop or a sweep calls it: each evaluator and each result
stands alone. What one call is given, or what its caller does to what it got back, changes nothing for the next
call; a refused call is refused again, with the same exception and message; and the measures are read from the
names as given, in any iterable, each time.

The oracle is pytrec_eval itself, called on the same input.
"""

from __future__ import annotations

import pytest
import pytrec_eval as real  # the oracle

from trec_rag_eval import pytrec_eval as ours

QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
RUN = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d1": 1.5, "d2": 0.2, "d3": 0.5}}
MEASURES = {"P.1,3", "recall_3", "ndcg_cut.3", "recip_rank", "map"}


def test_what_a_caller_does_to_an_evaluator_or_a_result_changes_nothing_for_the_next():
    expected = real.RelevanceEvaluator(QRELS, MEASURES).evaluate(RUN)
    first = ours.RelevanceEvaluator(QRELS, MEASURES)
    got = first.evaluate(RUN)
    assert got == expected
    # everything the first evaluator holds or gave back, changed in place
    got["q1"]["map"] = 99.0
    got["q2"].clear()
    for held in vars(first).values():
        if isinstance(held, (list, dict, set)):
            held.clear()
    assert ours.RelevanceEvaluator(QRELS, MEASURES).evaluate(RUN) == expected
    assert ours.RelevanceEvaluator(QRELS, sorted(MEASURES, reverse=True)).evaluate(RUN) == expected


def test_evaluators_made_at_every_call_from_the_same_judgments_read_them_once(monkeypatch):
    # an evaluator made per call (as a loop over epochs makes pytrec_eval's) from the same dict reads it once, as
    # evaluate does (service.inputs.as_qrels); judgments changed in place between two evaluators are read again
    from trec_rag_eval.service import inputs

    reads: list[object] = []
    real_read = inputs.qrels_data
    monkeypatch.setattr(inputs, "qrels_data", lambda value, *args, **kwargs: reads.append(value) or real_read(
        value, *args, **kwargs))
    monkeypatch.setattr(inputs, "_PREPARED", {})
    judgments = {query: dict(docs) for query, docs in QRELS.items()}
    expected = real.RelevanceEvaluator(judgments, MEASURES).evaluate(RUN)
    for _ in range(3):
        assert ours.RelevanceEvaluator(judgments, MEASURES).evaluate(RUN) == expected
    assert len(reads) == 1
    judgments["q1"]["d3"] = 1
    changed = real.RelevanceEvaluator(judgments, MEASURES).evaluate(RUN)
    assert changed != expected
    assert ours.RelevanceEvaluator(judgments, MEASURES).evaluate(RUN) == changed
    assert len(reads) == 2


def test_the_keys_of_one_evaluator_are_not_another_s():
    one = ours.RelevanceEvaluator(QRELS, {"P.1,3"}).evaluate(RUN)
    other = ours.RelevanceEvaluator(QRELS, {"P.3", "P_1"}).evaluate(RUN)
    assert one == other == real.RelevanceEvaluator(QRELS, {"P.1,3"}).evaluate(RUN)
    one["q1"]["P_5"] = 0.0
    assert list(ours.RelevanceEvaluator(QRELS, {"P.1,3"}).evaluate(RUN)["q1"]) == ["P_1", "P_3"]


@pytest.mark.parametrize("measures, kind, message", [
    ({"foo"}, ValueError, "unsupported measure foo"),
    ({"map", "foo"}, ValueError, "unsupported measure foo"),
    ({"P.0"}, ValueError, "unsupported measure P.0: cutoffs must be positive integers"),
    ({"recall.5", "recall_05"}, ValueError, "unsupported measure recall.05,5: the same cutoff is given twice"),
    ({"utility.2"}, ValueError, "unsupported measure utility.2: utility takes exactly 4 coefficients a,b,c,d"),
    ("map", ValueError, "unsupported measure 'm': measures is the string 'map', not a set of names such as {'map'}"),
    ({"map", 1}, TypeError, "a measure name must be a string, got int: 1"),
    (["map", None], TypeError, "a measure name must be a string, got NoneType: None"),
    (5, TypeError, "'int' object is not iterable"),
    ([["map"]], TypeError, "a measure name must be a string, got list: ['map']"),
])
def test_a_refused_set_of_measures_is_refused_each_time(measures, kind, message):
    for _ in range(3):
        with pytest.raises(kind) as refused:
            ours.RelevanceEvaluator(QRELS, measures)
        assert str(refused.value) == message
    # and a good set asked between two refusals is not touched by them
    assert ours.RelevanceEvaluator(QRELS, {"map"}).evaluate(RUN) == real.RelevanceEvaluator(
        QRELS, {"map"}).evaluate(RUN)


@pytest.mark.parametrize("make", [
    lambda: iter(MEASURES), lambda: (name for name in sorted(MEASURES)), lambda: list(MEASURES) * 2,
    lambda: dict.fromkeys(MEASURES), lambda: frozenset(MEASURES), lambda: tuple(sorted(MEASURES)),
    lambda: [type("Name", (str,), {})(name) for name in MEASURES],  # a subclass of str is a name too
])
def test_names_in_any_iterable_ask_for_the_same_measures_each_time(make):
    expected = real.RelevanceEvaluator(QRELS, MEASURES).evaluate(RUN)
    for _ in range(2):  # a fresh iterable each time: an iterator is read once
        assert ours.RelevanceEvaluator(QRELS, make()).evaluate(RUN) == expected


def test_a_nickname_changed_by_the_caller_is_read_as_changed(monkeypatch):
    """pytrec_eval reads its nicknames from ``supported_nicknames`` at each call: so does the drop-in."""
    before = ours.RelevanceEvaluator(QRELS, {"official"}).evaluate(RUN)
    monkeypatch.setitem(ours.supported_nicknames, "official", {"map", "P.5"})
    monkeypatch.setitem(real.supported_nicknames, "official", {"map", "P.5"})
    changed = ours.RelevanceEvaluator(QRELS, {"official"}).evaluate(RUN)
    assert changed == real.RelevanceEvaluator(QRELS, {"official"}).evaluate(RUN)
    assert list(changed["q1"]) == ["map", "P_5"]
    monkeypatch.undo()
    assert ours.RelevanceEvaluator(QRELS, {"official"}).evaluate(RUN) == before
