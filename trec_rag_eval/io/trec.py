"""TREC qrels and run files: plain or gzip, any whitespace, ``#`` comment lines, CRLF line ends.

Two paths, one result. The fast path hands the file to a multi-threaded CSV reader (single
spaces between fields, the way almost every tool writes them): polars' for qrels, pyarrow's for
runs (it reads the file in blocks instead of mapping all of it, and keeps query ids as 32-bit
codes: a large run costs half the memory it would as polars strings). Anything it cannot read
cleanly (tabs, repeated spaces, comments, a bad value) goes to a line-by-line reader that accepts
every valid file and reports the first bad line as ``path:line: what was expected: 'the line'``.
So speed never costs a worse error message, and an odd but valid file is never refused.

Files under ``SMALL_FILE_BYTES`` go straight to the line-by-line reader, into Python lists
(``tables.Columns``): for them that is faster than importing polars at all.
"""

from __future__ import annotations

import codecs
import math
import os
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.allocators import import_pyarrow, jemalloc_configured, release_freed_memory
from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.location import is_url
from trec_rag_eval.io.text import (
    GZIP_ERRORS,
    GZIP_MAGIC,
    check_file,
    decode_line,
    file_size,
    gzip_error,
    is_gzip,
    open_binary,
    read_bytes,
    spooled,
)
from trec_rag_eval.syntax import (
    RELEVANCE_RANGE,
    OutOfRangeError,
    parse_integer,
    parse_real,
    quote,
    separator_hint,
    split_fields,
)
from trec_rag_eval.tables import Columns, Places, Qrels, Run, query_id_set
from trec_rag_eval.tables.arrow import string_buffers

if TYPE_CHECKING:
    import polars as pl

QRELS_COLUMNS = "query_id iteration doc_id relevance"
RUN_COLUMNS = "query_id Q0 doc_id rank score run_tag"
BOM = b"\xef\xbb\xbf"
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
    return _read_qrels_source(name, _open_source(name))


def read_trec_run(path: str | os.PathLike[str]) -> Run:
    """Read a TREC run file: ``query_id Q0 doc_id rank score run_tag`` per line.

    Fields after the sixth are ignored, as trec_eval does. The rank column is ignored: the
    ranking is rebuilt from the scores. Scores must be numbers; ``inf`` and ``-inf`` are accepted
    (they sort first and last), NaN is refused because it has no place in a ranking.
    A document listed twice for one query is an error that cites both lines (the ranking finds it;
    the run's ``places`` find its lines).
    """
    name = os.fspath(path)
    return _read_run_source(name, _open_source(name), trec_run_places(name))


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
    return [(path, line) for line in _lines_of(_open_source(path), query_id, doc_id)]


def _kept_lines(path: str, kept: bytes, query_id: str, doc_id: str) -> list[tuple[str, int]]:
    """As ``_file_lines``, in the bytes read from standard input or a pipe (gzip undone)."""
    if kept[:2] == GZIP_MAGIC:
        import gzip

        kept = gzip.decompress(kept)
    return _text_lines(path, kept, query_id, doc_id)


def _text_lines(name: str, data: bytes, query_id: str, doc_id: str) -> list[tuple[str, int]]:
    """As ``_file_lines``, for a run read from text in memory."""
    return [(name, line) for line in _lines_of(_Source(name, data), query_id, doc_id)]


def _read_qrels_source(name: str, source: _Source) -> Qrels:
    frame = None if source.small else _fast_qrels(source)
    if frame is None:
        columns = _slow_qrels(name, source)
        _reject_duplicate_judgments(name, source, columns)
        return Qrels(columns if source.small else _to_frame(columns, "QRELS_SCHEMA"), name)
    _reject_duplicate_judgments(name, source, frame)
    return Qrels(frame, name)


