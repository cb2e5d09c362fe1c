"""Every name ir_measures registers, written as ir_measures writes it, parses here, is computed here and is
listed by ``trec-rag-eval measures``; each is cross-checked through its ir_measures provider."""

from __future__ import annotations

import pytest
from peer_data import random_pair

from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.measures.ir_notation import parse_notation

ir_measures = pytest.importorskip("ir_measures")

pytestmark = pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")


def _spelled(name: str) -> str:
    """The name with what ir_measures requires of it: max_rel (C/W/L), a cutoff or a recall level."""
    measure = ir_measures.measures.registry[name]
    params = ["max_rel=3"] if "max_rel" in measure.SUPPORTED_PARAMS else []
    text = name + (f"({','.join(params)})" if params else "")
    if measure.AT_PARAM == "recall":
        return text + "@0.5"
    cutoff = measure.SUPPORTED_PARAMS.get("cutoff")
    return text + ("@10" if cutoff is not None and cutoff.required else "")


NAMES = sorted(ir_measures.measures.registry)
SPELLED = [_spelled(name) for name in NAMES]


def test_ir_measures_registers_51_names() -> None:
    assert len(NAMES) >= 51  # a new ir_measures name fails the tests below until it is computed here


@pytest.mark.parametrize("text", SPELLED)
def test_every_name_parses_as_ir_measures_writes_it(text: str) -> None:
    measure = parse_notation(text)
    assert parse_notation(str(measure)) == measure
    assert str(ir_measures.parse_measure(text)) == str(ir_measures.parse_measure(str(measure)))


def test_every_name_is_computed_on_intent_aware_qrels() -> None:
    qrels, run = random_pair(7, subtopics=3)
    result = evaluate_tables(qrels, run, SPELLED)
    for text in SPELLED:
        measure = parse_notation(text)
        assert measure in result.summary, text
        if measure.spec.per_query:
            assert len(result.values[measure]) == len(result.query_ids)


def test_the_measures_command_lists_every_name(run_cli) -> None:
    listing = run_cli("measures").stdout
    names = {token.split("@")[0].split("(")[0] for line in listing.splitlines() if not line.startswith(" ")
             for token in line.split(", ")}
    assert set(NAMES) - names == set()


def test_every_name_has_a_provider_here_or_says_why_not() -> None:
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    qrels, run = random_pair(11, subtopics=3)
    # with a cutoff wherever one is allowed: pyndeval and gdeval compute at a cutoff only
    cut = [text if "@" in text or "cutoff" not in ir_measures.measures.registry[name].SUPPORTED_PARAMS
           else text + "@10" for name, text in zip(NAMES, SPELLED, strict=True)]
    report = crosscheck_tables(qrels, run, cut)
    assert report.ok, report.render()
    unsupported = {v.measure: v.reason for v in report.verdicts if v.status == "unsupported"}
    # graded RBP has no provider in ir_measures' default pipeline (trectools only); every other name is checked
    assert set(unsupported) <= {"RBP@10"}, unsupported
