"""One run split over a cluster: a TREC text file cut into byte ranges (each task reads the lines that
start in its range), and the rows moved to their query's bucket by Dask's shuffle, in a number of tasks
linear in the pieces. The reference is always the single-machine path of the same command; the task
counts are counted by the scheduler itself (a plugin that sees every task go through it)."""

from __future__ import annotations

import os
import random

import distributed  # the 'dask' extra, which the 'test' extra installs
import polars as pl
import pytest
from conftest import invoke

import trec_rag_eval.cluster.partitions as cluster_module
from trec_rag_eval.cluster import evaluate_partitioned
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.io.loading import load_qrels
from trec_rag_eval.io.trec.pieces import read_run_range
from trec_rag_eval.measures.requests import parse_measures

WORKERS = 2
SIX = "expected 6 columns (query_id Q0 doc_id rank score run_tag), got 5"


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0", silence_logs=50) as local, \
            distributed.Client(local) as connected:
        yield connected


@pytest.fixture(scope="module")
def counted(client):
    """The module's client, its scheduler counting the tasks it is given (``_CountTasks``)."""
    client.register_plugin(_CountTasks())
    return client


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Qrels of 40 queries (q05 never retrieved) and a run of 39 of them plus q90 (judged nowhere),
    30 documents each, its lines shuffled (every query spans the whole file), with ties, comment
    lines, a blank line and CRLF line ends here and there: 1,170 result lines."""
    folder = tmp_path_factory.mktemp("shuffle")
    rng = random.Random(28)
    queries = [f"q{n:02d}" for n in range(40)]
    with open(folder / "qrels.txt", "w") as out:
        for q in queries:
            for d in range(25):
                out.write(f"{q} 0 d{d} {rng.choice([0, 0, 1, 2, -1])}\n")
    lines = [f"{q} Q0 d{d} {d + 1} {rng.randint(0, 20) / 4} tag\n"
             for q in [*queries, "q90"] if q != "q05" for d in range(30)]
    rng.shuffle(lines)
    for at in (100, 500, 900):
        lines[at] = lines[at].replace("\n", "\r\n")
    lines[300:300] = ["# a comment line\n", "\n"]
    lines[-1] = lines[-1].replace(" tag\n", " last\n")  # the run tag is the last line's
    run = folder / "run.txt"
    run.write_text("".join(lines))
    return folder, str(run), lines


@pytest.fixture
def small_pieces(monkeypatch):
    """Byte ranges of 2,000 bytes: the 40 KB run is cut into 20 or so pieces."""
    monkeypatch.setattr(cluster_module, "BYTES_PER_PIECE", 2000)


# -- byte ranges, without a cluster -------------------------------------------------------------

def _rows(run) -> list[tuple[str, str, float]]:
    return [] if run is None else list(run.frame.iter_rows())


def test_every_line_is_read_by_exactly_one_byte_range_wherever_the_cuts_fall(tmp_path):
    """Cut at every byte of a file with a byte-order mark, CRLF ends, a comment, a blank line and no
    final line end: the ranges together hold the file's 5 result lines once each, in order, and
    count its 7 line ends."""
    lines = [b"\xef\xbb\xbfq1 Q0 a 1 3.5 t1\r\n", b"q1 Q0 b 2 2 t1\n", b"# note\n", b"\n", b"q2 Q0 c 1 1 t2\r\n",
             b"q2 Q0 dd 2 0.5 t3\n", b"q3 Q0 e 1 -1 t3"]
    path = tmp_path / "run.txt"
    path.write_bytes(b"".join(lines))
    size = path.stat().st_size
    expected = [("q1", "a", 3.5), ("q1", "b", 2.0), ("q2", "c", 1.0), ("q2", "dd", 0.5), ("q3", "e", -1.0)]
    for cut in range(size + 1):
        for cuts in ([0, cut, size], [0, cut // 2, cut, size]):
            read = [read_run_range(str(path), start, end) for start, end in zip(cuts, cuts[1:], strict=False)]
            assert [row for run, _ in read for row in _rows(run)] == expected, cuts
            assert sum(count for _, count in read) == 6, cuts
            assert [run.run_tag for run, _ in read if run is not None][-1] == "t3"


def test_a_bad_line_is_numbered_in_its_range_and_renumbered_in_the_file(tmp_path):
    from trec_rag_eval.errors import InputFormatError
    from trec_rag_eval.io.trec.pieces import renumbered

    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 1 t\nq1 Q0 b 2 1 t\nq1 Q0 c 3 t\n")  # line 3: five fields
    start = len("q1 Q0 a 1 1 t\n")
    with pytest.raises(InputFormatError) as info:
        read_run_range(str(path), start, path.stat().st_size)
    assert info.value.line_no == 2  # the second line of the range
    assert str(renumbered(info.value, 1)) == f"{path}:3: {SIX}: 'q1 Q0 c 3 t'"


# -- byte ranges on a cluster -------------------------------------------------------------------

@pytest.mark.parametrize("limit", [cluster_module.PAIRS_LIMIT, 0])  # a task per (piece, bucket) pair; p2p
def test_one_trec_file_is_cut_into_byte_ranges_and_gives_the_bytes_of_one_machine(client, data, small_pieces,
                                                                                 monkeypatch, limit):
    monkeypatch.setattr(cluster_module, "PAIRS_LIMIT", limit)
    folder, run, _ = data
    qrels = str(folder / "qrels.txt")
    pieces = cluster_module._pieces(run, "auto")[1]
    assert len(pieces) == -(-os.path.getsize(run) // 2000)  # about 40 KB in ranges of 2,000 bytes
    spans = [p.span for p in pieces]  # equal ranges of at most 2,000 bytes, end to end over the file
    assert spans[0][0] == 0 and spans[-1][1] == os.path.getsize(run)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert max(end - start for start, end in spans) <= 2000
    printed = []
    for options in (["-q", "-m", "all_trec"], ["-c", "-l", "2", "-q", "-m", "all_trec"],
                    ["-q", "-m", "all_trec", "--intersection"]):
        expected = invoke(*options, "--format", "trec", qrels, run)
        printed.append(expected.stdout)
        got = invoke("--cluster", client.scheduler.address, *options, "--format", "trec", qrels, run)
        assert expected.exit_code == 0 and got.exit_code == 0, got.stderr
        assert got.stdout == expected.stdout
        assert sorted(got.stderr.splitlines()) == sorted(expected.stderr.splitlines())
    # 39 queries retrieved, q05 scored 0 and counted, q90 ignored; the last line's tag
    assert "num_q                 \tall\t40\n" in printed[0]
    assert "num_q                 \tall\t39\n" in printed[2]
    assert "runid                 \tall\tlast\n" in printed[0]


def test_a_gzip_file_cannot_be_cut_and_is_one_piece(data, tmp_path, small_pieces):
    import gzip

    _, run, _ = data
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(open(run, "rb").read()))
    assert os.path.getsize(packed) > 2000
    [piece] = cluster_module._pieces(str(packed), "auto")[1]
    assert piece.span is None


@pytest.mark.parametrize("at", [0, 577, 1171])  # the first line, one in the middle, the last
def test_a_bad_line_of_a_file_in_byte_ranges_is_named_by_its_line_number_in_the_file(client, data, tmp_path,
                                                                                      small_pieces, at):
    folder, _, lines = data
    bad = list(lines)
    bad[at] = bad[at].replace(" tag", "").replace(" last", "")  # five fields on line at + 1
    path = tmp_path / "bad.txt"
    path.write_text("".join(bad))
    number = at + 1
    shown = bad[at].rstrip("\r\n")
    result = invoke("--cluster", client.scheduler.address, str(folder / "qrels.txt"), str(path))
    assert (result.exit_code, result.stderr) == (1, f"Error: {path}:{number}: {SIX}: {shown!r}\n")
    assert len(cluster_module._pieces(str(path), "auto")[1]) > 10
    # as on one machine
    assert invoke(str(folder / "qrels.txt"), str(path)).stderr == result.stderr


def test_a_document_listed_twice_in_two_byte_ranges_is_the_error_of_one_machine(client, data, tmp_path,
                                                                                small_pieces):
    folder, _, lines = data
    twice = list(lines)
    first = next(i for i, line in enumerate(lines) if line.startswith("q12 Q0 d3 "))
    twice.append(lines[first].replace(" tag", " other"))  # the same (q12, d3) ~40 KB further on
    path = tmp_path / "twice.txt"
    path.write_text("".join(twice))
    result = invoke("--cluster", client.scheduler.address, str(folder / "qrels.txt"), str(path))
    where = first + 1  # the list holds every line of the file, the comment and the blank one too
    assert (result.exit_code, result.stderr) == (
        1, f"Error: {path}:{len(twice)}: document 'd3' listed twice for query 'q12' (first at line {where})\n")
    assert invoke(str(folder / "qrels.txt"), str(path)).stderr == result.stderr


def test_a_truncated_last_line_is_warned_of_with_its_line_number_in_the_file(client, data, tmp_path, small_pieces):
    folder, _, lines = data
    cut = list(lines)
    cut[-1] = cut[-1].replace(" last\n", " la")  # cut inside its run tag, no line end: 'la' after 'tag'
    path = tmp_path / "cut.txt"
    path.write_text("".join(cut))
    result = invoke("--cluster", client.scheduler.address, "-m", "P.5", str(folder / "qrels.txt"), str(path))
    alone = invoke("-m", "P.5", str(folder / "qrels.txt"), str(path))
    said = [line for line in result.stderr.splitlines() if "looks truncated" in line]
    assert said == [line for line in alone.stderr.splitlines() if "looks truncated" in line]
    assert said and said[0].startswith(f"Warning: {path}:{len(cut)}: the file looks truncated")
    assert result.stdout == alone.stdout


# -- the shuffle: tasks linear in the pieces -----------------------------------------------------

class _CountTasks(distributed.diagnostics.plugin.SchedulerPlugin):
    """On the scheduler: every task key it is given to run (a graph's tasks and data sent by scatter)."""

    name = "count-tasks"

    def __init__(self):
        self.keys = set()

    def update_graph(self, scheduler, *, keys, tasks=None, **kwargs):
        self.keys.update(tasks or ())


def _tasks_for(client, qrels, measures, pieces: int, folder, shuffle: str = "p2p") -> int:
    """How many tasks the scheduler ran to evaluate a run of ``pieces`` Parquet files, with a bucket
    for every 4 pieces (the buckets grow with the data, as the default does)."""
    rng = random.Random(pieces)
    folder.mkdir()
    for index in range(pieces):
        rows = [(f"q{rng.randrange(40):02d}", f"p{index}d{k}", rng.random()) for k in range(5)]
        pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row").write_parquet(
            folder / f"part-{index:04d}.parquet")
    client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins["count-tasks"].keys.clear())
    evaluate_partitioned(qrels, str(folder), measures, Settings(), cluster=client, buckets=pieces // 4,
                         shuffle=shuffle)
    return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.plugins["count-tasks"].keys))


