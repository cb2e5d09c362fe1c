"""Runs and qrels given by URL (``io.sources``, through fsspec) give the bytes their local copies give.

The URLs are fsspec's ``memory://`` file system, in this process: the same bytes are written under a
local path and under a URL, and every command is run on both. On a cluster, the workers must open the
URL themselves: with ``memory://`` that takes workers in this process (a LocalCluster of threads), and
with ``file://`` a LocalCluster of processes (slow: a cluster of its own). The expected output is
always the local path's, whose numbers the trec_eval goldens and the other tests establish."""

from __future__ import annotations

import functools
import gzip
import io
import os
import shutil
import tempfile
import uuid

import fsspec
import polars as pl
import pytest
from conftest import golden_path, invoke

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io import sources

FIXTURES = "fixtures"


@pytest.fixture
def memory():
    """A fresh folder of fsspec's memory file system, as a URL; removed afterwards."""
    root = f"memory://trec-rag-eval-{uuid.uuid4().hex[:8]}"
    fs = fsspec.filesystem("memory")
    yield root
    if fs.exists(root):
        fs.rm(root, recursive=True)


@functools.cache
def _run() -> str:
    """The golden run.ties made plain: its query 999 (which the golden qrels do not judge) dropped, so
    the pair gives no warning (whose text names the input, a path or a URL, and would differ by that
    alone); its lines grouped by query, keeping their order within a query, so it can be read in
    pieces; one run tag. Its ties and scores, which decide the numbers, are kept."""
    with open(golden_path("run.ties"), "rb") as handle:
        rows = [line.split(b" ") for line in handle.read().splitlines() if not line.startswith(b"999 ")]
    order = {query: i for i, query in enumerate(dict.fromkeys(row[0] for row in rows))}
    rows.sort(key=lambda row: order[row[0]])  # stable: a query's lines keep their order
    path = os.path.join(tempfile.mkdtemp(prefix="trec-rag-eval-urls-"), "run.ties")
    with open(path, "wb") as handle:
        handle.write(b"".join(b" ".join([*row[:5], b"ties"]) + b"\n" for row in rows))
    return path


def _put(url: str, data: bytes) -> str:
    fsspec.filesystem("memory").pipe(url, data)
    return url


def _copy(local: str, url: str) -> str:
    with open(local, "rb") as handle:
        return _put(url, handle.read())


def _same(args_local: list[str], args_url: list[str], names: dict[str, str] | None = None):
    """Run both command lines; they succeed and print the same bytes (a run's label given as its URL
    replaced by its local path, where the output names it); the URL's result is returned."""
    expected = invoke(*args_local)
    got = invoke(*args_url)
    assert expected.exit_code == 0, expected.stderr
    assert got.exit_code == 0, got.stderr
    stdout, stderr = got.stdout, got.stderr
    for url, path in (names or {}).items():
        stdout, stderr = stdout.replace(url, path), stderr.replace(url, path)
    assert stdout == expected.stdout
    assert stderr == expected.stderr
    return got


FORMATS = (["-q", "-m", "all_trec"], ["--format", "table"], ["-q", "--format", "table"], ["--format", "json"])


@pytest.mark.parametrize("options", FORMATS, ids=["trec-q-all_trec", "table", "table-q", "json"])
def test_trec_qrels_and_run_by_url_give_the_bytes_of_the_local_files(memory, table_form, options):
    qrels, run = golden_path("qrels.graded"), _run()
    qrels_url, run_url = _copy(qrels, f"{memory}/qrels.test"), _copy(run, f"{memory}/results.test")
    got = _same([*options, qrels, run], [*options, qrels_url, run_url])
    if options[-1] == "all_trec":
        assert "runid                 \tall\tties\n" in got.stdout


