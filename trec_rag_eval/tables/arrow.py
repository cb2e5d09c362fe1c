"""The columns a table shares with Arrow and polars without a copy, and without importing either where
it can be helped: a large run is a pyarrow Table (the fast TREC reader's), and its numbers reach polars
through Arrow's buffers."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def is_arrow(data: Any) -> bool:
    """Whether a table's data is a pyarrow Table (checked without importing pyarrow)."""
    return type(data).__module__.startswith("pyarrow")


def string_buffers(array: Any) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of an Arrow string array (int32 offsets) or large_string array (int64 offsets), as
    numpy views of its buffers (within the array's own slice of the offsets)."""
    import pyarrow as pa  # loaded already: the array is Arrow's

    width = np.int64 if pa.types.is_large_string(array.type) else np.int32
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=width, count=len(array) + 1,
                            offset=array.offset * np.dtype(width).itemsize)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


def has_empty_offsets(ids: Any) -> bool:
    """Whether an Arrow string or large_string array holds an empty string: two equal offsets."""
    offsets, _ = string_buffers(ids)
    return bool((offsets[1:] == offsets[:-1]).any())


def view_lengths(ids: Any) -> np.ndarray:
    """The lengths of the strings of an Arrow string_view array: the first 4 bytes of each 16-byte view."""
    return np.frombuffer(ids.buffers()[1], dtype=np.int32, count=4 * len(ids), offset=16 * ids.offset)[::4]


def inline_words(ids: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """Each string of an Arrow string_view array as two 64-bit words, when every one is held in its view (12 bytes
    or fewer: its length, then its bytes): equal strings, equal words, the bytes past a string's length set to 0
    (Arrow asks for them to be 0; not relied on). None when some string is longer (held in a data buffer) or on a
    big-endian machine."""
    if sys.byteorder != "little":
        return None
    views = np.frombuffer(ids.buffers()[1], dtype=np.uint64, count=2 * len(ids), offset=16 * ids.offset)
    low, high = views[0::2], views[1::2]
    lengths = low & 0xFFFFFFFF
    if lengths.max() > _INLINE_BYTES:
        return None
    return low & _LOW_MASKS[lengths], high & _HIGH_MASKS[lengths]


_INLINE_BYTES = 12
_LOW_MASKS = np.array([0xFFFFFFFF | ((1 << 8 * min(n, 4)) - 1) << 32 for n in range(_INLINE_BYTES + 1)],
                      dtype=np.uint64)
_HIGH_MASKS = np.array([(1 << 8 * max(n - 4, 0)) - 1 for n in range(_INLINE_BYTES + 1)], dtype=np.uint64)
"""The bits of a view's two words that hold a string of n bytes (n, 0 to 12): its length and first 4 bytes, the rest."""


def view_texts(ids: Any, rows: np.ndarray) -> list[str]:
    """The strings of a few rows of an Arrow string_view array each held in its view (``inline_words`` said so), as
    Python strings, decoded from the views' bytes in C-level iteration: for a query block's id, no Arrow array
    built and read (``inline_strings``) for a handful of strings."""
    views = np.frombuffer(ids.buffers()[1], dtype=np.uint8, count=16 * len(ids), offset=16 * ids.offset)
    picked = views.reshape(-1, 16)[rows]
    starts = np.arange(4, 16 * len(rows), 16)
    return _decoded(picked.tobytes(), starts, starts + picked[:, :4].copy().view("<i4").ravel())


def offset_texts(ids: Any, rows: np.ndarray) -> list[str]:
    """The strings of a few rows of an Arrow string or large_string array as Python strings, decoded from its
    offsets and bytes: no Arrow take and to_pylist (each a path of its own, cold in a small call) for a handful."""
    offsets, data = string_buffers(ids)
    first = offsets[0]
    return _decoded(data[first:offsets[-1]].tobytes(), offsets[rows] - first, offsets[rows + 1] - first)


def arrow_bits(values: Any) -> np.ndarray:
    """An Arrow boolean array without nulls as a numpy array of booleans, unpacked from its bits: pyarrow's to_numpy
    of booleans goes through its conversion to Python objects' machinery."""
    start = values.offset
    bits = np.frombuffer(values.buffers()[1], dtype=np.uint8)
    return np.unpackbits(bits, count=start + len(values), bitorder="little")[start:].view(np.bool_)


def _decoded(text: bytes, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """The UTF-8 strings of ``text`` between each start and end."""
    return list(map(bytes.decode, map(text.__getitem__, map(slice, starts.tolist(), ends.tolist()))))


def inline_strings(ids: Any, rows: np.ndarray) -> list[str] | None:
    """The strings of these rows of an Arrow string_view array as Python strings, made from their views when each is
    held in its view (Arrow's take has no kernel for views); None when some is longer."""
    taken = inline_array(ids, rows)
    return None if taken is None else taken.to_pylist()  # type: ignore[no-any-return]


def inline_array(ids: Any, rows: np.ndarray) -> Any:
    """These rows of an Arrow string_view array as a large_string array, made from their views (``inline_strings``),
    or None."""
    import pyarrow as pa

    lengths = view_lengths(ids)[rows]
    if lengths.max(initial=0) > _INLINE_BYTES:
        return None
    views = np.frombuffer(ids.buffers()[1], dtype=np.uint8, count=16 * len(ids), offset=16 * ids.offset)
    chars = views.reshape(-1, 16)[rows, 4:][np.arange(_INLINE_BYTES) < lengths[:, None]]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(rows), [None, pa.py_buffer(offsets), pa.py_buffer(chars)])


def arrow_ints(values: np.ndarray) -> Any:
    """Integer numpy values as an int64 Arrow array sharing their buffer (``pa.array()`` would import pandas when
    it is installed): the indices of Arrow's ``take``."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


class ArrowExport:
    """An Arrow array or chunked array seen through the Arrow PyCapsule interface alone, which
    ``pl.Series`` imports directly: ``pl.from_arrow`` would first import pyarrow.compute (~25 ms
    holding the GIL, in the middle of a ranking) for a cast our columns never need."""

    def __init__(self, values: Any) -> None:
        self.values = values
        if hasattr(values, "chunks"):
            self.__arrow_c_stream__ = values.__arrow_c_stream__
        else:
            self.__arrow_c_array__ = values.__arrow_c_array__


def polars_numbers(values: np.ndarray) -> Any:
    """A polars Series of a numeric numpy array, sharing its memory: through Arrow once pyarrow is
    loaded, as polars' own conversion of numpy arrays imports numpy.ma (10-15 ms holding the GIL, in
    the middle of a ranking)."""
    import sys

    import polars as pl

    if "pyarrow" not in sys.modules:
        return pl.Series(values)
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    return pl.Series(ArrowExport(pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values),
                                                       [None, pa.py_buffer(values)])))


def fixed_width_strings(text: np.ndarray) -> Any:
    """A polars string Series of the rows of a 2-D uint8 array of ASCII bytes, one text a row: through
    an Arrow string array over the array's own bytes (its offsets a fixed step)."""
    import polars as pl
    import pyarrow as pa

    text = np.ascontiguousarray(text, dtype=np.uint8)
    rows, width = text.shape
    offsets = np.arange(0, rows * width + 1, width, dtype=np.int32)
    return pl.Series(ArrowExport(pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(text))))


