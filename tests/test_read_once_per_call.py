"""Standard input and pipes are read once per CALL of the library, not once per process.

An input that can be read only once (``-``, a named pipe) is kept while one call reads it several times
(format detection, the reader, duplicate citing), and dropped when the call ends
(``trec_rag_eval.call_scope``). Kept for the process, ``tre.evaluate(qrels, "-")`` called twice in one
notebook or server gave the first input's numbers the second time: a silently wrong number.

Oracles, worked by hand on QRELS (q1: a relevant, b not; q2: c and d relevant):
- RUN_A ranks q1: a, b and q2: x, c -> P@1 = (1 + 0) / 2 = 0.5, P@2 = (1/2 + 1/2) / 2 = 0.5;
- RUN_B ranks q1: a and q2: c -> P@1 = (1 + 1) / 2 = 1.0, P@2 = (1/2 + 1/2) / 2 = 0.5;
- OTHER ranks q1: b and q2: d -> P@1 = (0 + 1) / 2 = 0.5.
"""

from __future__ import annotations

import io
import os
import sys
import warnings

import pytest
from conftest import feed_fifo, invoke, unblock_fifo

import trec_rag_eval as tre
from trec_rag_eval.call_scope import current_call, one_call, per_call

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 1\n"
RUN_A = "1 Q0 a 1 2.0 A\n1 Q0 b 2 1.0 A\n2 Q0 x 1 3.0 A\n2 Q0 c 2 1.0 A\n"
RUN_B = "1 Q0 a 1 2.0 B\n2 Q0 c 1 3.0 B\n"
OTHER = "1 Q0 b 1 2.0 O\n2 Q0 d 1 3.0 O\n"


@pytest.fixture
def stdin(monkeypatch):
    """``feed(text)``: standard input now holds ``text`` (as a pipe would, bytes under a text layer)."""

    def feed(text: str) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))

    return feed


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "other.txt").write_text(OTHER)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "other.txt")


def test_two_evaluations_read_their_own_standard_input(stdin, files):
    qrels, _ = files
    stdin(RUN_A)
    assert tre.evaluate(qrels, "-", ["P@1"]).summary["P@1"] == 0.5
    stdin(RUN_B)
    assert tre.evaluate(qrels, "-", ["P@1"]).summary["P@1"] == 1.0


def test_standard_input_left_empty_is_the_usual_error_the_second_time(stdin, files):
    qrels, _ = files
    stdin(RUN_A)
    assert tre.evaluate(qrels, "-", ["P@1"]).summary["P@1"] == 0.5
    with pytest.raises(tre.InputFormatError, match="^-: empty file$"):  # read again: nothing is left
        tre.evaluate(qrels, "-", ["P@1"])


def test_qrels_from_standard_input_twice(stdin, tmp_path):
    run = tmp_path / "run.txt"
    run.write_text(RUN_A)
    stdin(QRELS)
    assert tre.evaluate("-", str(run), ["P@1"]).summary["P@1"] == 0.5
    # now only a is relevant, for q1: q1 P@1 = 1, q2 (no relevant document) is not evaluated -> 1.0
    stdin("1 0 a 1\n")
    with pytest.warns(tre.TrecRagEvalWarning, match="1 query in the run but not in the qrels"):
        assert tre.evaluate("-", str(run), ["P@1"]).summary["P@1"] == 1.0


def test_topics_from_standard_input_twice(stdin, files):
    qrels, other = files
    # topics add their queries with no judgment: 3 queries, then 4 (num_q counts them)
    stdin("3\tc\n")
    with pytest.warns(tre.TrecRagEvalWarning, match="1 qrels query missing from the run, scored 0: 3$"):
        assert tre.evaluate(qrels, other, ["num_q"], topics="-").summary["num_q"] == 3
    stdin("3\tc\n4\td\n")
    with pytest.warns(tre.TrecRagEvalWarning, match="2 qrels queries missing from the run, scored 0: 3, 4$"):
        assert tre.evaluate(qrels, other, ["num_q"], topics="-").summary["num_q"] == 4