@pytest.mark.slow  # 128 pieces through the shuffle: the growth of the task count, not a path the others miss
def test_the_tasks_of_a_split_run_grow_linearly_with_its_pieces(counted, data, tmp_path):
    """With 8, 32 and 128 pieces (and 2, 8, 32 buckets), the scheduler runs a + b x pieces tasks (7 per
    piece: reading it, handing its rows and what the client must know of it, and Dask's steps that
    send the rows; 2 per bucket: gathering its rows, evaluating it; the qrels and the shuffle's
    barrier): 62, 242 and 962. A task per (piece, bucket) pair, as the split once made (2P + PB + B),
    would give 34, 328 and 4,384 for the pieces and buckets alone."""
    client = counted
    folder, _, _ = data
    qrels = load_qrels(folder / "qrels.txt")
    measures = parse_measures(["P.5", "map"])
    counts = {p: _tasks_for(client, qrels, measures, p, tmp_path / f"p{p}") for p in (8, 32, 128)}
    slope = (counts[32] - counts[8]) / 24
    assert counts[128] - counts[32] == slope * 96, counts  # a straight line through the three
    assert slope <= 8, counts


def test_by_default_a_task_per_pair_only_while_the_pairs_are_few(counted, data, tmp_path, monkeypatch):
    """A task per (piece, bucket) pair while there are at most PAIRS_LIMIT pairs (2P + PB + B, plus
    the qrels and the table of buckets: 8 pieces, 2 buckets: 16 + 16 + 2 + 2 = 36), the p2p shuffle
    beyond (62, as in the test above)."""
    client = counted
    folder, _, _ = data
    qrels = load_qrels(folder / "qrels.txt")
    measures = parse_measures(["P.5"])
    assert _tasks_for(client, qrels, measures, 8, tmp_path / "a", shuffle="auto") == 36
    monkeypatch.setattr(cluster_module, "PAIRS_LIMIT", 15)
    assert _tasks_for(client, qrels, measures, 8, tmp_path / "b", shuffle="auto") == 62
