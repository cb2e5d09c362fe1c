"""The measure registry: every family once, in trec_eval's output order, with its definition.

Adding a measure is one ``Family`` entry here and one kernel in a family module. The ``measures``
command and the README's measure table are generated from this registry.
"""

from __future__ import annotations

from trec_rag_eval.measures import agreement, binary, cwl, diversity, graded, sets
from trec_rag_eval.measures.model import REGISTERED, Family, register

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = tuple(i / 10 for i in range(11))

_NDEVAL_REFERENCE = "ndeval (TREC Web track)"
_CWL_REFERENCE = "Azzopardi, Thomas & Moffat, SIGIR 2019 (C/W/L); cwl_eval, depth 1000"
_NERR_REFERENCE = "Azzopardi, Mackenzie & Moffat, ICTIR 2021; cwl_eval, depth 1000"

_FAMILIES = [
    Family("runid", lambda ctx, m: None, "The run tag of the last line of the run file.", value_type="str",
           aggregate="none", per_query=False, value_range=None),
    Family("num_q", binary.num_q, "Number of evaluated queries (1 per query, summed).", value_type="int",
           aggregate="sum", notation="NumQ", ir_measures="NumQ", value_range=None),
    Family("num_ret", binary.num_ret, "Documents retrieved (after -M and -J).", value_type="int", aggregate="sum",
           notation="NumRet", ir_measures="NumRet", value_range=None),
    Family("num_rel", binary.num_rel, "Relevant documents in the qrels (judgment >= level).", value_type="int",
           aggregate="sum", notation="NumRel", ir_measures="NumRel", value_range=None),
    Family("num_rel_ret", binary.num_rel_ret, "Relevant documents retrieved.", value_type="int", aggregate="sum",
           notation="NumRelRet", ir_measures="NumRet(rel=1)", value_range=None),
    Family("map", binary.average_precision,
           "Average precision: sum of P@k at the ranks of relevant retrieved documents, divided by R "
           "(all relevant documents). 0 when R = 0.", notation="AP", ir_measures="AP"),
    Family("gm_map", binary.geometric_average_precision,
           "Geometric mean of AP over queries, each AP floored at 1e-5. Summary only.",
           aggregate="gmean", per_query=False, notation="GMAP"),
    Family("Rprec", binary.r_precision, "Precision at rank R (R-precision). 0 when R = 0.",
           notation="Rprec", ir_measures="Rprec"),
    Family("bpref", binary.bpref,
           "Binary preference: relevant retrieved documents, each penalised by the judged non-relevant "
           "documents above it, min(n, R) / min(NonRel, R); divided by R.", notation="Bpref", ir_measures="Bpref",
           reference="Buckley & Voorhees, SIGIR 2004"),
    Family("recip_rank", binary.reciprocal_rank, "1 / rank of the first relevant document; 0 if none.",
           notation="RR", ir_measures="RR"),
    Family("iprec_at_recall", binary.iprec_at_recall,
           "Interpolated precision at recall level p: the best P@i at or below the rank where "
           "lround(p*R) relevant documents are retrieved.", kind="real_cutoffs", defaults=_RECALL_LEVELS,
           notation="IPrec", ir_measures="IPrec"),
    Family("P", binary.precision, "Precision at k: relevant in the top k, divided by k (always k).",
           kind="int_cutoffs", defaults=_CUTOFFS, notation="P", ir_measures="P"),
    Family("relstring", sets.relstring,
           "The judgments of the top L documents as characters (digit, '>' above 9, '-' not in pool, "
           "'.' unjudged). Per query only.", kind="real_list", defaults=(10.0,), value_type="str",
           aggregate="none", extra_params=("length",), value_range=None),
    Family("recall", binary.recall, "Recall at k: relevant in the top k, divided by R.", kind="int_cutoffs",
           defaults=_CUTOFFS, notation="R", ir_measures="R"),
    Family("infAP", binary.inferred_ap,
           "Inferred AP for incomplete judgments (qrels value -1 = sampled out).", notation="infAP",
           ir_measures="infAP", reference="Yilmaz & Aslam, CIKM 2006"),
    Family("gm_bpref", binary.geometric_bpref, "Geometric mean of bpref, floored at 1e-5. Summary only.",
           aggregate="gmean", per_query=False, notation="GMBpref"),
    Family("Rprec_mult", binary.r_precision_mult,
           "Precision at rank floor(p*R + 0.9), not interpolated.", kind="real_cutoffs",
           defaults=tuple(i / 10 for i in range(2, 21, 2)), notation="RprecMult"),
    Family("utility", sets.utility,
           "a*RelRet + b*(N-RelRet) + c*(R-RelRet) + d*(num_docs+RelRet-N-R); default 1,-1,0,0.",
           kind="real_list", defaults=(1.0, -1.0, 0.0, 0.0), notation="Utility", extra_params=("coefficients",),
           value_range=None),
    Family("11pt_avg", binary.eleven_point_average,
           "Mean interpolated precision over the recall levels (default 0.0, 0.1, ..., 1.0).",
           kind="real_list", defaults=_RECALL_LEVELS, notation="IPrecAvg", extra_params=("levels",)),
    Family("binG", binary.binary_g, "Binary G: 1/log2(2 + non-relevant above) summed over relevant "
           "retrieved documents, divided by R.", notation="binG"),
    Family("G", graded.cumulative_gain_g, "G: graded gain discounted by the ideal-minus-actual cumulative gain.",
           kind="pairs", notation="G", value_range=None),
    Family("dcg", graded.dcg, "Discounted cumulative gain: sum of gain_k / log2(k+1) over all retrieved.",
           kind="pairs", notation="DCG", value_range=None),
    Family("ideal_dcg", graded.ideal_dcg, "DCG of the ideal ranking of every judged document.",
           kind="pairs", notation="IDCG", value_range=None),
    Family("ndcg", graded.ndcg,
           "Normalised DCG over the whole ranking; the ideal list holds every judged document with "
           "positive gain, not cut to the number retrieved. Gains = judgments (linear).", kind="pairs",
           notation="nDCG", ir_measures="nDCG", reference="Järvelin & Kekäläinen, TOIS 2002"),
    Family("ndcg_rel", graded.ndcg_rel, "nDCG averaged over the ranks of the relevant documents.",
           kind="pairs", notation="nDCGRel"),
    Family("Rndcg", graded.r_ndcg, "nDCG averaged over the points where the ideal gain changes.",
           kind="pairs", notation="RnDCG"),
    Family("ndcg_cut", graded.ndcg_cut,
           "nDCG at k: DCG and IDCG both cut at k, gains = judgments (linear). 0 when IDCG@k = 0.",
           kind="int_cutoffs", defaults=_CUTOFFS, notation="nDCG", ir_measures="nDCG"),
    Family("map_cut", binary.average_precision,
           "AP counting only ranks <= k, still divided by R.", kind="int_cutoffs", defaults=_CUTOFFS,
           notation="AP", ir_measures="AP"),
    Family("relative_P", binary.relative_precision, "Relevant in the top k, divided by min(k, R).",
           kind="int_cutoffs", defaults=_CUTOFFS, notation="RelP"),
    Family("success", binary.success, "1 if a relevant document is in the top k, else 0.",
           kind="int_cutoffs", defaults=(1, 5, 10), notation="Success", ir_measures="Success"),
    Family("set_P", sets.set_precision, "Relevant retrieved / retrieved.", notation="SetP", ir_measures="SetP"),
    Family("set_relative_P", sets.set_relative_precision, "Relevant retrieved / min(N, R).",
           notation="SetRelP", ir_measures="SetRelP"),
    Family("set_recall", sets.set_recall, "Relevant retrieved / R.", notation="SetR", ir_measures="SetR"),
    Family("set_map", sets.set_map, "set_P * set_recall.", notation="SetAP", ir_measures="SetAP"),
    Family("set_F", sets.set_f, "F-measure of set_P and set_recall with beta^2 = x (default 1).",
           kind="real_list", defaults=(1.0,), notation="SetF", ir_measures="SetF", extra_params=("beta2",)),
    Family("num_nonrel_judged_ret", binary.num_nonrel_judged_ret, "Judged non-relevant documents retrieved.",
           value_type="int", aggregate="sum", notation="NumNonRelJudgedRet", value_range=None),
    Family("yaap", binary.yaap, "Yet another AP: log((1+S)/(1+R-S)), S = sum of P@k at relevant ranks.",
           notation="yaap", value_range=None),
    Family("rbp", graded.rbp, "Rank-biased precision, persistence p (default 0.9), gains scaled to [0, 1].",
           kind="pairs", notation="RBP", reference="Moffat & Zobel, TOIS 2008"),
    Family("rbp_resid", graded.rbp_resid, "RBP residual owed to unjudged documents (0 when all are judged).",
           kind="pairs", notation="RBPResid"),
    Family("unj", sets.unjudged_at, "Share of the top k without a judgment, divided by k.",
           kind="int_cutoffs", defaults=(5, 10, 20), notation="Unj"),
    # -- not in trec_eval ----------------------------------------------------------------------
    Family("F1", binary.f1, "Harmonic mean of P@k and R@k per query; 0 when both are 0.",
           kind="int_cutoffs", defaults=(1, 3, 5, 10), notation="F1",
           reference="van Rijsbergen's F with beta = 1, at the same k"),
    Family("Judged", sets.judged_at, "Share of the top min(k, N) documents that are judged.",
           kind="int_cutoffs", notation="Judged", ir_measures="Judged"),
    Family("ERR", graded.expected_reciprocal_rank,
           "Expected reciprocal rank: sum of (1/r) R_r prod_{i<r}(1-R_i), R = (2^g-1)/16 (gdeval.pl, "
           "maximum judgment 4).",
           kind="int_cutoffs", notation="ERR", ir_measures="ERR",
           reference="Chapelle et al., CIKM 2009; gdeval.pl (TREC Web track)"),
    Family("Compat", agreement.compat,
           "Compatibility: rank-biased overlap (persistence p, default 0.95) of the run with the ideal ranking "
           "(documents judged > 0, highest judgment first; equal judgments in the run's order, unretrieved "
           "last), to depth max(N, n); normalised by the ideal ranking's own overlap unless normalize=False.",
           notation="Compat", ir_measures="Compat", reference="Clarke, Vtyurina & Smucker, TOIS 2021"),
    Family("Accuracy", agreement.accuracy,
           "Pairwise accuracy: of the (relevant, non-relevant) pairs in the top k (all retrieved without k; "
           "unjudged = non-relevant), the share ranked relevant first. 1 with no non-relevant one, 0 with no "
           "relevant one (ir-measures leaves such queries out of its mean).",
           kind="int_cutoffs", notation="Accuracy", ir_measures="Accuracy",
           reference="ir_measures (accuracy provider)"),
    # -- intent-aware / diversity measures over subtopic qrels (ndeval; see measures/diversity.py) -----
    Family("alpha_nDCG", diversity.alpha_ndcg,
           "alpha-nDCG@k (subtopic qrels): sum of novelty-discounted gains score_i/log2(i+1), score_i = sum over "
           "the subtopics the document covers of (1-alpha)^(documents above covering it), divided by the "
           "greedy ideal ranking's.", kind="int_cutoffs", notation="alpha_nDCG", ir_measures="alpha_nDCG",
           reference=_NDEVAL_REFERENCE + "; Clarke et al., SIGIR 2008", subtopics=True),
    Family("alpha_DCG", diversity.alpha_dcg,
           "alpha-DCG@k (subtopic qrels): as alpha-nDCG, divided by the 'ideal ideal' sum of S(1-alpha)^(i-1)/"
           "log2(i+1), S = subtopics with a relevant document (not divided at k = 1, as ndeval).",
           kind="int_cutoffs", notation="alpha_DCG", ir_measures="alpha_DCG", reference=_NDEVAL_REFERENCE,
           subtopics=True),
    Family("ERR_IA", diversity.err_ia,
           "ERR-IA@k (subtopic qrels, ndeval): sum of score_i/i, divided by the 'ideal ideal' sum of "
           "S(1-alpha)^(i-1)/i (not divided at k = 1); alpha = 0.5.", kind="int_cutoffs", notation="ERR_IA",
           ir_measures="ERR_IA", reference=_NDEVAL_REFERENCE + "; Chapelle et al., CIKM 2009", subtopics=True),
    Family("nERR_IA", diversity.nerr_ia,
           "nERR-IA@k (subtopic qrels, ndeval): sum of score_i/i divided by the greedy ideal ranking's.",
           kind="int_cutoffs", notation="nERR_IA", ir_measures="nERR_IA", reference=_NDEVAL_REFERENCE,
           subtopics=True),
    Family("NRBP", diversity.nrbp,
           "Novelty- and rank-biased precision (subtopic qrels): (1-(1-alpha)beta)/S * sum of score_i "
           "beta^(i-1) over the whole ranking.", notation="NRBP", ir_measures="NRBP",
           reference=_NDEVAL_REFERENCE + "; Clarke et al., ICTIR 2009", subtopics=True),
    Family("nNRBP", diversity.nnrbp,
           "NRBP divided by the greedy ideal ranking's NRBP (subtopic qrels).", notation="nNRBP",
           ir_measures="nNRBP", reference=_NDEVAL_REFERENCE, subtopics=True),
    Family("P_IA", diversity.precision_ia,
           "Intent-aware precision@k (subtopic qrels): relevant (document, subtopic) pairs in the top k, "
           "divided by k S.", kind="int_cutoffs", notation="P_IA", ir_measures="P_IA",
           reference=_NDEVAL_REFERENCE + "; Agrawal et al., WSDM 2009", subtopics=True),
    Family("AP_IA", diversity.ap_ia,
           "Intent-aware AP (subtopic qrels): the mean over the S subtopics of each subtopic's AP.",
           notation="AP_IA", ir_measures="AP_IA", reference=_NDEVAL_REFERENCE, subtopics=True),
    Family("StRecall", diversity.subtopic_recall,
           "Subtopic recall@k (subtopic qrels): subtopics with a relevant document in the top k, divided "
           "by S.", kind="int_cutoffs", notation="StRecall", ir_measures="StRecall",
           reference=_NDEVAL_REFERENCE + "; Zhai et al., SIGIR 2003", subtopics=True),
    # -- the C/W/L family: expected gain per document under a user model (see measures/cwl.py) ---------
    Family("SDCG", cwl.expected_utility,
           "Scaled DCG at k (C/W/L): sum over ranks <= k of g_i/log2(i+1), divided by sum of 1/log2(i+1): "
           "as if k documents of gain 1 existed. Gains (j - min_rel)/(max_rel - min_rel), clipped to [0, 1].",
           kind="int_cutoffs", notation="SDCG", ir_measures="SDCG", reference=_CWL_REFERENCE),
    Family("NERR8", cwl.expected_utility,
           "Not-but-nearly ERR, eq. 8 (C/W/L): continue with probability 1 - g_i up to rank k.",
           kind="int_cutoffs", notation="NERR8", ir_measures="NERR8", reference=_NERR_REFERENCE),
    Family("NERR9", cwl.expected_utility,
           "Not-but-nearly ERR, eq. 9 (C/W/L): continue with probability (i/(i+1)) (1 - g_i) up to rank k.",
           kind="int_cutoffs", notation="NERR9", ir_measures="NERR9", reference=_NERR_REFERENCE),
    Family("NERR10", cwl.expected_utility,
           "Not-but-nearly ERR, eq. 10 (C/W/L): continue with probability p (1 - g_i), p default 0.9.",
           notation="NERR10", ir_measures="NERR10", reference=_NERR_REFERENCE),
    Family("NERR11", cwl.expected_utility,
           "Not-but-nearly ERR, eq. 11 (C/W/L): continue with probability ((i+2T-1)/(i+2T))^2 (1 - g_i), "
           "T default 1.", notation="NERR11", ir_measures="NERR11", reference=_NERR_REFERENCE),
    Family("INST", cwl.expected_utility,
           "INST (C/W/L): continue with probability ((i+T+T_i-1)/(i+T+T_i))^2, T_i = T minus the gain so far "
           "(T default 1).", notation="INST", ir_measures="INST",
           reference="Moffat, Bailey, Scholer & Thomas, ADCS 2015; cwl_eval"),
    Family("INSQ", cwl.expected_utility,
           "INSQ (C/W/L): continue with probability ((i+2T-1)/(i+2T))^2, T default 1.",
           notation="INSQ", ir_measures="INSQ", reference="Moffat, Scholer & Thomas, ADCS 2012; cwl_eval"),
    Family("BPM", cwl.expected_utility,
           "Static Bejeweled Player Model at k (C/W/L): continue while the gain so far is below T (default 1) "
           "and fewer than k documents are seen.", kind="int_cutoffs", notation="BPM", ir_measures="BPM",
           reference="Zhang et al., SIGIR 2017; cwl_eval"),
]

for _family in _FAMILIES:
    register(_family)
FAMILIES: dict[str, Family] = REGISTERED
ORDER = {name: i for i, name in enumerate(FAMILIES)}

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
}

# families trec_eval itself knows (the rest are ours or ir-measures')
TREC_EVAL_FAMILIES = frozenset(list(FAMILIES)[: list(FAMILIES).index("unj") + 1])
