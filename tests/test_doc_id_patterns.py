"""Document id patterns (``--doc-id-pattern``, ``doc_map='...'``): Python's ``re`` semantics for
every id in any order, never a hang, and Ctrl-C that works.

The oracle is Python's ``re.search(pattern, id).group(1)`` itself."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import polars as pl
import pytest

import trec_rag_eval
from trec_rag_eval.errors import UsageError
from trec_rag_eval.io import patterns
from trec_rag_eval.io.chunks import DocIdMap


def _oracle(pattern: str, ids: list[str]) -> list[str | None]:
    out = []
    for chunk_id in ids:
        match = re.search(pattern, chunk_id)
        out.append(match.group(1) or None if match else None)
    return out


# ids where polars' regex engine and Python's re disagree on \w, \b, \d: a combining mark (Python's
# \w does not take U+0301, Rust's does), a Devanagari vowel sign, a superscript two and a circled one
# (Python's \w takes both: they are alphanumeric for str.isalnum; Rust's \w does not)
TRICKY = ["cafe\u0301#1", "\u0915\u093f#2", "x\u00b2#3", "\u2460#4", "doc_9#5", "ab c#6"]
PATTERNS = [r"^(\w+)#\d+$", r"^([\w]+)#", r"(\w+)#(\d)", r"^(\W*\w+)#", r"^(\S+)#\d$", r"^(.*?)\b#"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_pattern_gives_re_answers_whatever_the_order(pattern):
    # before: polars' engine ran the pattern when it agreed with re on the FIRST 1,000 distinct ids,
    # so 1,000 plain ids first and a tricky one after gave another answer than the reverse order
    plain = [f"doc{i}#{i % 7}" for i in range(1200)]
    mapping = DocIdMap.from_pattern(pattern)
    for ids in (plain + TRICKY, TRICKY + plain, list(reversed(plain + TRICKY))):
        got = mapping.series(pl.Series("doc_id", ids, dtype=pl.Utf8)).to_list()
        assert got == _oracle(pattern, ids)
        assert mapping.map_ids(ids) == _oracle(pattern, ids)


def test_same_rows_in_two_orders_same_scores():
    # the case end to end: P@1 must not depend on the order of the rows
    pattern = r"^(\w+)#\d+$"
    plain = [(f"q{i}", f"doc{i}#1", 2.0) for i in range(1100)]
    tricky = [("q0", "cafe\u0301#1", 5.0)]  # re: no match (U+0301 is not \w), kept as it is: not judged
    qrels = {"q0": {"cafe\u0301": 1, "doc0": 0}}
    scores = []
    for rows in (plain + tricky, tricky + plain):
        run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
        result = trec_rag_eval.evaluate(qrels, run, ["P@1"], doc_map=pattern)
        scores.append(result.value("P@1", "q0"))
    # q0: cafe\u0301#1 (5.0) first, unmapped and not judged -> P@1 = 0 (re's answer), in both orders
    assert scores == [0.0, 0.0]


def test_rewrite_is_refused_where_meaning_could_differ():
    # what polars' engine may run is decided from re's own parse: flags, \b, look-around and
    # back-references, and repeats of a part that can be empty, stay with Python's re
    for pattern in [r"(?i)^(a)", r"^(a)\b", r"^(a)(?=b)", r"^(a)\1", r"^((?:a|)*)#", r"^(a*)*$", r"(a)(?<=a)"]:
        assert patterns.rust_equivalent(pattern) is None, pattern
    assert patterns.rust_equivalent(r"^(.*)#\d+$") is not None
    assert patterns.rust_equivalent(r"(a+)+$") is not None   # linear time in polars: cannot hang


def test_dollar_before_a_final_newline_keeps_python_meaning():
    # Python's $ also matches before a final newline; polars' \z does not: such ids go to re
    ids = ["doc1#2\n", "doc3#4"]
    assert DocIdMap.from_pattern(r"^(.*)#\d+$").map_ids(ids) == _oracle(r"^(.*)#\d+$", ids) == ["doc1", "doc3"]


def test_catastrophic_pattern_finishes():
    # before: over 40 s (2^32 backtracking steps); polars' engine runs it in linear time
    ids = ["a" * 32 + "!", "aaa"]
    mapping = DocIdMap.from_pattern(r"(a+)+$")
    assert mapping.map_ids(ids) == [None, "aaa"]


def test_catastrophic_pattern_python_must_run_is_stopped_with_a_clear_error(monkeypatch):
    # (?i) keeps the pattern in Python's re: the time budget per id ends it, naming the id
    monkeypatch.setattr(patterns, "PATTERN_SECONDS_PER_ID", 0.3)
    mapping = DocIdMap.from_pattern(r"(?i)(a+)+$")
    with pytest.raises(UsageError, match=r"takes over 0.3 s on the id 'a{32}!'"):
        mapping.map_ids(["doc", "a" * 32 + "!"])


def test_catastrophic_doc_map_from_python_is_stopped(monkeypatch):
    monkeypatch.setattr(patterns, "PATTERN_SECONDS_PER_ID", 0.3)
    qrels = {"1": {"aaa": 1}}
    run = {"1": {"a" * 32 + "!": 1.0, "aaa": 0.5}}
    with pytest.raises(UsageError, match="catastrophic backtracking"):
        trec_rag_eval.evaluate(qrels, run, ["P@1"], doc_map=re.compile(r"(a+)+$", re.IGNORECASE))
    # and the linear-time rewrite when nothing forbids it
    result = trec_rag_eval.evaluate(qrels, run, ["P@1"], doc_map=r"(a+)+$")
    assert result is not None


_INTERRUPTED = """
import sys
from trec_rag_eval.io import patterns
patterns.PATTERN_SECONDS_PER_ID = 3600.0    # without Ctrl-C, this would run for an hour: past the test's bound
class Marked(patterns.subprocess.Popen):
    def communicate(self, input=None, timeout=None):
        if input and b"!" in input:  # a run's pathological id is sent: its child is matching from here on
            with open(sys.argv[1], "a") as flag:
                flag.write("x")
        return super().communicate(input, timeout)
