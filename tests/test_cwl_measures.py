"""The C/W/L family (SDCG, NERR8-11, INST, INSQ, BPM): values worked out by hand, parameters checked,
and 200 seeded random pairs against ir_measures' cwl_eval provider, query by query, to 1e-9.

The example (max_rel=3: gain = judgment / 3; x is not judged, gain 0):

    qrels  a:3  b:1  c:0  d:2
    run    x 6.0 | a 5.0 | b 3.0 | c 2.0      gains g = 0, 1, 1/3, 0, then 0 to rank 1000

Every measure is sum_i E_i g_i / sum_i E_i over ranks 1..1000, E_1 = 1, E_i = C_1 ... C_{i-1}.
"""

from __future__ import annotations

import math

import pytest
from conftest import first_by_default
from peer_data import random_pair

from trec_rag_eval.errors import MeasureSyntaxError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.measures.ir_notation import parse_notation
from trec_rag_eval.tables import Qrels, Run

QRELS = {"q": {"a": 3, "b": 1, "c": 0, "d": 2}, "gone": {"a": 1}}
RUN = {"q": {"x": 6.0, "a": 5.0, "b": 3.0, "c": 2.0}}

pytestmark = pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")


def _values(*measures: str) -> dict[str, float]:
    result = evaluate_tables(Qrels.from_dict(QRELS), Run.from_dict(RUN), list(measures))
    assert all(result.per_query["gone"][m] == 0.0 for m in result.names)  # missing from the run
    return {m: result.per_query["q"][m] for m in result.names}


def test_truncated_measures_by_hand() -> None:
    # SDCG@3: E_i = 1/log2(i+1) for i <= 3: (0 + 1/log2 3 + (1/3)/2) / (1 + 1/log2 3 + 1/2)
    sdcg = (1 / math.log2(3) + 1 / 6) / (1 + 1 / math.log2(3) + 1 / 2)
    # min_rel=1: gains (j-1)/2, c's 0 clipped to 1: 0, 1, 0, 0
    sdcg_min = (1 / math.log2(3)) / (1 + 1 / math.log2(3) + 1 / 2)
    # NERR8@3: C_i = 1 - g_i for i < 3: C_1 = 1, C_2 = 0: E = 1, 1 -> (0 + 1) / 2
    # NERR9@3: C_i = (i/(i+1))(1 - g_i): C_1 = 1/2, C_2 = 0: E = 1, 1/2 -> (1/2) / (3/2)
    # BPM(T=1)@3: go on while the gain so far < 1 and i < 3: C_1 = 1 (0 < 1), C_2 = 0 (1 < 1 fails): 1 / 2
    # BPM(T=2)@3: C_1 = C_2 = 1, C_3 = 0 (i < 3 fails): (0 + 1 + 1/3) / 3
    values = _values("SDCG(max_rel=3)@3", "SDCG(min_rel=1,max_rel=3)@3", "NERR8(max_rel=3)@3",
                     "NERR9(max_rel=3)@3", "BPM(max_rel=3)@3", "BPM(T=2.0,max_rel=3)@3")
    assert values == pytest.approx({
        "SDCG(max_rel=3)@3": sdcg, "SDCG(min_rel=1,max_rel=3)@3": sdcg_min, "NERR8(max_rel=3)@3": 0.5,
        "NERR9(max_rel=3)@3": 1 / 3, "BPM(max_rel=3)@3": 0.5, "BPM(T=2.0,max_rel=3)@3": 4 / 9}, abs=1e-12)


def test_full_depth_measures_by_hand() -> None:
    # NERR10(p=0.5): C_i = 0.5 (1 - g_i): C_1 = 1/2, C_2 = 0 -> (1/2) / (3/2)
    # NERR11(T=1): C_i = ((i+1)/(i+2))^2 (1 - g_i): C_1 = 4/9, C_2 = 0 -> (4/9) / (13/9)
    # INSQ(T=1): C_i = ((i+1)/(i+2))^2, so E_i = (2/(i+1))^2 over all 1000 ranks
    insq_weights = sum(4 / (i + 1) ** 2 for i in range(1, 1001))
    insq = (4 / 9 * 1 + 4 / 16 * (1 / 3)) / insq_weights
    # INST(T=1): T_i = 1 - gain so far; C_i = ((i+T+T_i-1)/(i+T+T_i))^2:
    #   C_1 = (2/3)^2 (T_1 = 1), C_2 = (2/3)^2 (T_2 = 0), and from i = 3 on (T_i = -1/3) ((3i-1)/(3i+2))^2,
    #   so E_1 = 1, E_2 = 4/9 and, the product telescoping, E_i = 1024 / (81 (3i-1)^2) for i >= 3
    inst_weights = 1 + 4 / 9 + sum(1024 / (81 * (3 * i - 1) ** 2) for i in range(3, 1001))
    inst = (4 / 9 * 1 + 1024 / (81 * 64) * (1 / 3)) / inst_weights
    values = _values("NERR10(p=0.5,max_rel=3)", "NERR11(max_rel=3)", "INSQ(max_rel=3)", "INST(max_rel=3)")
    assert values == pytest.approx({"NERR10(p=0.5,max_rel=3)": 1 / 3, "NERR11(max_rel=3)": 4 / 13,
                                    "INSQ(max_rel=3)": insq, "INST(max_rel=3)": inst}, abs=1e-12)


