"""The number formats of what a person reads, one per convention: ``format_number`` (a measure's value in
every table: the command's, the notebook's, a repr), ``format_delta`` (a comparison's delta),
``format_magnitude`` (a coefficient, a detectable delta) and ``format_precise`` (a cross-check's values); and
``short_repr``, the result types' short reprs, which use them; ``plain_number`` and ``plain_data``, a value
as JSON and CSV hold it (NaN and +-inf as None). Below ``render/``, since the result types use
them too; ``render.trec`` has trec_eval's formats, ``render.numbers`` the other statistics'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def format_number(value: Any, missing: str = "nan") -> str:
    """A number in a table a person reads: a float with 4 decimals (trec_eval's precision), NaN as
    ``missing`` (``nan``; a comparison's tables write ``-``, as for its other statistics), integers
    (counts) and text as they are."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return missing if math.isnan(value) else f"{value:.4f}"
    return str(value)


def format_delta(value: float) -> str:
    """Signed, three decimals: ``+0.043``, ``-0.100``."""
    if math.isnan(value):
        return "-"
    text = f"{value:+.3f}"
    return "+0.000" if text == "-0.000" else text


def format_magnitude(value: float | None, missing: str = "-") -> str:
    """Three decimals (a detectable delta, an agreement coefficient: kappa, alpha, tau), NaN or None as
    ``missing``; from a million on, three significant digits (``3.14e+06``: a detectable delta at a tiny alpha
    printed its 300 digits)."""
    if value is None or math.isnan(value):
        return missing
    return f"{value:.3f}" if abs(value) < 1e6 else f"{value:.3g}"


def format_needed(value: float) -> str:
    """A detectable delta a sentence says is needed: ``format_magnitude``'s, and an infinite one (no float
    noncentrality reaches the power) as ``a difference beyond the largest float``."""
    return "a difference beyond the largest float" if value == math.inf else format_magnitude(value)


def format_precise(value: float | None) -> str:
    """A cross-check's number: 6 decimals (it is about small differences), no value as ``n/a``."""
    return "n/a" if value is None else f"{value:.6f}"


def short_repr(kind: str, head: Sequence[str], values: Mapping[str, Any], limit: int = 6) -> str:
    """``Kind(head..., m1=0.1234, m2=..., +n more)``: a repr that stays short whatever the size."""
    shown = [f"{name}={format_number(value)}" for name, value in list(values.items())[:limit]]
    if len(values) > limit:
        shown.append(f"+{len(values) - limit} more")
    return f"{kind}({', '.join([*head, *shown])})"


def plain_number(value: Any) -> Any:
    """A value as JSON and CSV hold it, at full precision: a number as a Python float (json and csv write
    its shortest round-trip digits); NaN and +-inf as None (``null``, an empty CSV field), the one rule of every
    data format: JSON has neither (json.dumps would write ``NaN`` and ``Infinity``, which no strict reader takes),
    so the CSV beside it writes no ``inf`` either; text and None as they are."""
    if isinstance(value, str) or value is None:
        return value
    value = float(value)
    return value if math.isfinite(value) else None


def plain_data(value: Any) -> Any:
    """Nested dicts and lists with every number as ``plain_number`` writes it (NaN and +-inf as None), counts,
    flags, text and None as they are: a result's ``to_dict()`` as JSON can hold it."""
    if isinstance(value, dict):
        return {key: plain_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(item) for item in value]
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    return plain_number(value)
