"""The measure registry: every family once, in trec_eval's output order, with its definition.

Adding a measure is one ``Family`` entry here (its names in every notation, parameters, cross-check name and
definition) and one kernel in a family module (CONTRIBUTING.md, recipe 1). The ``measures``
command and the measure table of the documentation (docs/measures.md) are generated from this registry.
"""

from __future__ import annotations

from trec_rag_eval.measures import binary, graded, sets
from trec_rag_eval.measures.model import REGISTERED, Deferred, Family, IrMeasures, Kernel, Param, Range, register


def _later(module: str, name: str) -> Kernel:
    """The kernel ``name`` of the family module ``module``, imported when a measure of it is first computed
    (``model.Deferred``): the modules of preferences, judgment groups, diversity and C/W/L."""
    return Deferred(f"trec_rag_eval.measures.{module}", name)


_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = tuple(i / 10 for i in range(11))

_NDEVAL_REFERENCE = "ndeval (TREC Web track)"
_CWL_REFERENCE = "Azzopardi, Thomas & Moffat, SIGIR 2019 (C/W/L); cwl_eval, depth 1000"
_NERR_REFERENCE = "Azzopardi, Mackenzie & Moffat, ICTIR 2021; cwl_eval, depth 1000"

# -- the table of ranges: the values each real parameter means something at (``Param.within``). Our notation,
# trec_eval's -m, ir_measures' measure objects and ``Measure`` values are all checked against it, in one place
# (``Param.refusal``), and a value outside is refused with its range. A parameter of a measure trec_eval
# computes keeps every finite value trec_eval computes with (``rbp.p=1.5``), meaningful or not: the same
# request gives the same number here.
TREC_EVAL_ANY = Range(why="trec_eval computes with any value")
GAIN = Range(-1e9, 1e9, why="trec_eval orders the gains by their difference taken as an int, which larger ones "
             "overflow")
PERSISTENCE_RBO = Range(0.0, 1.0, open="low", why="the persistence of a rank-biased overlap: depth i weighs p^(i-1)")
CONTINUATION = Range(0.0, 1.0, why="the user goes on from each rank with probability p (1 - gain)")
DESIRED_GAIN = Range(0.0, open="low", why="the total gain the user wants, gains being in [0, 1]")
DESIRED_GAIN_INST = Range(0.25, why="the total gain the user wants, gains being in [0, 1]; below 0.25 INST's chance "
                          "of going on from a rank can exceed 1")
REDUNDANCY = Range(0.0, 1.0, why="the share of a subtopic's gain lost with each document already seen for it")
PATIENCE = Range(0.0, 1.0, why="rank i weighs beta^(i-1)")

# the parameters of our notation's names, typed (see measures/ir_notation.py)
REL = Param("int", help="relevance level: a judgment >= rel is relevant (overrides the evaluation's "
            "relevance level)")
JUDGED_ONLY = Param("bool", False, help="drop retrieved documents without a judgment first (trec_eval -J)",
                    widens=(True,))
BINARY = {"rel": REL, "judged_only": JUDGED_ONLY}
GAINS = Param("gains", help="custom gain per judgment, e.g. {1:1,2:3} (trec_eval ndcg.1=1,2=3)", within=GAIN)
_P_RBP = Param("float", 0.9, help="persistence (trec_eval's default 0.9; ir_measures' RBP defaults to 0.8: write "
               "RBP(p=0.8) for its value)", within=TREC_EVAL_ANY)
_NDCG = {
    "dcg": Param("str", "log2", ("log2", "exp-log2"),
                 "gain: 'log2' = judgment (trec_eval), 'exp-log2' = 2^judgment - 1 (gdeval)"),
    "gains": GAINS,
    "ideal": Param("str", "judged", ("judged", "retrieved"),
                   "ideal ranking from every judged document (trec_eval) or from the retrieved list only",
                   widens=("retrieved",)),
    "judged_only": JUDGED_ONLY,
}
_P = {**BINARY, "denominator": Param(
    "str", "k", ("k", "returned"), "divide by k (trec_eval) or by the documents returned in the top k")}
_MIN_REL = Param("level", 0, help="the judgment scaled to gain 0 (lower ones are clipped to it)", below="max_rel")
_MAX_REL = Param("level", help="the judgment scaled to gain 1 (higher ones are clipped to it); required",
                 required=True)
