"""The fast path of the TREC readers (``io.trec.qrels_runs``): a multi-threaded CSV reader, polars' for qrels and
pyarrow's for runs, and the check of the file's layout that lets a file take it (every field separator a single
space, UTF-8, no line starting or ending in a space). A file it cannot read cleanly returns None here, and goes
the line-by-line way, which names the bad line."""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from trec_rag_eval.allocators import import_pyarrow, jemalloc_configured, release_freed_memory
from trec_rag_eval.io.sources import BOM
from trec_rag_eval.syntax import RELEVANCE_RANGE
from trec_rag_eval.tables.arrow import string_buffers

if TYPE_CHECKING:
    import polars as pl


class OpenedFile(Protocol):
    """What the fast path reads of a file opened by the line-by-line readers (``qrels_runs.Source``)."""

    path: str
    data: bytes | None
    """The file's bytes (gzip undone), or None: a large plain file, which polars maps by its path."""
    at_start: bool
    """Whether the bytes begin the file (only there is a byte-order mark dropped)."""

    def for_polars(self) -> str | bytes: ...

    def last_bytes(self, size: int) -> bytes: ...


def polars_can_read(source: OpenedFile) -> tuple[bool, str | None]:
    """Whether polars can read the source: every field separator a single space (a tab or two
    spaces in a row send the file the careful, line-by-line way); and the comment prefix to
    give it: looking for comment lines costs polars a quarter of its time on a large run, so
    it looks only when a ``#`` appears anywhere."""
    if source.data is not None:
        if not source.at_start and source.data.startswith(BOM):
            return False, None  # polars would drop it; only the file's first bytes may be a mark
        irregular, has_hash, non_ascii = False, False, False
        step = LAYOUT_WINDOW_BYTES
        scratch = _Scratch()
        for start in range(0, len(source.data), step):  # in windows: no array as large as the file
            irregular, hash_here, ascii_here = _layout(
                source.data, start, min(start + step + 1, len(source.data)), scratch)
            has_hash, non_ascii = has_hash or hash_here, non_ascii or ascii_here
            if irregular:
                break
        irregular = irregular or _ends_in_space(source.data) or (non_ascii and not _is_utf8(source.data))
    else:
        irregular, has_hash = _layout_of_file(source.path)
    return not irregular, "#" if has_hash else None


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
    """(irregular, has_hash, non_ascii) of ``data[start:end]`` for ``polars_can_read``: irregular
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


def fast_qrels(source: OpenedFile) -> pl.DataFrame | None:
    import polars as pl

    from trec_rag_eval.tables import QRELS_SCHEMA

    readable, comment_prefix = polars_can_read(source)
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


def fast_run(source: OpenedFile) -> tuple[Any, str] | None:
    """The run as a pyarrow Table (query_id dictionary-encoded, doc_id, score) and its run tag, or
    None when the file is not plain enough for the fast path (the line-by-line reader decides).

    The separators are checked (``polars_can_read``) on a second thread while pyarrow parses: the
    parse is kept only if the check finds the file plain. A file with comment lines that pyarrow
    could not read is read again, skipping them (the check says whether a ``#`` appears at all)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as checker:
        layout = checker.submit(polars_can_read, source)
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


def _arrow_read(source: OpenedFile, skip_comments: bool) -> Any:
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


def _last_run_tag(source: OpenedFile) -> str | None:
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