def _read_run_source(name: str, source: _Source, places: Places) -> Run:
    # a document listed twice is found by the ranking step, which hashes the pairs anyway; ``places`` then
    # finds its lines (on that error only: recording every row's line would cost each large run memory)
    read = None if source.small else _fast_run(source)
    if read is not None:
        run = Run(read[0], read[1], name, places)
    else:
        columns, run_tag = _slow_run(name, source)
        run = Run(columns if source.small else _to_frame(columns, "RUN_SCHEMA"), run_tag, name, places)
    truncated = _looks_truncated(source)
    if truncated is not None:
        from trec_rag_eval.errors import warn

        line_no, tag, other = truncated
        warn(f"{name}:{line_no}: the file looks truncated (a download or a copy cut short?): its last line has no "
             f"line end and its run tag {tag!r} differs from {other!r} on the line before; the run tag kept is "
             f"{tag!r}, and lines after it may be missing")
    return run


def _looks_truncated(source: _Source) -> tuple[int, str, str] | None:
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

class _Source:
    """The file's bytes (gzip already undone) or, for a large plain file, its path for polars to map."""

    def __init__(self, path: str, data: bytes | None, first_line: int = 1, at_start: bool | None = None) -> None:
        self.path = path
        self.data = data
        self.first_line = first_line
        self.at_start = first_line == 1 if at_start is None else at_start
        """Whether the bytes begin the file (only there is a byte-order mark dropped)."""
        self.small = (len(data) if data is not None else os.path.getsize(path)) < SMALL_FILE_BYTES

    def polars_can_read(self) -> tuple[bool, str | None]:
        """Whether polars can read the source: every field separator a single space (a tab or two
        spaces in a row send the file the careful, line-by-line way); and the comment prefix to
        give it: looking for comment lines costs polars a quarter of its time on a large run, so
        it looks only when a ``#`` appears anywhere."""
        if self.data is not None:
            if not self.at_start and self.data.startswith(BOM):
                return False, None  # polars would drop it; only the file's first bytes may be a mark
            irregular, has_hash, non_ascii = False, False, False
            step = LAYOUT_WINDOW_BYTES
            scratch = _Scratch()
            for start in range(0, len(self.data), step):  # in windows: no array as large as the file
                irregular, hash_here, ascii_here = _layout(
                    self.data, start, min(start + step + 1, len(self.data)), scratch)
                has_hash, non_ascii = has_hash or hash_here, non_ascii or ascii_here
                if irregular:
                    break
            irregular = irregular or _ends_in_space(self.data) or (non_ascii and not _is_utf8(self.data))
        else:
            irregular, has_hash = _layout_of_file(self.path)
        return not irregular, "#" if has_hash else None

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


def _open_source(path: str) -> _Source:
    check_file(path)
    # a pipe or standard input: its bytes, read once; a URL: its bytes, fetched once where it lies
    if (spooled(path) is not None or is_url(path)) and not is_gzip(path):
        data = read_bytes(path)
        if not data:
            raise InputFormatError(path, None, "empty file")
        return _Source(path, data)
    if is_gzip(path):
        data = read_bytes(path)
        if not data.strip():
            raise InputFormatError(path, None, "empty file (after gzip decompression)")
        return _Source(path, data)
    if os.path.getsize(path) == 0:
        raise InputFormatError(path, None, "empty file")
    return _Source(path, None)


# -- fast path ----------------------------------------------------------------------------------

LAYOUT_WINDOW_BYTES = 512 << 10
"""The separator check looks at the bytes a window of this size at a time, in reused buffers that
stay in the CPU's cache (the 293 MB benchmark run: 0.055 s, against 0.09-0.10 s in 8 MB windows,
whose three buffers also cost 3,000 page faults)."""


def _layout_of_file(path: str, window: int = LAYOUT_WINDOW_BYTES) -> tuple[bool, bool]:
    """``_layout`` of a file read in windows into one reused buffer, and whether it is UTF-8:
    mapping a large file whole would add all of its pages to the process's peak memory."""
    buffer = bytearray(window + 1)
    view = memoryview(buffer)
    irregular, has_hash = False, False
    utf8 = codecs.getincrementaldecoder("utf-8")()
    scratch = _Scratch()
    with open(path, "rb") as handle:
        kept = 0  # the last byte of the previous window, so two spaces across the cut are seen
        while not irregular:
            size = handle.readinto(view[kept:])
            if not size:
                break
            irregular, hash_here, non_ascii = _layout(buffer, 0, kept + size, scratch)
            if not irregular and (non_ascii or utf8.getstate()[0]):
                irregular = not _is_utf8(view[kept: kept + size], utf8)
            has_hash |= hash_here
            buffer[0] = buffer[kept + size - 1]
            kept = 1
    return irregular or buffer[0] == 32 or not _is_utf8(b"", utf8, final=True), has_hash


