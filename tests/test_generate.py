"""LLM query generation, against a real chat-completions server on 127.0.0.1 (no mocked client)."""

from __future__ import annotations

import dataclasses
import json
import threading
import time

import pytest
from chat_server import ChatServer, Reply, completion
from click.testing import CliRunner

from trec_rag_eval.cli.generate import generate_queries_command
from trec_rag_eval.errors import TrecRagEvalWarning, UsageError
from trec_rag_eval.llm.queries import (
    GenerationFailure,
    GenerationSettings,
    build_prompt,
    generate_dataset,
    lexical_overlap,
    make_client,
    normalise_question,
    parse_questions,
    progress_path_for,
    retry_delay,
)

# Each document's text names the behaviour the server scripts for it.
CORPUS = [
    {"id": "d_ok", "text": "MARKER-ok Repiquer les tomates en mai, dans un sol riche."},
    {"id": "d_busy", "text": "MARKER-busy Le compost alterne matières vertes et brunes."},
    {"id": "d_bad", "text": "MARKER-bad La Bastille est prise le 14 juillet 1789."},
    {"id": "d_slow", "text": "MARKER-slow Le Livret A est un placement sans risque."},
]
ANSWERS = {
    "ok": "1. Quand repiquer les tomates ?\n2. Quel sol pour les tomates ?\n3. Quand repiquer les tomates?",
    "busy": "- Que mettre dans le compost ?\n- Quand repiquer les TOMATES ?\n"
            "- Qu'est-ce qu'une matière brune ?",
    "bad": "1. Quand la Bastille est-elle prise ?\n2. Que se passe-t-il le 14 juillet 1789 ?\n"
           "3. Qui prend la Bastille ?",
    "slow": "1. Le Livret A est-il risqué ?\n2. Qu'est-ce que le Livret A ?\n3. Où placer son épargne ?",
    # as real models answer: an intro line, a blank line, the list, a closing remark
    "chatty": "Voici trois questions auxquelles ce document répond :\n\n1. Qu'est-ce que le marker {doc} ?\n"
              "2. Pourquoi le marker {doc} compte-t-il ?\n3. Où trouver le marker {doc} ?\n\n"
              "N'hésitez pas si vous voulez d'autres questions !",
    "short": "1. Une seule question sur le document {doc} ?",
}


class ScriptedServer(ChatServer):
    """A chat-completions endpoint whose first replies per marker are scripted.

    Scripts: "429" (rate limited, Retry-After: 3), "garbage" (HTTP 200, body not JSON),
    "slow" (no reply until the server stops: the client's timeout decides, whatever the machine's load).
    When a marker's script is used up, it answers.
    """

    def __init__(self, scripts: dict[str, list[str]]) -> None:
        super().__init__()
        self.scripts = {marker: list(steps) for marker, steps in scripts.items()}
        self.requests: list[str] = []
        self.stopping = threading.Event()

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        super().__exit__(*exc)

    def answer(self, prompt: str, reply: Reply) -> None:
        marker = prompt.split("MARKER-")[1].split()[0]
        with self.lock:
            self.requests.append(marker)
            steps = self.scripts.get(marker, [])
            step = steps.pop(0) if steps else "answer"
        doc = prompt.split("MARKER-")[1].split()[1] if marker in ("chatty", "short") else ""
        if step == "429":
            reply.json(429, {"error": {"message": "rate limited"}}, {"Retry-After": "3"})
        elif step == "garbage":
            reply.raw(200, b"<html>upstream proxy error</html>")
        elif step == "slow":
            self.stopping.wait(300)  # past any client's timeout; a bound, so that no thread outlives the test
            reply.json(200, _completion(ANSWERS[marker]))
        else:
            reply.json(200, _completion(ANSWERS[marker].format(doc=doc)))


def _completion(content: str) -> dict:
    return completion(content, prompt_tokens=40, completion_tokens=12)


# 5 s: far above a reply of this process's server, even on a loaded machine, so that only a scripted
# "slow" reply times out
SETTINGS = GenerationSettings(model="test-model", n=3, concurrency=2, timeout=5, max_retries=1,
                              backoff=0.25)


def test_prompt_is_the_seed_prompt():
    assert build_prompt("DOC", 3) == (
        "Voici un document :\n\nDOC\n\nGénère 3 questions auxquelles ce document répond. "
        "Retourne uniquement les questions, une par ligne."
    )
    assert "Write 2 questions that this document answers." in build_prompt("DOC", 2, "en")


