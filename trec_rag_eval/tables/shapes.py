"""Qrels and runs from the Python objects other tools hand around, checked as strictly as a file.

This module turns an object into a table's ``data`` (``Qrels(obj)`` and ``Run(obj)`` call it: it reads no
file); ``service.inputs.as_qrels`` and ``service.inputs.as_run`` also take paths and ``Qrels``/``Run`` values.
Accepted for judgments and for a run:

* a path (``str`` or ``os.PathLike``) to any file the command line reads (TREC, JSON/JSONL, BEIR);
* a ``Qrels`` / ``Run``, as it is;
* pytrec_eval's and ranx's dict of dicts, ``{query_id: {doc_id: relevance or score}}``; a list of doc
  ids instead of the inner dict means relevance 1 (qrels) or the ranking, best first (run: scores
  n, n-1, ..., 1, so no tie-breaking rule can reorder it);
* pandas and polars DataFrames, and Arrow tables or record batches (pyarrow), with ir_measures' column names:
  ``query_id``, ``doc_id``, then ``relevance`` (``iteration`` optional) or ``score``; a dict of those
  columns (``DataFrame.to_dict("list")``);
* iterables of ir_measures' ``Qrel`` / ``ScoredDoc`` (or ir_datasets') named tuples, recognised by
  their fields, and lists of dicts with the same keys (``DataFrame.to_dict("records")``);
* for judgments, the French RAG tutorial's list of dataset rows (``{"requête", "pertinents",
  "non_pertinents"}`` or the English keys), read by the JSON dataset reader.

Ids may be strings or integers (``{1: {...}}`` reads as query ``"1"``, as a TREC file spells it); a
relevance must be an integer, a score a number other than NaN; a (query, document) pair given twice
is refused, naming both rows. Every problem is an ``InputFormatError`` naming the object, the row or
the query and document, and what was expected; an object of no accepted kind is a ``TypeError``
listing the kinds.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np

from trec_rag_eval.errors import InputFormatError, InputTypeError
from trec_rag_eval.syntax import RELEVANCE_RANGE, shown_value
from trec_rag_eval.tables.arrow import is_arrow, is_arrow_run
from trec_rag_eval.tables.bulk import (
    CheckedColumns,
    column_columns,
    nested_columns,
    record_columns,
)
from trec_rag_eval.tables.small_frames import frame_column_list, small_frame

QRELS_KINDS = ("a path (TREC qrels, JSON/JSONL dataset, BEIR), a Qrels, a dict {query_id: {doc_id: relevance}}, "
               "a list of dataset rows (the French RAG tutorial's {'requête', 'pertinents', ...}), a pandas or polars "
               "DataFrame or an Arrow table (query_id, doc_id, relevance[, iteration]) or an iterable of ir_measures "
               "Qrel tuples")
RUN_KINDS = ("a path (TREC run, JSON results), a Run, a dict {query_id: {doc_id: score}} or "
             "{query_id: [doc_id, ...]} (best first), a pandas or polars DataFrame or an Arrow table (query_id, "
             "doc_id, score) "
             "or an iterable of ir_measures ScoredDoc tuples")


def qrels_data(value: Any, name: str = "qrels", kinds: str = QRELS_KINDS, frames_checked: bool = False) -> Any:
    """The ``data`` of a Qrels built from ``value``: a polars frame or ``Columns`` (checked). A polars frame
    that already has the schema's types is taken as it is (as the readers' frames are) unless
    ``frames_checked``: then its rows are checked too (``check_frame``), as every other shape's are."""
    return _table(value, source_name(value, name), "relevance", kinds, frames_checked)


def run_data(value: Any, name: str = "run", kinds: str = RUN_KINDS, frames_checked: bool = False) -> Any:
    """The ``data`` of a Run built from ``value``: a polars frame or ``Columns`` (checked; see ``qrels_data``)."""
    return _table(value, source_name(value, name), "score", kinds, frames_checked)


