"""The LLM commands' endpoint: a malformed ``--base-url`` is one ``Error:`` line (it was 53 lines of
``httpx.InvalidURL``), and the API key the tool sends never appears in anything it prints or writes, even
when the server echoes the Authorization header back (in an error body, cut or not, or in a reply).

The fake servers listen on 127.0.0.1 only. The oracle: the key's text is absent from stdout, stderr and
every file left in the test's folder.
"""

from __future__ import annotations

import json

import pytest
from chat_server import ChatServer, Reply, completion
from conftest import first_by_default, invoke
from test_judge import DATASET, FAKE_GRADES, RUN

from trec_rag_eval.errors import UsageError
from trec_rag_eval.llm.client import LLMFailure, check_base_url, redact, redacted_excerpt, remember_secret

KEY = "sk-test-0123456789abcdefSECRET"


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "dataset.json").write_text(json.dumps(DATASET), encoding="utf-8")
    (tmp_path / "run.txt").write_text(RUN, encoding="utf-8")
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"id": d, "text": f"[{d}] passage {d}"}) + "\n" for d in FAKE_GRADES), encoding="utf-8")
    return tmp_path


def _judge(tmp, base_url, *extra):
    return invoke("judge", str(tmp / "dataset.json"), str(tmp / "run.txt"), "--corpus", str(tmp / "corpus.jsonl"),
                  "--depth", "3", "--model", "m", "--base-url", base_url, "-o", str(tmp / "judged.qrels"),
                  "--max-retries", "0", *extra)


def _generate(tmp, base_url, *extra):
    return invoke("generate-queries", str(tmp / "corpus.jsonl"), "-n", "2", "--model", "m", "--base-url", base_url,
                  "-o", str(tmp / "generated.json"), "--max-retries", "0", *extra)


@pytest.mark.parametrize("url, reason", [
    ("http://[::1", "Invalid IPv6 URL"),
    ("http://127.0.0.1:99999/v1", "out of range"),
    ("http://local host:8000/v1", "it holds a space"),
    ("http://127.0.0.1:8000/v1\x00", "control character"),
    ("localhost:8000/v1", "http:// or https://"),
    ("ftp://127.0.0.1/v1", "http:// or https://"),
    ("http:///v1", "it names no host"),
    ("", "http:// or https://"),
])
@pytest.mark.parametrize("command", ["judge", "generate-queries"])
def test_a_malformed_base_url_is_one_error_line(inputs, monkeypatch, url, reason, command):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = (_judge if command == "judge" else _generate)(inputs, url)
    assert result.exit_code == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: --base-url "), result.stderr
    assert reason in lines[0]


def test_the_library_says_the_same():
    with pytest.raises(UsageError, match=r"base_url 'http://\[::1' is not a URL the client can use"):
        check_base_url("http://[::1")


class Echoing(ChatServer):
    """Answers every request with ``status`` and a body that quotes the Authorization header it got."""

    def __init__(self, status: int, padding: int = 0) -> None:
        super().__init__()
        self.status = status
        self.padding = padding
        self.seen: list[str] = []

    def answer(self, prompt: str, reply: Reply) -> None:
        header = reply.handler.headers.get("Authorization", "")
        with self.lock:
            self.seen.append(header)
        echo = "x" * self.padding + f" invalid credentials: {header!r}"
        if self.status == 200:  # a model repeating what it was sent: in its questions, or instead of a grade
            reply.json(200, completion(f"1. Is {header} a question?\n2. Why {header}?", 5, 5))
        else:
            reply.json(self.status, {"error": {"message": echo, "type": "invalid_request_error"}})


def _leaks(tmp, result) -> list[str]:
    places = {"stdout": result.stdout, "stderr": result.stderr}
    places |= {str(p): p.read_text(errors="replace") for p in tmp.rglob("*") if p.is_file()}
    return [name for name, text in places.items() if KEY in text or KEY[:12] in text]