ARROW_RUN_TYPES = {"query_id": "dictionary<values=string, indices=int32, ordered=0>", "doc_id": "string",
                   "score": "double"}


def is_arrow_run(data: Any) -> bool:
    """Whether ``data`` is a run's Arrow table as the fast TREC reader makes it (these columns, these types)."""
    return is_arrow(data) and {field.name: str(field.type) for field in data.schema} == ARROW_RUN_TYPES


def arrow_strings(values: list[str]) -> Any | None:
    """An Arrow string array (32-bit offsets) of a list of ASCII strings, built from one join of the list
    (``pa.array`` would import pandas, ~0.4 s, when it is installed); None when some string is not ASCII
    (its length in bytes is then not its length in characters) or the text passes 2 GiB."""
    import pyarrow as pa

    joined = "".join(values)
    if not joined.isascii() or len(joined) >= 1 << 31:
        return None
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, values), dtype=np.int32, count=len(values)), out=offsets[1:])
    return pa.StringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(joined.encode("ascii")))


def arrow_run(query_ids: list[str], lengths: list[int], doc_ids: list[str], scores: np.ndarray) -> Any | None:
    """A run's Arrow table as the fast TREC reader makes it (``ARROW_RUN_TYPES``), from rows that come one
    query after the other (``lengths`` rows for each of ``query_ids``): the query ids dictionary-encoded
    from the blocks, each converted once; None when the ids are not ASCII (``arrow_strings``)."""
    import pyarrow as pa

    queries, docs = arrow_strings(query_ids), arrow_strings(doc_ids)
    if queries is None or docs is None:
        return None
    codes = np.repeat(np.arange(len(query_ids), dtype=np.int32), lengths)
    indices = pa.Array.from_buffers(pa.int32(), len(codes), [None, pa.py_buffer(codes)])
    numbers = np.ascontiguousarray(scores, dtype=np.float64)
    return pa.Table.from_arrays([pa.DictionaryArray.from_arrays(indices, queries), docs,
                                 pa.Array.from_buffers(pa.float64(), len(numbers), [None, pa.py_buffer(numbers)])],
                                names=["query_id", "doc_id", "score"])
