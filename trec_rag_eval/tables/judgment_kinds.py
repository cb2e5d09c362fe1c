"""Judgments that are not one relevance grade per document: judgment groups and preferences.

trec_eval reads three such formats beside its qrels (``-R``), and each feeds its own measures only:

* ``qrels_jg``: qrels whose second column names a judgment group (one user's judgments); map_avgjg,
  P_avgjg and Rprec_mult_avgjg score each group as its own qrels and average over the groups of a query.
  They are a ``GroupedQrels``: a ``Qrels`` whose iteration column is the group.
* ``prefs``: ``query_id group subgroup doc_id level`` lines. Within a subgroup, a document with a higher
  level is preferred to one with a lower level; a group (one user's need) joins its subgroups, its
  preferences made transitive; different groups may disagree. Levels order documents and nothing more,
  except 0, which says "not relevant".
* ``qrels_prefs``: a qrels file read as prefs: the iteration column as the group, one subgroup per group.

Both preference formats are a ``Preferences`` table, which the ``prefs_*`` measures score.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, InitVar, dataclass, field
from numbers import Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from trec_rag_eval.errors import InputFormatError, InputTypeError
from trec_rag_eval.lazy_modules import LazyModule
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Columns, Qrels, byte_key

if TYPE_CHECKING:
    import polars as pl
else:  # the libraries in annotations, imported when read (typing.get_type_hints), not with this module
    pl = LazyModule("polars")

PREFERENCE_COLUMNS = ("query_id", "group", "subgroup", "doc_id", "level")
"""The columns of a ``Preferences`` table, in the order of a prefs file's fields."""
_IDS = PREFERENCE_COLUMNS[:4]


@dataclass(frozen=True, repr=False, eq=False)  # Qrels' __eq__: the rows, and the kind
class GroupedQrels(Qrels):
    """Qrels of several judgment groups (trec_eval's ``-R qrels_jg``): the iteration column names the
    group, and a document may be judged once in each group. Only the ``*_avgjg`` measures read them."""

    kind: ClassVar[str] = "groups"

    def __repr__(self) -> str:
        return "Grouped" + super().__repr__()


