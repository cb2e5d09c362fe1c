"""Number formats shared by every rendering of a comparison: fixed digits, signs, p-values."""

from __future__ import annotations

import math


def format_value(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"


def format_delta(value: float) -> str:
    """Signed, three decimals: ``+0.043``, ``-0.100``."""
    if math.isnan(value):
        return "-"
    text = f"{value:+.3f}"
    return "+0.000" if text == "-0.000" else text


def format_magnitude(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.3f}"


def format_p(value: float) -> str:
    """``0.003``, ``0.410``, ``< 0.001``: three decimals, so 0.049 and 0.051 never print alike."""
    if math.isnan(value):
        return "-"
    if value < 0.001:
        return "< 0.001"
    return f"{value:.3f}"


def p_phrase(value: float) -> str:
    """``p = 0.003`` or ``p < 0.001``."""
    text = format_p(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def format_effect(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:+.2f}"


def format_percent(value: float) -> str:
    return f"{value * 100:g}%"


def format_plain(value: float) -> str:
    return f"{value:g}"
