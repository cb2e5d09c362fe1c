"""The search harness: any engine shape, failures, progress, latency, the recorded run, the CLI."""

from __future__ import annotations

import io
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import invoke

from trec_rag_eval.cli import FLAGS
from trec_rag_eval.cli.search import demo_command, demo_files, search_command
from trec_rag_eval.engine import harness
from trec_rag_eval.engine.harness import Evaluator
from trec_rag_eval.engine.harness_files import dataset_from_rows
from trec_rag_eval.engine.search_results import normalise_results
from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.trec.qrels_runs import read_trec_run

DATASET = [
    {"id": "q1", "requête": "alpha", "pertinents": {"a": 3, "b": 1}, "non_pertinents": ["z"]},
    {"id": "q2", "requête": "boom", "pertinents": ["c"]},
    {"id": "q3", "requête": "delta", "pertinents": ["d"]},
]
ANSWERS = {"alpha": ["b", "a", "z"], "delta": ["x", "d"]}


def engine(query: str, k: int) -> list[str]:
    if query == "boom":
        raise RuntimeError("index offline")
    return ANSWERS[query][:k]


class TtyBuffer(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_failing_query_is_recorded_scored_zero_and_the_rest_goes_on():
    measures = ["RR", "P@1", "nDCG@10"]
    report = Evaluator(engine, run_tag="t").evaluate(DATASET, k_values=(1, 10), measures=measures)
    assert [(f.query_id, f.error) for f in report.failures] == [("q2", "RuntimeError: index offline")]
    per_query = report.per_query
    assert list(per_query) == ["q1", "q2", "q3"]
    # q1: first relevant (b) at rank 1 -> RR 1. q2 failed -> 0. q3: d at rank 2 -> RR 0.5.
    assert [per_query[q]["RR"] for q in ("q1", "q2", "q3")] == [1.0, 0.0, 0.5]
    assert report.summary["RR"] == pytest.approx(1.5 / 3)
    # q1 nDCG@10, linear gains (trec_eval): ranking b(1), a(3), z(0); ideal a(3), b(1).
    dcg = 1 / math.log2(2) + 3 / math.log2(3)
    ideal = 3 / math.log2(2) + 1 / math.log2(3)
    assert per_query["q1"]["nDCG@10"] == pytest.approx(dcg / ideal)
    assert report.to_dict()["failed_queries"] == [{"query_id": "q2", "error": "RuntimeError: index offline"}]


def test_latency_is_recorded_per_query_with_p50_and_p95(monkeypatch):
    class Clock:
        now = 0.0

        def perf_counter(self) -> float:
            return self.now

    clock = Clock()
    monkeypatch.setattr(harness, "time", clock)
    durations = {"q1": 0.010, "q2": 0.040, "q3": 0.020, "q4": 0.030}

    def timed(query: str, k: int) -> list[str]:
        clock.now += durations[query]
        return ["d"]

    dataset = [{"id": q, "query": q, "relevant": ["d"]} for q in durations]
    outcome = Evaluator(timed).run(dataset)
    assert outcome.latencies == pytest.approx(durations)
    # Sorted 0.01, 0.02, 0.03, 0.04 with linear interpolation: p50 at position 1.5 -> 0.025,
    # p95 at position 0.95 * 3 = 2.85 -> 0.03 + 0.85 * 0.01 = 0.0385.
    assert outcome.latency_p50 == pytest.approx(0.025)
    assert outcome.latency_p95 == pytest.approx(0.0385)


def test_progress_bar_goes_to_the_given_stream():
    stream = TtyBuffer()
    Evaluator(engine, progress=True, progress_file=stream).run(DATASET)
    assert "Searching" in stream.getvalue() and "3/3" in stream.getvalue()
    quiet = TtyBuffer()
    Evaluator(engine, progress_file=quiet).run(DATASET)     # 3 queries: below the default threshold
    assert quiet.getvalue() == ""


def test_engine_shapes_search_and_rechercher_methods():
    class Moteur:                      # the tutorial's engine
        def rechercher(self, requete: str, k: int) -> list[dict]:
            return [{"id": "a", "score": 2.0}, {"id": "b", "score": 1.0}][:k]

    outcome = Evaluator(Moteur()).run(DATASET[:1], depth=1)
    assert outcome.run.to_dict() == {"q1": {"a": 2.0}}

    class Engine:
        def search(self, query: str, k: int) -> list[tuple[str, float]]:
            return [("a", 0.9), ("b", 0.5)]

    assert Evaluator(Engine()).run(DATASET[:1]).run.to_dict() == {"q1": {"a": 0.9, "b": 0.5}}
    with pytest.raises(UsageError, match="must be a callable"):
        Evaluator(42)


def test_results_keep_engine_order_when_scores_tie_or_are_missing():
    assert normalise_results(["a", "b", "a", "c"], depth=10) == (["a", "b", "c"], None)
    scored = [{"id": "a", "score": 3}, {"id": "b", "score": 1}]
    assert normalise_results(scored, 10) == (["a", "b"], [3.0, 1.0])
    assert normalise_results([{"id": "a", "score": 1}, {"id": "b", "score": 1}], 10) == (["a", "b"], None)
    assert normalise_results(["a", "b", "c"], depth=2) == (["a", "b"], None)
    outcome = Evaluator(lambda q, k: [{"id": "a", "score": 1.0}, {"id": "b", "score": 1.0}]).run(DATASET[:1])
    # A tie would let trec_eval's doc_id rule put "b" before "a"; scores n, n-1, ..., 1 keep the engine's order.
    assert outcome.run.to_dict() == {"q1": {"a": 2.0, "b": 1.0}}
    assert outcome.rescored_queries == ["q1"] and outcome.disordered_queries == []
    # tied scores already in trec_eval's tie order (doc id descending) are kept as they are
    outcome = Evaluator(lambda q, k: [{"id": "b", "score": 1.0}, {"id": "a", "score": 1.0}]).run(DATASET[:1])
    assert outcome.run.to_dict() == {"q1": {"b": 1.0, "a": 1.0}} and outcome.rescored_queries == []


def test_the_run_is_written_as_trec_and_json(tmp_path):
    report = Evaluator(engine, run_tag="demo").evaluate(DATASET, measures=["P@1"])
    report.write_run(tmp_path / "run.txt")
    assert (tmp_path / "run.txt").read_text().splitlines() == [
        "q1 Q0 b 1 3 demo", "q1 Q0 a 2 2 demo", "q1 Q0 z 3 1 demo",
        "q3 Q0 x 1 2 demo", "q3 Q0 d 2 1 demo",
    ]
    assert read_trec_run(tmp_path / "run.txt").to_dict() == report.run.to_dict()
    report.write_run(tmp_path / "run.json", format="json")
    assert '"q1": [{"id": "b", "score": 3.0}' in (tmp_path / "run.json").read_text()


def test_seed_dataset_shape_is_read_with_grades_and_non_relevant_as_zero():
    qrels = dataset_from_rows([
        {"requête": "a", "pertinents": ["d1", "d2"], "non_pertinents": ["d9"]},
        {"query": "b", "relevant": {"d3": 2}},
    ])
    assert qrels.to_dict() == {"q1": {"d1": 1, "d2": 1, "d9": 0}, "q2": {"d3": 2}}
    assert qrels.topics == {"q1": "a", "q2": "b"}
    # the same reader as for files: the row is named by its position, the query by its id
    with pytest.raises(InputFormatError, match=r"^<dataset>: item 2 \(query q2\): missing required key 'requête' or "
                                               r"'query' \(keys present: 'pertinents'\)$"):
        dataset_from_rows([{"query": "a", "pertinents": ["d1"]}, {"pertinents": []}])
    with pytest.raises(InputFormatError, match=r"^<dataset>: item 1 \(query q1\): the query text is empty"):
        dataset_from_rows([{"query": "  ", "pertinents": ["d1"]}])
    with pytest.raises(InputFormatError, match=r"^<dataset>: item 1 \(query q1\): missing required key 'pertinents'"):
        dataset_from_rows([{"query": "a"}])
    # a string is not a list of ids: it must not be read as one id per character
    with pytest.raises(InputFormatError, match=r"item 1 \(query q1\): key 'non_pertinents': expected a list of "
                                               r"document ids, got the string \"d1\""):
        dataset_from_rows([{"id": "q1", "query": "x", "relevant": ["d9"], "non_pertinents": "d1"}])
    with pytest.raises(InputFormatError, match=r"query id 'a' is used twice \(first by item 1 \(query a\)\)$"):
        dataset_from_rows([{"id": "a", "query": "x", "relevant": ["d"]}, {"id": "a", "query": "y", "relevant": []}])


def test_search_command_imports_the_engine_and_writes_the_run(tmp_path, monkeypatch):
    (tmp_path / "my_engine.py").write_text(textwrap.dedent("""
        def search(query, k):
            return {"alpha": ["b", "a"], "delta": ["d"]}.get(query, [])
    """))
    dataset = tmp_path / "dataset.json"
    dataset.write_text('[{"id": "q1", "requête": "alpha", "pertinents": {"a": 2}},'
                       ' {"id": "q2", "requête": "delta", "pertinents": ["d"]}]', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(search_command, [str(dataset), "--engine", "my_engine:search", "-k", "10",
                                                 "-m", "RR", "-o", "run.txt"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "run.txt").read_text().splitlines() == [
        "q1 Q0 b 1 2 search", "q1 Q0 a 2 1 search", "q2 Q0 d 1 1 search"
    ]
    assert "latency per query: p50" in result.stdout
    again = CliRunner().invoke(search_command, [str(dataset), "--engine", "my_engine:nothing"])
    assert again.exception.worded(FLAGS) == "--engine 'my_engine:nothing': 'my_engine' has no attribute 'nothing'"


def test_search_command_exits_1_when_a_query_failed_unless_allowed(tmp_path, monkeypatch):
    (tmp_path / "flaky_engine.py").write_text(textwrap.dedent("""
        def search(query, k):
            if query == "boom":
                raise RuntimeError("index offline")
            return ["d"]
    """))
    dataset = tmp_path / "dataset.json"
    dataset.write_text('[{"id": "q1", "requête": "delta", "pertinents": ["d"]},'
                       ' {"id": "q2", "requête": "boom", "pertinents": ["c"]}]', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = [str(dataset), "--engine", "flaky_engine:search", "-m", "RR", "-o", "run.txt"]
    failed = invoke("search", *args)
    assert failed.exit_code == 1
    # everything that succeeded is still there: the run of q1, the table (RR: q1 1, q2 0 -> mean 0.5)
    assert (tmp_path / "run.txt").read_text().splitlines() == ["q1 Q0 d 1 1 search"]
    assert "0.5000" in failed.stdout
    assert "failed: q2 ('boom'): RuntimeError: index offline" in failed.stderr
    assert failed.stderr.endswith(
        "Error: 1 of 2 queries failed and were scored 0 (--allow-failures to exit 0 anyway)\n")
    allowed = invoke("search", *args, "--allow-failures", "--force")
    assert allowed.exit_code == 0
    assert "Warning: 1 query failed (scored 0)" in allowed.stderr


def test_demo_runs_offline_and_prints_metrics_and_a_comparison():
    result = CliRunner().invoke(demo_command, [])
    assert result.exit_code == 0, result.output
    assert "nDCG" in result.stdout and "MRR" in result.stdout
    assert "bm25-keep-stop-words" in result.stdout and "baseline: bm25" in result.stdout


def test_the_packaged_demo_data_is_the_fixtures():
    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    corpus, dataset = demo_files()
    assert corpus.read_bytes() == (fixtures / "corpus_fr.jsonl").read_bytes()
    assert dataset.read_bytes() == (fixtures / "eval_dataset_fr.json").read_bytes()


def test_latency_of_nothing_is_nan():
    outcome = harness.SearchOutcome(run=None, latencies={}, failures=[], rescored_queries=[])  # type: ignore[arg-type]
    assert np.isnan(outcome.latency_p50)


def test_progress_outside_a_terminal_shows_how_far_it_got():
    # click's bar once printed "Searching" and nothing more to a log or a notebook
    log = io.StringIO()
    Evaluator(engine, progress=True, progress_file=log).run(DATASET)
    text = log.getvalue()
    assert "Searching" in text and "3/3" in text


def test_the_python_api_speaks_of_parameters_not_flags(tmp_path):
    report = Evaluator(engine).evaluate(DATASET, k_values=(1,))
    path = tmp_path / "run.txt"
    report.write_run(path)
    with pytest.raises(UsageError) as refused:
        report.write_run(path)
    assert str(refused.value) == f"{path} already exists; pass force=True to overwrite it"
    assert "--force" not in str(refused.value)
    report.write_run(path, force=True)


@pytest.mark.parametrize("k_values, message", [
    ("10", "k_values must be an integer or a list of positive integers, got '10'"),  # read as [1, 0] before
    ((2.5,), "k_values must be positive integers, got 2.5"),  # silently cut to 2 before
    ((0, 5), "k_values must be positive integers, got 0"),
    ((), "k_values must hold at least one k"),
    ((True,), "k_values must be positive integers, got True"),
])
def test_bad_k_values_are_named(k_values, message):
    with pytest.raises(UsageError) as refused:
        Evaluator(engine).evaluate(DATASET, k_values=k_values)
    assert str(refused.value) == message


def test_one_k_and_numpy_ks_are_k_values_and_depth_zero_is_refused():
    report = Evaluator(engine).evaluate(DATASET, k_values=2)
    # by hand, k = 2: q1 gets b (1), a (3) -> P@2 = 1; q2 failed -> 0; q3 gets x, d -> P@2 = 1/2; mean 1.5 / 3
    assert report.summary["P@2"] == pytest.approx(0.5)
    assert list(Evaluator(engine).evaluate(DATASET, k_values=np.array([2])).summary)[0] == "P@2"
    with pytest.raises(UsageError, match="the search depth must be at least 1, got 0"):  # was max(k_values)
        Evaluator(engine).evaluate(DATASET, k_values=(1,), depth=0)


def test_a_dataset_may_be_a_tuple_of_rows():
    as_list = Evaluator(engine).evaluate(DATASET, k_values=(2,)).summary
    assert Evaluator(engine).evaluate(tuple(DATASET), k_values=(2,)).summary == as_list


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize("flags", [[], ["--engine", "json:dumps", "--corpus", str(FIXTURES / "corpus_fr.jsonl")]],
                         ids=["neither", "both"])
def test_search_wants_an_engine_or_a_corpus_said_once_by_the_library(flags):
    """Neither or both: refused by the facade (``api.search_engine``), said with the command's flags; the
    command holds no sentence of its own for it."""
    from trec_rag_eval import api
    from trec_rag_eval.errors import UsageError

    said = "give either --engine (module:callable) or --corpus (built-in BM25)"
    with pytest.raises(UsageError) as caught:
        api.search_engine(*(["json:dumps", "corpus.jsonl"] if flags else []))
    assert str(caught.value) == "give either an engine spec (module:callable) or a corpus (built-in BM25)"
    assert caught.value.worded(FLAGS) == said
    # files that exist: a missing one is said before any of this, as every command's inputs are
    result = invoke("search", str(FIXTURES / "eval_dataset_fr.json"), *flags)
    assert (result.exit_code, result.stderr) == (2, f"Error: {said}\n")
    search = (Path(__file__).resolve().parent.parent / "trec_rag_eval" / "cli" / "search.py").read_text()
    assert "give either" not in search
