"""Number formats of the statistics (p-values, effect sizes, differences, levels) and of the values written
to JSON and CSV. A measure's value or mean in a table is ``number_formats.format_number``'s, a
coefficient's ``number_formats.format_magnitude``, a delta's ``number_formats.format_delta`` (the result types
use them too, below this package); trec_eval's lines are ``render.trec``'s."""

from __future__ import annotations

import math
from typing import Any


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


def format_difference(value: float) -> str:
    """A signed difference of two means, with their 4 decimals: ``+0.0430``."""
    return f"{value:+.4f}"


def format_p(value: float) -> str:
    """``0.003``, ``0.410``, ``< 0.001``: three decimals, so 0.049 and 0.051 never print alike."""
    if math.isnan(value):
        return "-"
    if value < 0.001:
        return "< 0.001"
    return f"{value:.3f}"


def p_phrase(value: float, missing: str = "= -") -> str:
    """``p = 0.003`` or ``p < 0.001``; no p-value: ``p`` then ``missing`` (a comparison's ``p = -``, all
    pairs' ``p n/a``)."""
    if math.isnan(value):
        return f"p {missing}"
    text = format_p(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def format_effect(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:+.2f}"


def format_percent(value: float) -> str:
    return f"{value * 100:g}%"


def format_plain(value: float) -> str:
    return f"{value:g}"
