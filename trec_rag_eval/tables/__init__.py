"""Qrels and runs as columnar tables: the one shape every reader produces and every evaluator reads.

A table holds its columns in one of three forms:

* a polars DataFrame (JSON datasets, anything built with polars);
* ``Columns``, a dict of Python lists and numpy arrays, for what is small enough to read line by line;
  evaluating it needs no polars, so a small evaluation does not pay polars' import time;
* a pyarrow Table, for a large run read by the fast TREC reader: query ids dictionary-encoded (one
  32-bit code per line), doc ids as one buffer of bytes plus offsets, the scores. That is the smallest
  form of a large run (about half of a polars frame of strings), and the ranking reads it as it is.

``.frame`` always gives a polars DataFrame of ``QRELS_SCHEMA`` / ``RUN_SCHEMA`` (converting the other
forms once, on first use); the ranking (``core.ranking``) reads every form as it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass, field
from functools import partial
from itertools import compress
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeGuard

import numpy as np

from trec_rag_eval.errors import DuplicateDocumentError, InputFormatError
from trec_rag_eval.lazy_modules import LazyModule
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables.arrow import arrow_run, is_arrow, polars_numbers
from trec_rag_eval.tables.bulk import CheckedColumns as CheckedColumns
from trec_rag_eval.tables.bulk import nested_columns
from trec_rag_eval.tables.checked_columns import BlockedQrelsColumns, FrameColumns
from trec_rag_eval.tables.shapes import empty_keys, qrels_data, run_data

if TYPE_CHECKING:
    import polars as pl
else:  # the libraries in annotations, imported when read (typing.get_type_hints), not with this module
    pl = LazyModule("polars")

Columns = dict[str, Any]
"""Column name -> Python list (ids, as ``str``) or numpy array (relevance int64, score float64)."""


def __getattr__(name: str) -> Any:
    """``QRELS_SCHEMA`` and ``RUN_SCHEMA`` (polars types) are built on first use: importing this
    module must not import polars."""
    if name not in ("QRELS_SCHEMA", "RUN_SCHEMA"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import polars as pl

    schemas = {
        "QRELS_SCHEMA": {"query_id": pl.Utf8, "iteration": pl.Utf8, "doc_id": pl.Utf8, "relevance": pl.Int64},
        "RUN_SCHEMA": {"query_id": pl.Utf8, "doc_id": pl.Utf8, "score": pl.Float64},
    }
    return schemas[name]


def _as_frame(owner: Any, schema_name: str) -> pl.DataFrame:
    """The owner's data as a polars DataFrame; ``Columns`` and Arrow tables are converted once and kept."""
    data = owner.data
    if isinstance(data, dict) or is_arrow(data):
        import polars as pl

        schema = __getattr__(schema_name)
        if isinstance(data, dict):
            data = pl.DataFrame({name: polars_numbers(column) if isinstance(column, np.ndarray) else column
                                 for name, column in data.items()}, schema=schema)
        else:
            data = pl.from_arrow(data).cast(schema)  # type: ignore[union-attr]
        object.__setattr__(owner, "data", data)  # a cache: the same rows, in the same order
    return data


def large_run_data(run: Run) -> Any:
    """A large run in the form it is ranked in: an Arrow table (the fast reader's), or a polars frame. A run
    made from a dict of dicts (``CheckedColumns`` with its blocks) becomes the Arrow table of the fast reader,
    its query ids dictionary-encoded from the blocks, each converted once rather than once a row; kept in
    place of the lists, as ``frame`` keeps its frame."""
    data = run.data
    if is_arrow(data):
        return data
    if isinstance(data, CheckedColumns) and data.blocks is not None:
        table = arrow_run(*data.blocks, data["doc_id"], data["score"])
        if table is not None:
            object.__setattr__(run, "data", table)  # the same rows, in the same order
            return table
    return run.frame


