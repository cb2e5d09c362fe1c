"""Inputs that can be read only once: a named pipe (``mkfifo f; cat run > f & trec-rag-eval qrels f`` blocked
forever: the file was opened twice), standard input as ``/dev/stdin`` or ``-`` ("empty file"), a process
substitution. Each is read once and gives what the same bytes in a regular file give.

Oracles: P@1 and P@2 worked out by hand for the small pair below, and for the larger run the output on a
regular file (two paths to one result must agree). ``--cluster local:N`` is bounded at once.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
import time

import pytest
from conftest import REPO, feed_fifo, invoke, unblock_fifo

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 1\n"
RUN = "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 x 1 3.0 r\n2 Q0 c 2 1.0 r\n"
# q1: a (relevant), b -> P@1 = 1, P@2 = 1/2; q2: x, c (relevant) -> P@1 = 0, P@2 = 1/2
EXPECTED = "P_1                   \tall\t0.5000\nP_2                   \tall\t0.5000\n"


def _cli(*args: str, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": REPO}
    return subprocess.run([sys.executable, "-m", "trec_rag_eval", *args], input=stdin, capture_output=True,
                          timeout=timeout, env=env, cwd=REPO)


def _fifo(path, data: bytes) -> threading.Thread:
    """A named pipe at ``path`` fed ``data`` once by a writer thread."""
    os.mkfifo(path)
    return feed_fifo(path, data)


@pytest.fixture
def qrels(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text(QRELS)
    return str(path)


@pytest.mark.parametrize("content", ["plain", "gzip"])
def test_a_run_from_a_named_pipe(tmp_path, qrels, content):
    data = RUN.encode() if content == "plain" else gzip.compress(RUN.encode())
    fifo = tmp_path / "f"
    writer = _fifo(fifo, data)
    try:
        result = _cli("-m", "P.1,2", qrels, str(fifo))
    finally:
        unblock_fifo(fifo)
        writer.join(5)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == EXPECTED


def test_qrels_and_run_both_from_named_pipes(tmp_path):
    writers = [_fifo(tmp_path / "q", QRELS.encode()), _fifo(tmp_path / "r", RUN.encode())]
    try:
        result = _cli("-m", "P.1,2", str(tmp_path / "q"), str(tmp_path / "r"))
    finally:
        for name in ("q", "r"):
            unblock_fifo(tmp_path / name)
        for writer in writers:
            writer.join(5)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == EXPECTED


@pytest.mark.parametrize("spelling", ["/dev/stdin", "-"])
@pytest.mark.parametrize("which", ["run", "qrels"])
def test_standard_input_as_run_or_qrels(qrels, tmp_path, spelling, which):
    # `cat run.txt | trec-rag-eval qrels.txt /dev/stdin` said "empty file"
    run = tmp_path / "run.txt"
    run.write_text(RUN)
    args = [qrels, spelling] if which == "run" else [spelling, str(run)]
    result = _cli("-m", "P.1,2", *args, stdin=(RUN if which == "run" else QRELS).encode())
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == EXPECTED


def test_a_large_run_from_standard_input_is_the_same_as_from_a_file(qrels, tmp_path):
    # over 1 MB: the fast reader's path (polars over the bytes), and --stream's pieces
    lines = [line for q, top in ((1, "a"), (2, "c")) for line in
             [f"{q} Q0 {top} 0 5000 big\n", *(f"{q} Q0 d{d} {d} {1000 - d}.5 big\n" for d in range(30000))]]
    data = "".join(lines).encode()
    assert len(data) > 1 << 20
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    on_file = _cli("-m", "P.1,2", "-m", "map", qrels, str(path))
    assert on_file.returncode == 0, on_file.stderr
    for extra in ([], ["--stream"]):
        piped = _cli(*extra, "-m", "P.1,2", "-m", "map", qrels, "-", stdin=data)
        assert piped.returncode == 0, piped.stderr
        assert piped.stdout == on_file.stdout


def test_json_results_and_a_doc_map_from_pipes(tmp_path, qrels):
    import json

    results = json.dumps([{"query_id": "1", "retrieved": ["a#1", "b#1"]},
                          {"query_id": "2", "retrieved": ["x#1", "c#2"]}]).encode()
    doc_map = b"a#1\ta\nb#1\tb\nx#1\tx\nc#2\tc\n"
    writer = _fifo(tmp_path / "map", doc_map)
    try:
        result = _cli("-m", "P.1,2", "--doc-map", str(tmp_path / "map"), qrels, "-", stdin=results)
    finally:
        unblock_fifo(tmp_path / "map")
        writer.join(5)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == EXPECTED


def test_an_empty_pipe_is_an_empty_file(qrels):
    result = _cli(qrels, "-", stdin=b"")
    assert result.returncode == 1
    assert result.stderr.decode() == "Error: -: empty file\n"


def test_convert_reads_standard_input(tmp_path):
    out = tmp_path / "out.qrels"
    result = _cli("convert", "-", "--qrels", str(out), stdin=b'[{"id": "q1", "query": "a", "relevant": ["d1"]}]')
    assert result.returncode == 0, result.stderr
    assert out.read_text() == "q1 0 d1 1\n"


def test_parquet_from_a_pipe_is_one_clear_error(tmp_path, qrels):
    import polars as pl

    path = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}).write_parquet(path)
    result = _cli(qrels, "-", stdin=path.read_bytes())
    assert result.returncode == 1
    assert result.stderr.decode() == ("Error: -: a Parquet file is read from a file, not from a pipe or standard "
                                      "input: save it to a file first\n")


# --- --cluster local:N --------------------------------------------------------------------------------


def test_a_local_cluster_larger_than_the_machine_is_refused_at_once(qrels, tmp_path):
    # `--cluster local:100000` printed nothing for over a minute
    run = tmp_path / "run.txt"
    run.write_text(RUN)
    limit = 4 * (os.cpu_count() or 1)
    start = time.monotonic()
    result = invoke("--cluster", "local:100000", qrels, str(run))
    assert time.monotonic() - start < 10
    assert result.exit_code == 2
    assert result.stderr == (f"Error: --cluster local:100000: at most {limit} local worker processes on this machine "
                             f"(4 per core, {os.cpu_count()} cores); for more, start a Dask cluster over several "
                             "machines and give its scheduler address\n")
    assert invoke("--cluster", f"local:{limit + 1}", qrels, str(run)).exit_code == 2


def test_a_pipe_cannot_be_sent_to_a_cluster(qrels):
    pytest.importorskip("distributed")
    result = _cli("--cluster", "local:1", qrels, "-", stdin=RUN.encode())
    assert result.returncode == 2
    assert "Error: - is standard input or a pipe: the workers of a cluster read each run from its file" in (
        result.stderr.decode())
