"""trec_eval's ranking rules, one by one, against the core's ranking function (``core.ranking.rank``).

Each case gives its qrels, its run lines in file order, the options, and the relevance of every ranked
document, query by query, worked out by hand in the comment beside it (docs/trec_eval_conventions.md §2, §3
and §5.1): a judged document's grade, -2 (``UNJUDGED``) for a negative judgment, -1 (``NOT_IN_POOL``)
for a document the qrels do not judge for that query. Every case runs on every form a table takes
(Python lists, polars frames, an Arrow table in several chunks, and a TREC file read by the fast
reader, whose rank column contradicts the scores) and in two line orders (as written, and interleaved
query by query). ``test_trec_eval_10_ranks_every_case_the_same`` checks the hand-written expectations
against trec_eval 10 itself: its ``relstring`` prints the same values (a digit, ``-`` for -1, ``.``
for -2), query by query.

What is not the core's: ``-c`` (the core always gives a qrels query missing from the run trec_eval's
``-c`` dummy ranking, and marks it missing; averaging over it, or refusing it, is the evaluation's) and
``-l`` (the core hands the measures the grades as they are; each measure compares them with the level).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import NO_TREC_EVAL, trec_eval_binary
from hypothesis import given, settings
from hypothesis import strategies as st

from trec_rag_eval.core.ranking import RankedQueries, only_judged, rank
from trec_rag_eval.errors import DuplicateDocumentError, InputFormatError, UsageError
from trec_rag_eval.tables import Qrels, Run, qrels_columns, run_columns

TREC_EVAL = trec_eval_binary()
FORMS = ["lists", "polars", "arrow", "file"]


@dataclass
class Case:
    qrels: dict[str, dict[str, int]]
    run: list[tuple[str, str, float]]  # (query, doc, score), in file order
    expected: dict[str, list[int]]  # relevance of each ranked document, best first, per evaluated query
    options: dict[str, Any] = field(default_factory=dict)


CASES = {
    # score descending, whatever the file order: f (1000) b (0.9) d (0.7) c (0.5) a (0.1) e (-2.5);
    # d and e are not judged for q
    "score descending": Case(
        {"q": {"a": 1, "b": 2, "c": 0, "f": 3}},
        [("q", "a", 0.1), ("q", "b", 0.9), ("q", "c", 0.5), ("q", "d", 0.7), ("q", "e", -2.5), ("q", "f", 1e3)],
        {"q": [3, 2, -1, 0, 1, -1]}),
    # one score for all: doc ids descending in byte order. Bytes: "9" (0x39) < "B" (0x42) < "D9" < "a" (0x61)
    # < "d1" < "d10" < "d9" < "z" (0x7A) < "é" (0xC3 0xA9): a prefix before its extensions, digits before
    # capitals before small letters, UTF-8's non-ASCII last. Each doc's grade is its place from the end.
    "ties by doc id descending in byte order": Case(
        {"q": {"9": 0, "B": 1, "D9": 2, "a": 3, "d1": 4, "d10": 5, "d9": 6, "z": 7, "é": 8}},
        [("q", d, 1.0) for d in ["d10", "9", "é", "a", "z", "D9", "d1", "B", "d9"]],
        {"q": [8, 7, 6, 5, 4, 3, 2, 1, 0]}),
    # several tie groups in one query: u (3), then y x (2, tied: y > x), then w v (1, tied: w > v);
    # in s, -0.0 and 0.0 are equal (C compares them so): n > m decides, then o (-1e-300, below both)
    "several tie groups, and -0 ties 0": Case(
        {"r": {"u": 1, "x": 2, "y": 0, "v": 3, "w": -1}, "s": {"m": 1, "n": 2, "o": 0}},
        [("r", "v", 1.0), ("r", "x", 2.0), ("s", "o", -1e-300), ("r", "u", 3.0), ("s", "m", -0.0),
         ("r", "w", 1.0), ("s", "n", 0.0), ("r", "y", 2.0)],
        {"r": [1, 0, 2, -2, 3], "s": [2, 1, 0]}),
    # a document of another query's judgments is not in this query's pool; grades as they are (12 too, not
    # cut to 9), any negative judgment is UNJUDGED: q ranks a (12) b (-5: -2) c (0) d (judged in r only: -1)
    "relevance of a ranked document": Case(
        {"q": {"a": 12, "b": -5, "c": 0}, "r": {"d": 1}},
        [("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 1.0), ("q", "d", 0.5), ("r", "d", 1.0)],
        {"q": [12, -2, 0, -1], "r": [1]}),
    # -M 2: the first two after sorting (d 0.4, b 0.3), not the file's first two (a, b)
    "-M keeps the first n after sorting": Case(
        {"q": {"a": 1, "b": 1, "c": 1}},
        [("q", "a", 0.1), ("q", "b", 0.3), ("q", "c", 0.2), ("q", "d", 0.4)],
        {"q": [-1, 1]}, {"max_retrieved": 2}),
    # -M cuts through a tie: x y z tied, ordered z y x, and the first two kept
    "-M cuts a tie after its doc ids are ordered": Case(
        {"q": {"x": 1, "y": 2, "z": 3}},
        [("q", "x", 1.0), ("q", "y", 1.0), ("q", "z", 1.0)],
        {"q": [3, 2]}, {"max_retrieved": 2}),
    # -M beyond the length changes nothing; the missing query's dummy document stays
    "-M beyond the ranking": Case(
        {"q": {"a": 1}, "r": {"x": 1}},
        [("q", "a", 1.0), ("q", "b", 2.0)],
        {"q": [-1, 1], "r": [-1]}, {"max_retrieved": 10}),
    # -M 0 keeps nothing, the missing query's dummy document included
    "-M 0": Case(
        {"q": {"a": 1}, "r": {"x": 1}},
        [("q", "a", 1.0), ("q", "b", 2.0)],
        {"q": [], "r": []}, {"max_retrieved": 0}),
    # ranked: e (not in pool) a (1) c (-1 in the qrels: unjudged) b (0) f (not in pool) d (2).
    # -J keeps a b d, ranks closing up; the missing query r loses its dummy document
    "-J drops what is not judged": Case(
        {"q": {"a": 1, "b": 0, "c": -1, "d": 2}, "r": {"x": 1}},
        [("q", "e", 0.9), ("q", "a", 0.8), ("q", "c", 0.7), ("q", "b", 0.6), ("q", "f", 0.5), ("q", "d", 0.4)],
        {"q": [1, 0, 2], "r": []}, {"judged_only": True}),
    # -M 3 then -J: of the first three (e a c), only a is judged (not the first three judged: a b d)
    "-M before -J": Case(
        {"q": {"a": 1, "b": 0, "c": -1, "d": 2}},
        [("q", "e", 0.9), ("q", "a", 0.8), ("q", "c", 0.7), ("q", "b", 0.6), ("q", "f", 0.5), ("q", "d", 0.4)],
        {"q": [1]}, {"max_retrieved": 3, "judged_only": True}),
    # queries: the qrels' in byte order ("10" < "2" < "9" < "B"); "9" has no line in the run: one document
    # in no qrels (trec_eval -c's dummy); "A" and "extra" are only in the run: not evaluated
    "missing queries": Case(
        {"2": {"b": 1}, "10": {"a": 1}, "9": {"c": 0}, "B": {"x": 1}},
        [("2", "b", 1.0), ("extra", "z", 5.0), ("10", "a", 1.0), ("B", "x", 1.0), ("A", "y", 2.0)],
        {"10": [1], "2": [1], "9": [-1], "B": [1]}),
    # a document twice in a query the qrels do not know is never seen (trec_eval ignores the query whole)
    "a duplicate in a query that is not evaluated": Case(
        {"q": {"a": 1}},
        [("q", "a", 1.0), ("z", "d", 1.0), ("z", "d", 0.5)],
        {"q": [1]}),
    # trec_eval checks duplicates among the documents -M keeps: ranked a (3) b (2.5) b (2) c (1), -M 2 keeps a b
    "a duplicate below the -M cutoff is never seen": Case(
        {"q": {"a": 1, "b": 0}, "r": {"x": 1}},
        [("q", "b", 2.0), ("q", "a", 3.0), ("q", "c", 1.0), ("r", "x", 1.0), ("q", "b", 2.5)],
        {"q": [1, 0], "r": [1]}, {"max_retrieved": 2}),
    # the same document in two queries is no duplicate
    "one document in two queries": Case(
        {"q": {"a": 1}, "r": {"a": 2}},
        [("q", "a", 1.0), ("r", "a", 1.0)],
        {"q": [1], "r": [2]}),
}


def _interleaved(rows: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """The same lines with the queries interleaved: one line of each query in turn (no query in one block)."""
    by_query: dict[str, list[tuple[str, str, float]]] = {}
    for row in rows:
        by_query.setdefault(row[0], []).append(row)
    out = []
    for i in range(max((len(lines) for lines in by_query.values()), default=0)):
        out += [lines[i] for lines in by_query.values() if i < len(lines)]
    return out


def _arrow_run(rows: list[tuple[str, str, float]], chunk: int = 2) -> Any:
    """An Arrow table as the fast TREC reader makes it (query ids dictionary-encoded, each chunk with its
    own dictionary), cut into chunks of ``chunk`` rows."""
    import pyarrow as pa

    codes = pa.dictionary(pa.int32(), pa.string())
    parts = [rows[i: i + chunk] for i in range(0, len(rows), chunk)]
    return pa.table({
        "query_id": pa.chunked_array([pa.array([r[0] for r in p]).dictionary_encode() for p in parts], type=codes),
        "doc_id": pa.chunked_array([pa.array([r[1] for r in p], pa.string()) for p in parts], type=pa.string()),
        "score": pa.chunked_array([pa.array([r[2] for r in p], pa.float64()) for p in parts], type=pa.float64()),
    })


def _qrels_rows(judgments: dict[str, dict[str, int]]) -> list[tuple[str, str, str, int]]:
    return [(q, "0", d, r) for q, docs in judgments.items() for d, r in docs.items()]


def _write(tmp_path: Path, judgments: dict[str, dict[str, int]], rows: list[tuple[str, str, float]]) -> tuple[str, str]:
    """A qrels file and a run file whose rank column says the opposite of the scores (the file's order
    ranks its first line first): trec_eval ignores it."""
    qrels, run = tmp_path / "rules.qrels", tmp_path / "rules.run"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, _, d, r in _qrels_rows(judgments)), encoding="utf-8")
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for i, (q, d, s) in enumerate(rows)), encoding="utf-8")
    return str(qrels), str(run)


def tables(form: str, judgments: dict[str, dict[str, int]], rows: list[tuple[str, str, float]],
           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Qrels, Run]:
    """The same qrels and run in one of the forms the ranking reads."""
    import polars as pl

    from trec_rag_eval.tables import QRELS_SCHEMA, RUN_SCHEMA

    if form == "lists":
        return Qrels(qrels_columns(_qrels_rows(judgments)), checked=True), Run(run_columns(rows), checked=True)
    qrels = Qrels(pl.DataFrame(_qrels_rows(judgments), schema=QRELS_SCHEMA, orient="row"), checked=True)
    if form == "polars":
        return qrels, Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), checked=True)
    if form == "arrow":
        return qrels, Run(_arrow_run(rows), checked=True)
    from trec_rag_eval.io.trec import qrels_runs
    from trec_rag_eval.tables import is_arrow

    monkeypatch.setattr(qrels_runs, "SMALL_FILE_BYTES", 0)  # the fast reader, as for a large file
    qrels_path, run_path = _write(tmp_path, judgments, rows)
    run = qrels_runs.read_trec_run(run_path)
    assert is_arrow(run.data) or not rows
    return qrels_runs.read_trec_qrels(qrels_path), run


def by_query(ranked: RankedQueries) -> dict[str, list[int]]:
    """The relevance of each ranked document, per evaluated query, best first."""
    return {q: ranked.rel[ranked.offsets[i]: ranked.offsets[i + 1]].tolist() for i, q in enumerate(ranked.query_ids)}


@pytest.mark.parametrize("order", ["as written", "interleaved"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", list(CASES))
def test_rule(name, form, order, tmp_path, monkeypatch):
    case = CASES[name]
    rows = case.run if order == "as written" else _interleaved(case.run)
    qrels, run = tables(form, case.qrels, rows, tmp_path, monkeypatch)
    ranked = rank(qrels, run, **case.options)
    assert by_query(ranked) == case.expected
    assert ranked.offsets[-1] == len(ranked.rel)
    # missing: the qrels queries with no line in the run, whatever -M and -J leave of the others
    in_run = {row[0] for row in rows}
    assert ranked.missing_queries == [q for q in ranked.query_ids if q not in in_run]


def _relstrings(values: dict[str, list[int]]) -> dict[str, str]:
    """trec_eval's relstring of each query: a digit per grade (``>`` above 9), ``-`` not in pool, ``.`` unjudged."""
    def char(value: int) -> str:
        return "-" if value == -1 else "." if value < 0 else ">" if value > 9 else str(value)

    return {q: "".join(char(v) for v in rels) for q, rels in values.items()}