def is_table_data(value: Any, value_column: str) -> bool:
    """Whether ``value`` already is a table's ``data``: a polars frame with the schema's types, or
    ``Columns`` as the readers make them (ids in lists, the relevance an int64 or the score a float64
    numpy array), or the fast TREC reader's Arrow table of a run. A dict of plain lists (what
    ``DataFrame.to_dict("list")`` gives) is not: it is checked as a DataFrame's rows are."""
    if isinstance(value, dict):  # the in-memory shapes, the commonest: neither Arrow's table nor a polars frame
        if not {"query_id", "doc_id", value_column} <= set(value):
            return False
        numbers = value[value_column]
        ids = ("query_id", "iteration", "doc_id") if value_column == "relevance" else ("query_id", "doc_id")
        dtype = np.int64 if value_column == "relevance" else np.float64
        return (isinstance(numbers, np.ndarray) and numbers.dtype == dtype
                and all(isinstance(value.get(column), list) for column in ids))
    if is_arrow(value):
        return value_column == "score" and is_arrow_run(value)
    if library_of(value) == "polars":
        import polars as pl

        expected: dict[str, Any] = {"query_id": pl.Utf8, "doc_id": pl.Utf8}
        expected.update({"iteration": pl.Utf8, "relevance": pl.Int64} if value_column == "relevance"
                        else {"score": pl.Float64})
        return all(value.schema.get(column) == dtype for column, dtype in expected.items())
    return False


def check_frame(frame: Any, source: str, value_column: str) -> None:
    """The row checks of ``_check_rows`` on a polars frame that already has the right types, without
    leaving polars: no missing value, no NaN score, no empty id, a relevance in the readers' ``RELEVANCE_RANGE``,
    each (query, document) pair once."""
    import polars as pl

    bad = pl.any_horizontal(pl.col("query_id", "doc_id", value_column).is_null())
    bad = bad | (pl.col("query_id") == "") | (pl.col("doc_id") == "")
    if value_column == "score":
        bad = bad | pl.col("score").is_nan()
    if frame.select(bad.any()).item():  # the rows are numbered only to name the first one at fault
        row = frame.with_row_index("row", offset=1).filter(bad).row(0, named=True)
        raise InputFormatError(source, None, f"row {row['row']}: expected a query_id, a doc_id and a {value_column} "
                               f"(a number other than NaN), got {row['query_id']!r}, {row['doc_id']!r}, "
                               f"{row[value_column]!r}")
    if value_column == "relevance":  # an Int64 column holds grades the readers refuse, as the rows of other shapes do
        beyond = ~pl.col("relevance").is_between(*RELEVANCE_RANGE)
        if frame.select(beyond.any()).item():
            row = frame.with_row_index("row", offset=1).filter(beyond).row(0, named=True)
            raise InputFormatError(source, None, f"row {row['row']} (query {row['query_id']!r}, document "
                                   f"{row['doc_id']!r}): {_relevance_problem(row['relevance'])}")
    # the same document under two iterations (subtopics: ndeval's intent-aware qrels) is not a repeat
    key = ["query_id", "iteration", "doc_id"] if "iteration" in frame.columns else ["query_id", "doc_id"]
    # one 64-bit hash per row, sorted: the exact search for a repeat runs only when two hashes meet
    hashes = np.sort(frame.select(key).hash_rows(seed=20240607).to_numpy())
    if not np.any(hashes[1:] == hashes[:-1]):
        return
    indexed = frame.with_row_index("row", offset=1)
    repeated = indexed.filter(pl.struct(*key).is_duplicated())
    if len(repeated):
        first = repeated.row(0, named=True)
        again = repeated.filter(pl.all_horizontal(pl.col(name) == first[name] for name in key))
        what = "judged" if value_column == "relevance" else "listed"
        raise InputFormatError(source, None, f"row {again['row'][1]}: document {first['doc_id']!r} {what} twice for "
                               f"query {first['query_id']!r} (first at row {first['row']})")


def _check_columns(columns: Iterable[Any], source: str, value_column: str) -> None:
    """A DataFrame needs ir_measures' columns; the error lists those it has."""
    columns = list(columns)
    if not {"query_id", "doc_id", value_column} <= set(columns):
        raise InputFormatError(source, None, f"needs the columns query_id, doc_id, {value_column}; it has "
                               f"{', '.join(map(str, columns))}")
    twice = [name for name in ("query_id", "iteration", "doc_id", value_column) if columns.count(name) > 1]
    if twice:  # pandas allows it; which of the two is meant cannot be told
        raise InputFormatError(source, None, f"the column {twice[0]!r} appears {columns.count(twice[0])} times "
                               f"(columns: {', '.join(map(str, columns))}); keep one")


