"""Evaluation on a Dask cluster: one LocalCluster of two worker processes on the loopback, started
and stopped by this module, shared by its tests; a test that kills a worker has a cluster of its own
(``own_client``), and the tests that start their own are marked slow (``python -m pytest -m slow``).
The reference is always the single-machine path of the same command: the cluster must change nothing
but where the work runs. Nothing here waits a fixed time: a test waits for an event (a worker gone, two
workers answering), bounded by LIVE_WORKERS_TIMEOUT."""

from __future__ import annotations

import os
import random
import re
import time

import distributed  # the 'dask' extra, which the 'test' extra installs
import polars as pl
import pytest
from conftest import invoke

from trec_rag_eval.cluster import connect, evaluate_partitioned, evaluate_run_tasks
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.errors import InputFormatError, MissingDependencyError, UsageError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.loading import load_qrels, load_run
from trec_rag_eval.measures.requests import parse_measures

WORKERS = 2
LIVE_WORKERS_TIMEOUT = 300.0
"""Seconds a test may wait for the cluster's workers to be back and answering: a worker ended by a test
is restarted by its nanny, which on a loaded 2-core machine can take far longer than the 60 s once
allowed here. A bound, never a sleep: the wait ends as soon as both workers answer."""
SUBPROCESS_TIMEOUT = 900
"""Seconds a command line that starts its own cluster may take, on a loaded machine (a bound, not a delay)."""
GUARD_TIMEOUT = 180
"""Seconds for a script without the main guard: a hang there fails in minutes, not after the whole CI's time."""


def _local_cluster() -> distributed.LocalCluster:
    return distributed.LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, host="127.0.0.1",
                                    dashboard_address=":0", silence_logs=50)


@pytest.fixture(scope="module")
def module_client():
    with _local_cluster() as cluster, distributed.Client(cluster) as connected:
        yield connected


@pytest.fixture
def client(module_client):
    """The module's client, each test starting with its two workers up and answering (what a test counts,
    such as buckets, two per worker, must not depend on the cluster's past). No test kills one of them."""
    _live_workers(module_client)
    return module_client


@pytest.fixture
def own_client():
    """A cluster of its own, for a test that kills a worker. A killed worker's nanny starts a replacement,
    but not dependably on a loaded machine: in full runs beside another, the replacement never arrived
    (Dask's log: the nanny closed; 1 of 2 workers after 60 s, still 1 after 300 s) and the module's
    cluster went on with one worker, so later tests counted other tasks and timed out waiting for two.
    The work of these tests finishes on the surviving worker; the cluster is then thrown away."""
    with _local_cluster() as cluster, distributed.Client(cluster) as connected:
        _live_workers(connected)
        yield connected