def test_gzip_files_by_url_give_the_bytes_of_the_local_files(memory, tmp_path, table_form):
    qrels, run = golden_path("qrels.graded"), _run()
    local_qrels, local_run = tmp_path / "qrels.test.gz", tmp_path / "results.gz"  # gzip told by its bytes
    for source, target in ((qrels, local_qrels), (run, local_run)):
        with open(source, "rb") as handle:
            target.write_bytes(gzip.compress(handle.read()))
    qrels_url, run_url = _copy(str(local_qrels), f"{memory}/qrels.test.gz"), _copy(str(local_run), f"{memory}/results")
    for options in (["-q", "-m", "all_trec"], ["--format", "json"]):
        _same([*options, str(local_qrels), str(local_run)], [*options, qrels_url, run_url])
    # read in pieces (the path a run larger than the memory takes), through gzip
    _same(["--stream", "--chunk-size", "1", "-q", "-m", "all_trec", str(local_qrels), str(local_run)],
          ["--stream", "--chunk-size", "1", "-q", "-m", "all_trec", qrels_url, run_url])


def _partitions(run_path: str, pieces: int) -> list[tuple[str, bytes]]:
    """A TREC run as Parquet partitions (query_id, doc_id, score, run_tag), each query whole in one."""
    rows = [line.split() for line in open(run_path) if line.strip()]
    frame = pl.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                          "score": [float(r[4]) for r in rows], "run_tag": [r[5] for r in rows]})
    queries = frame["query_id"].unique(maintain_order=True).to_list()
    out = []
    for index in range(pieces):
        part = frame.filter(pl.col("query_id").is_in(queries[index::pieces]))
        buffer = io.BytesIO()
        part.write_parquet(buffer)
        out.append((f"part-{index}.parquet", buffer.getvalue()))
    return out


def test_a_partitioned_parquet_run_by_url_gives_the_bytes_of_the_local_folder(memory, tmp_path):
    qrels = golden_path("qrels.graded")
    folder = tmp_path / "run.parquet"
    folder.mkdir()
    for name, data in _partitions(_run(), 3):
        (folder / name).write_bytes(data)
        _put(f"{memory}/run.parquet/{name}", data)
    # what a data platform leaves beside its partitions is skipped, in a folder and under a URL alike
    for extra in ("_SUCCESS", ".part-0.parquet.crc"):
        (folder / extra).write_bytes(b"not parquet")
        _put(f"{memory}/run.parquet/{extra}", b"not parquet")
    qrels_url = _copy(qrels, f"{memory}/qrels.test")
    for options in (["-q", "-m", "all_trec"], ["--format", "table"]):
        _same([*options, qrels, str(folder)], [*options, qrels_url, f"{memory}/run.parquet"])
    # the partitioned run gives the bytes of the TREC text it came from
    text = invoke("-q", "-m", "all_trec", qrels, _run())
    assert invoke("-q", "-m", "all_trec", qrels_url, f"{memory}/run.parquet/").stdout == text.stdout


def test_json_dataset_and_results_by_url_give_the_bytes_of_the_local_files(memory):
    dataset, results = f"{FIXTURES}/eval_dataset_tutorial.json", f"{FIXTURES}/results_tutorial.json"
    dataset_url = _copy(dataset, f"{memory}/eval_dataset_tutorial.json")
    results_url = _copy(results, f"{memory}/results_tutorial.json")
    for options in ([], ["-q", "--format", "json"], ["-m", "all_trec"]):
        got = _same([*options, dataset, results], [*options, dataset_url, results_url])
    assert "results_tutorial" in got.stdout  # the run tag is the file's name, under a URL as on disk


def test_a_folder_of_runs_by_url_is_every_run_file_in_it_in_name_order(memory, tmp_path):
    qrels = f"{FIXTURES}/qrels.txt"
    local = tmp_path / "runs"
    local.mkdir()
    for name in ("run_hybrid.txt", "run_bm25.txt"):
        shutil.copy(f"{FIXTURES}/{name}", local / name)
        _copy(f"{FIXTURES}/{name}", f"{memory}/runs/{name}")
    (local / ".hidden").write_text("not a run\n")
    _put(f"{memory}/runs/.hidden", b"not a run\n")
    _put(f"{memory}/runs/sub/inner.txt", b"not read: sub-folders are not\n")
    (local / "sub").mkdir()
    (local / "sub" / "inner.txt").write_text("not read: sub-folders are not\n")
    qrels_url = _copy(qrels, f"{memory}/qrels.txt")
    names = {f"{memory}/runs/": f"{local}/"}
    for options in (["-q", "-m", "all_trec"], ["--format", "table"], ["--format", "csv"]):
        _same([*options, qrels, f"{local}/"], [*options, qrels_url, f"{memory}/runs/"], names)
    listed = invoke("--format", "table", qrels_url, f"{memory}/runs")
    assert f"run: {memory}/runs/run_bm25.txt" in listed.stdout
    assert f"run: {memory}/runs/run_hybrid.txt" in listed.stdout
    assert listed.stdout.index("run_bm25.txt") < listed.stdout.index("run_hybrid.txt")


