"""Inputs by an http:// URL (fsspec's HTTP file system, over aiohttp), served by a real server on 127.0.0.1:
what stands in the way is said as it is (a connection refused, a permission denied, a server's error), never
as "no such file"; a password in the URL never comes back on stdout or stderr, in any form.

The servers listen on 127.0.0.1 only (tests/file_server.py); a refused connection is a port held bound and
never listening."""

from __future__ import annotations

import base64
import shutil

import pytest
from conftest import invoke
from file_server import FileServer, closed_port

import trec_rag_eval as tre
from trec_rag_eval.errors import InputFormatError

pytest.importorskip("aiohttp")  # fsspec's http:// needs it (the cloud extra; the test extra installs it)

FIXTURES = "fixtures"
QRELS = f"{FIXTURES}/qrels.txt"


def _one_error_line(result) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


# --- what stands in the way is said --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["run.txt", "runs/", "run.txt.gz"])
def test_a_closed_port_says_the_connection_was_refused(name):
    # it said "no such file": fsspec's HTTP file system calls every failure FileNotFoundError
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}/{name}"
        line = _one_error_line(invoke(QRELS, url))
    assert line == (f"Error: {url}: cannot read: the connection was refused by 127.0.0.1:{port}; check the URL, "
                    "and that its server is running")


def test_qrels_at_a_closed_port_and_from_python_say_the_same():
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}/qrels.txt"
        line = _one_error_line(invoke(url, f"{FIXTURES}/run_bm25.txt"))
        with pytest.raises(InputFormatError) as caught:
            tre.evaluate(url, f"{FIXTURES}/run_bm25.txt", ["P@5"])
    assert line == f"Error: {caught.value}"
    assert "connection was refused" in line


@pytest.mark.parametrize("status, said", [
    (403, "cannot read: permission denied (HTTP 403 Forbidden); check the credentials the URL gives"),
    (401, "cannot read: permission denied (HTTP 401 Unauthorized); check the credentials the URL gives"),
    (500, "cannot read: the server answered HTTP 500 Internal Server Error"),
    (404, "no such file"),  # the one status that says the file is not there
])
def test_a_refusal_is_said_with_its_status(tmp_path, status, said):
    with FileServer(tmp_path, refuse={"run.txt": (status, "no")}) as server:
        line = _one_error_line(invoke(QRELS, server.url("run.txt")))
    assert line == f"Error: {server.url('run.txt')}: {said}"


def test_a_file_served_reads_as_its_local_copy(tmp_path):
    shutil.copy(f"{FIXTURES}/run_bm25.txt", tmp_path / "run.txt")
    with FileServer(tmp_path) as server:
        got = invoke("-m", "P@5", "-m", "MAP", QRELS, server.url("run.txt"))
    assert got.exit_code == 0, got.stderr
    assert got.stdout == invoke("-m", "P@5", "-m", "MAP", QRELS, f"{FIXTURES}/run_bm25.txt").stdout


# --- a password in the URL -------------------------------------------------------------------------------


def _forms(user: str, password: str) -> dict[str, str]:
    pair = f"{user}:{password}".encode()
    return {"password": password, "basic auth": base64.b64encode(pair).decode(),
            "a piece": password[-8:]}


def _leaked(result, forms) -> list[str]:
    return [f"{name} in {where}" for name, form in forms.items()
            for where, text in (("stdout", result.stdout), ("stderr", result.stderr)) if form in text]


def test_runs_named_by_a_url_with_a_password_are_shown_without_it(tmp_path):
    # two runs with one tag: the second is named by its URL on stdout, in trec_eval's format and as a table
    shutil.copy(f"{FIXTURES}/run_bm25.txt", tmp_path / "a.txt")
    shutil.copy(f"{FIXTURES}/run_bm25.txt", tmp_path / "b.txt")
    password = "labels-0123456789SECRET"
    with FileServer(tmp_path) as server:
        urls = [server.url(name, f"bob:{password}") for name in ("a.txt", "b.txt")]
        results = [invoke("-m", "P@5", "-f", "trec", QRELS, *urls), invoke("-m", "P@5", QRELS, *urls),
                   invoke("-m", "P@5", "-f", "trec", "--crosscheck", QRELS, *urls),
                   invoke("crosscheck", "-m", "P@5", QRELS, urls[1])]
    assert server.seen[0] == "Basic " + base64.b64encode(f"bob:{password}".encode()).decode()  # it was sent
    for result in results:
        assert result.exit_code == 0, result.stderr
        assert _leaked(result, _forms("bob", password)) == []
    runids = [line.split("\t")[2] for line in results[0].stdout.splitlines() if line.startswith("runid")]
    assert runids == ["bm25", server.url("b.txt", "bob:[credentials redacted]")]
    assert f"Cross-check of {server.url('b.txt', 'bob:[credentials redacted]')}" in results[2].stderr
    assert results[3].stdout.startswith(f"run: {server.url('b.txt', 'bob:[credentials redacted]')}\n")


