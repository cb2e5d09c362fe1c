"""Failures of the cluster itself: each is one ``Error:`` line within a bounded time, no
traceback. Everything listens on 127.0.0.1 only; every wait is bounded; the bounds of the handshake
are made short here (the defaults are tens of seconds) so that a test that hangs fails instead."""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import invoke

pytest.importorskip("distributed")

import trec_rag_eval.cluster.connection as cluster_module  # noqa: E402
from trec_rag_eval.cluster import ClusterError, evaluate_run_tasks  # noqa: E402
from trec_rag_eval.core.settings import Settings  # noqa: E402
from trec_rag_eval.io.loading import load_qrels  # noqa: E402
from trec_rag_eval.measures.requests import parse_measures  # noqa: E402

PROCESS_TIMEOUT = 300.0
"""Seconds a scheduler or worker process may take to start on a loaded machine (a bound, not a delay)."""


@pytest.fixture
def short(monkeypatch):
    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", 2.0)
    monkeypatch.setattr(cluster_module, "WORKERS_TIMEOUT", 2.0)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("failures")
    rng = random.Random(28)
    with open(folder / "qrels.txt", "w") as out:
        for q in range(10):
            for d in range(10):
                out.write(f"q{q} 0 d{d} {rng.choice([0, 1, 2])}\n")
    runs = []
    for r in range(3):
        path = folder / f"run{r}.txt"
        with open(path, "w") as out:
            for q in range(10):
                for d in range(20):
                    out.write(f"q{q} Q0 d{d} {d + 1} {rng.random():.4f} tag{r}\n")
        runs.append(str(path))
    return str(folder / "qrels.txt"), runs


def _one_error_line(result) -> str:
    assert result.exit_code == 1, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def test_a_silent_listener_is_one_error_line_not_a_hang(short, data):
    qrels, runs = data
    with socket.socket() as listener:  # accepts connections (the kernel's backlog), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        line = _one_error_line(invoke("--cluster", address, "-m", "P.5", qrels, *runs))
    assert line == (f"Error: no Dask scheduler answered at {address} within 2 s (is it a Dask scheduler's address, "
                    "such as tcp://host:8786, and not its dashboard or another service?)")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the server's log would share the command's stderr, in-process
        pass


def test_an_http_server_is_one_error_line_not_a_hang(short, data):
    qrels, runs = data
    server = ThreadingHTTPServer(("127.0.0.1", 0), _QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        address = f"tcp://127.0.0.1:{server.server_address[1]}"
        line = _one_error_line(invoke("--cluster", address, "-m", "P.5", qrels, *runs))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=60)
    # distributed waits for a message that never comes, or (some versions) reads the server's reply to its bytes
    # as a message's length, exabytes: either is said as what it is
    assert line.startswith(f"Error: no Dask scheduler answered at {address} within 2 s") or \
        line.startswith(f"Error: {address} is not a Dask scheduler: it answered with something that is not a Dask "
                        "message"), line


def test_a_service_that_answers_at_once_is_one_error_line_not_exabytes(short, data):
    """What a proxy does: an HTTP reply as soon as the connection opens, which distributed reads as the
    length of a message (the issue's "Unable to allocate 3.07 EiB")."""
    qrels, runs = data
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(60)

        def answer() -> None:
            for _ in range(2):
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" * 4)

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        line = _one_error_line(invoke("--cluster", address, "-m", "P.5", qrels, *runs))
        # the client may connect once, not twice: wake the thread's accept() now (closing the socket
        # alone does not) instead of waiting out its 60 s
        listener.shutdown(socket.SHUT_RDWR)
    thread.join(timeout=60)
    assert line.startswith(f"Error: {address} is not a Dask scheduler: it answered with something that is not a "
                           "Dask message") or line.startswith(f"Error: no Dask scheduler answered at {address}"), line
    assert "is it a Dask scheduler's address" in line and "EiB" not in line