def test_judgments_are_clipped_to_the_scale() -> None:
    # max_rel=1: a (3) and b (1) both gain 1: NERR8@3 stops at rank 2 for sure: E = 1, 1 -> (0 + 1) / 2
    # NERR9@4 with max_rel=1: C_1 = 1/2, C_2 = 0 -> 1/3 as before, b never reached
    values = _values("NERR8(max_rel=1)@3", "NERR9(max_rel=1)@4")
    assert values == pytest.approx({"NERR8(max_rel=1)@3": 0.5, "NERR9(max_rel=1)@4": 1 / 3}, abs=1e-12)


def test_a_ranking_deeper_than_1000_is_read_to_1000() -> None:
    # one relevant document at rank 1001: cwl_eval's user never gets there
    run = {"q": {f"n{i:04d}": 2000.0 - i for i in range(1000)} | {"a": 1.0}}
    result = evaluate_tables(Qrels.from_dict({"q": {"a": 3}}), Run.from_dict(run),
                             ["INSQ(max_rel=3)", "BPM(max_rel=3)@2000"])
    assert dict(result.per_query["q"]) == {"INSQ(max_rel=3)": 0.0, "BPM(max_rel=3)@2000": 0.0}


@pytest.mark.parametrize(("text", "reason"), [
    ("INST", "INST needs max_rel, e.g. INST(max_rel=3)"),
    ("SDCG(max_rel=3)", "SDCG needs a cutoff, e.g. SDCG@10"),
    ("BPM(T=1.0)@10", "BPM needs max_rel, e.g. BPM(max_rel=3)@10"),
    ("INSQ(min_rel=2,max_rel=2)", "min_rel must be below max_rel"),
    ("SDCG(dcg='exp-log2',max_rel=3)@10", "dcg must be one of 'log2'"),
    ("NERR10(max_rel=3)@5", "NERR10 takes no @ value"),
])
def test_parameters_are_checked(text: str, reason: str) -> None:
    with pytest.raises(MeasureSyntaxError) as caught:
        parse_notation(text)
    assert reason in str(caught.value)


def test_notation_round_trips_as_ir_measures_writes_it() -> None:
    for text in ["SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR10(max_rel=3,p=0.5)", "INST(T=2.0,max_rel=3)",
                 "BPM(T=2.0,max_rel=4,min_rel=1)@20", "INSQ(max_rel=3)", "NERR11(T=3.0,max_rel=3)"]:
        assert str(parse_notation(text)) == text


MEASURES = ["SDCG(max_rel=3)@5", "SDCG(max_rel=2,min_rel=1)@10", "NERR8(max_rel=3)@5", "NERR9(max_rel=3)@10",
            "NERR10(max_rel=3)", "NERR10(max_rel=2,p=0.5)", "NERR11(max_rel=3)", "NERR11(T=2.0,max_rel=3)",
            "INST(max_rel=3)", "INST(T=3.0,max_rel=3)", "INSQ(max_rel=3)", "INSQ(T=2.0,max_rel=2)",
            "BPM(max_rel=3)@10", "BPM(T=2.0,max_rel=3)@5", "RBP(rel=1)", "RBP(p=0.5,rel=2)"]


@pytest.mark.parametrize("block", first_by_default(range(4)))  # 50 pairs by default, 200 with -m slow
def test_200_seeded_pairs_agree_with_cwl_eval(block: int) -> None:
    pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    for seed in range(block * 50, block * 50 + 50):
        qrels, run = random_pair(seed)
        report = crosscheck_tables(qrels, run, MEASURES, tolerance=1e-9)
        assert report.ok, (seed, report.render())
        for verdict in report.verdicts:
            assert (verdict.provider, verdict.status) == ("cwl_eval", "agree"), (seed, report.render())


def test_without_cwl_eval_the_verdict_says_how_to_install_it(monkeypatch) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    provider = ir_measures.providers.registry["cwl_eval"]
    monkeypatch.setattr(provider, "is_available", lambda: False)
    report = crosscheck_tables(Qrels.from_dict(QRELS), Run.from_dict(RUN), ["INST(max_rel=3)", "SDCG(max_rel=3)@5"])
    for verdict in report.verdicts:
        assert verdict.status == "unsupported"
        assert "cwl_eval, not installed here (pip install ir-measures[cwl_eval])" in verdict.reason
    assert report.ok  # nothing differs: the report says what it could not check
