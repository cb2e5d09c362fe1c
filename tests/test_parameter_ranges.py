"""Measure parameters: each real parameter is refused outside the values it means something at (the
registry's table of ranges), the same in every way a measure is given (our notation, trec_eval's -m,
ir_measures' measure objects, ``Measure`` values); a parameter trec_eval computes with keeps trec_eval's number,
and where that number is not finite the measure is refused rather than written as inf or nan.

ir_measures' measure objects keep every parameter they carry, even at ir_measures' own default; the cross-check
builds ir_measures' objects itself (its parser of names refuses negative values and needs ``ast.Num``, gone in
Python 3.14); ir_measures' keyword forms ``P(cutoff=10)`` and ``IPrec(recall=0.5)`` are read as it reads them.

The example used by hand below (binary judgments, so trec_eval's RBP gains are the judgments):

    qrels  1: a 1, b 0, c 1          2: e 1
    run    1: a 4, b 3, c 2, x 1 (x not judged)      2: e 1
"""

from __future__ import annotations

import random

import pytest
from conftest import invoke

import trec_rag_eval as tre
from trec_rag_eval.errors import MeasureSyntaxError, UsageError
from trec_rag_eval.measures.ir_notation import parse_notation
from trec_rag_eval.measures.model import ANY_FINITE, Measure
from trec_rag_eval.measures.registry import FAMILIES

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 e 1\n"
RUN = "1 Q0 a 1 4 t\n1 Q0 b 2 3 t\n1 Q0 c 3 2 t\n1 Q0 x 4 1 t\n2 Q0 e 1 1 t\n"


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return str(qrels), str(run)


# -- refused outside the range ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "value", "refusal"), [
    ("Compat(p=2)", "2", "p must be a number in (0, 1] (the persistence of a rank-biased overlap: depth i weighs "
     "p^(i-1))"),
    ("Compat(p=0)", "0", "p must be a number in (0, 1]"),
    ("NERR10(max_rel=3,p=1.5)", "1.5", "p must be a number in [0, 1] (the user goes on from each rank with "
     "probability p (1 - gain))"),
    ("NERR10(max_rel=3,p=-1)", "-1", "p must be a number in [0, 1]"),
    ("INST(max_rel=3,T=-2)", "-2", "T must be a number >= 0.25 (the total gain the user wants, gains being in "
     "[0, 1]; below 0.25 INST's chance of going on from a rank can exceed 1)"),
    ("BPM(max_rel=3,T=-1)@5", "-1", "T must be a number > 0 (the total gain the user wants, gains being in [0, 1])"),
    ("NERR11(max_rel=3,T=-1)", "-1", "T must be a number > 0"),
    ("INSQ(max_rel=3,T=-0.5)", "-0.5", "T must be a number > 0"),
    ("alpha_nDCG(alpha=1.5)@5", "1.5", "alpha must be a number in [0, 1]"),
    ("NRBP(beta=-0.5)", "-0.5", "beta must be a number in [0, 1] (rank i weighs beta^(i-1))"),
    ("nDCG(gains={1:2e9})", "{1:2e9}", "gains: each must be a number in [-1e+09, 1e+09] (trec_eval orders the "
     "gains by their difference taken as an int, which larger ones overflow)"),
    ("ndcg.1=2,2=-2e9", "1=2,2=-2e9", "gains: each must be a number in [-1e+09, 1e+09]"),
])
def test_a_parameter_outside_its_range_is_refused_with_the_range(files, text: str, value: str, refusal: str) -> None:
    result = invoke("-m", text, "--format", "csv", *files)
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"Error: bad measure '{text}': {refusal}")
    assert lines[1:] == ["  " + text, "  " + " " * text.rindex(value) + "^" * len(value)]


def test_the_range_ends_are_in_or_out_as_written() -> None:
    # Compat: (0, 1]; NERR10: [0, 1]; T: > 0, INST's >= 0.25; alpha and beta: [0, 1]
    for inside in ("Compat(p=1)", "Compat(p=1e-9)", "NERR10(max_rel=3,p=0)", "NERR10(max_rel=3,p=1)",
                   "INSQ(max_rel=3,T=1e-9)", "INST(max_rel=3,T=0.25)", "BPM(max_rel=3,T=100)@5",
                   "NRBP(alpha=0,beta=1)", "nNRBP(alpha=1,beta=0)"):
        parse_notation(inside)
    for outside in ("Compat(p=0)", "Compat(p=1.0000001)", "NERR10(max_rel=3,p=-1e-9)", "INSQ(max_rel=3,T=0)",
                    "INST(max_rel=3,T=0.2499)", "BPM(max_rel=3,T=0)@5", "NRBP(alpha=-0.1)", "nNRBP(beta=1.1)"):
        with pytest.raises(MeasureSyntaxError, match="must be a number"):
            parse_notation(outside)


