"""The columns a table is made of when every row of an in-memory shape was checked (``tables.bulk``,
``tables.shapes``): a dict of column name -> list or array, with what the checks learned about the rows."""

from __future__ import annotations

from collections.abc import Iterator
from functools import reduce
from operator import iadd, mul
from typing import Any

import numpy as np

from trec_rag_eval.tables.arrow import arrow_ints, inline_strings, string_buffers


class CheckedColumns(dict[str, Any]):
    """A table's columns made from an in-memory shape, every row checked (here or by the row path), each
    (query, document) pair once: the ranking need not look for a repeat again. ``blocks``: when the rows
    come one query after the other (a dict of dicts), each query's id and its number of rows, so that the
    ranking looks each query up once rather than each row."""

    blocks: tuple[list[str], list[int]] | None = None
    judged_dicts: list[dict[str, Any]] | None = None
    """Judgments given as a dict of dicts whose keys are the table's ids as they are and whose values are none
    negative, or as lists of relevant ids: each query's dict of doc id -> judgment (a copy of the query's own
    dict, or its list's ids each judged 1: made in C, ten times faster than pair by pair), in the order of
    ``blocks``, which the ranking takes as its per-query lookup (``core.matching.Judgments.by_query``)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (sent to a worker) with its columns and blocks, not the dicts: the columns hold the same."""
        return CheckedColumns, (dict(self),), {"blocks": self.blocks}


def query_column(block_ids: list[str], counts: list[int]) -> list[str]:
    """Each query's id in its rows: one list [id] * n a query, joined in C (no step per row)."""
    return reduce(iadd, map(mul, map(list, zip(block_ids)), counts), [])  # type: ignore[no-any-return]