def _start(args: list[str], expect: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """A dask process on 127.0.0.1 (``env``: its environment, this one's by default), and the line of its log
    that holds ``expect`` (read, bounded)."""
    process = subprocess.Popen([sys.executable, "-m", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=env)
    found: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if expect in line and not found:
                found.append(line)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + PROCESS_TIMEOUT
    while not found and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    if not found:
        process.kill()
        pytest.fail(f"{' '.join(args)} did not start within {PROCESS_TIMEOUT} s")
    return process, found[0]


def _scheduler() -> tuple[subprocess.Popen, str]:
    process, line = _start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                            "--no-dashboard"], "Scheduler at:")
    return process, line.split("Scheduler at:")[1].strip()


def _stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)


@pytest.mark.slow  # a scheduler process of its own
def test_a_scheduler_with_no_worker_is_one_error_line(short, data):
    qrels, runs = data
    scheduler, address = _scheduler()
    try:
        line = _one_error_line(invoke("--cluster", address, "-m", "P.5", qrels, *runs))
    finally:
        _stop(scheduler)
    assert line == (f"Error: the Dask scheduler at {address} has no worker (waited 2 s): start workers with "
                    f"`dask worker {address}`, or check that they can reach it")


@pytest.mark.slow  # a scheduler and a worker as processes of their own
def test_a_scheduler_stopped_mid_run_is_one_cluster_error(short, data, monkeypatch):
    qrels, runs = data
    scheduler, address = _scheduler()
    worker = None
    try:
        worker, _ = _start(["distributed.cli.dask_worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                            "--no-dashboard", "--no-nanny"], "Registered to:")
        stopped = []

        def progress(done: int, total: int) -> None:  # the first task done: the scheduler goes
            if done >= 1 and not stopped:
                stopped.append(done)
                scheduler.kill()
                scheduler.wait(timeout=60)

        monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", 5.0)
        with pytest.raises(ClusterError) as info:
            evaluate_run_tasks(load_qrels(qrels), runs * 4, parse_measures(["P.5"]), Settings(), cluster=address,
                               progress=progress)
    finally:
        _stop(*[p for p in (scheduler, worker) if p is not None])
    assert stopped
    message = str(info.value)
    assert f"lost the Dask scheduler at {address} mid-run" in message and "\n" not in message, message


LOST_BOUND = 120.0
"""Seconds the command may take, once its scheduler is killed, to say so (its bound is CONNECT_TIMEOUT, 30 s,
for the client's attempts to reconnect; the rest is a loaded machine's slack)."""


@pytest.mark.slow  # a scheduler, a worker and the command as processes of their own
def test_a_scheduler_killed_mid_run_is_one_error_line_from_the_command(tmp_path):
    """Through the command line, as a user sees it: the runs done before are printed, then one
    ``Error:`` line, within a bound, with no traceback and nothing from distributed's log."""
    rng = random.Random(2828)
    with open(tmp_path / "qrels.txt", "w") as out:
        for q in range(100):
            out.writelines(f"q{q} 0 d{d} {rng.choice([0, 1, 2])}\n" for d in range(30))
    folder = tmp_path / "runs"
    folder.mkdir()
    for r in range(40):  # enough work that the scheduler is killed while most runs are still to do
        with open(folder / f"run{r:02}.txt", "w") as out:
            out.writelines(f"q{q} Q0 d{d} {d + 1} {rng.random():.4f} tag{r}\n" for q in range(100) for d in range(100))
    scheduler, address = _scheduler()
    worker = command = None
    try:
        worker, _ = _start(["distributed.cli.dask_worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                            "--no-dashboard", "--no-nanny"], "Registered to:")
        command = subprocess.Popen([sys.executable, "-m", "trec_rag_eval", "--cluster", address, "-q", "-m", "all_trec",
                                    str(tmp_path / "qrels.txt"), str(folder)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert command.stdout is not None
        printed: list[bytes] = []  # the first runs' output: the run is under way
        reader = threading.Thread(target=lambda: printed.append(command.stdout.read1()), daemon=True)
        reader.start()
        reader.join(timeout=PROCESS_TIMEOUT)
        assert printed, f"nothing printed within {PROCESS_TIMEOUT} s"
        scheduler.kill()
        killed = time.monotonic()
        stdout, stderr = command.communicate(timeout=LOST_BOUND)
        took = time.monotonic() - killed
    finally:
        _stop(*[p for p in (scheduler, worker, command) if p is not None])
    printed.append(stdout)
    assert printed[0], stderr
    assert command.returncode == 1 and took < LOST_BOUND
    lines = stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr.decode()
    assert f"lost the Dask scheduler at {address} mid-run" in lines[0] and "is it still running?" in lines[0]
    # what was printed is the runs done before, whole, as the single machine prints them
    text = b"".join(printed).decode()
    done = text.count("runid                 \tall\t")
    assert 2 <= done < 40
    assert text == invoke("-q", "-m", "all_trec", str(tmp_path / "qrels.txt"),
                          *[str(folder / f"run{r:02}.txt") for r in range(done)]).stdout


@pytest.mark.parametrize("scheme", ["tcp", "ws"])
def test_a_closed_port_is_said_at_once_not_after_the_handshake_bound(data, scheme):
    # distributed retries a refused connection until its timeout: the command waited the whole 30 s (websockets
    # run over TCP: nothing listening is said as at a tcp:// address)
    from file_server import closed_port

    qrels, runs = data
    with closed_port() as port:
        address = f"{scheme}://127.0.0.1:{port}"
        started = time.monotonic()
        line = _one_error_line(invoke("--cluster", address, "-m", "P.5", qrels, *runs))
        took = time.monotonic() - started
        with pytest.raises(ClusterError) as caught:
            evaluate_run_tasks(load_qrels(qrels), runs, parse_measures(["P.5"]), Settings(),
                               cluster=address if scheme != "tcp" else f"127.0.0.1:{port}")
    assert line == (f"Error: cannot connect to the Dask scheduler at {address}: connection refused (nothing listens "
                    "there: is the scheduler running, and is this its address, such as tcp://host:8786?)")
    assert str(caught.value) == line.replace(address, address if scheme != "tcp" else f"127.0.0.1:{port}")[7:]
    assert took < cluster_module.CONNECT_TIMEOUT / 3, took  # at once: a loaded machine is given room, not 30 s


@pytest.mark.parametrize("address", [
    "tcp://alice:S3cretPass@127.0.0.1:{port}", "alice:S3cretPass@127.0.0.1:{port}", "tls://S3cretToken@127.0.0.1:{port}",
    "ws://alice:S3cr%40tPass@127.0.0.1:{port}", "tcp://alice:S3cretPass@[::1]:{port}",
])
def test_a_scheduler_address_with_credentials_is_refused_without_showing_them(data, address):
    # distributed has no user or password in its addresses (its security is TLS certificates): such an address is
    # refused before any connection, and neither the password nor any form of it is shown (its error echoed it)
    import base64
    import urllib.parse

    from file_server import closed_port

    qrels, runs = data
    with closed_port() as port:
        address = address.format(port=port)
        started = time.monotonic()
        result = invoke("--cluster", address, "-m", "P.5", qrels, *runs)
        took = time.monotonic() - started
        with pytest.raises(ClusterError) as caught:
            evaluate_run_tasks(load_qrels(qrels), runs, parse_measures(["P.5"]), Settings(), cluster=address)
    line = _one_error_line(result)
    secret = "S3cretToken" if "Token" in address else urllib.parse.unquote("S3cr%40tPass" if "%40" in address
                                                                        else "S3cretPass")
    forms = {secret, urllib.parse.quote(secret, safe=""), base64.b64encode(f"alice:{secret}".encode()).decode()}
    for said in (line, str(caught.value)):
        assert not any(form in said for form in forms), said
        assert "[credentials redacted]" in said and "holds no user or password" in said, said
    assert took < cluster_module.CONNECT_TIMEOUT / 3, took