def _polars_table(frame: Any, source: str, value_column: str) -> Any:
    """A polars frame with other types (integer ids, Int32 or whole Float relevance, Float32 scores, no
    iteration column) brought to the schema's, in polars: checked as ``_check_rows`` checks rows."""
    import polars as pl

    _check_columns(frame.columns, source, value_column)
    for column in ("query_id", "doc_id"):
        dtype = frame.schema[column]
        if not (dtype == pl.Utf8 or dtype.is_integer() or dtype == pl.Categorical):
            raise InputFormatError(source, None, f"the {column} column holds {dtype}, not strings or integers")
    number = frame.schema[value_column]
    if not number.is_numeric():
        raise InputFormatError(source, None, f"the {value_column} column holds {number}, not numbers")
    if value_column == "relevance":
        # the readers' range; as floats, NaN, infinity and 2**64 - 1 in a UInt64 column compare too
        low, high = RELEVANCE_RANGE
        grade = pl.col("relevance").cast(pl.Float64)
        bad = ~grade.is_finite() | (grade != grade.round()) | (grade < low) | (grade > high)
        wrong = frame.with_row_index("row", offset=1).filter(bad)
        if len(wrong):
            row = wrong.row(0, named=True)
            raise InputFormatError(source, None, f"row {row['row']} (query {row['query_id']!r}, document "
                                   f"{row['doc_id']!r}): {_relevance_problem(row['relevance'])}")
    columns = [pl.col("query_id").cast(pl.Utf8), pl.col("doc_id").cast(pl.Utf8)]
    if value_column == "relevance":
        iteration = pl.col("iteration").cast(pl.Utf8) if "iteration" in frame.columns else pl.lit("0")
        columns = [columns[0], iteration.alias("iteration"), columns[1], pl.col("relevance").cast(pl.Int64)]
    else:
        columns.append(pl.col("score").cast(pl.Float64))
    table = frame.select(columns)
    check_frame(table, source, value_column)
    return table


# --- the shapes --------------------------------------------------------------------------------------
def library_of(value: Any) -> str | None:
    """``"pandas"`` or ``"polars"`` for their DataFrames (told apart without importing either)."""
    module = type(value).__module__.split(".")[0]
    return module if module in ("pandas", "polars") and type(value).__name__ == "DataFrame" else None


def is_arrow_table(value: Any) -> bool:
    """A pyarrow ``Table`` or ``RecordBatch`` (told apart without importing pyarrow)."""
    return type(value).__module__.split(".")[0] == "pyarrow" and type(value).__name__ in ("Table", "RecordBatch")


def source_name(value: Any, name: str) -> str:
    if type(value) is dict:  # the commonest shape, told first
        return f"{name} (dict)"
    library = library_of(value)
    if library:
        return f"{name} ({library} DataFrame)"
    if is_arrow_table(value):
        return f"{name} (Arrow {type(value).__name__})"
    if isinstance(value, Mapping):
        return f"{name} (dict)"
    return f"{name} ({type(value).__name__})"


SMALL_FRAME_ROWS = 50_000
"""DataFrames up to this many rows are read as Python lists (``tables.bulk``) and ranked as lists, as small
files are (``core.ranking.LIST_FORM_MAX_ROWS``): polars' hashing and joins cost more than they save there."""


