"""The settings of one evaluation, as one value instead of a keyword list repeated in every caller; and what they
do not change for preference judgments (``judgment_notes``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from numbers import Integral
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import InputTypeError, UsageError
from trec_rag_eval.notes import Note, note
from trec_rag_eval.syntax import INT64, RELEVANCE_RANGE, is_number

if TYPE_CHECKING:
    from trec_rag_eval.tables import Qrels
    from trec_rag_eval.tables.judgment_kinds import Preferences

QUERY_SETS = ("qrels", "intersection")
"""Which queries count: every qrels query (trec_eval 10 and ``-c``), or only those in both qrels and
run (trec_eval 9 without ``-c``, pytrec_eval)."""


@dataclass(frozen=True)
class Settings:
    """How a run is evaluated; every field has trec_eval's default.

    ``relevance_level`` (trec_eval ``-l``): a judgment >= it is relevant. ``judged_only`` (``-J``):
    retrieved documents without a judgment are dropped before ranking. ``max_retrieved`` (``-M``):
    only the first n documents of each query count. ``queries``: one of ``QUERY_SETS``.
    ``trec_eval_9``: trec_eval 9.0.x / pytrec_eval conventions (float32 scores, iprec at
    floor(p*R + 0.9)). ``complete`` (``-c``): num_rel's total recounted over the whole qrels.
    ``num_docs`` (``-N``): the collection size, used by utility only. ``leftovers``: reproduce what
    trec_eval 10 prints for a qrels query missing from the run under ``-c``, byte for byte: its dummy
    ranking left in parameterised utility, relstring and rbp_resid, NaN iprec_at_recall and
    11pt_avg under ``-J`` (``--format trec -c`` sets it); otherwise such a query scores 0 throughout.
    """

    relevance_level: int = 1
    judged_only: bool = False
    max_retrieved: int | None = None
    queries: str = "qrels"
    trec_eval_9: bool = False
    complete: bool = False
    num_docs: int = 0
    leftovers: bool = False

    def __post_init__(self) -> None:
        # types first: '2' would fail a comparison with a TypeError, 2.5 would silently count as 3,
        # and 'no' as a flag would silently be true
        for name in ("relevance_level", "max_retrieved", "num_docs"):
            value = getattr(self, name)
            if value is None and name == "max_retrieved":
                continue
            if not is_number(value, Integral):
                kind = "an integer or None" if name == "max_retrieved" else "an integer"
                raise UsageError(f"{name} must be {kind}, got {value!r}")
            object.__setattr__(self, name, int(value))  # numpy integers become ints
        for name in ("judged_only", "trec_eval_9", "complete", "leftovers"):
            value = getattr(self, name)
            if type(value).__name__ not in ("bool", "bool_"):  # numpy's bool_ too
                raise UsageError(f"{name} must be True or False, got {value!r}")
            object.__setattr__(self, name, bool(value))
        if not isinstance(self.queries, str) or self.queries not in QUERY_SETS:
            raise UsageError(f"queries must be 'qrels' or 'intersection', got {self.queries!r}")
        if self.max_retrieved is not None and not 0 <= self.max_retrieved <= INT64[1]:
            raise UsageError(f"max_retrieved must be from 0 to {INT64[1]}, got {self.max_retrieved}")
        if not 0 <= self.relevance_level <= RELEVANCE_RANGE[1]:
            # trec_eval -l -1 counts unjudged documents relevant in P and map but not in num_rel_ret
            raise UsageError(f"relevance_level must be from 0 to {RELEVANCE_RANGE[1]} (a negative level would "
                             f"make unjudged documents relevant), got {self.relevance_level}")
        if not INT64[0] <= self.num_docs <= INT64[1]:
            raise UsageError(f"num_docs must be from {INT64[0]} to {INT64[1]}, got {self.num_docs}")
        if self.complete and self.queries == "intersection":
            raise UsageError("complete=True and queries='intersection' contradict each other",
                             {"complete=True": "complete", "queries='intersection'": "intersection"})

    def but(self, **changes: Any) -> Settings:
        """A copy with some fields changed (checked like a new value)."""
        return replace(self, **changes) if changes else self


FIELDS = tuple(f.name for f in fields(Settings))
DEFAULT = Settings()
"""trec_eval's settings, made once (a value: frozen)."""


def settings_of(settings: Settings | Mapping[str, Any] | None = None, **overrides: Any) -> Settings:
    """``settings`` (default: trec_eval's) with ``overrides`` applied: the form every function that
    evaluates takes, so a caller can pass a ``Settings`` (or a dict of its fields) or its fields as
    keywords."""
    if isinstance(settings, Mapping):
        overrides = {**settings, **overrides}
        settings = None
    elif settings is not None and not isinstance(settings, Settings):
        raise InputTypeError(f"settings must be a Settings or a dict of its fields, got {type(settings).__name__}",
                             {"settings": "settings"})
    unknown = sorted(set(overrides) - set(FIELDS))
    if unknown:  # an unknown keyword: Python's TypeError, as a function's own signature would raise
        raise TypeError(f"unknown evaluation setting {unknown[0]!r}; expected one of {', '.join(FIELDS)}")
    return (settings or DEFAULT).but(**overrides)


def judgment_notes(judgments: Qrels | Preferences, settings: Settings) -> list[Note]:
    """What the settings do not change for these judgments: the preference measures read levels, not relevance,
    and no preference document is dropped (trec_eval ignores -J and -l there)."""
    if judgments.kind != "preferences":
        return []
    unused = [text for text, given in (("judged_only=True", settings.judged_only),
                                      (f"relevance_level={settings.relevance_level}", settings.relevance_level != 1))
              if given]
    if not unused:
        return []
    return [note(f"{' and '.join(unused)} change{'s' if len(unused) == 1 else ''} nothing for preference judgments "
                 "(their levels order the documents; every retrieved document is ranked)",
                 parameters={"judged_only=True": "judged_only", f"relevance_level={settings.relevance_level}":
                             "relevance_level"})]
