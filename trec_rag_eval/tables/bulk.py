"""In-memory shapes turned into a table's columns in bulk: whole columns gathered by C-level iteration
(``itertools.chain``, ``map``, ``operator.attrgetter``) and checked at once, never a Python step per row.

Each function returns the table's ``Columns`` when every check holds, or None as soon as one fails (a
type that is not the usual one, an empty id, NaN, a relevance out of range, a pair given twice): the
row path of ``tables.shapes`` then reads the same object row by row, finds the first row at fault and
words the error. So the checks here decide only *whether* the input is clean; what is said about it is
said in one place. Kept deliberately narrow: an input they do not recognise (mixed id types, ``Fraction``
scores, a ``defaultdict`` of ``Counter``) is no error here, it only takes the slower row path.
"""

from __future__ import annotations

import marshal
import struct
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, repeat
from operator import attrgetter, itemgetter, methodcaller
from typing import Any

import numpy as np

from trec_rag_eval.syntax import RELEVANCE_RANGE
from trec_rag_eval.tables.arrow import (
    arrow_bits,
    has_empty_offsets,
    inline_words,
    offset_texts,
    view_lengths,
    view_texts,
)
from trec_rag_eval.tables.checked_columns import (
    ArrowIds,
    BlockedQrelsColumns,
    BlockedRunColumns,
    CheckedColumns,
    FrameColumns,
)

Columns = dict[str, Any]


_FLOATS = (float, np.float64, np.float32, np.float16)
_STORAGE_ORDER = {dict, defaultdict, Counter}
"""Dicts that iterate in the order their storage holds them, which ``dict.values`` reads (an OrderedDict need not)."""
_KEYS, _VALUES = methodcaller("keys"), methodcaller("values")
_INTS = (int, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8)


def nested_columns(value: Mapping[Any, Any], value_column: str, allow_nan: bool = False) -> CheckedColumns | None:
    """``{query_id: {doc_id: value}}`` or ``{query_id: [doc_id, ...]}`` as columns, or None (see the module).

    In a dict of dicts whose ids are all strings (or all integers) no pair can repeat: the inner keys are
    unique. A list of ids is checked for repeats, list by list. ``allow_nan``: a NaN score is kept
    (``Run.from_dict``)."""
    inner = list(value.values())
    kinds = set(map(type, inner))
    if kinds and all(issubclass(kind, dict) for kind in kinds):
        lists = False
    elif kinds and all(kind in (list, tuple) for kind in kinds):
        lists = True
    elif kinds:
        return None
    else:
        lists = False
    query_ids = id_texts(list(value))
    lengths = list(map(len, inner))
    # an empty id is found by one lookup per query (in its dict, or in the set of its list), not by a scan of every id;
    # the ids and values of a dict that may iterate in another order than its storage (an OrderedDict moved about)
    # read by its own methods, which pair them as its items() does: dict.values reads the storage
    stored = lists or kinds <= _STORAGE_ORDER
    keys = list(chain.from_iterable(inner if stored else map(_KEYS, inner)))
    doc_ids = id_texts(keys, empty=False)
    if query_ids is None or doc_ids is None:
        return None
    if lists:
        if not all(map(distinct_ids, inner)):
            return None
        numbers = _list_values(lengths, value_column)
    else:
        if any(map(dict.__contains__, inner, repeat(""))):
            return None
        values = checked_values(list(chain.from_iterable(map(dict.values if stored else _VALUES, inner))), value_column,
                                allow_nan)
        if values is None:
            return None
        numbers = values
    if value_column == "score":  # the ranking reads the blocks: the query column is made when something asks for it
        return blocked_run_columns(query_ids, doc_ids, numbers, lengths)
    columns = BlockedQrelsColumns(doc_id=doc_ids, relevance=numbers)  # the query column made when something asks
    columns.blocks = (query_ids, lengths)
    if value_column == "relevance" and doc_ids is keys:  # each query's lookup, made in C (the user's may change)
        if lists:  # relevant documents: each judged 1
            columns.judged_dicts = list(map(dict.fromkeys, inner, repeat(1)))
        elif kinds == {dict} and not (len(numbers) and numbers.min() < 0):
            columns.judged_dicts = list(map(dict.copy, inner))
    return columns