class LazyColumns(CheckedColumns):
    """Columns some of which are made on first use (``__missing__`` in each subclass) and kept: anything that walks
    them (iterating, ``items()``, comparing, pickling) sees every column of ``names``, in that order, made."""

    @property
    def names(self) -> tuple[str, ...]:
        """The columns, in their usual order (each subclass's)."""
        raise NotImplementedError

    def _whole(self) -> dict[str, Any]:
        return {name: self[name] for name in self.names}

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def keys(self) -> Any:
        return self._whole().keys()

    def values(self) -> Any:
        return self._whole().values()

    def items(self) -> Any:
        return self._whole().items()

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self else default

    def copy(self) -> dict[str, Any]:
        return self._whole()

    def __eq__(self, other: object) -> bool:
        return self._whole() == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._whole())

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the columns with their lists (``CheckedColumns``)."""
        return CheckedColumns, (self._whole(),), {"blocks": self.blocks}


class BlockedColumns(LazyColumns):
    """Columns made from a dict of dicts or lists (``tables.bulk.nested_columns``), whose query column (and a
    judgments' iteration column, every row's "0") is made on first use and kept (``__missing__``): the ranking looks
    each query up once from ``blocks``, so an evaluation never makes its list of one id a row (a tenth of the
    conversion of 50 x 100). Anything that walks the columns (iterating, ``items()``, comparing, pickling) sees them
    all, in the usual order (``names``, each subclass's)."""

    def __missing__(self, name: str) -> list[str]:
        if name not in ("query_id", "iteration") or name not in self.names or self.blocks is None:
            raise KeyError(name)
        made = query_column(*self.blocks) if name == "query_id" else ["0"] * sum(self.blocks[1])
        dict.__setitem__(self, name, made)  # the same list for every later reader (two threads: equal lists)
        return made


class BlockedRunColumns(BlockedColumns):
    """A run's columns made from a dict of dicts, lists of ids or search results: its query column made when read."""

    names = ("query_id", "doc_id", "score")


class BlockedQrelsColumns(BlockedColumns):
    """Judgments' columns made from a dict of dicts or lists of relevant ids: their query and iteration columns made
    when read (the ranking never reads the iterations)."""

    names = ("query_id", "iteration", "doc_id", "relevance")


class ArrowIds:
    """The doc ids of a small frame's run as Arrow holds them, with their dictionary (Arrow's array, or its strings
    when they were made already) and codes (``frame_columns``): the ranking asks for the rows it reads as strings
    (``gather``: the rows inside a measure's depth, the rows of tied scores), so the others never become Python
    strings. ``rows``: the rows of the column these are (None: every row), as ``keep`` leaves them."""

    def __init__(self, docs: Any, dictionary: Any, codes: np.ndarray, rows: np.ndarray | None = None) -> None:
        self.docs, self.dictionary, self.codes, self.rows = docs, dictionary, codes, rows
        self._names: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.codes) if self.rows is None else len(self.rows)

    def gather(self, rows: np.ndarray | None = None) -> list[str]:
        """The ids of these rows (None: every row) as Python strings: when at most half the column's rows bring a
        document of their own (the same documents ranked for many queries), from the dictionary's strings (each
        made once, then shared by the rows that hold it: its hash computed once); else from the column (cheaper
        than the dictionary's gather when few ids repeat)."""
        if self.rows is not None:
            rows = self.rows if rows is None else self.rows[rows]
        if 2 * len(self.dictionary) <= len(self.codes):
            if self._names is None:
                self._names = np.array(self._dictionary_list(), dtype=object)
            codes = self.codes if rows is None else self.codes[rows]
            return self._names.take(codes).tolist()  # type: ignore[no-any-return]
        if rows is None:
            return self.docs.to_pylist()  # type: ignore[no-any-return]
        import pyarrow as pa

        if pa.types.is_string_view(self.docs.type):  # Arrow's take has no kernel for views: made from the views
            made = inline_strings(self.docs, rows)
            if made is not None:
                return made
        try:
            return self.docs.take(arrow_ints(rows)).to_pylist()  # type: ignore[no-any-return]
        except pa.ArrowNotImplementedError:  # no take for string views (polars' strings): cast once, kept
            self.docs = self.docs.cast(pa.large_string())
            return self.docs.take(arrow_ints(rows)).to_pylist()  # type: ignore[no-any-return]

    def keep(self, mask: np.ndarray) -> ArrowIds:
        """The ids of the rows where ``mask`` is true."""
        kept = np.flatnonzero(mask)
        return ArrowIds(self.docs, self.dictionary, self.codes, kept if self.rows is None else self.rows[kept])

    def numbered(self) -> tuple[list[str], np.ndarray] | None:
        """The distinct ids (Arrow's dictionary, as Python strings) and each row's number among them (its code):
        None for ids kept only in part (``keep``)."""
        if self.rows is not None:
            return None
        return self._dictionary_list(), self.codes

    def _dictionary_list(self) -> list[str]:
        """The dictionary's strings (it is given as them, or as Arrow's array)."""
        return self.dictionary if isinstance(self.dictionary, list) else self.dictionary.to_pylist()  # type: ignore

    def strings(self) -> list[str]:
        """Every id, as Python strings (``gather``)."""
        return self.gather()

    def head_alnum(self, rows: int) -> bool | None:
        """Whether the first ``rows`` ids hold letters and digits alone (``str.isalnum`` of their join), told from the
        bytes of Arrow's string or large_string buffer at once, no string made for each id; None when those cannot
        tell (string views, ids kept in part, bytes beyond ASCII, no row)."""
        import pyarrow as pa

        count = min(rows, len(self.codes) if self.rows is None else 0)
        if not count or pa.types.is_string_view(self.docs.type):
            return None
        offsets, data = string_buffers(self.docs)
        text = data[offsets[0]:offsets[count]].tobytes()
        return True if text.isalnum() else False if text.isascii() else None


class FrameColumns(LazyColumns):
    """A small frame's columns (``frame_columns``: a run's or judgments') whose id columns stay Arrow's until one
    is read: its values and blocks, its doc ids as ``ArrowIds`` (what the ranking reads, ``doc_ids``).
    ``columns["query_id"]``, ``columns["doc_id"]`` (and the judgments' ``columns["iteration"]``, "0") make their
    lists on first use and keep them (``__missing__``); anything that walks the columns (iterating, ``items()``,
    comparing, pickling) sees them all, in the usual order."""

    doc_ids: ArrowIds

    @property
    def value_column(self) -> str:
        return "score" if dict.__contains__(self, "score") else "relevance"

    @property
    def names(self) -> tuple[str, ...]:
        if self.value_column == "score":
            return "query_id", "doc_id", "score"
        return "query_id", "iteration", "doc_id", "relevance"

    def __missing__(self, name: str) -> list[str]:
        if name == "query_id":
            assert self.blocks is not None
            made = query_column(*self.blocks)
        elif name == "doc_id":
            made = self.doc_ids.strings()
        elif name == "iteration" and self.value_column == "relevance":
            made = ["0"] * len(self.doc_ids)
        else:
            raise KeyError(name)
        dict.__setitem__(self, name, made)  # the same list for every later reader (two threads: equal lists)
        return made