def _is_utf8(data: bytes | memoryview, decoder: codecs.IncrementalDecoder | None = None, final: bool = False) -> bool:
    """Whether ``data`` (a piece, with ``decoder`` carrying what came before) is UTF-8. Arrow checks
    only the columns it converts and the line-by-line reader whole lines, so bad bytes in the rank
    or tag column must send a file the careful way, which names the line."""
    if decoder is None:
        if isinstance(data, bytes) and data.isascii():
            return True
        decoder, final = codecs.getincrementaldecoder("utf-8")(), True
    try:
        decoder.decode(data, final=final)
    except UnicodeDecodeError:
        return False
    return True


def _layout(data: bytes | bytearray, start: int, end: int, scratch: _Scratch) -> tuple[bool, bool, bool]:
    """(irregular, has_hash, non_ascii) of ``data[start:end]`` for ``_Source.polars_can_read``: irregular
    at a separator C reads and polars would not (a tab, VT, FF, a CR inside a line), two spaces in a
    row, or a space ending a line. A space at the start of a line shows as an empty query id,
    checked on the frame instead. Single bytes are looked for at ``memchr`` speed, pairs in reused
    numpy buffers; the last byte is left to the next window (``_layout_of_file`` keeps it)."""
    for separator in (b"\t", b"\x0b", b"\x0c", b"\x00"):  # a NUL: refused by the careful way, with its line
        if data.find(separator, start, end) >= 0:
            return True, False, False
    if data.find(b"\r", start, end) >= 0 and (
            data.count(b"\r", start, max(end - 1, start)) != data.count(b"\r\n", start, end)):
        return True, False, False
    window = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
    if len(window) > 1:
        spaces, pairs = scratch.buffers(len(window))
        np.equal(window[:-1], 32, out=spaces)
        # a space before a space or a line end (or a control byte): no field between them for C
        np.less_equal(window[1:], 32, out=pairs)
        np.logical_and(pairs, spaces, out=pairs)
        if pairs.any():
            return True, False, False
    return False, data.find(b"#", start, end) >= 0, len(window) > 0 and int(window.max()) >= 128