@dataclass(frozen=True, eq=False)  # its own __eq__: the rows (dataclass's compared the level arrays, and raised)
class Preferences:
    """Preference judgments: one row per line of a prefs file, ``PREFERENCE_COLUMNS``.

    ``data``: the columns (ids as lists of strings, ``level`` a float64 array), or anything
    ``preference_columns`` reads (a pandas or polars DataFrame with those columns, rows as tuples or
    dicts). ``lines``: where each row stands in ``source`` (its line, or its row), to cite it in errors.
    ``topics`` and ``unjudged`` as for ``Qrels`` (a prefs file has neither).
    """

    data: Columns
    source: str = "<prefs>"
    topics: dict[str, str] | None = field(default=None, compare=False)
    unjudged: tuple[str, ...] = field(default=(), compare=False)
    lines: np.ndarray | None = field(default=None, compare=False)
    unit: str = field(default="row", compare=False)
    """What ``lines`` count: ``"line"`` of a text file, else ``"row"``."""
    _: KW_ONLY
    checked: InitVar[bool] = False
    """The package's own path, as ``Qrels``'s: ``data`` is the table's own columns already (a reader's, which
    checked every line), taken as they are; anything else is the caller's, and checked row by row."""

    kind: ClassVar[str] = "preferences"

    def __post_init__(self, checked: bool) -> None:
        if not (checked and _is_columns(self.data)):
            object.__setattr__(self, "data", preference_columns(self.data, self.source))
        count = len(self.data["query_id"])
        if self.lines is None or len(self.lines) != count:
            object.__setattr__(self, "lines", np.arange(1, count + 1, dtype=np.int64))
        _check_consistent(self)

    @property
    def frame(self) -> pl.DataFrame:
        """The rows as a polars DataFrame (``PREFERENCE_COLUMNS``)."""
        import polars as pl

        return pl.DataFrame({name: self.data[name] for name in PREFERENCE_COLUMNS},
                            schema={**{name: pl.Utf8 for name in _IDS}, "level": pl.Float64})

    @property
    def query_ids(self) -> list[str]:
        """Query ids in trec_eval order (byte order of the id)."""
        return sorted(set(self.data["query_id"]), key=byte_key)

    def error(self, row: int, reason: str, first: int | None = None) -> InputFormatError:
        """The error about row ``row`` (a row index), citing its line (or row) and that of row ``first``."""
        assert self.lines is not None  # set by __post_init__
        if first is not None:
            reason += f" (first at {self.unit} {int(self.lines[first])})"
        if self.unit == "line":
            return InputFormatError(self.source, int(self.lines[row]), reason)
        return InputFormatError(self.source, None, f"row {int(self.lines[row])}: {reason}")

    def __len__(self) -> int:
        return len(self.data["query_id"])

    def __eq__(self, other: object) -> bool:
        """Preferences holding the same rows (``PREFERENCE_COLUMNS``), each as often, in any order; where they were
        read from (``source``, ``lines``) does not count. Not hashable, as ``Run`` and ``Qrels``."""
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Preferences)

        def rows(prefs: Preferences) -> Counter[tuple[Any, ...]]:
            return Counter(zip(*(prefs.data[name] for name in _IDS), prefs.data["level"].tolist(), strict=True))

        return len(self) == len(other) and rows(self) == rows(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Preferences(source={self.source!r}, queries={len(set(self.data['query_id']))}, "
                f"lines={len(self)})")


def _is_columns(value: Any) -> bool:
    return (isinstance(value, dict) and set(PREFERENCE_COLUMNS) <= set(value)
            and all(isinstance(value[name], list) for name in _IDS)
            and isinstance(value["level"], np.ndarray) and value["level"].dtype == np.float64)


def preference_columns(value: Any, source: str = "<prefs>") -> Columns:
    """The columns of a ``Preferences`` from a DataFrame (pandas or polars) with ``PREFERENCE_COLUMNS``, a
    dict of those columns, or rows (tuples in that order, or dicts with those keys); ids may be strings or
    integers, a level any real number but NaN. Every problem names the row."""
    library = type(value).__module__.split(".")[0]
    if library in ("pandas", "polars") and type(value).__name__ == "DataFrame":
        missing = [name for name in PREFERENCE_COLUMNS if name not in value.columns]
        if missing:
            raise InputFormatError(source, None, f"needs the columns {', '.join(PREFERENCE_COLUMNS)}; it has "
                                   f"{', '.join(map(str, value.columns))}")
        columns = [list(value[name].to_list() if library == "polars" else value[name].tolist())
                   for name in PREFERENCE_COLUMNS]
        rows: Iterable[Any] = zip(*columns, strict=True)
    elif isinstance(value, Mapping) and set(PREFERENCE_COLUMNS) <= set(value):
        rows = zip(*(value[name].tolist() if isinstance(value[name], np.ndarray) else list(value[name])
                     for name in PREFERENCE_COLUMNS), strict=True)  # numpy's numbers as Python's (named as such)
    elif isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping)):
        rows = value
    else:
        raise InputTypeError(f"preferences must be a DataFrame or a dict with the columns "
                             f"{', '.join(PREFERENCE_COLUMNS)}, or rows (query_id, group, subgroup, doc_id, level); "
                             f"got {type(value).__name__}")
    out: dict[str, list[Any]] = {name: [] for name in PREFERENCE_COLUMNS}
    for number, row in enumerate(rows, start=1):
        fields = [row.get(name) for name in PREFERENCE_COLUMNS] if isinstance(row, Mapping) else list(row)
        if len(fields) != len(PREFERENCE_COLUMNS):
            raise InputFormatError(source, None, f"row {number}: expected {len(PREFERENCE_COLUMNS)} values "
                                   f"({', '.join(PREFERENCE_COLUMNS)}), got {len(fields)}")
        for name, item in zip(_IDS, fields, strict=False):
            if isinstance(item, bool) or not isinstance(item, (str, int, np.integer)) or str(item) == "" \
                    or any(ch.isspace() for ch in str(item)):
                raise InputFormatError(source, None, f"row {number}: {name} must be a string or an integer "
                                       f"without whitespace, got {item!r}")
            out[name].append(str(item))
        level = fields[4]
        if isinstance(level, bool) or not isinstance(level, Real) or math.isnan(float(level)):
            raise InputFormatError(source, None, f"row {number}: level must be a number other than NaN, got {level!r}")
        out["level"].append(float(level))
    return {**{name: out[name] for name in _IDS}, "level": np.array(out["level"], dtype=np.float64)}


def _check_consistent(prefs: Preferences) -> None:
    """Refuse a document given two levels in one subgroup, and one called non-relevant (level 0) in one
    subgroup of a group and relevant (above 0) in another: trec_eval's format calls both an error (it
    finds them only while scoring, and only some of the time). Both rows are cited."""
    data = prefs.data
    levels: dict[tuple[str, str, str, str], tuple[float, int]] = {}
    sides: dict[tuple[str, str, str], dict[bool, int]] = {}
    for row, key in enumerate(zip(data["query_id"], data["group"], data["subgroup"], data["doc_id"], strict=True)):
        level = float(data["level"][row])
        seen = levels.setdefault(key, (level, row))
        if seen[0] != level:
            raise prefs.error(row, f"document {quote(key[3])} has two levels ({seen[0]:g} and {level:g}) in subgroup "
                              f"{quote(key[2])} of group {quote(key[1])}, query {quote(key[0])}", seen[1])
        if level >= 0:
            both = sides.setdefault((key[0], key[1], key[3]), {})
            both.setdefault(level == 0, row)
            if len(both) == 2:
                raise prefs.error(row, f"document {quote(key[3])} is non-relevant (level 0) in one subgroup of group "
                                  f"{quote(key[1])}, query {quote(key[0])}, and relevant (level above 0) in another",
                                  both[level != 0])
