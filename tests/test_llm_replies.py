"""What an LLM answers, and what a progress file holds, is data to check, never to trust: a reply that is
not a question is no question, an ambiguous grade is no grade, an empty passage is not graded, and a
progress record off the scale or contradicting another is refused with its file and line.

Oracles are written by hand in each test (the grade or the questions a reply holds, the line refused).
"""

from __future__ import annotations

import json

import pytest
from chat_server import ChatServer, Reply, completion
from conftest import invoke
from test_generate import SETTINGS as GENERATION
from test_judge import DATASET, FAKE_GRADES, RUN, FakeJudge

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.llm.client import MalformedReply, make_client, progress_path_for
from trec_rag_eval.llm.judging import parse_grade
from trec_rag_eval.llm.queries import MAX_QUESTION_CHARS, MAX_REPLY_CHARS, checked_questions, generate_dataset

# --- judge: one grade, or none -------------------------------------------------------------------------


@pytest.mark.parametrize("reply", ["Grade 3, or maybe 1", "3 or 1", "2, no: 3", "Grade: 1\nGrade: 2",
                                   "Between 2 and 3."])
def test_two_different_grades_in_a_reply_are_no_grade(reply):
    # "Grade 3, or maybe 1" was read as 3
    with pytest.raises(MalformedReply, match="ambiguous grade"):
        parse_grade(reply)


@pytest.mark.parametrize("reply, grade", [("Grade: 2. 2 = partly answers the query", 2), ("2 out of 3", 2),
                                          ("Note : 2 sur 3", 2), ("Note : 1/3", 1), ("3 = answers the query", 3)])
def test_one_grade_said_twice_or_over_the_scale_is_that_grade(reply, grade):
    assert parse_grade(reply) == grade


# --- generate-queries: a question holds words, and is text ---------------------------------------------


@pytest.mark.parametrize("reply, reason", [
    ("2", "holds no words"),
    ("1. 2\n2. 3\n3. ?", "holds no words"),
    ("Quelle est la capitale ?\x00", "control character '\\x00'"),
    ("1. Quand ?\n2. Pourquoi \x1b[31m ?", "control character '\\x1b'"),
    ("x" * (MAX_REPLY_CHARS + 1), f"more than the {MAX_REPLY_CHARS}"),
    ("Q" * (MAX_QUESTION_CHARS + 1) + " ?", f"at most {MAX_QUESTION_CHARS}"),
])
def test_a_reply_without_a_question_is_malformed(reply, reason):
    # a bare "2", a reply holding a NUL and a 50 MB reply were kept as questions
    with pytest.raises(MalformedReply) as err:
        checked_questions(reply, 3)
    assert reason in str(err.value)


def test_the_lines_that_are_not_questions_are_left_out_of_a_reply_that_has_some():
    assert checked_questions("1. 2\n2. Quand repiquer les tomates ?\n3. ***\n4. Où ?", 3) == [
        "Quand repiquer les tomates ?", "Où ?"]


class Answering(ChatServer):
    """Answers every document with its scripted reply (the document's text is the key)."""

    def __init__(self, replies: dict[str, str]) -> None:
        super().__init__()
        self.replies = replies
        self.requests: list[str] = []

    def answer(self, prompt: str, reply: Reply) -> None:
        marker = next(key for key in self.replies if key in prompt)
        with self.lock:
            self.requests.append(marker)
        reply.json(200, completion(self.replies[marker], 10, 10))


@pytest.mark.parametrize("bad", ["2", "Une question ?\x00", "y" * (MAX_REPLY_CHARS + 10)])
def test_generate_fails_the_document_whose_reply_holds_no_question(tmp_path, bad):
    corpus = [{"id": "good", "text": "DOC-good Les tomates se repiquent en mai."},
              {"id": "bad", "text": "DOC-bad La Bastille est prise en 1789."}]
    replies = {"DOC-good": "1. Quand repiquer les tomates ?", "DOC-bad": bad}
    output = tmp_path / "g.json"
    with Answering(replies) as server, pytest.warns(Warning):
        report = generate_dataset(corpus, output, GENERATION, make_client(server.base_url, "dummy"),
                                  show_progress=False)
    assert [doc for doc, _ in report.failures] == ["bad"]
    assert "malformed reply" in report.failures[0][1]
    assert not output.exists()
    # the good document is kept for the rerun, the bad one is not
    records = [json.loads(line) for line in progress_path_for(output).read_text().splitlines()]
    assert [r["doc_id"] for r in records] == ["good"]


