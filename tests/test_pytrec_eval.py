"""``from trec_rag_eval import pytrec_eval`` is ``import pytrec_eval``: the same dict for the same call.

The oracle is pytrec_eval itself (pytrec-eval-terrier 0.5.11, pinned in the test extra), called in each test on
the same input. Here: the cases pytrec_eval's own test suite checks, in our words; the measure names, nicknames
and keys; seeded random judgments and runs for every measure it supports, at several relevance levels, with and
without judged_docs_only_flag; its helpers; what it refuses; and BEIR's way of calling it.
"""

from __future__ import annotations

import math
import random
import re

import pytest
import pytrec_eval as real  # the oracle
from conftest import first_by_default, golden_path

from trec_rag_eval import pytrec_eval as ours

QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
RUN = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d1": 1.5, "d2": 0.2, "d3": 0.5}}


def oracle(qrels, measures, run, **options):
    """What pytrec_eval returns. pytrec-eval-terrier 0.5.11 may crash (a segmentation fault) on a run holding a
    query without documents when several measures are asked (``official`` does it): then each measure is asked
    alone and the results joined, the same values (a measure's value depends on no other), keys in another order."""
    if len(measures) > 1 and any(not docs for docs in run.values()):
        joined: dict[str, dict[str, float]] = {}
        for name in sorted({member for m in measures for member in real.supported_nicknames.get(m, {m})}):
            for query_id, values in real.RelevanceEvaluator(qrels, {name}, **options).evaluate(run).items():
                joined.setdefault(query_id, {}).update(values)
        return joined
    return real.RelevanceEvaluator(qrels, measures, **options).evaluate(run)


def assert_same(got, expected, key_order=True):
    """The same queries in the same order, the same keys (in the same order), values within 1e-9 (NaN as NaN)."""
    assert list(got) == list(expected)
    for query_id, values in expected.items():
        assert (list(got[query_id]) if key_order else set(got[query_id])) == (
            list(values) if key_order else set(values)), query_id
        for key, value in values.items():
            mine = got[query_id][key]
            assert type(mine) is float, (query_id, key)
            assert abs(mine - value) <= 1e-9 or math.isnan(mine) and math.isnan(value), (query_id, key, mine, value)


def both(qrels, measures, run, **options):
    """Our dict, checked against pytrec_eval's."""
    got = ours.RelevanceEvaluator(qrels, measures, **options).evaluate(run)
    merged = len(measures) > 1 and any(not docs for docs in run.values())
    assert_same(got, oracle(qrels, measures, run, **options), key_order=not merged)
    return got


# --- the cases of pytrec_eval's own test suite ------------------------------------------------------------------


def test_ndcg_as_pytrec_eval_s_suite_checks_it():
    qrels = {**QRELS, "q10": {}}  # a query judged with an empty dict is judged nowhere: never in the results
    # q1's one relevant document (d2) at rank 3, 1 and 2: nDCG 1/log2(4), 1, 1/log2(3)
    for scores, expected in (({"d1": 1.0, "d2": 0.0, "d3": 1.5}, 0.5), ({"d1": 1.0, "d2": 2.0, "d3": 1.5}, 1.0),
                             ({"d1": 4.0, "d2": 2.0, "d3": 1.5}, 1 / math.log2(3))):
        for run in ({"q1": scores, "q2": {}}, {"q1": scores}):
            assert both(qrels, {"map", "ndcg"}, run)["q1"]["ndcg"] == pytest.approx(expected)
    # q2 judges d2 and d3 relevant; ranked d3, d1, d2: (1 + 1/log2(4)) / (1 + 1/log2(3)); without the unjudged d1, 1
    run = {"q1": {}, "q2": {"d1": 1.0, "d2": 0.0, "d3": 1.5}}
    assert both(qrels, {"map", "ndcg"}, run)["q2"]["ndcg"] == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert both(qrels, {"map", "ndcg"}, run, judged_docs_only_flag=True)["q2"]["ndcg"] == pytest.approx(1.0)
    assert "q10" not in both(qrels, {"map", "ndcg"}, {**run, "q10": {"d1": 1.0}}, judged_docs_only_flag=True)


