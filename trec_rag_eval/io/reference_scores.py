"""Reference scores files, the numbers behind a published table that ``validate`` compares with ours.

Formats (detected from the content):

* trec_eval output, with or without ``-q``: ``name <TAB> query_id|all <TAB> value``;
* ir-measures output: ``query_id <TAB> measure <TAB> value`` (``-q``) or ``measure <TAB> value``;
* JSON: ``{measure: value}``, ``{query_id: {measure: value}}`` (pytrec_eval's shape, ``all`` for the
  aggregate), or trec-rag-eval's own ``--format json`` output (``summary`` and ``per_query``).

Each value keeps the precision it was printed with (``printed_tolerance``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.json.scanner import DEPTH_ERROR
from trec_rag_eval.io.sources import read_text
from trec_rag_eval.syntax import parse_real, quote, split_fields

SUMMARY = "all"


@dataclass(frozen=True)
class ReferenceValue:
    measure: str
    query_id: str
    value: float
    tolerance: float
    line: int | None


def printed_tolerance(text: str) -> float:
    """Half a unit of the last printed digit: '0.1234' -> 5e-5, '561' -> 0.5, '1e-05' -> 5e-6."""
    try:
        exponent = Decimal(text.strip()).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    if not isinstance(exponent, int):
        return 0.0
    try:
        return 0.5 * 10.0 ** exponent + 1e-12
    except OverflowError:  # '1e400': a value that big allows any difference
        return math.inf


def _number(text: str, path: str, line_no: int | None, line: str) -> float:
    try:
        return parse_real(text)  # C's syntax, as trec_eval prints (and ir-measures' Python floats)
    except ValueError:
        raise InputFormatError(path, line_no, f"expected a number, got {quote(text)}", line) from None


def read_reference(path: str, is_measure: Callable[[str], bool]) -> tuple[str, list[ReferenceValue]]:
    """Read a reference scores file; returns (format name, values). ``is_measure`` tells a measure name
    from a query id, for a three-column file with no ``all`` row to say which column is which."""
    text = read_text(path)
    if text.lstrip().startswith(("{", "[")):
        return "json", _read_json(path, text)
    rows = [(i, line, split_fields(line)) for i, line in enumerate(_lines(text), 1) if split_fields(line)]
    if not rows:
        raise InputFormatError(path, None, "no scores in the reference file")
    widths = {len(parts) for _, _, parts in rows}
    if widths == {2}:
        return "ir-measures", [ReferenceValue(p[0], SUMMARY, _number(p[1], path, i, line), printed_tolerance(p[1]), i)
                               for i, line, p in rows]
    for i, line, parts in rows:
        if len(parts) != 3:
            raise InputFormatError(path, i, f"expected 3 columns (measure query value or query measure value), "
                                            f"got {len(parts)}", line)
    # trec_eval puts the query (or 'all') second; ir-measures puts it first
    if any(p[1] == SUMMARY for _, _, p in rows):
        trec_style = True
    elif any(p[0] == SUMMARY for _, _, p in rows):
        trec_style = False
    else:
        trec_style = is_measure(rows[0][2][0])
    out = []
    for i, line, parts in rows:
        name, query_id, value = (parts[0], parts[1], parts[2]) if trec_style else (parts[1], parts[0], parts[2])
        if name == "runid" or value.startswith("'") and value.endswith("'"):
            # trec_eval's text values: the run tag, and relstring's (relstring_3 too), which it quotes
            continue
        out.append(ReferenceValue(name, query_id, _number(value, path, i, line), printed_tolerance(value), i))
    return ("trec_eval" if trec_style else "ir-measures"), out


def _lines(text: str) -> list[str]:
    """Lines end at '\\n' (a trailing '\\r' dropped), as in the TREC readers."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _read_json(path: str, text: str) -> list[ReferenceValue]:
    # keep each number's printed text, so the tolerance follows the digits the file shows
    try:
        data = json.loads(text, parse_float=lambda s: ("float", s), parse_int=lambda s: ("float", s))
    except json.JSONDecodeError as err:
        raise InputFormatError(path, err.lineno, f"invalid JSON: {err.msg}") from None
    except RecursionError:
        raise InputFormatError(path, None, DEPTH_ERROR) from None
    if isinstance(data, list):
        if len(data) != 1:
            raise InputFormatError(path, None, "the JSON holds several runs; validate one run at a time")
        data = data[0]
    if not isinstance(data, dict):
        raise InputFormatError(path, None, "expected a JSON object of scores")
    out: list[ReferenceValue] = []

    def add(measure: str, query_id: str, value: Any) -> None:
        if isinstance(value, tuple):
            out.append(ReferenceValue(measure, query_id, float(value[1]), printed_tolerance(value[1]), None))

    if "summary" in data and isinstance(data["summary"], dict):  # trec-rag-eval --format json
        for measure, value in data["summary"].items():
            add(measure, SUMMARY, value)
        for query_id, values in (data.get("per_query") or {}).items():
            for measure, value in values.items():
                add(measure, query_id, value)
        return out
    for key, value in data.items():
        if isinstance(value, dict):
            for measure, number in value.items():
                add(measure, key, number)
        else:
            add(key, SUMMARY, value)
    return out
