"""``Run.from_dict``'s dicts read row by row: ids of other kinds than strings (their ``str()``), bool scores, NaN
scores kept; and such a dict as ``Run(dict)`` reads it, so that what it refuses is said in evaluate's words."""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any


def scored_rows(scores: Mapping[Any, Any]) -> list[tuple[str, str, float]] | None:
    """``Run.from_dict``'s rows, read one by one (ids their ``str()``, a bool score a number, a NaN kept), or None when
    one is not what evaluate takes: an inner value no dict, a score no number (or beyond a double), an empty id, a
    query or a pair given twice once the ids are strings (``1`` and ``"1"``)."""
    rows: list[tuple[str, str, float]] = []
    try:
        for query_id, docs in scores.items():
            for doc_id, score in docs.items():
                if not isinstance(score, Real):  # "1.5" is no number, though float() reads it
                    return None
                rows.append((str(query_id), str(doc_id), float(score)))
    except (AttributeError, TypeError, ValueError, OverflowError):
        return None
    if (any(not q or not d for q, d, _ in rows) or len({str(q) for q in scores}) < len(scores)
            or len({(q, d) for q, d, _ in rows}) < len(rows)):
        return None
    return rows


def as_evaluate_reads(scores: Mapping[Any, Any], nan: float | None = None) -> dict[Any, Any]:
    """``scores`` as ``Run(dict)`` reads them, for its words: an id other than a string or an integer made its
    ``str()`` (as ``Run.from_dict`` makes it), a bool score a number, and a NaN score ``nan`` when given."""
    def key(value: Any) -> Any:
        return value if isinstance(value, (str, Integral)) and not isinstance(value, bool) else str(value)

    def number(value: Any) -> Any:
        if isinstance(value, bool):
            return float(value)
        return nan if nan is not None and isinstance(value, Real) and value != value else value

    return {key(q): {key(d): number(s) for d, s in docs.items()} if isinstance(docs, Mapping) else docs
            for q, docs in scores.items()}
