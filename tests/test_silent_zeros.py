"""No silent zeros: a mistake that would give an all-zero or empty
result says so. A warning (``TrecRagEvalWarning``) where the data could be right, an exception
where it cannot; on the command line, one line on stderr.
"""

from __future__ import annotations

import json
import warnings
from types import SimpleNamespace

import pytest
from conftest import invoke

from trec_rag_eval.engine.harness import Evaluator
from trec_rag_eval.engine.search_results import normalise_results
from trec_rag_eval.errors import EngineError, TrecRagEvalWarning, UsageError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels, read_trec_run

DATASET = [
    {"id": "q1", "query": "alpha", "relevant": ["d1"]},
    {"id": "q2", "query": "beta", "relevant": ["d2"]},
]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- evaluate_tables() on data that shares nothing -----------------------------------------------------


def test_evaluate_warns_when_qrels_and_run_share_no_query(tmp_path):
    qrels = read_trec_qrels(_write(tmp_path, "q.txt", "1 0 d1 1\n2 0 d2 1\n"))
    run = read_trec_run(_write(tmp_path, "r.txt", "A Q0 d1 1 2.0 t\nB Q0 d2 1 2.0 t\n"))
    with pytest.warns(TrecRagEvalWarning, match=r"share no query id.*1, 2.*A, B"):
        result = evaluate_tables(qrels, run, ["P@1"])
    assert result.summary_by_name["P@1"] == 0.0


def test_evaluate_warns_when_no_retrieved_id_is_known_to_the_qrels(tmp_path):
    qrels = read_trec_qrels(_write(tmp_path, "q.txt", "1 0 d1 1\n2 0 d2 1\n"))
    run = read_trec_run(_write(tmp_path, "r.txt", "1 Q0 chunk-7 1 2.0 t\n2 Q0 chunk-9 1 2.0 t\n"))
    with pytest.warns(TrecRagEvalWarning, match=r"none of the 2 retrieved ids appears in the qrels for its query"):
        evaluate_tables(qrels, run, ["P@1"])


def test_the_dummy_ranking_of_a_missing_query_is_not_counted_as_retrieved(tmp_path):
    # query 3 is judged but not in the run: it is ranked as one document in no qrels, not a retrieved id
    qrels = read_trec_qrels(_write(tmp_path, "q.txt", "1 0 d1 1\n2 0 d2 1\n3 0 d3 1\n"))
    run = read_trec_run(_write(tmp_path, "r.txt", "1 Q0 c1 1 2.0 t\n1 Q0 c2 2 1.0 t\n2 Q0 c9 1 2.0 t\n"))
    with pytest.warns(TrecRagEvalWarning, match=r"none of the 3 retrieved ids appears"):
        evaluate_tables(qrels, run, ["P@1"])


