"""The columns a table is made of when every row of an in-memory shape was checked (``tables.bulk``,
``tables.shapes``): a dict of column name -> list or array, with what the checks learned about the rows."""

from __future__ import annotations

from collections.abc import Iterator
from functools import reduce
from operator import iadd, mul
from typing import Any


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