@pytest.mark.skipif(TREC_EVAL is None, reason=NO_TREC_EVAL)
@pytest.mark.parametrize("name", list(CASES))
def test_trec_eval_10_ranks_every_case_the_same(name, tmp_path):
    """The expectations above are trec_eval 10's: ``-c`` so that a qrels query missing from the run is
    evaluated (as the core always ranks it), ``relstring`` long enough for every ranking."""
    case = CASES[name]
    qrels_path, run_path = _write(tmp_path, case.qrels, case.run)
    flags = ["-c", "-q", "-m", "relstring.100"]
    if case.options.get("max_retrieved") is not None:
        flags += ["-M", str(case.options["max_retrieved"])]
    if case.options.get("judged_only"):
        flags.append("-J")
    out = subprocess.run([TREC_EVAL, *flags, qrels_path, run_path], capture_output=True, check=True).stdout
    printed = {}
    for line in out.decode("utf-8").splitlines():
        _, query, value = line.split("\t")
        printed[query.strip()] = value.strip("'")
    assert printed == _relstrings(case.expected)


def test_the_rank_column_of_a_file_is_ignored(tmp_path, monkeypatch):
    """A TREC file whose rank column puts a first: the scores put it last (trec_eval's rule)."""
    from trec_rag_eval.io.trec import qrels_runs

    for small in (True, False):  # the careful reader (lists) and the fast one (Arrow)
        monkeypatch.setattr(qrels_runs, "SMALL_FILE_BYTES", 1 << 20 if small else 0)
        qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
        qrels.write_text("q 0 a 1\nq 0 b 2\n")
        run.write_text("q Q0 a 1 0.5 t\nq Q0 b 2 0.9 t\nq Q0 c 3 0.7 t\n")
        ranked = rank(qrels_runs.read_trec_qrels(str(qrels)), qrels_runs.read_trec_run(str(run)))
        assert by_query(ranked) == {"q": [2, -1, 1]}