def test_one_judged_document_anywhere_in_a_large_run_means_no_warning(tmp_path):
    # the rows are looked at a piece at a time: the only judged one is in the last piece (70,000 rows,
    # seven queries of 10,000; the judgments of queries 1-6 are documents none of them retrieved)
    qrels = read_trec_qrels(_write(tmp_path, "q.txt",
                                   "".join(f"{q} 0 other 1\n" for q in range(1, 7)) + "7 0 d69999 1\n"))
    run = read_trec_run(_write(tmp_path, "r.txt", "".join(f"{1 + i // 10_000} Q0 d{i} 1 {1.0 / (i + 1)!r} t\n"
                                                          for i in range(70_000))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = evaluate_tables(qrels, run, ["RR"])
    assert result.summary_by_name["RR"] == pytest.approx(1 / 10_000 / 7)  # the last of query 7's 10,000 rows


def test_an_ordinary_run_gives_no_warning(tmp_path):
    qrels = read_trec_qrels(_write(tmp_path, "q.txt", "1 0 d1 1\n2 0 d2 1\n"))
    run = read_trec_run(_write(tmp_path, "r.txt", "1 Q0 d1 1 2.0 t\n2 Q0 x 1 2.0 t\n"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate_tables(qrels, run, ["P@1"])


def test_cli_results_keyed_by_nothing_in_the_dataset_warn_on_stderr(tmp_path):
    dataset = _write(tmp_path, "dataset.json", json.dumps(DATASET))
    results = _write(tmp_path, "results.json", json.dumps({"x1": ["d1"], "x2": ["d2"]}))
    result = invoke(str(dataset), str(results))
    assert "share no query id" in result.stderr
    assert result.stderr.count("Warning:") >= 1


# --- an engine that cannot be called, or that always fails ------------------------------------


def test_an_engine_taking_one_argument_is_an_error_before_any_query():
    with pytest.raises(EngineError, match=r"cannot be called as engine\(query, k\)"):
        Evaluator(lambda q: ["d1"]).evaluate(DATASET)


def test_an_engine_method_with_a_wrong_signature_is_an_error():
    class Engine:
        def search(self, query, k, filters):
            return []

    with pytest.raises(EngineError, match=r"search"):
        Evaluator(Engine()).evaluate(DATASET)


def test_an_engine_with_keyword_k_or_defaults_is_accepted():
    def engine(query, k=10, **options):
        return ["d1"]

    report = Evaluator(engine).evaluate(DATASET, k_values=(1,), measures=["P@1"])
    assert report.summary["P@1"] == 0.5


def test_every_engine_call_failing_warns():
    def engine(query, k):
        raise ConnectionError("index offline")

    with pytest.warns(TrecRagEvalWarning, match=r"every engine call failed \(2 of 2 queries\).*index offline"):
        report = Evaluator(engine).evaluate(DATASET, k_values=(1,), measures=["P@1"])
    assert report.summary["P@1"] == 0.0


# --- where the engine's ids live -------------------------------------------------------------


class LangChainDocument:
    """LangChain's Document: ``id`` is often None, the id is in ``metadata``."""

    def __init__(self, doc_id, key="id"):
        self.id = None
        self.page_content = "text"
        self.metadata = {key: doc_id}


class NodeWithScore:
    """LlamaIndex: a NodeWithScore holds a node whose id is ``node_id``."""

    def __init__(self, doc_id, score):
        self.node = SimpleNamespace(node_id=doc_id, metadata={})
        self.score = score


@pytest.mark.parametrize(
    "results",
    [
        ["d1", "d2"],
        [("d1", 2.0), ("d2", 1.0)],
        [{"id": "d1"}, {"id": "d2"}],
        [{"doc_id": "d1", "score": 2.0}, {"doc_id": "d2", "score": 1.0}],
        [{"metadata": {"id": "d1"}}, {"metadata": {"doc_id": "d2"}}],
        [LangChainDocument("d1"), LangChainDocument("d2", key="doc_id")],
        [NodeWithScore("d1", 0.9), NodeWithScore("d2", 0.5)],
        [SimpleNamespace(id="d1", score=None), SimpleNamespace(doc_id="d2")],
    ],
    ids=["strings", "pairs", "dict-id", "dict-doc_id", "dict-metadata", "langchain", "llamaindex", "attributes"],
)
def test_ids_are_read_from_every_common_result_shape(results):
    doc_ids, _ = normalise_results(results, depth=10)
    assert doc_ids == ["d1", "d2"]


@pytest.mark.parametrize(
    "item",
    [LangChainDocument(None), {"id": None}, {"id": ""}, (None, 1.0), SimpleNamespace(id="  ")],
    ids=["metadata-none", "dict-none", "dict-empty", "pair-none", "blank"],
)
def test_an_id_that_reads_as_none_or_empty_is_an_error_naming_the_query(item):
    def engine(query, k):
        return [item]

    with pytest.raises(EngineError, match=r"query 'q1' \('alpha'\).*no usable document id"):
        Evaluator(engine).evaluate(DATASET)


def test_an_item_with_no_id_anywhere_is_an_error_naming_the_query():
    def engine(query, k):
        return [SimpleNamespace(text="hello")]

    with pytest.raises(EngineError, match=r"query 'q1'.*cannot find a document id"):
        Evaluator(engine).evaluate(DATASET)


def test_an_engine_that_finds_nothing_for_any_query_warns():
    # an index never built, a filter that excludes everything: no error, and every score 0
    with pytest.warns(TrecRagEvalWarning, match=r"the run holds no result for any query"):
        report = Evaluator(lambda query, k: []).evaluate(DATASET, k_values=(1,), measures=["P@1"])
    assert report.summary["P@1"] == 0.0


def test_an_empty_run_from_python_warns():
    import trec_rag_eval as tre

    with pytest.warns(TrecRagEvalWarning, match=r"the run holds no result for any query"):
        result = tre.evaluate({"q1": ["d1"]}, {"q1": []}, "P@1")
    assert result.summary["P@1"] == 0.0


# --- review: one warning where one is enough; the library speaks of parameters ------------------


def test_every_engine_call_failing_gives_one_warning_not_two():
    # the run is then empty too, but "every engine call failed" already says why, and says more
    def engine(query, k):
        raise ConnectionError("index offline")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Evaluator(engine).evaluate(DATASET, k_values=(1,), measures=["P@1"])
    messages = [str(w.message) for w in caught if issubclass(w.category, TrecRagEvalWarning)]
    assert len(messages) == 1 and messages[0].startswith("every engine call failed (2 of 2 queries)")


def test_the_python_api_speaks_of_parameters_and_the_cli_of_flags(tmp_path):
    from trec_rag_eval.errors import UsageError
    from trec_rag_eval.llm.queries import GenerationSettings

    with pytest.raises(UsageError) as err:
        GenerationSettings(model="m", n=0).check()
    assert str(err.value) == "n (questions per document) must be at least 1, got 0"
    # every retrieved document unjudged, and judged_only drops them all: the run is empty
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 x 1 1.0 t\n")
    with pytest.warns(TrecRagEvalWarning) as caught:
        evaluate_tables(read_trec_qrels(str(qrels)), read_trec_run(str(run)), ["P@1"], judged_only=True)
    text = str(caught[0].message)
    assert "none left after judged_only or max_retrieved" in text and "-J" not in text
    result = invoke("-J", "-m", "P.1", str(qrels), str(run))
    assert "Warning:" in result.stderr and "none left after -J or -M, if given" in result.stderr
    assert "judged_only" not in result.stderr


def test_no_library_message_names_a_command_line_flag():
    # errors and warnings raised outside cli/ speak of parameters: a flag in one (-n, --force) is wrong
    # from Python; the CLI rewords parameters into flags at its boundary (TrecRagEvalError.worded)
    import ast
    import pathlib
    import re

    import click

    from trec_rag_eval.cli import cli, commands

    context = click.Context(cli)
    flags = {opt for name in commands() for param in cli.get_command(context, name).params
             for opt in (*param.opts, *param.secondary_opts) if opt.startswith("-")}
    assert {"-n", "-J", "--force"} <= flags
    token = re.compile(r"(?<![\w.-])(--?[A-Za-z][\w-]*)")
    package = pathlib.Path(__file__).parent.parent / "trec_rag_eval"
    found = []
    for path in package.rglob("*.py"):
        if "cli" in path.relative_to(package).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if not (name.endswith(("Error", "Warning")) or name == "warn"):
                continue
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found += [f"{path.name}:{part.lineno}: {flag}" for flag in token.findall(part.value)
                              if flag in flags]
    assert found == []


def test_langchain_pairs_with_a_score_and_integer_ids_are_read():
    # vectorstore.similarity_search_with_score: (Document, score) pairs; the id is in the Document,
    # never its repr (which matched no qrels id: every score 0)
    pairs = [(LangChainDocument("d1"), 0.9), (LangChainDocument("d2", key="doc_id"), 0.5)]
    assert normalise_results(pairs, 10) == (["d1", "d2"], [0.9, 0.5])
    assert normalise_results([(NodeWithScore("d1", 0.9), 0.9)], 10) == (["d1"], [0.9])
    # numeric document ids (MS MARCO's passages are numbers), alone as in a pair
    assert normalise_results([7, 3], 10) == (["7", "3"], None)
    assert normalise_results([(7, 2.0), (3, 1.0)], 10) == (["7", "3"], [2.0, 1.0])
    with pytest.raises(EngineError, match="cannot find a document id"):
        normalise_results([True], 10)


def test_json_results_whose_scores_contradict_their_order_say_so(tmp_path):
    # a list of results is ranked in its order, from a file as in memory: distances
    # stored as "score" (rising along the list) are said, and no longer reverse the list
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps([{"id": "q1", "query": "a", "relevant": ["d1"]},
                                   {"id": "q2", "query": "b", "relevant": ["d3"]}]))
    results = tmp_path / "r.json"
    results.write_text(json.dumps({
        "q1": [{"id": "d1", "score": 0.1}, {"id": "d2", "score": 0.4}, {"id": "d3", "score": 0.9}],
        "q2": [{"id": "d3", "score": 0.7}, {"id": "d2", "score": 0.5}, {"id": "d1", "score": 0.2}]}))
    result = invoke("-m", "recip_rank", str(dataset), str(results))
    assert result.exit_code == 0
    assert ("1 result list has scores that rise along the list (distances, lower is better?): ranked in the "
            "list's order, as given, best first, not by score") in result.stderr
    assert "(e.g. q1)" in result.stderr
    assert "recip_rank            \tall\t1.0000\n" in result.stdout      # d1 first in both lists: RR 1
    # ties do not contradict the order: the list decides between them, in any doc id order, in silence
    for first, second in (("d2", "d1"), ("d1", "d2")):
        results.write_text(json.dumps({"q1": [{"id": first, "score": 1.0}, {"id": second, "score": 1.0}],
                                       "q2": [{"id": "d3", "score": 1.0}]}))
        tied = invoke("-m", "recip_rank", str(dataset), str(results))
        assert "rise along" not in tied.stderr
        assert f"recip_rank            \tall\t{(1 / (1 if first == 'd1' else 2) + 1) / 2:.4f}\n" in tied.stdout


def test_an_engine_taking_k_by_keyword_is_called_so():
    class Keyword:
        def search(self, query, *, k=10):
            return ["d1"][:k]

    class TopK:
        def search(self, query, *, top_k):
            return ["d1"][:top_k]

    for engine in (Keyword(), TopK()):
        assert Evaluator(engine).evaluate(DATASET, k_values=(1,), measures=["P@1"]).summary["P@1"] == 0.5


def test_an_async_engine_or_a_retriever_is_an_error_saying_how_to_wrap_it():
    async def engine(query, k):
        return ["d1"]

    with pytest.raises(EngineError, match=r"is async.*asyncio\.run\(engine\(q, k\)\)"):
        Evaluator(engine).evaluate(DATASET)

    class Retriever:  # LangChain's retrievers: invoke(query), no k
        def invoke(self, query):
            return []

    with pytest.raises(UsageError, match=r"lambda q, k: retriever\.invoke\(q\)\[:k\]"):
        Evaluator(Retriever()).evaluate(DATASET)
