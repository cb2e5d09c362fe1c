"""What ``judge`` and ``search`` tell about the data (documents without a text, passages cut, queries
without a text, chunk ids mapped, queries whose engine call failed): the stderr lines of the commands,
worked out from the inputs, and the same texts warned to a Python caller of ``tre.judge`` and
``Evaluator.evaluate``."""

from __future__ import annotations

import json
import textwrap
import warnings

import pytest
from conftest import invoke
from test_judge import DATASET, RUN, FakeJudge

import trec_rag_eval as tre

# --- judge ---------------------------------------------------------------------------------------------
# The run of test_judge (q1: d5 d1 d6 d2, q2: d7 d3 d8 d4) plus q3, a query the dataset has no text for.
# Top 3: q1 d5 d1 d6, q2 d7 d3 d8; d1 and d3 are judged, so the holes are d5 d6 d7 d8. The corpus has no
# d6 and an empty d8: d5 and d7 are asked, each "[dN] passage dN" (15 characters), cut at 10.
JUDGE_RUN = RUN + "q3 Q0 d1 1 9 bm25\n"
JUDGE_TEXTS = {"d1": "[d1] passage d1", "d2": "[d2] passage d2", "d3": "[d3] passage d3", "d4": "[d4] passage d4",
               "d5": "[d5] passage d5", "d7": "[d7] passage d7", "d8": "  "}


def _judge_files(tmp_path):
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(DATASET), encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text(JUDGE_RUN, encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in JUDGE_TEXTS.items()),
                      encoding="utf-8")
    return dataset, run, corpus


def judge_lines(corpus: str, max_chars: str) -> list[str]:
    return [f"1 unjudged documents are not in {corpus} and stay holes: q1/d6",
            f"1 unjudged documents have an empty text in {corpus}: not shown to the model, they stay holes: q2/d8",
            f"2 documents were cut at 10 characters for the model ({max_chars}): d5, d7",
            "1 run queries have no query text and were not judged: q3"]


def test_the_judge_command_tells_what_it_could_not_judge(tmp_path):
    dataset, run, corpus = _judge_files(tmp_path)
    with FakeJudge() as server:
        result = invoke("judge", str(dataset), str(run), "--corpus", str(corpus), "--depth", "3", "--model", "m",
                        "--base-url", server.base_url, "-o", str(tmp_path / "judged.qrels"), "--language", "en",
                        "--max-chars", "10")
        assert sorted(server.requests) == ["d5", "d7"]
    assert result.exit_code == 0, result.stderr
    missing, empty, cut, skipped = judge_lines(str(corpus), "--max-chars")
    bar, *lines = result.stderr.split("\n")  # the progress bar, then one line each, in this order
    assert bar.startswith("\rJudging:")
    assert lines == [f"Warning: {missing}", f"Warning: {empty}", f"Note: {cut}", f"Warning: {skipped}", ""]



def _warned(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.message.kind, str(w.message), w.filename) for w in caught
                    if issubclass(w.category, tre.TrecRagEvalWarning)]


@pytest.mark.parametrize("shape", ["path", "dict"])
def test_judge_from_python_warns_the_same_notes(tmp_path, monkeypatch, shape):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _, run, corpus = _judge_files(tmp_path)
    given = corpus if shape == "path" else JUDGE_TEXTS
    with FakeJudge() as server:
        report, warned = _warned(lambda: tre.judge(DATASET, run, given, tmp_path / "py.qrels", model="m", depth=3,
                                                   max_chars=10, base_url=server.base_url, language="en",
                                                   progress=False))
    assert report.written and report.holes == 4
    missing, empty, cut, skipped = judge_lines(str(corpus) if shape == "path" else "the corpus", "max_chars")
    # said of the caller's line, as every other warning of the library
    assert warned == [("warning", missing, __file__), ("warning", empty, __file__), ("note", cut, __file__),
                      ("warning", skipped, __file__)]
    assert [(n.kind, str(n)) for n in report.notes] == [(kind, text) for kind, text, _ in warned]