def _table(value: Any, source: str, value_column: str, kinds: str, frames_checked: bool = False) -> Any:
    if type(value) is dict:  # the commonest shape, told first: no Arrow table, no DataFrame, no path
        return _mapping_table(value, source, value_column)
    if is_arrow_table(value):  # polars reads Arrow's buffers as they are: the polars frame's path, checks and all
        import polars as pl

        value = pl.from_arrow(value)
        frames_checked = True
    library = library_of(value)
    if library is not None and len(value) <= SMALL_FRAME_ROWS:
        small = small_frame(value, value_column, library == "pandas")
        if small is not None:  # else the frame's own path says what is wrong, in polars' words as before
            return small
    if is_table_data(value, value_column) and not isinstance(value, dict):  # a caller's dict is checked below
        if frames_checked and library == "polars":
            check_frame(value, source, value_column)
        return value
    if isinstance(value, (str, bytes, os.PathLike)):
        reader = "read_qrels" if value_column == "relevance" else "read_run"
        raise InputTypeError(f"{'Qrels' if value_column == 'relevance' else 'Run'}() takes the data itself; a file is "
                        f"read by trec_rag_eval.{reader}({value!r}), or given to evaluate() as it is")
    if library == "polars":
        return _polars_table(value, source, value_column)
    if library is not None:
        _check_columns(value.columns, source, value_column)
        wanted = [c for c in ("query_id", "iteration", "doc_id", value_column) if c in value.columns]
        converted = _from_pandas(value[wanted])
        if converted is not None:
            return _polars_table(converted, source, value_column)
        columns = [frame_column_list(value[c]) for c in ("query_id", "doc_id", value_column)]
        return _check_rows(zip(*columns, strict=True), source, value_column, by_row=True)
    if isinstance(value, Mapping):
        return _mapping_table(value, source, value_column)
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        items = value if isinstance(value, list) else list(value)  # a generator is read once, for both paths
        return record_columns(items, value_column) or _check_rows(
            _records(items, source, value_column, kinds), source, value_column, by_row=True)
    raise InputTypeError(f"{source.split(' (')[0]} must be {kinds}; got {type(value).__name__}")


def _mapping_table(value: Mapping[Any, Any], source: str, value_column: str) -> Any:
    """A dict of columns or of queries, read in bulk first (``tables.bulk``); row by row only to word what is wrong."""
    if is_columns(value, value_column):
        iterations = _iterations(value, source) if value_column == "relevance" and "iteration" in value else None
        return column_columns(value, value_column, iterations) or _check_rows(
            _column_rows(value, source, value_column), source, value_column, by_row=True, iterations=iterations)
    # the columns told from None, not asked their length (a run's tells it in Python)
    return nested if (nested := nested_columns(value, value_column)) is not None else _check_rows(
        _nested(value, source, value_column), source, value_column, by_row=False)


def none_empty(value: Mapping[Any, Any]) -> bool:
    """Whether every value of ``{query_id: ...}`` has a length and none is 0, told by one C pass over the lengths:
    the usual answer, before the queries are looked at one by one for an empty one (False also when some value
    has no length: the caller's own pass decides what that value is)."""
    try:
        return 0 not in map(len, value.values())
    except TypeError:
        return False


def empty_keys(value: Any) -> tuple[str, ...]:
    """The query ids of a ``{query_id: judgments}`` mapping whose judgments are empty (``[]``, ``{}``)."""
    if not isinstance(value, dict) or is_table_data(value, "relevance") or is_columns(value, "relevance"):
        return ()
    if none_empty(value):
        return ()
    return tuple(str(key) for key, judged in value.items() if hasattr(judged, "__len__") and len(judged) == 0)


def is_columns(value: Mapping[Any, Any], value_column: str) -> bool:
    """A dict of columns (``{"query_id": [...], "doc_id": [...], "score": [...]}``), not of queries."""
    return {"query_id", "doc_id", value_column} <= set(value) and all(
        isinstance(column, (list, tuple, np.ndarray)) for column in value.values())


def _iterations(value: Mapping[Any, Any], source: str) -> list[str]:
    """The iteration column of a dict of judgment columns (ndeval's subtopics), as strings."""
    iterations = [_id(it, "iteration") for it in value["iteration"]]
    if len(iterations) != len(value["query_id"]):
        raise InputFormatError(source, None, f"the columns differ in length (query_id {len(value['query_id'])}, "
                               f"iteration {len(iterations)})")
    bad = next((row for row, it in enumerate(iterations, start=1) if not it), None)
    if bad is not None:
        raise InputFormatError(source, None, f"row {bad}: the iteration must be a string or an integer, "
                               f"got {value['iteration'][bad - 1]!r}")
    return iterations  # type: ignore[return-value]


def _column_rows(value: Mapping[Any, Any], source: str, value_column: str) -> Iterable[tuple[Any, Any, Any]]:
    """The rows of a dict of columns, which must be of one length."""
    names = ("query_id", "doc_id", value_column)
    lengths = {name: len(value[name]) for name in names}
    if len(set(lengths.values())) > 1:
        raise InputFormatError(source, None, "the columns differ in length ("
                               + ", ".join(f"{name} {length}" for name, length in lengths.items()) + ")")
    columns = [value[name].tolist() if isinstance(value[name], np.ndarray) else value[name] for name in names]
    return zip(*columns, strict=True)