@pytest.mark.parametrize("form", FORMS)
def test_queries_missing_from_the_run_and_only_in_the_run_are_named(form, tmp_path, monkeypatch):
    case = CASES["missing queries"]
    qrels, run = tables(form, case.qrels, case.run, tmp_path, monkeypatch)
    ranked = rank(qrels, run)
    assert ranked.query_ids == ["10", "2", "9", "B"]  # byte order, not numeric
    assert ranked.missing.tolist() == [False, False, True, False] and ranked.missing_queries == ["9"]
    assert ranked.extra_queries == ["A", "extra"]  # byte order: "A" (0x41) < "e" (0x65)
    # queries="intersection" (trec_eval 9, pytrec_eval): only the queries in both; nothing is missing
    both = rank(qrels, run, queries="intersection")
    assert by_query(both) == {"10": [1], "2": [1], "B": [1]} and not both.missing.any()
    assert both.extra_queries == ["A", "extra"]


def test_a_query_the_qrels_know_without_any_judgment_is_evaluated():
    """A dataset query with no judgment at all (``{"u": {}}``) counts, missing from the run or not."""
    qrels = Qrels.from_dict({"q": {"a": 1}, "u": {}})
    assert by_query(rank(qrels, Run.from_dict({"q": {"a": 1.0}}))) == {"q": [1], "u": [-1]}
    assert by_query(rank(qrels, Run.from_dict({"q": {"a": 1.0}, "u": {"a": 2.0}}))) == {"q": [1], "u": [-1]}


