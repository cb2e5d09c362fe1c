"""The means and standard deviations trec_eval's ``-Z`` reads: ``query_id measure mean stddev`` a line.

``measure`` is the name trec_eval prints (``P_10``, ``iprec_at_recall_0.50``, ``map``). Lines are read as the
TREC readers read theirs (any whitespace, CRLF, gzip; blank lines and ``#`` comment lines skipped). Mean and
standard deviation are numbers as C's ``strtod`` reads a whole field (trec_eval's ``atof`` also reads
``3abc`` as 3 and anything else as 0: refused here). A (query, measure) given twice is refused, with both
lines: trec_eval's binary search would find either.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.sources import check_file, iter_lines
from trec_rag_eval.syntax import parse_real, quote, separator_hint, split_fields

ZSCORE_COLUMNS = "query_id measure mean stddev"


@dataclass(frozen=True)
class ZScores:
    """``stats[(query_id, measure)] = (mean, standard deviation)``, from ``source``."""

    stats: dict[tuple[str, str], tuple[float, float]]
    source: str = "<zscores>"


def read_zscores(path: str | os.PathLike[str]) -> ZScores:
    """Read a z-scores file (see the module docstring)."""
    name = os.fspath(path)
    check_file(name)
    stats: dict[tuple[str, str], tuple[float, float]] = {}
    lines: dict[tuple[str, str], int] = {}
    for line_no, text in iter_lines(name):
        fields = split_fields(text)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise InputFormatError(name, line_no, f"expected 4 columns ({ZSCORE_COLUMNS}), got {len(fields)}"
                                   f"{separator_hint(text)}", text)
        numbers = []
        for label, field in (("mean", fields[2]), ("standard deviation", fields[3])):
            try:
                value = parse_real(field)
            except ValueError:
                raise InputFormatError(name, line_no, f"{label} must be a number, got {quote(field)}", text) from None
            if math.isnan(value):
                raise InputFormatError(name, line_no, f"{label} is NaN", text)
            numbers.append(value)
        key = (fields[0], fields[1])
        if key in lines:
            raise InputFormatError(name, line_no, f"measure {quote(key[1])} of query {quote(key[0])} given twice "
                                   f"(first at line {lines[key]})", text)
        lines[key] = line_no
        stats[key] = (numbers[0], numbers[1])
    if not stats:
        raise InputFormatError(name, None, f"no means found, expected lines of {ZSCORE_COLUMNS}")
    return ZScores(stats, name)