@pytest.mark.parametrize("options", [{"jobs": 1}, {"jobs": 2}, {"stream": True}], ids=["one", "threads", "stream"])
def test_evaluate_many_reads_its_own_standard_input(stdin, files, options):
    qrels, other = files
    for run, expected in ((RUN_A, 0.5), (RUN_B, 1.0)):
        stdin(run)
        outcomes = list(tre.evaluate_many(qrels, ["-", other], ["P@1"], **options))
        assert [o.error for o in outcomes] == [None, None]
        assert [o.evaluation.summary["P@1"] for o in outcomes] == [expected, 0.5]


def test_within_one_call_standard_input_is_read_once(stdin, files):
    # named twice, on two threads: the same bytes for both, read once (nothing left for a second read)
    qrels, _ = files
    stdin(RUN_A)
    outcomes = list(tre.evaluate_many(qrels, ["-", "-"], ["P@1"], jobs=2))
    assert [o.evaluation.summary["P@1"] for o in outcomes] == [0.5, 0.5]
    assert sys.stdin.buffer.read() == b""


def test_an_unfinished_evaluate_many_leaves_no_scope_to_its_caller(stdin, files):
    # between two items of the generator, the caller's own calls read standard input anew
    qrels, other = files
    stdin(RUN_A)
    outcomes = tre.evaluate_many(qrels, ["-", other], ["P@1"], jobs=1)
    assert next(outcomes).evaluation.summary["P@1"] == 0.5
    assert current_call() is None
    stdin(RUN_B)
    assert tre.evaluate(qrels, "-", ["P@1"]).summary["P@1"] == 1.0
    assert next(outcomes).evaluation.summary["P@1"] == 0.5
    outcomes.close()


def test_iter_evaluate_twice(stdin, files):
    qrels, _ = files
    for run, first in ((RUN_A, 1.0), (RUN_B, 1.0)):  # q1 is right in both; q2 differs
        stdin(run)
        values = {r.query_id: r.values["P@1"] for r in tre.iter_evaluate(qrels, "-", ["P@1"])}
        assert values == {"1": first, "2": 0.0 if run == RUN_A else 1.0}


def test_compare_twice(stdin, files):
    qrels, other = files
    stdin(RUN_A)
    first = tre.compare(qrels, {"s": "-", "o": other}, ["P@1"], baseline="o").to_dict()["s"]
    stdin(RUN_B)
    second = tre.compare(qrels, {"s": "-", "o": other}, ["P@1"], baseline="o").to_dict()["s"]
    assert first == {"1": {"P@1": 1.0}, "2": {"P@1": 0.0}}
    assert second == {"1": {"P@1": 1.0}, "2": {"P@1": 1.0}}


def test_crosscheck_twice(stdin, files):
    qrels, _ = files
    ours = []
    for run in (RUN_A, RUN_B):
        stdin(run)
        [verdict] = tre.crosscheck(qrels, "-", ["P@1"]).to_dict()["verdicts"]
        ours.append(verdict["ours"])
    assert ours == [0.5, 1.0]


def test_validate_twice(stdin, files, tmp_path):
    qrels, _ = files
    reference = tmp_path / "reference.txt"
    reference.write_text("P_1\tall\t0.5000\n")  # RUN_A's P@1; RUN_B's is 1.0
    stdin(RUN_A)
    assert tre.validate(qrels, "-", str(reference)).ok
    stdin(RUN_B)
    report = tre.validate(qrels, "-", str(reference))
    assert not report.ok and len(report.mismatches) == 1