def _live_workers(client) -> None:
    """Return once the scheduler lists WORKERS workers and every one of them answers a call; until the
    scheduler has seen a killed worker go it may still be listed, and its replacement may not be yet."""
    deadline = time.monotonic() + LIVE_WORKERS_TIMEOUT
    while True:
        listed = set(client.scheduler_info(n_workers=-1)["workers"])
        if len(listed) == WORKERS:
            try:
                answered = set(client.run(os.getpid, workers=sorted(listed)))
            except Exception:  # one of them is gone: the scheduler is about to drop it
                answered = set()
            if answered == listed:
                return
        assert time.monotonic() < deadline, f"the cluster's workers were not back in {LIVE_WORKERS_TIMEOUT} s: {listed}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Qrels of 30 queries (q07 with no run line, q99 judged nowhere in the runs) and five runs of
    the same queries with different scores, ties included; plus a sixth query only in the runs."""
    folder = tmp_path_factory.mktemp("cluster")
    rng = random.Random(15)
    queries = [f"q{n:02d}" for n in range(30)]
    with open(folder / "qrels.txt", "w") as out:
        for q in queries:
            for d in range(20):
                out.write(f"{q} 0 d{d} {rng.choice([0, 0, 1, 2, -1])}\n")
    runs = []
    for r in range(5):
        path = folder / f"run{r}.txt"
        with open(path, "w") as out:
            for q in [*queries, "q77"]:
                if q == "q07":
                    continue
                for d in range(40):
                    out.write(f"{q} Q0 d{d} {d + 1} {rng.randint(0, 12) / 4} tag{r}\n")
        runs.append(str(path))
    return folder, runs


def _kill_on_first(marker: str, prefix: str, state: str):
    """A worker plugin that ends its worker process the first time a task of ``prefix`` reaches
    ``state`` ("executing": mid-task; "memory": holding a result others still need)."""

    class KillOnce(distributed.WorkerPlugin):
        def transition(self, key, start, finish, **kwargs):
            name = key if isinstance(key, str) else str(key)
            if finish == state and name.startswith(prefix) and not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(1)

    return KillOnce()


def test_five_runs_one_bad_line_give_the_same_table_plus_the_one_error(client, data):
    folder, runs = data
    bad = folder / "bad.txt"
    lines = open(runs[2]).read().splitlines()
    lines[41] = lines[41].replace(" tag2", "")  # five fields on line 42
    bad.write_text("\n".join(lines) + "\n")
    five = [runs[0], runs[1], str(bad), runs[3], runs[4]]
    good = [runs[0], runs[1], runs[3], runs[4]]
    address = client.scheduler.address
    for options in (["--format", "table"], ["--format", "json"], ["--format", "csv"], ["-q", "--format", "jsonl"],
                    ["-q", "-m", "all_trec", "--format", "trec"]):
        expected = invoke(*options, str(folder / "qrels.txt"), *good)
        got = invoke("--cluster", address, *options, str(folder / "qrels.txt"), *five)
        assert expected.exit_code == 0
        assert got.exit_code == 1
        assert got.stdout == expected.stdout
        if "trec" in options:  # several runs: each block opens with its runid line
            assert [line.split("\t")[2] for line in got.stdout.splitlines() if line.startswith("runid ")] == \
                ["tag0", "tag1", "tag3", "tag4"]
        errors = [line for line in got.stderr.splitlines() if line.startswith("Error:")]
        assert errors == [f"Error: {bad}:42: expected 6 columns (query_id Q0 doc_id rank score run_tag), got 5: "
                          f"{lines[41]!r}"]
        # the warnings of the good runs, in run order, as on one machine
        assert [w for w in got.stderr.splitlines() if w.startswith("Warning:")] == \
            [w for w in expected.stderr.splitlines() if w.startswith("Warning:")]


def test_library_warnings_of_a_run_on_a_cluster_name_it_once_as_on_one_machine(client, data, tmp_path):
    # before: "Warning: x.txt: x.txt: none of the ... retrieved ids appears in the qrels": the path twice
    folder, runs = data
    unjudged = tmp_path / "unjudged.txt"
    unjudged.write_text("q01 Q0 nowhere 1 1.0 t\n")
    expected = invoke(str(folder / "qrels.txt"), runs[0], str(unjudged))
    got = invoke("--cluster", client.scheduler.address, str(folder / "qrels.txt"), runs[0], str(unjudged))
    warned = [line for line in got.stderr.splitlines() if line.startswith("Warning:")]
    # the same lines (one machine says the library's warnings as they come, a cluster run by run)
    assert sorted(warned) == sorted(line for line in expected.stderr.splitlines() if line.startswith("Warning:"))
    assert any(line.startswith(f"Warning: {unjudged}: none of the 1 retrieved ids") for line in warned), warned
    assert not any(f"{unjudged}: {unjudged}" in line for line in warned)


def _trec_bytes(evaluation) -> str:
    """The `-q` trec output of one evaluation, the summary included."""
    return evaluation.render("trec", per_query=True)


def _single_machine_bytes(qrels, runs, measures) -> list[str]:
    """Each run's `-q` trec output from the in-memory path: what the cluster must print."""
    return [_trec_bytes(evaluate_tables(qrels, load_run(p), measures)) for p in runs]


def _all_trec_case(data, tmp_path):
    """(qrels, runs, measures, what one machine prints for each run, run 4 as Parquet partitions)
    with every trec_eval measure: the case the worker-failure tests evaluate."""
    folder, runs = data
    qrels = load_qrels(folder / "qrels.txt")
    measures = parse_measures(["all_trec"])
    expected = _single_machine_bytes(qrels, runs, measures)
    return qrels, runs, measures, expected, _parquet_partitions(runs[4], tmp_path, pieces=6)