def blocked_run_columns(query_ids: list[str], doc_ids: list[str], scores: np.ndarray, lengths: list[int]
                        ) -> CheckedColumns:
    """A run's columns of its queries' blocks, checked already (each query once, as strings; every doc id a string,
    none empty, none twice in its query's block; the scores float64, none NaN): ``lengths`` rows of each query in
    turn. The ranking reads the blocks: the query column is made when something asks for it."""
    columns = BlockedRunColumns(doc_id=doc_ids, score=scores)
    columns.blocks = (query_ids, lengths)
    return columns


def column_columns(value: Mapping[str, Any], value_column: str, iterations: list[str] | None = None
                   ) -> CheckedColumns | None:
    """A dict of columns (``DataFrame.to_dict("list")``: lists, tuples or numpy arrays of one length) as
    columns, or None. ``iterations``: the judgments' iteration column, already read as strings."""
    names = ("query_id", "doc_id", value_column)
    lengths = {len(value[name]) for name in names}
    if len(lengths) > 1:
        return None
    query_ids, doc_ids = (id_texts(_plain(value[name])) for name in ("query_id", "doc_id"))
    if query_ids is None or doc_ids is None:
        return None
    numbers = checked_values(value[value_column], value_column)
    if numbers is None or not _distinct_rows(query_ids, doc_ids, iterations):
        return None
    return _columns(query_ids, doc_ids, numbers, value_column, iterations)


def frame_columns(query_ids: Any, doc_ids: Any, values: Any, value_column: str) -> CheckedColumns | None:
    """A small frame's columns, given as Arrow arrays of strings for the ids (polars' own, or pandas' when
    Arrow holds them, as pandas 3's strings are), as columns with their query blocks, or None: then
    ``column_columns`` reads the frame's lists. Checked on whole columns by Arrow and numpy: no null, no
    empty id (none among the query blocks' ids, nor among the strings of the documents' dictionary when they are made;
    else two equal offsets in the column's offsets buffer, or a length 0 in a string_view's views: polars' ids are
    read as views, not converted), each query's rows together (as a dict of dicts gives them: its blocks
    are where the id changes from the row before, told by numpy from the views of polars' ids of 12 bytes or fewer,
    and no id starts two blocks), so that a pair given twice is a document twice within one block, found by
    counting the pairs of block number and document dictionary code (``_pairs_distinct``). The ids stay Arrow's
    (``FrameColumns``, ``ArrowIds``): Python strings are made of the rows read, from that dictionary when ids
    repeat across queries."""
    import pyarrow as pa

    arrays: list[Any] = []
    for ids in (query_ids, doc_ids):
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.chunk(0) if ids.num_chunks == 1 else ids.combine_chunks()
        view = pa.types.is_string_view(ids.type)
        if not (view or pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)) or ids.null_count \
                or not len(ids):
            return None
        arrays.append(ids)
    numbers = checked_values(values, value_column)
    if numbers is None:
        return None
    try:
        return _blocked(arrays[0], arrays[1], numbers, value_column)
    except pa.ArrowNotImplementedError:  # an Arrow without these kernels for string views (polars' own strings)
        return _blocked(arrays[0].cast(pa.large_string()), arrays[1].cast(pa.large_string()), numbers, value_column)