def test_python_evaluate_takes_urls(memory):
    import trec_rag_eval

    qrels, run = f"{FIXTURES}/qrels.txt", f"{FIXTURES}/run_bm25.txt"
    expected = trec_rag_eval.evaluate(qrels, run, ["P@5", "nDCG@10"])
    got = trec_rag_eval.evaluate(_copy(qrels, f"{memory}/q.txt"), _copy(run, f"{memory}/r.txt"), ["P@5", "nDCG@10"])
    assert got.summary == expected.summary


# -- errors ------------------------------------------------------------------------------------------

def _one_error_line(result) -> str:
    assert result.exit_code != 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_a_missing_url_is_one_error_line_naming_it(memory):
    qrels = _copy(f"{FIXTURES}/qrels.txt", f"{memory}/qrels.txt")
    assert _one_error_line(invoke(qrels, f"{memory}/nope.txt")) == f"Error: {memory}/nope.txt: no such file"
    assert _one_error_line(invoke(f"{memory}/nope.txt", f"{FIXTURES}/run_bm25.txt")) == (
        f"Error: {memory}/nope.txt: no such file")


def test_an_unknown_protocol_is_one_error_line_saying_what_is_expected():
    line = _one_error_line(invoke(f"{FIXTURES}/qrels.txt", "nosuchproto://bucket/run.txt"))
    assert line.startswith("Error: nosuchproto://bucket/run.txt: unknown protocol nosuchproto://: expected a local "
                           "path or a URL")


def test_a_protocol_whose_package_is_missing_names_the_package_to_install(monkeypatch):
    from fsspec.registry import known_implementations

    # a protocol fsspec knows, whose package is not installed (as s3:// without s3fs)
    monkeypatch.setitem(known_implementations, "faraway",
                        {"class": "trec_rag_eval_no_such_package.FarawayFileSystem",
                         "err": "Install trec_rag_eval_no_such_package to access faraway"})
    line = _one_error_line(invoke(f"{FIXTURES}/qrels.txt", "faraway://bucket/run.txt"))
    assert line == ("Error: faraway://bucket/run.txt: reading faraway:// URLs needs the package "
                    "trec_rag_eval_no_such_package: pip install trec_rag_eval_no_such_package (or pip install "
                    "'trec-rag-eval[cloud]')")


def test_s3_without_s3fs_says_to_install_it(monkeypatch):
    import sys

    from fsspec.registry import _registry

    # s3fs as if it were not installed (the test extra installs it for the fake S3 store's tests)
    monkeypatch.setitem(sys.modules, "s3fs", None)
    monkeypatch.delitem(_registry, "s3", raising=False)
    line = _one_error_line(invoke(f"{FIXTURES}/qrels.txt", "s3://bucket/run.txt"))
    assert line == ("Error: s3://bucket/run.txt: reading s3:// URLs needs the package s3fs: pip install s3fs "
                    "(or pip install 'trec-rag-eval[cloud]')")


def test_without_fsspec_a_url_says_to_install_the_cloud_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "fsspec.core", None)  # import fsspec.core fails
    with pytest.raises(InputFormatError, match=r"^memory://x/run.txt: reading a URL needs the package fsspec: "
                                               r"pip install 'trec-rag-eval\[cloud\]'"):
        sources.exists("memory://x/run.txt")


def test_a_bad_line_under_a_url_is_named_by_the_url_and_its_line(memory, table_form):
    qrels = _copy(f"{FIXTURES}/qrels.txt", f"{memory}/qrels.txt")
    good = open(f"{FIXTURES}/run_bm25.txt", "rb").read()
    bad = _put(f"{memory}/bad.txt", good + b"q1 Q0 d9 1 high bm25\n")
    line_no = good.count(b"\n") + 1
    assert _one_error_line(invoke(qrels, bad)) == (
        f"Error: {bad}:{line_no}: score must be a number, got 'high': 'q1 Q0 d9 1 high bm25'")
    zipped = _put(f"{memory}/bad.gz", gzip.compress(good + b"q1 Q0 d9 1 high bm25\n"))
    assert _one_error_line(invoke(qrels, zipped)).startswith(f"Error: {zipped}:{line_no}: score must be a number")


