"""One rule for a query with no relevant document, whatever the input shape.

The rule (trec_eval with -c, ir-measures): the query is kept, scores 0 on every measure that needs
a relevant document, and counts in the mean. The same dataset goes through every path: a JSON
file, a JSONL file, TREC files written by ``convert``, a Python list, and the engine harness.
"""

from __future__ import annotations

import json
import math

import pytest
from conftest import invoke

from trec_rag_eval.engine.harness import Evaluator
from trec_rag_eval.engine.harness_files import dataset_from_rows
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.loading import load_qrels, load_run
from trec_rag_eval.io.trec.qrels_runs import read_trec_run

DATASET = [
    # d1 retrieved first: nDCG@10 = 1, R@5 = 1
    {"id": "q1", "query": "alpha", "relevant": ["d1"]},
    # nothing judged at all: in a TREC qrels file this query has no line, only its topics line
    {"id": "q2", "query": "beta", "relevant": []},
    # d3 at rank 2: nDCG@10 = (1 / log2(3)) / 1, R@5 = 1
    {"id": "q3", "query": "gamma", "relevant": ["d3"], "non_relevant": ["d4"]},
    # judged, but only non-relevant: scores 0
    {"id": "q4", "query": "delta", "relevant": [], "non_relevant": ["d5"]},
]
RESULTS = {"q1": ["d1", "d2"], "q2": ["d9"], "q3": ["d4", "d3"], "q4": ["d5", "d6"]}
BY_TEXT = {item["query"]: RESULTS[item["id"]] for item in DATASET}

# Hand computation: four queries in the mean, two of them 0.
NDCG_10 = (1 + 0 + 1 / math.log2(3) + 0) / 4
R_5 = (1 + 0 + 1 + 0) / 4
MEASURES = ["nDCG@10", "R@5", "AP", "RR"]


def engine(query: str, k: int) -> list[str]:
    return BY_TEXT[query][:k]


def _check(summary, n_queries):
    assert n_queries == 4
    assert summary["nDCG@10"] == pytest.approx(NDCG_10)
    assert summary["R@5"] == pytest.approx(R_5)
    assert summary["RR"] == pytest.approx((1 + 0 + 0.5 + 0) / 4)


@pytest.fixture
def files(tmp_path):
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(DATASET), encoding="utf-8")
    jsonl = tmp_path / "dataset.jsonl"
    jsonl.write_text("".join(json.dumps(item) + "\n" for item in DATASET), encoding="utf-8")
    results = tmp_path / "results.json"
    results.write_text(json.dumps(RESULTS), encoding="utf-8")
    return {"json": dataset, "jsonl": jsonl, "results": results, "dir": tmp_path}


@pytest.mark.parametrize("kind", ["json", "jsonl"])
def test_json_and_jsonl_datasets_keep_the_query_with_no_relevant_document(files, kind):
    qrels = load_qrels(files[kind])
    result = evaluate_tables(qrels, load_run(files["results"], qrels=qrels), MEASURES)
    _check(result.summary_by_name, len(result.query_ids))
    assert result.query_ids == ["q1", "q2", "q3", "q4"]


def test_python_list_and_engine_harness_give_the_same_numbers(tmp_path):
    qrels = dataset_from_rows(DATASET)
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {r} {10 - r} t\n" for q, ids in RESULTS.items() for r, d in enumerate(ids, 1)))
    result = evaluate_tables(qrels, read_trec_run(run), MEASURES)
    _check(result.summary_by_name, len(result.query_ids))
    # the tutorial's example: one query found, one with nothing relevant: 0.5, not 1.0
    report = Evaluator(engine).evaluate(DATASET, k_values=(5, 10), measures=MEASURES)
    _check(report.summary, len(report.per_query))
    assert report.per_query["q2"]["nDCG@10"] == 0.0


def test_cli_json_and_converted_trec_files_print_the_same_numbers(files):
    d = files["dir"]
    direct = invoke("-m", "num_q", "-m", "ndcg_cut.10", "-m", "recall.5", str(files["jsonl"]), str(files["results"]))
    assert direct.exit_code == 0, direct.stderr
    assert "num_q                 \tall\t4\n" in direct.stdout
    assert f"ndcg_cut_10           \tall\t{NDCG_10:.4f}\n" in direct.stdout

    converted = invoke("convert", str(files["json"]), "--qrels", str(d / "eval.qrels"),
                       "--topics", str(d / "eval.topics"))
    assert converted.exit_code == 0, converted.stderr
    # q4 keeps its judged-non-relevant line; q2, judged nothing, lives in the topics file, and the user is told
    assert "q4 0 d5 0\n" in (d / "eval.qrels").read_text()
    assert "q2\tbeta\n" in (d / "eval.topics").read_text()
    assert "q2" in converted.stderr and "eval.topics" in converted.stderr
    invoke("convert", str(files["results"]), "--run", str(d / "results.run"), "--dataset", str(files["json"]))

    trec = invoke("-m", "num_q", "-m", "ndcg_cut.10", "-m", "recall.5", "--topics", str(d / "eval.topics"),
                  str(d / "eval.qrels"), str(d / "results.run"))
    assert trec.exit_code == 0, trec.stderr
    assert trec.stdout == direct.stdout

    back = invoke("convert", str(d / "eval.qrels"), "--topics", str(d / "eval.topics"), "--json", str(d / "back.json"))
    assert back.exit_code == 0, back.stderr
    items = {item["id"]: item for item in json.loads((d / "back.json").read_text())}
    assert set(items) == {"q1", "q2", "q3", "q4"}
    assert items["q2"]["relevant"] == [] and items["q4"]["non_relevant"] == ["d5"]


def test_compare_counts_the_query_with_no_relevant_document(files):
    qrels = load_qrels(files["json"])
    from trec_rag_eval.compare import compare_runs

    run = load_run(files["results"], qrels=qrels)
    comparison = compare_runs(qrels, {"a": run, "b": run}, measures=["nDCG@10"])
    assert comparison.n_queries == 4
    assert comparison.means["a"]["nDCG@10"] == pytest.approx(NDCG_10)


@pytest.mark.parametrize(
    "qrels",
    [
        {item["id"]: item["relevant"] for item in DATASET},  # lists of ids
        {item["id"]: {**{d: 1 for d in item["relevant"]}, **{d: 0 for d in item.get("non_relevant", [])}}
         for item in DATASET},  # pytrec_eval / ranx dicts
    ],
    ids=["lists-of-ids", "dict-of-dicts"],
)
def test_python_dict_shapes_keep_a_query_with_nothing_judged(qrels):
    import trec_rag_eval as tre

    if isinstance(qrels["q4"], list):  # a list of ids holds relevant documents only: q4 judged nothing
        assert qrels["q4"] == []
    result = tre.evaluate(qrels, RESULTS, MEASURES)
    assert len(result.query_ids) == 4
    assert result.summary["nDCG@10"] == pytest.approx(NDCG_10)
    assert result.summary["R@5"] == pytest.approx(R_5)
