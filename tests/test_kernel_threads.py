"""The kernels of a large run run on every core, each thread on a range of whole queries: every measure's
value for every query must be the very same bits as one pass over all queries gives."""

from __future__ import annotations

import numpy as np
import pytest

import trec_rag_eval as tre
from trec_rag_eval.core import ranking
from trec_rag_eval.measures.registry import FAMILIES


def _pair(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels: dict = {}
    run: dict = {}
    for q in range(37):
        qid = f"q{q}"
        docs = [f"d{d}" for d in range(int(rng.integers(1, 60)))]
        if q % 7 != 3:  # some queries with nothing judged
            qrels[qid] = {d: int(rng.integers(0, 4)) for d in rng.choice(docs, size=min(len(docs), 15),
                                                                          replace=False)}
        if q % 11 != 5:  # some queries missing from the run
            run[qid] = {d: float(rng.integers(0, 8)) for d in docs}  # many ties
    qrels["q_only_judged"] = {"dx": 2}
    return qrels, run


# the pair has queries missing from the run and run queries without judgments, on purpose (said as warnings)
pytestmark = pytest.mark.filterwarnings("ignore:.*(missing from the run|not in the qrels):UserWarning")

MEASURE_SETS = ["all_trec", "official", None, ["nDCG@10", "R@5", "MRR", "AP@100", "ERR@10", "Judged@10", "P@3"],
                ["rbp", "rbp_resid", "relstring", "utility.1,-1,0,0", "gm_bpref", "infAP", "ndcg_rel", "success.1,5"],
                ["SDCG(max_rel=3)@5", "NERR8(max_rel=3)@5", "NERR9(max_rel=3)@5", "NERR10(p=0.5,max_rel=3)",
                 "NERR11(max_rel=3)", "INSQ(max_rel=3)", "INST(max_rel=3)", "BPM(T=2.0,max_rel=3)@5", "Accuracy@5",
                 "Compat", "yaap", "DCG@5", "IDCG@5"]]


@pytest.mark.parametrize("threads", [2, 3, 5])
@pytest.mark.parametrize("measures", MEASURE_SETS, ids=lambda m: str(m)[:30])
def test_split_over_threads_gives_the_same_bits(monkeypatch, threads, measures) -> None:
    qrels, run = _pair(threads)
    settings = {2: {}, 3: {"relevance_level": 2}, 5: {"judged_only": True}}[threads]
    whole = tre.evaluate(qrels, run, measures, **settings)
    monkeypatch.setattr(ranking, "KERNEL_SPLIT_ROWS", 1)
    monkeypatch.setattr(ranking, "sort_threads", lambda: threads)
    ranges: list = []
    original = ranking.RankedQueries.thread_ranges
    monkeypatch.setattr(ranking.RankedQueries, "thread_ranges",
                        lambda ranked: ranges.append(original(ranked)) or ranges[-1])
    split = tre.evaluate(qrels, run, measures, **settings)
    assert len(ranges[0]) == threads  # the queries were indeed shared out
    assert [q for first, stop in ranges[0] for q in range(first, stop)] == list(range(len(whole.query_ids)))
    assert split.query_ids == whole.query_ids
    for measure in whole.measures:
        a, b = whole.values.get(measure), split.values.get(measure)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), measure
        else:
            assert a == b, measure
        assert repr(whole.summary.get(measure)) == repr(split.summary.get(measure)), measure


def test_every_family_is_covered_by_the_sets() -> None:
    """The sets above reach every measure family a per-query kernel computes, so none escapes the check."""
    qrels, run = _pair(2)
    seen = {m.family for measures in MEASURE_SETS for m in tre.evaluate(qrels, run, measures).measures}
    # (the intent-aware measures read subtopic judgments aligned with the whole run, and the measures of
    # judgment groups and preferences their own judgments: they stay on one thread)
    missing = {name for name, family in FAMILIES.items()
               if family.per_query and not family.subtopics and family.judgments in ("relevance", "any")
               and name not in seen}
    assert not missing, f"add a measure of each of these families to MEASURE_SETS: {sorted(missing)}"


def test_a_small_run_stays_on_one_thread() -> None:
    qrels, run = _pair(1)
    from trec_rag_eval.core.ranking import rank
    from trec_rag_eval.service.inputs import as_qrels, as_run

    q = as_qrels(qrels)
    ranked = rank(q, as_run(run))
    assert ranked.thread_ranges() == [(0, ranked.num_queries)]