@pytest.mark.parametrize("measures", [{"all_trec"}, {"set"}, {"official"}, {"official", "set", "ndcg"}])
def test_a_nickname_gives_its_measures_keys(measures):
    empty = {"q1": {}, "q2": {}}
    got = ours.RelevanceEvaluator(QRELS, measures).evaluate(empty)
    assert_same(got, oracle(QRELS, measures, empty), key_order=False)
    # the keys do not depend on the run: pytrec_eval's own, in its order, on a run with documents
    assert list(got["q1"]) == list(real.RelevanceEvaluator(QRELS, measures).evaluate(RUN)["q1"])


def test_ndcg_cut_as_pytrec_eval_s_suite_checks_it():
    assert both(QRELS, {"ndcg_cut.3"}, RUN)["q1"] == {"ndcg_cut_3": 0.5}
    assert both(QRELS, {"ndcg_cut.1"}, {"q1": {"d1": 1.0, "d2": 2.0, "d3": 1.5}, "q2": {}})["q1"] == {
        "ndcg_cut_1": 1.0}
    evaluator = ours.RelevanceEvaluator(QRELS, {"ndcg_cut.1,2,3,1000"})
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}
    expected = {"ndcg_cut_1": 0.0, "ndcg_cut_2": 0.0, "ndcg_cut_3": 0.5, "ndcg_cut_1000": 0.5}
    for _ in range(2):  # an evaluator used twice keeps its cutoffs (pytrec_eval lost them once)
        assert_same(evaluator.evaluate(run), oracle(QRELS, {"ndcg_cut.1,2,3,1000"}, run))
        assert evaluator.evaluate(run)["q1"] == pytest.approx(expected)


@pytest.mark.parametrize("qrels, measures, run", [
    (QRELS, {"map", "ndcg"}, {}), (QRELS, set(), RUN), ({}, {"map", "ndcg"}, RUN), ({}, {"map", "ndcg"}, {}),
    (QRELS, set(), {}), ({}, set(), RUN), ({}, {}, {}), (QRELS, {"map"}, None), (QRELS, {"map"}, []),
    ({"q1": {}}, {"map"}, {"q1": {"d2": 1.0}}), (QRELS, {"map"}, {"q9": {"d1": 1.0}}),
])
def test_empty_judgments_measures_or_runs_as_pytrec_eval_s_suite_checks_them(qrels, measures, run):
    assert ours.RelevanceEvaluator(qrels, measures).evaluate(run) == real.RelevanceEvaluator(
        qrels, measures).evaluate(run)


@pytest.mark.parametrize("measures", [
    ["ndcg_cut", "ndcg_cut.1,4", "ndcg_cut_20,4", "ndcg_cut_15", "recall.1000", "P"],
    {"P.5", "P_10"}, {"P.5,10", "P"}, {"map.5", "set_P.5", "set_F.2", "11pt_avg.0.5", "relstring.5"},
    {"iprec_at_recall.0.5", "iprec_at_recall_0.25", "Rprec_mult.0.3", "success_3"}, {"P.7x", "ndcg_cut.10,"},
    {"P.5.5", "map_cut.100", "relative_P_5", "utility.1,2,3,4"},
])
def test_measure_names_are_read_as_pytrec_eval_reads_them(measures):
    """Parameters after '.' or '_', joined over the names of one measure, those alone when given (P with P.5 is
    P_5), ignored by a measure without any (map.5 is map), read as far as they are numbers (P.7x is P.7)."""
    both(QRELS, measures, RUN)


def test_supported_measures_and_nicknames_are_pytrec_eval_s():
    assert ours.supported_measures == real.supported_measures
    assert ours.supported_nicknames == real.supported_nicknames


def _trec_eval_summary(path):
    """The numeric ``all`` lines of trec_eval's output: {measure: value}."""
    summary = {}
    for line in open(path, encoding="utf-8"):
        found = re.fullmatch(r"(\S+)\s+all\s+([-0-9.e]+)\s*", line)
        if found:
            summary[found[1]] = float(found[2])
    return summary


def _family(key):
    """The supported measure a trec_eval key (P_5, iprec_at_recall_0.10) belongs to, or None."""
    known = [m for m in ours.supported_measures if key == m or key.startswith(m + "_")]
    return max(known, key=len) if known else None


