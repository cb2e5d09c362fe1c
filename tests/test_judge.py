"""LLM judgments for holes, against a real chat-completions server on 127.0.0.1 (no mocked client)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chat_server import ChatServer, Reply, completion

from trec_rag_eval.cli import main
from trec_rag_eval.io.judgments import read_llm_judgments, select_judgments, sidecar_path_for
from trec_rag_eval.io.loading import load_qrels, load_run
from trec_rag_eval.llm.client import MalformedReply, make_client, progress_path_for
from trec_rag_eval.llm.judging import (
    JudgeSettings,
    agreement,
    build_judge_prompt,
    judge_holes,
    parse_grade,
)

ROOT = Path(__file__).resolve().parent.parent

# What the fake model answers for each document, whatever the query.
FAKE_GRADES = {"d1": 3, "d2": 1, "d3": 2, "d4": 0, "d5": 2, "d6": 0, "d7": 3, "d8": 1}
DATASET = [
    {"id": "q1", "query": "how to install python", "relevant": ["d1"], "non_relevant": ["d2"]},
    {"id": "q2", "query": "how to make compost", "relevant": ["d3"], "non_relevant": ["d4"]},
]
# q1 ranks d5 d1 d6 d2, q2 ranks d7 d3 d8 d4 (scores decreasing)
RUN = "".join(f"{q} Q0 {d} {r} {10 - r} bm25\n" for q, docs in
              (("q1", ["d5", "d1", "d6", "d2"]), ("q2", ["d7", "d3", "d8", "d4"])) for r, d in enumerate(docs, 1))


class FakeJudge(ChatServer):
    """A chat-completions endpoint grading each passage by its ``[dN]`` marker.

    ``scripts[doc]`` lists the first replies for that document: "429" (rate limited, Retry-After: 2),
    "malformed" (a reply with no grade in it), "hang" (no reply for 30 s). Then it answers.
    """

    def __init__(self, scripts: dict[str, list[str]] | None = None) -> None:
        super().__init__()
        self.scripts = {doc: list(steps) for doc, steps in (scripts or {}).items()}
        self.requests: list[str] = []
        self.prompts: list[str] = []

    def answer(self, prompt: str, reply: Reply) -> None:
        doc = re.search(r"\[(d\d+)\]", prompt).group(1)
        with self.lock:
            self.requests.append(doc)
            self.prompts.append(prompt)
            steps = self.scripts.get(doc, [])
            step = steps.pop(0) if steps else "answer"
        if step == "429":
            reply.json(429, {"error": {"message": "rate limited"}}, {"Retry-After": "2"})
        elif step == "malformed":
            reply.json(200, completion("I would rather not say.", 50, 1))
        elif step == "hang":
            time.sleep(30)
        else:
            reply.json(200, completion(f"Grade: {FAKE_GRADES[doc]}", 50, 1))


@pytest.fixture
def files(tmp_path):
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(DATASET), encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text(RUN, encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "text": f"[{d}] passage {d}"}) + "\n" for d in FAKE_GRADES),
                      encoding="utf-8")
    return dataset, run, corpus


SETTINGS = JudgeSettings(model="judge-model", language="en", depth=3, calibrate=2, concurrency=2, timeout=5,
                         max_retries=2, backoff=0.1)


def test_the_prompt_states_the_scale_in_french_and_english():
    english = build_judge_prompt("QUERY", "PASSAGE", "en")
    assert "Query: QUERY" in english and "PASSAGE" in english
    for line in ("0 = unrelated to the query", "1 = related to the query, but does not answer it",
                 "2 = partly answers the query", "3 = answers the query"):
        assert line in english
    french = build_judge_prompt("REQUÊTE", "PASSAGE", "fr")
    assert "Requête : REQUÊTE" in french and "3 = répond à la requête" in french


@pytest.mark.parametrize("reply, grade", [("2", 2), ("Grade: 3", 3), ("**0**", 0), ("Note : 1/3", 1)])
def test_a_grade_is_the_first_number_of_the_reply(reply, grade):
    assert parse_grade(reply) == grade


@pytest.mark.parametrize("reply, grade", [
    ("<think>The passage lists 3 steps but not the one asked.</think>\n2", 2),  # a reasoning model's trace
    ("<think>\n0 would be too harsh\n</think>\n\nGrade: 1", 1),
    ("On the 0-3 scale: 2", 2), ("Grade (0–3): 1", 1), ("Note (de 0 à 3) : 3", 3), ("from 0 to 3, 2", 2)])
def test_the_scale_and_a_reasoning_trace_are_not_the_grade(reply, grade):
    # the first number of each reply is 3, 0 or 0, which the model did not give as its grade
    assert parse_grade(reply) == grade


@pytest.mark.parametrize("reply", ["I would rather not say.", "5", "2.5", "-1"])
def test_a_reply_without_a_0_to_3_grade_is_malformed(reply):
    with pytest.raises(MalformedReply):
        parse_grade(reply)


def test_agreement_is_cohens_kappa_computed_by_hand():
    # human (1, 0, 1, 0) vs model (3, 1, 2, 0): binary (>= 1) human 1 0 1 0, model 1 1 1 0.
    # observed 3/4; chance: 0.5 * 0.75 + 0.5 * 0.25 = 0.5; kappa = (0.75 - 0.5) / 0.5 = 0.5.
    # linear weights |i - j| / 3: observed disagreement (2 + 1 + 1 + 0) / 3 / 4 = 1/3; chance: human
    # half 0, half 1, model uniform on 0-3: 0.5 * (0+1+2+3)/12 + 0.5 * (1+0+1+2)/12 = 5/12;
    # kappa = 1 - (1/3) / (5/12) = 0.2
    result = agreement([1, 0, 1, 0], [3, 1, 2, 0], relevance_level=1)
    assert result.kappa_binary == pytest.approx(0.5)
    assert result.kappa_graded == pytest.approx(0.2)
    assert result.confusion == ((1, 1, 0, 0), (0, 0, 1, 1), (0, 0, 0, 0), (0, 0, 0, 0))
    assert (result.binary_agreement, result.raw_agreement) == (0.75, 0.25)
    assert agreement([1, 1], [1, 1]).kappa_binary is None   # one label only: undefined


def test_holes_are_graded_with_retries_a_malformed_reply_fails_and_a_rerun_finishes(files, tmp_path):
    dataset, run_path, corpus = files
    qrels = load_qrels(dataset)
    run = load_run(run_path)
    texts = {d: f"[{d}] passage {d}" for d in FAKE_GRADES}
    output = tmp_path / "judged.qrels"
    waits: list[float] = []
    with FakeJudge({"d6": ["malformed"], "d7": ["429"]}) as server:
        client = make_client(server.base_url, api_key="dummy")
        first = judge_holes(qrels, [run], texts, output, SETTINGS, client, sleep=waits.append)
        # pool (top 3): q1 d5 d1 d6, q2 d7 d3 d8; holes d5 d6 d7 d8; calibration: every judged doc
        # (2 per query). d6: a reply without a grade, not retried; d7: 429 then its grade.
        assert sorted(server.requests) == ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d7", "d8"]
        assert [(q, d) for q, d, _ in first.failures] == [("q1", "d6")]
        assert first.failures[0][2].startswith("malformed reply: no grade in 'I would rather not say.'")
        assert waits == [2.0]                                   # Retry-After
        assert (first.requests, first.retries, first.asked) == (9, 1, 8)
        assert (first.prompt_tokens, first.completion_tokens) == (7 * 50, 7)
        assert (first.pooled, first.holes) == (6, 4)
        assert not first.written and not output.exists() and not sidecar_path_for(output).exists()

        server.requests.clear()
        second = judge_holes(qrels, [run], texts, output, SETTINGS, client, sleep=waits.append)
        assert server.requests == ["d6"]
        assert second.written and (second.resumed, second.graded_now) == (7, 1)
        assert not progress_path_for(output).exists()          # done with once the outputs are written

    # human judgments as they were, holes with the fake's grades
    lines = sorted(output.read_text(encoding="utf-8").splitlines())
    assert lines == ["q1 0 d1 1", "q1 0 d2 0", "q1 0 d5 2", "q1 0 d6 0",
                     "q2 0 d3 1", "q2 0 d4 0", "q2 0 d7 3", "q2 0 d8 1"]
    llm = {(j.query_id, j.doc_id): (j.grade, j.kind) for j in read_llm_judgments(sidecar_path_for(output))}
    assert llm == {("q1", "d5"): (2, "hole"), ("q1", "d6"): (0, "hole"), ("q2", "d7"): (3, "hole"),
                   ("q2", "d8"): (1, "hole"), ("q1", "d1"): (3, "calibration"), ("q1", "d2"): (1, "calibration"),
                   ("q2", "d3"): (2, "calibration"), ("q2", "d4"): (0, "calibration")}
    # human (d1 1, d2 0, d3 1, d4 0) against the fake (3, 1, 2, 0): see the hand computation above
    assert second.agreement.kappa_binary == pytest.approx(0.5)
    assert second.agreement.kappa_graded == pytest.approx(0.2)


def test_human_llm_and_both_evaluations_differ_as_the_fake_grades_imply(files, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    dataset, run, corpus = files
    output = tmp_path / "judged.qrels"
    with FakeJudge() as server:
        args = ["judge", str(dataset), str(run), "--corpus", str(corpus), "--depth", "3", "--model", "judge-model",
                "--base-url", server.base_url, "-o", str(output), "--language", "en", "--calibrate", "2"]
        with pytest.raises(SystemExit) as exit_:
            main(args)
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, err
    assert "Grades of the holes: 0: 1, 1: 1, 2: 1, 3: 1" in out
    # one bar, started once the number of documents to ask is known (no empty "Judging: 0doc" bar first)
    # (4 holes + 2 calibration documents for each of the 2 queries = 8)
    assert "Judging: 0doc" not in err and re.search(r"Judging: 100%\S* 8/8", err), err
    assert "binary (relevant = grade >= 1): Cohen's kappa 0.500, same verdict 75%" in out
    assert "graded (linear weights): Cohen's kappa 0.200, same grade 25%" in out
    # before: q1 and q2 each have 1 judged document in their top 3; after: all 3
    assert f"Judged@3 of {run}: 0.3333 before, 1.0000 after" in out

    def evaluate(*options: str) -> dict[str, str]:
        with pytest.raises(SystemExit) as exit_:
            main(["evaluate", "-m", "P@4", "-m", "Judged@4", "--format", "csv", *options, str(output), str(run)])
        out, err = capsys.readouterr()
        assert exit_.value.code == 0, err
        return {row.split(",")[2]: row.split(",")[3] for row in out.splitlines()[1:] if ",all," in row}

    # q1 ranks d5 d1 d6 d2, q2 ranks d7 d3 d8 d4. Relevant = grade >= 1.
    # human: q1 {d1}, q2 {d3} -> P@4 = (1/4 + 1/4) / 2; judged: 2 of 4 each
    assert evaluate("--judgments", "human") == {"P@4": "0.25", "Judged@4": "0.5"}
    # both: q1 d5=2 d1=1 d6=0 d2=0 -> 2/4; q2 d7=3 d3=1 d8=1 d4=0 -> 3/4; all judged
    assert evaluate("--judgments", "both") == {"P@4": "0.625", "Judged@4": "1.0"}
    # llm: q1 d5=2 d1=3 d6=0 d2=1 -> 3/4; q2 d7=3 d3=2 d8=1 d4=0 -> 3/4
    assert evaluate("--judgments", "llm") == {"P@4": "0.75", "Judged@4": "1.0"}
    assert evaluate() == {"P@4": "0.625", "Judged@4": "1.0"}     # both, by default

    # compare and report take the same choice: with the LLM's judgments, P@4 is 0.75 as above
    with pytest.raises(SystemExit) as exit_:
        main(["compare", "-m", "P@4", "--judgments", "llm", "-f", "csv", str(output), str(run), str(run)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, err
    assert "Note: judgments: llm: the LLM's 8 judgments only" in err
    assert "0.75" in out

    # the default table adds Judged@10 when LLM judgments are in play
    with pytest.raises(SystemExit):
        main(["evaluate", str(output), str(run)])
    out, err = capsys.readouterr()
    # its @10 column: q1 and q2 retrieve 4 documents each, all judged now
    assert re.search(r"^Judged +1\.0000$", out, re.MULTILINE), out
    assert "Note: judgments: both: human judgments and 4 holes filled by the LLM" in err


def test_the_human_view_drops_exactly_the_filled_holes(files, tmp_path):
    dataset, _, _ = files
    qrels = load_qrels(dataset)
    human = select_judgments(qrels, [], "human")
    assert human.to_dict() == qrels.to_dict()
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--judgments", "llm", str(dataset), str(files[1])])
    assert exit_.value.code == 2


def test_a_killed_run_resumes_where_it_stopped(files, tmp_path):
    dataset, run, corpus = files
    output = tmp_path / "judged.qrels"
    progress = progress_path_for(output)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENAI_API_KEY", None)
    # one request at a time, in pool order: d5, d6, d7 answer, d8 hangs; the process is killed then
    with FakeJudge({"d8": ["hang"]}) as server:
        args = [sys.executable, "-m", "trec_rag_eval", "judge", str(dataset), str(run), "--corpus", str(corpus),
                "--depth", "3", "--model", "judge-model", "--base-url", server.base_url, "-o", str(output),
                "--concurrency", "1", "--timeout", "60"]
        process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 300  # a bound for a loaded machine, not a delay
            while time.monotonic() < deadline:
                if progress.exists() and len(progress.read_text(encoding="utf-8").splitlines()) == 3:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the judge never wrote three grades")
            while "d8" not in server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            process.kill()
            process.wait()
        assert process.returncode != 0
        assert not output.exists()
        server.requests.clear()
        with pytest.raises(SystemExit) as exit_:
            main(args[3:])
        assert exit_.value.code == 0
        assert server.requests == ["d8"]                   # d5, d6, d7 came from the progress file
    assert sorted(output.read_text(encoding="utf-8").splitlines()) == [
        "q1 0 d1 1", "q1 0 d2 0", "q1 0 d5 2", "q1 0 d6 0", "q2 0 d3 1", "q2 0 d4 0", "q2 0 d7 3", "q2 0 d8 1"]


def test_a_chunk_run_is_pooled_as_its_documents(files, tmp_path, capsys):
    dataset, _, corpus = files
    # the run of test_human_llm_and_both...: each document retrieved through two chunks in a row
    chunks = tmp_path / "chunks.txt"
    rows = [line.split() for line in RUN.splitlines()]
    chunks.write_text("".join(f"{q} Q0 {d}#{n} 0 {float(s) + 0.5 - n / 10} c\n" for q, _, d, _, s, _ in rows
                              for n in (1, 2)), encoding="utf-8")
    output = tmp_path / "judged.qrels"
    with FakeJudge() as server:
        with pytest.raises(SystemExit) as exit_:
            main(["judge", str(dataset), str(chunks), "--corpus", str(corpus), "--depth", "3", "--model", "m",
                  "--base-url", server.base_url, "-o", str(output), "--doc-id-pattern", r"^(.*)#\d+$"])
        assert sorted(server.requests) == ["d5", "d6", "d7", "d8"]   # the holes of the top 3 documents
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, err
    assert "16 retrieved chunks -> 8 documents" in err
    assert sorted(output.read_text(encoding="utf-8").splitlines()) == [
        "q1 0 d1 1", "q1 0 d2 0", "q1 0 d5 2", "q1 0 d6 0", "q2 0 d3 1", "q2 0 d4 0", "q2 0 d7 3", "q2 0 d8 1"]


def test_judging_an_earlier_output_again_asks_only_the_new_holes_and_keeps_provenance(files, tmp_path, capsys):
    dataset, run, corpus = files
    first, second = tmp_path / "judged.qrels", tmp_path / "judged2.qrels"
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\thow to install python\nq2\thow to make compost\n", encoding="utf-8")
    common = ["--corpus", str(corpus), "--model", "judge-model", "--language", "en"]
    with FakeJudge() as server:
        with pytest.raises(SystemExit):
            main(["judge", str(dataset), str(run), "--depth", "2", "--base-url", server.base_url, "-o", str(first),
                  *common])
        assert sorted(server.requests) == ["d5", "d7"]          # the holes of the top 2
        server.requests.clear()
        with pytest.raises(SystemExit) as exit_:
            main(["judge", str(first), str(run), "--topics", str(topics), "--depth", "3", "--calibrate", "2",
                  "--base-url", server.base_url, "-o", str(second), *common])
        # the new holes d6 and d8, and the human judgments for calibration (d5 and d7 are not human)
        assert sorted(server.requests) == ["d1", "d2", "d3", "d4", "d6", "d8"]
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, err
    assert "its 2 LLM judgments" in err
    kinds = {(j.doc_id, j.kind) for j in read_llm_judgments(sidecar_path_for(second))}
    assert kinds == {("d5", "hole"), ("d7", "hole"), ("d6", "hole"), ("d8", "hole"), ("d1", "calibration"),
                     ("d2", "calibration"), ("d3", "calibration"), ("d4", "calibration")}
    assert sorted(second.read_text(encoding="utf-8").splitlines()) == [
        "q1 0 d1 1", "q1 0 d2 0", "q1 0 d5 2", "q1 0 d6 0", "q2 0 d3 1", "q2 0 d4 0", "q2 0 d7 3", "q2 0 d8 1"]
    # human again: both earlier and new holes are dropped
    with pytest.raises(SystemExit):
        main(["evaluate", "-m", "Judged@4", "--format", "csv", "--judgments", "human", str(second), str(run)])
    assert "all,Judged@4,0.5" in capsys.readouterr().out


def test_a_json_output_keeps_the_query_texts_and_evaluates_as_the_trec_one(files, tmp_path, capsys):
    dataset, run, corpus = files
    output = tmp_path / "judged.json"
    with FakeJudge() as server:
        with pytest.raises(SystemExit) as exit_:
            main(["judge", str(dataset), str(run), "--corpus", str(corpus), "--depth", "3", "--model", "judge-model",
                  "--base-url", server.base_url, "-o", str(output), "--language", "en"])
    assert exit_.value.code == 0, capsys.readouterr().err
    items = json.loads(output.read_text(encoding="utf-8"))
    assert items[0] == {"id": "q1", "query": "how to install python", "relevant": {"d1": 1, "d5": 2},
                        "non_relevant": {"d2": 0, "d6": 0}}
    capsys.readouterr()
    for which, expected in (("human", "0.25"), ("both", "0.625")):   # as with the TREC output above
        with pytest.raises(SystemExit):
            main(["evaluate", "-m", "P@4", "--format", "csv", "--judgments", which, str(output), str(run)])
        assert f"all,P@4,{expected}" in capsys.readouterr().out


def test_long_passages_are_cut_for_the_model_and_counted(files, tmp_path):
    dataset, run_path, _ = files
    texts = {d: f"[{d}] " + "mot " * 50 for d in FAKE_GRADES}      # 5 + 200 characters each
    settings = JudgeSettings(model="judge-model", language="en", depth=3, max_chars=20, max_retries=0)
    with FakeJudge() as server:
        report = judge_holes(load_qrels(dataset), [load_run(run_path)], texts, tmp_path / "j.qrels", settings,
                             make_client(server.base_url, api_key="dummy"))
        prompt = server.prompts[0]
    assert report.truncated == ["d5", "d6", "d7", "d8"]
    passage = prompt.split("Passage:\n", 1)[1].split("\n\n", 1)[0]
    doc = re.search(r"\[(d\d+)\]", passage).group(1)
    assert passage == texts[doc][:20] + " [...]"


class Refusing(ChatServer):
    """Refuses every request as a server does for a wrong key (401) or an unknown model (404)."""

    def __init__(self, status: int) -> None:
        super().__init__()
        self.status = status
        self.requests = 0

    def answer(self, prompt: str, reply: Reply) -> None:
        with self.lock:
            self.requests += 1
        time.sleep(0.05)
        reply.json(self.status, {"error": {"message": "no such model" if self.status == 404 else "bad key"}})


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_refusing_endpoint_stops_at_once_instead_of_asking_about_every_document(tmp_path, capsys, status):
    # 40 holes for q1: without stopping, each is asked and fails alike, one "failed:" line each
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(DATASET[:1]), encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q1 Q0 h{n} {n + 1} {100 - n} bm25\n" for n in range(40)), encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"h{n}", "text": f"passage {n}"}) + "\n" for n in range(40)),
                      encoding="utf-8")
    with Refusing(status) as server:
        with pytest.raises(SystemExit) as exit_:
            main(["judge", str(dataset), str(run), "--corpus", str(corpus), "--depth", "40", "--model", "judge-model",
                  "--base-url", server.base_url, "-o", str(tmp_path / "judged.qrels"), "--concurrency", "2"])
    _, err = capsys.readouterr()
    assert exit_.value.code != 0
    assert server.requests < 10, server.requests
    assert f"Error: the endpoint refuses every request: HTTP {status}" in err
    assert "failed:" not in err
    assert not (tmp_path / "judged.qrels").exists()


def test_a_sidecar_that_does_not_match_its_qrels_is_refused(tmp_path, capsys):
    """The sidecar says which lines of the qrels the LLM wrote. Once the qrels are edited (a human
    judges a hole: d2 graded 0 instead of the LLM's 2) or the sidecar comes from another judging,
    --judgments human would drop a human judgment and llm would score grades the file no longer
    holds, in silence: refused, naming the sidecar's line."""
    qrels = tmp_path / "judged.qrels"
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n", encoding="utf-8")
    header = "query_id\tdoc_id\tgrade\tkind\tmodel\n"
    cases = [("q1 0 d1 1\nq1 0 d2 0\n", header + "q1\td2\t2\thole\tm\n", "the qrels give it 0"),
             ("q1 0 d1 1\n", header + "q1\td1\t1\tcalibration\tm\nq1\td3\t2\thole\tm\n", "the qrels do not judge it")]
    for lines, sidecar, why in cases:
        qrels.write_text(lines, encoding="utf-8")
        sidecar_path_for(qrels).write_text(sidecar, encoding="utf-8")
        line = len(sidecar.splitlines())
        for which in ("human", "llm", "both"):
            with pytest.raises(SystemExit) as exit_:
                main(["evaluate", "--judgments", which, str(qrels), str(run)])
            _, err = capsys.readouterr()
            assert exit_.value.code == 1
            assert err.startswith(f"Error: {sidecar_path_for(qrels)}:{line}: the LLM judgment of q1 "), err
            assert why in err


def test_python_evaluate_and_compare_choose_judgments_as_the_command_does(tmp_path):
    """``judgments=`` from Python gives the views ``--judgments`` gives, on a judged file written by hand."""
    import trec_rag_eval as tre
    from trec_rag_eval.errors import UsageError

    qrels = tmp_path / "judged.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d5 2\n")  # d5: a hole the LLM filled with grade 2
    (tmp_path / "judged.qrels.llm.tsv").write_text(
        "query_id\tdoc_id\tgrade\tkind\tmodel\nq1\td5\t2\thole\tm\nq1\td2\t3\tcalibration\tm\n")
    run = {"q1": {"d5": 3.0, "d1": 2.0, "d2": 1.0}}
    # both (the file as it is): d5=2 d1=1 d2=0 -> P@3 = 2/3, all three judged
    # human (the hole dropped): d5 unjudged, d1=1, d2=0 -> P@3 = 1/3, Judged@3 = 2/3
    # llm (the LLM's grades only): d5=2, d1 unjudged, d2=3 -> P@3 = 2/3, Judged@3 = 2/3
    expected = {None: (2 / 3, 1.0), "both": (2 / 3, 1.0), "human": (1 / 3, 2 / 3), "llm": (2 / 3, 2 / 3)}
    for which, (precision, judged) in expected.items():
        summary = tre.evaluate(str(qrels), run, ["P@3", "Judged@3"], judgments=which).summary
        assert summary["P@3"] == pytest.approx(precision) and summary["Judged@3"] == pytest.approx(judged), which
    comparison = tre.compare(str(qrels), {"a": run, "b": run}, "P@3", primary=False, judgments="human")
    assert comparison.per_query["a"]["q1"]["P@3"] == pytest.approx(1 / 3)
    with pytest.raises(UsageError, match="give the qrels as that file's path"):
        tre.evaluate({"q1": {"d1": 1}}, run, "P@3", judgments="human")
    plain = tmp_path / "plain.qrels"
    plain.write_text("q1 0 d1 1\n")
    with pytest.raises(UsageError, match="no LLM judgments beside it"):
        tre.evaluate(str(plain), run, "P@3", judgments="llm")


def test_judge_on_a_full_disk_is_one_error_line(files, tmp_path):
    """Its closing summary went through click.echo: at '> /dev/full', an OSError traceback."""
    dataset, run, corpus = files
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENAI_API_KEY", None)
    with FakeJudge() as server, open("/dev/full", "w") as full:
        args = [sys.executable, "-m", "trec_rag_eval", "judge", str(dataset), str(run), "--corpus", str(corpus),
                "--depth", "3", "--model", "judge-model", "--base-url", server.base_url,
                "-o", str(tmp_path / "judged.qrels")]
        done = subprocess.run(args, env=env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith("Error: cannot write standard output: No space left on device\n"), done.stderr
    assert "Traceback" not in done.stderr