@pytest.mark.parametrize("status", [403, 500])
def test_a_refusal_of_a_url_with_a_password_never_shows_it(tmp_path, status):
    password = f"refused-{status}-0123456789SECRET"
    with FileServer(tmp_path, refuse={"run.txt": (status, "bad {authorization}")}) as server:
        url = server.url("run.txt", f"bob:{password}")
        result = invoke(QRELS, url)
    assert server.seen and password not in server.seen[0]  # sent as Basic auth
    line = _one_error_line(result)
    assert line.startswith(f"Error: {server.url('run.txt', 'bob:[credentials redacted]')}: cannot read: ")
    assert _leaked(result, _forms("bob", password)) == []


def test_a_closed_port_with_a_password_in_the_url_never_shows_it():
    password = "closed-0123456789SECRET"
    with closed_port() as port:
        result = invoke(QRELS, f"http://bob:{password}@127.0.0.1:{port}/run.txt")
    assert "connection was refused" in _one_error_line(result)
    assert _leaked(result, _forms("bob", password)) == []


@pytest.mark.slow  # s3fs retries a connection error, with backoff (a few seconds)
def test_an_s3_endpoint_at_a_closed_port_says_the_connection_was_refused(monkeypatch):
    # the same words for an S3 store out of reach (a fake endpoint on 127.0.0.1, fake keys): the host is the
    # endpoint's, not the bucket's name
    s3_server = pytest.importorskip("s3_server")
    pytest.importorskip("s3fs")
    for name, value in s3_server.FAKE_KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # botocore's own retries: the error sooner
    with closed_port() as port:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
        s3_server.forget_s3_file_systems()
        try:
            line = _one_error_line(invoke(QRELS, "s3://bucket/run.txt"))
        finally:
            s3_server.forget_s3_file_systems()
    assert line == (f"Error: s3://bucket/run.txt: cannot read: the connection was refused by 127.0.0.1:{port}; "
                    "check the URL, and that its server is running")


# every command that reads an input by URL, with the inputs it names in its results (labels, the reference, a
# report's table of inputs, a converted file): read as from a local copy, the password shown nowhere
COMMANDS_NAMING_INPUTS = {
    "agree": lambda url, tmp: ["agree", QRELS, url("qrels.txt")],
    "agree runs": lambda url, tmp: ["agree", "-f", "json", QRELS, url("qrels.txt"), url("a.txt"), url("b.txt")],
    "validate": lambda url, tmp: ["validate", "-m", "P@5", QRELS, f"{FIXTURES}/run_bm25.txt", url("ref.txt")],
    "report": lambda url, tmp: ["report", QRELS, url("a.txt"), url("b.txt"), "-o", str(tmp / "out" / "r.html")],
    "compare": lambda url, tmp: ["compare", "-f", "json", QRELS, url("a.txt"), url("b.txt"), "-o",
                                 str(tmp / "out" / "c.json")],
    "convert": lambda url, tmp: ["convert", url("a.txt"), "--json", str(tmp / "out" / "a.json")],
    "fuse": lambda url, tmp: ["fuse", url("a.txt"), url("b.txt"), "-o", str(tmp / "out" / "f.txt")],
    "plan": lambda url, tmp: ["plan", "--delta", "0.1", "-f", "json", QRELS, url("a.txt"), url("b.txt")],
    "evaluate": lambda url, tmp: ["-m", "P@5", "-f", "json", url("qrels.txt"), url("a.txt"), url("b.txt")],
}


@pytest.mark.parametrize("command", list(COMMANDS_NAMING_INPUTS))
def test_every_command_naming_its_inputs_shows_a_url_without_its_password(tmp_path, command):
    import subprocess

    served = tmp_path / "served"
    served.mkdir()
    (tmp_path / "out").mkdir()
    shutil.copy(QRELS, served / "qrels.txt")
    shutil.copy(f"{FIXTURES}/run_bm25.txt", served / "a.txt")
    shutil.copy(f"{FIXTURES}/run_bm25.txt", served / "b.txt")  # one tag twice: the runs are named by source
    binary = shutil.which("trec_eval")
    reference = subprocess.run([binary, "-q", QRELS, f"{FIXTURES}/run_bm25.txt"], capture_output=True, text=True,
                               check=True).stdout if binary else invoke("-q", "-f", "trec", QRELS,
                                                                        f"{FIXTURES}/run_bm25.txt").stdout
    (served / "ref.txt").write_text(reference)
    password = f"named-{command.replace(' ', '-')}-0123456789SECRET"  # each its own: a process remembers
    with FileServer(served) as server:
        result = invoke(*COMMANDS_NAMING_INPUTS[command](lambda name: server.url(name, f"bob:{password}"), tmp_path))
    assert server.seen and server.seen[0] == "Basic " + base64.b64encode(f"bob:{password}".encode()).decode()
    assert result.exit_code == 0, result.stderr
    written = {str(p): p.read_text(errors="replace") for p in (tmp_path / "out").iterdir()}
    assert written or command not in ("report", "compare", "convert", "fuse"), command
    places = {"stdout": result.stdout, "stderr": result.stderr, **written}
    forms = _forms("bob", password)
    assert [f"{name} in {where}" for name, form in forms.items() for where, text in places.items()
            if form in text] == []