@pytest.mark.parametrize("form", FORMS)
def test_the_ideal_rankings_hold_every_judged_document(form, tmp_path, monkeypatch):
    """``judged``: each query's documents judged >= 0, retrieved or not, best first (negative ones left
    out), unaffected by -M and -J. q: a 12, c 0 (b is -5); r: d 1, e 3 -> 3, 1."""
    case = CASES["relevance of a ranked document"]
    judgments = {**case.qrels, "r": {"d": 1, "e": 3}}
    qrels, run = tables(form, judgments, case.run, tmp_path, monkeypatch)
    for options in ({}, {"max_retrieved": 1, "judged_only": True}):
        ranked = rank(qrels, run, **options)
        assert ranked.judged_offsets.tolist() == [0, 2, 4] and ranked.judged.tolist() == [12, 0, 3, 1]


@pytest.mark.parametrize("form", FORMS)
def test_only_judged_afterwards_is_judged_only(form, tmp_path, monkeypatch):
    """``only_judged`` (ir-measures' judged_only=True on one measure) is -J applied to a ranking already made."""
    for name in ("-J drops what is not judged", "missing queries", "ties by doc id descending in byte order"):
        case = CASES[name]
        qrels, run = tables(form, case.qrels, case.run, tmp_path, monkeypatch)
        after = only_judged(rank(qrels, run))
        direct = rank(qrels, run, judged_only=True)
        assert by_query(after) == by_query(direct)
        assert after.offsets.tolist() == direct.offsets.tolist()
    assert by_query(after)["q"] == [8, 7, 6, 5, 4, 3, 2, 1, 0]  # every document judged: nothing dropped


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("order", ["adjacent", "apart", "interleaved"])
def test_a_document_twice_in_a_query_is_refused_naming_both(form, order, tmp_path, monkeypatch):
    """trec_eval: "duplicate docs", exit 4. The core names the query and the document (it knows no
    lines); a file's two lines are cited by the evaluation (test below)."""
    rows = {"adjacent": [("q", "a", 3.0), ("q", "b", 2.0), ("q", "b", 1.0), ("r", "x", 1.0)],
            "apart": [("q", "b", 3.0), ("q", "a", 2.0), ("r", "x", 1.0), ("q", "c", 1.0), ("q", "b", 0.5)],
            "interleaved": [("q", "b", 3.0), ("r", "x", 1.0), ("q", "a", 2.0), ("r", "y", 1.0), ("q", "b", 1.0)]}
    qrels, run = tables(form, {"q": {"a": 1}, "r": {"x": 1}}, rows[order], tmp_path, monkeypatch)
    with pytest.raises(DuplicateDocumentError) as raised:
        rank(qrels, run)
    assert (raised.value.query_id, raised.value.doc_id) == ("q", "b")


