"""JSON and JSONL read with the line of every top-level element, so errors can name it.

A document is an array (its items), an object (its keys) or JSONL (one value per non-blank line);
each top-level element becomes an ``Entry`` with its line and 1-based position. Constants that are
not JSON (NaN, Infinity) and a key repeated in one object are refused with the line; the decoder's
own errors keep its line and column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.sources import read_text
from trec_rag_eval.syntax import quote


@dataclass
class Entry:
    """One top-level element of a JSON document: a row of an array or JSONL file, or a key's value."""

    line: int | None
    position: int  # 1-based, in file order
    key: str | None
    value: Any
    label: str | None = None  # the query id once known, to name the row in errors

    def where(self) -> str:
        place = f"key {self.key!r}" if self.key is not None else f"item {self.position}"
        return f"{place} (query {self.label})" if self.label and self.label != self.key else place


@dataclass
class JsonDocument:
    path: str
    kind: str  # "array", "lines" or "object"
    entries: list[Entry] = field(default_factory=list)


class _BadConstant(ValueError):
    pass


class _BadNumber(ValueError):
    pass


MAX_INTEGER_DIGITS = 100
"""Longest integer read from JSON: beyond it no id, grade or score makes sense, and Python itself
refuses to read integers of more than 4300 digits (a ValueError in the middle of the decoder)."""
DEPTH_ERROR = "the JSON is nested too deeply (more than about 900 levels of arrays and objects)"
"""Nesting deeper than Python's recursion limit cannot be decoded; said with the line."""


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _BadNumber(text)
    return int(text)


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_constant(name: str) -> float:
    raise _BadConstant(name)


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_pairs_without_duplicates,
                            parse_int=_bounded_int)
_PLAIN_DECODER = json.JSONDecoder(parse_int=_bounded_int)
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _skip_whitespace(text: str, index: int) -> int:
    """The first index at or after ``index`` that is not JSON whitespace.

    The pattern matches the empty string, so ``match`` never returns None here."""
    return cast("re.Match[str]", _WHITESPACE.match(text, index)).end()


# a \uD800-\uDBFF escape not followed by a \uDC00-\uDFFF one, or the second kind alone (an even run of
# backslashes before them is escaped backslashes): Python decodes either into a string that no
# file, terminal or polars column can encode
_LONE_SURROGATE = re.compile(
    r"(?<!\\)(?:\\\\)*\\u(?:d[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})"
    r"|(?<!\\ud[89ab][0-9a-f]{2}\\u)d[c-f][0-9a-f]{2})",
    re.IGNORECASE,
)


def _check_surrogates(path: str, text: str) -> None:
    if "\\u" not in text:
        return
    found = _LONE_SURROGATE.search(text)
    if found is not None:
        escape = found.group(0).lstrip("\\")
        raise InputFormatError(path, _line_of(text, found.start()),
                               f"'\\{escape}' is half of a UTF-16 surrogate pair, not a character "
                               "(expected a \\uD800-\\uDBFF escape followed by a \\uDC00-\\uDFFF one)")


def parse_document(path: str) -> JsonDocument:
    text = read_text(path)
    _check_surrogates(path, text)
    start = _skip_whitespace(text, 0)
    if start == len(text):
        raise InputFormatError(path, None, "the file is empty (expected JSON or JSONL)")
    if text[start] == "[":
        return JsonDocument(path, "array", list(_scan_array(path, text, start)))
    if text[start] == "{":
        end = _skip_value(path, text, start)
        rest = _skip_whitespace(text, end)
        if rest == len(text):
            return JsonDocument(path, "object", list(_scan_object(path, text, start)))
        return JsonDocument(path, "lines", list(_scan_lines(path, text)))
    value, _ = _decode(path, text, start, _line_of(text, start), "the document")
    raise InputFormatError(
        path, _line_of(text, start), f"expected a JSON array or object, got {type(value).__name__}"
    )


def _number_error(text: str) -> str:
    return f"the number {quote(text, 20)} is out of range (integers have at most {MAX_INTEGER_DIGITS} digits here)"