_T = Param("float", 1.0, help="the total gain the user wants (gains scaled to [0, 1])", within=DESIRED_GAIN)
_T_INST = Param("float", 1.0, help="the total gain the user wants (gains scaled to [0, 1])", within=DESIRED_GAIN_INST)
_CWL = {"min_rel": _MIN_REL, "max_rel": _MAX_REL}
_ALPHA = {"rel": REL, "alpha": Param("float", 0.5, help="redundancy intolerance: a subtopic's gain falls by "
                                    "(1 - alpha) with each document already seen for it", within=REDUNDANCY)}
_NRBP = {**_ALPHA, "beta": Param("float", 0.5, help="patience: the weight of rank i is beta^(i-1)", within=PATIENCE)}

# how the cross-check names them in ir_measures' notation, where it is not by name alone
_NO_JUDGED_ONLY = "ir-measures has no judged_only for this measure"
_GRADED = "none"  # graded measures take no relevance level in ir_measures
_NDCG_IR = IrMeasures("nDCG", rel=_GRADED,
                      refused=(("ideal", "ir-measures' ideal ranking uses every judged document"),))
_RBP_NOT = "ir-measures' RBP has no custom gains and no judged_only"
_CWL_RBP = Range(-1.0, 1.0, open="both", why="cwl_eval divides RBP's weights by their sum over its 1000 ranks, "
                 "1 - p^1000, which is 0 at p = 1 and p = -1 and overflows further out: compared for -1 < p < 1 only")


def _ndeval(name: str) -> IrMeasures:
    return IrMeasures(name, judged_only="the cross-check has no judged_only for the intent-aware measures",
                      max_cutoff=(20, "pyndeval (ndeval) computes these measures at cutoffs 1 to 20 only"))


def _own(name: str, rel: str = _GRADED) -> IrMeasures:
    """A measure of one ir_measures provider that has no judged_only (C/W/L, compat, accuracy)."""
    return IrMeasures(name, rel=rel, judged_only=f"ir-measures' {name} has no judged_only")



def _prefs(name: str, kernel_name: str, definition: str, count: bool = False) -> Family:
    """A family of trec_eval's preference measures, its kernel ``kernel_name`` of ``measures.preferences``: read
    from preference judgments, named as trec_eval names them in every notation; a count is summed over queries,
    not averaged."""
    kernel = _later("preferences", kernel_name)
    if count:
        return Family(name, kernel, definition, names=(name,), judgments="preferences", value_type="int",
                      aggregate="sum", value_range=None)
    return Family(name, kernel, definition, names=(name,), judgments="preferences")


_IMPLIED = " A preference with one document retrieved counts (fulfilled when that one is preferred)"
_NONE = ", one with neither retrieved is possible, never fulfilled."
_PREFERENCE_FAMILIES = [
    _prefs("prefs_num_prefs_poss", "num_prefs_possible",
           "Preferences possible, retrieved or not (summed over queries).", count=True),
    _prefs("prefs_num_prefs_ful", "num_prefs_fulfilled",
           "Preferences fulfilled: the preferred document retrieved above the other, or retrieved alone "
           "(summed over queries).", count=True),
    _prefs("prefs_num_prefs_ful_ret", "num_prefs_fulfilled_ret",
           "Preferences fulfilled between retrieved documents (summed over queries).", count=True),
    _prefs("prefs_simp", "prefs_simp",
           "Preferences fulfilled / possible, every judgment group together." + _IMPLIED + _NONE),
    _prefs("prefs_pair", "prefs_pair",
           "Mean over pairs of documents of the share of their preferences (from every group) that the ranking "
           "fulfils; a pair with neither retrieved scores 0."),
    _prefs("prefs_avgjg", "prefs_avgjg",
           "Preferences fulfilled / possible in each judgment group, averaged over the query's groups." + _IMPLIED
           + _NONE),
    _prefs("prefs_avgjg_Rnonrel", "prefs_avgjg_rnonrel",
           "prefs_avgjg with each group's non-relevant documents (level 0) counted as many as its relevant ones "
           "(level > 0): the first R non-relevant ones, or R - N extra non-relevant ones ranked last."),
    _prefs("prefs_simp_ret", "prefs_simp_ret", "prefs_simp over pairs of retrieved documents only."),
    _prefs("prefs_pair_ret", "prefs_pair_ret", "prefs_pair over pairs of retrieved documents only."),
    _prefs("prefs_avgjg_ret", "prefs_avgjg_ret", "prefs_avgjg over pairs of retrieved documents only."),
    _prefs("prefs_avgjg_Rnonrel_ret", "prefs_avgjg_rnonrel_ret",
           "prefs_avgjg_Rnonrel over retrieved documents only (R and N count the retrieved ones)."),
    _prefs("prefs_simp_imp", "prefs_simp_imp",
           "prefs_simp over pairs with at least one document retrieved."),
    _prefs("prefs_pair_imp", "prefs_pair_imp",
           "prefs_pair over pairs with at least one document retrieved."),
    _prefs("prefs_avgjg_imp", "prefs_avgjg_imp",
           "prefs_avgjg over pairs with at least one document retrieved."),
]