def test_a_duplicate_in_a_file_is_cited_with_both_lines(tmp_path, monkeypatch):
    import trec_rag_eval as tre
    from trec_rag_eval.io.trec import qrels_runs

    for small in (True, False):
        monkeypatch.setattr(qrels_runs, "SMALL_FILE_BYTES", 1 << 20 if small else 0)
        qrels_path, run_path = _write(tmp_path, {"q": {"a": 1}}, [("q", "b", 3.0), ("q", "a", 2.0), ("q", "b", 1.0)])
        with pytest.raises(InputFormatError) as raised:
            tre.evaluate(qrels_path, run_path, ["P@5"])
        assert str(raised.value) == f"{run_path}:3: document 'b' listed twice for query 'q' (first at line 1)"


@pytest.mark.parametrize("form", FORMS)
def test_a_duplicate_among_the_documents_max_retrieved_keeps_is_refused(form, tmp_path, monkeypatch):
    """-M 2 keeps a (3) b (2.5): no duplicate there (the case above); -M 3 keeps b (2) as well."""
    case = CASES["a duplicate below the -M cutoff is never seen"]
    qrels, run = tables(form, case.qrels, case.run, tmp_path, monkeypatch)
    with pytest.raises(DuplicateDocumentError) as raised:
        rank(qrels, run, max_retrieved=3)
    assert (raised.value.query_id, raised.value.doc_id) == ("q", "b")
    with pytest.raises(DuplicateDocumentError):
        rank(qrels, run)


