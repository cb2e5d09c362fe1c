"""The suite's own fuzz test: mangled TREC files, JSON files and measure requests give either the
numbers a reference reading gives, or one of our own errors. Never another exception.

A seeded generator (the same cases on every run, a few seconds in all; ``TREC_RAG_EVAL_FUZZ_SEED=N`` draws
others) mutates valid inputs with
the bytes that broke us before: Unicode and C whitespace, a byte-order mark, Python-only number
forms, huge and special numbers, comment marks, cut lines, deep nesting.

The reference reading is written here from trec_eval's rules, with the C library itself as the
oracle for numbers: a field is a score when libc's ``strtod`` consumes all of it (and a relevance
when ``strtol`` does, within range), so our own syntax module is checked, not reused.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import decimal
import json
import math
import os
import random
import re

import pytest
from conftest import invoke, trec_eval_binary

from trec_rag_eval.errors import TrecRagEvalError

SEED = int(os.environ.get("TREC_RAG_EVAL_FUZZ_SEED", "14"))  # another seed: a fresh campaign of the same cases
CASES = 250

_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_libc.strtod.restype = ctypes.c_double
_libc.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
_libc.strtol.restype = ctypes.c_long
_libc.strtol.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
_libc.atol.restype = ctypes.c_long
_libc.atol.argtypes = [ctypes.c_char_p]


def _c_whole(function, field: str, *extra):
    """The value C reads from the whole of ``field``, or None when C stops early (or it is empty)."""
    if not field or field[0] in " \t\n\r\x0b\x0c" or not field.isascii():
        return None  # C would skip leading spaces; a field never has them. Non-ASCII is never a number.
    raw = field.encode("ascii")
    buffer = ctypes.create_string_buffer(raw)
    end = ctypes.c_char_p()
    value = function(buffer, ctypes.byref(end), *extra)
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.cast(buffer, ctypes.c_void_p).value
    return value if consumed == len(raw) else None


C_SPACE = re.compile(r"[ \t\r\x0b\x0c]+")


def _reference_lines(data: bytes) -> list[list[str]] | None:
    """Fields of each data line as trec_eval's C splits them; None when the bytes are not UTF-8."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    out = []
    for raw in data.split(b"\n"):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if "\x00" in text:
            return None  # C strings end at a NUL: trec_eval 10 misreads the line or crashes (malloc abort)
        fields = [f for f in C_SPACE.split(text) if f]
        if fields and not fields[0].startswith("#"):
            out.append(fields)
    return out


def reference_qrels(data: bytes):
    """Sorted (query_id, doc_id, relevance) rows, or None where the file must be refused."""
    lines = _reference_lines(data)
    if not lines:
        return None
    rows, seen = [], set()
    for fields in lines:
        if len(fields) != 4:
            return None
        value = _c_whole(_libc.strtol, fields[3], 10)
        if value is None or not -(2**31) <= value <= 2**31 - 1 or not re.fullmatch(r"[+-]?[0-9]+", fields[3]):
            return None  # strtol saturates on overflow: a 19-digit field must not pass for LONG_MAX
        if (fields[0], fields[2]) in seen:
            return None
        seen.add((fields[0], fields[2]))
        rows.append((fields[0], fields[2], value))
    return sorted(rows)


def reference_run(data: bytes):
    """Sorted (query_id, doc_id, score) rows and the run tag, or None where the file must be refused."""
    lines = _reference_lines(data)
    if not lines:
        return None
    rows = []
    for fields in lines:
        if len(fields) < 6:
            return None
        score = _c_whole(_libc.strtod, fields[4])
        if score is None or math.isnan(score):
            return None
        rows.append((fields[0], fields[2], score))
    return sorted(rows), lines[-1][5]


# -- mutations ----------------------------------------------------------------------------------

VALID_QRELS = b"1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n2 0 d4 -1\n10 0 d5 1\n"
VALID_RUN = b"1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 1.5 tag\n2 Q0 d3 1 0.5 tag\n2 Q0 d9 2 -1 tag\n10 Q0 d5 1 3 tag\n"
PIECES = [
    "\xa0", "\u2003", "\u3000", "\x85", "\u2028", "\x1c", "\x1f", "\t", "\x0b", "\x0c", "\r", "\r\n", "\n", "  ",
    "\ufeff", "#", "1_000", "１２", "٩٩", "0x10", "0x1p3", "1e400", "-1e-400", "inf", "-Infinity", "nan",
    "NaN(1)", "99999999999999999999", "2147483648", "-2147483649", "+7", "-0", ".5", "5.", "1e", "--1",
    "Q0", "d1", "d2", "1", "2", " ", "é", "\x00", "\udcff",
]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8")
    for _ in range(rng.randint(1, 4)):
        action = rng.random()
        where = rng.randint(0, len(text))
        if action < 0.45:
            text = text[:where] + rng.choice(PIECES) + text[where:]
        elif action < 0.75 and text:
            end = min(len(text), where + rng.randint(1, 6))
            text = text[:where] + rng.choice(PIECES) + text[end:]
        elif action < 0.9 and text:
            text = text[:where] + text[min(len(text), where + rng.randint(1, 8)):]
        else:
            text = text[:where]
    raw = text.encode("utf-8", "surrogateescape") if "\udcff" not in text else text.encode("utf-8", "surrogatepass")
    return b"\xef\xbb\xbf" + raw if rng.random() < 0.05 else raw


def _cases(valid: bytes, salt: int) -> list[bytes]:
    rng = random.Random(SEED * 1000 + salt)
    return [_mutate(rng, valid) for _ in range(CASES)]


def _rows_of(table, value_column: str):
    from trec_rag_eval.tables import column_list

    return sorted(zip(column_list(table, "query_id"), column_list(table, "doc_id"),
                      column_list(table, value_column), strict=True))


def _grouped(data: bytes) -> bool:
    """Whether each query's lines stand together (comment and blank lines aside), as reading in pieces needs."""
    from trec_rag_eval.syntax import split_fields

    seen: set[str] = set()
    last = None
    for raw in data.removeprefix(b"\xef\xbb\xbf").split(b"\n"):
        fields = split_fields(raw.removesuffix(b"\r").decode("utf-8"))
        if not fields or fields[0].startswith("#") or fields[0] == last:
            continue
        if fields[0] in seen:
            return False
        seen.add(fields[0])
        last = fields[0]
    return True


def _read_all_paths(reader, data: bytes, tmp_path, monkeypatch, name: str):
    """(outcome on the small-file path, outcome on the polars path); an outcome is rows or 'error'."""
    from trec_rag_eval.io.trec import qrels_runs

    path = tmp_path / name
    path.write_bytes(data)
    outcomes = []
    for threshold in (1 << 20, 0):
        monkeypatch.setattr(qrels_runs, "SMALL_FILE_BYTES", threshold)
        try:
            outcomes.append(reader(str(path)))
        except TrecRagEvalError:
            outcomes.append("error")
    return outcomes


def test_fuzz_trec_qrels(tmp_path, monkeypatch):
    from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels

    for data in _cases(VALID_QRELS, 1):
        small, fast = _read_all_paths(lambda p: _rows_of(read_trec_qrels(p), "relevance"), data, tmp_path, monkeypatch,
                                      "qrels.txt")
        expected = reference_qrels(data)
        assert small == fast, data
        assert small == ("error" if expected is None or not data.strip() else expected), data


def test_fuzz_trec_run(tmp_path, monkeypatch):
    from trec_rag_eval.io.trec.pieces import iter_run_chunks
    from trec_rag_eval.io.trec.qrels_runs import read_trec_run

    def read(path):
        run = read_trec_run(path)
        return _rows_of(run, "score"), run.run_tag

    for data in _cases(VALID_RUN, 2):
        small, fast = _read_all_paths(read, data, tmp_path, monkeypatch, "run.txt")
        expected = reference_run(data)
        assert small == fast, data
        assert small == ("error" if expected is None or not data.strip() else expected), data
        if small != "error":  # read in pieces of a few bytes: the same rows (when grouped by query)
            try:
                pieces = list(iter_run_chunks(str(tmp_path / "run.txt"), chunk_bytes=16))
            except TrecRagEvalError as err:  # only for a run that really lists a query again after others
                assert "comes back after other queries" in str(err) and not _grouped(data), data
            else:
                assert sorted(row for piece in pieces for row in _rows_of(piece, "score")) == small[0], data


def _evaluate_or_clean_error(qrels_path: str, run_path: str, measures) -> None:
    from trec_rag_eval.evaluation.evaluate import evaluate_tables
    from trec_rag_eval.io.loading import load_qrels, load_run

    try:
        qrels = load_qrels(qrels_path)
        evaluate_tables(qrels, load_run(run_path, qrels=qrels), measures)
    except TrecRagEvalError:
        pass


VALID_DATASET = json.dumps([
    {"id": "1", "query": "first", "relevant": {"d1": 1, "d2": 0}},
    {"id": "2", "query": "second", "relevant": ["d3"], "non_relevant": ["d4"]},
]).encode()
VALID_RESULTS = json.dumps({"1": [{"id": "d1", "score": 2.5}, {"id": "d2", "score": 1.5}], "2": ["d3", "d9"]}).encode()
JSON_PIECES = ["[" * 3000, "{\"a\":" * 2000, "1" * 500, "1e999", "-0", "NaN", "Infinity", "null", "true",
               "\"\\ud800\"", "\"\xa0\"", "\ufeff", "}", "]", ",", ":", "\"", "\\", "9" * 25, "1.5", "{}", "[]"]


