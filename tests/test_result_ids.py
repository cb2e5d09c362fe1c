"""``id=``: where search results keep their document id, wherever results are read.
LangChain's retrievers return Documents whose id is ``None`` and whose source is
``metadata["source"]``: refused before, with no way to say where the id is."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import trec_rag_eval as tre
from trec_rag_eval.errors import EngineError, InputFormatError, UsageError

QRELS = {"q1": {"guide.pdf": 1, "faq.md": 0}, "q2": {"faq.md": 1}}
DATASET = [{"id": "q1", "query": "how to start", "relevant": ["guide.pdf"], "non_relevant": ["faq.md"]},
           {"id": "q2", "query": "questions", "relevant": ["faq.md"]}]
# by hand: q1 lists faq.md then guide.pdf (RR 1/2), q2 lists faq.md first (RR 1): MRR 0.75
RANKED = {"q1": ["faq.md", "guide.pdf"], "q2": ["faq.md"]}


def _document(source: str) -> SimpleNamespace:
    return SimpleNamespace(id=None, page_content="...", metadata={"source": source, "page": 3})


def _langchain() -> dict:
    return {q: [_document(source) for source in sources] for q, sources in RANKED.items()}


def test_search_results_in_memory_take_a_key_path_or_a_callable():
    with pytest.raises(EngineError, match="say where it is with id="):
        tre.evaluate(QRELS, _langchain(), "MRR")
    assert tre.evaluate(QRELS, _langchain(), "MRR", id="metadata.source").summary["MRR"] == 0.75
    assert tre.evaluate(QRELS, _langchain(), "MRR", id=lambda d: d.metadata["source"]).summary["MRR"] == 0.75
    # (Document, score) pairs: the path is read from the document, the score from the pair
    pairs = {q: [(_document(s), 1.0 - i / 10) for i, s in enumerate(sources)] for q, sources in RANKED.items()}
    assert tre.evaluate(QRELS, pairs, "MRR", id="metadata.source").summary["MRR"] == 0.75


def test_compare_crosscheck_and_the_harness_take_it_too():
    comparison = tre.compare(QRELS, {"a": _langchain(), "b": _langchain()}, "MRR", id="metadata.source")
    assert comparison.summary["a"]["MRR"] == comparison.summary["b"]["MRR"] == 0.75

    def retriever(query: str, k: int):
        return [_document(s) for s in RANKED["q1" if query == "how to start" else "q2"]][:k]

    report = tre.Evaluator(retriever, id="metadata.source").evaluate(DATASET, measures=["MRR"])
    assert report.summary["MRR"] == 0.75
    assert report.run.to_dict() == {"q1": {"faq.md": 2.0, "guide.pdf": 1.0}, "q2": {"faq.md": 1.0}}
    with pytest.raises(EngineError, match="no 'metadata.url' in the result"):
        tre.Evaluator(retriever, id="metadata.url").evaluate(DATASET, measures=["MRR"])
    with pytest.raises(UsageError, match="id must be a key path"):
        tre.Evaluator(retriever, id="")


def test_json_results_files_take_it(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({q: [{"page_content": "...", "metadata": {"source": s}} for s in sources]
                                for q, sources in RANKED.items()}))
    with pytest.raises(InputFormatError, match="has no id key"):
        tre.evaluate(QRELS, str(path), "MRR")
    assert tre.evaluate(QRELS, str(path), "MRR", id="metadata.source").summary["MRR"] == 0.75
    assert tre.read_run(str(path), id="metadata.source").to_dict() == {
        "q1": {"faq.md": 2.0, "guide.pdf": 1.0}, "q2": {"faq.md": 1.0}}
    comparison = tre.compare(QRELS, {"a": str(path), "b": _langchain()}, "MRR", id="metadata.source")
    assert comparison.per_query["a"] == comparison.per_query["b"]
    with pytest.raises(InputFormatError, match="has nothing at id='metadata.url'"):
        tre.read_run(str(path), id="metadata.url")
    trec = tmp_path / "run.txt"
    trec.write_text("q1 Q0 guide.pdf 1 1 r\n")
    with pytest.raises(UsageError, match="id= says where JSON results keep their document ids"):
        tre.evaluate(QRELS, str(trec), "MRR", id="metadata.source")


def test_the_command_line_takes_it_as_id_key(tmp_path):
    from conftest import invoke

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 guide.pdf 1\nq1 0 faq.md 0\nq2 0 faq.md 1\n")
    path = tmp_path / "results.json"
    path.write_text(json.dumps({q: [{"page_content": "...", "metadata": {"source": s}} for s in sources]
                                for q, sources in RANKED.items()}))
    refused = invoke("-m", "recip_rank", str(qrels), str(path))
    assert refused.exit_code == 1 and "has no id key" in refused.stderr
    result = invoke("-m", "recip_rank", "--id-key", "metadata.source", str(qrels), str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "recip_rank            \tall\t0.7500\n"
    compared = invoke("compare", "-m", "RR", "--id-key", "metadata.source", "-f", "csv", str(qrels), str(path),
                      str(path))
    assert compared.exit_code == 0, compared.stderr
    assert compared.stdout.splitlines()[1].startswith("all,RR,1:results.json,1:results.json,0.75,0.75,")


@pytest.mark.parametrize("results", [
    [{"id": "faq.md", "score": 2.0}, {"id": "guide.pdf", "score": 1.5}, {"id": "faq.md", "score": 1.0}],
    [("faq.md", 2.0), ("guide.pdf", 1.5), ("faq.md", 1.0)],
], ids=["dicts", "pairs"])
def test_a_document_twice_in_search_results_in_memory_is_warned_of_as_in_a_results_file(tmp_path, results):
    # the same results in a JSON results file are warned of, their first place kept; in memory the repeat was
    # dropped in silence (q1: faq.md then guide.pdf either way, RR 1/2)
    path = tmp_path / "results.json"
    path.write_text(json.dumps([{"query_id": "q1", "results": [{"id": "faq.md", "score": 2.0},
                                {"id": "guide.pdf", "score": 1.5}, {"id": "faq.md", "score": 1.0}]}]))
    with pytest.warns(tre.TrecRagEvalWarning) as from_file:
        by_file = tre.evaluate({"q1": QRELS["q1"]}, path, ["RR"])
    with pytest.warns(tre.TrecRagEvalWarning) as from_memory:
        in_memory = tre.evaluate({"q1": QRELS["q1"]}, {"q1": results}, ["RR"])
    assert by_file.values["RR"].tolist() == in_memory.values["RR"].tolist() == [0.5]
    said = [str(w.message).split(": ", 1)[1] for w in from_file if "more than once" in str(w.message)]
    assert said == ["1 ids are listed more than once in one result list (only the first place is kept) "
                    "(e.g. q1: 'faq.md' x2)"]
    assert [str(w.message) for w in from_memory if "more than once" in str(w.message)] == [f"run (dict): {said[0]}"]


def test_a_document_twice_in_a_search_engine_s_results_is_warned_of_as_in_a_results_file():
    # the engine's answer as the results file above holds it: faq.md given twice for q1, its first place kept
    # (q1: faq.md then guide.pdf, RR 1/2; q2: faq.md first, RR 1); it was dropped in silence
    answers = {"how to start": [{"id": "faq.md", "score": 2.0}, {"id": "guide.pdf", "score": 1.5},
                                {"id": "faq.md", "score": 1.0}],
               DATASET[1]["query"]: [{"id": "faq.md", "score": 1.0}]}
    with pytest.warns(tre.TrecRagEvalWarning) as caught:
        report = tre.Evaluator(lambda query, k: answers[query], progress=False).evaluate(DATASET, measures=["MRR"])
    assert report.summary["MRR"] == 0.75
    said = [str(w.message) for w in caught if "more than once" in str(w.message)]
    assert said == ["<engine engine>: 1 ids are listed more than once in one result list (only the first place is "
                    "kept) (e.g. q1: 'faq.md' x2)"]
