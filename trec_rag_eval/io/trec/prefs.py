"""Preference judgments as text (trec_eval's ``-R prefs`` and ``-R qrels_prefs``) and judgment-group qrels
(``-R qrels_jg``).

* prefs: ``query_id group subgroup doc_id level`` a line (trec_eval's ``qid jg jsg docno rel_level``);
* qrels_prefs: a TREC qrels file, ``query_id iteration doc_id relevance``, read as prefs: the iteration
  column is the group, every group has one subgroup (``"0"``), and the relevance is the level;
* qrels_jg: a TREC qrels file whose iteration column names the judgment group (a ``GroupedQrels``).

The lines are read as the TREC qrels reader reads its own (``io.trec.qrels_runs``; docs/trec_eval_conventions.md §11.3):
any whitespace between fields, CRLF line ends, gzip, blank lines and ``#`` comment lines anywhere (trec_eval takes
one comment line at a time, never the last line, and no blank line). A level is a number as C's ``strtod`` reads a
whole field (trec_eval's ``atof`` also takes ``3abc`` as 3, and anything else as 0: refused here), never NaN. The
contradictions trec_eval finds only while scoring (two levels for a document in one subgroup; level 0 and a level
above 0 in one group) are refused by ``Preferences`` itself, with both lines.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator

import numpy as np

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.atomic import write_atomic
from trec_rag_eval.io.ids import check_ids
from trec_rag_eval.io.sources import check_file, decode_line, read_bytes
from trec_rag_eval.syntax import parse_real, quote, separator_hint, split_fields
from trec_rag_eval.tables.judgment_kinds import PREFERENCE_COLUMNS, Preferences

PREFS_COLUMNS = "query_id group subgroup doc_id level"
QRELS_PREFS_COLUMNS = "query_id group doc_id level"
QRELS_PREFS_SUBGROUP = "0"
"""The one subgroup of every group of a qrels file read as prefs (trec_eval's get_qrels_prefs)."""


def read_prefs(path: str | os.PathLike[str]) -> Preferences:
    """Read a prefs file: ``query_id group subgroup doc_id level`` a line (see the module docstring)."""
    return _read(os.fspath(path), qrels_layout=False)


def read_qrels_prefs(path: str | os.PathLike[str]) -> Preferences:
    """Read a TREC qrels file as preferences, as trec_eval's ``-R qrels_prefs`` does: the iteration column is
    the group, with one subgroup, and the relevance the level (any number, not only an integer)."""
    return _read(os.fspath(path), qrels_layout=True)


def parse_prefs_text(text: str, source: str = "<prefs>") -> Preferences:
    """Preferences from a string in the prefs layout (tests, notebooks)."""
    return _from_lines(source, _lines(source, text.encode("utf-8")), qrels_layout=False)


def _read(path: str, qrels_layout: bool) -> Preferences:
    check_file(path)
    data = read_bytes(path)
    if not data.strip():
        raise InputFormatError(path, None, "empty file")
    return _from_lines(path, _lines(path, data), qrels_layout)


def _lines(path: str, data: bytes) -> Iterator[tuple[int, str]]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for line_no, raw in enumerate(data.split(b"\n"), start=1):
        yield line_no, decode_line(path, line_no, raw[:-1] if raw.endswith(b"\r") else raw)


def _from_lines(path: str, lines: Iterator[tuple[int, str]], qrels_layout: bool) -> Preferences:
    layout = QRELS_PREFS_COLUMNS if qrels_layout else PREFS_COLUMNS
    width = 4 if qrels_layout else 5
    columns: dict[str, list[str]] = {name: [] for name in PREFERENCE_COLUMNS[:4]}
    levels: list[float] = []
    numbers: list[int] = []
    read: dict[str, float] = {}
    for line_no, text in lines:
        fields = split_fields(text)
        if not fields or fields[0].startswith("#"):
            continue
        if "\x00" in text:
            raise InputFormatError(path, line_no, "the line holds a NUL character (byte 0), which trec_eval cannot "
                                   "read", text)
        if len(fields) != width:
            raise InputFormatError(path, line_no, f"expected {width} columns ({layout}), got {len(fields)}"
                                   f"{separator_hint(text)}", text)
        if qrels_layout:
            fields.insert(2, QRELS_PREFS_SUBGROUP)
        level = read.get(fields[4])  # a file holds few distinct levels: each is parsed once
        if level is None:
            try:
                level = read[fields[4]] = parse_real(fields[4])
            except ValueError:
                raise InputFormatError(path, line_no, f"level must be a number, got {quote(fields[4])}", text) \
                    from None
        if math.isnan(level):
            raise InputFormatError(path, line_no, "level is NaN, which orders nothing", text)
        for name, value in zip(PREFERENCE_COLUMNS[:4], fields, strict=False):
            columns[name].append(value)
        levels.append(level)
        numbers.append(line_no)
    if not levels:
        raise InputFormatError(path, None, f"no preferences found, expected lines of {layout}")
    return Preferences({**columns, "level": np.array(levels, dtype=np.float64)}, path,
                       lines=np.array(numbers, dtype=np.int64), unit="line", checked=True)


def write_prefs(prefs: Preferences, path: str | os.PathLike[str], *, force: bool = False) -> int:
    """Write ``query_id group subgroup doc_id level`` lines in the table's row order (levels as ``repr``
    writes them, so they read back the same); return the count."""
    data = prefs.data
    if not len(prefs):
        raise InputFormatError(prefs.source, None, "no preferences to write")
    check_ids(prefs.source, data["query_id"], data["doc_id"])
    lines = [f"{q} {g} {s} {d} {_level_text(float(v))}\n" for q, g, s, d, v in
             zip(data["query_id"], data["group"], data["subgroup"], data["doc_id"], data["level"], strict=True)]
    write_atomic(path, "".join(lines), force)
    return len(lines)


def _level_text(level: float) -> str:
    """A level as short as it reads back: ``2`` for 2.0, ``0.5``, ``inf``."""
    return str(int(level)) if level.is_integer() and abs(level) < 1e15 else repr(level)