def _mutate_json(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8")
    for _ in range(rng.randint(1, 3)):
        where = rng.randint(0, len(text))
        piece = rng.choice(JSON_PIECES)
        if rng.random() < 0.6:
            text = text[:where] + piece + text[where:]
        else:
            text = text[:where] + piece + text[min(len(text), where + rng.randint(1, 5)):]
    return text.encode("utf-8", "surrogatepass")


def _list_scores_by_rule(items: list, doc_id: str, scored: bool) -> set | None:
    """The scores the README's rule allows ``doc_id`` in one query's results (None: any): an object's own score; a
    list's own scores when they fall along it (a tie: the list's order or the doc ids decide, so either), else the
    list's order, n, n-1, ..., 1 (no score, one not finite, or one rising above the one before)."""
    first: dict[str, object] = {}
    for key, value in items:
        first.setdefault(str(key), value)  # a repeat is read at its first place
    if scored:
        return {float(first[doc_id])} if first[doc_id] is not None else None  # type: ignore[arg-type]
    ids, scores = list(first), list(first.values())
    by_order = float(len(ids) - ids.index(doc_id))
    numbers = [float(v) for v in scores if v is not None and math.isfinite(float(v))]
    if len(numbers) < len(scores) or any(b > a for a, b in zip(numbers, numbers[1:], strict=False)):
        return {by_order}
    if all(b < a for a, b in zip(numbers, numbers[1:], strict=False)):
        return {float(first[doc_id])}  # type: ignore[arg-type]
    return {float(first[doc_id]), by_order}  # type: ignore[arg-type]


def test_fuzz_json_dataset_and_results(tmp_path):
    from trec_rag_eval.io.json.content import read_dataset, read_results

    rng = random.Random(SEED * 1000 + 3)
    qrels_path = tmp_path / "q.txt"
    qrels_path.write_bytes(VALID_QRELS)
    for valid, reader in ((VALID_DATASET, read_dataset), (VALID_RESULTS, read_results)):
        for _ in range(CASES // 2):
            data = _mutate_json(rng, valid)
            path = tmp_path / "f.json"
            path.write_bytes(data)
            try:
                table = reader(str(path))
            except TrecRagEvalError:
                continue
            # read: the grades and scores are the JSON's own numbers (json.loads as the reference)
            reference = json.loads(data.decode("utf-8-sig"))
            if reader is read_results and isinstance(reference, dict):
                for query_id, doc_id, score in _rows_of(table, "score"):
                    listed = reference[query_id]
                    items = list(listed.items() if isinstance(listed, dict) else (
                        (item["id"], item.get("score")) if isinstance(item, dict) else (item, None) for item in listed))
                    given = {str(key): value for key, value in items}  # ids may be JSON integers
                    assert doc_id in given
                    allowed = _list_scores_by_rule(items, doc_id, isinstance(listed, dict))
                    assert allowed is None or score in allowed, (data, doc_id, score)
            _evaluate_or_clean_error(str(qrels_path), str(path), ["P.1", "ndcg"])


MEASURE_PIECES = ["P", "ndcg_cut", "iprec_at_recall", "utility", "relstring", "rbp", "ndcg", "11pt_avg", "set_F",
                  "Rprec_mult", "P@", "nDCG", "(", ")", "rel=", "gains={", "}", ":", "=", ",", ".", "@", "p=",
                  "5", "０", "٩", "1_0", "nan", "inf", "-1", "1e999", "99999999999999999999", ".5", "2", "0",
                  "'log2'", "True", " ", "x" * 200]


@pytest.mark.parametrize("salt", [4])
def test_fuzz_measure_parser(tmp_path, salt):
    from trec_rag_eval.measures.requests import parse_measures

    rng = random.Random(SEED * 1000 + salt)
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_bytes(VALID_QRELS)
    run.write_bytes(VALID_RUN)
    parsed = 0
    for _ in range(CASES * 2):
        spec = "".join(rng.choice(MEASURE_PIECES) for _ in range(rng.randint(1, 6)))
        try:
            measures = parse_measures([spec])
        except TrecRagEvalError:
            continue
        parsed += 1
        name, dot, params = spec.partition(".")
        if name == "P" and dot and "," not in params:  # an integer cutoff is what C's atol reads
            assert [m.cutoff for m in measures] == [_libc.atol(params.encode("utf-8"))], spec
        _evaluate_or_clean_error(str(qrels), str(run), measures)
    assert parsed >= 10  # the generator reaches valid requests too (20 to 30 of 500 at most seeds; 19 at one)


# --- the newer surfaces: patterns, chunk maps, Parquet, Python inputs ----------------------------------
# Each has its own oracle: Python's re for patterns, trec_eval 10 for numbers, the expectation written
# here from the rules for the rest.

ID_ALPHABET = ["a", "b", "#", "1", "9", "\u00b2", "\u2460", "\u00e9", "e\u0301", "\u0915", "\u093f", "_", " ", "\n",
               "-", "\u0663", "\u017f", "K", "\u00a0", ".", ":", "p"]
PATTERN_ATOMS = ["a", "b", "#", "1", r"\d", r"\w", r"\s", r"\W", r"\D", r"\S", ".", "[a-z]", "[^#]", r"[\w#]",
                 r"[^\d]", "\u00e9", "\u0301", r"\-", "[\u00b2\u2460]", r"\.", r"\b", "::", "p"]


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth > 2 or roll < 0.35:
        return rng.choice(PATTERN_ATOMS)
    if roll < 0.55:
        return "".join(_random_pattern(rng, depth + 1) for _ in range(rng.randint(1, 3)))
    if roll < 0.7:
        return "(" + _random_pattern(rng, depth + 1) + ")"
    if roll < 0.8:
        return "(?:" + _random_pattern(rng, depth + 1) + "|" + _random_pattern(rng, depth + 1) + ")"
    quantifier = rng.choice(["*", "+", "?", "{1,3}", "{2}", "*?", "+?", "??", "{0,2}?"])
    return "(?:" + _random_pattern(rng, depth + 1) + ")" + quantifier


def test_fuzz_doc_id_patterns_give_re_answers_in_any_order():
    """Random patterns (\\w, \\d, \\b, classes, nested repeats, anchors) over ids with combining marks,
    Devanagari signs, superscripts, newlines: the mapping gives exactly ``re.search(p, id).group(1)``
    (or None) for every id, as a polars Series and as a list, in the ids' order and reversed."""
    import polars as pl

    from trec_rag_eval.io.chunks import DocIdMap

    rng = random.Random(SEED * 1000 + 5)
    checked = 0
    for _ in range(120):
        pattern = rng.choice(["", "^"]) + "(" + _random_pattern(rng) + ")" + rng.choice(["", "$", r"\Z", "#", ".*"])
        try:
            compiled = re.compile(pattern)
        except re.error:
            continue
        ids = ["".join(rng.choice(ID_ALPHABET) for _ in range(rng.randint(1, 9))) for _ in range(30)]
        expected = []
        for chunk_id in ids:
            match = compiled.search(chunk_id)
            expected.append((match.group(1) or None) if match else None)
        mapping = DocIdMap.from_pattern(pattern)
        for order in (1, -1):
            got = mapping.series(pl.Series("doc_id", ids[::order], dtype=pl.Utf8)).to_list()
            assert got == expected[::order], (pattern, ids)
        assert mapping.map_ids(ids) == expected, (pattern, ids)
        checked += 1
    assert checked > 80


def _map_entry_value(rng: random.Random) -> object:
    """A map's document id: mostly a valid one, sometimes null, a list, a boolean, a fraction, an
    empty or whitespace id or a NUL."""
    if rng.random() < 0.75:
        return rng.choice(["d1", "d2", "doc3", 7])
    return rng.choice([None, ["d1"], 1.5, True, {"x": 1}, "", "doc 3", "d\x00", "d\u00a0"])


def _is_id(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return False
    text = str(value)
    return bool(text) and not any(ch.isspace() for ch in text) and "\x00" not in text


def test_fuzz_chunk_maps_read_the_written_table_or_refuse_it(tmp_path):
    """JSON object, JSON list, TSV and Parquet maps of random entries (null, lists, booleans, empty and
    whitespace ids, NUL, integers, keys given twice): each is read as the table the rules give, or
    refused with our error; never another exception, never 'None' or "['d1']" as a document."""
    import polars as pl

    from trec_rag_eval.io.chunks import read_doc_map

    rng = random.Random(SEED * 1000 + 6)
    outcomes = {"read": 0, "refused": 0}
    for case in range(120):
        entries = []
        for index in range(rng.randint(1, 5)):
            chunk: object = rng.choice([f"c{index}"] * 6 + [f"c{rng.randint(0, 2)}", "", "c 9", 11])
            doc = _map_entry_value(rng)
            entries.append((chunk, doc))
        form = rng.choice(["object", "list", "tsv", "parquet"])
        path = tmp_path / f"map{case}"
        if form == "object":
            # written by hand so a key may appear twice
            keys = [json.dumps(str(chunk)) for chunk, _ in entries]
            path.write_text("{" + ",\n".join(f"{k}: {json.dumps(d)}" for k, (_, d) in zip(keys, entries, strict=True))
                            + "}")
            pairs = [(str(c), d) for c, d in entries]
            twice = len({k for k, _ in pairs}) < len(pairs)
        elif form == "list":
            path.write_text(json.dumps([{"chunk_id": c, "doc_id": d} for c, d in entries]))
            pairs, twice = list(entries), False
        elif form == "tsv":
            if any(not isinstance(d, (str, int)) or isinstance(d, bool) for _, d in entries):
                continue  # a TSV holds text only
            path.write_text("".join(f"{c}\t{d}\n" for c, d in entries))
            pairs, twice = [(str(c), str(d)) for c, d in entries], False
        else:
            if any(not isinstance(d, str) for _, d in entries):
                continue  # a Parquet column of strings
            pl.DataFrame({"chunk_id": [str(c) for c, _ in entries], "doc_id": [d for _, d in entries]}).write_parquet(
                path)
            pairs, twice = [(str(c), d) for c, d in entries], False
        try:
            table = read_doc_map(path)
        except TrecRagEvalError:
            outcomes["refused"] += 1
            continue
        outcomes["read"] += 1
        # read: every entry was an id pair, no chunk mapped to two documents, no JSON key twice
        assert not twice, (form, entries)
        expected: dict[str, str] = {}
        for chunk, doc in pairs:
            assert isinstance(doc, (str, int)) and not isinstance(doc, bool), (form, entries)
            if form in ("object", "list"):
                assert _is_id(chunk) and _is_id(doc), (form, entries)
            # a TSV line is cut at tabs and its fields trimmed of C's whitespace only (a no-break space
            # is part of an id, as in a TREC file)
            key, target = (str(chunk).strip(" \t\r\x0b\x0c"), str(doc).strip(" \t\r\x0b\x0c")) \
                if form == "tsv" else (str(chunk), str(doc))
            if form == "tsv" and not key and not target:
                continue  # a line of whitespace alone is a blank line, skipped as a TREC reader skips it
            assert expected.setdefault(key, target) == target, (form, entries)
        assert table == expected, (form, entries)
    assert min(outcomes.values()) > 10, outcomes


def _trec_eval_values(qrels: str, run: str) -> dict[str, float] | None:
    import subprocess

    binary = trec_eval_binary()
    if binary is None:
        return None
    out = subprocess.run([binary, "-m", "map", "-m", "P.5", "-m", "recip_rank", "-m", "ndcg_cut.10", qrels, run],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[0]: float(line.split()[2]) for line in out.splitlines()}


def test_fuzz_parquet_and_python_runs_give_trec_eval_numbers(tmp_path):
    """Random runs (ties, integer-looking ids, infinite scores) given as a TREC file, a Parquet file, a
    dict and a pandas DataFrame: the four give the same numbers, and those are trec_eval 10's on the
    TREC file."""
    import pandas as pd
    import polars as pl

    import trec_rag_eval

    rng = random.Random(SEED * 1000 + 7)
    qrels_path = tmp_path / "qrels.txt"
    runs_checked = 0
    for case in range(12):
        queries = [str(q) for q in range(1, rng.randint(2, 6))]
        judged = {q: {f"d{d}": rng.choice([0, 1, 1, 2]) for d in rng.sample(range(12), 4)} for q in queries}
        qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q in queries for d, r in judged[q].items()))
        rows = []
        for q in queries:
            for d in rng.sample(range(12), rng.randint(1, 9)):
                score = rng.choice([rng.randint(0, 4) / 2, float("inf"), float("-inf"), 1e300, -0.0])
                rows.append((q, f"d{d}", score))
        trec_path = tmp_path / f"run{case}.txt"
        trec_path.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} t\n" for i, (q, d, s) in enumerate(rows)))
        parquet_path = tmp_path / f"run{case}.parquet"
        pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row").write_parquet(parquet_path)
        nested: dict = {}
        for q, d, s in rows:
            nested.setdefault(int(q), {})[d] = s   # integer query ids from Python: the same queries
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
        measures = ["map", "P.5", "recip_rank", "ndcg_cut.10"]
        printed = ["map", "P_5", "recip_rank", "ndcg_cut_10"]   # as trec_eval prints them
        qrels = trec_rag_eval.read_qrels(qrels_path)
        results = [trec_rag_eval.evaluate(qrels, run, measures) for run in (str(trec_path), str(parquet_path),
                                                                             nested, frame)]
        means = [[result.value(m) for m in printed] for result in results]
        assert all(m == means[0] for m in means), (case, means)
        reference = _trec_eval_values(str(qrels_path), str(trec_path))
        if reference is not None:
            # trec_eval prints 4 decimals: half a unit of the last, and a hair for the double at the edge (0.05625)
            assert means[0] == pytest.approx([reference[m] for m in printed], abs=5e-5 + 1e-12), (case, rows)
            runs_checked += 1
    assert runs_checked in (0, 12)