TREC_EVAL_ORDER = [
    Family("runid", lambda ctx, m: None, "The run tag of the last line of the run file.", value_type="str",
           aggregate="none", per_query=False, names=("runid",), value_range=None, run_tag=True, judgments="any"),
    Family("num_q", binary.num_q, "Number of evaluated queries (1 per query, summed).", value_type="int",
           aggregate="sum", names=("NumQ",), ir_measures=IrMeasures("NumQ", rel=_GRADED, judged_only=_NO_JUDGED_ONLY),
           value_range=None, trec_per_query=False, judgments="any", zscore=False),
    Family("num_ret", binary.num_ret, "Documents retrieved (after -M and -J).", value_type="int", aggregate="sum",
           names=("NumRet",), params={"rel": REL},
           ir_measures=IrMeasures("NumRet", rel=_GRADED, judged_only=_NO_JUDGED_ONLY), value_range=None),
    Family("num_rel", binary.num_rel, "Relevant documents in the qrels (judgment >= level).", value_type="int",
           aggregate="sum", names=("NumRel",), params={"rel": REL},
           ir_measures=IrMeasures("NumRel", judged_only=_NO_JUDGED_ONLY), value_range=None),
    Family("num_rel_ret", binary.num_rel_ret, "Relevant documents retrieved.", value_type="int", aggregate="sum",
           names=("NumRelRet",), aliases=("NumRet(rel=k)",), params={"rel": REL},
           ir_measures=IrMeasures("NumRet", rel="always", judged_only=_NO_JUDGED_ONLY), value_range=None),
    Family("map", binary.average_precision,
           "Average precision: sum of P@k at the ranks of relevant retrieved documents, divided by R "
           "(all relevant documents). 0 when R = 0.", names=("AP",), aliases=("MAP",), params=BINARY,
           ranx={"map": "MAP"}, ir_measures=IrMeasures("AP")),
    Family("gm_map", binary.geometric_average_precision,
           "Geometric mean of AP over queries, each AP floored at 1e-5. Summary only.",
           aggregate="gmean", per_query=False, names=("GMAP",), params={"rel": REL}),
    Family("Rprec", binary.r_precision, "Precision at rank R (R-precision). 0 when R = 0.",
           names=("Rprec",), aliases=("RPrec",), params=BINARY,
           ranx={"r-precision": "Rprec", "r_precision": "Rprec"}, ir_measures=IrMeasures("Rprec")),
    Family("bpref", binary.bpref,
           "Binary preference: relevant retrieved documents, each penalised by the judged non-relevant "
           "documents above it, min(n, R) / min(NonRel, R); divided by R.", names=("Bpref",), aliases=("BPref",),
           params={"rel": REL}, ranx={"bpref": "Bpref"}, ir_measures=IrMeasures("Bpref", judged_only=_NO_JUDGED_ONLY),
           reference="Buckley & Voorhees, SIGIR 2004"),
    Family("recip_rank", binary.reciprocal_rank, "1 / rank of the first relevant document; 0 if none.",
           names=("RR", "RR@k"), aliases=("MRR", "MRR@k"), params=BINARY,
           ranx={"mrr": "MRR"}, ir_measures=IrMeasures("RR"), reads_top=True),
    Family("iprec_at_recall", binary.iprec_at_recall,
           "Interpolated precision at recall level p: the best P@i at or below the rank where "
           "lround(p*R) relevant documents are retrieved.", kind="real_cutoffs", defaults=_RECALL_LEVELS,
           names=("IPrec@p",), params=BINARY,
           # trec_eval 9 (pytrec_eval) cuts at floor(p*R + 0.9)
           ir_measures=IrMeasures("IPrec", conventions=(("iprec9", "pytrec_eval"),)), trec_eval_9=True),
    Family("P", binary.precision, "Precision at k: relevant in the top k, divided by k (always k).",
           kind="int_cutoffs", defaults=_CUTOFFS, names=("P@k",), aliases=("Precision@k",), params=_P,
           ranx={"precision": "P"},
           ir_measures=IrMeasures("P", refused=(("denominator", "ir-measures' P always divides by k"),)),
           reads_top=True),
    Family("relstring", sets.relstring,
           "The judgments of the top k documents (default 10) as characters (digit, '>' above 9, '-' not in "
           "pool, '.' unjudged). Per query only.", kind="real_list", defaults=(10.0,), value_type="str",
           aggregate="none", names=("relstring", "relstring@k"), list_param="length", list_first="@",
           value_range=None, quoted=True),
    Family("recall", binary.recall, "Recall at k: relevant in the top k, divided by R.", kind="int_cutoffs",
           defaults=_CUTOFFS, names=("R@k",), aliases=("Recall@k",), params=BINARY,
           ranx={"recall": "R"}, ir_measures=IrMeasures("R"), reads_top=True),
    Family("infAP", binary.inferred_ap,
           "Inferred AP for incomplete judgments (qrels value -1 = sampled out).", names=("infAP",),
           params={"rel": REL}, ir_measures=IrMeasures("infAP", judged_only=_NO_JUDGED_ONLY),
           reference="Yilmaz & Aslam, CIKM 2006"),
    Family("gm_bpref", binary.geometric_bpref, "Geometric mean of bpref, floored at 1e-5. Summary only.",
           aggregate="gmean", per_query=False, names=("GMBpref",)),
    Family("Rprec_mult", binary.r_precision_mult,
           "Precision at rank floor(p*R + 0.9), not interpolated.", kind="real_cutoffs",
           defaults=tuple(i / 10 for i in range(2, 21, 2)), names=("RprecMult@x",)),
    Family("utility", sets.utility,
           "a*RelRet + b*(N-RelRet) + c*(R-RelRet) + d*(num_docs+RelRet-N-R); default 1,-1,0,0.",
           kind="real_list", defaults=(1.0, -1.0, 0.0, 0.0), names=("Utility",),
           params={"coefficients": Param("reals", (1.0, -1.0, 0.0, 0.0), help="a,b,c,d, e.g. (2,-1,0,0)", size=4,
                                         within=TREC_EVAL_ANY)},
           list_param="coefficients",
           list_values=("a", "b", "c", "d"), value_range=None),
    Family("11pt_avg", binary.eleven_point_average,
           "Mean interpolated precision over the recall levels (default 0.0, 0.1, ..., 1.0).",
           kind="real_list", defaults=_RECALL_LEVELS, names=("IPrecAvg",),
           params={"levels": Param("reals", _RECALL_LEVELS, help="the recall levels averaged, e.g. (0.2,0.5)",
                                    within=TREC_EVAL_ANY)},
           list_param="levels", trec_eval_9=True),
    Family("binG", binary.binary_g, "Binary G: 1/log2(2 + non-relevant above) summed over relevant "
           "retrieved documents, divided by R.", names=("binG",)),
    Family("G", graded.cumulative_gain_g, "G: graded gain discounted by the ideal-minus-actual cumulative gain.",
           kind="gain_pairs", names=("G",), params={"gains": GAINS}, value_range=None),
    Family("dcg", graded.dcg, "Discounted cumulative gain: sum of gain_k / log2(k+1) over all retrieved.",
           kind="gain_pairs", names=("DCG", "DCG@k"), params={k: v for k, v in _NDCG.items() if k != "ideal"},
           ranx={"dcg": "DCG", "dcg_burges": "DCG(dcg='exp-log2')"}, value_range=None, reads_top=True),
    Family("ideal_dcg", graded.ideal_dcg, "DCG of the ideal ranking of every judged document.",
           kind="gain_pairs", names=("IDCG", "IDCG@k"), params=_NDCG, value_range=None, reads_top=True),
    Family("ndcg", graded.ndcg,
           "Normalised DCG over the whole ranking; the ideal list holds every judged document with "
           "positive gain, not cut to the number retrieved. Gains = judgments (linear).", kind="gain_pairs",
           names=("nDCG", "NDCG"), params=_NDCG,
           ranx={"ndcg": "nDCG", "ndcg_burges": "nDCG(dcg='exp-log2')"}, ir_measures=_NDCG_IR,
           reference="Järvelin & Kekäläinen, TOIS 2002"),
    Family("ndcg_rel", graded.ndcg_rel, "nDCG averaged over the ranks of the relevant documents.",
           kind="gain_pairs", names=("nDCGRel",), params={"gains": GAINS}),
    Family("Rndcg", graded.r_ndcg, "nDCG averaged over the points where the ideal gain changes.",
           kind="gain_pairs", names=("RnDCG",), params={"gains": GAINS}),
    Family("ndcg_cut", graded.ndcg_cut,
           "nDCG at k: DCG and IDCG both cut at k, gains = judgments (linear). 0 when IDCG@k = 0.",
           kind="int_cutoffs", defaults=_CUTOFFS, names=("nDCG@k", "NDCG@k"), params=_NDCG, ir_measures=_NDCG_IR,
           reads_top=True),
    Family("map_cut", binary.average_precision,
           "AP counting only ranks <= k, still divided by R.", kind="int_cutoffs", defaults=_CUTOFFS,
           names=("AP@k",), aliases=("MAP@k",), params=BINARY,
           ir_measures=IrMeasures("AP"), reads_top=True),
    Family("relative_P", binary.relative_precision, "Relevant in the top k, divided by min(k, R).",
           kind="int_cutoffs", defaults=_CUTOFFS, names=("RelP@k",), params=BINARY, reads_top=True),
    Family("success", binary.success, "1 if a relevant document is in the top k, else 0.",
           kind="int_cutoffs", defaults=(1, 5, 10), names=("Success@k",), aliases=("HitRate@k",),
           params=BINARY, ranx={"hit_rate": "HitRate"}, ir_measures=IrMeasures("Success"), reads_top=True),
    Family("set_P", sets.set_precision, "Relevant retrieved / retrieved.", names=("SetP",),
           params={**BINARY, "relative": Param("bool", False, help="divide by min(N, R)")},
           ir_measures=IrMeasures("SetP")),
    Family("set_relative_P", sets.set_relative_precision, "Relevant retrieved / min(N, R).",
           names=("SetRelP",), aliases=("SetP(relative=True)",), params=BINARY,
           ir_measures=IrMeasures("SetP", first=(("relative", True),))),
    Family("set_recall", sets.set_recall, "Relevant retrieved / R.", names=("SetR",), params={"rel": REL},
           ir_measures=IrMeasures("SetR", judged_only=_NO_JUDGED_ONLY)),
    Family("set_map", sets.set_map, "set_P * set_recall.", names=("SetAP",), params=BINARY,
           ir_measures=IrMeasures("SetAP")),
    Family("set_F", sets.set_f, "F-measure of set_P and set_recall with beta^2 = x (default 1).",
           kind="real_list", defaults=(1.0,), names=("SetF",),
           params={**BINARY, "beta": Param("float", 1.0, help="trec_eval's set_F parameter x: (x+1)PR/(xP+R), so "
                                           "it acts as beta squared", within=TREC_EVAL_ANY)},
           ir_measures=IrMeasures("SetF", first=(("beta", None),), within=(("beta", Range(
               0.0, why="pytrec_eval reads set_F's parameter without a sign: compared for beta >= 0 only")),)),
           list_param="beta2",
           list_first="beta"),
    Family("num_nonrel_judged_ret", binary.num_nonrel_judged_ret, "Judged non-relevant documents retrieved.",
           value_type="int", aggregate="sum", names=("NumNonRelJudgedRet",), value_range=None),
    *_PREFERENCE_FAMILIES,
    Family("map_avgjg", _later("groups", "map_avgjg"),
           "AP of each judgment group (the qrels' iteration column, -R qrels_jg), averaged over the query's groups.",
           names=("AP_avgjg",), params={"rel": REL}, judgments="groups"),
    Family("P_avgjg", _later("groups", "p_avgjg"), "P@k of each judgment group, averaged over the query's groups.",
           kind="int_cutoffs", defaults=_CUTOFFS, names=("P_avgjg@k",), params={"rel": REL}, judgments="groups"),
    Family("Rprec_mult_avgjg", _later("groups", "rprec_mult_avgjg"),
           "Precision at rank floor(x*R + 0.9) of each judgment group (R its relevant documents), averaged over "
           "the query's groups.", kind="real_cutoffs", defaults=tuple(i / 10 for i in range(2, 21, 2)),
           names=("RprecMult_avgjg@x",), params={"rel": REL}, judgments="groups"),
    Family("yaap", binary.yaap, "Yet another AP: log((1+S)/(1+R-S)), S = sum of P@k at relevant ranks.",
           names=("yaap",), value_range=None),
    Family("rbp", graded.rbp, "Rank-biased precision, persistence p (default 0.9), gains scaled to [0, 1].",
           kind="gain_pairs", names=("RBP", "RBP@k"),
           params={"p": _P_RBP, "gains": GAINS,
                   "rel": Param("int", help="binary gains: 1 for a judgment >= rel, 0 otherwise (without it, "
                                "graded gains scaled to [0, 1])")},
           # graded RBP (no rel) is trectools' only, which ir-measures leaves out of its default pipeline;
           # binary RBP(rel=r) is cwl_eval's
           ir_measures=IrMeasures("RBP", rel="asked", first=(("p", 0.9),), judged_only=_RBP_NOT,
                                  refused=(("gains", _RBP_NOT),), conventions=(("cwl_depth", "cwl_eval"),),
                                  within=(("p", _CWL_RBP),)),
           reference="Moffat & Zobel, TOIS 2008"),
    Family("rbp_resid", graded.rbp_resid, "RBP residual owed to unjudged documents (0 when all are judged).",
           kind="gain_pairs", names=("RBPResid",), params={"gains": GAINS, "p": _P_RBP}),
    Family("unj", sets.unjudged_at, "Share of the top k without a judgment, divided by k.",
           kind="int_cutoffs", defaults=(5, 10, 20), names=("Unj@k",), reads_top=True),
]
"""trec_eval 10's own families, in its output order (its table of measures, ``te_trec_measures``): a family
here is named as trec_eval names it, prints as trec_eval prints it, and is checked against trec_eval."""