def test_a_bad_row_in_a_partition_under_a_url_names_the_partition(memory):
    qrels = _copy(f"{FIXTURES}/qrels.txt", f"{memory}/qrels.txt")
    frame = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, float("nan")]})
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    _put(f"{memory}/run/part-0.parquet", buffer.getvalue())
    assert _one_error_line(invoke(qrels, f"{memory}/run")) == (
        f"Error: {memory}/run/part-0.parquet: row 2: score is NaN, which has no place in a ranking: "
        "{'query_id': 'q1', 'doc_id': 'd2', 'score': nan}")


def test_an_output_given_as_a_url_is_refused_before_any_work(memory, tmp_path):
    qrels = _copy(f"{FIXTURES}/qrels.txt", f"{memory}/qrels.txt")
    line = _one_error_line(invoke("-o", f"{memory}/out.txt", qrels, f"{FIXTURES}/run_bm25.txt"))
    assert line.startswith(f"Error: cannot write {memory}/out.txt: is a URL: outputs are written to local paths")
    assert not fsspec.filesystem("memory").exists(f"{memory}/out.txt")


def test_a_file_url_input_is_never_replaced_by_an_output(tmp_path):
    run = tmp_path / "run.txt"
    shutil.copy(f"{FIXTURES}/run_bm25.txt", run)
    before = run.read_bytes()
    result = invoke("--force", "-o", str(run), f"{FIXTURES}/qrels.txt", f"file://{run}")
    assert _one_error_line(result).startswith(f"Error: the output {run} is also an input ({run})")
    assert run.read_bytes() == before


def test_location_keeps_local_paths_on_os_and_tells_urls_apart():
    assert sources.is_url("s3://bucket/run.txt") and sources.is_url("memory://x")
    assert sources.is_url("file:///tmp/run.txt")
    assert not sources.is_url("irds:msmarco-passage/trec-dl-2019")  # ir_datasets, not a URL
    assert not sources.is_url("C:\\runs\\run.txt") and not sources.is_url("c://runs")  # a drive letter
    assert not sources.is_url("runs/run.txt") and not sources.is_url("-")
    assert sources.local_path("file:///tmp/run.txt") == "/tmp/run.txt"
    assert sources.local_path("memory://x/run.txt") is None
    assert sources.join("s3://bucket/runs/", "a.txt") == "s3://bucket/runs/a.txt"
    assert sources.basename("s3://bucket/runs/") == "runs"


