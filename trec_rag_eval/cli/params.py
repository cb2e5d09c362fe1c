"""Click types for numeric options: the package's one number syntax (``syntax``), bounded.

click's own ``int`` and ``float`` are Python's: they take ``1_000``, ``１２``, `` 7 `` and ``nan``, and
hand a 20-digit -M to numpy, which overflows. These take what C takes, ASCII only, and refuse a
value out of range with a usage error (exit 2) that gives the range.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import click

from trec_rag_eval.syntax import INT32, INT64, OutOfRangeError, parse_integer, parse_real, quote


class Integer(click.ParamType):
    """A whole number in ``[low, high]``; ``why`` (optional) explains the lower bound."""

    name = "integer"

    def __init__(self, low: int = INT64[0], high: int = INT64[1], why: str | None = None) -> None:
        self.low, self.high, self.why = low, high, why

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if type(value) is int and self.low <= value <= self.high:  # a default: a number already, within range
            return value
        text = str(value)  # out of range, its text is refused below as the user's would be
        try:
            return parse_integer(text, (self.low, self.high))
        except OutOfRangeError:
            reason = f" ({self.why})" if self.why and int(text) < self.low else ""
            self.fail(f"{quote(text)} is out of range: from {self.low} to {self.high}{reason}", param, ctx)
        except ValueError:
            self.fail(f"{quote(text)} is not a whole number (ASCII digits, optional sign)", param, ctx)


class Real(click.ParamType):
    """A finite number (C ``strtod`` syntax) in ``[low, high]``, or ``(low, high)`` with ``open``."""

    name = "number"

    def __init__(self, low: float = -math.inf, high: float = math.inf, open: bool = False) -> None:
        self.low, self.high, self.open = low, high, open

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        text = str(value)
        try:
            number = float(value) if isinstance(value, (int, float)) else parse_real(text)
        except ValueError:
            self.fail(f"{quote(text)} is not a number", param, ctx)
        inside = self.low < number < self.high if self.open else self.low <= number <= self.high
        if not math.isfinite(number) or not inside:
            left, right = ("(", ")") if self.open else ("[", "]")
            self.fail(f"{quote(text)} must be a finite number in {left}{self.low:g}, {self.high:g}{right}", param, ctx)
        return number


LEVEL = Integer(0, INT32[1], "a negative level would make unjudged documents relevant")
"""-l: judgments >= LEVEL are relevant; negative judgments mean "in the pool, not judged"."""
COUNT = Integer(0, INT64[1])
"""-M, -N: a number of documents."""
SEED = Integer(0, 2**64 - 1)
"""A seed of numpy's generators, which take non-negative integers."""
PROBABILITY = Real(0.0, 1.0, open=True)
"""alpha, confidence: strictly between 0 and 1."""


class InputPath(click.Path):
    """An input file (or folder, with ``dir_okay``) named on the command line: a local path, a URL (``s3://...``,
    ``file://...``: ``io.sources``) or, with ``allow_dash``, ``-`` (standard input).

    With ``exists``, a local path is checked here, before any work, by the library (``api.check_input``): a file
    missing, unreadable, or a folder where a file is needed is the error its reader would give when reading it
    (``Error: NAME: no such file``, exit 1), one line, whatever the command and the argument. click's own check
    (``Path(exists=True)``) would say it in its words, under the usage screen, exit 2: it is not used. Without
    ``exists``, the reader says it when it comes to it (evaluate's runs: each is printed as it is read). A URL is
    handed on as it is: it is read where it lies, and its reader says when it is missing."""

    local_only = False
    """A URL refused, as a mistake of the command line (click's usage error): the argument reads local files."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not self.exists and not self.local_only:  # its reader says all (evaluate's QRELS and RUN)
            return self.coerce_path_result(value)
        from trec_rag_eval.api import check_input, is_url

        if isinstance(value, str) and is_url(value):
            if self.local_only:
                self.fail(f"{value!r} is a URL: a local file is expected here", param, ctx)
            return value
        if self.allow_dash and value == "-":
            return value
        if self.exists:
            check_input(os.fspath(value), folder=self.dir_okay)
        return self.coerce_path_result(value)


class QrelsPath(InputPath):
    """An existing qrels (or topics) file or folder, a URL, or an ir_datasets name
    (``irds:msmarco-passage/trec-dl-2019``), which is not a path: it is handed on as it is, and read
    through the ``irds`` extra."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("irds:"):
            return value
        return super().convert(value, param, ctx)


class LocalPath(InputPath):
    """A local input file as a ``pathlib.Path``; a URL refused as such. ``Path`` would make
    ``http://user:password@host/f`` ``http:/user:password@host/f``: read as a local file that is not there, and
    shown with its password, as no redaction knows that for a URL."""

    local_only = True

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("path_type", Path)
        super().__init__(**kwargs)


class OutputPath(click.Path):
    """A file a command writes, checked by the writer (``io.atomic``) in its words, one ``Error: cannot write NAME:
    reason`` line, exit 1: a URL here, before anything else is parsed (``pathlib.Path`` would spoil it, and a
    password in it); the rest before any work, when the command checks its outputs against its inputs and each
    other (``api.check_outputs``: a missing folder, a folder given, an existing file without ``--force``). Not
    click's checks, which would say a folder given under the usage screen, exit 2. With ``local``, the path is
    handed on as a ``pathlib.Path``."""

    def __init__(self, local: bool = False, **kwargs: Any) -> None:
        super().__init__(path_type=Path if local else None, **kwargs)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from trec_rag_eval.io.atomic import refuse_url

        refuse_url(os.fspath(value))
        return self.coerce_path_result(value)
