"""Measures that read no further than their cutoff (``Family.reads_top``: nDCG@10, P@5, R@k, HitRate@k...)
are evaluated on each query's first rows alone: the ranking puts every row in order but matches only the
first ``ranks_read(measures)`` of each query with the judgments. The values must be those of the whole
ranking, bit for bit: each measure is evaluated alone (cut) and beside ``num_ret``, which reads every row, so
nothing is cut. A family flagged that reads deeper (an ideal sorted from every retrieved document, ranks
closed up by ``judged_only``) makes these differ on the random runs below, which hold relevant documents far
below every cutoff, ties across the cut, negative (unjudged) judgments, queries shorter than the cutoff and
queries of the qrels missing from the run."""

from __future__ import annotations

import random
import warnings
from itertools import product
from pathlib import Path

import numpy as np
import pytest

import trec_rag_eval as tre
from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.evaluation.evaluate import ranks_read
from trec_rag_eval.measures.registry import FAMILIES
from trec_rag_eval.measures.requests import resolve_measures


def _pair(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        query = f"q{q}"
        docs = [f"d{rng.randrange(60)}" for _ in range(rng.choice([3, 8, 30, 50]))]
        qrels[query] = {d: rng.choice([-1, 0, 0, 1, 2, 3]) for d in docs}
        if q == 11:
            continue  # a query of the qrels the run misses
        depth = rng.choice([2, 5, 12, 40])
        # few distinct scores: ties across every cutoff, sorted by doc id
        run[query] = {f"d{rng.randrange(60)}": float(rng.randrange(6)) for _ in range(depth)}
    run["q0"].update({d: -1.0 for d in qrels["q0"]})  # judged documents at the bottom of one ranking
    return qrels, run


def _variants(family_name: str) -> list[str]:
    """Measures of a family at three cutoffs, with each choice of each of its parameters taken one at a time
    (every str choice, both bools, a level, a gain for documents outside the pool)."""
    family = FAMILIES[family_name]
    shown = family.shown
    asked = [""]
    for key, param in family.params.items():
        if param.kind == "str":
            asked += [f"{key}={choice!r}" for choice in param.choices]
        elif param.kind == "bool":
            asked += [f"{key}=True", f"{key}=False"]
        elif param.kind == "int":
            asked.append(f"{key}=2")
        elif param.kind == "gains":
            asked.append(f"{key}={{-1:0.5,0:0,1:1,2:3,3:7}}")
    return [shown + (f"({a})" if a else "") + f"@{k}" for a, k in product(asked, (1, 3, 10))]


TOP_FAMILIES = sorted(name for name, family in FAMILIES.items() if family.reads_top)


def test_the_families_that_read_to_their_cutoff_are_the_rag_ones_and_their_trec_eval_names() -> None:
    """The list is the registry's; the RAG set's measures at k are in it (what makes the cut worth having)."""
    assert {"P", "recall", "F1", "success", "ndcg_cut", "map_cut", "recip_rank"} <= set(TOP_FAMILIES)
    assert ranks_read(resolve_measures(["nDCG@10", "P@5", "HitRate@3", "F1@1", "MRR@10", "AP@5", "R@10"])) == 10


@pytest.mark.parametrize("measures", [["nDCG@10", "MAP"], ["MRR"], ["nDCG"], ["nDCG@10", "num_ret"],
                                      ["nDCG(ideal='retrieved')@10"], ["P(judged_only=True)@5"], ["bpref"],
                                      ["IPrec@0.5"], ["RBP@10"]])
def test_a_measure_reading_whole_rankings_cuts_nothing(measures: list[str]) -> None:
    assert ranks_read(resolve_measures(measures)) is None


@pytest.mark.parametrize("family_name", TOP_FAMILIES)
def test_the_first_rows_give_the_values_of_the_whole_ranking(family_name: str) -> None:
    for seed in range(3):
        qrels, run = _pair(seed)
        for name in _variants(family_name):
            measure = resolve_measures([name])[0]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cut = tre.evaluate(qrels, run, [measure])
                whole = tre.evaluate(qrels, run, [measure, "num_ret"])
            assert cut.query_ids == whole.query_ids
            assert np.array_equal(cut.values[measure], whole.values[measure], equal_nan=True), (name, seed)


@pytest.mark.parametrize("settings", [{"max_retrieved": 2}, {"max_retrieved": 7}, {"relevance_level": 2},
                                      {"queries": "intersection"}, {"trec_eval_9": True}, {"judged_only": True}])
def test_the_cut_keeps_the_values_under_every_setting(settings: dict) -> None:
    measures = ["nDCG@10", "P@5", "R@3", "HitRate@1", "MRR@10", "AP@10", "F1@5"]
    for seed in range(3):
        qrels, run = _pair(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cut = tre.evaluate(qrels, run, measures, **settings)
            whole = tre.evaluate(qrels, run, [*measures, "num_ret"], **settings)
        for m in cut.measures:
            assert np.array_equal(cut.values[m], whole.values[m], equal_nan=True), (m, settings, seed)


def test_a_document_twice_below_the_cut_is_still_refused(tmp_path: Path) -> None:
    """trec_eval refuses a document listed twice for a query wherever it lies (without -M): the rows below the
    cut are looked at for it, in a file as in memory."""
    lines = [f"q1 Q0 d{i} {i + 1} {100 - i} run" for i in range(30)] + ["q1 Q0 d3 31 1 run"]
    run_file = tmp_path / "run.txt"
    run_file.write_text("\n".join(lines) + "\n")
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("q1 0 d0 1\n")
    with pytest.raises(InputFormatError, match="'d3' listed twice for query 'q1'"):
        tre.evaluate(str(qrels_file), str(run_file), "nDCG@10")


def test_judged_documents_only_below_the_cut_are_no_nothing_matches_warning() -> None:
    """The ``nothing matches`` warning counts every retrieved row: a run whose judged documents all lie below
    the cut is not warned about, and one with none judged is told the number of all its ids."""
    qrels = {"q1": {"d25": 1}}
    deep = {"q1": {f"d{i}": 100.0 - i for i in range(30)}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tre.evaluate(qrels, deep, "nDCG@10").summary["nDCG@10"] == 0.0
    nothing = {"q1": {f"x{i}": 100.0 - i for i in range(30)}}
    with pytest.warns(UserWarning, match="none of the 30 retrieved ids appears in the qrels"):
        tre.evaluate(qrels, nothing, "nDCG@10")


@pytest.mark.parametrize("interleaved", [False, True])
def test_a_run_file_cut_gives_the_values_of_the_whole_ranking(tmp_path: Path, interleaved: bool) -> None:
    """A run read from a file (not checked for repeats when made: they are looked for among every row) in query
    blocks or with its lines shuffled, an infinite score among them: the cut's values are the whole ranking's."""
    measures = ["nDCG@10", "P@5", "R@3", "HitRate@1", "MRR@10", "AP@10"]
    for seed in range(3):
        qrels, run = _pair(seed)
        lines = [f"{q} Q0 {d} 0 {s!r} run" for q, docs in run.items() for d, s in docs.items()]
        lines[3] = lines[3].rsplit(" ", 2)[0] + " -inf run"
        if interleaved:
            random.Random(seed).shuffle(lines)
        run_file, qrels_file = tmp_path / "run.txt", tmp_path / "qrels.txt"
        run_file.write_text("\n".join(lines) + "\n")
        qrels_file.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cut = tre.evaluate(str(qrels_file), str(run_file), measures)
            whole = tre.evaluate(str(qrels_file), str(run_file), [*measures, "num_ret"])
        for m in cut.measures:
            assert np.array_equal(cut.values[m], whole.values[m], equal_nan=True), (m, seed, interleaved)


def test_a_run_too_large_for_the_small_sort_cut_gives_the_values_of_the_whole_ranking() -> None:
    """Above ``ordering.SMALL_SORT_ROWS`` rows the order is found block by block (tied scores sorted by doc id,
    blocks out of score order sorted on their own): the cut takes each query's first rows in that order."""
    from trec_rag_eval.core.ordering import SMALL_SORT_ROWS

    rng = random.Random(5)
    qrels = {f"q{q}": {f"d{rng.randrange(300)}": rng.choice([-1, 0, 1, 2]) for _ in range(20)} for q in range(200)}
    run = {f"q{q}": {f"d{d}": float(rng.randrange(8)) for d in rng.sample(range(300), 100)} for q in range(200)}
    run["q3"] = dict(sorted(run["q3"].items(), key=lambda item: -item[1]))  # one block already in order
    assert sum(map(len, run.values())) > SMALL_SORT_ROWS
    measures = ["nDCG@10", "P@5", "R@20", "AP@3", "MRR@10"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cut = tre.evaluate(qrels, run, measures)
        whole = tre.evaluate(qrels, run, [*measures, "num_ret"])
    for m in cut.measures:
        assert np.array_equal(cut.values[m], whole.values[m], equal_nan=True), m


def test_blocks_of_one_length_cut_and_a_run_evaluated_again_give_the_values_of_the_whole_ranking() -> None:
    """A run of one depth for every query (a dict of dicts' usual shape: its blocks sorted as one matrix, each
    block's first rows alone kept, ``ordering.block_tops``), with ties across the cut, evaluated again as one
    ``Run`` against other judgments and under other settings (what it keeps of itself must not leak from one
    evaluation to the next): each time the values of the whole ranking of a run made afresh."""
    rng = random.Random(11)
    run = {f"q{q}": {f"d{d}": float(rng.randrange(4)) for d in rng.sample(range(40), 25)} for q in range(9)}
    every = {q: {f"d{d}": rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(range(40), 12)} for q in run}
    some = {q: every[q] for q in ("q7", "q2", "q5")}  # the run's other queries not evaluated
    more = {**every, "q99": {"d1": 1}}  # a query the run misses
    measures = ["nDCG@10", "P@5", "R@3", "HitRate@1", "MRR@10", "AP@10"]
    kept = tre.Run(run)
    for qrels, settings in product((every, some, more, every), ({}, {"trec_eval_9": True}, {"max_retrieved": 7},
                                                                {"queries": "intersection"})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again = tre.evaluate(tre.Qrels(qrels), kept, measures, **settings)
            whole = tre.evaluate(qrels, tre.Run(run), [*measures, "num_ret"], **settings)
        assert again.query_ids == whole.query_ids
        for m in again.measures:
            assert np.array_equal(again.values[m], whole.values[m], equal_nan=True), (m, settings, sorted(qrels))