@pytest.mark.parametrize("password", ["quote'in-it-SECRET", 'dquote"in-it-SECRET', "angle<in>it-SECRET",
                                      "at@in-it-SECRET", "sub!$&()*+,;=-SECRET"])
def test_a_password_of_any_characters_never_comes_back(tmp_path, password):
    # a password holding a quote was not taken for one (the pattern of a URL's user information left quotes out),
    # so the server's echo of the Basic auth header came back whole
    with FileServer(tmp_path, refuse={"run.txt": (401, "bad {authorization}")}) as server:
        result = invoke(QRELS, server.url("run.txt", f"bob:{password}"))
    assert server.seen and server.seen[0].startswith("Basic ")  # sent as Basic auth, and echoed
    line = _one_error_line(result)
    assert "permission denied" in line
    assert _leaked(result, _forms("bob", password)) == []


@pytest.mark.parametrize("userinfo", ["tok%3Aen-0123456789SECRET", "a%3Ab:0123456789SECRET"])
def test_credentials_the_client_cannot_send_are_said_not_taken_for_a_missing_file(tmp_path, userinfo):
    # HTTP Basic auth has no ':' in a user name (RFC 7617): the client refused to send it, and fsspec called the
    # file missing, though it was served
    shutil.copy(f"{FIXTURES}/run_bm25.txt", tmp_path / "run.txt")
    with FileServer(tmp_path) as server:
        url = server.url("run.txt", userinfo)
        line = _one_error_line(invoke(QRELS, url))
    assert not server.seen  # never sent
    assert line.startswith("Error: http://") and "[credentials redacted]@127.0.0.1:" in line, line
    assert line.endswith("/run.txt: cannot read: the credentials in the URL cannot be sent (ValueError: A \":\" is "
                         "not allowed in login (RFC 7617#section-2)); check the user name and password the URL "
                         "gives"), line
    assert "SECRET" not in line


# arguments that take a local file only: a URL there is a file that does not exist, said with the URL as given
# (generate-queries' CORPUS was made a path first, 'http:/bob:password@...', which no redaction recognised)
LOCAL_ONLY = {
    "generate-queries CORPUS": lambda url, tmp: ["generate-queries", url, "--model", "m", "-o", str(tmp / "g.json")],
    "judge --corpus": lambda url, tmp: ["judge", f"{FIXTURES}/eval_dataset_fr.json", f"{FIXTURES}/run_bm25.txt",
                                        "--corpus", url, "--model", "m", "-o", str(tmp / "j.qrels")],
    "--doc-map": lambda url, tmp: ["-m", "P@5", "--doc-map", url, QRELS, f"{FIXTURES}/run_bm25.txt"],
    "search DATASET": lambda url, tmp: ["search", url, "--corpus", f"{FIXTURES}/corpus_fr.jsonl"],
    "search --corpus": lambda url, tmp: ["search", f"{FIXTURES}/eval_dataset_fr.json", "--corpus", url],
}
# outputs: a URL is refused by the writer, as every command's output is (exit 1)
URL_OUTPUTS = {
    "judge -o": lambda url, tmp: ["judge", f"{FIXTURES}/eval_dataset_fr.json", f"{FIXTURES}/run_bm25.txt",
                                  "--corpus", f"{FIXTURES}/corpus_fr.jsonl", "--model", "m", "-o", url],
    "generate-queries -o": lambda url, tmp: ["generate-queries", f"{FIXTURES}/corpus_fr.jsonl", "--model", "m",
                                             "-o", url],
    "--progress-file": lambda url, tmp: ["generate-queries", f"{FIXTURES}/corpus_fr.jsonl", "--model", "m", "-o",
                                         str(tmp / "g.json"), "--progress-file", url],
}


@pytest.mark.parametrize("argument", [*LOCAL_ONLY, *URL_OUTPUTS])
def test_a_url_where_a_local_file_is_expected_is_said_without_its_password(tmp_path, monkeypatch, argument):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    password = f"local-{argument.split()[0].strip('-')}-0123456789SECRET"
    with closed_port() as port:
        url = f"http://bob:{password}@127.0.0.1:{port}/corpus.jsonl"
        result = invoke(*{**LOCAL_ONLY, **URL_OUTPUTS}[argument](url, tmp_path))
    output = argument in URL_OUTPUTS
    assert result.exit_code == (1 if output else 2) and "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    said = "is a URL: outputs are written to local paths" if output else "is a URL: a local file is expected"
    assert len(lines) == 1 and said in lines[0], result.stderr
    assert f"http://bob:[credentials redacted]@127.0.0.1:{port}/corpus.jsonl" in lines[0]
    assert _leaked(result, _forms("bob", password)) == []
