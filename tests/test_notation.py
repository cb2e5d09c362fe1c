"""ir-measures notation: every listed name parses, round-trips, agrees with ir-measures, and bad
input fails with a caret under the bad characters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trec_rag_eval.errors import MeasureSyntaxError
from trec_rag_eval.measures.ir_notation import NAMES, parse_notation
from trec_rag_eval.measures.model import ANY_FINITE, Measure, Range
from trec_rag_eval.measures.requests import parse_measures, resolve_measures

ISSUE_NAMES = [
    "P@5", "P(rel=2)@5", "R@100", "AP", "AP@100", "RR", "RR@10", "nDCG", "nDCG@10",
    "nDCG(dcg='exp-log2')@10", "nDCG(judged_only=True)", "Rprec", "Bpref", "infAP", "Success@5", "SetP",
    "SetR", "SetF", "SetF(beta=2.0)", "SetAP", "IPrec@0.5", "NumQ", "NumRel", "NumRet", "NumRelRet",
    "Judged@10", "ERR@20", "MAP", "MRR", "NDCG", "F1@5", "HitRate@5",
]


@pytest.mark.parametrize("text", ISSUE_NAMES)
def test_every_issue_name_round_trips(text: str) -> None:
    measure = parse_notation(text)
    assert parse_notation(str(measure)) == measure


@pytest.mark.parametrize("text, family, cutoff, trec_name", [
    ("P@5", "P", 5, "P_5"),
    ("R@100", "recall", 100, "recall_100"),
    ("AP", "map", None, "map"),
    ("AP@100", "map_cut", 100, "map_cut_100"),
    ("nDCG", "ndcg", None, "ndcg"),
    ("nDCG@10", "ndcg_cut", 10, "ndcg_cut_10"),
    ("NDCG@10", "ndcg_cut", 10, "ndcg_cut_10"),
    ("RR", "recip_rank", None, "recip_rank"),
    ("Success@5", "success", 5, "success_5"),
    ("HitRate@5", "success", 5, "success_5"),  # an alias: one measure with Success@5
    ("SetAP", "set_map", None, "set_map"),
    ("IPrec@0.5", "iprec_at_recall", 0.5, "iprec_at_recall_0.50"),
    ("SetF(beta=2.0)", "set_F", None, "set_F_2.0"),
    ("SetP(relative=True)", "set_relative_P", None, "set_relative_P"),
])
def test_names_map_to_trec_eval_families(text: str, family: str, cutoff: object, trec_name: str) -> None:
    measure = parse_notation(text)
    assert (measure.family, measure.cutoff, measure.trec_name) == (family, cutoff, trec_name)


def test_both_notations_give_the_same_values() -> None:
    assert parse_measures(["P.5,10", "ndcg_cut.10", "set_F.2.0", "map"]) == [
        parse_notation("AP"), parse_notation("P@5"), parse_notation("P@10"), parse_notation("nDCG@10"),
        parse_notation("SetF(beta=2.0)")]


def test_defaults_are_dropped_like_ir_measures() -> None:
    assert parse_notation("SetF(beta=1.0)") == parse_notation("SetF")
    assert str(parse_notation("nDCG(dcg='log2', judged_only=False)@10")) == "nDCG@10"
    assert str(parse_notation("nDCG(gains={0:0,1:1,2:3})@10")) == "nDCG(gains={2:3})@10"
    assert str(parse_notation("NumRet(rel=1)")) == "NumRelRet(rel=1)"


def test_canonical_strings_match_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    for text in ["P(rel=2)@5", "nDCG(dcg='exp-log2')@10", "nDCG(judged_only=True)", "SetF(beta=2.0)", "IPrec@0.5",
                 "AP@100", "RR@10", "ERR@20", "Judged@10", "nDCG(gains={2:3})@10"]:
        assert str(parse_notation(text)) == str(ir_measures.parse_measure(text))


def test_a_string_of_names_splits_on_spaces_outside_brackets() -> None:
    # one string of several names, as ir-measures' command line takes them: the spaces inside brackets stay
    measures = resolve_measures("P@5  nDCG(dcg='exp-log2', judged_only=True)@10 AP")
    assert [str(m) for m in measures] == ["P@5", "nDCG(dcg='exp-log2', judged_only=True)@10", "AP"]


def _error(text: str) -> str:
    with pytest.raises(MeasureSyntaxError) as info:
        parse_notation(text)
    return str(info.value)


def test_errors_point_at_the_bad_characters() -> None:
    assert _error("P(rel=2.5)@5") == (
        "bad measure 'P(rel=2.5)@5': rel must be an integer from 0 to 2147483647\n  P(rel=2.5)@5\n        ^^^")
    assert _error("nDCG(dcg='exp')@10") == (
        "bad measure \"nDCG(dcg='exp')@10\": dcg must be one of 'log2', 'exp-log2'\n"
        "  nDCG(dcg='exp')@10\n           ^^^^^")
    assert _error("P@0") == "bad measure 'P@0': the cutoff after @ must be a positive integer\n  P@0\n    ^"
    assert _error("P") == "bad measure 'P': P needs a cutoff, e.g. P@10\n  P\n  ^"
    assert _error("ndcg@10") == "bad measure 'ndcg@10': unknown measure (did you mean 'nDCG@10'?)\n  ndcg@10\n  ^^^^"
    assert _error("P(x=1)@3") == (
        "bad measure 'P(x=1)@3': P has no parameter 'x' (allowed: rel, judged_only, denominator)\n"
        "  P(x=1)@3\n    ^")
    assert _error("Rprec@5") == "bad measure 'Rprec@5': Rprec takes no @ value\n  Rprec@5\n       ^^"
    assert _error("IPrec@1.5") == (
        "bad measure 'IPrec@1.5': the recall level after @ must be a number in [0, 1]\n  IPrec@1.5\n        ^^^")
    assert _error("SetF(beta=True)") == (
        "bad measure 'SetF(beta=True)': beta must be a finite number\n  SetF(beta=True)\n            ^^^^")
    assert _error("P@5x").endswith("unexpected text after the measure\n  P@5x\n     ^")
    assert _error("P(rel=1,rel=2)@5").endswith("rel is given twice\n  P(rel=1,rel=2)@5\n          ^^^")


def test_error_exit_code_is_usage() -> None:
    with pytest.raises(MeasureSyntaxError) as info:
        parse_notation("Foo@3")
    assert info.value.exit_code == 2 and (info.value.start, info.value.end) == (0, 3)


# -- property: parse(str(m)) == m over generated measures ---------------------------------------
def _literal(kind: str, choices: tuple, key: str = "", size: int = 0, within: Range = ANY_FINITE) -> st.SearchStrategy:
    if kind == "reals":  # utility's 4 coefficients, 11pt_avg's recall levels
        reals = st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 2))
        return st.lists(reals, min_size=size or 1, max_size=size or 4).map(tuple)
    if kind == "level":  # min_rel below max_rel
        return st.integers(3, 6) if key == "max_rel" else st.integers(-1, 2)
    if kind == "int":
        return st.integers(0, 5)
    if kind == "float":  # within the parameter's range (the registry's table of ranges): 0.05 to 10 at most
        return st.floats(max(within.low, 0.05), min(within.high, 10), allow_nan=False).map(lambda x: round(x, 3))
    if kind == "bool":
        return st.booleans()
    if kind == "str":
        return st.sampled_from(choices)
    return st.dictionaries(st.integers(0, 4), st.integers(0, 9), max_size=3)


def _render(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        return "(" + ",".join(repr(v) for v in value) + ")"
    return repr(value)


@st.composite
def notation_texts(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(sorted(NAMES)))
    spec = NAMES[name]
    keys = draw(st.lists(st.sampled_from(sorted(spec.params)), unique=True, max_size=3)) if spec.params else []
    keys += [k for k, param in spec.params.items() if param.required and k not in keys]  # max_rel of C/W/L
    args = [f"{k}={_render(draw(_literal(param.kind, param.choices, k, param.size, param.within)))}"
            for k, param in ((k, spec.params[k]) for k in keys)]
    text = name + (f"({','.join(args)})" if args else "")
    needs_at = spec.family is None
    if spec.family_at is not None and (needs_at or draw(st.booleans())):
        at = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0] + [2.0, 3.5] * (spec.at == "real"))) if spec.at in (
            "recall", "real") else draw(st.integers(1, 1000))
        text += f"@{at}"
    return text


@settings(max_examples=300, deadline=None)
@given(notation_texts())
def test_parse_of_str_is_identity(text: str) -> None:
    measure = parse_notation(text)
    assert isinstance(measure, Measure)
    assert parse_notation(str(measure)) == measure
    assert str(parse_notation(str(measure))) == str(measure)


# --- MAP, MRR and HitRate are other names of AP, RR and Success -----------------------------------
@pytest.mark.parametrize("alias, canonical", [
    ("MAP", "AP"), ("MAP@10", "AP@10"), ("MRR", "RR"), ("MRR@10", "RR@10"), ("HitRate@5", "Success@5"),
    ("MAP(rel=2)", "AP(rel=2)"),
])
def test_rag_names_are_the_same_measure_as_their_ir_measures_names(alias: str, canonical: str) -> None:
    # one Measure each (as ir-measures registers MAP and MRR as aliases); only the spelling shown differs
    assert parse_notation(alias) == parse_notation(canonical)
    assert hash(parse_notation(alias)) == hash(parse_notation(canonical))
    assert parse_notation(alias).trec_name == parse_notation(canonical).trec_name
    assert str(parse_notation(alias)) == alias  # the table says what the user asked for


def test_a_measure_asked_twice_under_two_names_is_computed_once() -> None:
    assert parse_measures(["AP", "MAP", "map", "MRR", "RR", "recip_rank", "HitRate@5", "Success@5", "success.5"]) == [
        parse_notation("AP"), parse_notation("RR"), parse_notation("Success@5")]


def test_map_and_ap_print_one_trec_line(tmp_path) -> None:
    from conftest import invoke

    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 a 1\n1 0 b 1\n")
    run.write_text("1 Q0 a 1 2.0 t\n1 Q0 x 2 1.0 t\n")
    result = invoke("-m", "AP", "-m", "MAP", "-m", "MRR", "-m", "RR", "--format", "trec", str(qrels), str(run))
    # AP = (1/1) / R=2 = 0.5; RR = 1/1
    assert result.stdout == "map                   \tall\t0.5000\nrecip_rank            \tall\t1.0000\n"