# -- on a cluster -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def threads_cluster():
    """A LocalCluster whose two workers are threads of this process: they see its memory:// files."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                                  host="127.0.0.1", scheduler_port=0, dashboard_address=":0",
                                  silence_logs=50) as cluster, distributed.Client(cluster) as client:
        yield client


def test_on_a_cluster_urls_give_the_bytes_of_the_local_files(memory, tmp_path, threads_cluster):
    address = threads_cluster.scheduler.address
    qrels, run = golden_path("qrels.graded"), _run()
    qrels_url, run_url = _copy(qrels, f"{memory}/qrels.test"), _copy(run, f"{memory}/runs/results.test")
    _copy(f"{FIXTURES}/run_bm25.txt", f"{memory}/runs/run_bm25.txt")
    local = tmp_path / "runs"
    local.mkdir()
    shutil.copy(run, local / "results.test")
    shutil.copy(f"{FIXTURES}/run_bm25.txt", local / "run_bm25.txt")
    options = ["-q", "-m", "all_trec"]
    # one run (split by query over the workers), a folder of runs (one task each), Parquet partitions
    _same([*options, qrels, run], ["--cluster", address, *options, qrels_url, run_url])
    _same([*options, qrels, f"{local}/"], ["--cluster", address, *options, qrels_url, f"{memory}/runs/"],
          {f"{memory}/runs/": f"{local}/"})
    for name, data in _partitions(run, 3):
        _put(f"{memory}/run.parquet/{name}", data)
    _same([*options, qrels, run], ["--cluster", address, *options, qrels_url, f"{memory}/run.parquet"])


def test_on_a_cluster_a_missing_url_fails_alone(memory, threads_cluster):
    address = threads_cluster.scheduler.address
    qrels = _copy(f"{FIXTURES}/qrels.txt", f"{memory}/qrels.txt")
    good = _copy(f"{FIXTURES}/run_bm25.txt", f"{memory}/bm25.txt")
    result = invoke("--cluster", address, "-m", "P@5", "--format", "csv", qrels, good, f"{memory}/gone.txt")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == f"Error: {memory}/gone.txt: no such file"
    assert "bm25" in result.stdout


@pytest.mark.slow  # a cluster of worker processes of its own
def test_file_urls_are_opened_by_worker_processes(tmp_path):
    qrels, run = golden_path("qrels.graded"), _run()
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(run, folder / "results.test")
    shutil.copy(f"{FIXTURES}/run_bm25.txt", folder / "run_bm25.txt")
    options = ["-q", "-m", "all_trec"]
    _same([*options, qrels, str(folder)],
          ["--cluster", "local:2", *options, f"file://{qrels}", f"file://{folder}"],
          {f"file://{folder}/": f"{folder}/"})


def test_on_a_cluster_the_client_lists_a_folder_of_runs_and_opens_none_of_them(memory, threads_cluster, monkeypatch):
    import threading

    from fsspec.implementations.memory import MemoryFileSystem

    opened: list[tuple[str, str]] = []
    original = MemoryFileSystem._open

    def recording(self, path, *args, **kwargs):
        opened.append((threading.current_thread().name, path))
        return original(self, path, *args, **kwargs)

    qrels = _copy(f"{FIXTURES}/qrels.txt", f"{memory}/qrels.txt")
    for name in ("run_bm25.txt", "run_hybrid.txt"):
        _copy(f"{FIXTURES}/{name}", f"{memory}/runs/{name}")
    monkeypatch.setattr(MemoryFileSystem, "_open", recording)  # the files are written: what is read from now
    result = invoke("--cluster", threads_cluster.scheduler.address, "-m", "P@5", qrels, f"{memory}/runs/")
    assert result.exit_code == 0, result.stderr
    here = threading.current_thread().name
    runs_opened_here = [path for thread, path in opened if thread == here and "/runs/" in path]
    runs_opened_by_workers = {path.rsplit("/", 1)[1] for thread, path in opened if thread != here and "/runs/" in path}
    assert runs_opened_here == []
    assert runs_opened_by_workers == {"run_bm25.txt", "run_hybrid.txt"}


def test_the_other_commands_take_urls_as_evaluate_does(memory, tmp_path):
    for name in ("qrels.txt", "run_bm25.txt", "run_hybrid.txt", "eval_dataset_tutorial.json"):
        _copy(f"{FIXTURES}/{name}", f"{memory}/{name}")
    local = {f"{memory}/": f"{FIXTURES}/"}
    _same(["compare", f"{FIXTURES}/qrels.txt", f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt"],
          ["compare", f"{memory}/qrels.txt", f"{memory}/run_bm25.txt", f"{memory}/run_hybrid.txt"], local)
    _same(["fuse", f"{FIXTURES}/run_bm25.txt", f"{FIXTURES}/run_hybrid.txt", "-o", str(tmp_path / "a.txt")],
          ["fuse", f"{memory}/run_bm25.txt", f"{memory}/run_hybrid.txt", "-o", str(tmp_path / "b.txt")],
          {**local, str(tmp_path / "b.txt"): str(tmp_path / "a.txt")})
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
    _same(["convert", f"{FIXTURES}/eval_dataset_tutorial.json", "--qrels", str(tmp_path / "a.qrels")],
          ["convert", f"{memory}/eval_dataset_tutorial.json", "--qrels", str(tmp_path / "b.qrels")],
          {str(tmp_path / "b."): str(tmp_path / "a.")})
    assert (tmp_path / "a.qrels").read_bytes() == (tmp_path / "b.qrels").read_bytes()
    assert _one_error_line(invoke("compare", f"{memory}/qrels.txt", f"{memory}/run_bm25.txt", f"{memory}/gone.txt")
                           ) == f"Error: {memory}/gone.txt: no such file"


def _row_grouped(frame: pl.DataFrame, rows_per_group: int) -> bytes:
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(frame.to_arrow(), buffer, row_group_size=rows_per_group)
    return buffer.getvalue()


def test_a_slice_of_rows_of_a_parquet_file_by_url_reads_its_row_groups_and_gives_the_local_rows(memory, tmp_path):
    from trec_rag_eval.io.parquet import read_parquet_run_files

    frame = pl.DataFrame({"query_id": [f"q{i // 7}" for i in range(100)], "doc_id": [f"d{i}" for i in range(100)],
                          "score": [float(i % 13) for i in range(100)], "run_tag": ["t"] * 100})
    data = _row_grouped(frame, 16)  # row groups of 16 rows: 0-15, 16-31, ...
    local = tmp_path / "run.parquet"
    local.write_bytes(data)
    url = _put(f"{memory}/run.parquet", data)
    for window in ((0, 16), (10, 30), (16, 16), (95, 40), (99, 1), (33, 64)):
        expected = read_parquet_run_files([str(local)], str(local), rows=window)
        got = read_parquet_run_files([url], url, rows=window)
        assert got.frame.equals(expected.frame), window
        assert got.frame["doc_id"].to_list() == [f"d{i}" for i in range(window[0], min(100, sum(window)))]
    # an error in a slice is numbered in the whole file, as for the local file
    bad = frame.with_columns(pl.when(pl.col("doc_id") == "d40").then(float("nan")).otherwise(pl.col("score"))
                             .alias("score"))
    url = _put(f"{memory}/bad.parquet", _row_grouped(bad, 16))
    with pytest.raises(InputFormatError, match=r"bad.parquet: row 41: score is NaN"):
        read_parquet_run_files([url], url, rows=(33, 16))


def test_on_a_cluster_a_large_parquet_file_by_url_is_read_in_slices(memory, tmp_path, threads_cluster, monkeypatch):
    from trec_rag_eval.io.parquet import _Remote

    monkeypatch.setattr("trec_rag_eval.cluster.partitions.ROWS_PER_PIECE", 300)  # workers: threads here
    slices = []
    read_rows = _Remote.rows

    def counted(self, columns, window):
        slices.append(window)
        return read_rows(self, columns, window)

    monkeypatch.setattr(_Remote, "rows", counted)
    qrels, run = golden_path("qrels.graded"), _run()
    rows = [line.split() for line in open(run) if line.strip()]
    frame = pl.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                          "score": [float(r[4]) for r in rows], "run_tag": [r[5] for r in rows]})
    url = _put(f"{memory}/run.parquet", _row_grouped(frame, 128))
    options = ["-q", "-m", "all_trec"]
    _same([*options, qrels, run], ["--cluster", threads_cluster.scheduler.address, *options,
                                   _copy(qrels, f"{memory}/qrels.test"), url])
    assert sorted(slices) == [(start, min(300, frame.height - start)) for start in range(0, frame.height, 300)]
    assert len(slices) > 3  # several slices, each across row groups


class _Counted(fsspec.AbstractFileSystem):
    """An object store in this process that counts the bytes each thread fetches from each object, as
    a remote store's file system fetches them: by ranges, several megabytes at a time unless told."""

    protocol = "counted"
    objects: dict[str, bytes] = {}
    fetched: list[tuple[str, str, int]] = []  # (thread, path, bytes)

    def _open(self, path, mode="rb", block_size=None, autocommit=True, cache_options=None, **kwargs):
        return _CountedFile(self, path, mode, block_size=block_size or 8 << 20, size=len(self.objects[path]),
                            cache_type=kwargs.get("cache_type", "readahead"))

    def info(self, path, **kwargs):
        path = self._strip_protocol(path)
        if path in self.objects:
            return {"name": path, "size": len(self.objects[path]), "type": "file"}
        if any(name.startswith(path.rstrip("/") + "/") for name in self.objects):
            return {"name": path, "size": 0, "type": "directory"}
        raise FileNotFoundError(path)

    def ls(self, path, detail=True, **kwargs):
        prefix = self._strip_protocol(path).rstrip("/") + "/"
        names = sorted({prefix + name[len(prefix):].split("/")[0] for name in self.objects if name.startswith(prefix)})
        entries = [self.info(name) for name in names]
        return entries if detail else [entry["name"] for entry in entries]


