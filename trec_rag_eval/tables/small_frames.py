"""The columns of a small pandas or polars DataFrame read for ``tables.shapes``: each looked up once (pandas' by
its position in the frame's index, no list of its names made), its ids as Arrow holds them, checked in bulk
(``tables.bulk.frame_columns``), else as lists (``tables.bulk.column_columns``): a polars frame of at most
``POLARS_LIST_MAX_ROWS`` rows, a pandas frame of at most ``PANDAS_LIST_MAX_ROWS``, always as lists."""

from __future__ import annotations

from typing import Any

import numpy as np

from trec_rag_eval.tables.bulk import CheckedColumns, column_columns, frame_columns, id_texts


def small_frame(frame: Any, value_column: str, pandas: bool) -> CheckedColumns | None:
    """A small pandas or polars frame's columns, checked in bulk: its ids kept as Arrow holds them when it does
    (``tables.bulk.frame_columns``: a ``FrameColumns``, whose lists are made on first use), else (and a frame of at
    most ``POLARS_LIST_MAX_ROWS`` or ``PANDAS_LIST_MAX_ROWS`` rows) as lists (``tables.bulk.column_columns``); None
    when a column is missing, given twice, or fails a check. ``pandas``: a pandas frame (else polars')."""
    found = _named_columns(frame, value_column, pandas)
    if found is None:
        return None
    columns, has_iteration = found
    iterations = None
    if has_iteration:
        iteration = columns["iteration"] if "iteration" in columns else column(frame, "iteration", pandas)
        iterations = id_texts(frame_column_list(iteration))
        if iterations is None:
            return None
    if iterations is None and len(frame) > (PANDAS_LIST_MAX_ROWS if pandas else POLARS_LIST_MAX_ROWS):
        # ids held by Arrow: checked, and their query blocks found, on whole columns
        ids = [arrow_array(columns[name]) for name in ("query_id", "doc_id")]
        if ids[0] is not None and ids[1] is not None:
            values = columns[value_column]
            checked = frame_columns(ids[0], ids[1], values if isinstance(values, np.ndarray) else values.to_numpy(),
                                    value_column)
            if checked is not None:
                return checked
    # each pair once is told by a set of the lists' pairs (column_columns): faster at this size than the
    # libraries' own duplicated() / is_duplicated(), which factorize or plan a query first
    lists = {name: _id_list(columns[name], pandas) for name in ("query_id", "doc_id")}
    values = columns[value_column]
    return column_columns({**lists, value_column: values if isinstance(values, np.ndarray) else values.to_numpy()},
                          value_column, iterations)


def _id_list(column: Any, pandas: bool) -> list[Any]:
    """A column of ids as a list: a pandas column Arrow holds by Arrow's to_pylist (pandas' own tolist of such a
    column goes through numpy's objects, 7 us for ten ids against 1), any other by its library's."""
    arrow = arrow_array(column) if pandas else None
    return arrow.to_pylist() if arrow is not None else frame_column_list(column)  # type: ignore[no-any-return]


POLARS_LIST_MAX_ROWS = 256
"""A polars frame of at most this many rows is read as lists (``Series.to_list``): Arrow's kernels cost more to call
than such a frame's rows (an evaluation of a frame of ten rows in under half the time, of 250 rows in 0.7-0.8 of
it); from some 600 rows on, the lists cost more."""
PANDAS_LIST_MAX_ROWS = 256
"""A pandas frame of at most this many rows is read as lists, its ids by Arrow's ``to_pylist`` where Arrow holds them
(``_id_list``): an evaluation of two frames of ten and two rows in 0.63 of the time of Arrow's path, of 200 and 40
rows in 0.69, 400 and 80 in 0.78-0.83; from some 600 rows on, the lists cost more (as polars')."""