PYTHON_VALUES = [1, 2, 0, -1, 1.0, 2.5, True, None, float("nan"), float("inf"), 10**400, 2**63, "1", "x", [1]]
PYTHON_IDS = ["q1", "q2", 1, 2, "1", "", None, 1.5, True, "a b"]


def _pick(rng: random.Random, values: list, valid: int) -> object:
    """Mostly one of the first ``valid`` values (accepted by the rules), else any."""
    return rng.choice(values[:valid] if rng.random() < 0.85 else values)


def test_fuzz_python_qrels_and_runs_are_read_as_written_or_refused():
    """Random rows as dicts, records and DataFrames, with values of every Python type: each is read with
    the rows the rules give (ids as text, relevance an integer in range, score a number not NaN,
    1 and "1" not both), or refused with our error: never OverflowError, AttributeError or a merge."""
    import pandas as pd

    from trec_rag_eval.tables import Qrels, Run

    rng = random.Random(SEED * 1000 + 8)
    outcomes = {"read": 0, "refused": 0}
    for case in range(200):
        side = rng.choice(["relevance", "score"])
        rows = [(_pick(rng, PYTHON_IDS, 4), _pick(rng, ["d1", "d2", "d3", 3, "", None], 4),
                 _pick(rng, PYTHON_VALUES, 5)) for _ in range(rng.randint(1, 4))]
        shape = rng.choice(["records", "nested", "pandas"])
        if shape == "nested":
            value: object = {}
            for q, d, v in rows:
                value.setdefault(q, {})[d] = v   # type: ignore[union-attr]
            rows = [(q, d, v) for q, docs in value.items() for d, v in docs.items()]  # type: ignore[union-attr]
        elif shape == "records":
            value = [{"query_id": q, "doc_id": d, side: v} for q, d, v in rows]
        else:
            try:
                value = pd.DataFrame(rows, columns=["query_id", "doc_id", side])
            except OverflowError:  # pandas before 3 cannot infer a column holding an int beyond a double
                value = pd.DataFrame(rows, columns=["query_id", "doc_id", side], dtype=object)
        table_type = Qrels if side == "relevance" else Run
        try:
            table = table_type(value)
        except (TrecRagEvalError, TypeError):
            outcomes["refused"] += 1
            continue
        outcomes["read"] += 1
        # read: the written expectation
        def text(x: object, where: tuple = (case, rows)) -> str:
            assert isinstance(x, (str, int)) and not isinstance(x, bool) and str(x) != "", where
            return str(x)

        spellings: dict[str, set] = {}
        for q, _, _ in rows:
            spellings.setdefault(text(q), set()).add(type(q) is str)
        assert all(len(kinds) == 1 for kinds in spellings.values()), (case, rows)  # 1 and "1" are refused
        expected = []
        for q, d, v in rows:
            assert not isinstance(v, (bool, str, list)) and v is not None, (case, rows)
            number = float(v)
            assert not math.isnan(number), (case, rows)
            if side == "relevance":
                assert number.is_integer() and -(2**31) <= number <= 2**31 - 1, (case, rows)
                number = int(number)
            expected.append((text(q), text(d), number))
        assert len({(q, d) for q, d, _ in expected}) == len(expected), (case, rows)
        assert _rows_of(table, side) == sorted(expected), (case, rows)
    assert min(outcomes.values()) > 20, outcomes   # both sides of the rule are exercised


# --- LLM replies and progress records; output and input paths -------------------------------------------
# Each case is built from labelled parts, so the expectation is written by hand from the parts, not read
# back from the code under test: which questions a reply holds, which grade, which progress line is refused,
# which output would replace what is read.

QUESTIONS = ["Quand repiquer les tomates ?", "What is BM25?", "Pourquoi le compost chauffe-t-il ?",
             "Qu'est-ce que le Livret A ?", "How do I install Python 3.12?", "什么是向量检索？", "x?"]
NOT_QUESTIONS = ["2", "42", "?", "**", "1.", "---", "(3)", "…", "0.5", "  "]
BINARY = ["\x00", "\x01", "\x1b[31m", "\x7f", "\x08"]