def test_fuse_twice(stdin, files):
    _, other = files
    fused = []
    for run in (RUN_A, RUN_B):
        stdin(run)
        fused.append(sorted(tre.fuse(["-", other], "rrf").run.to_dict()["1"]))
    assert fused == [["a", "b"], ["a", "b"]]  # q1: a and b in both; q2 tells them apart
    stdin(RUN_A)
    assert sorted(tre.fuse(["-", other], "rrf").run.to_dict()["2"]) == ["c", "d", "x"]
    stdin(RUN_B)
    assert sorted(tre.fuse(["-", other], "rrf").run.to_dict()["2"]) == ["c", "d"]


def test_read_run_and_read_qrels_twice(stdin):
    stdin(RUN_A)
    assert tre.read_run("-").to_dict()["2"] == {"x": 3.0, "c": 1.0}
    stdin(RUN_B)
    assert tre.read_run("-").to_dict()["2"] == {"c": 3.0}
    stdin(QRELS)
    assert tre.read_qrels("-").to_dict()["1"] == {"a": 1, "b": 0}
    stdin("1 0 b 2\n")
    assert tre.read_qrels("-").to_dict() == {"1": {"b": 2}}


def test_convert_twice(stdin, tmp_path):
    out = tmp_path / "out.qrels"
    stdin('[{"id": "q1", "query": "a", "relevant": ["d1"]}]')
    tre.convert("-", qrels=str(out))
    assert out.read_text() == "q1 0 d1 1\n"
    stdin('[{"id": "q2", "query": "b", "relevant": ["d2"]}]')
    tre.convert("-", qrels=str(out), force=True)
    assert out.read_text() == "q2 0 d2 1\n"


def test_a_named_pipe_read_in_two_calls(files, tmp_path):
    qrels, _ = files
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    got = []
    for run in (RUN_A, RUN_B):
        writer = feed_fifo(fifo, run.encode())
        try:
            got.append(tre.evaluate(qrels, str(fifo), ["P@1"]).summary["P@1"])
        finally:
            unblock_fifo(fifo)
            writer.join(5)
    assert got == [0.5, 1.0]


def test_the_command_line_in_one_process_reads_each_commands_input(files):
    # two commands in one process (CliRunner), each its own standard input
    qrels, _ = files
    first = invoke("-m", "P.1", qrels, "-", input=RUN_A)
    second = invoke("-m", "P.1", qrels, "-", input=RUN_B)
    assert (first.exit_code, second.exit_code) == (0, 0), first.output + second.output
    assert first.stdout == "P_1                   \tall\t0.5000\n"
    assert second.stdout == "P_1                   \tall\t1.0000\n"


def test_a_read_once_input_outside_any_call_is_an_internal_error(stdin):
    from trec_rag_eval.io.sources import read_bytes

    stdin(RUN_A)
    with pytest.raises(RuntimeError, match="read outside a call of the library"):
        read_bytes("-")
    with one_call():
        assert read_bytes("-") == read_bytes("-") == RUN_A.encode()
    assert current_call() is None


def test_a_call_inside_a_call_shares_its_scope(stdin):
    from trec_rag_eval.io.sources import read_bytes

    @per_call
    def inner() -> bytes:
        return read_bytes("-")

    stdin(RUN_A)
    with one_call() as outer:
        assert inner() == RUN_A.encode()
        assert inner() == RUN_A.encode()  # the outer call keeps it: a command reads its input once
        assert outer.inputs == {"-": RUN_A.encode()}
    assert outer.inputs == {}  # dropped when the call ends


def test_a_file_or_a_folder_is_read_where_it_lies_without_asking_the_call(tmp_path, monkeypatch):
    # only what can be read once is kept by the call: a regular file, a folder or a URL is never looked up
    # among the call's inputs; a pipe's name gone since the call read it gives what the call kept
    from trec_rag_eval.io import sources

    run = tmp_path / "run.txt"
    run.write_text(RUN_A)
    with one_call() as call:
        call.inputs[str(tmp_path / "gone")] = RUN_B.encode()
        assert sources.read_once(str(tmp_path / "gone")) and sources.spooled(str(tmp_path / "gone")) == RUN_B.encode()
        assert not sources.read_once(str(tmp_path / "missing"))
        monkeypatch.setattr(sources, "current_call", lambda: pytest.fail("the call asked about a file"))
        assert sources.spooled(str(run)) is None and sources.spooled(str(tmp_path)) is None
        assert sources.read_bytes(str(run)) == RUN_A.encode()


