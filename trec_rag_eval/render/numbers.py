"""Number formats of the statistics (p-values, effect sizes, differences, levels). The values written to JSON
and CSV are ``number_formats.plain_number``'s and ``plain_data``'s; a measure's value or mean in a table is
``number_formats.format_number``'s, a coefficient's ``number_formats.format_magnitude``, a delta's
``number_formats.format_delta`` (the result types use them too, below this package); trec_eval's lines are
``render.trec``'s."""

from __future__ import annotations

import math


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