def _blocked(queries: Any, docs: Any, numbers: np.ndarray, value_column: str) -> CheckedColumns | None:
    """``frame_columns`` once the ids are known to be strings, none null, and the values checked: the ids are
    checked for an empty one here, where the query blocks' ids and the documents' dictionary are made."""
    import pyarrow as pa

    starts, block_ids = _query_blocks(queries)
    if "" in block_ids or len(set(block_ids)) != len(block_ids):
        return None  # an empty query id (each block's id is its rows'), or a query in two places: no blocks
    lengths = np.diff(np.append(starts, len(queries)))
    encoded = docs.dictionary_encode()
    dictionary, codes = encoded.dictionary, encoded.indices.to_numpy(zero_copy_only=False)
    if value_column == "relevance" or 2 * len(dictionary) <= len(codes):
        # the strings the ranking makes of them anyway (the judgments' numbers, a run's repeated documents): an
        # empty doc id is one of them, told without a pass over the column's offsets or views
        if "" in (dictionary := dictionary.to_pylist()):
            return None
    elif (view_lengths(docs) == 0).any() if pa.types.is_string_view(docs.type) else has_empty_offsets(docs):
        return None
    if not _pairs_distinct(np.repeat(np.arange(len(starts), dtype=np.int64) * len(dictionary), lengths)
                           + codes, len(starts) * len(dictionary)):
        return None
    # the ids stay Arrow's until read (FrameColumns): the ranking makes strings of the few rows it reads of a run,
    # and numbers the judgments by their dictionary codes
    columns = FrameColumns({value_column: numbers})
    columns.blocks, columns.doc_ids = (block_ids, lengths.tolist()), ArrowIds(docs, dictionary, codes)
    return columns


def _query_blocks(queries: Any) -> tuple[np.ndarray, list[str]]:
    """Where each block of rows of one query id starts (0 first), and its id: for polars' string views of 12 bytes
    or fewer, where a view's words change from the row before (numpy, no Arrow kernel), each block's id decoded from
    its view (``view_texts``); else by Arrow's compare (pandas' strings read as 64-bit words from their buffers by numpy
    took more instructions, and more cache misses), its bits read by numpy and each block's id decoded from the
    column's buffers (``offset_texts``): Arrow's to_numpy of booleans, take and to_pylist ran cold in each call."""
    import pyarrow as pa

    words = inline_words(queries) if pa.types.is_string_view(queries.type) else None
    if words is not None:
        low, high = words
        starts = np.flatnonzero((low[1:] != low[:-1]) | (high[1:] != high[:-1])) + 1
        starts = np.concatenate((np.zeros(1, dtype=starts.dtype), starts))
        return starts, view_texts(queries, starts)
    import pyarrow.compute as pc

    if pa.types.is_string_view(queries.type):  # longer views: Arrow's kernels and the offsets of a large_string
        queries = queries.cast(pa.large_string())
    changed = pc.not_equal(queries[1:], queries[:-1])  # no null: the caller refused them
    starts = np.flatnonzero(arrow_bits(changed)) + 1
    starts = np.concatenate((np.zeros(1, dtype=starts.dtype), starts))
    return starts, offset_texts(queries, starts)


def _pairs_distinct(keys: np.ndarray, size: int) -> bool:
    """Whether no key (a pair's block number times the dictionary's size plus its document code, each below
    ``size``) is given twice: counted into a table of every possible key when it is small (no sort), else sorted."""
    if size <= DISTINCT_COUNT_MAX_KEYS:
        return bool(np.bincount(keys).max() <= 1) if len(keys) else True
    keys = np.sort(keys)
    return not bool((keys[1:] == keys[:-1]).any())


DISTINCT_COUNT_MAX_KEYS = 1 << 16
"""Pairs whose keys all fall below this many are told distinct by a count of each key (``np.bincount``,
a table of at most 512 kB); above, by a sort of the keys."""


def record_columns(items: Sequence[Any], value_column: str) -> CheckedColumns | None:
    """Named tuples (ir_measures' ``Qrel`` / ``ScoredDoc``, ir_datasets') or dicts with the column names,
    all of one type, as columns, or None."""
    kinds = set(map(type, items))
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    names = ("query_id", "doc_id", value_column)
    getters: list[Callable[[Any], Any]]
    if issubclass(kind, dict):
        getters = [itemgetter(name) for name in names]
    elif all(hasattr(kind, name) for name in names):
        getters = [attrgetter(name) for name in names]
    else:
        return None
    try:
        given_queries, given_docs, values = (list(map(get, items)) for get in getters)
    except (KeyError, AttributeError):
        return None
    query_ids, doc_ids = id_texts(given_queries), id_texts(given_docs)
    if query_ids is None or doc_ids is None:
        return None
    numbers = checked_values(values, value_column)
    if numbers is None or not _distinct_rows(query_ids, doc_ids):
        return None
    return _columns(query_ids, doc_ids, numbers, value_column)