def test_fuzz_generated_replies():
    from trec_rag_eval.llm.client import MalformedReply
    from trec_rag_eval.llm.queries import MAX_QUESTION_CHARS, checked_questions

    rng = random.Random(SEED * 1000 + 27)
    kept_some = refused = 0
    for _ in range(CASES * 2):
        n = rng.randint(1, 5)
        items: list[tuple[str, str]] = []  # (kind, text)
        for _ in range(rng.randint(1, 7)):
            kind = rng.choices(["question", "noise", "long", "binary"], [6, 3, 0.4, 0.4])[0]
            if kind == "question":
                text = rng.choice(QUESTIONS)
            elif kind == "noise":
                text = rng.choice(NOT_QUESTIONS)
            elif kind == "long":
                text = "Quelle " + "très " * (MAX_QUESTION_CHARS // 5) + "longue question ?"
            else:
                question = rng.choice(QUESTIONS)
                where = rng.randint(0, len(question))
                text = question[:where] + rng.choice(BINARY) + question[where:]
            items.append((kind, text))
        reply = "\n".join(f"{i}. {text}" for i, (_, text) in enumerate(items, start=1))
        # by hand: a control character anywhere refuses the reply; otherwise the questions, in order, at most n
        wanted = [text for kind, text in items if kind == "question"][:n]
        if any(kind == "binary" for kind, _ in items) or not wanted:
            with pytest.raises(MalformedReply):
                checked_questions(reply, n)
            refused += 1
        else:
            assert checked_questions(reply, n) == wanted, reply
            kept_some += 1
    assert kept_some > 50 and refused > 50  # both ways are reached


def test_fuzz_grades():
    from trec_rag_eval.llm.client import MalformedReply
    from trec_rag_eval.llm.judging import parse_grade

    forms = ["{g}", "Grade: {g}", "**{g}**", "Note : {g}/3", "{g} out of 3", "Relevance {g}.", "Grade: {g} ({g})"]
    asides = ["", "On the 0-3 scale: ", "<think>maybe 1, maybe 3</think>\n", "Note (de 0 à 3) : ",
              "<think>between 0 and 2\n</think>"]
    rng = random.Random(SEED * 1000 + 28)
    outcomes = {"grade": 0, "ambiguous": 0, "off the scale": 0, "none": 0}
    for _ in range(CASES * 2):
        grade = rng.choice([0, 1, 2, 3, 3, 2, 5, 7, -1, 77])
        second = rng.choice([None, None, None, grade, (grade + 1) % 4, rng.randint(0, 9)])
        reply = rng.choice(asides) + rng.choice(forms).format(g=grade)
        if second is not None:
            reply += rng.choice([", or maybe {h}", "\nGrade: {h}", " / then {h}"]).format(h=second)
        if rng.random() < 0.1:
            reply = rng.choice(asides) + "I cannot tell."
            expected = "none"
        elif second is not None and second != grade:
            expected = "ambiguous"
        elif grade not in (0, 1, 2, 3):
            expected = "off the scale"
        else:
            expected = "grade"
        outcomes[expected] += 1
        if expected == "grade":
            assert parse_grade(reply) == grade, reply
        else:
            with pytest.raises(MalformedReply):
                parse_grade(reply)
    assert min(outcomes.values()) > 10, outcomes


def test_fuzz_judge_progress_records(tmp_path):
    from trec_rag_eval.errors import InputFormatError
    from trec_rag_eval.io.judgments import LLMJudgment  # noqa: F401 - the records are the sidecar's, before it
    from trec_rag_eval.llm.client import read_progress
    from trec_rag_eval.llm.judging import grade_problem

    identity = {"model": "m", "language": "en", "max_chars": 8000}
    rng = random.Random(SEED * 1000 + 29)
    path = tmp_path / "p.jsonl"
    read = refused = 0
    for _ in range(CASES):
        lines: list[str] = []
        grades: dict[str, int] = {}
        bad_line = None  # the first line that must be refused, by hand
        valid_only = rng.random() < 0.3  # files read whole, at every seed (a bad grade among 8 lines is likely)
        for line_no in range(1, rng.randint(1, 8) + 1):
            doc = rng.choice(["d1", "d2", "d3", "d4"])
            grade = rng.choice([0, 1, 2, 3] if valid_only else [0, 1, 2, 3, 0, 1, 2, 3, 77, -1, "2", 2.5, True, None])
            lines.append(json.dumps({"query_id": "q1", "doc_id": doc, "kind": "hole", "grade": grade, **identity}))
            if bad_line is not None:
                continue
            if type(grade) is not int or grade not in (0, 1, 2, 3):
                bad_line = line_no
            elif doc in grades and grades[doc] != grade:
                bad_line = line_no
            else:
                grades[doc] = grade
        torn = rng.random() < 0.2
        text = "\n".join(lines) + "\n" + ('{"query_id": "q1", "doc_' if torn else "")
        path.write_text(text, encoding="utf-8")
        key_of = lambda record: f"{record['query_id']}\t{record['doc_id']}"  # noqa: E731
        if bad_line is None:
            done = read_progress(path, identity, key_of, "grade", grade_problem)
            assert {key.split("\t")[1]: record["grade"] for key, record in done.items()} == grades
            read += 1
        else:
            with pytest.raises(InputFormatError) as err:
                read_progress(path, identity, key_of, "grade", grade_problem)
            assert err.value.line_no == bad_line, text
            refused += 1
    assert read > 20 and refused > 20


def test_fuzz_output_paths(tmp_path):
    """Random layouts of inputs (files, a folder of runs, links to them) and a random output: refused exactly
    when, by hand, writing it would replace or join what is read, whatever the spelling."""
    import os
    from pathlib import Path

    from trec_rag_eval.errors import UsageError
    from trec_rag_eval.io.atomic import check_output_paths

    rng = random.Random(SEED * 1000 + 30)
    refused = allowed = 0
    for case in range(CASES // 2):
        root = tmp_path / f"c{case}"
        (root / "runs").mkdir(parents=True)
        (root / "other").mkdir()
        qrels = root / "qrels.txt"
        qrels.write_text("q 0 d 1\n")
        for name in ("a.txt", "b.txt"):
            (root / "runs" / name).write_text("q Q0 d 1 1 r\n")
        (root / "old.txt").write_text("an earlier output\n")
        os.symlink(root / "runs", root / "alias")          # a link to the input folder
        os.symlink(qrels, root / "qlink.txt")               # a link to an input file
        os.link(root / "runs" / "a.txt", root / "hard.txt")  # a second name of a run
        inputs = [str(qrels), str(root / "runs")]
        # (spelling of the output, whether by hand it names what is read)
        choices = [
            (qrels, True), (root / "qlink.txt", True), (root / "hard.txt", True), (root / "runs" / "a.txt", True),
            (root / "runs" / "new.txt", True), (root / "alias" / "b.txt", True), (root / "alias" / "new.txt", True),
            (root / "runs" / ".." / "qrels.txt", True), (root / "other" / ".." / "runs" / "c.txt", True),
            (root / "old.txt", False), (root / "new.txt", False), (root / "other" / "out.txt", False),
            (root / "runs2.txt", False), (root / "alias.txt", False), (root / "other" / ".." / "fresh.txt", False),
        ]
        output, replaces_input = rng.choice(choices)
        as_progress = rng.random() < 0.3
        spelled = str(output) if rng.random() < 0.5 else os.path.relpath(output)
        try:
            if as_progress:
                check_output_paths([str(root / "out.json")], True, inputs, [spelled])
            else:
                check_output_paths([spelled], True, inputs)
        except UsageError as err:
            assert replaces_input, (spelled, str(err))
            assert "also an input" in str(err) or "inside the input folder" in str(err)
            refused += 1
        else:
            assert not replaces_input, spelled
            allowed += 1
        assert Path(qrels).read_text() == "q 0 d 1\n"
    assert refused > 10 and allowed > 10


# --- format detection: a file with one bad line is read as the format of its other lines ------------------
# The expectation is the line the generator damaged: whatever its place (often the first, which alone decided
# the format before) and whatever the ids start with ('[' and '{' are JSON's first characters), the error is
# the format's own, naming that file and that line.


def test_fuzz_one_damaged_line_is_named_in_the_format_of_the_others(tmp_path):
    import trec_rag_eval as tre
    from trec_rag_eval.errors import InputFormatError

    rng = random.Random(SEED * 1000 + 31)
    ok = tmp_path / "ok.qrels"
    ok.write_text("q 0 d 1\n")
    good_run = tmp_path / "ok.run"
    good_run.write_text("q Q0 d 1 1.0 r\n")
    named = {"trec qrels": 0, "trec run": 0, "beir": 0}
    for case in range(150):
        kind = rng.choice(list(named))
        count = rng.randint(3, 12)  # two good lines at least: with one, which line is the bad one is a guess
        ids = [rng.choice(["q", "[q", "{q", "1", "query-"]) + str(rng.randint(0, 9)) for _ in range(count)]
        if kind == "trec qrels":
            rows = [[qid, "0", f"d{i}", str(rng.randint(0, 3))] for i, qid in enumerate(ids)]
            expected = "expected 4 columns (query_id iteration doc_id relevance)"
        elif kind == "trec run":
            rows = [[qid, "Q0", f"d{i}", str(i + 1), f"{rng.uniform(-5, 5):.3f}", "tag"] for i, qid in enumerate(ids)]
            expected = "expected 6 columns (query_id Q0 doc_id rank score run_tag)"
        else:
            rows = [[qid, f"d{i}", str(rng.randint(0, 3))] for i, qid in enumerate(ids)]
            expected = "expected 3 columns (query-id corpus-id score), separated by tabs"
        bad = 0 if rng.random() < 0.5 else rng.randrange(count)
        # a field too many (trec_eval reads a run line's seventh field, and ignores it: so does the reader)
        if kind == "beir" or (kind == "trec qrels" and rng.random() < 0.5):
            rows[bad] = rows[bad] + [str(rng.randint(0, 3))]
        else:
            rows[bad] = rows[bad][:-1] if rng.random() < 0.5 else rows[bad][:-2]  # a field or two lost
        separator = "\t" if kind == "beir" else rng.choice([" ", "\t"])
        header = ["query-id\tcorpus-id\tscore"] if kind == "beir" and rng.random() < 0.5 else []
        path = tmp_path / f"case{case}.txt"
        path.write_text("\n".join(header + [separator.join(row) for row in rows]) + "\n")
        qrels, run = (str(ok), str(path)) if kind == "trec run" else (str(path), str(good_run))
        with pytest.raises(InputFormatError) as caught:
            tre.evaluate(qrels, run, ["P@1"])
        assert (caught.value.path, caught.value.line_no) == (str(path), bad + 1 + len(header)), \
            (kind, path.read_text(), str(caught.value))
        assert caught.value.reason.startswith(expected), (kind, path.read_text(), str(caught.value))
        named[kind] += 1
    assert min(named.values()) > 30, named


# --- measure parameters: each one's range checked both ways -----------------------------------------------------
# The oracle is the table below, written from what each parameter means (not read from the registry): a value
# inside gives a finite number for every query, with no warning, and ir_measures' number where it computes the
# measure; a value outside is refused with the range, alike from our notation, an ir_measures measure object
# and a Measure value. (low, high, low included, high included); the names carry the other parameters needed.
INF = math.inf
PARAMETER_RANGES = {
    ("Compat", "p"): (0.0, 1.0, False, True),        # the persistence of a rank-biased overlap
    ("NERR10(max_rel=3)", "p"): (0.0, 1.0, True, True),   # a probability of going on
    ("NERR11(max_rel=3)", "T"): (0.0, INF, False, False),  # a total gain wanted
    ("INSQ(max_rel=3)", "T"): (0.0, INF, False, False),
    ("INST(max_rel=3)", "T"): (0.25, INF, True, False),    # below 0.25 INST's chance of going on can exceed 1
    ("BPM(max_rel=3)@10", "T"): (0.0, INF, False, False),
    ("alpha_nDCG@10", "alpha"): (0.0, 1.0, True, True),    # the share of a subtopic's gain lost per repeat
    ("alpha_DCG@10", "alpha"): (0.0, 1.0, True, True),
    ("NRBP", "alpha"): (0.0, 1.0, True, True),
    ("NRBP", "beta"): (0.0, 1.0, True, True),              # rank i weighs beta^(i-1)
    ("nNRBP", "alpha"): (0.0, 1.0, True, True),
    ("nNRBP", "beta"): (0.0, 1.0, True, True),
}
# parameters trec_eval computes with at any finite value (its number kept), and gains (within +-1e9)
TREC_EVAL_PARAMETERS = {("RBP", "p"), ("RBPResid", "p"), ("SetF", "beta"), ("Utility", "coefficients"),
                        ("IPrecAvg", "levels"), ("G", "gains"), ("nDCG", "gains"), ("nDCG@5", "gains"),
                        ("IDCG", "gains"), ("DCG", "gains"), ("nDCGRel", "gains"), ("RnDCG", "gains"),
                        ("RBPResid", "gains"), ("RBP", "gains")}


def _range_text(low: float, high: float, low_in: bool, high_in: bool) -> str:
    if high == INF:
        return f"a number {'>=' if low_in else '>'} {low:g}"
    return f"a number in {'[' if low_in else '('}{low:g}, {high:g}{']' if high_in else ')'}"


def _with_parameter(name: str, key: str, value: float) -> str:
    """``name`` with ``key=value`` added to its parameters."""
    base, at, cutoff = name.partition("@")
    text = f"{base[:-1]},{key}={value!r})" if base.endswith(")") else f"{base}({key}={value!r})"
    return text + at + cutoff


def _values(rng: random.Random, low: float, high: float) -> list[float]:
    """The ends and just past them, random values inside and outside, and far ones."""
    ends = [low, math.nextafter(low, -INF), math.nextafter(low, INF)]
    if high != INF:
        ends += [high, math.nextafter(high, -INF), math.nextafter(high, INF)]
    top = high if high != INF else low + 50
    return ends + [rng.uniform(low, top) for _ in range(3)] + [
        rng.uniform(low - 5, low), rng.uniform(top, top + 5), -rng.uniform(1, 1e6), rng.uniform(1e6, 1e300),
        -rng.uniform(1e-300, 1e-3), rng.choice([0.0, -0.0, 1.0, -1.0, 2.0])]


def test_every_parameter_range_is_listed_here():
    from trec_rag_eval.measures.ir_notation import parse_notation
    from trec_rag_eval.measures.registry import FAMILIES

    listed = {(parse_notation(name).family, key) for name, key in [*PARAMETER_RANGES, *TREC_EVAL_PARAMETERS]}
    real = {(family.name, key) for family in FAMILIES.values() for key, param in family.params.items()
            if param.kind in ("float", "reals", "gains")}
    assert real == listed


def test_fuzz_parameter_ranges_both_ways(recwarn):
    """Inside: finite values, no warning, and ir_measures' number (the cross-check's verdict); outside: refused
    with the range from every way a measure is given."""
    import dataclasses
    import warnings

    import numpy as np
    from peer_data import random_pair

    from trec_rag_eval.checks.crosscheck import crosscheck_tables
    from trec_rag_eval.errors import MeasureSyntaxError
    from trec_rag_eval.evaluation.evaluate import evaluate_tables
    from trec_rag_eval.measures.ir_notation import parse_notation
    from trec_rag_eval.measures.requests import resolve_measures

    ir_measures = pytest.importorskip("ir_measures")
    rng = random.Random(SEED * 1000 + 33)
    qrels, run = random_pair(SEED * 1000 + 33, subtopics=3)
    inside_count = outside_count = 0
    for (name, key), (low, high, low_in, high_in) in PARAMETER_RANGES.items():
        inside: list[str] = []
        for value in _values(rng, low, high):
            text = _with_parameter(name, key, value)
            is_inside = (value > low or low_in and value == low) and (value < high or high_in and value == high)
            base = parse_notation(name)
            given = {**dict(base.params), key: value}
            if value == base.spec.params[key].default:  # a Measure value holds no parameter at its default
                del given[key]
            as_value = dataclasses.replace(base, params=tuple(sorted(given.items())))
            theirs_name = base.spec.ir_measures.name
            theirs_params = {k: v for k, v in dict(base.params).items()}
            theirs_params[key] = value
            if base.cutoff is not None:
                theirs_params["cutoff"] = base.cutoff
            as_object = ir_measures.measures.registry[theirs_name](**theirs_params)
            if not is_inside:
                refusal = f"{key} must be {_range_text(low, high, low_in, high_in)}"
                for given in (text, as_value, as_object):
                    with pytest.raises(MeasureSyntaxError) as info:
                        resolve_measures([given])
                    assert info.value.reason.startswith(refusal), (given, info.value.reason)
                outside_count += 1
                continue
            assert resolve_measures([text]) == resolve_measures([as_value]) == resolve_measures([as_object]), text
            inside.append(text)
            inside_count += 1
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            result = evaluate_tables(qrels, run, inside)
        for measure in result.measures:
            assert np.isfinite(np.asarray(result.values[measure], dtype=float)).all(), measure
        report = crosscheck_tables(qrels, run, inside)
        assert report.ok and all(v.status in ("agree", "convention") for v in report.verdicts), report.render()
    assert inside_count > 50 and outside_count > 50


def _trec_files(rng: random.Random, tmp_path) -> tuple[str, str]:
    """A small TREC qrels and run, judgments -1 to 3 (each query one judgment >= 0), scores with ties."""
    qrels, run = [], []
    for q in range(1, rng.randint(2, 4) + 1):
        judged = rng.sample(range(20), rng.randint(2, 9))
        grades = [rng.choice([-1, 0, 1, 1, 2, 3]) for _ in judged]
        grades[0] = max(grades[0], 0)
        qrels += [f"{q} 0 d{d} {g}\n" for d, g in zip(judged, grades, strict=True)]
        run += [f"{q} Q0 d{d} {i + 1} {rng.choice([1, 2, 3, 4.5, 7])} t\n"
                for i, d in enumerate(rng.sample(range(20), rng.randint(1, 15)))]
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    return str(tmp_path / "qrels"), str(tmp_path / "run")


# trec_eval orders custom gains through (int)(g1 - g2), so gains less than 1 apart (0.5 against level 0's 0) are
# left in the C library's merge order: its ideal ranking is then not sorted by gain, where ours is. The requests
# whose gains trec_eval sorts take whole numbers (``w``); rbp reads only their least and greatest.
TREC_EVAL_REQUESTS = [
    lambda r, v, w: f"rbp.p={v}", lambda r, v, w: f"rbp_resid.p={v}", lambda r, v, w: f"set_F.{v}",
    lambda r, v, w: f"utility.{v},{r.choice([-1, 0.5, v])},{r.choice([0, -2, v])},{r.choice([0, 1])}",
    lambda r, v, w: f"11pt_avg.{v},{r.choice([0.5, 1, 1.5, -0.5])}",
    lambda r, v, w: f"ndcg.1={w},2={r.choice([3, -2, 7])}", lambda r, v, w: f"ndcg_cut.{r.choice([3, 5])}",
    lambda r, v, w: f"G.2={w}", lambda r, v, w: f"Rndcg.0={w},3=7", lambda r, v, w: f"ndcg_rel.1={w}",
    lambda r, v, w: f"rbp.p={r.choice([0.5, 0.9, 1.2])},2={v}",
]
TREC_VALUES = [0.0, 1.0, -1.0, 0.5, 1.5, -0.1, 2.0, 7.0, -3.5, 1e3, -1e3, 1e8, 1e10, -1e10, 1e200, -1e200, 1e308]


def test_fuzz_trec_eval_parameters_give_trec_evals_numbers_or_are_refused(tmp_path):
    """A parameter trec_eval computes with at any finite value: our trec_eval output is trec_eval 10's where
    its numbers are finite, and a refusal (exit 2, one Error line) where it prints inf or nan; a gain beyond
    +-1e9 is refused with its range. Without trec_eval, the numbers are finite or the request refused."""
    import subprocess

    binary = trec_eval_binary()
    rng = random.Random(SEED * 1000 + 34)
    agreed = refused = 0
    for case in range(100):
        qrels, run = _trec_files(rng, tmp_path)
        value = rng.choice(TREC_VALUES + [round(rng.uniform(-3, 3), 3)])
        whole = float(round(value)) if abs(value) < 1e15 else value
        request = rng.choice(TREC_EVAL_REQUESTS)(rng, repr(value) if rng.random() < 0.7 else f"{value:g}", f"{whole:g}")
        ours = invoke("-q", "-m", request, "--format", "trec", qrels, run)
        assert "Traceback" not in ours.stderr and "nan" not in ours.stdout and "inf" not in ours.stdout, request
        gains = [float(x.split("=")[1]) for x in request.partition(".")[2].split(",") if "=" in x and x[0] != "p"]
        if any(abs(g) > 1e9 for g in gains):
            assert ours.exit_code == 2 and "each must be a number in [-1e+09, 1e+09]" in ours.stderr, request
            refused += 1
            continue
        if binary is None:
            assert ours.exit_code in (0, 2), (request, ours.stderr)
            refused += ours.exit_code == 2
            continue
        theirs = subprocess.run([binary, "-q", "-m", request, qrels, run], capture_output=True, text=True)
        assert theirs.returncode == 0, (request, theirs.stderr)
        if "nan" in theirs.stdout or "inf" in theirs.stdout:
            assert ours.exit_code == 2 and ours.stdout == "", (request, ours.stdout)
            assert ours.stderr.startswith("Error: measure ") and "trec_eval prints inf or nan" in ours.stderr
            refused += 1
        else:
            assert ours.exit_code == 0, (request, ours.stderr)
            assert ours.stdout == theirs.stdout, (case, request)
            agreed += 1
    assert refused > 5 and (binary is None or agreed > 25), (agreed, refused)


# --- fusion with infinite, huge and tiny scores and parameters ----------------------------------------------
# The oracle is the rule of docs/fusion.md written out with exact fractions (``fractions.Fraction`` holds any finite
# double, so no sum overflows or underflows on the way): ranks by score then doc id descending; before a
# scale-free normalisation each infinite score stands one spread beyond the run's finite scores of the query;
# ``none`` adds the scores as numbers (inf - inf has no value); a fused score beyond a double is refused.

FUSION_SCORES = [math.inf, -math.inf, 1.5e308, -1.5e308, 1e300, 1e-300, 1e-320, 5e-324, -5e-324, 0.0, 1.0, 2.5, -3.0]
FUSION_WEIGHTS = [0.0, 0.5, 1.0, 3.0, 1e300, 1e-300, 1e-320]
FUSION_KS = [0.0, 1.0, 60.0, 1e12, 1e300, 1.7e308, 1e-300, 5e-324]
TINY = 2.2250738585072014e-308
DOUBLE_MAX = 1.7976931348623157e308


class _Refused(Exception):
    """The oracle's word: this fusion has no number to write (the library must refuse it)."""


def _doc_key(doc: str) -> list[int]:
    return [-b for b in doc.encode("utf-8")] + [1]  # byte order, descending; a prefix after its extensions


def _normalised_by_hand(scores: dict[str, float], norm: str) -> dict[str, object]:
    from fractions import Fraction

    order = sorted(scores, key=lambda d: (-scores[d], _doc_key(d)))
    n = len(order)
    if norm == "rank":
        return {d: 1 - Fraction(r, n) for r, d in enumerate(order)}
    if norm == "none":
        return dict(scores)
    finite = [Fraction(v) for v in scores.values() if math.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else (Fraction(0), Fraction(0))
    spread = high - low or abs(high) or Fraction(1)
    standing = {d: high + spread if v == math.inf else low - spread if v == -math.inf else Fraction(v)
                for d, v in scores.items()}
    values = list(standing.values())
    if norm == "minmax":
        span = max(values) - min(values)
        return {d: (v - min(values)) / span if span else Fraction(0) for d, v in standing.items()}
    if norm == "sum":
        total = sum(v - min(values) for v in values)
        return {d: (v - min(values)) / total if total else Fraction(0) for d, v in standing.items()}
    if norm == "max":
        if max(values) <= 0:
            raise _Refused("max normalisation needs a positive top")
        ratios = {d: v / max(values) for d, v in standing.items()}
        if any(abs(v) > DOUBLE_MAX for v in ratios.values()):
            raise _Refused("a tiny top puts a ratio beyond a double")
        return ratios
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / n
    if not variance:
        return {d: Fraction(0) for d in standing}
    with decimal.localcontext() as context:  # the root to 60 digits: a z-score of 1e-308 keeps its digits
        context.prec = 60
        sd = (decimal.Decimal(variance.numerator) / decimal.Decimal(variance.denominator)).sqrt()
        return {d: Fraction((v - mean).numerator) / Fraction((v - mean).denominator) / Fraction(sd)
                for d, v in standing.items()}


def _fused_by_hand(runs: list[dict], method: str, norm: str, k: float, weights: list[float] | None,
                   may_refuse: list, scales: dict | None = None) -> dict:
    """The fused run by the rule; ``may_refuse`` gets the documents whose refusal the rule leaves open,
    ``scales`` each query's largest finite term (a weighted share), the size a float computation is exact to."""
    from fractions import Fraction

    fused: dict[str, dict[str, float]] = {}
    for query in dict.fromkeys(q for run in runs for q in run):
        lists = [run.get(query, {}) for run in runs]
        normal = [_normalised_by_hand(scores, norm) if scores else {} for scores in lists]
        ranks = [{d: r + 1 for r, d in enumerate(sorted(s, key=lambda d: (-s[d], _doc_key(d))))} for s in lists]
        docs = list(dict.fromkeys(d for scores in lists for d in scores))
        if scales is not None:
            w_all = weights or [1.0] * len(runs)
            terms = [abs(float(w_all[i]) * float(v)) for i in range(len(runs)) for v in normal[i].values()
                     if w_all[i] and math.isfinite(float(v)) and method not in ("rrf", "isr", "borda")]
            scales[query] = max([t for t in terms if math.isfinite(t)] + [1.0 if norm != "none" else 0.0])
        out = {}
        w = weights or ([0.5 if len(runs) == 2 else 1 / 3] * len(runs) if method == "wsum" else [1.0] * len(runs))
        for doc in docs:
            there = [i for i in range(len(runs)) if doc in lists[i]]
            m = len(there)
            # an infinite share of a run that counts makes the score that infinity, whatever the others
            infinite_share = method == "wsum" and any(w[i] and isinstance(normal[i][doc], float)
                                                      and math.isinf(normal[i][doc]) for i in there)
            if method in ("wsum", "rrf") and not infinite_share:
                for i in there:  # a run's weighted share must be a double itself
                    share = 1 / (Fraction(k) + ranks[i][doc]) if method == "rrf" else normal[i][doc]
                    if w[i] and abs(Fraction(w[i]) * Fraction(float(share))) > DOUBLE_MAX:
                        raise _Refused("a weighted share beyond a double")
                # the weights push every share of the document (of the runs that count) below the normal doubles
                # though one of them is a normal double: its fused score would lose its digits
                # each share as the double that holds it (a normalised score below 5e-324 is 0)
                counted = {i: abs(Fraction(float(1 / (Fraction(k) + ranks[i][doc]) if method == "rrf"
                                                 else normal[i][doc])))
                           for i in there if w[i] and (method == "rrf" or math.isfinite(normal[i][doc]))}
                if counted:
                    big = max(counted.values())
                    weighted = max(abs(Fraction(w[i])) * share for i, share in counted.items())
                    if norm == "zscore" and big < 1e-8:  # a z-score near 0 is the rounding of its mean: either way
                        if weighted < 4 * TINY:
                            may_refuse.append(doc)
                    elif weighted < TINY / 4 and big >= 4 * TINY:
                        raise _Refused("the weights make a fused score lose its digits")
                    elif weighted < 4 * TINY and big >= TINY / 4:  # near the edge: refused or not
                        may_refuse.append(doc)
            if method in ("rrf", "isr", "borda"):
                if method == "rrf":
                    shares = {i: 1 / (Fraction(k) + ranks[i][doc]) for i in there}
                    value: object = sum(Fraction(w[i]) * shares[i] for i in there)
                elif method == "isr":
                    value = m * sum(Fraction(1, ranks[i][doc] ** 2) for i in there)
                else:
                    c = len(docs)
                    value = sum(c - ranks[i][doc] + 1 if doc in lists[i] else Fraction(c - len(lists[i]) + 1, 2)
                                for i in range(len(runs)))
            else:
                shares = {i: normal[i][doc] for i in there}
                if method == "wsum":
                    shares = {i: v for i, v in shares.items() if w[i]}  # a run of weight 0 counts nothing
                infinite = {v for v in shares.values() if isinstance(v, float) and math.isinf(v)}
                if method in ("combmax", "combmin"):
                    pick = max if method == "combmax" else min
                    value = pick(shares.values(), key=lambda v: v if isinstance(v, float) else float(v))
                elif infinite:
                    if len(infinite) == 2:
                        raise _Refused("inf - inf")
                    value = infinite.pop()
                else:
                    exact = {i: Fraction(v) for i, v in shares.items()}
                    if method == "wsum":
                        exact = {i: Fraction(w[i]) * v for i, v in exact.items()}
                    total = sum(exact.values(), Fraction(0))
                    value = total * m if method == "combmnz" else total / m if method == "combanz" else total
            try:
                out[doc] = float(value)  # type: ignore[arg-type]
            except OverflowError:
                raise _Refused("beyond a double") from None
        fused[query] = out
    return fused


def test_fuzz_fusion_with_extreme_scores_is_the_rule_or_refused(tmp_path):
    """Random runs with infinite, huge and tiny scores, every method and normalisation, huge and tiny k and
    weights: the fused scores are the rule's (finite, or the infinity ``none`` adds up to), the file is read
    back as written, no NaN, no numpy warning; or both the rule and the library refuse."""
    import warnings

    import trec_rag_eval as tre
    from trec_rag_eval.errors import UsageError

    rng = random.Random(SEED * 1000 + 36)
    outcomes = {"fused": 0, "refused": 0, "infinite": 0}
    for case in range(CASES):
        runs = []
        for _ in range(rng.randint(2, 3)):
            run: dict[str, dict[str, float]] = {}
            for query in ("q1", "q2")[: rng.randint(1, 2)]:
                docs = rng.sample(["a", "b", "c", "d", "e"], rng.randint(1, 4))
                run[query] = {d: rng.choice(FUSION_SCORES) if rng.random() < 0.6 else rng.uniform(-5, 5)
                              for d in docs}
            runs.append(run)
        method = rng.choice(["combsum", "combmnz", "combmax", "combmin", "combanz", "wsum", "rrf", "isr", "borda"])
        norm = "none" if method in ("rrf", "isr", "borda") else rng.choice(
            ["minmax", "zscore", "sum", "max", "rank", "none", "none"])
        k = rng.choice(FUSION_KS)
        weights = ([rng.choice(FUSION_WEIGHTS) for _ in runs] if method in ("wsum", "rrf") and rng.random() < 0.6
                   else None)
        if weights is not None and not any(weights):
            weights[0] = 1.0
        where = (case, runs, method, norm, k, weights)
        open_refusal: list[str] = []
        scales: dict[str, float] = {}
        try:
            expected = _fused_by_hand(runs, method, norm, k if method == "rrf" else 60.0, weights, open_refusal,
                                      scales)
        except _Refused:
            expected = None
        named = {f"R{i}": run for i, run in enumerate(runs)}
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # a numpy warning fails the case
            warnings.simplefilter("ignore", tre.TrecRagEvalWarning)  # the notes (a k too large to rank) are allowed
            try:
                fusion = tre.fuse(named, method, norm, k=k if method == "rrf" else None, weights=weights)
            except UsageError:
                assert expected is None or open_refusal, where
                outcomes["refused"] += 1
                continue
        assert expected is not None, where
        got = fusion.run.to_dict()
        assert set(got) == set(expected), where
        for query, docs in expected.items():
            assert set(got[query]) == set(docs), where
            for doc, value in docs.items():
                ours = got[query][doc]
                assert not math.isnan(ours), where
                if math.isinf(value):
                    assert ours == value, where
                    outcomes["infinite"] += 1
                else:
                    # to 9 digits of the query's scale: a float sum or z-score is exact to the size of its terms
                    scale = max([abs(v) for v in docs.values() if math.isfinite(v)] + [scales[query], 1e-300])
                    assert ours == pytest.approx(value, rel=1e-9, abs=1e-9 * scale), where
        path = tmp_path / f"fused{case}.txt"
        fusion.write(path)
        assert "nan" not in path.read_text().lower(), where
        assert tre.read_run(str(path)).to_dict() == got, where
        outcomes["fused"] += 1
    assert min(outcomes.values()) > 10, outcomes


# --- agreement with unjudged documents and negative grades -------------------------------------------------
# The oracle is the README's rule written out: a negative grade is in the pool, not judged, so that side gives the
# pair no label; kappa and alpha are their definitions computed here with exact fractions over the pairs both
# judge (Cohen's kappa: 1 - observed / expected weighted disagreement, weights [c != k] or |c - k|; Krippendorff's
# alpha: 1 - D_o / D_e over every ordered pair of the values coded, two coders per unit), undefined (None) when
# no disagreement is expected.

def _kappa_by_hand(x: list[int], y: list[int], linear: bool):
    from fractions import Fraction

    n = len(x)
    weight = (lambda c, k: abs(c - k)) if linear else (lambda c, k: int(c != k))
    observed = Fraction(sum(weight(c, k) for c, k in zip(x, y, strict=True)), n)
    expected = sum(Fraction(x.count(c) * y.count(k), n * n) * weight(c, k) for c in set(x) for k in set(y))
    return None if expected == 0 else 1 - observed / expected


def _alpha_by_hand(x: list[int], y: list[int], interval: bool):
    from fractions import Fraction

    delta = (lambda c, k: (c - k) ** 2) if interval else (lambda c, k: int(c != k))
    values = x + y
    n = len(values)
    observed = Fraction(sum(2 * delta(c, k) for c, k in zip(x, y, strict=True)), n)
    expected = Fraction(sum(delta(values[i], values[j]) for i in range(n) for j in range(n) if i != j),
                        n * (n - 1))
    return None if expected == 0 else 1 - observed / expected


def _agreement_by_hand(a: dict, b: dict, level: int) -> dict:
    judged_a = {(q, d): g for q, docs in a.items() for d, g in docs.items() if g >= 0}
    judged_b = {(q, d): g for q, docs in b.items() for d, g in docs.items() if g >= 0}
    shared = [key for key in judged_a if key in judged_b]
    x, y = [judged_a[key] for key in shared], [judged_b[key] for key in shared]
    bx, by = [int(g >= level) for g in x], [int(g >= level) for g in y]
    grades = sorted(set(x) | set(y))
    empty = not shared
    return {
        "shared": len(shared), "only_a": len(judged_a) - len(shared), "only_b": len(judged_b) - len(shared),
        "kappa_binary": None if empty else _kappa_by_hand(bx, by, False),
        "kappa_linear": None if empty else _kappa_by_hand(x, y, True),
        "alpha_nominal": None if empty else _alpha_by_hand(bx, by, False),
        "alpha_interval": None if empty else _alpha_by_hand(x, y, True),
        "same_binary": None if empty else sum(p == q for p, q in zip(bx, by, strict=True)) / len(shared),
        "same_grade": None if empty else sum(p == q for p, q in zip(x, y, strict=True)) / len(shared),
        "grades": grades,
        "confusion": [[sum(1 for p, q in zip(x, y, strict=True) if (p, q) == (g, h)) for h in grades]
                      for g in grades],
    }


def test_fuzz_agreement_takes_a_negative_grade_for_no_label(tmp_path):
    """Random pairs of judgments with negative grades, documents one side leaves out, and levels: from Python
    (dicts) and through the command (TREC files, JSON), the counts, kappa, alpha, grades and confusion matrix
    are the rule's; no negative grade is a row or column; an undefined value is NaN in Python, null in JSON."""
    import trec_rag_eval as tre

    rng = random.Random(SEED * 1000 + 37)
    seen = {"negative in both": 0, "negative in one": 0, "undefined": 0, "command": 0}
    for case in range(60):
        docs = [f"d{i}" for i in range(rng.randint(2, 8))]
        sides = []
        for _ in range(2):
            side: dict[str, dict[str, int]] = {}
            for query in ("q1", "q2", "q3")[: rng.randint(1, 3)]:
                chosen = {d: rng.choice([-3, -1, -1, 0, 0, 1, 1, 2, 3]) for d in docs if rng.random() < 0.8}
                if chosen:
                    side[query] = chosen
            sides.append(side or {"q1": {"d0": 0}})
        a, b = sides
        if rng.random() < 0.3:  # one side a copy of the other but for some grades made negative
            b = {q: {d: (-1 if rng.random() < 0.3 else g) for d, g in docs_.items()} for q, docs_ in a.items()}
        level = rng.choice([1, 1, 2, 3])
        expected = _agreement_by_hand(a, b, level)
        where = (case, a, b, level)
        both = [(q, d) for q in a for d in a[q] if a[q][d] < 0 and b.get(q, {}).get(d, 0) < 0 and d in b.get(q, {})]
        seen["negative in both"] += bool(both)
        seen["negative in one"] += any(g < 0 for side in (a, b) for docs_ in side.values() for g in docs_.values())
        seen["undefined"] += expected["kappa_binary"] is None
        labels = tre.agree(a, b, relevance_level=level).labels
        for key, value in expected.items():
            got = getattr(labels, key)
            if value is None:
                assert math.isnan(got), (where, key, got)
            elif isinstance(value, list):
                assert got == value, (where, key, got)
            else:
                assert got == pytest.approx(float(value), rel=1e-12, abs=1e-15), (where, key, got, value)
        if case % 4:
            continue
        for name, side in (("a", a), ("b", b)):
            (tmp_path / name).write_text("".join(f"{q} 0 {d} {g}\n" for q, docs_ in side.items()
                                                 for d, g in docs_.items()))
        result = invoke("agree", "-f", "json", "-l", str(level), str(tmp_path / "a"), str(tmp_path / "b"))
        assert result.exit_code == 0, (where, result.stderr)
        document = json.loads(result.stdout, parse_constant=lambda constant: pytest.fail(f"{constant} in JSON"))
        for key, value in expected.items():
            got = document["labels"][key]
            assert got == (pytest.approx(float(value), rel=1e-12, abs=1e-15)
                           if value is not None and not isinstance(value, list) else value), (where, key, got)
        text = invoke("agree", "-l", str(level), str(tmp_path / "a"), str(tmp_path / "b"))
        assert text.exit_code == 0 and "nan" not in text.stdout.lower() and "  A -" not in text.stdout, where
        seen["command"] += 1
    assert min(seen.values()) >= 3, seen


# --- credentials in URLs, in every command that takes them -------------------------------------------------
# A random user and password (or a lone token) in the URL of an input, of --base-url or of --cluster; the server
# (on 127.0.0.1) serves the file, refuses it with a status whose message echoes the Authorization header, or is
# a port where nothing listens. The oracle: a result (exit 0) or one Error line (exit 1 or 2), no traceback, and
# no form of the secret (as written, decoded, encoded again, HTTP Basic auth's base64, a piece) in stdout,
# stderr or any file written.

_SECRET_CHARACTERS = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-._~!$&'()*+,;="


def _secret(rng: random.Random, case: int) -> str:
    """A password as a URL holds it: each case its own (a process remembers what it sent), some characters
    percent-encoded (an @, a colon, a slash, a percent sign)."""
    pieces = [rng.choice(_SECRET_CHARACTERS) for _ in range(rng.randint(8, 20))]
    for _ in range(rng.randint(0, 3)):
        pieces.insert(rng.randrange(len(pieces) + 1), rng.choice(["%40", "%3A", "%2F", "%25", "%20"]))
    return f"S{case}x" + "".join(pieces)


def _secret_forms(user: str | None, password: str) -> set[str]:
    import base64
    import urllib.parse

    decoded = urllib.parse.unquote(password)
    forms = {password, decoded, urllib.parse.quote(decoded, safe=""), decoded[-8:]}
    pair = f"{urllib.parse.unquote(user)}:{decoded}" if user is not None else f"{decoded}:"
    for coded in (base64.b64encode(pair.encode()), base64.urlsafe_b64encode(pair.encode())):
        forms |= {coded.decode(), coded.decode().rstrip("=")}
    return forms


def _command_with_url(rng: random.Random, kind: str, url, tmp) -> list[str]:
    """The arguments of one command given ``url(name)`` for an input (``tmp``: its inputs and out/)."""
    qrels, run = str(tmp / "qrels.txt"), str(tmp / "a.txt")
    out = tmp / "out"
    return {
        "evaluate run": lambda: ["-m", "P@5", "-f", rng.choice(["trec", "table", "json", "csv"]), qrels, url("a.txt")],
        "evaluate qrels": lambda: ["-m", "P@5", url("qrels.txt"), run],
        "evaluate runs": lambda: ["-m", "P@5", qrels, url("a.txt"), url("b.txt")],
        "compare": lambda: ["compare", "-f", rng.choice(["text", "json"]), qrels, run, url("b.txt")],
        "agree": lambda: ["agree", rng.choice(["-f", "--format"]), rng.choice(["text", "json"]), qrels,
                          url("qrels.txt")],
        "fuse": lambda: ["fuse", run, url("b.txt"), "-o", str(out / "fused.txt")],
        "crosscheck": lambda: ["crosscheck", "-m", "P@5", qrels, url("a.txt")],
        "validate": lambda: ["validate", "-m", "P@5", qrels, run, url("ref.txt")],
        "plan": lambda: ["plan", "--delta", "0.1", qrels, run, url("b.txt")],
        "report": lambda: ["report", qrels, run, url("b.txt"), "-o", str(out / "report.html")],
        "convert": lambda: ["convert", url("a.txt"), "--json", str(out / "a.json")],
    }[kind]()


def test_fuzz_credentials_in_urls_never_come_back(tmp_path, monkeypatch):
    """Every command that takes a URL, with credentials in it: a result or one Error line, and no form of the
    secret anywhere it printed or wrote."""
    import shutil

    from file_server import FileServer, closed_port
    from test_llm_security import Echoing, _generate, _judge
    from test_llm_security import inputs as _  # noqa: F401 - the LLM commands' inputs, made below

    pytest.importorskip("aiohttp")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rng = random.Random(SEED * 1000 + 38)
    served = tmp_path / "served"
    served.mkdir()
    shutil.copy("fixtures/qrels.txt", served / "qrels.txt")
    shutil.copy("fixtures/run_bm25.txt", served / "a.txt")
    shutil.copy("fixtures/run_hybrid.txt", served / "b.txt")
    (served / "ref.txt").write_text(invoke("-q", "-f", "trec", "fixtures/qrels.txt", "fixtures/run_bm25.txt").stdout)
    for name in ("qrels.txt", "a.txt", "b.txt", "ref.txt"):
        shutil.copy(served / name, tmp_path / name)
    llm = tmp_path / "llm"
    llm.mkdir()
    from test_judge import DATASET, FAKE_GRADES, RUN
    (llm / "dataset.json").write_text(json.dumps(DATASET), encoding="utf-8")
    (llm / "run.txt").write_text(RUN, encoding="utf-8")
    (llm / "corpus.jsonl").write_text("".join(json.dumps({"id": d, "text": f"passage {d}"}) + "\n"
                                              for d in FAKE_GRADES), encoding="utf-8")
    try:
        import distributed  # noqa: F401
        cluster = True
    except ImportError:
        cluster = False
    kinds = ["evaluate run", "evaluate qrels", "evaluate runs", "compare", "agree", "fuse", "crosscheck", "validate",
             "plan", "report", "convert", "judge", "generate-queries"] + (["--cluster"] if cluster else [])
    outcomes: dict[str, int] = {"result": 0, "error": 0}
    by_kind = dict.fromkeys(kinds, 0)
    refusals = {"qrels.txt": (401, "no {authorization}"), "a.txt": (403, "forbidden: {authorization}"),
                "b.txt": (500, "oops {authorization}"), "ref.txt": (400, "bad {authorization}")}
    for case in range(40):
        kind = kinds[case % len(kinds)] if case < len(kinds) else rng.choice(kinds)
        user = rng.choice(["bob", "alice%40corp", "x", None])  # None: a lone token in the user's place
        password = _secret(rng, case)
        userinfo = password if user is None else f"{user}:{password}"
        forms = _secret_forms(user, password)
        out = tmp_path / "out"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        for name in ("judged.qrels", "judged.qrels.llm.tsv", "generated.json"):
            (llm / name).unlink(missing_ok=True)
        place = rng.choice(["served", "served", "refused", "closed"])
        where = (case, kind, place, userinfo)
        if kind in ("judge", "generate-queries"):
            with Echoing(rng.choice([401, 400, 500, 200])) as server:
                base = server.base_url.replace("http://", f"http://{userinfo}@", 1)
                result = (_judge if kind == "judge" else _generate)(llm, base, "--concurrency", "1")
            written = [llm / name for name in ("judged.qrels", "judged.qrels.llm.tsv", "generated.json")]
        elif kind == "--cluster":
            with closed_port() as port:
                result = invoke("--cluster", f"{rng.choice(['tcp://', 'tls://', ''])}{userinfo}@127.0.0.1:{port}",
                                "-m", "P@5", str(tmp_path / "qrels.txt"), str(tmp_path / "a.txt"))
            written = []
        else:
            with FileServer(served, refuse=refusals if place == "refused" else None) as server, \
                    closed_port() as port:
                def url(name, port=port, server=server, place=place, userinfo=userinfo):
                    if place == "closed":
                        return f"http://{userinfo}@127.0.0.1:{port}/{name}"
                    return server.url(name, userinfo)
                result = invoke(*_command_with_url(rng, kind, url, tmp_path))
            written = list(out.iterdir())
        assert "Traceback" not in result.stderr, where
        if result.exit_code == 0:
            outcomes["result"] += 1
            assert place == "served" or kind in ("judge", "generate-queries"), (where, result.stdout)
        else:
            assert result.exit_code in (1, 2), (where, result.exit_code, result.stderr)
            lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
            # one line; several runs evaluated: one per run that failed, each alone (the others printed)
            assert 1 <= len(lines) <= (2 if kind == "evaluate runs" else 1), (where, result.stderr)
            assert all("no such file" not in line for line in lines), (where, lines)  # every file is there
            outcomes["error"] += 1
        places = {"stdout": result.stdout, "stderr": result.stderr}
        places |= {str(p): p.read_text(errors="replace") for p in written if p.is_file()}
        shown = [f"{form!r} in {name}" for form in forms for name, text in places.items() if form in text]
        assert shown == [], (where, shown)
        by_kind[kind] += 1
    assert min(outcomes.values()) > 5 and min(by_kind.values()) >= 1, (outcomes, by_kind)
