"""Numbers as text a column at a time: per-query output (``-q``) of every format is built from these.

A ``-q -m all_trec`` evaluation of 7,000 queries prints ~670,000 values: formatting them one Python call
at a time took seconds. Here each column of values becomes a polars string column in one pass, with
exactly the bytes Python's (and C's) formatting gives: ``fixed`` is ``"%.4f" % value``, ``shortest`` is
``repr(value)`` (what ``json`` and ``csv`` write). The few values the fast path could get wrong (a
decimal tie such as 0.03125, magnitudes past its exact range, non-finite values) are formatted by
Python itself, so the result never depends on the path taken.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence

import numpy as np
import polars as pl

from trec_rag_eval.tables.arrow import fixed_width_strings, polars_numbers

_FIXED_LIMIT = 1e9  # |value| * 10^decimals below this: the product is off by < 2e-7, far from a tie
_TIE_MARGIN = 1e-6  # a fraction this close to .5 is decided by Python's exact formatting instead


def fixed(values: np.ndarray, decimals: int = 4, nan: str = "nan", width: int = 0) -> pl.Series:
    """``"%{width}.{decimals}f" % v`` for every value (a string Series, padded on the left with spaces to
    ``width`` characters); NaN as ``nan`` (padded too).

    The digits come from the integer ``round(|v| * 10^decimals)``, which is the correctly rounded
    decimal unless the product lands next to a half (a tie of the decimal value, decided by
    round-half-even on the exact binary value, as printf does): those values, the very large ones and
    +-inf are formatted by Python, whose ``%f`` is exact. Most measures lie in [0, 10): their text is
    looked up by that integer in a table of every such text (one gather), the rest are built digit by
    digit."""
    values = np.asarray(values, dtype=np.float64)
    scale = 10.0 ** decimals
    magnitude = np.abs(values)
    fast = np.isfinite(values) & (magnitude * scale < _FIXED_LIMIT)
    scaled = np.where(fast, magnitude * scale, 0.0)
    rounded = np.floor(scaled + 0.5)
    fast &= np.abs(scaled - np.floor(scaled) - 0.5) > _TIE_MARGIN
    digits = rounded.astype(np.int64)
    if decimals > _LOOKUP_MAX_DECIMALS:
        return _padded(_built(values, digits, fast, decimals, nan), width)
    looked_up = fast & ~np.signbit(values) & (digits < 10 ** (decimals + 1))
    text = _one_digit_texts(decimals).gather(polars_numbers(np.where(looked_up, digits, 0)))
    if width > decimals + 2 - (decimals == 0):  # wider than the table's texts ("d.dddd", or "d")
        text = _padded(text, width)
    rest = np.flatnonzero(~looked_up)
    if len(rest):
        built = _built(values[rest], digits[rest], fast[rest], decimals, nan)
        text = text.scatter(polars_numbers(rest), _padded(built, width))
    return text


def _padded(text: pl.Series, width: int) -> pl.Series:
    return text.str.pad_start(width) if width else text


_LOOKUP_MAX_DECIMALS = 4  # the table holds 10^(decimals + 1) texts: 100,000 at 4 decimals


@functools.cache
def _one_digit_texts(decimals: int) -> pl.Series:
    """Every ``"%.{decimals}f"`` text of [0, 10) at that precision, the i-th that of ``i / 10^decimals``:
    written as bytes by numpy, a fixed width each, and handed to polars through Arrow (``d.dddd``: the
    100,000 texts in ~3 ms, against ~9 ms with polars' string kernels, paid by the first -q output of a
    process)."""
    count = 10 ** (decimals + 1)
    digits = np.arange(ord("0"), ord("9") + 1, dtype=np.uint8)
    text = np.empty((count, decimals + 2 if decimals else 1), dtype=np.uint8)
    text[:, 0] = np.repeat(digits, 10 ** decimals)  # the units: 0 for the first tenth of the texts, ...
    if decimals:
        text[:, 1] = ord(".")
    for place in range(decimals):  # each fraction digit: runs of 10^(places after it), all ten in turn
        text[:, 2 + place] = np.tile(np.repeat(digits, 10 ** (decimals - 1 - place)), 10 ** (place + 1))
    return fixed_width_strings(text)


def _built(values: np.ndarray, digits: np.ndarray, fast: np.ndarray, decimals: int, nan: str) -> pl.Series:
    """The text of each value from its digits (``round(|v| * 10^decimals)``) where ``fast``, by Python's
    ``%f`` elsewhere; the sign from the value."""
    unit = 10 ** decimals
    digit_series = polars_numbers(np.where(fast, digits, 0))
    negative = polars_numbers(np.signbit(values).view(np.uint8)) == 1
    sign = pl.when(negative).then(pl.lit("-")).otherwise(pl.lit(""))
    parts: list[pl.Series | pl.Expr] = [sign, (digit_series // unit).cast(pl.String)]
    if decimals:
        parts += [pl.lit("."), (digit_series % unit).cast(pl.String).str.zfill(decimals)]
    text = pl.select(pl.concat_str(parts)).to_series()
    slow = np.flatnonzero(~fast)
    if len(slow):
        pattern = f"%.{decimals}f"
        exact = [nan if v != v else pattern % v for v in values[slow].tolist()]
        text = text.scatter(polars_numbers(slow), pl.Series(exact, dtype=pl.String))
    return text


def shortest(values: np.ndarray) -> pl.Series:
    """``repr(v)`` of every value (``json``'s and ``csv``'s float text); NaN as null.

    polars writes the same shortest round-trip digits as Python for 1e-4 <= |v| < 1e16 (Python then
    writes no exponent, and neither does polars); the rest, zeros aside, are written by Python."""
    values = np.asarray(values, dtype=np.float64)
    magnitude = np.abs(values)
    fast = ((magnitude >= 1e-4) & (magnitude < 1e16)) | (values == 0)
    text = polars_numbers(values).cast(pl.String)
    slow = np.flatnonzero(~fast)
    if len(slow):
        exact = [None if v != v else repr(v) for v in values[slow].tolist()]
        text = text.scatter(polars_numbers(slow), pl.Series(exact, dtype=pl.String))
    return text


def integers(values: np.ndarray) -> pl.Series:
    """``str(int(v))`` of every value (counts are kept as floats)."""
    return polars_numbers(np.asarray(values, dtype=np.float64).astype(np.int64)).cast(pl.String)


def strings(values: Sequence[str]) -> pl.Series:
    return pl.Series(list(values), dtype=pl.String)


def interleave(columns: list[pl.Series]) -> pl.Series:
    """One Series of the columns' items row by row: a0, b0, c0, a1, b1, c1, ... (all of one length)."""
    if not columns:
        return pl.Series([], dtype=pl.String)
    rows = len(columns[0])
    order = (np.arange(len(columns), dtype=np.int64)[None, :] * rows
             + np.arange(rows, dtype=np.int64)[:, None]).ravel()
    return pl.concat(columns, rechunk=True).gather(polars_numbers(order))