def agree_with_trec_eval_9(qrels, run, summary_path, **options):
    """pytrec_eval's integration check (also on trec_eval's own test files: test_trec_eval_reference.py): the
    measures of trec_eval's summary, aggregated over our per-query values, agree with it to 3 decimals (trec_eval
    9 prints 4); our dict is pytrec_eval's."""
    summary = {key: value for key, value in _trec_eval_summary(summary_path).items() if _family(key)}
    measures = {_family(key) for key in summary}
    results = ours.RelevanceEvaluator(qrels, measures, **options).evaluate(run)
    assert_same(results, real.RelevanceEvaluator(qrels, measures, **options).evaluate(run))
    for key, value in summary.items():
        values = [per_query[key] for per_query in results.values()]
        assert round(ours.compute_aggregated_measure(key, values) - value, 3) == 0, key
        assert ours.compute_aggregated_measure(key, values) == real.compute_aggregated_measure(key, values)
    return summary


def test_trec_eval_9_s_output_on_our_golden_files():
    # run.ties has lines with columns after the run tag, which trec_eval ignores and pytrec_eval's parse_run
    # refuses: read by the library, as trec_eval reads them
    import trec_rag_eval as tre

    qrels = tre.read_qrels(golden_path("qrels.binary")).to_dict()
    run = tre.read_run(golden_path("run.ties")).to_dict()
    summary = agree_with_trec_eval_9(qrels, run, golden_path("expected/v9/out.binary.aq"))
    # all_trec: every supported measure but the two whose summary is no number (runid's tag, relstring's none)
    assert {_family(key) for key in summary} == ours.supported_measures - {"runid", "relstring"}


# --- seeded random judgments and runs: every measure pytrec_eval supports ----------------------------------------

PARAMETERISED = {"P.3,7", "recall_2,50", "ndcg_cut.3", "map_cut_4,12", "success.2", "iprec_at_recall.0.25,0.75",
                 "Rprec_mult_0.5,1.5", "relative_P.3", "set_F.2", "11pt_avg.0.3,0.6", "relstring.5",
                 "utility.1,2,3,4"}
OPTIONS = [{}, {"relevance_level": 2}, {"judged_docs_only_flag": True}, {"relevance_level": 3,
                                                                        "judged_docs_only_flag": 1}]


def random_case(seed):
    """Judgments (-1 to 3; some queries judged with an empty dict) and a run (ties, scores that only 32-bit floats
    tie, integer scores, ids whose byte order is not their order as numbers, a query without documents, queries
    missing from the run or only in it), the run's queries in a shuffled order."""
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(50)] + ["D7", "é1", "e9", "d05"]
    qrels, run = {}, {}
    for number in range(rng.randint(3, 15)):
        query_id = f"q{number}"
        judged = rng.sample(pool, rng.choice([0, 1, 3, 10, 30]))
        qrels[query_id] = {doc_id: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for doc_id in judged}
        if rng.random() < 0.15:
            continue
        base, scores = rng.choice([1.0, 1e7, -3.0]), {}
        for doc_id in rng.sample(pool, rng.choice([0, 1, 5, 20, 45])):
            kind = rng.random()
            scores[doc_id] = (rng.choice([1, 2, 0.5]) if kind < 0.2 else base * (1 + 1e-9 * rng.random()) if kind < 0.3
                              else base + rng.random())
        run[query_id] = scores
    run["only in the run"] = {"d1": 1.0}
    order = list(run)
    rng.shuffle(order)
    return qrels, {query_id: run[query_id] for query_id in order}


@pytest.mark.parametrize("seed", first_by_default(range(8), keep=2))
@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")  # a seed's run may match nothing
def test_seeded_judgments_and_runs_give_pytrec_eval_s_dict(seed):
    qrels, run = random_case(seed)
    keys = set()
    for measures in ({"all_trec"}, PARAMETERISED):
        for options in OPTIONS:
            got = both(qrels, measures, run, **options)
            keys.update(key for values in got.values() for key in values)
    assert {_family(key) for key in keys} == ours.supported_measures  # every measure pytrec_eval supports


# --- what pytrec_eval's callers do: BEIR ------------------------------------------------------------------------


def beir_means(module, qrels, results, k_values=(1, 3, 5, 10, 100, 1000)):
    """BEIR's ``EvaluateRetrieval.evaluate`` in our words: one evaluator over map_cut, ndcg_cut, recall and P at
    ``k_values``, then each key's mean over the evaluated queries, rounded to 5 places."""
    cutoffs = ",".join(str(k) for k in k_values)
    evaluator = module.RelevanceEvaluator(qrels, {f"map_cut.{cutoffs}", f"ndcg_cut.{cutoffs}", f"recall.{cutoffs}",
                                                  f"P.{cutoffs}"})
    scores = evaluator.evaluate(results)
    means = {}
    for name, key in (("NDCG", "ndcg_cut"), ("MAP", "map_cut"), ("Recall", "recall"), ("P", "P")):
        for k in k_values:
            means[f"{name}@{k}"] = round(sum(s[f"{key}_{k}"] for s in scores.values()) / len(scores), 5)
    return means