def test_parse_questions_strips_list_markers_and_keeps_n():
    content = "1. Première ?\n\n2) Deuxième ?\n- Troisième ?\n• Quatrième ?"
    assert parse_questions(content, 3) == ["Première ?", "Deuxième ?", "Troisième ?"]


def test_normalised_questions_ignore_case_accents_and_punctuation():
    shouted, plain = "Quand repiquer les TOMATES ?", "quand  repiquer les tomates?"
    assert normalise_question(shouted) == normalise_question(plain)
    assert normalise_question("Où est-ce ?") == "ou est ce"


def test_lexical_overlap_is_the_share_of_question_content_words_in_the_document():
    # Content words of the question: {planter, tomates} ("quand", "les" are stop words).
    # The document's tokens include "tomates" but not "planter" ("plantent" differs): 1 of 2.
    assert lexical_overlap("Quand planter les tomates ?", "Les tomates se plantent en mai.") == 0.5
    assert lexical_overlap("Quand et où ?", "Un document.") is None


def test_retry_delay_prefers_retry_after_then_backs_off_exponentially():
    assert retry_delay({"retry-after": "3"}, attempt=0, backoff=0.25) == 3.0
    assert retry_delay({"retry-after-ms": "1500", "retry-after": "9"}, attempt=0, backoff=0.25) == 1.5
    assert retry_delay({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, attempt=0, backoff=0.25) == 0.0
    assert [retry_delay({}, attempt, 0.25) for attempt in range(4)] == [0.25, 0.5, 1.0, 2.0]
    assert retry_delay(None, attempt=30, backoff=1.0) == 60.0


def test_429_malformed_and_timeout_then_a_rerun_finishes(tmp_path):
    output = tmp_path / "dataset.json"
    scripts = {"busy": ["429"], "bad": ["garbage"], "slow": ["slow", "slow"]}
    waits: list[float] = []
    with ScriptedServer(scripts) as server:
        client = make_client(server.base_url, api_key="dummy")
        settings = dataclasses.replace(SETTINGS, timeout=2.0)  # d_slow waits out the timeout twice: 4 s
        first = generate_dataset(CORPUS, output, settings, client, sleep=waits.append)

        # d_busy: a 429 with Retry-After: 3, then success. d_bad: a 200 whose body is not JSON,
        # not retried. d_slow: no reply within the 2 s timeout, twice (1 retry allowed).
        failures = dict(first.failures)
        assert sorted(failures) == ["d_bad", "d_slow"]
        assert failures["d_bad"].startswith("malformed reply")
        assert failures["d_slow"] == "no reply within 2 s, gave up after 2 attempts"
        assert sorted(waits) == [0.25, 3.0]   # backoff 0.25 * 2**0 after the timeout; Retry-After after 429
        assert sorted(server.requests) == ["bad", "busy", "busy", "ok", "slow", "slow"]
        assert (first.requests, first.retries) == (6, 2)
        assert (first.prompt_tokens, first.completion_tokens) == (80, 24)   # two successful replies
        assert not first.written and not output.exists()
        lines = progress_path_for(output).read_text(encoding="utf-8").splitlines()
        saved = [json.loads(line) for line in lines]
        assert sorted(record["doc_id"] for record in saved) == ["d_busy", "d_ok"]

        # The rerun asks only for the two missing documents.
        server.requests.clear()
        second = generate_dataset(CORPUS, output, settings, client, sleep=waits.append)
        assert sorted(server.requests) == ["bad", "slow"]
        assert second.failures == [] and second.written
        assert (second.resumed_documents, second.generated_documents) == (2, 2)

    dataset = json.loads(output.read_text(encoding="utf-8"))
    ids = [item["id"] for item in dataset]
    # d_ok's 3rd question and d_busy's 2nd repeat d_ok's 1st once normalised: both dropped.
    assert second.duplicates_removed == 2
    assert ids == ["d_ok-q1", "d_ok-q2", "d_busy-q1", "d_busy-q3",
                   "d_bad-q1", "d_bad-q2", "d_bad-q3", "d_slow-q1", "d_slow-q2", "d_slow-q3"]
    first_item = dataset[0]
    assert first_item["requête"] == "Quand repiquer les tomates ?"
    assert first_item["pertinents"] == ["d_ok"]
    # {repiquer, tomates} both occur in d_ok's text: overlap 1.0.
    assert first_item["lexical_overlap"] == 1.0
    # {ou, placer, epargne}: none occurs in d_slow's text.
    assert dataset[-1]["lexical_overlap"] == 0.0

    with pytest.raises(UsageError, match="exists; pass force=True"):
        generate_dataset(CORPUS, output, SETTINGS, make_client("http://127.0.0.1:9/v1", "dummy"))


def test_a_torn_last_progress_line_is_redone(tmp_path):
    output = tmp_path / "dataset.json"
    record = {"doc_id": "d_ok", "questions": ["Q ?"], "model": "test-model", "n": 3, "language": "fr"}
    progress_path_for(output).write_text(json.dumps(record) + "\n" + '{"doc_id": "d_bu', encoding="utf-8")
    with ScriptedServer({}) as server:
        report = generate_dataset(CORPUS, output, SETTINGS, make_client(server.base_url, "dummy"))
        assert sorted(server.requests) == ["bad", "busy", "slow"]
    assert report.written and report.resumed_documents == 1


def test_resuming_with_other_settings_is_refused(tmp_path):
    output = tmp_path / "dataset.json"
    record = {"doc_id": "d_ok", "questions": ["Q ?"], "model": "other-model", "n": 3, "language": "fr"}
    progress_path_for(output).write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="made with model='other-model'"):
        generate_dataset(CORPUS, output, SETTINGS, make_client("http://127.0.0.1:9/v1", "dummy"))