def derived_from(owner: Qrels | Run) -> dict[Hashable, Any]:
    """What is derived from a table's rows (its query ids in trec_eval's order, its judgments ready for
    matching), by key: the caller makes what is missing and keeps it here, with the table. A table never
    changes its rows, so judgments given as one ``Qrels`` to many evaluations (a parameter sweep, a check per
    training epoch) are prepared once. Two threads asking at once may both make it; either result is the same."""
    return owner.__dict__.setdefault(_DERIVED, {})  # type: ignore[no-any-return]


_DERIVED = "_derived"
"""Where ``derived_from`` keeps its values in a table's ``__dict__``; left out when the table is pickled (sent to a
worker, which derives them again from the rows it receives)."""


def _state_without_derived(owner: Any) -> dict[str, Any]:
    return {name: value for name, value in owner.__dict__.items() if name != _DERIVED}


def qrels_columns(rows: list[tuple[str, str, str, int]]) -> Columns:
    """``Columns`` of a Qrels from (query_id, iteration, doc_id, relevance) rows."""
    return {"query_id": [r[0] for r in rows], "iteration": [r[1] for r in rows], "doc_id": [r[2] for r in rows],
            "relevance": np.array([r[3] for r in rows], dtype=np.int64)}


def run_columns(rows: list[tuple[str, str, float]]) -> Columns:
    """``Columns`` of a Run from (query_id, doc_id, score) rows."""
    return {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
            "score": np.array([r[2] for r in rows], dtype=np.float64)}


def same_rows(one: Qrels | Run, other: Qrels | Run) -> bool:
    """Whether two tables hold the same rows, each as often, in any order and any form: their value column's NaN
    made None, which equals itself (NaN equals nothing, not even itself)."""
    if num_rows(one) != num_rows(other):
        return False
    names = ("query_id", "doc_id", "score") if "score" in _names(one) else ("query_id", "iteration", "doc_id",
                                                                           "relevance")
    if names[-1] not in _names(other):
        return False

    def rows(owner: Qrels | Run) -> Counter[tuple[Any, ...]]:
        columns = [column_list(owner, name) for name in names]
        columns[-1] = [None if value != value else value for value in columns[-1]]
        return Counter(zip(*columns, strict=True))

    return rows(one) == rows(other)


def _names(owner: Qrels | Run) -> list[str]:
    data: Any = owner.data
    if is_arrow(data):
        return list(data.column_names)
    return list(data.columns) if _is_polars(data) else list(data)


def column_list(owner: Qrels | Run, name: str) -> list[Any]:
    """One column of a table as a Python list, whichever form the table holds."""
    data = owner.data
    if isinstance(data, dict):
        values = data[name]
        return values.tolist() if isinstance(values, np.ndarray) else list(values)
    return owner.frame[name].to_list()


def column_head(owner: Qrels | Run, name: str, rows: int) -> list[Any]:
    """The first ``rows`` values of one column as a Python list, without converting the table."""
    data = owner.data
    if isinstance(data, FrameColumns) and name == "doc_id":  # its first ids made strings, not all of them
        return data.doc_ids.gather(np.arange(min(rows, len(data.doc_ids))))
    if isinstance(data, dict):
        return list(data[name][:rows])
    if is_arrow(data):
        return data.column(name).slice(0, rows).to_pylist()  # type: ignore[union-attr]
    return data[name].head(rows).to_list()  # type: ignore[union-attr]


def column_alnum(owner: Qrels | Run, name: str, rows: int) -> bool | None:
    """Whether the first ``rows`` values of a column of ids hold letters and digits alone (``str.isalnum`` of their
    join), for a small frame's doc ids told from Arrow's buffers, no string made for each id; None when it takes
    the ids' strings (``column_head``) to tell."""
    data = owner.data
    if isinstance(data, FrameColumns) and name == "doc_id":
        return data.doc_ids.head_alnum(rows)
    return None


def num_rows(owner: Qrels | Run) -> int:
    """The number of rows of a table, whichever form it holds."""
    data = owner.data
    if isinstance(data, dict):
        return len(data["score" if "score" in data else "query_id"])  # a small frame's run makes no query list
    if is_arrow(data):
        return int(data.num_rows)  # type: ignore[union-attr]
    return len(data)