def _parquet_partitions(run_path: str, folder, pieces: int) -> str:
    """The TREC run as Parquet partitions cut at arbitrary rows (queries span files), the rows
    shuffled: what a data platform writes. Fields are split here, not by the reader under test."""
    with open(run_path) as lines:
        rows = [line.split() for line in lines]
    random.Random(3).shuffle(rows)
    frame = pl.DataFrame({"query_id": [r[0] for r in rows], "Q0": [r[1] for r in rows], "doc_id": [r[2] for r in rows],
                          "rank": [int(r[3]) for r in rows], "score": [float(r[4]) for r in rows],
                          "run_tag": [r[5] for r in rows]})
    target = folder / "partitions"
    target.mkdir(exist_ok=True)
    size = -(-frame.height // pieces)
    for index in range(pieces):
        frame[index * size: (index + 1) * size].write_parquet(target / f"part-{index:03d}.parquet")
    frame.clear().write_parquet(target / "part-999.parquet")  # an empty partition, as writers leave them
    return str(target)


def test_a_parquet_partitioned_run_gives_the_bytes_of_its_trec_text(client, data, tmp_path):
    folder, runs = data
    partitions = _parquet_partitions(runs[0], tmp_path, pieces=7)
    qrels = str(folder / "qrels.txt")
    for options in (["-q", "-m", "all_trec"], ["-q", "-m", "all_trec", "--intersection"],
                    ["-c", "-l", "2", "-m", "all_trec"]):
        expected = invoke(*options, "--format", "trec", qrels, runs[0])
        got = invoke("--cluster", client.scheduler.address, *options, "--format", "trec", qrels, partitions)
        assert expected.exit_code == 0 and got.exit_code == 0, got.stderr
        assert got.stdout == expected.stdout
    assert "num_q                 \tall\t30\n" in expected.stdout  # q07 scored 0 and counted, q77 ignored


def test_trec_text_shards_give_the_bytes_of_the_whole_file(client, data, tmp_path):
    folder, runs = data
    lines = open(runs[1]).readlines()
    random.Random(4).shuffle(lines)
    shards = []
    for index in range(3):
        shards.append(str(tmp_path / f"shard{index}.txt"))
        with open(shards[-1], "w") as out:
            out.writelines(lines[index::3])
    last = "q03 Q0 dlast 1 0.5 last\n"  # the run tag is the last line's, as for one file
    with open(shards[-1], "a") as out:
        out.write(last)
    whole = tmp_path / "whole.txt"
    whole.write_text("".join(lines) + last)
    qrels = str(folder / "qrels.txt")
    expected = invoke("-q", "-m", "all_trec", "--format", "trec", qrels, str(whole))
    on_one_machine = invoke("--shards", "-q", "-m", "all_trec", "--format", "trec", qrels, *shards)
    on_cluster = invoke("--cluster", client.scheduler.address, "--shards", "-q", "-m", "all_trec", "--format", "trec",
                        qrels, *shards)
    assert "runid                 \tall\tlast\n" in expected.stdout
    assert on_one_machine.stdout == expected.stdout
    assert on_cluster.stdout == expected.stdout


def test_a_bad_row_in_one_partition_names_its_file_and_row(client, data, tmp_path):
    folder, runs = data
    partitions = _parquet_partitions(runs[0], tmp_path, pieces=3)
    frame = pl.read_parquet(os.path.join(partitions, "part-001.parquet"))
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 4).then(float("nan")).otherwise(pl.col("score"))
                               .alias("score"))
    frame.write_parquet(os.path.join(partitions, "part-001.parquet"))
    result = invoke("--cluster", client.scheduler.address, str(folder / "qrels.txt"), partitions)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {partitions}/part-001.parquet: row 5: score is NaN, which has no "
                                    "place in a ranking: {")


