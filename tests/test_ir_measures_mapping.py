"""The name the cross-check gives each of our measures in ir_measures' notation, for every measure of
``all_trec``, of the RAG set, of every notation name and alias, and for every parameter and setting that
changes it (the relevance level, judged_only, gains, cutoffs), with the reason when there is none.

The expectations come from ir_measures itself: a measure's ir_measures spelling is written here as
ir_measures' documentation writes it (``MAP``, ``NumRelRet``, ``SetRelP``, ``Success@5`` ...), and
ir_measures parses both it and the cross-check's name into the same measure; where pytrec_eval computes it,
the trec_eval measure that ir_measures asks pytrec_eval for (with its relevance level and -J) is the
trec_eval measure we compute.
"""

from __future__ import annotations

import pytest

from trec_rag_eval.checks.crosscheck import ir_measures_name
from trec_rag_eval.measures.requests import DEFAULT_RAG, parse_measures

ir_measures = pytest.importorskip("ir_measures")

# trec_eval's name (as it prints it) -> the same measure in ir_measures' notation; None: ir_measures has none
ALL_TREC = {
    "runid": None, "num_q": "NumQ", "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet",
    "map": "MAP", "gm_map": None, "Rprec": "RPrec", "bpref": "BPref", "recip_rank": "MRR",
    **{f"iprec_at_recall_{p / 10:.2f}": f"IPrec@{p / 10}" for p in range(11)},
    **{f"P_{k}": f"Precision@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    "relstring": None,
    **{f"recall_{k}": f"Recall@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    "infAP": "infAP", "gm_bpref": None,
    **{f"Rprec_mult_{p / 10:.2f}": None for p in range(2, 21, 2)},
    "utility": None, "11pt_avg": None, "binG": None, "G": None, "ndcg": "NDCG", "ndcg_rel": None, "Rndcg": None,
    **{f"ndcg_cut_{k}": f"NDCG@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"map_cut_{k}": f"MAP@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"relative_P_{k}": None for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)},
    **{f"success_{k}": f"Success@{k}" for k in (1, 5, 10)},
    "set_P": "SetP", "set_relative_P": "SetRelP", "set_recall": "SetR", "set_map": "SetAP", "set_F": "SetF",
    "num_nonrel_judged_ret": None,
    "rbp": "RBP(p=0.9)",  # trec_eval's persistence; ir_measures' RBP defaults to 0.8
    "rbp_resid": None, **{f"unj_{k}": None for k in (5, 10, 20)},
}

# (our name, relevance level, judged_only) -> the same measure in ir_measures' notation, or the reason it has none
CASES = {
    # the RAG set, its aliases, and ranx's names
    ("P@1", 1, False): "P@1", ("R@3", 1, False): "R@3", ("F1@5", 1, False): "no such measure in ir-measures",
    ("HitRate@10", 1, False): "Success@10", ("nDCG@3", 1, False): "nDCG@3", ("MRR", 1, False): "RR",
    ("MAP", 1, False): "AP", ("hit_rate@5", 1, False): "Success@5", ("mrr", 1, False): "RR",
    ("ndcg@10", 1, False): "nDCG@10", ("ndcg_burges@10", 1, False): "nDCG(dcg='exp-log2')@10",
    ("dcg@10", 1, False): "no such measure in ir-measures", ("r-precision", 1, False): "Rprec",
    ("f1@3", 1, False): "no such measure in ir-measures",
    ("precision@5", 1, False): "P@5", ("recall@5", 1, False): "R@5", ("map@100", 1, False): "AP@100",
    ("bpref", 1, False): "Bpref", ("Rprec", 2, True): "Rprec(rel=2,judged_only=True)", ("SetAP", 1, False): "SetAP",
    # every notation name and alias
    ("Precision@5", 1, False): "P@5", ("Recall@5", 1, False): "R@5", ("RPrec", 1, False): "Rprec",
    ("BPref", 1, False): "Bpref", ("NDCG@10", 1, False): "nDCG@10", ("MRR@10", 1, False): "RR@10",
    ("MAP@5", 1, False): "AP@5", ("α_nDCG@5", 1, False): "alpha_nDCG@5", ("α_DCG@5", 1, False): "alpha_DCG@5",
    ("MAP_IA", 1, False): "AP_IA", ("NumRelRet", 1, False): "NumRelRet", ("SetP(relative=True)", 1, False):
    "SetRelP", ("SetRelP", 1, False): "SetRelP", ("IPrec@0.5", 1, False): "IPrec@0.5", ("Judged", 1, False):
    "Judged", ("Judged@10", 1, False): "Judged@10", ("ERR@20", 1, False): "ERR@20", ("ERR", 1, False): "ERR",
    ("Compat", 1, False): "Compat", ("Compat(p=0.8,normalize=False)", 1, False): "Compat(p=0.8,normalize=False)",
    ("Accuracy", 1, False): "Accuracy", ("Accuracy@5", 2, False): "Accuracy(rel=2)@5",
    ("alpha_nDCG(alpha=0.3)@5", 1, False): "alpha_nDCG(alpha=0.3)@5", ("alpha_DCG@20", 2, False):
    "alpha_DCG(rel=2)@20", ("ERR_IA@5", 1, False): "ERR_IA@5", ("nERR_IA(rel=2)@5", 1, False): "nERR_IA(rel=2)@5",
    ("NRBP(alpha=0.2,beta=0.7)", 1, False): "NRBP(alpha=0.2,beta=0.7)", ("nNRBP", 1, False): "nNRBP",
    ("P_IA@10", 1, False): "P_IA@10", ("AP_IA", 1, False): "AP_IA", ("StRecall@20", 1, False): "StRecall@20",
    ("SDCG(max_rel=3)@10", 1, False): "SDCG(max_rel=3)@10", ("NERR8(max_rel=3,min_rel=1)@10", 2, False):
    "NERR8(max_rel=3,min_rel=1)@10", ("NERR9(max_rel=3)@5", 1, False): "NERR9(max_rel=3)@5",
    ("NERR10(max_rel=3,p=0.5)", 1, False): "NERR10(max_rel=3,p=0.5)", ("NERR11(T=2.0,max_rel=4)", 1, False):
    "NERR11(T=2.0,max_rel=4)", ("INST(max_rel=3)", 1, False): "INST(max_rel=3)", ("INSQ(max_rel=3)", 1, False):
    "INSQ(max_rel=3)", ("BPM(max_rel=3)@10", 1, False): "BPM(max_rel=3)@10",
    ("RelP@5", 1, False): "no such measure in ir-measures", ("GMAP", 1, False): "no such measure in ir-measures",
    ("DCG@5", 1, False): "no such measure in ir-measures", ("IDCG", 1, False): "no such measure in ir-measures",
    # trec_eval's measures that ir_measures has not, by their names in our notation
    **{(name, 1, False): "no such measure in ir-measures" for name in (
        "runid", "relstring", "relstring@3", "GMBpref", "RprecMult@0.5", "Utility",
        "Utility(coefficients=(2,-1,0,0))", "IPrecAvg", "IPrecAvg(levels=(0.5))", "binG", "G", "G(gains={1:2})",
        "nDCGRel", "RnDCG", "NumNonRelJudgedRet", "yaap", "RBPResid", "RBPResid(p=0.5)", "Unj@5",
        # judgment groups and preferences (trec_eval's -R qrels_jg, prefs): ir_measures reads neither
        "AP_avgjg", "P_avgjg@5", "RprecMult_avgjg@0.5", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
        "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
        "prefs_pair_imp", "prefs_avgjg_imp")},
    # the relevance level: the measure's own, else the evaluation's; graded measures take none
    ("P@5", 2, False): "P(rel=2)@5", ("P(rel=3)@5", 2, False): "P(rel=3)@5", ("AP", 0, False): "AP(rel=0)",
    ("NumRel", 2, False): "NumRel(rel=2)", ("NumRet", 2, False): "NumRet", ("NumQ", 2, False): "NumQ",
    ("NumRelRet", 2, False): "NumRelRet(rel=2)", ("NumRet(rel=3)", 1, False): "NumRet(rel=3)",
    ("nDCG@10", 2, False): "nDCG@10", ("Judged@5", 2, False): "Judged@5", ("ERR@5", 2, False): "ERR@5",
    ("SetRelP", 2, False): "SetRelP(rel=2)", ("SetF(beta=2.0)", 2, False): "SetF(beta=2.0,rel=2)",
    ("Compat", 2, False): "Compat", ("INST(max_rel=3)", 2, False): "INST(max_rel=3)",
    ("RBP", 2, False): "RBP(p=0.9)", ("RBP(rel=2)", 1, False): "RBP(p=0.9,rel=2)",
    ("RBP(p=0.5,rel=1)@10", 1, False): "RBP(p=0.5,rel=1)@10",
    # judged_only (-J, or the measure's own parameter)
    ("P@5", 1, True): "P(judged_only=True)@5", ("P(judged_only=True)@5", 2, False): "P(rel=2,judged_only=True)@5",
    ("AP", 2, True): "AP(rel=2,judged_only=True)", ("nDCG(judged_only=True)", 1, False): "nDCG(judged_only=True)",
    ("nDCG(dcg='exp-log2',judged_only=True)@10", 1, False): "nDCG(dcg='exp-log2',judged_only=True)@10",
    ("SetRelP", 1, True): "SetRelP(judged_only=True)", ("SetF(beta=2.0)", 2, True):
    "SetF(beta=2.0,rel=2,judged_only=True)", ("IPrec@0.5", 1, True): "IPrec(judged_only=True)@0.5",
    ("Success@5", 1, True): "Success(judged_only=True)@5", ("RR", 1, True): "RR(judged_only=True)",
    ("Bpref", 1, True): "ir-measures has no judged_only for this measure",
    ("infAP", 1, True): "ir-measures has no judged_only for this measure",
    ("SetR", 1, True): "ir-measures has no judged_only for this measure",
    ("NumQ", 1, True): "ir-measures has no judged_only for this measure",
    ("NumRelRet", 1, True): "ir-measures has no judged_only for this measure",
    ("Judged@10", 1, True): "ir-measures has no judged_only for this measure",
    ("ERR@10", 1, True): "ir-measures has no judged_only for this measure",
    ("alpha_nDCG@5", 1, True): "the cross-check has no judged_only for the intent-aware measures",
    ("SDCG(max_rel=3)@10", 1, True): "ir-measures' SDCG has no judged_only",
    ("INSQ(max_rel=3)", 1, True): "ir-measures' INSQ has no judged_only",
    ("Compat", 1, True): "ir-measures' Compat has no judged_only",
    ("Accuracy", 1, True): "ir-measures' Accuracy has no judged_only",
    ("RBP(rel=1)", 1, True): "ir-measures' RBP has no custom gains and no judged_only",
    ("F1(judged_only=True)@5", 1, False): "no such measure in ir-measures",
    # parameters ir_measures has not, or writes otherwise
    ("P(denominator='returned')@5", 1, False): "ir-measures' P always divides by k",
    ("P(denominator='returned',judged_only=True)@5", 1, False): "ir-measures' P always divides by k",
    ("nDCG(ideal='retrieved')@10", 1, False): "ir-measures' ideal ranking uses every judged document",
    ("nDCG(gains={1:2.5})@10", 1, False): "pytrec_eval takes integer gains only",
    ("nDCG(gains={1:2.5},ideal='retrieved')@10", 1, False): "ir-measures' ideal ranking uses every judged document",
    ("nDCG(gains={1:3.0,2:7})", 1, False): "nDCG(gains={1:3,2:7})",
    ("nDCG(gains={2:5},dcg='exp-log2',judged_only=True)@5", 1, False):
    "nDCG(dcg='exp-log2',gains={2:5},judged_only=True)@5",
    ("alpha_nDCG", 1, False): "pyndeval (ndeval) computes these measures at cutoffs 1 to 20 only",
    ("P_IA@21", 1, False): "pyndeval (ndeval) computes these measures at cutoffs 1 to 20 only",
    ("StRecall@21", 1, True): "the cross-check has no judged_only for the intent-aware measures",
    # trec_eval's syntax for parameters ir_measures writes in its own
    ("ndcg.1=3,2=9", 1, False): "nDCG(gains={1:3,2:9})",
    ("ndcg.1=2.5", 1, False): "pytrec_eval takes integer gains only",
    ("ndcg_cut.5", 2, True): "nDCG(judged_only=True)@5", ("set_F.2", 1, False): "SetF(beta=2.0)",
    ("rbp.p=0.5", 1, False): "RBP(p=0.5)",
    ("rbp.1=2", 1, False): "ir-measures' RBP has no custom gains and no judged_only",
    ("utility.1,2,3,4", 1, False): "no such measure in ir-measures",
}


def _one(text: str):
    [measure] = parse_measures([text])
    return measure


def _same_in_ir_measures(ours: str, theirs: str) -> None:
    # ir_measures reads both spellings as one measure (each parameter, given or its default, the same), and
    # writes the cross-check's name back as it is
    assert _meaning(ir_measures.parse_measure(ours)) == _meaning(ir_measures.parse_measure(theirs)), (ours, theirs)
    assert str(ir_measures.parse_measure(ours)) == ours


def _meaning(measure) -> tuple:
    return measure.NAME, tuple((key, repr(measure[key])) for key in sorted(measure.SUPPORTED_PARAMS))


@pytest.mark.parametrize("measure", parse_measures(["all_trec"]), ids=lambda m: m.trec_name)
def test_every_all_trec_measure(measure) -> None:
    theirs = ALL_TREC[measure.trec_name]
    name, why = ir_measures_name(measure)
    if theirs is None:
        assert (name, why) == (None, "no such measure in ir-measures")
        assert str(measure) not in ir_measures.measures.registry
    else:
        assert why == "" and name is not None
        _same_in_ir_measures(name, theirs)


def test_all_trec_is_every_measure_of_the_table() -> None:
    assert [m.trec_name for m in parse_measures(["all_trec"])] == list(ALL_TREC)


@pytest.mark.parametrize("text", DEFAULT_RAG)
def test_the_rag_set(text: str) -> None:
    # ir_measures reads MRR and MAP as RR and AP; HitRate@k is its Success@k; it has no F1
    name, why = ir_measures_name(_one(text))
    if text.startswith("F1"):
        assert (name, why) == (None, "no such measure in ir-measures")
    else:
        assert why == "" and name is not None
        _same_in_ir_measures(name, text.replace("HitRate", "Success"))


@pytest.mark.parametrize(("text", "level", "judged_only"), list(CASES))
def test_every_case(text: str, level: int, judged_only: bool) -> None:
    expected = CASES[text, level, judged_only]
    name, why = ir_measures_name(_one(text), level, judged_only)
    if name is None:
        assert why == expected
        return
    assert why == ""
    _same_in_ir_measures(name, expected)


def test_every_notation_name_and_ranx_name_is_a_case() -> None:
    from trec_rag_eval.measures.ir_notation import NAMES
    from trec_rag_eval.measures.requests import RANX_NAMES

    asked = {text.split("@")[0].split("(")[0] for text, _, _ in CASES}
    assert set(NAMES) - asked == set()
    assert set(RANX_NAMES) - asked == {"dcg_burges", "r_precision"}


def _pytrec_eval_asks(monkeypatch: pytest.MonkeyPatch, name: str) -> tuple[str, int, bool]:
    """The trec_eval measure (with its relevance level and -J) ir_measures asks pytrec_eval for."""
    from ir_measures.providers import pytrec_eval_provider as provider_module

    monkeypatch.setattr(provider_module, "PytrecEvalInvoker",
                        lambda pte, qrels, measure_map, rel, judged_only: (measure_map, rel, judged_only))
    [(measure_map, rel, judged_only)] = provider_module.PytrecEvalProvider()._build_invokers(
        [ir_measures.parse_measure(name)], {})
    [(_, trec_name)] = measure_map.values()
    return trec_name, rel, judged_only


@pytest.mark.parametrize(("text", "level", "judged_only"), [
    ("P@5", 1, False), ("P@5", 2, True), ("map", 1, False), ("map_cut.100", 3, False), ("recip_rank", 2, True),
    ("Rprec", 1, True), ("bpref", 2, False), ("infAP", 1, False), ("num_rel_ret", 2, False), ("set_P", 1, True),
    ("set_relative_P", 2, False), ("set_recall", 2, False), ("set_map", 1, True), ("set_F.2.0", 1, False),
    ("success.5", 2, True), ("iprec_at_recall.0.3", 1, True), ("recall.10", 1, True), ("ndcg", 1, True),
    ("ndcg_cut.10", 1, False),
])
def test_pytrec_eval_is_asked_for_the_trec_eval_measure_we_compute(monkeypatch, text, level, judged_only) -> None:
    measure = _one(text)
    name, _ = ir_measures_name(measure, level, judged_only)
    assert name is not None
    trec_name, rel, judged = _pytrec_eval_asks(monkeypatch, name)
    graded = measure.family in ("ndcg", "ndcg_cut")  # pytrec_eval reads gains, not a level
    assert (trec_name, judged) == (measure.trec_name, judged_only)
    assert graded or rel == level
