"""Qrels and runs as Parquet: one file, or a directory of partitions, read and written with polars.

Columns carry ir_measures' names. Qrels: ``query_id``, ``doc_id``, ``relevance`` (an integer) and
optionally ``iteration``. Runs: ``query_id``, ``doc_id``, ``score`` (a number) and optionally
``iteration``/``Q0`` and ``rank`` (both ignored, as in a TREC file) and ``run_tag`` (the tag of the
last row is the run's, as the last line's is in a TREC run; without it, the file name). Ids may be
strings or integers (read as their decimal text). Other columns are ignored.

A directory stands for every ``*.parquet`` file under it (sub-directories included, hidden names
skipped), in path order: the partitions a data platform writes. Errors name the file and, where
one row is at fault, its row number (1 is the first row of that file):
``run/part-3.parquet: row 17: score is NaN, which has no place in a ranking``.

The checks match the TREC and JSON readers': no missing value, ids a TREC file could hold,
integer relevance, numeric scores that are not NaN, no document judged twice for a query.
"""

from __future__ import annotations

import bisect
import contextlib
import io
import os
from collections.abc import Iterator
from functools import partial
from typing import IO, TYPE_CHECKING

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io import sources
from trec_rag_eval.io.atomic import refuse_overwrite, write_atomic
from trec_rag_eval.io.ids import check_ids, has_whitespace, id_problem
from trec_rag_eval.syntax import RELEVANCE_RANGE, quote
from trec_rag_eval.tables import Places, Qrels, Run

if TYPE_CHECKING:
    import polars as pl

QRELS_REQUIRED = ("query_id", "doc_id", "relevance")
RUN_REQUIRED = ("query_id", "doc_id", "score")


def column_names(path: str | os.PathLike[str]) -> list[str]:
    """The columns of the first Parquet file of ``path``."""
    import polars as pl

    first = _files(os.fspath(path))[0]
    try:
        with _opened(first) as source:
            return list(pl.read_parquet_schema(source)) if isinstance(source, str) else source.columns()
    except InputFormatError:
        raise
    except Exception as err:
        raise _unreadable(first, err) from None


def row_count(file: str) -> int:
    """The number of rows of one Parquet file, from its footer (no data read)."""
    import polars as pl

    try:
        if sources.is_url(file):  # the footer alone, through fsspec
            from pyarrow.parquet import ParquetFile

            with sources.open_bytes(file) as handle:
                return int(ParquetFile(handle).metadata.num_rows)
        return int(pl.scan_parquet(file).select(pl.len()).collect().item())
    except InputFormatError:
        raise
    except Exception as err:
        raise _unreadable(file, err) from None


def parquet_files(path: str | os.PathLike[str]) -> list[str]:
    """The Parquet files of ``path``: itself, or every ``*.parquet`` under the directory in path order."""
    name = os.fspath(path)
    if not sources.is_dir(name):
        return [name]
    return sorted(file for file in sources.files_under(name) if file.endswith(".parquet"))