def _from_pandas(frame: Any) -> Any:
    """The pandas frame as a polars one (through Arrow: 0.2 s a million rows, where Python rows take
    seconds), or None when its columns do not convert (mixed types in an object column): the row path
    then names the row at fault."""
    import polars as pl

    try:  # a copy of its numbers, which polars would share: the caller may write into the frame afterwards
        return pl.from_pandas(frame.copy(), nan_to_null=False)
    except Exception:  # noqa: BLE001 - a column Arrow cannot convert: the row path names the row at fault
        return None


def _nested(value: Mapping[Any, Any], source: str, value_column: str) -> Iterable[tuple[Any, ...]]:
    """{query_id: {doc_id: value}} or {query_id: [doc_id, ...]} as (query_id, doc_id, value) rows."""
    for query_id, docs in value.items():
        if isinstance(docs, Mapping):
            for doc_id, number in docs.items():
                yield query_id, doc_id, number
        elif isinstance(docs, (list, tuple)):
            for position, doc_id in enumerate(docs):
                # a list: relevant documents (qrels), or the ranking best first (run: n, n-1, ..., 1)
                yield query_id, doc_id, 1 if value_column == "relevance" else float(len(docs) - position), position + 1
        else:
            raise InputFormatError(source, None, f"query {query_id!r}: expected a dict {{doc_id: {value_column}}} "
                                   f"or a list of doc ids, got {type(docs).__name__}")


def _records(value: Iterable[Any], source: str, value_column: str, kinds: str) -> Iterable[tuple[Any, Any, Any]]:
    """Named tuples (ir_measures Qrel / ScoredDoc, ir_datasets) or dicts with the column names."""
    for row, item in enumerate(value, start=1):
        if isinstance(item, Mapping):
            get = item.get
        elif hasattr(item, "query_id") and hasattr(item, "doc_id"):
            def get(key: str, item: Any = item) -> Any:
                return getattr(item, key, None)
        else:
            raise InputTypeError(f"{source.split(' (')[0]} must be {kinds}; row {row} is a {type(item).__name__} "
                            f"without query_id and doc_id")
        number = get(value_column)
        if get("query_id") is None or get("doc_id") is None or number is None:
            raise InputFormatError(source, None, f"row {row}: expected query_id, doc_id and {value_column}, got "
                                   f"{item!r}")
        yield get("query_id"), get("doc_id"), number


def _check_rows(rows: Iterable[tuple[Any, ...]], source: str, value_column: str, by_row: bool,
                iterations: list[str] | None = None) -> CheckedColumns:
    """Columns from (query_id, doc_id, value) rows: ids as strings, values checked, pairs once (once per
    iteration, when judgments come with theirs: ndeval's subtopics)."""
    query_ids: list[str] = []
    doc_ids: list[str] = []
    numbers: list[Any] = []
    first: dict[tuple[str, ...], tuple[int, Any, list[int]]] = {}  # the row, the doc id as given, its place in a list
    spelled: dict[str, tuple[Any, str]] = {}   # query id -> how it was first given, and where
    is_qrels = value_column == "relevance"
    position: list[int]  # a row's place in its query's list of ids, when it comes from one
    for row, (query_id, doc_id, number, *position) in enumerate(rows, start=1):
        q, d = _id(query_id, "query id"), _id(doc_id, "doc id")
        qd = [shown_value(v) if t is None else repr(t) for t, v in ((q, query_id), (d, doc_id))]  # as given
        where = f"row {row} (query {qd[0]}, document {qd[1]})" if by_row else f"query {qd[0]}, document {qd[1]}"
        for text, what in ((q, "query id"), (d, "doc id")):
            if text is None:
                hint = "; search results are read by tre.read_run(results)" if position and what == "doc id" else ""
                raise InputFormatError(source, None, f"{where}: the {what} must be a string or an integer{hint}")
            if not text:
                raise InputFormatError(source, None, f"{where}: the {what} is empty")
        earlier = spelled.setdefault(q, (query_id, f"row {row}" if by_row else f"with document {d!r}"))  # type: ignore[arg-type]
        if isinstance(earlier[0], str) != isinstance(query_id, str):
            # 1 and "1" are one query in a TREC file: merging two Python keys in silence would be wrong
            raise InputFormatError(source, None, f"{where}: the query id {query_id!r} and the query id "
                                   f"{earlier[0]!r} ({earlier[1]}) are one id {q!r}: give each query once, "
                                   "as a string or as an integer")
        key: tuple[str, ...] = (q, d) if iterations is None else (q, iterations[row - 1], d)  # type: ignore[assignment]
        if key in first:
            raise InputFormatError(source, None, _repeat_reason(first[key], (row, doc_id, position), key[0], key[-1],
                                                                where, "judged" if is_qrels else "listed", by_row))
        first[key] = (row, doc_id, position)
        query_ids.append(q)  # type: ignore[arg-type]
        doc_ids.append(d)  # type: ignore[arg-type]
        numbers.append(_relevance(number, source, where) if is_qrels else _score(number, source, where))
    if is_qrels:
        return CheckedColumns(query_id=query_ids, iteration=iterations or ["0"] * len(query_ids), doc_id=doc_ids,
                              relevance=np.array(numbers, dtype=np.int64))
    return CheckedColumns(query_id=query_ids, doc_id=doc_ids, score=np.array(numbers, dtype=np.float64))