@pytest.mark.parametrize("status", first_by_default([401, 400, 500]))  # 400 and 500 with -m slow
@pytest.mark.parametrize("padding", [0, 150])  # 150: the message is cut at 160 characters, inside the key
@pytest.mark.parametrize("command", ["judge", "generate-queries"])
def test_an_error_that_echoes_the_key_never_shows_it(inputs, monkeypatch, status, padding, command):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with Echoing(status, padding) as server:
        result = (_judge if command == "judge" else _generate)(inputs, server.base_url, "--concurrency", "1")
    assert server.seen and KEY in server.seen[0]  # the key was sent, and echoed
    assert result.exit_code != 0
    if status != 500 and not padding:  # a 5xx is said by its status only; a 4xx quotes the body (cut at 160)
        assert "[API key redacted]" in result.stderr, result.stderr
    assert _leaks(inputs, result) == []


def test_a_reply_that_echoes_the_key_never_writes_it(inputs, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with Echoing(200) as server:
        result = _generate(inputs, server.base_url)
    assert result.exit_code == 0, result.stderr
    questions = [item["query"] if "query" in item else item["requête"]
                 for item in json.loads((inputs / "generated.json").read_text())]
    assert questions and all("[API key redacted]" in q for q in questions)
    assert _leaks(inputs, result) == []


def test_redaction_comes_before_the_cut():
    remember_secret(KEY)
    text = "y" * 150 + " Bearer " + KEY
    assert KEY[:8] not in redacted_excerpt(text)  # cut inside "[API key redacted]", never inside the key
    assert redacted_excerpt("Bearer " + KEY) == "Bearer [API key redacted]"
    assert KEY not in str(LLMFailure(f"HTTP 401: {text}"))
    assert redact(f"a{KEY}b") == "a[API key redacted]b"


@pytest.mark.parametrize("key", first_by_default(["sk-abc\nX-Injected: 1", "sk-é-key", "sk key"]))
@pytest.mark.parametrize("command", ["judge", "generate-queries"])
def test_a_key_that_cannot_be_sent_is_one_error_line_without_the_key(inputs, monkeypatch, key, command):
    # it was "connection failed" (a line break) or "malformed reply ('ascii' codec can't encode...)"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with Echoing(200) as server:
        result = (_judge if command == "judge" else _generate)(inputs, server.base_url)
    assert result.exit_code == 2
    assert server.seen == []
    assert result.stderr.strip().splitlines()[-1].startswith(
        "Error: OPENAI_API_KEY holds a space, a line break or a non-ASCII character (character ")
    assert key not in result.stderr and key[3:] not in result.stderr


def test_the_command_line_redacts_every_error_it_prints():
    # the last guard: whatever error a command raises, a key it sent is not printed
    from trec_rag_eval.cli import _without_secrets

    remember_secret(KEY)
    assert _without_secrets(f"Error: HTTP 400: {KEY}") == "Error: HTTP 400: [API key redacted]"


# --- credentials in --base-url (http://user:password@host/v1, sent as HTTP Basic auth) --------------------

USER = "alice"


def _forms(user: str, password: str) -> dict[str, str]:
    """Every form the password may come back in: as written in the URL (percent-encoded), decoded,
    encoded again, the Basic auth header's base64 of user:password (padded or not), and a piece of it."""
    import base64
    import urllib.parse

    decoded = urllib.parse.unquote(password)
    pair = f"{urllib.parse.unquote(user)}:{decoded}".encode()
    return {"as written": password, "decoded": decoded, "re-encoded": urllib.parse.quote(decoded, safe=""),
            "basic auth": base64.b64encode(pair).decode(), "basic auth unpadded": base64.b64encode(pair).decode()
            .rstrip("="), "url-safe base64": base64.urlsafe_b64encode(pair).decode(), "a piece": decoded[-10:]}


def _shown(tmp, result, forms: dict[str, str]) -> list[str]:
    """(form, where) of every form found in stdout, stderr or a file left in the test's folder."""
    places = {"stdout": result.stdout, "stderr": result.stderr}
    places |= {str(p): p.read_text(errors="replace") for p in tmp.rglob("*") if p.is_file()}
    return [f"{form} in {where}" for form, text in forms.items() for where, shown in places.items() if text in shown]


def _with_credentials(base_url: str, userinfo: str) -> str:
    return base_url.replace("http://", f"http://{userinfo}@", 1)


@pytest.mark.parametrize("status", first_by_default([401, 400, 500, 200]))  # 200: the reply repeats the header
@pytest.mark.parametrize("command", ["judge", "generate-queries"])
def test_a_password_in_the_base_url_never_comes_back_in_any_form(inputs, monkeypatch, status, command):
    # it came back base64-encoded when the server echoed the Authorization header ("Invalid key Basic dXNlcjpz...")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    password = f"pa%40ss%2F{status}{command[:5]}-SECRET"  # each case its own: a process remembers what it sent
    forms = _forms(USER, password)
    with Echoing(status) as server:
        result = (_judge if command == "judge" else _generate)(
            inputs, _with_credentials(server.base_url, f"{USER}:{password}"), "--concurrency", "1")
    assert server.seen and server.seen[0] == f"Basic {forms['basic auth']}"  # sent, and echoed
    assert "Traceback" not in result.stderr
    if status in (400, 401):  # a 4xx quotes the server's message: the header is there, without its secret
        assert "invalid credentials: 'Basic [credentials redacted]'" in result.stderr, result.stderr
    assert _shown(inputs, result, forms) == []


@pytest.mark.parametrize("command", ["judge", "generate-queries"])
def test_a_lone_token_in_the_base_url_never_comes_back(inputs, monkeypatch, command):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    token = f"tok-{command[:5]}-0123456789SECRET"
    # sent as Basic auth of "token:" (an empty password)
    forms = {name: form for name, form in _forms(token, "").items() if name.endswith("base64") or "auth" in name}
    forms |= {"token": token, "a piece": token[-10:]}
    with Echoing(401) as server:
        result = (_judge if command == "judge" else _generate)(inputs, _with_credentials(server.base_url, token))
    assert server.seen and server.seen[0] == f"Basic {forms['basic auth']}"
    assert result.exit_code == 1
    assert _shown(inputs, result, forms) == []


@pytest.mark.parametrize("command", ["judge", "generate-queries"])
def test_a_malformed_base_url_with_a_password_is_said_without_it(inputs, monkeypatch, command):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = (_judge if command == "judge" else _generate)(inputs, "http://alice:Malformed-SECRET@127.0.0.1:99999/v1")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "Error: --base-url 'http://alice:[credentials redacted]@127.0.0.1:99999/v1' is not a URL the client can "
        "use: Port out of range 0-65535 (expected e.g. http://localhost:8000/v1)"]