def read_parquet_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read judgments from a Parquet file or directory (columns query_id, doc_id, relevance[, iteration])."""
    import polars as pl

    name = os.fspath(path)
    rows = _scan(_files(name), QRELS_REQUIRED, ("iteration",), "judgments")
    _ids(rows)
    _integers(rows, "relevance")
    if "iteration" in rows.frame.columns:
        _as_text(rows, "iteration")
        rows.frame = rows.frame.with_columns(pl.col("iteration").fill_null("0"))
    else:
        rows.frame = rows.frame.with_columns(pl.lit("0").alias("iteration"))
    # the same document under two iterations (subtopics: ndeval's intent-aware qrels) is not a repeat.
    # The first row that repeats an earlier (query, iteration, document), and that earlier row: the two
    # rows of one pair, in whichever partitions they lie (shown with their file's own columns)
    key = ("query_id", "iteration", "doc_id")
    again = rows.frame.select((~pl.struct(*key).is_first_distinct()).arg_true().first()).item()
    if again is not None:
        query_id, iteration, doc_id = (rows.frame[column][again] for column in key)
        first = rows.frame.select(((pl.col("query_id") == query_id) & (pl.col("iteration") == iteration)
                                   & (pl.col("doc_id") == doc_id)).arg_true().first()).item()
        raise rows.error(again, f"document {doc_id!r} judged twice for query {query_id!r} "
                         f"(first at {rows.where(first, again)})")
    return Qrels(rows.frame.select("query_id", "iteration", "doc_id", "relevance"), name, checked=True)


def read_parquet_run(path: str | os.PathLike[str]) -> Run:
    """Read a run from a Parquet file or directory (columns query_id, doc_id, score[, run_tag, rank, Q0]).

    A document listed twice for a query is found by the ranking step, and both rows cited (the run's
    ``places``: ``rows_of``).
    """
    name = os.fspath(path)
    return read_parquet_run_files(_files(name), name)


def read_parquet_run_files(files: list[str], source: str, rows: tuple[int, int] | None = None) -> Run:
    """A run from these Parquet files (the partitions of ``source``, or some of them); ``rows``
    (offset, length) reads only that slice of a single file, its errors numbered in the whole file."""
    import polars as pl

    table = _scan(files, RUN_REQUIRED, ("run_tag",), "results", window=rows)
    _ids(table)
    _numbers(table)
    run_tag = default_tag(source)
    if "run_tag" in table.frame.columns:
        _as_text(table, "run_tag")
        tags = table.frame["run_tag"].drop_nulls()
        if len(tags) and tags[-1] and not any(ch.isspace() for ch in tags[-1]):
            run_tag = tags[-1]
    return Run(table.frame.select("query_id", "doc_id", pl.col("score")), run_tag, source, parquet_run_places(source),
               checked=True)


def parquet_run_places(source: str) -> Places:
    """Where the rows of a run read from ``source`` (a Parquet file or directory) stand: (file, row)."""
    return Places("row", partial(rows_of, source))


def rows_of(source: str, query_id: str, doc_id: str) -> list[tuple[str, int]]:
    """(file, row) of every row of ``source`` (a Parquet file or directory) holding the pair."""
    import polars as pl

    rows = _scan(parquet_files(source), ("query_id", "doc_id"), (), "rows", check=False)
    frame = rows.frame.with_columns(pl.col("query_id").cast(pl.Utf8), pl.col("doc_id").cast(pl.Utf8))
    hits = frame.select(((pl.col("query_id") == query_id) & (pl.col("doc_id") == doc_id)).arg_true())
    return [rows.place(index) for index in hits.to_series().to_list()]


def write_parquet_qrels(qrels: Qrels, path: str | os.PathLike[str], *, force: bool = False) -> int:
    """Write ``query_id, iteration, doc_id, relevance`` in the table's row order; return the count."""
    frame = qrels.frame.select("query_id", "iteration", "doc_id", "relevance")
    if frame.is_empty():
        raise InputFormatError(qrels.source, None, "no judgments to write: every list of documents is empty")
    check_ids(qrels.source, frame["query_id"].to_list(), frame["doc_id"].to_list())  # what the reader refuses
    _write(frame, path, force)
    return frame.height


def write_parquet_run(run: Run, path: str | os.PathLike[str], *, run_tag: str | None = None,
                      force: bool = False) -> int:
    """Write ``query_id, doc_id, rank, score, run_tag`` in ranking order, ranks 1..n (as ``write_trec_run``
    orders a TREC run); return the number of rows. Scores keep every bit of their float64."""
    import polars as pl

    from trec_rag_eval.io.writers import ranked

    refuse_overwrite(path, force)
    tag = run_tag or run.run_tag
    if not tag or has_whitespace(tag):
        raise UsageError(f"run tag {tag!r} cannot be written (empty or with whitespace)")
    if run.frame.is_empty():
        raise InputFormatError(run.source, None, "no results to write: every result list is empty")
    check_ids(run.source, run.frame["query_id"].to_list(), run.frame["doc_id"].to_list())
    frame = ranked(run).select("query_id", "doc_id", pl.col("rank").cast(pl.Int64), "score",
                               pl.lit(tag).alias("run_tag"))
    _write(frame, path, force)
    return frame.height


