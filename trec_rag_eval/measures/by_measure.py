"""Values keyed by measure name, found by any name of the measure (or the Measure itself)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any, TypeVar, overload

from trec_rag_eval.errors import TrecRagEvalError
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.value_equality import same_values

V = TypeVar("V")
T = TypeVar("T")


class ByMeasure(Mapping[str, V]):
    """A read-only mapping measure name -> value, in the order the measures were asked.

    Its keys are the names the results print (``"nDCG@10"``, ``"MAP"``), so ``dict(m)``, ``json.dumps``
    and DataFrames get plain strings. A lookup also accepts the ``Measure`` value or any other name of
    the same measure: ``m["AP"]``, ``m["map"]``, ``m["MAP"]`` and ``m[parse_measure("AP")]`` are one entry.
    Names that are not measures (``compare_values`` takes any) are matched exactly.
    """

    __slots__ = ("_values", "_by_measure", "_by_value")

    def __init__(self, items: Iterable[tuple[Measure | str, V]] = ()) -> None:
        self._values: dict[str, V] = {}
        self._by_measure: dict[Measure, str] = {}
        self._by_value: dict[Measure, str] | None = None
        for key, value in items:
            if isinstance(key, Measure):
                self._values[key.shown] = value
                self._by_measure.setdefault(key, key.shown)
                continue
            name = str(key)
            self._values[name] = value
            measure = _measure_of(key)
            if measure is not None:
                self._by_measure.setdefault(measure, name)

    @classmethod
    def of(cls, measures: Iterable[Measure], values: Mapping[Any, V]) -> ByMeasure[V]:
        """``values`` (keyed by ``Measure``) keyed by measure name, in the order of ``measures``, those without a
        value left out; already a ``ByMeasure``, ``values`` itself."""
        if isinstance(values, ByMeasure):
            return values
        made: ByMeasure[V] = cls()
        for m in measures:  # as __init__ takes Measure keys, without a pair made and its key's type asked each time
            if m in values:
                made._values[m.shown] = values[m]
                made._by_measure.setdefault(m, m.shown)
        return made

    def _name(self, key: object) -> str:
        if isinstance(key, str) and key in self._values:
            return key
        if isinstance(key, Measure) and key in self._by_measure:  # a result's own measure: nothing to parse
            return self._by_measure[key]
        measure = _measure_of(key)  # a Measure, another name of it, an ir_measures measure object
        if measure is not None and measure in self._by_measure:
            return self._by_measure[measure]
        if measure is not None:
            # one measure whatever text trec_eval's name keeps as typed: utility.2,-1,0,0 is
            # Utility(coefficients=(2,-1,0,0)); the table is made at the first lookup that needs it
            if self._by_value is None:
                self._by_value = {}
                for known, name in self._by_measure.items():
                    self._by_value.setdefault(replace(known, text=None), name)
            if replace(measure, text=None) in self._by_value:
                return self._by_value[replace(measure, text=None)]
        raise KeyError(key)

    def __getitem__(self, key: str | Measure) -> V:  # any name of the measure, or the Measure itself
        return self._values[self._name(key)]

    @overload
    def get(self, key: str | Measure, /) -> V | None: ...

    @overload
    def get(self, key: str | Measure, default: V | T, /) -> V | T: ...

    def get(self, key: str | Measure, default: Any = None, /) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        try:
            self._name(key)
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        """The same names, each with an equal value: a per-query array equal to an array of the same values, NaN
        to NaN (a dict compares arrays by their truth, which raises for more than one query)."""
        if not isinstance(other, Mapping):
            return NotImplemented
        theirs = dict(other)
        return self._values.keys() == theirs.keys() and all(
            same_values(value, theirs[name]) for name, value in self._values.items())

    __hash__ = None  # type: ignore[assignment]  # mutable contents (arrays), like a dict

    def __repr__(self) -> str:
        return repr(self._values)

    def measures(self) -> list[Measure]:
        """The Measure values behind the names (names that are not measures are left out)."""
        return list(self._by_measure)


def _measure_of(name: Any) -> Measure | None:
    """The measure a name (or Measure, or ir_measures object) means; None when it is not a measure."""
    from trec_rag_eval.measures.requests import parse_measure

    try:
        return parse_measure(name)
    except (TrecRagEvalError, TypeError):
        return None