READS_NOTHING = {"check_input", "check_outputs", "check_crosscheck", "check_compare"}
"""The facade's public functions that read no input (check_input and check_outputs look at the paths, never at their
bytes, and leave a pipe alone; check_crosscheck and check_compare at the options)."""


def test_every_public_function_of_the_facade_opens_its_scope():
    # a new public function that reads inputs must keep them per call, not per process: decorated @per_call,
    # or listed above as reading nothing
    import inspect

    from trec_rag_eval import api
    from trec_rag_eval.engine import Evaluator, read_corpus

    functions = {name: value for name, value in vars(api).items() if not name.startswith("_")
                 and inspect.isfunction(value) and value.__module__.startswith("trec_rag_eval.api.")}
    functions["read_judgments"] = api.read_judgments  # the service's, re-exported
    exported = {name for name in tre.__all__ if inspect.isfunction(getattr(tre, name))}
    assert exported - set(functions) == {"parse_measure"}  # a measure's name, parsed: no input read
    missing = [name for name, f in {**functions, "Evaluator.run": Evaluator.run, "Evaluator.evaluate":
                                    Evaluator.evaluate, "read_corpus": read_corpus}.items()
               if name not in READS_NOTHING and getattr(f, "__wrapped__", None) is None]
    assert missing == []


@pytest.mark.slow
def test_qrels_from_a_named_pipe_on_a_cluster_are_read_here_and_sent(files, tmp_path):
    # the workers read a qrels FILE themselves; a pipe, already read by this process, they waited on for ever
    import subprocess

    from conftest import REPO

    pytest.importorskip("distributed")
    _, other = files
    fifo = tmp_path / "qrels.fifo"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, QRELS.encode())
    try:
        result = subprocess.run([sys.executable, "-m", "trec_rag_eval", "--cluster", "local:1", "-m", "P.1",
                                 str(fifo), other], capture_output=True, text=True, timeout=120,
                                env={**os.environ, "PYTHONPATH": REPO}, cwd=REPO)
    finally:
        unblock_fifo(fifo)
        writer.join(5)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "P_1                   \tall\t0.5000\n"  # OTHER: q1 b -> 0, q2 d -> 1


# --- what fsspec keeps for the process: a file system's listings ------------------------------------------

fsspec = pytest.importorskip("fsspec")


class _ListingStore(fsspec.AbstractFileSystem):
    """An object store in this process that keeps its listings (folders, and each object's size) until
    ``invalidate_cache``, as s3fs does; a file is opened at the size its listing says, as s3fs opens it."""

    protocol = "listings"
    objects: dict[str, bytes] = {}

    def _listing(self, folder):
        if folder not in self.dircache:
            prefix = folder + "/" if folder else ""
            names = sorted({prefix + name[len(prefix):].split("/")[0] for name in self.objects
                            if name.startswith(prefix)})
            self.dircache[folder] = [{"name": name, "size": len(self.objects.get(name, b"")),
                                      "type": "file" if name in self.objects else "directory"} for name in names]
        return self.dircache[folder]

    def ls(self, path, detail=True, **kwargs):
        entries = self._listing(self._strip_protocol(path).rstrip("/"))
        return entries if detail else [entry["name"] for entry in entries]

    def info(self, path, **kwargs):
        path = self._strip_protocol(path).rstrip("/")
        for entry in self._listing(path.rsplit("/", 1)[0] if "/" in path else ""):
            if entry["name"] == path:
                return entry
        raise FileNotFoundError(path)

    def invalidate_cache(self, path=None):
        self.dircache.clear()

    def _open(self, path, mode="rb", block_size=None, autocommit=True, cache_options=None, **kwargs):
        return _ListedFile(self, path, mode, block_size=block_size or 1 << 20, size=self.info(path)["size"],
                           cache_type="none")