def test_beir_style_code_gives_the_same_numbers():
    rng = random.Random(20240607)
    qrels = {f"q{q}": {f"d{d}": rng.choice([0, 1, 1, 2]) for d in rng.sample(range(400), 20)} for q in range(200)}
    results = {f"q{q}": {f"d{d}": rng.random() * 20 for d in rng.sample(range(400), 120)} for q in range(200)}
    assert beir_means(ours, qrels, results) == beir_means(real, qrels, results)
    measures = {"map", "ndcg_cut.10", "recall.100", "P.10"}
    mine = ours.RelevanceEvaluator(qrels, measures).evaluate(results)
    theirs = real.RelevanceEvaluator(qrels, measures).evaluate(results)
    assert_same(mine, theirs)
    for key in ("map", "ndcg_cut_10", "recall_100", "P_10"):
        assert sum(v[key] for v in mine.values()) / len(mine) == pytest.approx(
            sum(v[key] for v in theirs.values()) / len(theirs), abs=1e-12)


# --- helpers, types and refusals ----------------------------------------------------------------------------------


def test_helpers_give_pytrec_eval_s_values():
    lines = ["1 0 a 1\n", "1 0 b 0\n", "2 Q0 a -1\n"]
    assert ours.parse_qrel(lines) == real.parse_qrel(lines) == {"1": {"a": 1, "b": 0}, "2": {"a": -1}}
    run = ["1 Q0 a 1 2.5 t\n", "1\tQ0 b 2 1 t\n", "2 Q0 a 1 -3e2 t\n"]
    assert ours.parse_run(run) == real.parse_run(run) == {"1": {"a": 2.5, "b": 1.0}, "2": {"a": -300.0}}
    assert type(ours.parse_run(run)) is type(real.parse_run(run))  # a defaultdict, as pytrec_eval's
    for measure in ("num_ret", "gm_map", "map"):
        values = [-11.5, -0.25, 3.0]
        assert ours.compute_aggregated_measure(measure, values) == real.compute_aggregated_measure(measure, values)


@pytest.mark.parametrize("lines, message", [
    (["1 Q0 a 1 2.5 t\n", "1 Q0 a 2 1.5\n"], "line 2: expected 6 columns (query_id Q0 doc_id rank score run_tag), "
                                              "got 5: '1 Q0 a 2 1.5'"),
    (["1 Q0 a 1 high t\n"], "line 1: the score 'high' is not a number: '1 Q0 a 1 high t'"),
    (["1 Q0 a 1 2 t\n", "1 Q0 b 2 1 t\n", "2 Q0 a 1 1 t\n", "1 Q0 a 3 0 t\n"],
     "line 4: document 'a' listed twice for its query (first at line 1)"),
])
def test_a_malformed_run_line_is_named(lines, message):
    with pytest.raises(ValueError) as refused:
        ours.parse_run(lines)
    assert str(refused.value) == message


@pytest.mark.parametrize("lines, message", [
    (["1 0 a\n"], "line 1: expected 4 columns (query_id iteration doc_id relevance), got 3: '1 0 a'"),
    (["1 0 a 1.5\n"], "line 1: the relevance '1.5' is not an integer: '1 0 a 1.5'"),
    (["1 0 a 1\n", "1 0 b 1\n", "1 0 b 0\n"], "line 3: document 'b' judged twice for its query (first at line 2)"),
])
def test_a_malformed_qrels_line_is_named(lines, message):
    with pytest.raises(ValueError) as refused:
        ours.parse_qrel(lines)
    assert str(refused.value) == message