def test_cli_writes_the_dataset_and_warns_about_overlap(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)   # a local server needs no key
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in CORPUS), encoding="utf-8")
    output = tmp_path / "dataset.json"
    with ScriptedServer({}) as server:
        args = [str(corpus), "-n", "3", "--model", "test-model", "--base-url", server.base_url,
                "-o", str(output)]
        result = CliRunner().invoke(generate_queries_command, args)
        assert result.exit_code == 0, result.output
        again = CliRunner().invoke(generate_queries_command, args)
    assert "Tokens this run: 160 prompt + 48 completion = 208" in result.stdout
    assert "Questions: 10 (2 duplicates removed)" in result.stdout
    dataset = json.loads(output.read_text(encoding="utf-8"))
    mean = sum(item["lexical_overlap"] for item in dataset) / len(dataset)
    assert f"Warning: generated questions reuse on average {mean:.0%} of their content words" in result.stderr
    assert isinstance(again.exception, UsageError)   # main() prints it as one "Error:" line, exit 2
    assert again.exception.path == str(output)   # main() words it with the flag: "use --force"


def test_an_unreachable_endpoint_stops_at_once_instead_of_trying_every_document(tmp_path):
    # port 9 (discard) is closed here: every request is refused. The first document to give up is
    # enough to know; without stopping, each of the 20 documents would wait out its own retry.
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(0.1)  # a short real pause, so the workers do not race through every document

    with pytest.raises(GenerationFailure, match=r"^cannot reach the endpoint: connection failed"):
        generate_dataset(CORPUS * 5, tmp_path / "dataset.json", SETTINGS,
                         make_client("http://127.0.0.1:9/v1", "dummy"), sleep=wait)
    # only the documents already in flight retried, not all 20 (20 retries without stopping)
    assert len(waits) < 10
    assert not (tmp_path / "dataset.json").exists()


# --- replies as real models write them, shortfalls, the progress file, dead endpoints ------------


@pytest.mark.parametrize(
    "reply",
    [
        "Voici trois questions auxquelles ce document répond :\n\n1. A ?\n2. B ?\n3. C ?",
        "Voici trois questions :\n1) A ?\n2) B ?\n3) C ?\n\nJ'espère que cela vous aide !",
        "Here are 3 questions:\n\n- A ?\n- B ?\n- C ?\n\nLet me know if you need more.",
        "* **A ?**\n* **B ?**\n\n* **C ?**",
        '1. "A ?"\n2. « B ? »\n3. “C ?”',
        "Questions :\nA ?\n\nB ?\nC ?\nCes questions couvrent le document.",
        "Question 1 : A ?\nQuestion 2 : B ?\nQuestion 3 : C ?",
    ],
    ids=["intro", "parenthesis-and-remark", "bullets-english", "bold-markdown", "quotes", "no-markers",
         "question-labels"],
)
def test_replies_with_intro_lines_remarks_blank_lines_and_quotes_give_the_questions(reply):
    assert parse_questions(reply, 3) == ["A ?", "B ?", "C ?"]


