"""``tre.generate_queries`` and ``tre.judge``: the LLM commands from Python, through the same function the
commands call, against the fake OpenAI-compatible servers of test_generate and test_judge (127.0.0.1)."""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner
from test_generate import CORPUS, ScriptedServer
from test_judge import DATASET, FAKE_GRADES, RUN, FakeJudge

import trec_rag_eval as tre
from trec_rag_eval.cli import main
from trec_rag_eval.cli.generate import generate_queries_command


def test_generate_queries_from_python_writes_what_the_command_writes(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in CORPUS), encoding="utf-8")
    with ScriptedServer({}) as server:
        with pytest.warns(tre.TrecRagEvalWarning, match="reuse on average"):
            # the corpus as a list of dicts, a progress bar off: what a notebook would pass
            report = tre.generate_queries(CORPUS, tmp_path / "py.json", model="test-model", n=3,
                                          base_url=server.base_url, progress=False)
        result = CliRunner().invoke(generate_queries_command, [str(corpus), "-n", "3", "--model", "test-model",
                                                               "--base-url", server.base_url,
                                                               "-o", str(tmp_path / "cli.json")])
    assert result.exit_code == 0, result.output
    assert report.written and not report.failures
    # 4 documents x 3 questions, 2 duplicates across documents removed (see test_generate's ANSWERS)
    assert len(report.dataset) == 10 and report.duplicates_removed == 2
    written = json.loads((tmp_path / "py.json").read_text(encoding="utf-8"))
    assert written == report.dataset == json.loads((tmp_path / "cli.json").read_text(encoding="utf-8"))
    assert report.prompt_tokens == 4 * 40 and report.completion_tokens == 4 * 12  # the server's usage
    # the dataset goes straight into the harness
    engine = tre.Evaluator(lambda query, k: ["d_ok"], progress=False).evaluate(report.dataset, k_values=[1])
    assert engine.summary["P@1"] == pytest.approx(sum(item["pertinents"] == ["d_ok"] for item in written) / 10)


def test_generate_queries_refuses_a_corpus_of_the_wrong_shape(tmp_path):
    with pytest.raises(TypeError, match="corpus must be a JSONL path"):
        tre.generate_queries(42, tmp_path / "out.json", model="m", base_url="http://127.0.0.1:9/v1")


def test_judge_from_python_writes_what_the_command_writes(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    run = tmp_path / "run.txt"
    run.write_text(RUN, encoding="utf-8")
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(DATASET), encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "text": f"[{d}] passage {d}"}) + "\n" for d in FAKE_GRADES),
                      encoding="utf-8")
    with FakeJudge() as server:
        # in memory: the dataset's rows, the run as a path, the corpus as {doc_id: text}
        report = tre.judge(DATASET, str(run), {d: f"[{d}] passage {d}" for d in FAKE_GRADES}, tmp_path / "py.qrels",
                           model="judge-model", base_url=server.base_url, depth=3, language="en", progress=False)
        with pytest.raises(SystemExit) as exit_:
            main(["judge", str(dataset), str(run), "--corpus", str(corpus), "--depth", "3", "--model", "judge-model",
                  "--base-url", server.base_url, "-o", str(tmp_path / "cli.qrels"), "--language", "en"])
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, err
    assert report.written and not report.failures
    # the top 3 of q1 (d5 d1 d6) and q2 (d7 d3 d8) hold 4 holes, graded as the fake model grades them
    assert report.holes == 4 and report.grade_counts("hole") == {0: 1, 1: 1, 2: 1, 3: 1}
    assert (tmp_path / "py.qrels").read_text() == (tmp_path / "cli.qrels").read_text()
    # Judged@3: 1 of 3 judged in each query before, all 3 after
    assert report.coverage == [(str(run), pytest.approx(1 / 3), 1.0)]
    assert f"Judged@3 of {run}: 0.3333 before, 1.0000 after" in out
    # the filled judgments evaluate at once; the humans' only, as the command's --judgments human
    human = tre.evaluate(tmp_path / "py.qrels", run, "Judged@3", judgments="human")
    assert human.summary["Judged@3"] == pytest.approx(1 / 3)
    assert tre.evaluate(report.qrels, run, "Judged@3").summary["Judged@3"] == 1.0


def test_judge_from_python_warns_its_notes(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chunks = {"q1": {"d5#1": 3.0, "d1#2": 2.0}, "q2": {"d7#1": 3.0, "d3#4": 2.0}}
    with FakeJudge() as server, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = tre.judge(DATASET, {"chunks": chunks}, {d: f"[{d}] passage {d}" for d in FAKE_GRADES},
                           tmp_path / "out.qrels", model="judge-model", base_url=server.base_url, depth=2,
                           language="en", doc_map=r"^(.*)#\d+$", progress=False)
    notes = [str(w.message) for w in caught if issubclass(w.category, tre.TrecRagEvalWarning)]
    assert any(note.startswith("chunks: ") and "4 retrieved chunks -> 4 documents" in note for note in notes), notes
    # pooled as documents: d5 and d7 are the holes of the top 2
    assert report.holes == 2 and report.coverage == [("chunks", 0.5, 1.0)]


def test_the_facade_exports_them():
    assert "generate_queries" in tre.__all__ and "judge" in tre.__all__
    assert tre.generate_queries.__module__ == tre.judge.__module__ == "trec_rag_eval.api.llm_and_search"