# --- judge: an empty passage is not graded ------------------------------------------------------------


def test_a_passage_with_an_empty_text_is_not_graded_and_is_named(tmp_path):
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(DATASET), encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text(RUN, encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    texts = {d: f"[{d}] passage {d}" for d in FAKE_GRADES} | {"d5": "", "d8": " \n\t "}
    corpus.write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in texts.items()), encoding="utf-8")
    output = tmp_path / "judged.qrels"
    with FakeJudge() as server:
        result = invoke("judge", str(dataset), str(run), "--corpus", str(corpus), "--depth", "3", "--model", "m",
                        "--base-url", server.base_url, "-o", str(output), "--language", "en")
    assert result.exit_code == 0, result.stderr
    # top 3: q1 d5 d1 d6, q2 d7 d3 d8; d1 and d3 are judged: holes d5 d6 d7 d8, of which d5 and d8 are empty
    assert sorted(server.requests) == ["d6", "d7"]
    assert (f"Warning: 2 unjudged documents have an empty text in {corpus}: not shown to the model, they stay "
            "holes: q1/d5, q2/d8") in result.stderr
    judged = {(line.split()[0], line.split()[2]) for line in output.read_text().splitlines()}
    assert ("q1", "d6") in judged and ("q1", "d5") not in judged and ("q2", "d8") not in judged


# --- progress records ----------------------------------------------------------------------------------


def _judge_record(doc: str, grade: object, query: str = "q1") -> str:
    return json.dumps({"query_id": query, "doc_id": doc, "kind": "hole", "grade": grade, "model": "m",
                       "language": "en", "max_chars": 8000, "prompt_tokens": 1, "completion_tokens": 1}) + "\n"


@pytest.fixture
def judge_files(tmp_path):
    (tmp_path / "dataset.json").write_text(json.dumps(DATASET), encoding="utf-8")
    (tmp_path / "run.txt").write_text(RUN, encoding="utf-8")
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"id": d, "text": f"[{d}] passage {d}"}) + "\n" for d in FAKE_GRADES), encoding="utf-8")
    return tmp_path


def _judge(tmp, server):
    return invoke("judge", str(tmp / "dataset.json"), str(tmp / "run.txt"), "--corpus", str(tmp / "corpus.jsonl"),
                  "--depth", "3", "--model", "m", "--base-url", server.base_url, "-o", str(tmp / "judged.qrels"),
                  "--language", "en")


@pytest.mark.parametrize("records, line, reason", [
    ([_judge_record("d5", 2), _judge_record("d6", 77)], 2, "grade: 77 is not a grade of the 0-3 scale"),
    ([_judge_record("d5", -1)], 1, "grade: -1 is not a grade of the 0-3 scale"),
    ([_judge_record("d5", "3")], 1, "grade: '3' is not a grade of the 0-3 scale"),
    ([_judge_record("d5", True)], 1, "grade: True is not a grade of the 0-3 scale"),
    ([_judge_record("d5", 2.5)], 1, "grade: 2.5 is not a grade of the 0-3 scale"),
    ([_judge_record("d5", 2), _judge_record("d6", 0), _judge_record("d5", 3)], 3,
     "a second record for q1 d5 with another grade (line 1: 2, here: 3): which one is right cannot be known"),
])
def test_a_progress_record_off_the_scale_or_contradicting_another_is_refused_with_its_line(
        judge_files, records, line, reason):
    # a record with "grade": 77 reached the qrels and the sidecar as relevance 77; of two records for one
    # document, the last won silently
    progress = progress_path_for(judge_files / "judged.qrels")
    progress.write_text("".join(records) + _judge_record("d7", 1, "q2"), encoding="utf-8")
    with FakeJudge() as server:
        result = _judge(judge_files, server)
    assert result.exit_code == 1, result.stderr
    assert f"\nError: {progress}:{line}: {reason}" in result.stderr, result.stderr
    assert server.requests == []
    assert not (judge_files / "judged.qrels").exists()