@pytest.mark.parametrize("make, message", [
    (lambda m: m.RelevanceEvaluator(QRELS, {"foo"}), "unsupported measure foo"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"all_prefs"}), "unsupported measure prefs_"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"map_avgjg"}), "unsupported measure map_avgjg"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"P.abc"}), "unsupported measure P.abc"),
    (lambda m: m.RelevanceEvaluator(QRELS, "map"), "unsupported measure "),
    (lambda m: m.RelevanceEvaluator(QRELS, {1}), "a measure name must be a string, got int: 1"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"map"}, relevance_level=0),
     "Argument relevance_level should be positive: got 0"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"map"}, relevance_level=2.5),
     "Argument relevance_level should be an integer: got float 2.5"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"map"}, judged_docs_only_flag=None),
     "Argument judged_docs_only_flag should be an integer: got NoneType None"),
    (lambda m: m.RelevanceEvaluator({"q1": {"d1": 1.0}}, {"map"}),
     "judgments of query 'q1', document 'd1': expected relevance to be integer, got float 1.0"),
    (lambda m: m.RelevanceEvaluator({1: {"d1": 1}}, {"map"}), "the judgments' query id 1 is a int: expected a string"),
    (lambda m: m.RelevanceEvaluator({"q1": {1: 1}}, {"map"}),
     "judgments of query 'q1': the document id 1 is a int: expected a string"),
    (lambda m: m.RelevanceEvaluator({"q1": ["d1"]}, {"map"}),
     "judgments of query 'q1': expected a dict {doc_id: relevance}, got list"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"map"}).evaluate({1: {"d1": 1.0}}),
     "the run's query id 1 is a int: expected a string"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"map"}).evaluate({"q1": {"d1": "1.0"}}),
     "run (dict): query 'q1', document 'd1': the score '1.0' is not a number"),
    (lambda m: m.RelevanceEvaluator(QRELS, {"map"}).evaluate([("q1", "d1", 1.0)]),
     "Argument object scores should be of type dictionary: got list"),
])
def test_what_pytrec_eval_refuses_is_refused_with_its_exception_type(make, message):
    with pytest.raises(Exception) as theirs:
        make(real)
    with pytest.raises(type(theirs.value)) as refused:
        make(ours)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("make, kind, message", [
    # pytrec_eval aborts the interpreter on these (trec_eval's own error, then an assertion in its C code)
    (lambda: ours.RelevanceEvaluator(QRELS, {"P.0"}), ValueError,
     "unsupported measure P.0: cutoffs must be positive integers"),
    (lambda: ours.RelevanceEvaluator(QRELS, {"recall.5", "recall_05"}), ValueError,
     "unsupported measure recall.05,5: the same cutoff is given twice"),
    (lambda: ours.RelevanceEvaluator(QRELS, {"ndcg.1"}), ValueError,
     "unsupported measure ndcg.1: malformed pair, expected key=value"),
    # pytrec_eval prints trec_eval's complaint and gives 0; reads -1 as 4294967295 (a C int in a long)
    (lambda: ours.RelevanceEvaluator(QRELS, {"utility.2"}), ValueError,
     "unsupported measure utility.2: utility takes exactly 4 coefficients a,b,c,d"),
    (lambda: ours.RelevanceEvaluator(QRELS, {"map"}, relevance_level=-1), TypeError,
     "Argument relevance_level should be positive: got -1"),
    # a NaN score has no place in a ranking (pytrec_eval's sort of it is undefined); an empty id is none
    (lambda: ours.RelevanceEvaluator(QRELS, {"map"}).evaluate({"q1": {"d1": math.nan}}), TypeError,
     "run (dict): query 'q1', document 'd1': the score nan is not a number"),
    (lambda: ours.RelevanceEvaluator({"q1": {"": 1}}, {"map"}), ValueError,
     "qrels (dict): query 'q1', document '': the doc id is empty"),
])
def test_what_pytrec_eval_would_crash_on_or_get_wrong_is_refused(make, kind, message):
    with pytest.raises(kind) as refused:
        make()
    assert str(refused.value).startswith(message)


def test_integer_relevance_of_any_integer_type_is_an_integer():
    """pytrec_eval takes True for 1 and refuses numpy's integers; both are integers here."""
    import numpy as np

    run = {"q1": {"d1": 1.0, "d2": 0.5}}
    expected = real.RelevanceEvaluator({"q1": {"d1": 0, "d2": 1}}, {"map"}).evaluate(run)
    for qrels in ({"q1": {"d1": False, "d2": True}}, {"q1": {"d1": np.int64(0), "d2": np.int8(1)}}):
        assert ours.RelevanceEvaluator(qrels, {"map"}).evaluate(run) == expected