def query_id_set(owner: Qrels | Run) -> set[str]:
    """The distinct query ids of a table."""
    data = owner.data
    if isinstance(data, CheckedColumns) and data.blocks is not None:
        return set(compress(*data.blocks))  # each query's id once, without its rows (a query of none has no id)
    if isinstance(data, dict):
        return set(data["query_id"])
    if is_arrow(data):
        return set(data.column("query_id").unique().to_pylist())  # type: ignore[union-attr]
    return set(data["query_id"].unique().to_list())


def qrels_query_ids(qrels: Qrels, judged: list[str] | None = None) -> list[str]:
    """Every query the qrels know: the judged ones (``judged``, if already listed), then the queries of
    the topics that have no judgment at all (a dataset item with an empty relevant list).

    A query with no relevant document is kept, as trec_eval -c and ir-measures keep it: it scores 0
    on every measure that needs one, and counts in the mean, whatever shape the dataset came in.
    """
    ids = list(judged) if judged is not None else column_list(qrels, "query_id")
    ids = list(dict.fromkeys(ids))
    known = set(ids)
    return ids + [q for q in dict.fromkeys([*(qrels.topics or {}), *qrels.unjudged]) if q not in known]


class ResultsReport(NamedTuple):
    """What a results reader noticed but did not refuse (fed to ``checks.rag``). A record, read by attribute (a
    named tuple: a frozen dataclass's six methods are compiled when its class is made, at every import).

    ``duplicates``: (query_id, doc_id, times listed) for every id listed more than once in one list.
    ``empty``: query ids whose result list is empty (they have no row in the Run at all).
    ``disordered``: query ids whose list's scores rise along it: ranked in the list's order all the
    same (``io.ranked_lists``).
    ``searched``: the run was read from search results (JSON), which the RAG checks look at; the report of a
    run of another format is empty, and its reader refuses what the checks would find.
    """

    duplicates: tuple[tuple[str, str, int], ...] = ()
    empty: tuple[str, ...] = ()
    disordered: tuple[str, ...] = ()
    searched: bool = False


def _is_polars(data: Any) -> TypeGuard[pl.DataFrame]:
    """Whether a table's data is a polars frame (told without importing polars)."""
    return type(data).__module__.startswith("polars.")


def _own(data: Any, given: Any) -> Any:
    """A table's checked ``data`` made of the caller's value ``given``: a new frame when it is the caller's own,
    which the caller may change in place afterwards (``df[i, name] = x``; a new frame of the same columns: nothing
    copied)."""
    return data.clone() if data is given and _is_polars(data) else data