class _CountedFile(fsspec.spec.AbstractBufferedFile):
    def _fetch_range(self, start, end):
        import threading

        data = _Counted.objects[self.path][start:end]
        _Counted.fetched.append((threading.current_thread().name, self.path, len(data)))
        return data


@pytest.fixture
def counted():
    fsspec.register_implementation("counted", _Counted, clobber=True)
    _Counted.objects.clear()
    _Counted.fetched.clear()
    yield _Counted
    _Counted.objects.clear()
    _Counted.fetched.clear()


def test_telling_the_format_of_a_run_by_url_fetches_only_its_first_bytes(counted):
    from trec_rag_eval.io.loading import HEAD_BYTES, detect

    lines = [f"q{i // 1000} Q0 d{i} {i % 1000 + 1} {1000 - i % 1000} tag\n" for i in range(200_000)]
    counted.objects["runs/big.txt"] = "".join(lines).encode()
    assert len(counted.objects["runs/big.txt"]) > 80 * HEAD_BYTES
    assert detect("counted://runs/big.txt") == "trec"
    assert sum(size for _, _, size in counted.fetched) <= 2 * HEAD_BYTES


def test_on_a_cluster_the_client_fetches_only_the_first_bytes_of_a_lone_run(counted, threads_cluster):
    import threading

    from trec_rag_eval.io.loading import HEAD_BYTES

    qrels = golden_path("qrels.graded")
    lines = open(_run(), "rb").read()
    counted.objects["qrels.test"] = open(qrels, "rb").read()
    counted.objects["runs/results.test"] = lines * 1  # one run, split by query over the workers
    options = ["-q", "-m", "all_trec"]
    _same([*options, qrels, _run()],
          ["--cluster", threads_cluster.scheduler.address, *options, "counted://qrels.test",
           "counted://runs/results.test"])
    here = threading.current_thread().name
    by_client = sum(size for thread, path, size in counted.fetched if thread == here and path.startswith("runs/"))
    by_workers = sum(size for thread, path, size in counted.fetched if thread != here and path.startswith("runs/"))
    assert by_client <= 2 * HEAD_BYTES  # its format told from its first bytes (twice at most), nothing more
    assert by_workers >= len(lines)