def repeat_each(items: Sequence[str] | pl.Series, times: int) -> pl.Series:
    """Each item ``times`` times in a row: a, a, b, b, ..."""
    return _series(items).gather(polars_numbers(np.repeat(np.arange(len(items), dtype=np.int64), times)))


def cycle(items: Sequence[str] | pl.Series, times: int) -> pl.Series:
    """The items ``times`` times over: a, b, a, b, ..."""
    return _series(items).gather(polars_numbers(np.tile(np.arange(len(items), dtype=np.int64), times)))


def _series(items: Sequence[str] | pl.Series) -> pl.Series:
    return items if isinstance(items, pl.Series) else pl.Series(list(items), dtype=pl.String)


def separated(parts: list[pl.Series], separator: str = "\t", line_end: str = "\n") -> str:
    """The parts' items row by row, separated by ``separator`` (one character), each row ended by
    ``line_end``, as one string: ``joined`` with the separator between parts, written by polars' CSV writer
    with no quoting (the items are written as they are), which takes about half the time of building each
    line and holds no column of whole lines."""
    if not parts or len(parts[0]) == 0:
        return ""
    buffer = io.BytesIO()
    frame = pl.DataFrame({f"c{i}": part for i, part in enumerate(parts)})
    frame.write_csv(buffer, separator=separator, include_header=False, quote_style="never", line_terminator=line_end)
    return buffer.getvalue().decode("utf-8")


def joined(parts: list[pl.Series | pl.Expr], line_end: str = "\n") -> str:
    """The row-wise concatenation of the parts, each row ended by ``line_end``, as one string."""
    if not parts or (isinstance(parts[0], pl.Series) and len(parts[0]) == 0):
        return ""
    return pl.select(pl.concat_str([*parts, pl.lit(line_end)]).str.join("")).item()
