"""The suite's own fuzz test: mangled TREC files, JSON files and measure requests give either the
numbers a reference reading gives, or one of our own errors. Never another exception.

A seeded generator (the same cases on every run, a few seconds in all) mutates valid inputs with
the bytes that broke us before: Unicode and C whitespace, a byte-order mark, Python-only number
forms, huge and special numbers, comment marks, cut lines, deep nesting.

The reference reading is written here from trec_eval's rules, with the C library itself as the
oracle for numbers: a field is a score when libc's ``strtod`` consumes all of it (and a relevance
when ``strtol`` does, within range), so our own syntax module is checked, not reused.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
import random
import re

import pytest

from trec_rag_eval.errors import TrecRagEvalError

SEED = 14
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
    from trec_rag_eval.io.tables import column_list

    return sorted(zip(column_list(table, "query_id"), column_list(table, "doc_id"),
                      column_list(table, value_column), strict=True))


def _read_all_paths(reader, data: bytes, tmp_path, monkeypatch, name: str):
    """(outcome on the small-file path, outcome on the polars path); an outcome is rows or 'error'."""
    from trec_rag_eval.io import trec

    path = tmp_path / name
    path.write_bytes(data)
    outcomes = []
    for threshold in (1 << 20, 0):
        monkeypatch.setattr(trec, "SMALL_FILE_BYTES", threshold)
        try:
            outcomes.append(reader(str(path)))
        except TrecRagEvalError:
            outcomes.append("error")
    return outcomes


def test_fuzz_trec_qrels(tmp_path, monkeypatch):
    from trec_rag_eval.io.trec import read_qrels

    for data in _cases(VALID_QRELS, 1):
        small, fast = _read_all_paths(lambda p: _rows_of(read_qrels(p), "relevance"), data, tmp_path, monkeypatch,
                                      "qrels.txt")
        expected = reference_qrels(data)
        assert small == fast, data
        assert small == ("error" if expected is None or not data.strip() else expected), data


def test_fuzz_trec_run(tmp_path, monkeypatch):
    from trec_rag_eval.io.trec import iter_run_chunks, read_run

    def read(path):
        run = read_run(path)
        return _rows_of(run, "score"), run.run_tag

    for data in _cases(VALID_RUN, 2):
        small, fast = _read_all_paths(read, data, tmp_path, monkeypatch, "run.txt")
        expected = reference_run(data)
        assert small == fast, data
        assert small == ("error" if expected is None or not data.strip() else expected), data
        if small != "error":  # read in pieces of a few bytes: the same rows (when grouped by query)
            try:
                pieces = list(iter_run_chunks(str(tmp_path / "run.txt"), chunk_bytes=16))
            except TrecRagEvalError as err:
                assert "comes back after other queries" in str(err), data
            else:
                assert sorted(row for piece in pieces for row in _rows_of(piece, "score")) == small[0], data


def _evaluate_or_clean_error(qrels_path: str, run_path: str, measures) -> None:
    from trec_rag_eval.evaluation.evaluate import evaluate
    from trec_rag_eval.io.load import load_qrels, load_run

    try:
        qrels = load_qrels(qrels_path)
        evaluate(qrels, load_run(run_path, qrels=qrels), measures)
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


def test_fuzz_json_dataset_and_results(tmp_path):
    from trec_rag_eval.io.json_formats import read_dataset, read_results

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
                    items = listed.items() if isinstance(listed, dict) else (
                        (item["id"], item.get("score")) if isinstance(item, dict) else (item, None) for item in listed)
                    given = {str(key): value for key, value in items}  # ids may be JSON integers
                    assert doc_id in given
                    assert given[doc_id] is None or float(given[doc_id]) == score
            _evaluate_or_clean_error(str(qrels_path), str(path), ["P.1", "ndcg"])


MEASURE_PIECES = ["P", "ndcg_cut", "iprec_at_recall", "utility", "relstring", "rbp", "ndcg", "11pt_avg", "set_F",
                  "Rprec_mult", "P@", "nDCG", "(", ")", "rel=", "gains={", "}", ":", "=", ",", ".", "@", "p=",
                  "5", "０", "٩", "1_0", "nan", "inf", "-1", "1e999", "99999999999999999999", ".5", "2", "0",
                  "'log2'", "True", " ", "x" * 200]


@pytest.mark.parametrize("salt", [4])
def test_fuzz_measure_parser(tmp_path, salt):
    from trec_rag_eval.measures.parse import parse_measures

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
    assert parsed > 20  # the generator reaches valid requests too