@dataclass(frozen=True, repr=False, eq=False)  # its own __repr__: one line (dataclass would make one, then drop it);
class Qrels:                                     # its own __eq__: the rows (dataclass's compared arrays, and raised)
    """Relevance judgments: one row per (query_id, doc_id).

    ``data`` has the columns of ``QRELS_SCHEMA``, as a polars DataFrame or ``Columns``. A negative
    relevance means "in the pool but not judged" (trec_eval's convention); 0 means judged
    non-relevant. ``source`` names the file (or other origin) for error messages; ``topics``
    optionally maps query_id -> query text. Two are equal when they hold the same rows and kind, in any order and
    form (``__eq__``); they are not hashable.
    """

    data: pl.DataFrame | Columns
    source: str = "<qrels>"
    topics: dict[str, str] | None = field(default=None, compare=False)
    unjudged: tuple[str, ...] = field(default=(), compare=False)
    """Queries known to have no judgment at all (``{"q2": []}`` in a dict): they have no row, yet count."""
    _: KW_ONLY
    checked: InitVar[bool] = False
    """The package's own path: ``data`` is a table's already (``Columns`` or a frame of ``QRELS_SCHEMA``, made by a
    reader that checked every line, or derived from a table), taken as it is. Anything else given to ``Qrels`` is
    the caller's, and checked whatever its shape (``tables.shapes``), as ``evaluate`` checks it."""

    kind: ClassVar[str] = "relevance"
    """What the judgments hold, which decides the measures that score them: ``"relevance"``, one grade per
    document; ``"groups"`` (``tables.judgment_kinds.GroupedQrels``) and ``"preferences"``
    (``tables.judgment_kinds.Preferences``) are the other kinds of judgments."""

    def __post_init__(self, checked: bool) -> None:
        # Qrels(pandas_frame), Qrels({query_id: {doc_id: relevance}}), Qrels([Qrel(...), ...]): see tables.shapes;
        # the columns tables.shapes made of such a value (CheckedColumns) are taken as they are, not asked about again
        data = self.data
        if checked or (isinstance(data, CheckedColumns) and "relevance" in data):
            return
        if not self.unjudged:
            object.__setattr__(self, "unjudged", empty_keys(data))
        object.__setattr__(self, "data", _own(qrels_data(data, frames_checked=True), data))

    @property
    def frame(self) -> pl.DataFrame:
        return _as_frame(self, "QRELS_SCHEMA")

    __getstate__ = _state_without_derived

    def __eq__(self, other: object) -> bool:
        """Judgments of the same kind holding the same rows (query_id, iteration, doc_id, relevance) and the same
        queries without judgments (``unjudged``: they count in a mean), in any order and any form (lists, a frame);
        where they were read from (``source``) and their topics' texts do not count. Not hashable: see ``Run``."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Qrels)
        return set(self.unjudged) == set(other.unjudged) and same_rows(self, other)

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_dict(cls, judgments: dict[str, dict[str, int]], source: str = "<qrels>") -> Qrels:
        """Build from ``{query_id: {doc_id: relevance}}`` (the pytrec_eval / ranx shape), checked as
        ``Qrels(dict)`` checks it (see ``tables.shapes``): integer ids read as a TREC file spells them."""
        return cls(judgments, source)

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, r in zip(*(column_list(self, c) for c in ("query_id", "doc_id", "relevance")), strict=True):
            out.setdefault(q, {})[d] = int(r)
        return out

    def __repr__(self) -> str:  # the dataclass repr printed every id: one line whatever the size
        queries = len(query_id_set(self) | set(self.unjudged))
        return f"Qrels(source={self.source!r}, queries={queries}, judgments={num_rows(self)})"

    @property
    def query_ids(self) -> list[str]:
        """Query ids in trec_eval order (byte order of the id)."""
        return sorted(set(column_list(self, "query_id")), key=byte_key)


def has_subtopics(qrels: Qrels) -> bool:
    """Whether some document is judged under several iterations of one query: ndeval's intent-aware qrels
    (``query_id subtopic doc_id relevance``), where the iteration column names the subtopic."""
    cached = qrels.__dict__.get("_has_subtopics")
    if cached is None:
        data = qrels.data
        if isinstance(data, (FrameColumns, BlockedQrelsColumns)):  # no iteration column given: every row's is "0"
            cached = False
        elif isinstance(data, dict):
            iterations = data["iteration"]
            if len(set(iterations)) <= 1:  # one iteration ("0"): nothing repeats, the readers saw to that
                cached = False
            else:
                pairs = list(zip(data["query_id"], data["doc_id"], strict=True))
                cached = len(set(pairs)) < len(pairs)
        elif qrels.frame.height == 0 or bool((qrels.frame["iteration"] == qrels.frame["iteration"][0]).all()):
            cached = False  # the common case, told in one vectorised pass
        else:
            keys = qrels.frame.select("query_id", "doc_id")
            hashes = np.sort(keys.hash_rows(seed=20240607).to_numpy())
            cached = bool(np.any(hashes[1:] == hashes[:-1])) and bool(keys.is_duplicated().any())
        object.__setattr__(qrels, "_has_subtopics", cached)  # a cache of what the rows say
    return bool(cached)


def per_document(qrels: Qrels) -> Qrels:
    """The judgments one per (query_id, doc_id), as every measure but the intent-aware ones reads them:
    of a document judged under several subtopics, its highest judgment (ndeval's rule: a document
    relevant to any subtopic is relevant to the query). The qrels themselves when nothing repeats."""
    if not has_subtopics(qrels):
        return qrels
    import polars as pl

    frame = (qrels.frame.group_by("query_id", "doc_id", maintain_order=True)
             .agg(pl.col("relevance").max())
             .select("query_id", pl.lit("0").alias("iteration"), "doc_id", "relevance"))
    return Qrels(frame, qrels.source, qrels.topics, qrels.unjudged, checked=True)


class Places(NamedTuple):
    """Where the rows of a table stand in what it was read from, as its reader records it: ``find(query_id,
    doc_id)`` gives the (file, number) of every row holding that pair, in the order read, numbered as
    ``unit`` says (``"line"`` of a text file, ``"row"`` of a Parquet file). ``find`` is a function of the reader
    (with its arguments bound: ``functools.partial``), so a table sent to a Dask worker keeps it; it is called
    only to cite an error found after the reading (a document listed twice, found by the ranking). A record (a
    named tuple, as ``ResultsReport``)."""

    unit: str
    find: Callable[[str, str], list[tuple[str, int]]]


def joined_places(places: Sequence[Places | None]) -> Places:
    """The places of a table whose rows are those of several tables read in turn (a run's shards, the
    partitions a cluster reads); places that find nothing if one of them has none, or the units differ."""
    known = tuple(p for p in places if p is not None)
    units = {p.unit for p in known}
    if len(units) != 1 or len(known) < len(places):
        return NOWHERE
    return Places(units.pop(), partial(_find_in_turn, known))


def _find_in_turn(places: tuple[Places, ...], query_id: str, doc_id: str) -> list[tuple[str, int]]:
    return [found for one in places for found in one.find(query_id, doc_id)]


NOWHERE = Places("row", partial(_find_in_turn, ()))
"""The places of rows that cannot be pointed at (a part of a table built in memory): an error names none."""


@dataclass(frozen=True, repr=False, eq=False)  # its own __repr__ and __eq__, as Qrels
class Run:
    """A ranked result list: one row per (query_id, doc_id) with its score.

    The rank column of a TREC file is not kept: trec_eval ignores it, and so do we. The ranking
    is always rebuilt by score descending, then doc_id descending (see ``core.ranking``).
    ``run_tag`` is the tag of the last line of the file, which trec_eval prints as ``runid``.
    ``places``: where its rows stand in the file it was read from (``Places``, recorded by the reader);
    None for a table built in memory, whose places are its own rows.
    ``empty_queries``: queries that were asked and answered with an empty result list (a search that found
    nothing): they have no row and score 0 as a missing query does, but are said to have no result, not
    to be missing from the run.
    Two runs are equal when they hold the same rows under the same ``run_tag``, in any order and form, a NaN score
    equal to a NaN score (``__eq__``); they are not hashable.
    """

    data: pl.DataFrame | Columns | Any  # Any: a pyarrow Table (see the module docstring)
    run_tag: str = "run"
    source: str = "<run>"
    places: Places | None = field(default=None, compare=False)
    empty_queries: frozenset[str] = field(default=frozenset(), compare=False)
    _: KW_ONLY
    checked: InitVar[bool] = False
    """The package's own path, as ``Qrels``'s: ``data`` is a table's already (``Columns``, a frame of ``RUN_SCHEMA``
    or the fast reader's Arrow table, made by a reader or derived from a table), taken as it is; anything else is
    the caller's, and checked."""

    def __post_init__(self, checked: bool) -> None:
        # Run(pandas_frame), Run({query_id: {doc_id: score}}), Run([ScoredDoc(...), ...]): see tables.shapes;
        # the columns tables.shapes made of such a value (CheckedColumns) are taken as they are, not asked about again
        data = self.data
        if checked or (isinstance(data, CheckedColumns) and "score" in data):
            return
        object.__setattr__(self, "data", _own(run_data(data, frames_checked=True), data))

    def __repr__(self) -> str:  # the dataclass repr printed every id: one line whatever the size
        return (f"Run(run_tag={self.run_tag!r}, source={self.source!r}, queries={len(query_id_set(self))}, "
                f"rows={num_rows(self)})")

    @property
    def frame(self) -> pl.DataFrame:
        return _as_frame(self, "RUN_SCHEMA")

    __getstate__ = _state_without_derived

    def __eq__(self, other: object) -> bool:
        """Runs holding the same rows (query_id, doc_id, score) under the same ``run_tag``, in any order (the ranking
        ignores it) and any form (lists, a frame, an Arrow table); a NaN score equals a NaN score (the same row),
        and where the run was read from (``source``, ``places``) does not count. Not hashable: a table holds arrays,
        and is told by its rows, not by its identity."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Run)
        return self.run_tag == other.run_tag and same_rows(self, other)

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_dict(cls, scores: dict[str, dict[str, float]], run_tag: str = "run", source: str = "<run>") -> Run:
        """Build from ``{query_id: {doc_id: score}}`` (the pytrec_eval / ranx shape); ids that are
        not strings become their ``str()``. Unlike ``Run(dict)``, a NaN score is kept (as a TREC
        file's ``nan`` is): the ranking places it as trec_eval does. Anything else ``Run(dict)`` refuses (a score
        that is no number, an empty id, an id given twice as ``1`` and ``"1"``) is refused in its words."""
        if not isinstance(scores, Mapping):
            from trec_rag_eval.errors import UsageError

            raise UsageError(f"Run.from_dict takes a dict {{query_id: {{doc_id: score}}}}, got {type(scores).__name__}")
        columns: Columns | None = nested_columns(scores, "score", allow_nan=True) if isinstance(scores, dict) else None
        if columns is None:  # ids of other kinds (their str()), bool scores: row by row
            from trec_rag_eval.tables.dict_rows import as_evaluate_reads, scored_rows

            rows = scored_rows(scores)
            if rows is None:  # refused in evaluate's words (tables.shapes), a NaN score kept and an id of any kind
                run_data(as_evaluate_reads(scores, nan=0.0))
                return cls(as_evaluate_reads(scores), run_tag, source)  # a list of ids beside dicts: as evaluate
            columns = run_columns(rows)
        return cls(columns, run_tag, source, checked=True)

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(*(column_list(self, c) for c in ("query_id", "doc_id", "score")), strict=True):
            out.setdefault(q, {})[d] = float(s)
        return out


def duplicate_error(run: Run, query_id: str, doc_id: str) -> InputFormatError:
    """The error for a document listed twice for one query of ``run`` (the ranking finds it), citing both
    places: the lines of a text file or the rows of a Parquet file, as the reader recorded them
    (``Run.places``), or the table's own rows for a run built in memory. One text whatever the path (a file
    read whole, in pieces or on a cluster; standard input; a DataFrame; a dict of columns)."""
    reason = f"document {quote(doc_id)} listed twice for query {quote(query_id)}"
    if run.places is not None:
        unit = run.places.unit
        try:
            found = run.places.find(query_id, doc_id)
        except (OSError, InputFormatError):  # the file gone or changed since it was read: the pair is said
            found = []
    else:
        unit, found = "row", [(run.source, row) for row, pair in enumerate(
            zip(column_list(run, "query_id"), column_list(run, "doc_id"), strict=True), start=1)
            if pair == (query_id, doc_id)]
    if len(found) < 2:  # rows derived from the file's (doc ids mapped), or that cannot be pointed at
        return DuplicateDocumentError(run.source, query_id, doc_id)
    (first_file, first), (file, second) = found[:2]
    if unit == "line":
        where = f"line {first}" if first_file == file else f"{first_file}:{first}"
        return InputFormatError(file, second, f"{reason} (first at {where})")
    where = f"row {first}" if first_file == file else f"{first_file}: row {first}"
    return InputFormatError(file, None, f"row {second}: {reason} (first at {where})")


def byte_key(text: str) -> bytes:
    """The sort key of trec_eval's byte order (C's strcmp) for an id read as text: its UTF-8 bytes, an undecodable
    byte of the file kept as it was read (surrogateescape)."""
    return text.encode("utf-8", "surrogateescape")