def test_topics_and_the_llm_judgments_beside_qrels_by_url_are_read_as_beside_a_local_file(memory, tmp_path):
    # qrels: q1 judges d1 (human, 1) and d2 (a hole the LLM graded 2); q2 judges d3 only; topics add q3
    qrels = "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\n"
    sidecar = "query_id\tdoc_id\tgrade\tkind\tmodel\nq1\td2\t2\thole\tm\n"
    run = "q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"
    topics = "q1\tfirst\nq2\tsecond\nq3\tthird, judged nowhere\n"
    for name, text in (("judged.qrels", qrels), ("judged.qrels.llm.tsv", sidecar), ("run.txt", run),
                       ("topics.tsv", topics)):
        (tmp_path / name).write_text(text)
        _put(f"{memory}/{name}", text.encode())
    options = ["-m", "P@1", "-m", "num_q", "--format", "csv", "--judgments", "human", "--topics"]
    got = _same([*options, str(tmp_path / "topics.tsv"), str(tmp_path / "judged.qrels"), str(tmp_path / "run.txt")],
                [*options, f"{memory}/topics.tsv", f"{memory}/judged.qrels", f"{memory}/run.txt"],
                {f"{memory}/": f"{tmp_path}/"})
    # by hand: without the LLM's hole, q1's first result d2 is unjudged: P@1 = (0 + 1 + 0) / 3 queries
    assert "0.3333" in got.stdout and "judgments: human" in got.stderr