def test_every_real_parameter_names_its_range() -> None:
    # a new real parameter must say the values it means something at (or that trec_eval takes any)
    unnamed = [(family.name, key) for family in FAMILIES.values() for key, param in family.params.items()
               if param.kind in ("float", "reals", "gains") and param.within is ANY_FINITE]
    assert unnamed == []


def test_a_measure_value_built_in_python_is_checked_against_the_same_table(files) -> None:
    outside = Measure("Compat", params=(("p", 2.0),))
    with pytest.raises(MeasureSyntaxError, match=r"p must be a number in \(0, 1\]"):
        tre.evaluate(*files, [outside])
    with pytest.raises(MeasureSyntaxError, match="T must be a number > 0"):
        tre.parse_measure(Measure("INSQ", params=(("T", -0.5), ("max_rel", 3))))


# -- trec_eval's values kept where trec_eval computes them ---------------------------------------------------------
@pytest.mark.parametrize("p", [1.5, -0.1, 1.0, 0.0, 2.0])
def test_rbp_at_any_persistence_is_trec_evals(files, p: float) -> None:
    # query 1: gains 1, 0, 1 at ranks 1-3 and x unjudged at rank 4; query 2: gain 1 at rank 1
    # rbp = (1-p) * sum of g_k p^(k-1): (1-p)(1 + p^2) and (1-p); rbp_resid = p^N + (1-p) * sum over the
    # unjudged of p^(k-1): p^4 + (1-p) p^3 for query 1, 0 for query 2 (all judged)
    rbp = [(1 - p) * (1 + p**2), 1 - p]
    resid = [p**4 + (1 - p) * p**3, 0.0]
    result = tre.evaluate(*files, [f"rbp.p={p}", f"RBPResid(p={p})"])
    for i, query in enumerate(("1", "2")):
        assert result.per_query[query][f"RBP(p={p})"] == pytest.approx(rbp[i], abs=1e-12)
        assert result.per_query[query][f"RBPResid(p={p})"] == pytest.approx(resid[i], abs=1e-12)


@pytest.mark.parametrize(("measure", "why"), [
    ("rbp.p=1e200", "overflow"),                 # p^3 = 1e600: trec_eval prints -inf
    ("rbp_resid.p=-1e200", "overflow"),
    ("utility.1e308,1e308,0,0", "overflow"),    # trec_eval prints inf
    ("set_F.-1", "invalid value"),              # query 2: P = R = 1, so (x+1)PR / (xP+R) = 0/0: trec_eval's -nan
])
def test_a_value_trec_eval_prints_as_inf_or_nan_is_refused(files, measure: str, why: str) -> None:
    result = invoke("-m", measure, "-q", "--format", "trec", *files)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("Error: measure '") and why in result.stderr
    assert "trec_eval prints inf or nan there" in result.stderr and len(result.stderr.splitlines()) == 1
    with pytest.raises(UsageError):
        tre.evaluate(*files, measure)


def test_set_f_with_a_negative_parameter_is_trec_evals_where_it_is_finite(files) -> None:
    # query 1: P = 2/4, R = 2/2; x = -0.5: 0.5 * 0.5 * 1 / (-0.25 + 1) = 1/3; query 2: P = R = 1 -> 0.5 / 0.5 = 1
    result = tre.evaluate(*files, "set_F.-0.5")
    assert result.per_query["1"]["SetF(beta=-0.5)"] == pytest.approx(1 / 3, abs=1e-12)
    assert result.per_query["2"]["SetF(beta=-0.5)"] == pytest.approx(1.0, abs=1e-12)


def test_a_huge_rprec_mult_is_a_rank_past_every_ranking(files) -> None:
    # trec_eval: Rprec_mult_10000000 0.0000 (its name cut to 8 characters after the family's, as it writes it)
    result = invoke("-m", "Rprec_mult.1e300", "--format", "trec", *files)
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == "Rprec_mult_10000000   \tall\t0.0000\n"