def test_float32_scores_tie_what_trec_eval_9_ties():
    """trec_eval 9 (pytrec_eval) reads scores as 32-bit floats: 1.00000002 and 1.00000001 are then one
    value and the doc ids decide (b > a); as doubles a's higher score puts it first."""
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0}})
    run = Run(run_columns([("q", "a", 1.00000002), ("q", "b", 1.00000001)]), checked=True)
    assert by_query(rank(qrels, run)) == {"q": [1, 0]}
    assert by_query(rank(qrels, run, float32_scores=True)) == {"q": [0, 1]}
    # beyond float's range a score becomes +-infinity, as C's conversion makes it: 1e39 and 2e39 then tie
    run = Run(run_columns([("q", "a", 2e39), ("q", "b", 1e39)]), checked=True)
    assert by_query(rank(qrels, run, float32_scores=True)) == {"q": [0, 1]}


def test_bad_options_are_refused_naming_the_parameter():
    qrels, run = Qrels.from_dict({"q": {"a": 1}}), Run.from_dict({"q": {"a": 1.0}})
    with pytest.raises(UsageError, match="max_retrieved must be >= 0, got -1"):
        rank(qrels, run, max_retrieved=-1)
    with pytest.raises(UsageError, match="queries must be 'qrels' or 'intersection', got 'run'"):
        rank(qrels, run, queries="run")


# every form gives the same ranking: random pairs with many ties, every option, against the rules
# written the slow way (per query: sort by doc id descending in bytes, then stably by score descending)

@st.composite
def pairs(draw):
    queries = draw(st.lists(st.sampled_from(["1", "2", "10", "a", "B", "é"]), min_size=1, max_size=4, unique=True))
    rows, judgments = [], {}
    for q in queries:
        docs = draw(st.lists(st.sampled_from(["d1", "d10", "d9", "D9", "x", "é", "9"]), max_size=7, unique=True))
        rows += [(q, d, float(draw(st.integers(0, 2)))) for d in docs]  # three scores: many ties
        if draw(st.booleans()):  # else a query only in the run
            judged = draw(st.lists(st.sampled_from([*docs, "dx"]), min_size=1, max_size=4, unique=True))
            judgments[q] = {d: draw(st.integers(-1, 3)) for d in judged}
    if draw(st.booleans()):
        judgments["missing"] = {"dm": 1}  # a qrels query with no line in the run
    if not judgments:
        judgments["1"] = {"d1": 1}
    return judgments, rows


def _slow(judgments, rows, max_retrieved, judged_only):
    def value(query, doc):
        grade = judgments[query].get(doc)
        return -1 if grade is None else -2 if grade < 0 else grade

    out = {}
    for q in sorted(judgments, key=lambda text: text.encode()):
        ranked = sorted(sorted((r for r in rows if r[0] == q), key=lambda r: r[1].encode(), reverse=True),
                        key=lambda r: -r[2])
        rels = [value(q, d) for _, d, _ in ranked] or [-1]  # the dummy document of a missing query
        rels = rels[:max_retrieved] if max_retrieved is not None else rels
        out[q] = [v for v in rels if v >= 0] if judged_only else rels
    return out


