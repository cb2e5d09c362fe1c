"""TREC qrels and run files: plain or gzip, any whitespace, ``#`` comment lines, CRLF line ends.

Two paths, one result. The fast path hands the file to a multi-threaded CSV reader (single
spaces between fields, the way almost every tool writes them): polars' for qrels, pyarrow's for
runs (it reads the file in blocks instead of mapping all of it, and keeps query ids as 32-bit
codes: a large run costs half the memory it would as polars strings). Anything it cannot read
cleanly (tabs, repeated spaces, comments, a bad value) goes to a line-by-line reader that accepts
every valid file and reports the first bad line as ``path:line: what was expected: 'the line'``.
So speed never costs a worse error message, and an odd but valid file is never refused.

Files under ``SMALL_FILE_BYTES`` go straight to the line-by-line reader, into Python lists
(``tables.Columns``): for them that is faster than importing polars at all. The fast path:
``io.trec.fast_path``; a run read in pieces: ``io.trec.pieces``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.sources import BOM, GZIP_MAGIC, bytes_to_read, decode_line, read_bytes, spooled
from trec_rag_eval.syntax import (
    RELEVANCE_RANGE,
    OutOfRangeError,
    parse_integer,
    parse_real,
    quote,
    separator_hint,
    split_fields,
)
from trec_rag_eval.tables import Columns, Places, Qrels, Run

if TYPE_CHECKING:
    import polars as pl

QRELS_COLUMNS = "query_id iteration doc_id relevance"
RUN_COLUMNS = "query_id Q0 doc_id rank score run_tag"
SMALL_FILE_BYTES = 1 << 20
"""Files (after gzip) below this size are read line by line into Python lists, without polars."""


def read_trec_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file: ``query_id iteration doc_id relevance`` per line.

    The iteration column is kept; only the intent-aware measures read it, as the subtopic (ndeval's
    ``query_id subtopic doc_id relevance``: one document judged under several subtopics; every other
    measure reads its highest judgment). Relevance must be an integer; negative means "in the pool, not
    judged" (trec_eval). A (query_id, iteration, doc_id) judged twice is an error.
    """
    name = os.fspath(path)
    return _read_qrels_source(name, open_source(name))