# -- ir_measures' measure objects ---------------------------------------------------------------------------------
ir_measures = pytest.importorskip("ir_measures")


def test_an_ir_measures_object_keeps_a_parameter_at_ir_measures_default() -> None:
    # ir_measures' RBP persistence defaults to 0.8 and leaves it out of the name; ours defaults to 0.9
    for given in (ir_measures.RBP(p=0.8, rel=1), ir_measures.RBP(rel=1)):
        measure = tre.parse_measure(given)
        assert measure.param("p") == 0.8 and measure.rel == 1
    # binary RBP at p = 0.8, query 1: gains 1, 0, 1 -> 0.2 * (1 + 0.64) = 0.328; query 2: 0.2
    result = tre.evaluate(QRELS_DICT, RUN_DICT, [ir_measures.RBP(p=0.8, rel=1)])
    assert result.per_query["1"]["RBP(rel=1,p=0.8)"] == pytest.approx(0.328, abs=1e-12)
    assert result.summary["RBP(rel=1,p=0.8)"] == pytest.approx((0.328 + 0.2) / 2, abs=1e-12)


QRELS_DICT = {"1": {"a": 1, "b": 0, "c": 1}, "2": {"e": 1}}
RUN_DICT = {"1": {"a": 4.0, "b": 3.0, "c": 2.0, "x": 1.0}, "2": {"e": 1.0}}


def _explicit(name: str):
    """ir_measures' measure of that name with every parameter that has a default given at it, and the required
    ones (a cutoff, a recall level, max_rel) given."""
    base = ir_measures.measures.registry[name]
    params = {}
    for key, info in base.SUPPORTED_PARAMS.items():
        if isinstance(info.default, (bool, int, float, str)):
            params[key] = info.default
        elif info.required or key == "cutoff":
            params[key] = {"max_rel": 3, "recall": 0.5, "cutoff": 5}[key]
    return base(**params)


def _seeded_pair(seed: int):
    """Judgments 0-3 and rankings without ties (so no tie-breaking rule differs), numeric query ids (gdeval's)."""
    rng = random.Random(seed)
    qrels = {str(q): {f"d{d}": rng.choice([0, 1, 2, 3]) for d in rng.sample(range(30), 12)} for q in range(1, 7)}
    run = {q: {f"d{d}": float(30 - i) for i, d in enumerate(rng.sample(range(30), 20))} for q in qrels}
    return qrels, run


@pytest.mark.filterwarnings("ignore")
def test_every_ir_measures_object_at_its_defaults_gives_ir_measures_value() -> None:
    qrels, run = _seeded_pair(3)
    theirs_qrels = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    theirs_run = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    compared = 0
    for name in sorted(ir_measures.measures.registry):
        given = _explicit(name)
        if name == "RBP":  # graded RBP is trectools', outside ir_measures' default pipeline: cwl_eval's binary RBP
            given = ir_measures.RBP(p=0.8, rel=1)   # (without a cutoff) here
        theirs = ir_measures.calc_aggregate([given], theirs_qrels, theirs_run)[given]
        ours = tre.evaluate(qrels, run, [given])
        tolerance = 5e-6 if name == "ERR" else 1e-9  # gdeval.pl prints ERR with 5 decimals
        assert float(next(iter(ours.summary.values()))) == pytest.approx(float(theirs), abs=tolerance), (name, given)
        compared += 1
    assert compared >= 51


def test_an_ir_measures_object_outside_a_range_is_refused_as_a_name_is() -> None:
    with pytest.raises(MeasureSyntaxError, match=r"p must be a number in \(0, 1\]"):
        tre.parse_measure(ir_measures.Compat(p=2.0))
    with pytest.raises(MeasureSyntaxError, match="AP_IA has no parameter 'judged_only'"):
        tre.parse_measure(ir_measures.AP_IA(judged_only=True))   # ours has none: only its default is dropped
    assert tre.parse_measure(ir_measures.AP_IA(judged_only=False)) == parse_notation("AP_IA")