def _write(frame: pl.DataFrame, path: str | os.PathLike[str], force: bool) -> None:
    refuse_overwrite(path, force)
    buffer = io.BytesIO()
    frame.write_parquet(buffer, statistics=True)
    write_atomic(path, buffer.getvalue(), force)


# -- reading and checking ------------------------------------------------------------------------

class _Rows:
    """The rows of several files in one frame, and where each file's rows start (for error messages)."""

    def __init__(self, frame: pl.DataFrame, files: list[str], starts: list[int],
                 columns: list[list[str]] | None = None) -> None:
        self.frame = frame
        self.files = files
        self.starts = starts
        self.columns = columns   # each file's own columns: a row is shown with those alone

    def place(self, index: int) -> tuple[str, int]:
        """(file, 1-based row in that file) of the frame's row ``index``."""
        position = bisect.bisect_right(self.starts, index) - 1
        return self.files[position], index - self.starts[position] + 1

    def where(self, index: int, other: int | None = None) -> str:
        """``row N``, prefixed by the file unless ``other`` is a row of the same file."""
        file, row = self.place(index)
        if other is not None and self.place(other)[0] == file:
            return f"row {row}"
        return f"{file}: row {row}"

    def error(self, index: int, reason: str) -> InputFormatError:
        file, row = self.place(index)
        shown = self.frame.row(index, named=True)
        if self.columns is not None:  # not a column another partition has (null here) or one added since
            own = self.columns[self.files.index(file)]
            shown = {column: value for column, value in shown.items() if column in own}
        return InputFormatError(file, None, f"row {row}: {reason}: {shown}")

    def refuse(self, bad: pl.Expr, reason: str, column: str) -> None:
        """Raise for the first row where ``bad`` holds; ``{value!r}`` in the reason is that row's value."""
        index = self.frame.select(bad.fill_null(False).arg_true().first()).item()
        if index is not None:
            raise self.error(index, reason.format(value=self.frame[column][index]))


def _files(name: str) -> list[str]:
    if not sources.exists(name):
        raise InputFormatError(name, None, "no such file")
    files = parquet_files(name)
    if not files:
        raise InputFormatError(name, None, "a directory without any *.parquet file")
    return files


def _scan(files: list[str], required: tuple[str, ...], optional: tuple[str, ...], what: str,
          check: bool = True, window: tuple[int, int] | None = None) -> _Rows:
    """The wanted columns of every file, as one frame (only ``window``'s rows of a single file)."""
    import polars as pl

    parts = []
    starts = []
    own: list[list[str]] = []
    total = 0
    for file in files:
        with _opened(file) as source:
            try:
                if isinstance(source, str):
                    schema = list(pl.read_parquet_schema(source))
                else:
                    schema = list(pl.read_parquet_schema(source.data())) if window is None else source.columns()
            except Exception as err:
                raise _unreadable(file, err) from None
            missing = [c for c in required if c not in schema]
            if missing:
                raise InputFormatError(
                    file, None, f"expected the columns {', '.join(required)} (ir_measures' names), "
                    f"missing {', '.join(missing)}; found {', '.join(schema) or 'none'}")
            try:
                columns = [c for c in (*required, *optional) if c in schema]
                if isinstance(source, _Remote):
                    part = (pl.read_parquet(source.data(), columns=columns) if window is None
                            else source.rows(columns, window))
                elif window is None:
                    part = pl.read_parquet(source, columns=columns)
                else:
                    part = pl.scan_parquet(source).select(columns).slice(*window).collect()
            except Exception as err:
                raise _unreadable(file, err) from None
        if len(files) > 1 and part.height:
            _check_types(file, part, window[0] if window else 0)
        parts.append(part)
        own.append(part.columns)
        starts.append(total - (window[0] if window else 0))
        total += part.height
    frame = pl.concat(parts, how="diagonal_relaxed") if len(parts) > 1 else parts[0]
    if check and frame.is_empty():
        raise InputFormatError(files[0] if len(files) == 1 else os.path.dirname(files[0]), None,
                               f"no {what} found: the Parquet data has no rows")
    return _Rows(frame, files, starts, own)


