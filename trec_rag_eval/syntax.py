"""The one text syntax of fields and numbers, for every reader (TREC text, JSON) and every option.

trec_eval reads its files with C: fields are separated by what C's ``isspace`` accepts in the "C"
locale (space, tab, CR, VT, FF; the newline ends the line), numbers are what ``strtod`` (scores,
real parameters) and ``atol`` (relevance, cutoffs) accept. Python's own ``str.split()``, ``float()``
and ``int()`` accept more: Unicode spaces (NBSP, U+2003, U+3000, U+0085, U+2028) and the ASCII
separators \\x1c-\\x1f split a field, ``1_000`` is a thousand and ``１２`` or ``٩٩`` are numbers. Taking
Python's rules would read another file than trec_eval does, in silence; so every reader splits and
converts through this module, ASCII only.

A whole field must be a number (trec_eval would read ``3x`` as 3 and ``abc`` as 0; we refuse
both, naming the file and the line). Integers are bounded, and the error says the range.
"""

from __future__ import annotations

import math
import re
import unicodedata
from numbers import Real

FIELD_SEPARATORS = " \t\r\x0b\x0c"
"""C's ``isspace`` without the newline: what separates two fields of a TREC line."""

_FIELD = re.compile(r"[^ \t\r\x0b\x0c]+")
_DECIMAL = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_HEX = r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
_SPECIAL = r"[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?"
_REAL = re.compile(rf"([+-]?)(?:({_HEX})|({_DECIMAL})|({_SPECIAL}))", re.ASCII)
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_C_SPACE = re.compile(r"[ \t\n\r\x0b\x0c]*")

INT64 = (-(2**63), 2**63 - 1)
INT32 = (-(2**31), 2**31 - 1)
RELEVANCE_RANGE = INT32
"""Relevance grades are C ints here: sums of millions of them stay exact in a float64."""


def is_number(value: object, kind: type = Real) -> bool:
    """Whether a parameter given from Python is a number of ``kind`` (``numbers.Integral`` or
    ``numbers.Real``; numpy's scalars are), and not a bool: the check before a range check, so
    ``"0.05"`` is named as the wrong value instead of failing a comparison."""
    return isinstance(value, kind) and not isinstance(value, bool)


def split_fields(line: str) -> list[str]:
    """The fields of one line (without its newline), split at runs of ``FIELD_SEPARATORS``.

    Any other character, Unicode whitespace included, belongs to the field, as in trec_eval.
    """
    return _FIELD.findall(line)


def _convert(match: re.Match[str]) -> float:
    sign, hexadecimal, decimal, special = match.groups()
    if hexadecimal:
        try:
            value = float.fromhex(hexadecimal)
        except OverflowError:  # strtod gives HUGE_VAL on overflow
            value = math.inf
    elif decimal:
        value = float(decimal)  # ASCII digits only, checked by the pattern: Python reads them as C does
    else:
        value = math.nan if special[0] in "nN" else math.inf
    return -value if sign == "-" else value


def parse_real(text: str) -> float:
    """A whole field as C ``strtod`` reads it: decimal or hex, ``inf``/``infinity``/``nan``, any
    case, an optional sign; ASCII only. Out of range gives +-inf or 0, as ``strtod`` does.

    Raises ``ValueError`` for anything else (the caller names the file and the line)."""
    match = _REAL.fullmatch(text)
    if match is None:
        raise ValueError(f"not a number: {quote(text)}")
    return _convert(match)


class OutOfRangeError(ValueError):
    """An integer written correctly but outside the bounds asked for."""


def parse_integer(text: str, bounds: tuple[int, int] = INT64) -> int:
    """A whole field of ASCII digits with an optional sign, within ``bounds`` (inclusive).

    Raises ``ValueError`` for anything else, ``OutOfRangeError`` (a ``ValueError``) when only the
    range is wrong; the message says which."""
    if _INTEGER.fullmatch(text) is None:
        raise ValueError(f"not an integer: {quote(text)}")
    value = int(text)
    low, high = bounds
    if not low <= value <= high:
        raise OutOfRangeError(f"{quote(text)} is out of range ({low} to {high})")
    return value


def atol_prefix(text: str) -> int:
    """C ``atol``, as trec_eval reads integer measure parameters: leading spaces, a sign, ASCII
    digits, the rest ignored; no digits gives 0; beyond a 64-bit long it saturates, as glibc does."""
    start = _C_SPACE.match(text).end()  # type: ignore[union-attr]  # matches the empty string
    match = _INTEGER.match(text, start)
    if match is None:
        return 0
    low, high = INT64
    return min(max(int(match.group()), low), high)


def atof_prefix(text: str) -> float:
    """C ``atof``, as trec_eval reads real measure parameters: the longest ``strtod`` prefix after
    leading spaces; none gives 0.0."""
    start = _C_SPACE.match(text).end()  # type: ignore[union-attr]  # matches the empty string
    match = _REAL.match(text, start)
    return 0.0 if match is None else _convert(match)


_NOT_A_SEPARATOR = re.compile(r"[^\S \t\r\x0b\x0c\n]")  # whitespace to Python, not to C


def separator_hint(line: str) -> str:
    """For a line with the wrong number of fields: when it holds whitespace that is not a field
    separator (a no-break space, U+3000, \\x1c...), a note naming it, since it looks like one."""
    found = _NOT_A_SEPARATOR.search(line)
    if found is None:
        return ""
    char = found.group()
    name = unicodedata.name(char, "control character").lower()
    return (f" (the {name} U+{ord(char):04X} is part of a field, not a separator: fields are separated by "
            "spaces or tabs)")


QUOTE_LIMIT = 80
"""Longest piece of user text quoted whole in a message; longer text is cut and its length told."""


def shown_value(value: object) -> str:
    """``repr(value)`` cut to 60 characters, for a value quoted in an error (``10**400`` has 401 digits)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``repr(text)``, cut to about ``limit`` characters with its length said when it is longer, so a
    1 MB id or a 100,000-character option never floods the terminal."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"