def test_one_grade_recorded_twice_is_one_grade(judge_files):
    progress = progress_path_for(judge_files / "judged.qrels")
    progress.write_text(_judge_record("d5", 2) + _judge_record("d5", 2), encoding="utf-8")
    with FakeJudge() as server:
        result = _judge(judge_files, server)
    assert result.exit_code == 0, result.stderr
    assert sorted(server.requests) == ["d6", "d7", "d8"]  # d5 is done: 2, as recorded (the fake says 2 too)
    assert "q1 0 d5 2" in (judge_files / "judged.qrels").read_text()


def test_a_file_that_is_not_a_progress_file_is_refused_without_advising_to_delete_it(judge_files):
    notes = judge_files / "notes.jsonl"
    notes.write_text('{"id": "d1", "text": "my notes"}\n{"id": "d2", "text": "more"}\n', encoding="utf-8")
    with FakeJudge() as server:
        result = invoke("judge", str(judge_files / "dataset.json"), str(judge_files / "run.txt"), "--corpus",
                        str(judge_files / "corpus.jsonl"), "--model", "m", "--base-url", server.base_url,
                        "-o", str(judge_files / "judged.qrels"), "--progress-file", str(notes))
    assert result.exit_code == 1
    assert f"Error: {notes}:1: not a progress record" in result.stderr, result.stderr
    assert "not a progress file of this command; choose another one" in result.stderr
    assert "delete" not in result.stderr
    assert notes.read_text().startswith('{"id": "d1"')


@pytest.mark.parametrize("questions, reason", [
    (["2"], "questions: not a question: '2' holds no words"),
    (["Une question ?\u0000"], "questions: not a question: it holds the control character '\\x00'"),
    ("Une question ?", "questions: 'Une question ?' is not a list of questions"),
    ([], "questions: [] is not a list of questions"),
])
def test_generate_refuses_a_progress_record_whose_questions_are_not_questions(tmp_path, questions, reason):
    from test_generate import CORPUS

    output = tmp_path / "g.json"
    record = {"doc_id": "d_ok", "questions": questions, "model": "test-model", "n": 3, "language": "fr"}
    progress_path_for(output).write_text(json.dumps(record) + "\n", encoding="utf-8")
    with Answering({}) as server, pytest.raises(InputFormatError) as err:
        generate_dataset(CORPUS, output, GENERATION, make_client(server.base_url, "dummy"), show_progress=False)
    assert str(err.value).startswith(f"{progress_path_for(output)}:1: {reason}")
    assert server.requests == []


def test_a_line_after_a_question_ending_in_a_full_width_mark_is_not_joined_to_it():
    # found by the fuzz test: "1. 什么是向量检索？" then a bare "2." gave "什么是向量检索？ 2."
    assert checked_questions("1. 什么是向量检索？\n2.\n3. What is BM25?", 3) == ["什么是向量检索？", "What is BM25?"]


def test_generate_does_not_ask_about_a_document_with_an_empty_text(tmp_path):
    corpus = [{"id": "good", "text": "DOC-good Les tomates se repiquent en mai."}, {"id": "blank", "text": " \n "}]
    output = tmp_path / "g.json"
    with Answering({"DOC-good": "1. Quand repiquer les tomates ?"}) as server, pytest.warns(
            Warning, match=r"1 of 2 documents have an empty text and were not sent to the model .*: blank"):
        report = generate_dataset(corpus, output, GENERATION, make_client(server.base_url, "dummy"),
                                  show_progress=False)
    assert server.requests == ["DOC-good"] and report.failures == [] and report.empty == ["blank"]
    assert [item["pertinents"] for item in json.loads(output.read_text())] == [["good"]]


def test_generate_refuses_two_records_for_one_document_with_other_questions(tmp_path):
    from test_generate import CORPUS

    output = tmp_path / "g.json"
    record = {"doc_id": "d_ok", "questions": ["Quand ?"], "model": "test-model", "n": 3, "language": "fr"}
    again = {**record, "questions": ["Pourquoi ?"]}
    progress_path_for(output).write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n" + json.dumps(again)
                                         + "\n", encoding="utf-8")
    with Answering({}) as server, pytest.raises(InputFormatError) as err:
        generate_dataset(CORPUS, output, GENERATION, make_client(server.base_url, "dummy"), show_progress=False)
    assert str(err.value).startswith(f"{progress_path_for(output)}:3: a second record for d_ok with another "
                                     "questions (line 1: ['Quand ?'], here: ['Pourquoi ?'])")
    assert server.requests == []