class _ListedFile(fsspec.spec.AbstractBufferedFile):
    def _fetch_range(self, start, end):
        return _ListingStore.objects[self._strip(self.path)][start:end]

    @staticmethod
    def _strip(path):
        return path.split("://", 1)[-1]


@pytest.fixture
def store():
    fsspec.register_implementation("listings", _ListingStore, clobber=True)
    _ListingStore.objects.clear()
    fsspec.filesystem("listings").invalidate_cache()  # fsspec keeps the instance: no listing from another test
    yield _ListingStore.objects
    _ListingStore.objects.clear()
    fsspec.filesystem("listings").invalidate_cache()


def test_a_run_rewritten_between_two_calls_is_read_whole(store, files):
    # the listing kept from the first call said 30 bytes (RUN_B's): the second read stopped there, at q1's
    # line, and q2 was scored 0 as missing: P@1 = 0 instead of 0.5
    qrels, _ = files
    store["runs/run.txt"] = RUN_B.encode()
    assert tre.evaluate(qrels, "listings://runs/run.txt", ["P@1"]).summary["P@1"] == 1.0
    # q1 ranks b (not relevant) -> 0; q2 ranks d (relevant) -> 1; P@1 = 0.5
    store["runs/run.txt"] = b"1 Q0 b 1 2.0 C\n1 Q0 a 2 1.0 C\n2 Q0 d 1 3.0 C\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no query missing from the run
        assert tre.evaluate(qrels, "listings://runs/run.txt", ["P@1"]).summary["P@1"] == 0.5


def test_a_run_added_to_a_folder_between_two_calls_is_evaluated(store, files):
    qrels, _ = files
    store["runs/a.txt"] = RUN_A.encode()
    first = list(tre.evaluate_many(qrels, ["listings://runs"], ["P@1"]))
    store["runs/b.txt"] = RUN_B.encode()
    second = list(tre.evaluate_many(qrels, ["listings://runs"], ["P@1"]))
    assert [(o.label, o.evaluation.summary["P@1"]) for o in first] == [("listings://runs/a.txt", 0.5)]
    assert [(o.label, o.evaluation.summary["P@1"]) for o in second] == [("listings://runs/a.txt", 0.5),
                                                                         ("listings://runs/b.txt", 1.0)]


def test_one_command_reads_its_standard_input_once_whatever_it_calls(files):
    # --crosscheck evaluates the run again after the evaluation, through a second facade call: the same bytes
    pytest.importorskip("ir_measures")
    qrels, _ = files
    result = invoke("--crosscheck", "-m", "P.1", qrels, "-", input=RUN_A)
    assert result.exit_code == 0, result.output
    assert result.stdout == "P_1                   \tall\t0.5000\n"
    assert "P@1      agree     P@1 via pytrec_eval: mean 0.500000" in result.stderr


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_a_run_read_from_standard_input_cites_its_own_lines_in_a_later_call(stdin, files, monkeypatch, compressed):
    # a document listed twice is found by the ranking, in the call that evaluates the run; its lines are
    # those of the bytes the run was read from, not of whatever standard input holds by then
    import gzip

    qrels, _ = files
    first = b"1 Q0 a 1 2.0 D\n1 Q0 a 2 1.0 D\n"  # a, twice: lines 1 and 2
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(first) if compressed else first)))
    run = tre.read_run("-")
    stdin("# another input\n#\n1 Q0 a 1 2.0 E\n1 Q0 a 2 1.0 E\n")  # the same pair at lines 3 and 4
    with pytest.raises(tre.InputFormatError) as err:
        tre.evaluate(qrels, run, ["P@1"])
    assert str(err.value) == "-:2: document 'a' listed twice for query '1' (first at line 1)"