def _check_types(file: str, part: pl.DataFrame, offset: int) -> None:
    """Each partition's column types, before they are joined: a join takes their common type, so a
    float query_id beside integer ones, or a boolean score beside float ones, would pass as valid
    (True as score 1.0), and an error found after would name the first file instead of this one."""
    import polars as pl

    def text(dtype: pl.DataType) -> bool:
        return dtype == pl.Utf8 or dtype.is_integer() or dtype == pl.Categorical or isinstance(dtype, pl.Enum)

    def number(dtype: pl.DataType) -> bool:
        return dtype == pl.Utf8 or (dtype.is_numeric() and not isinstance(dtype, pl.Decimal))

    def integer(dtype: pl.DataType) -> bool:
        return dtype == pl.Utf8 or dtype.is_integer() or dtype.is_float()

    rules = {"query_id": (text, "text or an integer"), "doc_id": (text, "text or an integer"),
             "iteration": (text, "text or an integer"), "run_tag": (text, "text or an integer"),
             "score": (number, "a number"), "relevance": (integer, "an integer")}
    for column, dtype in part.schema.items():
        ok, what = rules.get(column, (None, ""))
        if ok is not None and dtype != pl.Null and not ok(dtype):
            raise InputFormatError(file, None, f"row {offset + 1}: {column} must be {what}, the column holds "
                                   f"{dtype}: {part.row(0, named=True)}")


def _ids(rows: _Rows) -> None:
    """query_id and doc_id as text, refused where ``io.ids`` refuses an id (a TREC file could not hold it).
    The rule is tested on all rows at once; the first row that breaks it is then said in its words."""
    import polars as pl

    for column, what in (("query_id", "query id"), ("doc_id", "document id")):
        _as_text(rows, column)
        values = pl.col(column)
        rows.refuse(values.is_null(), f"{column} is missing (null)", column)
        # Python's str.isspace, which io.ids applies: Unicode White_Space plus the separators \x1c-\x1f; NUL
        bad = (values.str.len_bytes() == 0) | values.str.contains(r"[\s\x00\x1c-\x1f]")
        if column == "query_id":
            bad = bad | values.str.starts_with("#")
        index = rows.frame.select(bad.arg_true().first()).item()
        if index is not None:
            value = rows.frame[column][index]
            raise rows.error(index, f"{what} {quote(value)} {id_problem(value, column == 'query_id')}")


def _as_text(rows: _Rows, column: str) -> None:
    """Text stays text; integer ids become their decimal text; anything else is refused."""
    import polars as pl

    dtype = rows.frame.schema[column]
    if dtype == pl.Utf8:
        return
    if dtype.is_integer() or dtype == pl.Categorical or isinstance(dtype, pl.Enum):
        rows.frame = rows.frame.with_columns(pl.col(column).cast(pl.Utf8))
        return
    raise rows.error(0, f"{column} must be text or an integer, the column holds {dtype}")