# -- ir_measures' keyword forms ----------------------------------------------------------------------------------
def test_the_keyword_forms_of_ir_measures_are_its_at_forms() -> None:
    assert parse_notation("P(cutoff=10)") == parse_notation("P@10")
    assert parse_notation("IPrec(recall=0.5)") == parse_notation("IPrec@0.5")
    assert parse_notation("P(rel=2,cutoff=5)") == parse_notation("P(rel=2)@5")
    assert parse_notation("IPrec(recall=1)") == parse_notation("IPrec@1.0")
    # every ir_measures name whose cutoff (or recall level) may be given by keyword
    for name, base in sorted(ir_measures.measures.registry.items()):
        keyword = base.AT_PARAM
        if keyword not in base.SUPPORTED_PARAMS:
            continue
        value = 0.5 if keyword == "recall" else 5
        required = "max_rel=3," if "max_rel" in base.SUPPORTED_PARAMS else ""
        assert parse_notation(f"{name}({required}{keyword}={value})") == parse_notation(
            f"{name}{f'({required[:-1]})' if required else ''}@{value}"), name


@pytest.mark.parametrize(("text", "reason"), [
    ("P(cutoff=10)@5", "the cutoff is given twice (cutoff= and @)"),
    ("P(cutoff=5,cutoff=6)", "cutoff is given twice"),
    ("P(cutoff=0)", "cutoff must be a positive integer"),
    ("P(cutoff=10.0)", "cutoff must be a positive integer"),
    ("IPrec(recall=1.5)", "recall must be a number in [0, 1]"),
    ("Rprec(cutoff=5)", "Rprec has no parameter 'cutoff'"),
    ("IPrec(cutoff=5)", "IPrec has no parameter 'cutoff'"),
])
def test_a_wrong_keyword_form_is_refused(text: str, reason: str) -> None:
    with pytest.raises(MeasureSyntaxError) as info:
        parse_notation(text)
    assert info.value.reason.startswith(reason)


# -- the cross-check builds ir_measures' objects itself ------------------------------------------------------------
@pytest.mark.parametrize("measure", ["SDCG(max_rel=3,min_rel=-1)@5", "RBP(p=-0.1,rel=1)", "rbp.p=-0.1",
                                     "NERR10(max_rel=3,p=0)", "nDCG(gains={1:-2,2:5})"])
def test_crosscheck_with_a_negative_or_any_parameter_answers(files, measure: str) -> None:
    result = invoke("crosscheck", "-m", measure, *files)
    assert result.exit_code == 0 and "Traceback" not in result.stderr, result.stderr
    assert "Verdict: OK" in result.stdout


def test_crosscheck_needs_no_parser_of_ir_measures(monkeypatch) -> None:
    from trec_rag_eval.checks.crosscheck import DEFAULT_MEASURES, crosscheck_tables
    from trec_rag_eval.tables import Qrels, Run

    def gone(*args, **kwargs):  # as on Python 3.14, where its parser's ast.Num is gone
        raise AttributeError("module 'ast' has no attribute 'Num'")

    monkeypatch.setattr(ir_measures, "parse_measure", gone)
    monkeypatch.setattr(ir_measures.util, "parse_measure", gone)
    qrels, run = _seeded_pair(5)
    report = crosscheck_tables(Qrels.from_dict(qrels), Run.from_dict(run), list(DEFAULT_MEASURES))
    assert report.ok, report.render()
    assert not [v for v in report.verdicts if "failed" in v.reason]
    assert sum(v.status in ("agree", "convention") for v in report.verdicts) >= 35


def test_crosscheck_names_every_parameter_of_ir_measures_measure(files) -> None:
    # RBP(p=0.8,rel=1): ir_measures' own name leaves p=0.8 out (its default); the report writes it
    result = invoke("crosscheck", "-m", "RBP(p=0.8,rel=1)", *files)
    assert "RBP(p=0.8,rel=1) via cwl_eval" in result.stdout


def test_crosscheck_leaves_out_what_ir_measures_computes_otherwise(files) -> None:
    from trec_rag_eval.checks.crosscheck import crosscheck_tables
    from trec_rag_eval.tables import Qrels, Run

    report = crosscheck_tables(Qrels.from_dict(QRELS_DICT), Run.from_dict(RUN_DICT),
                               ["RBP(p=1.5,rel=1)", "RBP(p=1,rel=1)", "SetF(beta=-0.5)", "nDCG(gains={1:-2})"])
    reasons = [v.reason for v in report.verdicts]
    assert [v.status for v in report.verdicts] == ["unsupported"] * 4
    assert "compared for -1 < p < 1 only" in reasons[0] and "compared for -1 < p < 1 only" in reasons[1]
    assert "compared for beta >= 0 only" in reasons[2] and "a negative one is unjudged" in reasons[3]
