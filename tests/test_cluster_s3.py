"""Runs in S3 evaluated on a cluster whose workers hold the credentials and whose client holds none: the
client opens nothing of the runs (docs/scaling-out.md: it lists folders and reads a lone run's first bytes), so
two runs by URL need no credentials where the command runs. The store is moto's server on 127.0.0.1
(tests/s3_server.py), the scheduler and the worker processes of their own, given the fake keys; the command runs
here, without."""

from __future__ import annotations

import pytest
from conftest import invoke

pytest.importorskip("distributed")
pytest.importorskip("moto")
pytest.importorskip("s3fs")

from s3_server import environment_with, fake_s3, forget_s3_file_systems  # noqa: E402
from test_cluster_failures import _scheduler, _start, _stop  # noqa: E402

import trec_rag_eval as tre  # noqa: E402
from trec_rag_eval.errors import InputFormatError  # noqa: E402

FIXTURES = "fixtures"
BUCKET = "trec-rag-eval-test"


@pytest.mark.slow  # a scheduler and a worker as processes of their own
def test_two_s3_runs_on_a_cluster_need_no_credentials_on_the_client(monkeypatch):
    runs = ["run_bm25.txt", "run_hybrid.txt"]
    files = {name: open(f"{FIXTURES}/{name}", "rb").read() for name in runs}
    urls = [f"s3://{BUCKET}/{name}" for name in runs]
    with fake_s3(files, BUCKET) as endpoint:
        for name, value in environment_with(endpoint, credentials=False).items():
            monkeypatch.setenv(name, value)
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            monkeypatch.delenv(name, raising=False)
        forget_s3_file_systems()
        # this process cannot read the store: it has no credentials
        with pytest.raises(InputFormatError, match="NoCredentialsError"):
            tre.evaluate(f"{FIXTURES}/qrels.txt", urls[0], "P@5")
        scheduler, address = _scheduler()
        worker = None
        try:
            worker, _ = _start(["distributed.cli.dask_worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                "--no-dashboard", "--no-nanny"], "Registered to:",
                               env=environment_with(endpoint, credentials=True))
            got = invoke("--cluster", address, "-m", "P@5", "-m", "MAP", f"{FIXTURES}/qrels.txt", *urls)
            missing = invoke("--cluster", address, "-m", "P@5", f"{FIXTURES}/qrels.txt", urls[0],
                             f"s3://{BUCKET}/nope.txt")
        finally:
            _stop(*[p for p in (scheduler, worker) if p is not None])
            forget_s3_file_systems()
    assert got.exit_code == 0, got.stderr
    assert got.stdout == invoke("-m", "P@5", "-m", "MAP", f"{FIXTURES}/qrels.txt",
                                *[f"{FIXTURES}/{name}" for name in runs]).stdout
    # a run the workers do not find is said by them, as on one machine; the other is evaluated
    assert missing.exit_code == 1
    assert missing.stderr.splitlines() == [f"Error: s3://{BUCKET}/nope.txt: no such file"]