def _json_error(path: str, err: json.JSONDecodeError) -> InputFormatError:
    return InputFormatError(path, err.lineno, f"invalid JSON at column {err.colno}: {err.msg}")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _decode(path: str, text: str, index: int, line: int, where: str | None) -> tuple[Any, int]:
    """The JSON value at ``index`` of ``text`` (the whole document, or one JSONL line when ``where``
    is None) and where it ends; errors name ``line`` and, when given, the element ``where``."""
    prefix = f"{where}: " if where is not None else ""
    try:
        return _DECODER.raw_decode(text, index)
    except json.JSONDecodeError as err:
        if where is None:  # the decoder counts lines within the JSONL line
            raise InputFormatError(path, line, f"invalid JSON at column {err.colno}: {err.msg}") from None
        raise _json_error(path, err) from None
    except RecursionError:
        raise InputFormatError(path, line, f"{prefix}{DEPTH_ERROR}") from None
    except _BadNumber as err:
        raise InputFormatError(path, line, f"{prefix}{_number_error(str(err))}") from None
    except _BadConstant as err:
        raise InputFormatError(path, line, f"{prefix}{err} is not valid JSON (scores must be finite numbers)") from None
    except _DuplicateKey as err:
        raise InputFormatError(path, line, f"{prefix}duplicate key {err.key!r} in one JSON object") from None


def _skip_value(path: str, text: str, index: int) -> int:
    """The end of the value at ``index``; checks of keys and constants are left to the scan."""
    try:
        return _PLAIN_DECODER.raw_decode(text, index)[1]
    except json.JSONDecodeError as err:
        raise _json_error(path, err) from None
    except RecursionError:
        raise InputFormatError(path, _line_of(text, index), DEPTH_ERROR) from None
    except _BadNumber as err:
        raise InputFormatError(path, _line_of(text, index), _number_error(str(err))) from None


class _LineCounter:
    """Line numbers of increasing offsets without rescanning the text."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def at(self, index: int) -> int:
        self.line += self.text.count("\n", self.offset, index)
        self.offset = index
        return self.line


def _expect(path: str, text: str, index: int, chars: str, what: str) -> int:
    index = _skip_whitespace(text, index)
    if index >= len(text) or text[index] not in chars:
        err = json.JSONDecodeError(f"Expecting {what}", text, index)
        raise _json_error(path, err)
    return index


def _scan_array(path: str, text: str, start: int) -> Iterator[Entry]:
    lines = _LineCounter(text)
    index = _skip_whitespace(text, start + 1)
    position = 0
    if index < len(text) and text[index] == "]":
        index += 1
    else:
        while True:
            position += 1
            index = _skip_whitespace(text, index)
            line = lines.at(index)
            value, index = _decode(path, text, index, line, f"item {position}")
            yield Entry(line, position, None, value)
            index = _expect(path, text, index, ",]", "',' delimiter")
            index += 1
            if text[index - 1] == "]":
                break
    _expect_end(path, text, index)


def _scan_object(path: str, text: str, start: int) -> Iterator[Entry]:
    lines = _LineCounter(text)
    index = _skip_whitespace(text, start + 1)
    position = 0
    seen: dict[str, int] = {}
    if index < len(text) and text[index] == "}":
        return
    while True:
        position += 1
        index = _expect(path, text, index, '"', "property name enclosed in double quotes")
        line = lines.at(index)
        key, index = _decode(path, text, index, line, f"item {position}")
        if key in seen:
            raise InputFormatError(path, line, f"duplicate key {key!r} (first at line {seen[key]})")
        seen[key] = line
        index = _expect(path, text, index, ":", "':' delimiter") + 1
        index = _skip_whitespace(text, index)
        value, index = _decode(path, text, index, line, f"key {key!r}")
        yield Entry(line, position, key, value)
        index = _expect(path, text, index, ",}", "',' delimiter") + 1
        if text[index - 1] == "}":
            break


def _expect_end(path: str, text: str, index: int) -> None:
    index = _skip_whitespace(text, index)
    if index != len(text):
        raise _json_error(path, json.JSONDecodeError("Extra data", text, index))


def _scan_lines(path: str, text: str) -> Iterator[Entry]:
    """JSONL: one JSON value per non-blank line; positions count rows, line numbers count lines."""
    position = 0
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        position += 1
        value, end = _decode(path, line, _skip_whitespace(line, 0), line_no, None)
        if line[end:].strip():
            raise InputFormatError(
                path,
                line_no,
                f"invalid JSON at column {end + 1}: extra data after the value "
                "(JSONL holds one value per line)",
            )
        yield Entry(line_no, position, None, value)
