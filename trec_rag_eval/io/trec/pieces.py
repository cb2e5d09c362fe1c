"""A TREC run read in pieces: grouped by query, a piece of about a given size at a time (``iter_run_chunks``,
for runs larger than memory), or the lines that start in a byte range of the file (``read_run_range``, one
task's share of a file split for a cluster)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.sources import BOM, GZIP_ERRORS, check_file, file_size, gzip_error, open_binary
from trec_rag_eval.io.trec.qrels_runs import RUN_COLUMNS, NoResultsError, Source, read_run_source, trec_run_places
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Run, query_id_set


class RunNotGroupedError(InputFormatError):
    """A run read in pieces lists a query again after other queries."""


def iter_run_chunks(path: str | os.PathLike[str], chunk_bytes: int = 64 << 20,
                    progress: Callable[[int], None] | None = None) -> Iterator[Run]:
    """Read a run in pieces of about ``chunk_bytes``, each holding whole queries.

    For runs larger than memory. The run must be grouped by query (every line of a query
    together, as every retrieval tool writes them); a query that comes back after another one is
    an error that says how to sort the file. One query must fit in memory. ``progress`` is
    called with the number of bytes read so far.
    """
    name = os.fspath(path)
    check_file(name)
    if file_size(name) == 0:
        raise InputFormatError(name, None, "empty file")
    seen: set[str] = set()
    places = trec_run_places(name)  # the lines of the whole file, as one read whole would cite them
    carry = b""
    line_no = 1  # number of the first line of carry
    done = 0
    if progress is not None:
        progress(0)
    with open_binary(name) as handle:
        while True:
            try:
                block = handle.read(chunk_bytes)
            except GZIP_ERRORS as err:
                raise gzip_error(name, err) from None
            if done == 0 and block.startswith(BOM):
                block = block[len(BOM):]  # as the whole-file readers drop it, before the query split
                done += len(BOM)
            done += len(block)
            if progress is not None:
                progress(done)
            data = carry + block
            if not block:
                complete, carry = data, b""
            else:
                complete, carry = _split_last_query(data)
            piece = None
            if complete.strip():
                try:
                    piece = read_run_source(name, Source(name, complete, first_line=line_no), places)
                except NoResultsError:
                    pass  # only comment lines here; a run without any result line is refused below
            if piece is not None:
                queries = query_id_set(piece)
                again = sorted(queries & seen)
                if again:
                    raise RunNotGroupedError(
                        name, None, f"query {quote(again[0])} comes back after other queries; reading in pieces "
                        "needs the run grouped by query: sort it first (sort -s -k1,1 run.txt > sorted.txt)")
                seen |= queries
                yield piece
            line_no += complete.count(b"\n")
            if not block:
                break
    if not seen:
        raise NoResultsError(name, None, f"no results found, expected lines of {RUN_COLUMNS}")


def _split_last_query(data: bytes) -> tuple[bytes, bytes]:
    """Split after the last complete line, keeping the last query's lines for the next piece: the lines
    from the last data line back to the first line of its query, with the comment and blank lines among
    and after them (which belong to no query: cutting at one would split the query in two pieces)."""
    cut = data.rfind(b"\n")
    if cut < 0:
        return b"", data
    complete, rest = data[: cut + 1], data[cut + 1:]
    query = None
    start = len(complete)
    while start > 0:  # walk back over the lines of the last query, and the comments and blank lines
        previous = complete.rfind(b"\n", 0, start - 1) + 1
        head = complete[previous:start].split(None, 1)
        if head and not head[0].startswith(b"#"):
            if query is None:
                query = head[0]
            elif head[0] != query:
                break
        start = previous
    if query is None:  # only comments and blank lines: nothing to keep
        return complete, rest
    if start == 0:  # the whole piece is one query: read on
        return b"", data
    return complete[:start], complete[start:] + rest


def read_run_range(path: str | os.PathLike[str], start: int, end: int) -> tuple[Run | None, int]:
    """The lines of a plain (not gzip) TREC run file that start in its bytes [``start``, ``end``):
    one piece of a file split into byte ranges, each read by its own task (``cluster``), so that
    every line belongs to exactly one range whatever the cuts. Gives the piece's run (None when its
    lines are only comments or blank, or none starts in the range) and how many line ends it holds:
    line numbers, in its errors and warnings, count from the first line of the range (1), and the
    caller, who knows how many lines the ranges before hold, adds them (``renumbered``)."""
    from trec_rag_eval.io import sources

    name = os.fspath(path)
    check_file(name)
    try:
        size = sources.size(name)
        with sources.open_bytes(name) as handle:  # a local file, or a URL's object (fsspec: seekable)
            begin, stop = _line_start(handle, start, size), _line_start(handle, end, size)
            handle.seek(begin)
            data = handle.read(stop - begin)
    except OSError as err:
        raise InputFormatError(name, None, f"cannot read the file: {err.strerror or err}") from None
    lines = data.count(b"\n")
    if not data.strip():
        return None, lines
    try:
        source = Source(name, data, first_line=1, at_start=begin == 0)
        return read_run_source(name, source, trec_run_places(name)), lines
    except NoResultsError:  # only comment lines here; a run without any result line is refused by the caller
        return None, lines


def _line_start(handle: Any, position: int, size: int) -> int:
    """The first line start at or after ``position``: a line starts at 0 and after each line end."""
    if position <= 0:
        return 0
    if position >= size:
        return size
    handle.seek(position - 1)
    offset = position - 1
    while True:
        block = handle.read(1 << 16)
        if not block:
            return size
        found = block.find(b"\n")
        if found >= 0:
            return offset + found + 1
        offset += len(block)


def renumbered(err: InputFormatError, lines_before: int) -> InputFormatError:
    """``err`` from a piece read by ``read_run_range``, its line numbered in the whole file."""
    if err.line_no is None or not lines_before:
        return err
    return InputFormatError(err.path, err.line_no + lines_before, err.reason, err.line)