def read_trec_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file: ``query_id Q0 doc_id rank score run_tag`` per line.

    Fields after the sixth are ignored, as trec_eval does. The rank column is ignored: the
    ranking is rebuilt from the scores. Scores must be numbers; ``inf`` and ``-inf`` are accepted
    (they sort first and last), NaN is refused because it has no place in a ranking.
    A document listed twice for one query is an error that cites both lines (the ranking finds it;
    the run's ``places`` find its lines).
    """
    name = os.fspath(path)
    return read_run_source(name, open_source(name), trec_run_places(name))


def trec_run_places(path: str) -> Places:
    """Where the rows of a run read from the TREC file ``path`` stand: its lines. Standard input or a
    pipe: the lines of the bytes this call read there, which the places hold (they are the call's, and
    a later call evaluating the run would find other bytes there, or none)."""
    kept = spooled(path)
    if kept is not None:
        return Places("line", partial(_kept_lines, path, kept))
    return Places("line", partial(_file_lines, path))


def _file_lines(path: str, query_id: str, doc_id: str) -> list[tuple[str, int]]:
    """(file, line) of every line of ``path`` where ``query_id`` and ``doc_id`` stand in columns 1 and 3."""
    return [(path, line) for line in _lines_of(open_source(path), query_id, doc_id)]


def _kept_lines(path: str, kept: bytes, query_id: str, doc_id: str) -> list[tuple[str, int]]:
    """As ``_file_lines``, in the bytes read from standard input or a pipe (gzip undone)."""
    if kept[:2] == GZIP_MAGIC:
        import gzip

        kept = gzip.decompress(kept)
    return _text_lines(path, kept, query_id, doc_id)


def _text_lines(name: str, data: bytes, query_id: str, doc_id: str) -> list[tuple[str, int]]:
    """As ``_file_lines``, for a run read from text in memory."""
    return [(name, line) for line in _lines_of(Source(name, data), query_id, doc_id)]


def _read_qrels_source(name: str, source: Source) -> Qrels:
    from trec_rag_eval.io.trec.fast_path import fast_qrels

    frame = None if source.small else fast_qrels(source)
    if frame is None:
        columns = _slow_qrels(name, source)
        _reject_duplicate_judgments(name, source, columns)
        return Qrels(columns if source.small else _to_frame(columns, "QRELS_SCHEMA"), name, checked=True)
    _reject_duplicate_judgments(name, source, frame)
    return Qrels(frame, name, checked=True)


def read_run_source(name: str, source: Source, places: Places) -> Run:
    # a document listed twice is found by the ranking step, which hashes the pairs anyway; ``places`` then
    # finds its lines (on that error only: recording every row's line would cost each large run memory)
    from trec_rag_eval.io.trec.fast_path import fast_run

    read = None if source.small else fast_run(source)
    if read is not None:
        run = Run(read[0], read[1], name, places, checked=True)
    else:
        columns, run_tag = _slow_run(name, source)
        run = Run(columns if source.small else _to_frame(columns, "RUN_SCHEMA"), run_tag, name, places,
                  checked=True)
    truncated = _looks_truncated(source)
    if truncated is not None:
        from trec_rag_eval.errors import warn

        line_no, tag, other = truncated
        warn(f"{name}:{line_no}: the file looks truncated (a download or a copy cut short?): its last line has no "
             f"line end and its run tag {tag!r} differs from {other!r} on the line before; the run tag kept is "
             f"{tag!r}, and lines after it may be missing")
    return run


def _looks_truncated(source: Source) -> tuple[int, str, str] | None:
    """(line number, run tag, the previous line's run tag) when the file ends without a line end in
    a data line whose run tag differs from the data line before it: a file cut inside its last tag
    (a cut anywhere else leaves too few columns, an error). None otherwise, or when it cannot tell."""
    tail = source.last_bytes(4096)
    if not tail or tail.endswith(b"\n"):
        return None
    tags = []
    for raw in reversed(tail.split(b"\n")[1 if len(tail) == 4096 else 0:]):
        fields = raw.rstrip(b"\r").split()
        if fields and not fields[0].startswith(b"#"):
            tags.append(fields[5].decode("utf-8", "replace") if len(fields) >= 6 else None)
            if len(tags) == 2:
                break
    if len(tags) < 2 or tags[0] is None or tags[1] is None or tags[0] == tags[1]:
        return None
    if source.data is not None:
        lines = source.data.count(b"\n") + source.first_line
    else:
        lines = source.first_line
        with open(source.path, "rb") as handle:
            for piece in iter(lambda: handle.read(1 << 20), b""):
                lines += piece.count(b"\n")
    return lines, tags[0], tags[1]


def _to_frame(columns: Columns, schema_name: str) -> pl.DataFrame:
    """A large file that took the line-by-line way is still evaluated with polars."""
    import polars as pl

    from trec_rag_eval import tables

    return pl.DataFrame(columns, schema=getattr(tables, schema_name))


# -- opening ------------------------------------------------------------------------------------

class Source:
    """The file's bytes (gzip already undone) or, for a large plain file, its path for polars to map."""

    def __init__(self, path: str, data: bytes | None, first_line: int = 1, at_start: bool | None = None) -> None:
        self.path = path
        self.data = data
        self.first_line = first_line
        self.at_start = first_line == 1 if at_start is None else at_start
        """Whether the bytes begin the file (only there is a byte-order mark dropped)."""
        self.small = (len(data) if data is not None else os.path.getsize(path)) < SMALL_FILE_BYTES

    def last_bytes(self, size: int) -> bytes:
        """The last ``size`` bytes of the file (after gzip)."""
        if self.data is not None:
            return self.data[-size:]
        with open(self.path, "rb") as handle:
            handle.seek(max(0, os.path.getsize(self.path) - size))
            return handle.read()

    def for_polars(self) -> str | bytes:
        return self.data if self.data is not None else self.path

    def lines(self) -> Iterator[tuple[int, str]]:
        """(line number, text without line end) for every line, decoding UTF-8; a byte-order mark
        at the start of the file is dropped, as polars drops it on the fast path."""
        data = self.data if self.data is not None else read_bytes(self.path)
        if self.at_start and data.startswith(BOM):
            data = data[len(BOM):]
        for line_no, raw in enumerate(data.split(b"\n"), start=self.first_line):
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            yield line_no, decode_line(self.path, line_no, raw)


def open_source(path: str) -> Source:
    return Source(path, bytes_to_read(path))


# -- line-by-line path --------------------------------------------------------------------------

def _data_fields(source: Source) -> Iterator[tuple[int, str, list[str]]]:
    for line_no, text in source.lines():
        if "\x00" in text:  # C strings end there: trec_eval misreads the line or crashes
            raise InputFormatError(source.path, line_no, "the line holds a NUL character (byte 0), which trec_eval "
                                   "cannot read", text)
        fields = split_fields(text)
        if not fields or fields[0].startswith("#"):
            continue
        yield line_no, text, fields


def _slow_qrels(path: str, source: Source) -> Columns:
    query_ids: list[str] = []
    iterations: list[str] = []
    doc_ids: list[str] = []
    relevances: list[int] = []
    for line_no, text, fields in _data_fields(source):
        if len(fields) != 4:
            raise InputFormatError(
                path, line_no, f"expected 4 columns ({QRELS_COLUMNS}), got {len(fields)}{separator_hint(text)}", text)
        value = _relevance(path, line_no, fields[3], text)
        query_ids.append(fields[0])
        iterations.append(fields[1])
        doc_ids.append(fields[2])
        relevances.append(value)
    if not query_ids:
        raise InputFormatError(path, None, f"no judgments found, expected lines of {QRELS_COLUMNS}")
    return {"query_id": query_ids, "iteration": iterations, "doc_id": doc_ids,
            "relevance": np.array(relevances, dtype=np.int64)}


def _relevance(path: str, line_no: int, field: str, text: str) -> int:
    """A qrels relevance: an integer (ASCII digits) within ``RELEVANCE_RANGE``."""
    try:
        return parse_integer(field, RELEVANCE_RANGE)
    except OutOfRangeError:
        low, high = RELEVANCE_RANGE
        raise InputFormatError(
            path, line_no, f"relevance must be an integer from {low} to {high}, got {quote(field)}", text) from None
    except ValueError:
        raise InputFormatError(path, line_no, f"relevance must be an integer, got {quote(field)}", text) from None


def _slow_run(path: str, source: Source) -> tuple[Columns, str]:
    query_ids: list[str] = []
    doc_ids: list[str] = []
    scores: list[float] = []
    run_tag = ""
    for line_no, text, fields in _data_fields(source):
        if len(fields) < 6:
            raise InputFormatError(
                path, line_no, f"expected 6 columns ({RUN_COLUMNS}), got {len(fields)}{separator_hint(text)}", text)
        score_text = fields[4]
        try:
            score = parse_real(score_text)
        except ValueError:
            raise InputFormatError(path, line_no, f"score must be a number, got {quote(score_text)}", text) from None
        if math.isnan(score):
            raise InputFormatError(path, line_no, "score is NaN, which has no place in a ranking", text)
        query_ids.append(fields[0])
        doc_ids.append(fields[2])
        scores.append(score)
        run_tag = fields[5]
    if not query_ids:
        raise NoResultsError(path, None, f"no results found, expected lines of {RUN_COLUMNS}")
    return {"query_id": query_ids, "doc_id": doc_ids, "score": np.array(scores, dtype=np.float64)}, run_tag


# -- duplicates ---------------------------------------------------------------------------------

def _duplicate_pair(frame: pl.DataFrame | Columns) -> tuple[str, str, str] | None:
    """A (query_id, iteration, doc_id) judged twice. The same document judged under two iterations is
    not one: that is ndeval's intent-aware qrels (``query_id subtopic doc_id relevance``)."""
    if isinstance(frame, dict):
        seen: set[tuple[str, str, str]] = set()
        for key in zip(frame["query_id"], frame["iteration"], frame["doc_id"], strict=True):
            if key in seen:
                return key
            seen.add(key)
        return None
    keys = frame.select("query_id", "iteration", "doc_id")
    hashes = np.sort(keys.hash_rows(seed=20240607).to_numpy())  # a tenth of is_duplicated's memory
    if not np.any(hashes[1:] == hashes[:-1]):
        return None
    duplicated = keys.is_duplicated()
    if not duplicated.any():
        return None
    first = keys.filter(duplicated).row(0)
    return first[0], first[1], first[2]


def _lines_of(source: Source, query_id: str, doc_id: str, iteration: str | None = None) -> list[int]:
    return [line_no for line_no, _, fields in _data_fields(source)
            if len(fields) >= 3 and fields[0] == query_id and fields[2] == doc_id
            and (iteration is None or fields[1] == iteration)]


def _reject_duplicate_judgments(path: str, source: Source, frame: pl.DataFrame | Columns) -> None:
    key = _duplicate_pair(frame)
    if key is not None:
        first, second = _lines_of(source, key[0], key[2], key[1])[:2]
        subtopic = f" in iteration (subtopic) {quote(key[1])}" if key[1] != "0" else ""
        raise InputFormatError(
            path, second, f"document {quote(key[2])} judged twice for query {quote(key[0])}{subtopic} "
            f"(first at line {first})")


class NoResultsError(InputFormatError):
    """A run (or a piece of one) holds no result line."""


def parse_qrels_text(text: str, source: str = "<qrels>") -> Qrels:
    """Read qrels from a string (tests, notebooks)."""
    src = Source(source, text.encode("utf-8"))
    return _read_qrels_source(source, src)


def parse_run_text(text: str, source: str = "<run>") -> Run:
    """Read a run from a string (tests, notebooks)."""
    data = text.encode("utf-8")
    return read_run_source(source, Source(source, data), Places("line", partial(_text_lines, source, data)))