def joined_strings(values: Iterable[Any]) -> str | None:
    """``values`` end to end when every one is a string (``str`` or a subclass), else None: one C-level pass, a third
    of the cost of the set of their types; the text serves the checks made on a whole column at once."""
    try:
        return "".join(values)
    except TypeError:
        return None


def id_texts(ids: list[Any], empty: bool = True) -> list[str] | None:
    """The ids as a TREC file spells them when they are all strings, none empty (``empty=False``: the
    caller looks for an empty one itself), or all integers (not ``bool``): ``1`` reads as ``"1"``; None
    for anything else (mixed kinds go row by row, where ``1`` and ``"1"`` meeting in one query is named)."""
    if joined_strings(ids) is not None:
        return None if empty and "" in ids else ids
    kinds = set(map(type, ids))
    if all(kind in _INTS for kind in kinds):
        return list(map(str, ids)) if kinds == {int} else [str(int(i)) for i in ids]
    return None


def checked_values(values: Any, value_column: str, allow_nan: bool = False) -> np.ndarray | None:
    """A relevance column (int64, whole numbers in ``RELEVANCE_RANGE``) or a score column (float64, no NaN
    unless ``allow_nan``, finite or infinite) from a list or a numpy array, or None."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "O":
        values = values.tolist()  # Python objects: checked as a list's
    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "iuf":
            return None
        # a copy: the caller may write into its array (a pandas frame's own buffer: df.loc[...] = x) afterwards
        array = values.astype(np.float64 if value_column == "score" else values.dtype)
    else:
        values = list(values)
        usual = _usual_values(values, value_column)  # a dict of scores, of grades: one pass in C
        if usual is not None:
            array = usual
        else:
            kinds = set(map(type, values))
            if not all(kind in _INTS or kind in _FLOATS for kind in kinds):
                return None
            whole = all(kind in _INTS for kind in kinds)
            try:
                array = _packed(values, "q" if whole and value_column == "relevance" else "d")
            except (OverflowError, struct.error):  # beyond a double or an int64: the row path says which
                return None
    if value_column == "score":
        array = array.astype(np.float64, copy=False)
        return array if allow_nan or not np.isnan(array).any() else None
    if array.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            if not (np.isfinite(array) & (array == np.round(array))).all():
                return None
    low, high = RELEVANCE_RANGE
    if len(array) and (array.min() < low or array.max() > high):
        return None
    return array.astype(np.int64, copy=False)


def _usual_values(values: list[Any], value_column: str) -> np.ndarray | None:
    """Values all of the usual type, ``float`` scores or ``int`` grades of 32 bits, as an array, read from their bytes
    in ``marshal``'s format 2 (a list's code and length in 5 bytes, then each float as its code "g" and its double, in
    9, each such int as "i" and 4 bytes; little-endian; no reference from one object to another): one pass in C,
    where telling their types and packing them took two (0.45-0.55 of the time for a dict of dicts' scores). Every
    value's code is checked (values of other sizes may add up to as many bytes), so any other value (another type, a
    subclass, a larger int) gives None: then the caller tells their types."""
    width, code, kind = (9, 0x67, _MARSHALLED_FLOATS) if value_column == "score" else (5, 0x69, _MARSHALLED_INTS)
    try:
        data = marshal.dumps(values, 2)
    except ValueError:  # an object marshal does not write (a subclass of float or int among them)
        return None
    if len(data) != 5 + width * len(values):
        return None
    records = np.frombuffer(data, dtype=kind, count=len(values), offset=5)
    if not (records["code"] == code).all():
        return None
    return records["value"].astype(np.float64 if value_column == "score" else np.int64)


_MARSHALLED_FLOATS = np.dtype([("code", "u1"), ("value", "<f8")])
_MARSHALLED_INTS = np.dtype([("code", "u1"), ("value", "<i4")])


def float_array(values: list[Any]) -> np.ndarray | None:
    """Numbers as ``float()`` reads them (floats, integers, numpy's numbers, bools, Decimals) as a float64 array: read
    from ``marshal``'s bytes when every one is a ``float`` (``_usual_values``), else packed by ``struct``; None for
    anything else (text, None) or an integer no double holds."""
    usual = _usual_values(values, "score")
    if usual is not None:
        return usual
    try:
        return _packed(values, "d")
    except (OverflowError, struct.error):
        return None


def _packed(values: list[Any], code: str) -> np.ndarray:
    """Numbers of the types ``checked_values`` allows as an int64 (``code`` "q") or float64 ("d") array: packed by
    ``struct`` straight into the array's buffer, ``PACK_ROWS`` at a time, in 0.5-0.8 of ``np.fromiter``'s time (its
    generic store per value). The values are converted as ``float()`` and ``operator.index()`` convert them; an int
    beyond the type raises ``OverflowError`` or ``struct.error``."""
    array = np.empty(len(values), dtype=np.int64 if code == "q" else np.float64)
    buffer = array.data
    for start in range(0, len(values), PACK_ROWS):
        piece = values if len(values) <= PACK_ROWS else values[start:start + PACK_ROWS]
        struct.pack_into(f"{len(piece)}{code}", buffer, start * 8, *piece)
    return array


PACK_ROWS = 8192
"""Values packed by one ``struct`` call: all of a column at once, its arguments a tuple as long as the column, took
1.8x ``np.fromiter``'s time for a million scores (the tuple out of the caches); 8,192 at a time, 0.8x."""


def _plain(column: Any) -> list[Any]:
    """A column of ids as a list (numpy's strings and numbers as Python's)."""
    return column.tolist() if isinstance(column, np.ndarray) else list(column)


def distinct_ids(ids: list[Any] | tuple[Any, ...]) -> bool:
    """Whether a list of ids holds each once (a repeat: a set smaller than its list) and none empty, told by its set,
    made and dropped: the sets of every list kept at once took 1.6-1.9x the time for a million ids (10,000 lists of a
    hundred, or a thousand of a thousand), their tables out of the caches by the time the next was made."""
    seen = set(ids)
    return len(seen) == len(ids) and "" not in seen


def _list_values(lengths: list[int], value_column: str) -> np.ndarray:
    """The values of lists of ids: relevance 1 (judgments), or n, n-1, ..., 1 down each list (a run)."""
    total = sum(lengths)
    if value_column == "relevance":
        return np.ones(total, dtype=np.int64)
    sizes = np.asarray(lengths, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    return (np.repeat(sizes + starts, sizes) - np.arange(total)).astype(np.float64)


def _distinct_rows(query_ids: list[str], doc_ids: list[str], iterations: list[str] | None = None) -> bool:
    """Whether no (query, document) pair, or (query, iteration, document) triple, is given twice: told by a
    sort of one 64-bit key per row mixed from the strings' own hashes (which the dict lookups of the ranking
    reuse, cached in the strings), the real pairs compared only when two keys meet."""
    n = len(query_ids)
    if n < 2:
        return True
    keys = np.fromiter(map(hash, doc_ids), dtype=np.int64, count=n)
    for multiplier, column in ((_MIX, query_ids), (_MIX_ITERATION, iterations)):
        if column is not None:  # integer products wrap around in numpy's arrays, as a hash mix wants
            keys ^= np.fromiter(map(hash, column), dtype=np.int64, count=n) * np.int64(multiplier)
    keys.sort()
    if not (keys[1:] == keys[:-1]).any():
        return True
    pairs: Iterable[tuple[str, ...]] = (zip(query_ids, doc_ids, strict=True) if iterations is None
                                        else zip(query_ids, iterations, doc_ids, strict=True))
    return len(set(pairs)) == n  # a repeated pair, or only two keys alike


_MIX = 0x9E3779B97F4A7C15 - (1 << 64)  # 2**64 / golden ratio, as a signed 64-bit integer: spreads the bits
_MIX_ITERATION = 0x632BE59BD9B4E019  # another odd 64-bit constant, for the third column


def _columns(query_ids: list[str], doc_ids: list[str], numbers: np.ndarray, value_column: str,
             iterations: list[str] | None = None) -> CheckedColumns:
    if value_column == "relevance":
        return CheckedColumns(query_id=query_ids, iteration=iterations or ["0"] * len(query_ids), doc_id=doc_ids,
                              relevance=numbers)
    return CheckedColumns(query_id=query_ids, doc_id=doc_ids, score=numbers)