patterns.subprocess.Popen = Marked
from trec_rag_eval.cli import main
main(sys.argv[2:])
"""


def _marks(flag) -> int:
    return len(flag.read_text()) if flag.exists() else 0


@pytest.mark.parametrize("count", [1, 2])
def test_ctrl_c_stops_a_pathological_pattern(tmp_path, count):
    # with two runs the mapping runs on worker threads: Ctrl-C must stop them too, not only the main thread.
    # The signal goes once each run's child is given the pathological id (a mark each), whatever the load.
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n")
    runs = []
    for name in ("a.txt", "b.txt")[:count]:
        path = tmp_path / name
        path.write_text(f"1 Q0 {'a' * 32}! 1 1.0 t\n1 Q0 d1 2 0.5 t\n")
        runs.append(str(path))
    flag = tmp_path / "flag"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(
        os.path.abspath(trec_rag_eval.__file__))), os.environ.get("PYTHONPATH")])))
    process = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_INTERRUPTED), str(flag), str(qrels), *runs,
                                "--doc-id-pattern", r"(?i)(a+)+$"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300  # a bound on a loaded machine, not a delay
        while _marks(flag) < count and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marks(flag) == count, process.communicate(timeout=5)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=300)  # ended by Ctrl-C, not by the pattern's time budget
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode != 0
    assert b"Traceback" not in stderr


def test_no_child_is_started_once_the_main_thread_has_ended(monkeypatch):
    # the main thread's end stops every child listed; a worker thread about to start one (between the
    # start and the listing) must not start it after that, or it would run its whole time budget unseen
    import threading

    from trec_rag_eval.io import patterns

    monkeypatch.setattr(patterns, "_stopping", threading.Event())
    started = []
    monkeypatch.setattr(patterns.subprocess, "Popen", lambda *a, **k: started.append(a))
    patterns._stop_children()
    with pytest.raises(KeyboardInterrupt):
        patterns.python_first_group(re.compile(r"(a+)+$"), ["aaaa!"])
    assert started == []