@settings(max_examples=60, deadline=None)
@given(pairs(), st.sampled_from([None, 0, 1, 3]), st.booleans(), st.randoms(use_true_random=False))
def test_every_form_and_line_order_gives_the_same_ranking(data, max_retrieved, judged_only, random):
    judgments, rows = data
    expected = _slow(judgments, rows, max_retrieved, judged_only)
    shuffled = list(rows)
    random.shuffle(shuffled)
    import polars as pl

    from trec_rag_eval.tables import QRELS_SCHEMA, RUN_SCHEMA

    for order in (rows, shuffled):
        qrels_frame = pl.DataFrame(_qrels_rows(judgments), schema=QRELS_SCHEMA, orient="row")
        listed = Qrels(qrels_columns(_qrels_rows(judgments)), checked=True)
        framed = Qrels(qrels_frame, checked=True)
        for qrels, run in ((listed, Run(run_columns(order), checked=True)),
                           (framed, Run(pl.DataFrame(order, schema=RUN_SCHEMA, orient="row"), checked=True)),
                           (framed, Run(_arrow_run(order, chunk=random.randint(1, 4)), checked=True))):
            ranked = rank(qrels, run, max_retrieved=max_retrieved, judged_only=judged_only)
            assert by_query(ranked) == expected
            assert ranked.missing_queries == [q for q in expected if q not in {row[0] for row in rows}]


def test_an_empty_run_ranks_every_query_as_missing():
    qrels = Qrels.from_dict({"q": {"a": 1}, "r": {"b": 0}})
    for run in (Run(run_columns([]), checked=True), Run(_arrow_run([]), checked=True)):
        ranked = rank(qrels, run)
        assert by_query(ranked) == {"q": [-1], "r": [-1]} and ranked.missing.all()
    assert np.array_equal(rank(qrels, Run(run_columns([]), checked=True), judged_only=True).offsets, [0, 0, 0])


@pytest.mark.parametrize("form", ["polars", "arrow"])
def test_hash_collisions_change_no_rule(form, tmp_path, monkeypatch):
    """Polars and Arrow tables are matched with their judgments, and checked for duplicates, through
    64-bit (query, document) hashes (``core.matching``). With every key forced into 3 values, nearly
    every row collides with some judgment and with other rows: every case still ranks as by hand, and
    only a real duplicate is refused."""
    from trec_rag_eval.core import matching

    real = matching._pair_keys
    monkeypatch.setattr(matching, "_pair_keys",
                        lambda queries, docs, threads=None: real(queries, docs, threads) % np.uint64(3))
    for case in CASES.values():
        for rows in (case.run, _interleaved(case.run)):
            qrels, run = tables(form, case.qrels, rows, tmp_path, monkeypatch)
            assert by_query(rank(qrels, run, **case.options)) == case.expected
    qrels, run = tables(form, {"q": {"a": 1}}, [("q", "a", 2.0), ("q", "b", 1.0), ("q", "a", 0.5)], tmp_path,
                        monkeypatch)
    with pytest.raises(DuplicateDocumentError) as raised:
        rank(qrels, run)
    assert (raised.value.query_id, raised.value.doc_id) == ("q", "a")


@pytest.mark.parametrize("stream", [False, True])
def test_a_duplicate_below_the_cut_prints_what_the_run_without_it_prints(stream, tmp_path):
    """Through the command (whole, and streamed in pieces): a run whose duplicate falls below -M prints
    the bytes of the same run without that line (trec_eval 10 prints the same for both)."""
    from conftest import invoke

    case = CASES["a duplicate below the -M cutoff is never seen"]
    rows = sorted(case.run, key=lambda row: row[0])  # grouped by query, as reading in pieces needs
    qrels_path, run_path = _write(tmp_path, case.qrels, rows)
    lines = Path(run_path).read_text().splitlines(keepends=True)
    without = tmp_path / "without.run"
    without.write_text("".join(line for line in lines if " b 1 2.0 " not in line))  # b at 2.0, below the cut
    assert len(without.read_text().splitlines()) == len(lines) - 1
    flags = ["--format", "trec", "-q", "-M", "2", "-m", "all_trec", *(["--stream", "--chunk-size", "1"] * stream)]
    expected = invoke(*flags, qrels_path, str(without))
    got = invoke(*flags, qrels_path, run_path)
    assert expected.exit_code == 0 and got.exit_code == 0, got.stderr
    assert got.stdout == expected.stdout and "num_ret               \tq\t2\n" in got.stdout
    refused = invoke(*flags[:4], "3", *flags[5:], qrels_path, run_path)  # -M 3 keeps both b
    assert refused.exit_code == 1 and "document 'b' listed twice for query 'q'" in refused.stderr