def _repeat_reason(earlier: tuple[int, Any, list[int]], later: tuple[int, Any, list[int]], query_id: str,
                   doc_id: str, where: str, what: str, by_row: bool) -> str:
    """Why a (query, document) pair given twice is refused, naming both places: two rows of a table, two
    places in one query's list of ids, or two keys of one query's dict (``1`` and ``"1"``)."""
    (first_row, first_id, first_place), (row, given, place) = earlier, later
    if by_row:
        return f"row {row}: document {doc_id!r} {what} twice for query {query_id!r} (first at row {first_row})"
    if place:  # a list of ids: the same id twice, or 1 and "1"
        if type(first_id) is type(given):
            return f"query {query_id!r}: document {doc_id!r} {what} twice in its list (positions " \
                   f"{first_place[0]} and {place[0]})"
        return f"query {query_id!r}: document {doc_id!r} {what} twice in its list (as {first_id!r} at " \
               f"position {first_place[0]} and as {given!r} at position {place[0]})"
    return f"{where}: given twice (as {given!r} and as {first_id!r})"  # a dict holds 1 and "1" as two keys


def _id(value: Any, what: str) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Integral) and not isinstance(value, bool):
        return str(int(value))
    return None


def _relevance(value: Any, source: str, where: str) -> int:
    grade: int | None = None
    if isinstance(value, Integral) and not isinstance(value, bool):
        grade = int(value)
    elif isinstance(value, Real) and not isinstance(value, bool) and float(value).is_integer():
        grade = int(float(value))  # 1.0 from a float column (pandas makes one as soon as a value is missing)
    if grade is None or not RELEVANCE_RANGE[0] <= grade <= RELEVANCE_RANGE[1]:
        raise InputFormatError(source, None, f"{where}: {_relevance_problem(value)}")
    return grade


def _relevance_problem(value: Any) -> str:
    """What is wrong with a relevance: not a whole number, or outside the readers' ``RELEVANCE_RANGE``."""
    fractional = (isinstance(value, Real) and not isinstance(value, Integral)
                  and math.isfinite(value) and not float(value).is_integer())
    if fractional or not isinstance(value, Real) or isinstance(value, bool):
        return f"the relevance {shown_value(value)} is not an integer"
    low, high = RELEVANCE_RANGE
    return f"the relevance {shown_value(value)} is not an integer from {low} to {high}"


def _score(value: Any, source: str, where: str) -> float:
    if isinstance(value, Real) and not isinstance(value, bool):
        try:
            score = float(value)
        except OverflowError:  # 10**400: beyond a double, which every score is
            raise InputFormatError(source, None, f"{where}: the score {shown_value(value)} is beyond the range of a "
                                   "floating-point number (about 1.8e308)") from None
        if not math.isnan(score):
            return score
    raise InputFormatError(source, None, f"{where}: the score {value!r} is not a number")