def test_the_key_and_the_url_password_are_both_kept_out(inputs, monkeypatch):
    # both given: the key goes unsent (the URL's Basic auth wins) but is never shown either
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    password = "both-0123456789SECRET"
    with Echoing(401) as server:
        result = _generate(inputs, _with_credentials(server.base_url, f"{USER}:{password}"))
    assert result.exit_code == 1
    assert _shown(inputs, result, _forms(USER, password) | {"key": KEY}) == []


def test_from_python_the_error_holds_no_form_of_the_password(inputs, monkeypatch):
    import trec_rag_eval as tre

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    password = "python-0123456789SECRET"
    with Echoing(401) as server, pytest.raises(LLMFailure) as caught:
        tre.generate_queries(str(inputs / "corpus.jsonl"), inputs / "out.json", model="m", n=1, max_retries=0,
                             base_url=_with_credentials(server.base_url, f"{USER}:{password}"), progress=False)
    assert [form for form, text in _forms(USER, password).items() if text in str(caught.value)] == []


def test_every_form_of_a_credential_is_redacted():
    from trec_rag_eval.credentials import REDACTED, redact, remember_url, without_credentials

    password = "unit%2Bform-0123456789SECRET"
    remember_url(f"https://{USER}:{password}@example.invalid/v1")
    for name, form in _forms(USER, password).items():
        if name != "a piece":  # a piece of a secret is only kept out of what is shown by keeping the whole out
            assert form not in redact(f"<{form}>"), name
    # any URL's password is masked, remembered or not; a URL without one is left as it is
    assert without_credentials("see s3://bucket/run.txt and http://bob:pw@host:1/x?a=b@c") == \
        f"see s3://bucket/run.txt and http://bob:{REDACTED}@host:1/x?a=b@c"
    assert without_credentials("http://token@host/") == f"http://{REDACTED}@host/"
    assert redact("P@5 and memory://x/run.txt") == "P@5 and memory://x/run.txt"
