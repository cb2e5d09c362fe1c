"""Context cost at k: the tokens the top k results put into a prompt, beside the
quality at the same k, in the harness, the command's RAG table and the Python results. Expected values
are counted by hand below."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import trec_rag_eval as tre
from tests.conftest import invoke

REPO = Path(__file__).resolve().parent.parent

QRELS = {"q1": {"a": 1}, "q2": {"c": 1}, "q3": {"x": 1}}
# q1 ranks a (3), b (2), c (1); q2 ranks d (2), c (1); q3 is missing from the run (0 tokens)
RUN = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"d": 2.0, "c": 1.0}}
# words: a 2, b 3, c 1, d 4
TEXTS = {"a": "one two", "b": "three words here", "c": "x", "d": "four five six seven"}
# top 1: q1 2, q2 4, q3 0; top 2: q1 5, q2 5, q3 0; top 3: q1 6, q2 5, q3 0
# p95 of three values v0 <= v1 <= v2 (numpy's linear): v1 + 0.9 * (v2 - v1)


def test_tokens_of_the_top_k_by_hand():
    cost = tre.context_cost(RUN, TEXTS, [1, 2, 3], query_ids=["q1", "q2", "q3"])
    assert cost.per_query() == {"q1": {1: 2, 2: 5, 3: 6}, "q2": {1: 4, 2: 5, 3: 5}, "q3": {1: 0, 2: 0, 3: 0}}
    assert cost.mean(1) == pytest.approx(6 / 3) and cost.p95(1) == pytest.approx(2 + 0.9 * (4 - 2))
    assert cost.mean(2) == pytest.approx(10 / 3) and cost.p95(2) == pytest.approx(5.0)
    assert cost.mean(3) == pytest.approx(11 / 3) and cost.p95(3) == pytest.approx(5 + 0.9 * (6 - 5))
    assert cost.tokenizer == "words (whitespace-separated)" and cost.missing_texts == []


def test_ties_are_ranked_as_the_measures_rank_them():
    # a and b tie: trec_eval's rule puts the larger doc id first, b (3 words) before a (2)
    cost = tre.context_cost({"q1": {"a": 1.0, "b": 1.0}}, TEXTS, [1])
    assert cost.per_query() == {"q1": {1: 3}}


def test_any_tokenizer_a_count_or_a_list_of_tokens():
    assert tre.context_cost(RUN, TEXTS, [1], tokenizer=len).per_query()["q1"] == {1: len("one two")}
    assert tre.context_cost(RUN, TEXTS, [1], tokenizer=str.split).per_query()["q2"] == {1: 4}
    with pytest.raises(tre.UsageError, match="must return a number of tokens or a list"):
        tre.context_cost(RUN, TEXTS, [1], tokenizer=lambda text: None)


def test_a_document_without_text_counts_zero_and_is_named():
    cost = tre.context_cost(RUN, {"a": "one two"}, [2])
    assert cost.per_query() == {"q1": {2: 2}, "q2": {2: 0}}
    assert cost.missing_texts == ["b", "d", "c"]  # the top 2 of q1 (a, b) and of q2 (d, c), in that order


def test_evaluate_shows_the_tokens_beside_the_measures_at_the_same_k():
    evaluation = tre.evaluate(QRELS, RUN, ["P@1", "P@2", "P@3", "MRR"], corpus=TEXTS)
    text = str(evaluation)
    assert re.search(r"\ntokens +2\.0 +3\.3 +3\.7\n", text)  # means 6/3, 10/3, 11/3
    assert re.search(r"\ntokens p95 +3\.8 +5\.0 +5\.9\n", text)
    assert "counted as words (whitespace-separated); mean and 95th percentile over 3 queries" in text
    table = evaluation.context_table("polars")
    assert table.columns == ["k", "P", "tokens_mean", "tokens_p95"]
    # P@1: q1 1, q2 0, q3 0; P@2: q1 1/2; P@3: q1 1/3, q2 1/3 (c at rank 2 of q2: P@3 = 1/3)
    assert table["P"].to_list() == pytest.approx([1 / 3, (1 / 2 + 1 / 2) / 3, (1 / 3 + 1 / 3) / 3])
    assert table["tokens_mean"].to_list() == pytest.approx([2.0, 10 / 3, 11 / 3])
    assert "tokens p95" in evaluation._repr_html_()
    assert json.loads(evaluation.render("json"))["context_tokens"]["@2"] == {"mean": pytest.approx(10 / 3),
                                                                             "p95": 5.0}


def test_without_texts_there_is_no_context_row_and_the_table_says_why():
    evaluation = tre.evaluate(QRELS, RUN, ["P@1"])
    assert evaluation.context is None and "tokens" not in str(evaluation)
    with pytest.raises(tre.UsageError, match="corpus="):
        evaluation.context_table()
    with pytest.raises(tre.UsageError, match="corpus="):
        tre.evaluate(QRELS, RUN, ["P@1"], tokenizer=len)


def test_the_command_and_python_give_the_same_table(tmp_path):
    qrels, run, corpus = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "corpus.jsonl"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items() for d, r in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s} r\n" for q, docs in RUN.items()
                           for i, (d, s) in enumerate(docs.items())))
    corpus.write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in TEXTS.items()))
    result = invoke("--corpus", str(corpus), "-m", "P@1", "-m", "P@3", "--format", "table", str(qrels), str(run))
    assert result.exit_code == 0, result.output
    assert result.stdout == str(tre.evaluate(qrels, run, ["P@1", "P@3"], corpus=corpus))
    assert re.search(r"\ntokens +2\.0 +3\.7\n", result.stdout)
    csv = invoke("--corpus", str(corpus), "-m", "P@1", "--format", "csv", str(qrels), str(run)).stdout
    assert "r,all,tokens@1,2.0\n" in csv and "r,all,tokens_p95@1,3.8" in csv
    jsonl = invoke("--corpus", str(corpus), "-q", "-m", "P@1", "--format", "jsonl", str(qrels), str(run)).stdout
    rows = [json.loads(line) for line in jsonl.splitlines()]  # the csv's rows (with -q, each query's tokens too)
    assert {"run": "r", "query_id": "all", "measure": "tokens@1", "value": 2.0} in rows
    assert [r["measure"] for r in rows if r["query_id"] == "all"][-2:] == ["tokens@1", "tokens_p95@1"]
    assert [(r["query_id"], r["value"]) for r in rows if r["measure"] == "tokens@1"] == [
        ("q1", 2), ("q2", 4), ("q3", 0), ("all", 2.0)]  # the top 1's words, then their mean
    refused = invoke("--corpus", str(corpus), "-m", "P@1", "--format", "trec", str(qrels), str(run))
    assert refused.exit_code != 0 and "--corpus" in refused.stderr


class Document:
    """A LangChain Document: text in page_content, id in metadata."""

    def __init__(self, doc_id: str, text: str) -> None:
        self.page_content, self.metadata, self.id = text, {"id": doc_id}, None


def test_the_harness_counts_the_texts_its_results_carry():
    dataset = [{"id": "q1", "query": "first", "relevant": ["a"]}, {"id": "q2", "query": "second", "relevant": ["c"]}]

    def search(query, k):  # q1: a b c; q2: d c, as dicts and as LangChain documents
        if query == "first":
            return [{"id": d, "text": TEXTS[d], "score": s} for d, s in RUN["q1"].items()][:k]
        return [Document(d, TEXTS[d]) for d in RUN["q2"]][:k]

    report = tre.Evaluator(search, progress=False).evaluate(dataset, k_values=[1, 2])
    assert report.context.per_query() == {"q1": {1: 2, 2: 5}, "q2": {1: 4, 2: 5}}
    assert re.search(r"\ntokens +3\.0 +5\.0\n", str(report))
    plain = report.to_dict()["context_tokens"]
    assert plain["2"] == {"mean": 5.0, "p95": 5.0, "per_query": {"q1": 5, "q2": 5}}
    assert json.dumps(plain)  # plain data
    # ids only, the texts from a corpus; a tokenizer of one's own
    only_ids = tre.Evaluator(lambda q, k: ["a", "b"], progress=False, corpus=TEXTS, tokenizer=len)
    assert only_ids.evaluate(dataset, k_values=[2]).context.per_query()["q1"] == {2: len("one two") + len(
        "three words here")}
    with pytest.raises(tre.UsageError, match="corpus="):
        tre.Evaluator(lambda q, k: ["a"], progress=False, tokenizer=len).evaluate(dataset, k_values=[1])


def test_chunks_are_counted_as_sent_while_the_measures_score_documents():
    dataset = [{"id": "q1", "query": "first", "relevant": ["doc"]}]
    chunks = {"doc#1": "one two", "doc#2": "three four five", "other#1": "six"}
    report = tre.Evaluator(lambda q, k: ["doc#1", "doc#2", "other#1"], progress=False, corpus=chunks,
                           doc_map=r"^(.*)#\d+$").evaluate(dataset, k_values=[2, 3])
    assert report.summary["P@2"] == 0.5  # doc, other: the two chunks of doc are one document
    assert report.context.per_query() == {"q1": {2: 5, 3: 6}}  # but both chunks were sent


def test_the_search_command_shows_the_tokens_of_its_corpus():
    result = invoke("search", str(REPO / "fixtures" / "eval_dataset_fr.json"), "--corpus",
                    str(REPO / "fixtures" / "corpus_fr.jsonl"), "--no-progress", "-k", "3")
    assert result.exit_code == 0, result.output
    assert "\ntokens " in result.stdout and "\ntokens p95 " in result.stdout


def test_quality_and_tokens_plot_against_k():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = tre.evaluate(QRELS, RUN, ["P@1", "P@3", "R@1", "R@3"], corpus=TEXTS).plot_context()
    assert isinstance(figure, Figure)
    quality, tokens = figure.get_axes()
    assert [line.get_label() for line in quality.get_lines()] == ["P", "R"]
    assert list(tokens.get_lines()[0].get_ydata()) == pytest.approx([2.0, 11 / 3])


def test_a_tokenizer_named_by_text_on_the_command_line_and_in_python(tmp_path, monkeypatch):
    (tmp_path / "chartok.py").write_text("def count(text):\n    return len(text)\n")
    monkeypatch.chdir(tmp_path)  # the current folder is importable, as for --engine
    monkeypatch.syspath_prepend(str(tmp_path))
    qrels, run, corpus = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "corpus.jsonl"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in QRELS.items() for d, r in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s} r\n" for q, docs in RUN.items()
                           for i, (d, s) in enumerate(docs.items())))
    corpus.write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in TEXTS.items()))
    # characters of the top 1: q1 "one two" 7, q2 "four five six seven" 19, q3 0: mean 26 / 3
    result = invoke("--corpus", str(corpus), "--tokenizer", "chartok:count", "-m", "P@1", "--format", "table",
                    str(qrels), str(run))
    assert result.exit_code == 0, result.output
    assert re.search(r"\ntokens +8\.7\n", result.stdout) and "counted as count;" in result.stdout
    assert tre.evaluate(QRELS, RUN, "P@1", corpus=TEXTS, tokenizer="chartok:count").context.mean(1) == \
        pytest.approx(26 / 3)
    missing = invoke("--tokenizer", "chartok:count", "-m", "P@1", "--format", "table", str(qrels), str(run))
    assert missing.exit_code != 0 and missing.stderr == (
        "Error: --tokenizer counts the tokens of the results' texts: give them with --corpus\n")
    unknown = invoke("--corpus", str(corpus), "--tokenizer", "nope:count", "-m", "P@1", "--format", "table",
                     str(qrels), str(run))
    assert unknown.stderr.startswith("Error: --tokenizer 'nope:count': cannot import 'nope'")