@pytest.mark.slow  # two command lines, each starting a cluster
def test_bad_input_in_a_split_run_is_one_error_line_not_a_worker_log(data, tmp_path):
    """A bad row (read by a split task) and a document listed in two partitions (found by a bucket's
    ranking) are answers, not failed tasks: with --cluster local:1, whose workers write to this
    stderr, the user sees the one error line, not Dask's "Compute Failed" log with a traceback."""
    import subprocess
    import sys

    folder, _ = data
    bad_row, twice = tmp_path / "bad_row", tmp_path / "twice"
    bad_row.mkdir()
    twice.mkdir()
    pl.DataFrame({"query_id": ["q01", "q02"], "doc_id": ["d1", "d2"], "score": [1.0, float("nan")]}).write_parquet(
        bad_row / "part-0.parquet")
    pl.DataFrame({"query_id": ["q01", "q02"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}).write_parquet(
        twice / "a.parquet")
    pl.DataFrame({"query_id": ["q01"], "doc_id": ["d1"], "score": [3.0]}).write_parquet(twice / "b.parquet")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for run, expected in (
            (bad_row, f"Error: {bad_row}/part-0.parquet: row 2: score is NaN, which has no place in a ranking: "
                      "{'query_id': 'q02', 'doc_id': 'd2', 'score': nan}\n"),
            (twice, f"Error: {twice}/b.parquet: row 1: document 'd1' listed twice for query 'q01' "
                    f"(first at {twice}/a.parquet: row 1)\n")):
        result = subprocess.run([sys.executable, "-m", "trec_rag_eval", "--cluster", "local:1", "--progress",
                                 str(folder / "qrels.txt"), str(run)], capture_output=True, text=True,
                                env={**os.environ, "PYTHONPATH": root}, timeout=SUBPROCESS_TIMEOUT)
        assert result.returncode == 1
        # besides the progress bar (tqdm's, closed before the error: "\r"-separated updates, then a newline)
        assert [line for line in re.split(r"[\r\n]", result.stderr) if line and not line.startswith("cluster:")] \
            == [expected.rstrip("\n")]
        assert result.stderr.endswith(expected)


def test_a_document_listed_twice_is_cited_as_on_one_machine(client, data, tmp_path):
    # its two rows go to one bucket on a worker, which holds neither the files nor the whole table: the
    # error names the lines of the shards (counted by hand: b.txt line 2, a.txt line 2) and the rows of a
    # run built in memory (3 and 1), as evaluate() on one machine does (tests/test_duplicates.py)
    import numpy as np

    from trec_rag_eval.tables import Run

    folder, _ = data
    qrels = load_qrels(folder / "qrels.txt")
    measures = parse_measures(["P@5"])
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("q01 Q0 d2 1 2 t\nq01 Q0 d1 2 1 t\n")
    second.write_text("q02 Q0 d9 1 1 t\nq01 Q0 d1 1 3 t\n")
    with pytest.raises(InputFormatError) as raised:
        evaluate_partitioned(qrels, [str(first), str(second)], measures, Settings(), cluster=client, buckets=3)
    assert str(raised.value) == f"{second}:2: document 'd1' listed twice for query 'q01' (first at {first}:2)"
    # one file cut into byte ranges (about 100 lines of 20 bytes each, ranges of 500 bytes): the pair in the
    # first and the last range, read by different tasks, cited at lines 1 and 101 of the whole file
    import trec_rag_eval.cluster.partitions as cluster_module

    whole = tmp_path / "whole.txt"
    whole.write_text("q01 Q0 d1 1 3 t\n" + "".join(f"q02 Q0 x{i:03d} 1 1 t\n" for i in range(99))
                     + "q01 Q0 d1 2 1 t\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cluster_module, "BYTES_PER_PIECE", 500)
        assert len(cluster_module._pieces(str(whole), "auto")[1]) > 2
        with pytest.raises(InputFormatError) as raised:
            evaluate_partitioned(qrels, str(whole), measures, Settings(), cluster=client, buckets=3)
    assert str(raised.value) == f"{whole}:101: document 'd1' listed twice for query 'q01' (first at line 1)"
    run = Run({"query_id": ["q01", "q02", "q01"], "doc_id": ["d1", "d9", "d1"], "score": np.array([3.0, 1.0, 2.0])},
              checked=True)  # a table's own columns, as a reader makes them: the repeat is left to the ranking
    with pytest.raises(InputFormatError) as raised:
        evaluate_partitioned(qrels, run, measures, Settings(), cluster=client, buckets=3)
    assert str(raised.value) == "<run>: row 3: document 'd1' listed twice for query 'q01' (first at row 1)"


def test_from_python_a_client_is_used_as_is_and_left_open(client, data):
    folder, runs = data
    qrels = load_qrels(folder / "qrels.txt")
    measures = parse_measures(["all_trec"])
    outcomes = evaluate_run_tasks(qrels, runs[:2], measures, Settings(), cluster=client)
    assert [o.label for o in outcomes] == runs[:2]
    for outcome, path in zip(outcomes, runs[:2], strict=True):
        alone = evaluate_tables(qrels, load_run(path), measures)
        assert _trec_bytes(outcome.evaluation) == _trec_bytes(alone)
    # an in-memory run, split here and evaluated by the workers
    run = load_run(runs[3])
    spread = evaluate_partitioned(qrels, run, measures, Settings(relevance_level=2), cluster=client, buckets=5)
    alone = evaluate_tables(qrels, run, measures, Settings(relevance_level=2))
    assert _trec_bytes(spread) == _trec_bytes(alone)
    assert client.status == "running"


def test_the_public_evaluate_takes_cluster(client, data, tmp_path):
    import trec_rag_eval as tre

    folder, runs = data
    qrels = str(folder / "qrels.txt")
    partitions = _parquet_partitions(runs[2], tmp_path, pieces=4)
    alone = _trec_bytes(tre.evaluate(qrels, runs[2], "all_trec", relevance_level=2))
    for run in (partitions, runs[2], [runs[2]], load_run(runs[2]).to_dict()):
        spread = tre.evaluate(qrels, run, "all_trec", cluster=client, relevance_level=2)
        lines = _trec_bytes(spread)
        if isinstance(run, dict):  # a dict has no run tag: the runid line differs, nothing else
            lines = lines.replace("runid                 \tall\trun\n", "runid                 \tall\ttag2\n")
        assert lines == alone
    assert client.status == "running"


@pytest.mark.slow  # a cluster of its own
@pytest.mark.parametrize("prefix, state, shuffle", [("trec-rag-eval-run-", "executing", None),
                                                    ("trec-rag-eval-read-", "memory", "pairs"),
                                                    ("trec-rag-eval-read-", "memory", "p2p")])
def test_a_worker_killed_mid_evaluation_does_not_change_the_result(own_client, data, tmp_path, prefix, state, shuffle):
    client = own_client
    qrels, runs, measures, expected, partitions = _all_trec_case(data, tmp_path)
    marker = str(tmp_path / "killed")
    client.register_plugin(_kill_on_first(marker, prefix, state), name=f"kill-{prefix}")
    if prefix == "trec-rag-eval-run-":
        outcomes = evaluate_run_tasks(qrels, runs, measures, Settings(), cluster=client)
        got = [_trec_bytes(o.evaluation) for o in outcomes]
        assert got == expected
    else:
        spread = evaluate_partitioned(qrels, partitions, measures, Settings(), cluster=client, shuffle=shuffle)
        assert _trec_bytes(spread) == expected[4]
    assert os.path.exists(marker)  # a worker did die mid-way


def test_chunk_ids_are_mapped_on_a_cluster_too(client, tmp_path):
    """q1 retrieves A through two chunks (A#1 3.0, A#2 2.0) and B#1 (1.0); q2 D#1 (2.0), C#1 (1.0).
    Judged: q1 A=1 B=0, q2 C=1. As documents: q1 A B -> P@2 = 1/2, RR 1; q2 D C -> P@2 = 1/2, RR 1/2:
    P@2 0.5, MRR 0.75 (A counted twice, q1's P@2 would be 1)."""
    import trec_rag_eval as tre

    qrels = {"q1": {"A": 1, "B": 0}, "q2": {"C": 1}}
    chunks = {"q1": {"A#1": 3.0, "A#2": 2.0, "B#1": 1.0}, "q2": {"D#1": 2.0, "C#1": 1.0}}
    pattern = r"^(.*)#\d+$"
    expected = {"P@2": 0.5, "MRR": 0.75}
    # a run in memory, from Python
    in_memory = tre.evaluate(qrels, chunks, ["P@2", "MRR"], cluster=client, doc_map=pattern)
    assert in_memory.summary == expected
    # a Parquet run on --cluster, as on one machine
    rows = [(q, d, s) for q, docs in chunks.items() for d, s in docs.items()]
    run = tmp_path / "chunks.parquet"
    pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row").write_parquet(run)
    from_file = tre.evaluate(qrels, str(run), ["P@2", "MRR"], cluster=client, doc_map=pattern)
    assert from_file.summary == expected
    # and what the mapping did is kept, as on one machine: 5 chunk rows -> 4 documents, A#2 merged into A
    for evaluation in (in_memory, from_file):
        assert evaluation.collapse is not None
        assert (evaluation.collapse.rows_in, evaluation.collapse.rows_out, evaluation.collapse.merged) == (5, 4, 1)
    judged = tmp_path / "qrels.txt"
    judged.write_text("q1 0 A 1\nq1 0 B 0\nq2 0 C 1\n")
    for cluster in ([], ["--cluster", client.scheduler.address]):
        result = invoke(*cluster, "--doc-id-pattern", pattern, "-m", "P.2", "-m", "recip_rank", "--format", "trec",
                        str(judged), str(run))
        assert result.exit_code == 0, result.stderr
        assert result.stdout.splitlines() == ["recip_rank            \tall\t0.7500",  # trec_eval's order
                                              "P_2                   \tall\t0.5000"]


def _lose_the_first_data_sent(monkeypatch, client, marker: str) -> None:
    """The first ``scatter`` leaves its data on one worker (as Dask's active memory manager leaves
    scattered data once no task waits for it elsewhere), and that worker dies at once: Dask cannot
    recompute scattered data, so every task that needs it is cancelled, not retried."""
    real = client.scatter

    def scatter(data, **kwargs):
        sent = real(data, **{**kwargs, "broadcast": False})
        if not os.path.exists(marker):
            open(marker, "w").close()
            holders = {worker for workers in client.who_has(sent).values() for worker in workers}
            client.run(os._exit, 1, workers=sorted(holders), on_error="ignore")
            # the loss is an event to wait for, not a delay: the scheduler has dropped the worker
            deadline = time.monotonic() + LIVE_WORKERS_TIMEOUT
            while holders & set(client.scheduler_info(n_workers=-1)["workers"]):
                assert time.monotonic() < deadline, f"the scheduler still lists {holders} after they died"
                time.sleep(0.05)
        return sent

    monkeypatch.setattr(client, "scatter", scatter)


@pytest.mark.slow  # a cluster of its own
@pytest.mark.parametrize("shape", ["runs", "partitions", "in memory"])
def test_a_worker_lost_with_the_data_sent_to_it_does_not_change_the_result(own_client, data, tmp_path, monkeypatch,
                                                                          shape):
    client = own_client
    qrels, runs, measures, expected, partitions = _all_trec_case(data, tmp_path)
    marker = str(tmp_path / "lost")
    _lose_the_first_data_sent(monkeypatch, client, marker)
    if shape == "runs":
        outcomes = evaluate_run_tasks(qrels, runs, measures, Settings(), cluster=client)
        assert [o.error for o in outcomes] == [None] * 5
        assert [_trec_bytes(o.evaluation) for o in outcomes] == expected
    else:
        run = partitions if shape == "partitions" else load_run(runs[4])
        spread = evaluate_partitioned(qrels, run, measures, Settings(), cluster=client)
        assert _trec_bytes(spread) == expected[4]
    assert os.path.exists(marker)  # a worker did die holding the data


def test_bad_cluster_values_are_usage_errors(data):
    folder, runs = data
    result = invoke("--cluster", "local:0", str(folder / "qrels.txt"), runs[0])
    assert result.exit_code == 2
    assert result.stderr == "Error: --cluster local:0: expected local:N with N, the number of worker processes, >= 1\n"
    with pytest.raises(InputFormatError):
        evaluate_partitioned(load_qrels(folder / "qrels.txt"), str(folder / "absent.parquet"), parse_measures(None),
                             Settings(), cluster="local:1")


def test_progress_counts_the_tasks(client, data, tmp_path):
    folder, runs = data
    address = client.scheduler.address
    result = invoke("--cluster", address, "--progress", "-m", "P.5", str(folder / "qrels.txt"), *runs[:2])
    assert result.exit_code == 0
    # tqdm's bar, as every other progress of the tool
    assert "cluster:   0%|" in result.stderr and "cluster: 100%|" in result.stderr and "2/2 [" in result.stderr
    partitions = _parquet_partitions(runs[0], tmp_path, pieces=3)  # 3 pieces read, 4 buckets (2 per worker)
    result = invoke("--cluster", address, "--progress", "-m", "P.5", str(folder / "qrels.txt"), partitions)
    assert "cluster: 100%|" in result.stderr and f"{3 + 2 * WORKERS}/{3 + 2 * WORKERS} [" in result.stderr


def test_options_that_cannot_go_with_shards_say_so(data):
    folder, runs = data
    for option, expected in (("--stream", "Error: --stream reads one run in pieces on this machine: not with "
                                          "--cluster or --shards\n"),
                             ("--crosscheck", "Error: --crosscheck reads each run file as a whole run: not with "
                                              "--shards\n")):
        result = invoke("--shards", option, str(folder / "qrels.txt"), *runs[:2])
        assert (result.exit_code, result.stderr) == (2, expected)


def test_without_the_extra_the_error_gives_the_install_line(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)
    with pytest.raises(MissingDependencyError) as info, connect("local:1"):
        pass
    assert str(info.value) == "this feature needs the package 'distributed': pip install 'trec-rag-eval[dask]'"


@pytest.mark.slow  # a script starting a cluster
def test_local_workers_that_cannot_start_say_why_from_a_script_without_the_main_guard(data, tmp_path):
    # each worker process imports the script, whose unguarded call starts processes while they boot
    import subprocess
    import sys

    folder, runs = data
    script = tmp_path / "sweep.py"
    script.write_text("import trec_rag_eval as tre\n"
                      "from trec_rag_eval.errors import TrecRagEvalError\n"
                      "try:\n"
                      f"    tre.evaluate({str(folder / 'qrels.txt')!r}, {runs[0]!r}, 'P@5', cluster='local:1')\n"
                      "except TrecRagEvalError as err:\n"
                      "    print('Error:', err)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # the worker process refuses at once, before any scheduler or process of its own: nothing of distributed's
    # on stderr (a nanny that failed to start logged its traceback there, and at times hung); the script's own
    # process goes on, as its workers start
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=GUARD_TIMEOUT,
                            env={**os.environ, "PYTHONPATH": root}, cwd=tmp_path)
    assert result.stdout.startswith("Error: cannot start the 1 local worker process(es) of local:1 (this process "
                                    "is a worker process starting"), result.stderr
    assert 'call this under `if __name__ == "__main__":`' in result.stdout.splitlines()[0]
    assert len(result.stdout.splitlines()) == 1 and result.returncode == 0
    assert "distributed" not in result.stderr and "Traceback" not in result.stderr, result.stderr

    # uncaught, the worker process dies booting; the script's own call then says why, exit 1
    script.write_text("import trec_rag_eval as tre\n"
                      f"tre.evaluate({str(folder / 'qrels.txt')!r}, {runs[0]!r}, 'P@5', cluster='local:1')\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=GUARD_TIMEOUT,
                            env={**os.environ, "PYTHONPATH": root}, cwd=tmp_path)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("trec_rag_eval.cluster.ClusterError: cannot start the 1 local worker process(es) of "
                           "local:1 ("), result.stderr
    assert 'call this under `if __name__ == "__main__":`' in last


@pytest.mark.slow  # a command line starting its own cluster
def test_three_runs_one_bad_give_the_same_output_errors_and_status_with_and_without_a_cluster(data, tmp_path):
    """One rule for a bad run among several, on every path: the others are evaluated and written, the
    error follows, exit 1. Both commands run as processes, so a worker's log would show on stderr."""
    import subprocess
    import sys

    folder, runs = data
    bad = tmp_path / "bad.txt"
    lines = open(runs[1]).read().splitlines()
    lines[9] = lines[9].replace(" tag1", "")  # five fields on line 10
    bad.write_text("\n".join(lines) + "\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outputs = {}
    for where in ([], ["--cluster", "local:1"]):
        result = subprocess.run([sys.executable, "-m", "trec_rag_eval", *where, "-q", "-m", "all_trec",
                                 str(folder / "qrels.txt"), runs[0], str(bad), runs[2]], capture_output=True,
                                text=True, env={**os.environ, "PYTHONPATH": root}, timeout=SUBPROCESS_TIMEOUT)
        outputs[bool(where)] = result
    here, there = outputs[False], outputs[True]
    assert (here.returncode, there.returncode) == (1, 1)
    assert there.stdout == here.stdout
    assert there.stderr.splitlines() == here.stderr.splitlines()
    # the two good runs are written, in run order (each block opens with its run's tag), then the one error
    assert [line.split("\t")[2] for line in here.stdout.splitlines() if line.startswith("runid ")] == ["tag0", "tag2"]
    assert here.stderr.splitlines()[-1] == (f"Error: {bad}:10: expected 6 columns (query_id Q0 doc_id rank score "
                                            f"run_tag), got 5: {lines[9]!r}")
    assert not any(line.startswith("Traceback") for line in there.stderr.splitlines())


def test_qrels_given_by_path_are_read_by_a_task_not_sent(client, data, tmp_path, monkeypatch):
    """A qrels file is read on a worker by a task (which Dask can compute again), never scattered; the
    numbers are those of one machine. Qrels in memory are still sent."""
    from trec_rag_eval import api
    from trec_rag_eval.tables import Qrels

    folder, runs = data
    qrels_path = str(folder / "qrels.txt")
    qrels, _, measures, expected, partitions = _all_trec_case(data, tmp_path)
    real, sent = client.scatter, []

    def scatter(data, **kwargs):
        sent.extend(type(item).__name__ for item in (data if isinstance(data, list) else [data]))
        return real(data, **kwargs)

    monkeypatch.setattr(client, "scatter", scatter)
    outcomes = list(api.evaluate_many(qrels_path, runs[:3], ["all_trec"], order="trec", cluster=client))
    assert [_trec_bytes(o.evaluation) for o in outcomes] == expected[:3]
    spread = api.evaluate(qrels_path, partitions, ["all_trec"], order="trec", cluster=client)
    assert _trec_bytes(spread) == expected[4]
    assert Qrels.__name__ not in sent
    [outcome] = api.evaluate_many(qrels, runs[:1], ["all_trec"], order="trec", cluster=client)  # in memory: sent
    assert _trec_bytes(outcome.evaluation) == expected[0]
    assert sent.count(Qrels.__name__) == 1


@pytest.mark.slow  # a cluster of its own
def test_a_worker_lost_holding_the_qrels_read_by_a_task_costs_no_resubmission(own_client, data, tmp_path,
                                                                              monkeypatch):
    """The worker that read the qrels dies as soon as they are in its memory: Dask reads them again on
    the other worker (a task's result can be recomputed, scattered data cannot), so nothing is submitted
    again: with a single attempt allowed, the sweep still gives one machine's bytes."""
    import functools

    import trec_rag_eval.cluster.run_tasks as cluster_module
    from trec_rag_eval.service.spread import _judgments_table

    client = own_client
    folder, runs = data
    qrels, _, measures, expected, _ = _all_trec_case(data, tmp_path)
    monkeypatch.setattr(cluster_module, "LOST_DATA_ATTEMPTS", 1)
    marker = str(tmp_path / "killed")
    client.register_plugin(_kill_on_first(marker, "trec-rag-eval-qrels-", "memory"), name="kill-qrels")
    loader = functools.partial(_judgments_table, str(folder / "qrels.txt"), None, None, None)
    outcomes = evaluate_run_tasks(qrels, runs, measures, Settings(), cluster=client, qrels_from=loader)
    assert [o.error for o in outcomes] == [None] * 5
    assert [_trec_bytes(o.evaluation) for o in outcomes] == expected
    assert os.path.exists(marker)  # the worker did die holding the qrels


class _HoldRun(distributed.WorkerPlugin):
    """Holds the reading (and so the evaluation) of the run file ``path`` on the worker's task thread (not its
    event loop, which goes on reporting the other tasks) until ``marker`` exists, at most ``bound`` seconds (so
    that a path that gathers everything fails the test instead of hanging it), then writes ``marker.left``."""

    def __init__(self, path: str, marker: str, bound: float):
        self.path, self.marker, self.bound = path, marker, bound

    def setup(self, worker):
        import trec_rag_eval.io.loading as loading

        self.real = real = loading.load_run_report
        path, marker, bound = self.path, self.marker, self.bound

        def held(run_path, *args, **kwargs):
            if run_path == path:
                deadline = time.monotonic() + bound
                while not os.path.exists(marker) and time.monotonic() < deadline:
                    time.sleep(0.05)
                open(marker + ".left", "w").close()  # what the test checks: the hold is over
            return real(run_path, *args, **kwargs)

        loading.load_run_report = held

    def teardown(self, worker):
        import trec_rag_eval.io.loading as loading

        loading.load_run_report = self.real


def test_outcomes_of_many_runs_are_given_as_they_are_done_not_all_at_once(client, data, tmp_path):
    """The first run's outcome is given while the last run is still held on its worker: the cluster
    path streams in run order, as the single machine does."""
    from trec_rag_eval.cluster import iter_run_tasks

    qrels, runs, measures, expected, _ = _all_trec_case(data, tmp_path)
    marker = str(tmp_path / "release")
    client.register_plugin(_HoldRun(runs[2], marker, LIVE_WORKERS_TIMEOUT), name="hold-run-2")
    try:
        outcomes = iter_run_tasks(qrels, runs[:3], measures, Settings(), cluster=client)
        first = next(outcomes)
        assert not os.path.exists(marker + ".left")  # run 2 is still held: the first came before all were done
        assert _trec_bytes(first.evaluation) == expected[0]
        open(marker, "w").close()
        assert [_trec_bytes(o.evaluation) for o in outcomes] == expected[1:3]
    finally:
        open(marker, "w").close()
        client.unregister_worker_plugin("hold-run-2")


class _DieWhenAskedForData(distributed.WorkerPlugin):
    """Ends its worker the first time it is asked for a run's result (``get_data``): the client's gather then
    fails ("Couldn't gather 1 keys, rescheduling", distributed's log), and Dask computes the result again."""

    def __init__(self, marker: str):
        self.marker = marker

    def setup(self, worker):
        real = worker.handlers["get_data"]
        marker = self.marker

        async def get_data(comm, keys, who=None, serializers=None):  # the handler's own signature
            if any(str(key).startswith("trec-rag-eval-run-") for key in keys) and not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(1)
            return await real(comm, keys, who=who, serializers=serializers)

        worker.handlers["get_data"] = get_data


@pytest.mark.slow  # a cluster of its own
def test_a_worker_lost_while_its_result_is_gathered_logs_nothing(own_client, data, tmp_path):
    # docs/scaling-out.md: no log line of distributed's reaches the command's stderr; the result is still right
    import logging

    client = own_client
    folder, runs = data
    marker = str(tmp_path / "asked")
    client.register_plugin(_DieWhenAskedForData(marker), name="die-when-asked")
    said: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record)

    keep = Keep(logging.DEBUG)
    for name in ("distributed.client", "distributed"):
        logging.getLogger(name).addHandler(keep)
    try:
        args = ["-m", "P.5", "-m", "map", "--format", "trec", str(folder / "qrels.txt"), *runs[:2]]
        got = invoke("--cluster", client.scheduler.address, *args)
    finally:
        for name in ("distributed.client", "distributed"):
            logging.getLogger(name).removeHandler(keep)
    assert os.path.exists(marker)  # a worker did die when asked for a result
    assert got.exit_code == 0, got.stderr
    assert got.stdout == invoke(*args).stdout
    assert [r.getMessage() for r in said if r.name.startswith("distributed.client") and r.levelno >= logging.INFO] == []


@pytest.mark.parametrize(("judgments", "measure", "says"), [
    ("prefs", "P@10", "P@10 scores relevance judgments"),
    ("trec", "prefs_simp", "prefs_simp scores preference judgments"),
    ("trec", "P_avgjg@10", "P_avgjg@10 scores judgment groups"),
])
def test_run_tasks_refuse_a_measure_of_another_kind_of_judgments_before_any_task(judgments, measure, says):
    # each task evaluates what it is given, so the measures are checked against the judgments once, before the
    # cluster is even reached (the address below has nothing listening): P@10 over preferences would be a
    # number about nothing, and the other way round the kernels could not run
    from pathlib import Path

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    qrels = load_qrels(str(fixtures / ("prefs.txt" if judgments == "prefs" else "qrels.txt")), judgments)
    with pytest.raises(UsageError, match=says):
        evaluate_run_tasks(qrels, [str(fixtures / "run_bm25.txt")], [measure], Settings(), cluster="tcp://127.0.0.1:9")
