"""``validate -m``: the values compared are those of the measures asked, in either notation; a measure asked
that the reference does not hold is an error naming it, never a verdict over nothing.

The reference is trec_eval 10's output for fixtures/qrels.txt and fixtures/run_bm25.txt
(``trec_eval -m map -m P.5 fixtures/qrels.txt fixtures/run_bm25.txt``: map 0.3389, P_5 0.2500), with
P_5 changed to a wrong value so that comparing it fails.
"""

from __future__ import annotations

import pytest
from conftest import REPO, invoke

import trec_rag_eval as tre
from trec_rag_eval.errors import UsageError

QRELS = f"{REPO}/fixtures/qrels.txt"
RUN = f"{REPO}/fixtures/run_bm25.txt"


@pytest.fixture
def reference(tmp_path):
    path = tmp_path / "published.txt"
    path.write_text("map                   \tall\t0.3389\nP_5                   \tall\t0.9999\n")
    return str(path)


def test_every_value_is_compared_without_m(reference):
    result = invoke("validate", QRELS, RUN, reference)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].endswith(": 2 values compared")
    assert "DIFFER     P_5 all: reference 0.9999, ours 0.25" in result.stdout


@pytest.mark.parametrize(("asked", "shown"), [(["-m", "MAP"], "MAP"), (["-m", "map"], "AP"), (["-m", "AP"], "AP"),
                                             (["-m", "map", "-m", "AP"], "AP")])
def test_m_compares_the_measures_asked_alone(reference, asked, shown):
    # shown under the name asked (MAP is AP's alias; trec_eval's map is AP)
    result = invoke("validate", *asked, QRELS, RUN, reference)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith(f": 1 value of {shown} compared (of 2 in the reference: the measures asked leave 1 "
                             "out)")
    assert lines[-1] == "Verdict: OK: 1 agree, 0 agree under a known convention, 0 differ"


def test_m_in_trec_eval_notation_picks_its_cutoffs(reference):
    result = invoke("validate", "-m", "P.5", QRELS, RUN, reference)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].endswith(": 1 value of P@5 compared (of 2 in the reference: the measures "
                                                  "asked leave 1 out)")


def test_a_measure_the_reference_lacks_is_an_error(reference):
    result = invoke("validate", "-m", "MAP", "-m", "nDCG@10", QRELS, RUN, reference)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {reference}: no value of nDCG@10 to compare (-m asked for it; the reference "
                             "holds AP, P@5)\n")


def test_the_library_takes_measures_too(reference):
    report = tre.validate(QRELS, RUN, reference, measures=["MAP"])
    assert report.ok and report.compared == 1 and report.measures == ["MAP"] and report.left_out == 1
    with pytest.raises(tre.InputFormatError, match=r"no value of nDCG@10 to compare \(measures= asked for it"):
        tre.validate(QRELS, RUN, reference, measures="nDCG@10")
    with pytest.raises(UsageError):
        tre.validate(QRELS, RUN, reference, measures=[])