def _named_columns(frame: Any, value_column: str, pandas: bool) -> tuple[dict[str, Any], bool] | None:
    """The query_id, doc_id and value columns of a frame (``column``; the judgments' iteration column too when
    there is one) and whether it has an iteration column, or None when one of them is missing or given twice. A
    pandas frame's columns are looked up by name in its index (``Index.get_loc``: a position when the name is there
    once), not listed: its index of pandas 3's strings is read through Arrow, one Python string a name, ~40 us of a
    call cold."""
    wanted: tuple[str, ...] = ("query_id", "doc_id", value_column)
    locate = getattr(frame.columns, "get_loc", None) if pandas else None
    if locate is None:
        names = list(frame.columns)
        if not set(wanted) <= set(names) or len(set(names)) < len(names):
            return None
        has_iteration = value_column == "relevance" and "iteration" in names
        return {name: column(frame, name, pandas) for name in wanted}, has_iteration
    try:
        has_iteration = value_column == "relevance" and "iteration" in frame.columns
        wanted += ("iteration",) * has_iteration
        places = [locate(name) for name in wanted]
    except Exception:  # noqa: BLE001 - a column missing (KeyError), or an index that cannot look a string up
        return None
    if not all(isinstance(place, int) for place in places):  # a slice or a mask: the name is given twice
        return None
    return {name: column(frame, name, pandas, place) for name, place in zip(wanted, places, strict=True)}, has_iteration


def column(frame: Any, name: str, pandas: bool, place: int | None = None) -> Any:
    """One column of a frame: polars' Series (``get_column``: ``frame[name]`` goes through polars' general indexing,
    20 us a column met cold against 7); pandas' own array of it, read by position (``place``, else looked up)
    (``DataFrame._get_column_array``: ``frame[name]`` builds a Series, ~12 us a column in pandas 3, a twentieth of
    a small evaluation for the columns of its two frames), or its Series where pandas has no such method or where
    calling it fails (a private method: another pandas may have changed it)."""
    if not pandas:
        return frame.get_column(name)
    get = getattr(frame, "_get_column_array", None)
    if get is not None:
        try:  # the names are known to be distinct; an array of pandas' or numpy's
            return get(frame.columns.get_loc(name) if place is None else place)
        except Exception:  # noqa: BLE001 - whatever a changed private method raises: the public way below
            pass
    return frame[name]


def arrow_array(column: Any) -> Any:
    """A polars column's Arrow array, or a pandas column's (its Series or its array) when Arrow holds it (the
    Arrow protocol); else None."""
    if hasattr(column, "to_arrow"):
        # polars: its strings as they are (views), through the Arrow stream interface; to_arrow() copied them
        import pyarrow as pa

        try:
            return pa.chunked_array(column)
        except TypeError:  # a pyarrow that does not read the stream interface
            return column.to_arrow()
    to_arrow = getattr(column, "__arrow_array__", None) or getattr(getattr(column, "array", None), "__arrow_array__",
                                                                   None)
    return to_arrow() if to_arrow is not None else None


def frame_column_list(column: Any) -> list[Any]:
    return column.to_list() if hasattr(column, "to_list") else column.tolist()


def frame_content(frame: Any, pandas: bool) -> tuple[Any, ...] | None:
    """What a pandas or polars frame holds, to be compared with what another held: its column names, then each
    column's own type and dtype and the bytes of the buffers that hold its values (numpy's for numbers; Arrow's for
    strings and numbers, with each chunk's type, offset and length): equal contents only when every column is of the
    same kind and every value equal. None when the names or a column hold their values otherwise (Python objects, a
    dictionary, a nested or temporal type): the caller compares the frame's pickle instead."""
    if pandas:
        names = _held(frame.columns)
        columns = [column(frame, name, True, place) for place, name in enumerate(frame.columns)]
    else:
        names, columns = tuple(frame.columns), frame.get_columns()
    if names is None:
        return None
    content: list[Any] = [names]
    for values in columns:
        held = _held(values)
        if held is None:
            return None
        content += (type(values).__name__, str(values.dtype), held)
    return tuple(content)


def _held(values: Any) -> tuple[Any, ...] | None:
    """The bytes that hold a column's (or pandas' column names') values (``frame_content``), or None."""
    arrow = None if isinstance(values, np.ndarray) else arrow_array(values)
    if arrow is None:
        if not isinstance(values, np.ndarray) or values.dtype.kind not in "biuf":
            return None
        return values.dtype.str, values.shape, values.tobytes()
    import pyarrow as pa

    types = pa.types
    held: list[Any] = []
    for chunk in arrow.chunks if isinstance(arrow, pa.ChunkedArray) else (arrow,):
        kind = chunk.type
        if not (types.is_string(kind) or types.is_large_string(kind) or types.is_string_view(kind)
                or types.is_integer(kind) or types.is_floating(kind) or types.is_boolean(kind)):
            return None
        held += (str(kind), chunk.offset, len(chunk), *(None if b is None else b.to_pybytes() for b in chunk.buffers()))
    return tuple(held)