class _Scratch:
    """Two boolean buffers reused from window to window of one scan (a fresh array per window
    would cost its page faults every time); freed with the scan, so they add nothing to the memory
    the evaluation holds afterwards."""

    def __init__(self) -> None:
        self.spaces = np.empty(0, dtype=bool)
        self.pairs = np.empty(0, dtype=bool)

    def buffers(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """The two buffers, ``size - 1`` long (a window's byte pairs)."""
        if len(self.spaces) < size - 1:
            self.spaces = np.empty(size - 1, dtype=bool)
            self.pairs = np.empty(size - 1, dtype=bool)
        return self.spaces[: size - 1], self.pairs[: size - 1]


def _ends_in_space(data: bytes | np.ndarray) -> bool:
    """A space as the file's last byte: the last line ends in one (``_layout`` sees the others)."""
    return len(data) > 0 and data[-1] == 32


def _clean(frame: pl.DataFrame) -> bool:
    """Whether the fast read is certainly right (the separators were checked before): no missing
    field (a null) and no line starting with a space (an empty query id)."""
    if frame.height == 0 or frame.null_count().sum_horizontal().item() > 0:
        return False
    return frame["query_id"].str.len_bytes().min() != 0


def _fast_qrels(source: _Source) -> pl.DataFrame | None:
    import polars as pl

    from trec_rag_eval.tables import QRELS_SCHEMA

    readable, comment_prefix = source.polars_can_read()
    if not readable:
        return None
    try:
        frame = pl.read_csv(source.for_polars(), separator=" ", has_header=False, quote_char=None, schema=QRELS_SCHEMA,
                            comment_prefix=comment_prefix, truncate_ragged_lines=False, raise_if_empty=False)
    except Exception:  # any parse trouble: the line-by-line reader explains it
        return None
    if not _clean(frame):
        return None
    low, high = RELEVANCE_RANGE
    relevance = frame["relevance"]
    return frame if low <= relevance.min() and relevance.max() <= high else None  # type: ignore[operator]


def _fast_run(source: _Source) -> tuple[Any, str] | None:
    """The run as a pyarrow Table (query_id dictionary-encoded, doc_id, score) and its run tag, or
    None when the file is not plain enough for the fast path (the line-by-line reader decides).

    The separators are checked (``polars_can_read``) on a second thread while pyarrow parses: the
    parse is kept only if the check finds the file plain. A file with comment lines that pyarrow
    could not read is read again, skipping them (the check says whether a ``#`` appears at all)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as checker:
        layout = checker.submit(source.polars_can_read)
        table = _arrow_read(source, skip_comments=False)
        readable, comment_prefix = layout.result()
    release_freed_memory()  # the check's buffers, freed on its thread
    if not readable:
        return None
    if table is None and comment_prefix is not None:
        # only now, on a file known to be UTF-8: pyarrow decodes a line before calling the handler
        table = _arrow_read(source, skip_comments=True)
    if table is None:
        return None
    run_tag = _last_run_tag(source)
    if table.num_rows == 0 or run_tag is None:
        return None
    # the scores in one piece, so the ranking reads them without a copy; the parser's pieces are freed
    pool = _arrow_pool()
    table = table.set_column(2, "score", table["score"].combine_chunks(memory_pool=pool))
    pool.release_unused()
    return (table, run_tag) if _arrow_clean(table) else None


def _arrow_read(source: _Source, skip_comments: bool) -> Any:
    """pyarrow's multi-threaded read of the three columns the ranking uses, or None if it fails;
    ``skip_comments``: a line without six fields is skipped if it is a comment."""
    pa = import_pyarrow()
    from pyarrow import csv

    names = ["query_id", "q0", "doc_id", "rank", "score", "run_tag"]
    codes = pa.dictionary(pa.int32(), pa.string())
    try:
        return csv.read_csv(
            pa.BufferReader(source.data) if source.data is not None else source.path,
            read_options=csv.ReadOptions(column_names=names, block_size=RUN_BLOCK_BYTES),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False,
                                           invalid_row_handler=_skip_comment if skip_comments else None),
            # only the columns the ranking uses are built; every line is still split into its six fields
            convert_options=csv.ConvertOptions(
                include_columns=["query_id", "doc_id", "score"],
                column_types={"query_id": codes, "doc_id": pa.string(), "score": pa.float64()},
                null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False,
                # the separator check (polars_can_read) decodes every file with a byte above 127, and
                # its parse is kept only if that file is UTF-8: a second check here would be wasted
                check_utf8=False),
            memory_pool=_arrow_pool())
    except (pa.ArrowException, ValueError, UnicodeDecodeError):  # the line-by-line reader explains any trouble
        return None


RUN_BLOCK_BYTES = 4 << 20
"""The block of file that one pyarrow reader thread parses at a time."""


def _arrow_pool() -> Any:
    """pyarrow's jemalloc pool, which hands freed pages back soon (``trec_rag_eval.allocators``: the parser's
    buffers would otherwise stay in the process's peak memory next to the ranking's arrays; at once
    when pyarrow was imported before us); the system allocator where pyarrow was built without
    jemalloc. Every Arrow step of the reader uses it: pyarrow's default pool keeps what a temporary
    column freed."""
    pa = import_pyarrow()
    try:
        pool = pa.jemalloc_memory_pool()
        if not jemalloc_configured():
            pa.jemalloc_set_decay_ms(0)
    except (NotImplementedError, pa.ArrowException):
        return pa.system_memory_pool()
    return pool


def _skip_comment(row: Any) -> str:
    """pyarrow's handler for a line without six fields: a comment line is skipped, anything else
    stops the fast path."""
    return "skip" if row.text.lstrip(" ").startswith("#") else "error"


def _arrow_clean(table: Any) -> bool:
    """Whether the Arrow read is certainly right (separators were checked before): no empty query
    id (a line starting with a space), no NaN score, no six-field comment line read as data (a
    query id starting with ``#``: the line-by-line reader skips such lines as comments). Read
    from the Arrow buffers with numpy: the query ids through each chunk's dictionary, a few thousand
    values, not the millions of rows. A doc id cannot be empty: that takes two spaces in a row,
    which ``polars_can_read`` refused."""
    for chunk in table["query_id"].chunks:
        offsets, data = string_buffers(chunk.dictionary)
        lengths = np.diff(offsets)
        if len(lengths) and int(lengths.min()) == 0:
            return False
        if len(lengths) and bool(np.any(data[offsets[:-1]] == ord("#"))):
            return False
    [scores] = table["score"].chunks
    return not bool(np.isnan(np.frombuffer(scores.buffers()[1], dtype=np.float64, count=len(scores),
                                           offset=scores.offset * 8)).any())


def _last_run_tag(source: _Source) -> str | None:
    """The run tag of the last data line (trec_eval prints it as ``runid``), or None if the end of
    the file is not a plain six-field line."""
    for size in (4096, 1 << 20):
        tail = source.last_bytes(size)
        lines = tail.split(b"\n")
        if len(tail) == size:
            lines = lines[1:]  # the first may be cut
        for raw in reversed(lines):
            fields = raw.rstrip(b"\r").split(b" ")
            if fields == [b""] or fields[0].startswith(b"#"):
                continue
            try:
                return fields[5].decode("utf-8") if len(fields) == 6 else None
            except UnicodeDecodeError:
                return None
    return None


# -- line-by-line path --------------------------------------------------------------------------

def _data_fields(source: _Source) -> Iterator[tuple[int, str, list[str]]]:
    for line_no, text in source.lines():
        if "\x00" in text:  # C strings end there: trec_eval misreads the line or crashes
            raise InputFormatError(source.path, line_no, "the line holds a NUL character (byte 0), which trec_eval "
                                   "cannot read", text)
        fields = split_fields(text)
        if not fields or fields[0].startswith("#"):
            continue
        yield line_no, text, fields


def _slow_qrels(path: str, source: _Source) -> Columns:
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


def _slow_run(path: str, source: _Source) -> tuple[Columns, str]:
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


def _lines_of(source: _Source, query_id: str, doc_id: str, iteration: str | None = None) -> list[int]:
    return [line_no for line_no, _, fields in _data_fields(source)
            if len(fields) >= 3 and fields[0] == query_id and fields[2] == doc_id
            and (iteration is None or fields[1] == iteration)]


def _reject_duplicate_judgments(path: str, source: _Source, frame: pl.DataFrame | Columns) -> None:
    key = _duplicate_pair(frame)
    if key is not None:
        first, second = _lines_of(source, key[0], key[2], key[1])[:2]
        subtopic = f" in iteration (subtopic) {quote(key[1])}" if key[1] != "0" else ""
        raise InputFormatError(
            path, second, f"document {quote(key[2])} judged twice for query {quote(key[0])}{subtopic} "
            f"(first at line {first})")


class NoResultsError(InputFormatError):
    """A run (or a piece of one) holds no result line."""


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
                    piece = _read_run_source(name, _Source(name, complete, first_line=line_no), places)
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
    from trec_rag_eval.io import location

    name = os.fspath(path)
    check_file(name)
    try:
        size = location.size(name)
        with location.open_bytes(name) as handle:  # a local file, or a URL's object (fsspec: seekable)
            begin, stop = _line_start(handle, start, size), _line_start(handle, end, size)
            handle.seek(begin)
            data = handle.read(stop - begin)
    except OSError as err:
        raise InputFormatError(name, None, f"cannot read the file: {err.strerror or err}") from None
    lines = data.count(b"\n")
    if not data.strip():
        return None, lines
    try:
        source = _Source(name, data, first_line=1, at_start=begin == 0)
        return _read_run_source(name, source, trec_run_places(name)), lines
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


def parse_qrels_text(text: str, source: str = "<qrels>") -> Qrels:
    """Read qrels from a string (tests, notebooks)."""
    src = _Source(source, text.encode("utf-8"))
    return _read_qrels_source(source, src)


def parse_run_text(text: str, source: str = "<run>") -> Run:
    """Read a run from a string (tests, notebooks)."""
    data = text.encode("utf-8")
    return _read_run_source(source, _Source(source, data), Places("line", partial(_text_lines, source, data)))