def _integers(rows: _Rows, column: str) -> None:
    """The relevance column as int64: integers, whole floats (2.0) or integer text; anything else refused."""
    import polars as pl

    reason = f"{column} must be an integer, got {{value!r}}"
    rows.refuse(pl.col(column).is_null(), f"{column} is missing (null)", column)
    dtype = rows.frame.schema[column]
    if dtype.is_integer():  # a uint64 beyond int64 becomes null, refused below with the range
        converted = pl.col(column).cast(pl.Int64, strict=False)
    elif dtype.is_float():
        converted = pl.col(column).cast(pl.Int64, strict=False)
        rows.refuse(converted.is_null() | (converted.cast(dtype) != pl.col(column)), reason, column)
    elif dtype == pl.Utf8:
        converted = pl.col(column).str.strip_chars().cast(pl.Int64, strict=False)
        rows.refuse(converted.is_null(), reason, column)
    else:
        raise rows.error(0, f"{column} must be an integer, the column holds {dtype}")
    low, high = RELEVANCE_RANGE  # the TREC and JSON readers' range
    rows.refuse(converted.is_null() | (converted < low) | (converted > high),
                f"{column} must be an integer from {low} to {high}, got {{value!r}}", column)
    rows.frame = rows.frame.with_columns(converted)


def _numbers(rows: _Rows) -> None:
    """The score column as float64: numbers or numeric text; NaN refused, as the TREC reader does."""
    import polars as pl

    score = pl.col("score")
    rows.refuse(score.is_null(), "score is missing (null)", "score")
    dtype = rows.frame.schema["score"]
    if dtype == pl.Utf8:
        converted = score.str.strip_chars().cast(pl.Float64, strict=False)
        rows.refuse(converted.is_null(), "score must be a number, got {value!r}", "score")
    elif dtype.is_numeric() and not isinstance(dtype, pl.Decimal):
        converted = score.cast(pl.Float64)
    else:
        raise rows.error(0, f"score must be a number, the column holds {dtype}")
    rows.frame = rows.frame.with_columns(converted)
    rows.refuse(score.is_nan(), "score is NaN, which has no place in a ranking", "score")


def default_tag(source: str) -> str:
    """The run tag of a run without a run_tag column: its file or directory name."""
    base = sources.basename(source)
    stem = base[: -len(".parquet")] if base.endswith(".parquet") else base
    return "".join(ch for ch in stem if not ch.isspace()) or "run"


@contextlib.contextmanager
def _opened(file: str) -> Iterator[str | _Remote]:
    """What ``file`` is read from: a local path as it is (polars opens and maps it), a URL opened
    through fsspec where it lies (``_Remote``)."""
    if not sources.is_url(file):
        yield file
        return
    with sources.open_bytes(file) as handle:
        yield _Remote(handle)


class _Remote:
    """A Parquet file behind a URL: its bytes fetched once however often polars reads them (its schema,
    then its columns), or, for a slice of its rows, only its footer and the row groups holding them."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self._data: bytes | None = None

    def data(self) -> bytes:
        if self._data is None:
            self._data = self.handle.read()
        return self._data

    def columns(self) -> list[str]:
        """The column names, from the footer alone."""
        from pyarrow.parquet import ParquetFile

        return list(ParquetFile(self.handle).schema_arrow.names)

    def rows(self, columns: list[str], window: tuple[int, int]) -> pl.DataFrame:
        """``window`` (offset, length) of the rows, reading only the row groups that hold them: each task
        of a large file split by rows fetches its own slice, not the whole file."""
        import polars as pl
        from pyarrow.parquet import ParquetFile

        parquet = ParquetFile(self.handle)
        offset, length = window
        wanted: list[int] = []
        first, start = 0, 0
        for index in range(parquet.metadata.num_row_groups):
            rows = parquet.metadata.row_group(index).num_rows
            if start + rows > offset and start < offset + length:
                first = start if not wanted else first
                wanted.append(index)
            start += rows
        frame = pl.from_arrow(parquet.read_row_groups(wanted, columns=columns))
        assert isinstance(frame, pl.DataFrame)
        return frame.slice(offset - first, length)


def _unreadable(file: str, err: Exception) -> InputFormatError:
    """polars says what is wrong with the bytes (its first line); we say which file."""
    text = str(err).strip()
    said = text.splitlines()[0] if text else type(err).__name__
    return InputFormatError(file, None, f"not a readable Parquet file ({said})")
