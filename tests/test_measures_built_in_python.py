"""A ``Measure`` built in Python is refused, in words, when it lacks what every name of its family carries (a
cutoff where each name has one, a required parameter), as the parsers refuse the same name; every measure the
parsers make is taken back as it is."""

from __future__ import annotations

import pytest

import trec_rag_eval as tre
from trec_rag_eval.measures.model import REGISTERED, Measure
from trec_rag_eval.measures.requests import parse_measures, resolve_measures

QRELS = {"q": {"a": 1, "b": 0}}
RUN = {"q": {"a": 2.0, "c": 1.0}}


@pytest.mark.parametrize("family", ["P", "recall", "success", "F1", "ndcg_cut", "map_cut", "iprec_at_recall",
                                    "Rprec_mult", "unj", "relative_P"])
def test_a_cutoff_family_built_without_its_cutoff_is_refused_in_words(family):
    # before: an AttributeError (or a TypeError) from inside the kernel; ndcg_cut and map_cut gave a number shown
    # under the name of the uncut family (nDCG, AP)
    words = f"{family} needs a cutoff, e.g. Measure\\('{family}', cutoff=10\\)"
    with pytest.raises(tre.MeasureSyntaxError, match=words):
        tre.evaluate(QRELS, RUN, [Measure(family)])


@pytest.mark.parametrize("family", ["INST", "NERR10"])
def test_a_family_built_without_its_required_parameter_is_refused_in_words(family):
    with pytest.raises(tre.MeasureSyntaxError, match=f"{family} needs max_rel"):  # before: KeyError: 'max_rel'
        tre.evaluate(QRELS, RUN, [Measure(family)])


def test_a_measure_built_with_what_it_needs_is_evaluated():
    # a, judged 1, is ranked first: P@1 = 1/1; of the two ranked, one relevant: P@2 = 1/2
    summary = tre.evaluate(QRELS, RUN, [Measure("P", cutoff=1), Measure("P", cutoff=2)]).summary
    assert summary == {"P@1": 1.0, "P@2": 0.5}


def test_every_measure_the_parsers_make_is_taken_back_as_it_is():
    names = ["all_trec", "official", *REGISTERED] + [  # trec_eval's names (P: its cutoffs), then our notation's
        name.replace("@k", "@5").replace("@p", "@0.5").replace("@x", "@0.5")
        for family in REGISTERED.values() for name in family.names]
    parsed = []
    for name in names:
        try:
            parsed += parse_measures([name])
        except tre.MeasureSyntaxError:  # a name that needs more than a cutoff (SDCG@5 needs max_rel)
            continue
    assert len(parsed) > 300
    for m in parsed:
        assert resolve_measures([m]) == [m], m