def test_on_a_cluster_a_large_trec_file_by_url_is_read_in_byte_ranges(memory, threads_cluster, monkeypatch):
    from trec_rag_eval.io.trec import pieces

    monkeypatch.setattr("trec_rag_eval.cluster.partitions.BYTES_PER_PIECE", 16 << 10)  # workers: threads here
    ranges = []
    read_range = pieces.read_run_range

    def counted(path, start, end):
        ranges.append((path, start, end))
        return read_range(path, start, end)

    monkeypatch.setattr(pieces, "read_run_range", counted)
    qrels, run = golden_path("qrels.graded"), _run()
    url = _copy(run, f"{memory}/results.test")
    options = ["-q", "-m", "all_trec"]
    _same([*options, qrels, run], ["--cluster", threads_cluster.scheduler.address, *options,
                                   _copy(qrels, f"{memory}/qrels.test"), url])
    assert len(ranges) >= 4 and {path for path, _, _ in ranges} == {url}


def test_a_store_that_fails_is_one_error_line_naming_the_url_and_what_to_check(counted, monkeypatch):
    def refused(self, path, **kwargs):
        raise PermissionError(13, "Access Denied")

    monkeypatch.setattr(_Counted, "info", refused)
    line = _one_error_line(invoke(f"{FIXTURES}/qrels.txt", "counted://bucket/run.txt"))
    assert line == ("Error: counted://bucket/run.txt: cannot read: permission denied (PermissionError: [Errno 13] "
                    "Access Denied); check the credentials counted:// uses on this machine (and on every worker of "
                    "a cluster)")

    def broken(self, path, **kwargs):
        raise ConnectionError("the store hung up")

    monkeypatch.setattr(_Counted, "info", broken)
    line = _one_error_line(invoke(f"{FIXTURES}/qrels.txt", "counted://bucket/run.txt"))
    assert line == ("Error: counted://bucket/run.txt: cannot read: ConnectionError: the store hung up; check the URL, "
                    "and the credentials counted:// uses on this machine (and on every worker of a cluster)")


def test_beir_data_by_url_reads_as_the_local_folder(memory, tmp_path):
    from trec_rag_eval.io.loading import load_qrels

    queries = '{"_id": "q1", "text": "one"}\n{"_id": "q2", "text": "two"}\n{"_id": "q9", "text": "x"}\n'
    files = {"queries.jsonl": queries,
             "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n",
             "qrels/dev.tsv": "query-id\tcorpus-id\tscore\nq1\td9\t1\n"}
    for name, text in files.items():
        (tmp_path / "beir" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "beir" / name).write_text(text)
        _put(f"{memory}/beir/{name}", text.encode())
    run = "q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"
    (tmp_path / "run.txt").write_text(run)
    _put(f"{memory}/run.txt", run.encode())
    for given in ("beir", "beir/qrels/test.tsv"):
        local, url = load_qrels(str(tmp_path / given)), load_qrels(f"{memory}/{given}")
        assert url.topics == local.topics == {"q1": "one", "q2": "two"}  # the judged queries' texts
        assert url.source == f"{memory}/beir/qrels/test.tsv"
        assert url.frame.equals(local.frame)
        _same(["-q", "-m", "all_trec", str(tmp_path / given), str(tmp_path / "run.txt")],
              ["-q", "-m", "all_trec", f"{memory}/{given}", f"{memory}/run.txt"])
    _put(f"{memory}/two/qrels/a.tsv", b"q1\td1\t1\n")
    _put(f"{memory}/two/qrels/b.tsv", b"q1\td1\t1\n")
    assert _one_error_line(invoke(f"{memory}/two", f"{memory}/run.txt")) == (
        f"Error: {memory}/two: a BEIR folder needs qrels/test.tsv or a single qrels/*.tsv (found: a.tsv, b.tsv); pass "
        "the TSV file itself")


def test_a_corpus_by_url_counts_the_same_context_tokens(memory):
    corpus = f"{FIXTURES}/corpus_fr.jsonl"
    qrels, run = f"{FIXTURES}/qrels.txt", f"{FIXTURES}/run_bm25.txt"
    got = _same(["--corpus", corpus, "--format", "csv", qrels, run],
                ["--corpus", _copy(corpus, f"{memory}/corpus.jsonl"), "--format", "csv", qrels, run])
    assert "tokens" in got.stdout.lower()