def test_an_intro_line_is_never_a_question_nor_a_duplicate_across_documents(tmp_path):
    # ten documents answered with an intro line once gave 21 questions, not 30
    corpus = [{"id": f"d{i}", "text": f"MARKER-chatty doc{i} texte"} for i in range(10)]
    with ScriptedServer({}) as server:
        report = generate_dataset(corpus, tmp_path / "dataset.json", SETTINGS, make_client(server.base_url, "dummy"))
    assert report.duplicates_removed == 0
    assert len(report.dataset) == 30
    assert report.shortfalls == []
    assert all(not item["requête"].startswith("Voici") for item in report.dataset)


def test_fewer_questions_than_asked_are_reported(tmp_path):
    corpus = [{"id": "d1", "text": "MARKER-short doc1"}, {"id": "d2", "text": "MARKER-chatty doc2"}]
    with ScriptedServer({}) as server, pytest.warns(TrecRagEvalWarning, match=r"1 of 2 documents .* fewer than "
                                                                             r"3 questions.*d1: 1.*4 instead of 6"):
        report = generate_dataset(corpus, tmp_path / "dataset.json", SETTINGS, make_client(server.base_url, "dummy"))
    assert report.shortfalls == [("d1", 1)]


def test_the_progress_file_goes_once_the_dataset_is_written_so_other_settings_can_rerun(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in CORPUS), encoding="utf-8")
    output = tmp_path / "dataset.json"
    with ScriptedServer({}) as server:
        args = [str(corpus), "--model", "test-model", "--base-url", server.base_url, "-o", str(output)]
        first = CliRunner().invoke(generate_queries_command, [*args, "-n", "3"])
        assert first.exit_code == 0, first.output
        assert not progress_path_for(output).exists()
        rerun = CliRunner().invoke(generate_queries_command, [*args, "-n", "2", "--force"])
        assert rerun.exit_code == 0, rerun.output
    assert len(json.loads(output.read_text(encoding="utf-8"))) < 10


def test_an_unreachable_endpoint_fails_in_seconds_without_waiting_out_retries(tmp_path):
    waits: list[float] = []
    settings = GenerationSettings(model="m", n=3, concurrency=2, timeout=60, max_retries=5, backoff=1.0)
    start = time.perf_counter()
    with pytest.raises(GenerationFailure, match=r"^cannot reach the endpoint"):
        generate_dataset(CORPUS, tmp_path / "dataset.json", settings, make_client("http://127.0.0.1:9/v1", "dummy"),
                         sleep=waits.append)
    assert waits == []          # no backoff: an endpoint that never answered is not retried
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize(
    "reply",
    [
        "**1.** Comment installer Python ?\n**2.** Quelle case cocher ?\n**3.** Comment vérifier la version ?",
        "**Question 1 :** Comment installer Python ?\n**Question 2 :** Quelle case cocher ?\n"
        "**Question 3 :** Comment vérifier la version ?",
        '["Comment installer Python ?", "Quelle case cocher ?", "Comment vérifier la version ?"]',
        '```json\n{"questions": ["Comment installer Python ?", "Quelle case cocher ?", '
        '"Comment vérifier la version ?"]}\n```',
        # an answer under each question (a sub-list): not a question of its own
        "1. Comment installer Python ?\n   - Réponse : avec l'installateur.\n2. Quelle case cocher ?\n"
        "   - Réponse : Add python.exe to PATH.\n3. Comment vérifier la version ?\n   - python --version",
    ],
    ids=["bold-numbers", "bold-question-n", "json-list", "json-object-in-fence", "answers-below"],
)
def test_other_reply_shapes_give_the_three_questions(reply):
    assert parse_questions(reply, 3) == ["Comment installer Python ?", "Quelle case cocher ?",
                                         "Comment vérifier la version ?"]


def test_a_question_wrapped_over_two_lines_is_kept_whole():
    reply = ("1. Comment installer Python sur Windows\n   avec l'installateur officiel ?\n"
             "2. Quelle case cocher ?\n3. Comment vérifier la version ?\n\nBonne lecture !")
    assert parse_questions(reply, 3) == ["Comment installer Python sur Windows avec l'installateur officiel ?",
                                         "Quelle case cocher ?", "Comment vérifier la version ?"]
    # a remark right after the last item (no blank line) is not part of it
    reply = "1. Explique l'installation.\n2. Cite la case à cocher.\n3. Donne la commande.\nBonne lecture !"
    assert parse_questions(reply, 3) == ["Explique l'installation.", "Cite la case à cocher.", "Donne la commande."]