# --- search --------------------------------------------------------------------------------------------
# q1 returns two chunks of d1 and an id no pattern covers, q2's engine call raises, q3 returns a chunk of d2:
# 4 rows of 4 distinct ids; mapped, q1 keeps d1 (its second chunk merged) and x: 3 rows, x unmapped. After
# mapping 2 of 2 answered queries retrieve a judged document: no warning about the mapping itself.
ENGINE = textwrap.dedent("""
    def search(query, k):
        if query == "boom":
            raise RuntimeError("index offline")
        return {"delta": ["d1#1", "d1#2", "x"], "gamma": ["d2#1"]}[query]
""")
SEARCH_DATASET = [{"id": "q1", "requête": "delta", "pertinents": ["d1"]},
                  {"id": "q2", "requête": "boom", "pertinents": ["c"]},
                  {"id": "q3", "requête": "gamma", "pertinents": ["d2"]}]
PATTERN = r"^(.*)#\d+$"
SEARCH_LINES = [
    f"chunk ids mapped by pattern '{PATTERN}': 4 retrieved chunks -> 3 documents (1 chunks of an already "
    "retrieved document merged, 1 ids unmapped)",
    f"1 of 4 retrieved ids (1 rows) are not covered by pattern '{PATTERN}' and were kept as they are: x (1)",
    "1 query failed (scored 0)",
]


def test_the_search_command_tells_the_mapping_and_the_failed_queries(tmp_path, monkeypatch):
    (tmp_path / "chunk_engine.py").write_text(ENGINE, encoding="utf-8")
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(SEARCH_DATASET, ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = invoke("search", str(dataset), "--engine", "chunk_engine:search", "-m", "RR", "--doc-id-pattern",
                    PATTERN, "--allow-failures")
    assert result.exit_code == 0, result.stderr
    mapped, unmapped, failed = SEARCH_LINES
    # the mapping before the table, the failures after it: each failed query, then their count
    assert result.stderr.splitlines() == [f"Note: {mapped}", f"Warning: {unmapped}",
                                          "  failed: q2 ('boom'): RuntimeError: index offline", f"Warning: {failed}"]


def test_the_harness_warns_the_same_notes_to_python(tmp_path):
    namespace: dict = {}
    exec(ENGINE, namespace)  # the engine of the command above, as a function
    evaluator = tre.Evaluator(namespace["search"], doc_map=PATTERN, progress=False)
    evaluation, warned = _warned(lambda: evaluator.evaluate(SEARCH_DATASET, k_values=[3], measures=["RR"]))
    mapped, unmapped, failed = SEARCH_LINES
    assert warned == [("note", mapped, __file__), ("warning", unmapped, __file__), ("warning", failed, __file__)]
    assert [(n.kind, str(n)) for n in evaluation.notes] == [(kind, text) for kind, text, _ in warned]
    # the values stay on the evaluation when the caller words them itself
    quiet, none = _warned(lambda: evaluator.evaluate(SEARCH_DATASET, k_values=[3], measures=["RR"], warn=False))
    assert none == [] and [str(n) for n in quiet.notes] == SEARCH_LINES
    assert [str(n) for n in quiet.mapping_notes] == [mapped, unmapped] and str(quiet.failures_note) == failed


def test_when_every_engine_call_fails_the_command_still_counts_them_and_python_hears_it_once(tmp_path, monkeypatch):
    (tmp_path / "dead_engine.py").write_text("def search(query, k):\n    raise ConnectionError('index offline')\n",
                                             encoding="utf-8")
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(SEARCH_DATASET, ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = invoke("search", str(dataset), "--engine", "dead_engine:search", "-m", "RR")
    assert result.exit_code == 1
    every = ("every engine call failed (3 of 3 queries), so every score is 0; first error, on 'q1': "
             "ConnectionError: index offline")
    assert result.stderr.splitlines() == [
        f"Warning: {every}", "  failed: q1 ('delta'): ConnectionError: index offline",
        "  failed: q2 ('boom'): ConnectionError: index offline",
        "  failed: q3 ('gamma'): ConnectionError: index offline",
        "Warning: 3 queries failed (scored 0)",
        "Error: 3 of 3 queries failed and were scored 0 (--allow-failures to exit 0 anyway)"]
    namespace: dict = {}
    exec((tmp_path / "dead_engine.py").read_text(encoding="utf-8"), namespace)
    evaluation, warned = _warned(lambda: tre.Evaluator(namespace["search"], progress=False).evaluate(SEARCH_DATASET))
    # "every engine call failed" says more than the count: said once; the count stays among the notes
    assert [text for _, text, _ in warned] == [every] and [str(n) for n in evaluation.notes] == [
        "3 queries failed (scored 0)"]