BEYOND_TREC_EVAL = [
    Family("F1", binary.f1, "Harmonic mean of P@k and R@k per query; 0 when both are 0.",
           kind="int_cutoffs", defaults=(1, 3, 5, 10), names=("F1@k",), params=BINARY, ranx={"f1": "F1"},
           reference="van Rijsbergen's F with beta = 1, at the same k", reads_top=True),
    Family("Judged", sets.judged_at, "Share of the top min(k, N) documents that are judged.",
           kind="int_cutoffs", names=("Judged", "Judged@k"),
           ir_measures=IrMeasures("Judged", rel=_GRADED, judged_only=_NO_JUDGED_ONLY,
                                  conventions=(("negative_judged", "judged"),
                                               ("tie_order+negative_judged", "judged"))), reads_top=True),
    Family("ERR", graded.expected_reciprocal_rank,
           "Expected reciprocal rank: sum of (1/r) R_r prod_{i<r}(1-R_i), R = (2^g-1)/16 (gdeval.pl, "
           "maximum judgment 4).",
           kind="int_cutoffs", names=("ERR", "ERR@k"),
           ir_measures=IrMeasures("ERR", rel=_GRADED, judged_only=_NO_JUDGED_ONLY),
           reference="Chapelle et al., CIKM 2009; gdeval.pl (TREC Web track)", reads_top=True),
    Family("Compat", _later("ideal_ordering", "compat"),
           "Compatibility: rank-biased overlap (persistence p, default 0.95) of the run with the ideal ranking "
           "(documents judged > 0, highest judgment first; equal judgments in the run's order, unretrieved "
           "last), to depth max(N, n); normalised by the ideal ranking's own overlap unless normalize=False.",
           names=("Compat",),
           params={"p": Param("float", 0.95, help="persistence of the rank-biased overlap", within=PERSISTENCE_RBO),
                   "normalize": Param("bool", True, help="divide by the ideal ranking's own overlap (a perfect "
                                      "run scores 1)")},
           ir_measures=_own("Compat"), reference="Clarke, Vtyurina & Smucker, TOIS 2021"),
    Family("Accuracy", _later("ideal_ordering", "accuracy"),
           "Pairwise accuracy: of the (relevant, non-relevant) pairs in the top k (all retrieved without k; "
           "unjudged = non-relevant), the share ranked relevant first. 1 with no non-relevant one, 0 with no "
           "relevant one (ir-measures leaves such queries out of its mean).",
           kind="int_cutoffs", names=("Accuracy", "Accuracy@k"), params={"rel": REL},
           ir_measures=_own("Accuracy", rel="level"),
           reference="ir_measures (accuracy provider)"),
    # -- intent-aware / diversity measures over subtopic qrels (ndeval; see measures/diversity.py) -----
    Family("alpha_nDCG", _later("diversity", "alpha_ndcg"),
           "alpha-nDCG@k (subtopic qrels): sum of novelty-discounted gains score_i/log2(i+1), score_i = sum over "
           "the subtopics the document covers of (1-alpha)^(documents above covering it), divided by the "
           "greedy ideal ranking's.", kind="int_cutoffs", names=("alpha_nDCG", "alpha_nDCG@k"),
           aliases=("α_nDCG", "α_nDCG@k"), params=_ALPHA, ir_measures=_ndeval("alpha_nDCG"),
           reference=_NDEVAL_REFERENCE + "; Clarke et al., SIGIR 2008", subtopics=True),
    Family("alpha_DCG", _later("diversity", "alpha_dcg"),
           "alpha-DCG@k (subtopic qrels): as alpha-nDCG, divided by the 'ideal ideal' sum of S(1-alpha)^(i-1)/"
           "log2(i+1), S = subtopics with a relevant document (not divided at k = 1, as ndeval).",
           kind="int_cutoffs", names=("alpha_DCG", "alpha_DCG@k"), aliases=("α_DCG", "α_DCG@k"), params=_ALPHA,
           ir_measures=_ndeval("alpha_DCG"), reference=_NDEVAL_REFERENCE,
           subtopics=True),
    Family("ERR_IA", _later("diversity", "err_ia"),
           "ERR-IA@k (subtopic qrels, ndeval): sum of score_i/i, divided by the 'ideal ideal' sum of "
           "S(1-alpha)^(i-1)/i (not divided at k = 1); alpha = 0.5.", kind="int_cutoffs",
           names=("ERR_IA", "ERR_IA@k"), params={"rel": REL}, ir_measures=_ndeval("ERR_IA"),
           reference=_NDEVAL_REFERENCE + "; Chapelle et al., CIKM 2009", subtopics=True),
    Family("nERR_IA", _later("diversity", "nerr_ia"),
           "nERR-IA@k (subtopic qrels, ndeval): sum of score_i/i divided by the greedy ideal ranking's.",
           kind="int_cutoffs", names=("nERR_IA", "nERR_IA@k"), params={"rel": REL},
           ir_measures=_ndeval("nERR_IA"), reference=_NDEVAL_REFERENCE,
           subtopics=True),
    Family("NRBP", _later("diversity", "nrbp"),
           "Novelty- and rank-biased precision (subtopic qrels): (1-(1-alpha)beta)/S * sum of score_i "
           "beta^(i-1) over the whole ranking.", names=("NRBP",), params=_NRBP,
           ir_measures=_ndeval("NRBP"),
           reference=_NDEVAL_REFERENCE + "; Clarke et al., ICTIR 2009", subtopics=True),
    Family("nNRBP", _later("diversity", "nnrbp"),
           "NRBP divided by the greedy ideal ranking's NRBP (subtopic qrels).", names=("nNRBP",), params=_NRBP,
           ir_measures=_ndeval("nNRBP"), reference=_NDEVAL_REFERENCE, subtopics=True),
    Family("P_IA", _later("diversity", "precision_ia"),
           "Intent-aware precision@k (subtopic qrels): relevant (document, subtopic) pairs in the top k, "
           "divided by k S.", kind="int_cutoffs", names=("P_IA", "P_IA@k"), params={"rel": REL},
           ir_measures=_ndeval("P_IA"),
           reference=_NDEVAL_REFERENCE + "; Agrawal et al., WSDM 2009", subtopics=True),
    Family("AP_IA", _later("diversity", "ap_ia"),
           "Intent-aware AP (subtopic qrels): the mean over the S subtopics of each subtopic's AP.",
           names=("AP_IA",), aliases=("MAP_IA",), params={"rel": REL},
           ir_measures=_ndeval("AP_IA"), reference=_NDEVAL_REFERENCE, subtopics=True),
    Family("StRecall", _later("diversity", "subtopic_recall"),
           "Subtopic recall@k (subtopic qrels): subtopics with a relevant document in the top k, divided "
           "by S.", kind="int_cutoffs", names=("StRecall", "StRecall@k"), params={"rel": REL},
           ir_measures=_ndeval("StRecall"),
           reference=_NDEVAL_REFERENCE + "; Zhai et al., SIGIR 2003", subtopics=True),
    # -- the C/W/L family: expected gain per document under a user model (see measures/cwl.py) ---------
    Family("SDCG", _later("cwl", "sdcg"),
           "Scaled DCG at k (C/W/L): sum over ranks <= k of g_i/log2(i+1), divided by sum of 1/log2(i+1): "
           "as if k documents of gain 1 existed. Gains (j - min_rel)/(max_rel - min_rel), clipped to [0, 1].",
           kind="int_cutoffs", names=("SDCG@k",),
           params={"dcg": Param("str", "log2", ("log2",), "DCG formulation (only 'log2')"), **_CWL},
           ir_measures=_own("SDCG"), reference=_CWL_REFERENCE),
    Family("NERR8", _later("cwl", "nerr8"),
           "Not-but-nearly ERR, eq. 8 (C/W/L): continue with probability 1 - g_i up to rank k.",
           kind="int_cutoffs", names=("NERR8@k",), params=_CWL,
           ir_measures=_own("NERR8"), reference=_NERR_REFERENCE),
    Family("NERR9", _later("cwl", "nerr9"),
           "Not-but-nearly ERR, eq. 9 (C/W/L): continue with probability (i/(i+1)) (1 - g_i) up to rank k.",
           kind="int_cutoffs", names=("NERR9@k",), params=_CWL,
           ir_measures=_own("NERR9"), reference=_NERR_REFERENCE),
    Family("NERR10", _later("cwl", "nerr10"),
           "Not-but-nearly ERR, eq. 10 (C/W/L): continue with probability p (1 - g_i), p default 0.9.",
           names=("NERR10",), params={"p": Param("float", 0.9, help="persistence", within=CONTINUATION), **_CWL},
           ir_measures=_own("NERR10"), reference=_NERR_REFERENCE),
    Family("NERR11", _later("cwl", "nerr11"),
           "Not-but-nearly ERR, eq. 11 (C/W/L): continue with probability ((i+2T-1)/(i+2T))^2 (1 - g_i), "
           "T default 1.", names=("NERR11",), params={"T": _T, **_CWL},
           ir_measures=_own("NERR11"), reference=_NERR_REFERENCE),
    Family("INST", _later("cwl", "inst"),
           "INST (C/W/L): continue with probability ((i+T+T_i-1)/(i+T+T_i))^2, T_i = T minus the gain so far "
           "(T default 1).", names=("INST",), params={"T": _T_INST, **_CWL},
           ir_measures=_own("INST"),
           reference="Moffat, Bailey, Scholer & Thomas, ADCS 2015; cwl_eval"),
    Family("INSQ", _later("cwl", "insq"),
           "INSQ (C/W/L): continue with probability ((i+2T-1)/(i+2T))^2, T default 1.",
           names=("INSQ",), params={"T": _T, **_CWL},
           ir_measures=_own("INSQ"), reference="Moffat, Scholer & Thomas, ADCS 2012; cwl_eval"),
    Family("BPM", _later("cwl", "bpm"),
           "Static Bejeweled Player Model at k (C/W/L): continue while the gain so far is below T (default 1) "
           "and fewer than k documents are seen.", kind="int_cutoffs", names=("BPM@k",), params={"T": _T, **_CWL},
           ir_measures=_own("BPM"),
           reference="Zhang et al., SIGIR 2017; cwl_eval"),
]
"""The families trec_eval does not have (ours, ir_measures', ndeval's, cwl_eval's), after trec_eval's: a new measure
outside trec_eval goes here, or is registered by its own module (``model.register``), and comes last."""

for _family in [*TREC_EVAL_ORDER, *BEYOND_TREC_EVAL]:
    register(_family)
FAMILIES: dict[str, Family] = REGISTERED
"""Every family, in trec_eval's output order: the order of registration (one registered later comes last)."""

# trec_eval's nicknames, in its own words (trec_eval -h)
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
                 "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
                 "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                 "num_nonrel_judged_ret", "unj", "rbp", "rbp_resid"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_relative_P",
            "set_recall", "set_map", "set_F"),
    "all_prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                  "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
                  "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp"),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}

TREC_EVAL_FAMILIES = frozenset(family.name for family in TREC_EVAL_ORDER)
"""The names of the families trec_eval itself has (``TREC_EVAL_ORDER``)."""
