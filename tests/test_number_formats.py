"""One number format per output convention: a measure's value in a table a person reads
(text, notebook, repr) is ``number_formats.format_number``'s, trec_eval's lines ``render.trec.format_trec_value``'s,
a value in JSON or CSV ``number_formats.plain_number``'s, a coefficient ``number_formats.format_magnitude``'s.
There were four 4-decimal formatters (core/frames, render/table, render/numbers, render/trec)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import trec_rag_eval as tre
from trec_rag_eval.measures.requests import parse_measure
from trec_rag_eval.number_formats import format_delta, format_magnitude, format_number, format_precise, plain_number
from trec_rag_eval.render.numbers import format_difference, p_phrase
from trec_rag_eval.render.trec import format_trec_value

PACKAGE = Path(tre.__file__).resolve().parent
FORMATTERS = {"number_formats.py", "render/numbers.py", "render/trec.py", "render/columnar_text.py"}
FOUR_DECIMALS = re.compile(r"\.4f\b")


def test_only_the_formatters_write_four_decimals():
    # a new table writing f"{value:.4f}" itself would be a fifth formatter of one convention
    found = [f"{path.relative_to(PACKAGE)}:{i}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.relative_to(PACKAGE).as_posix() not in FORMATTERS
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if FOUR_DECIMALS.search(line)]
    assert found == []


@pytest.mark.parametrize("value, missing, expected", [
    (0.25, "nan", "0.2500"),
    (np.float64(2 / 3), "nan", "0.6667"),  # numpy's floats are floats
    (math.nan, "nan", "nan"),
    (math.nan, "-", "-"),  # a comparison's tables, among its other statistics
    (8, "nan", "8"),  # a count as it is
    ("-3---00--1", "nan", "-3---00--1"),  # relstring: text as it is
])
def test_a_table_number(value, missing, expected):
    assert format_number(value, missing) == expected


def test_trec_eval_number_is_its_own_convention():
    # trec_eval's %6.4f pads to 6, prints glibc's -nan, and counts as %ld
    assert format_trec_value(parse_measure("P@5"), 0.25) == "0.2500"
    assert format_trec_value(parse_measure("P@5"), 12.5) == "12.5000"
    assert format_trec_value(parse_measure("P@5"), math.nan) == "  -nan"
    assert format_trec_value(parse_measure("num_ret"), 80.0) == "80"


def test_json_and_csv_values_keep_every_digit():
    assert plain_number(np.float64(0.1) + np.float64(0.2)) == 0.30000000000000004
    assert type(plain_number(np.float64(1.0))) is float
    assert plain_number(math.nan) is None and plain_number(None) is None and plain_number("x") == "x"


def test_statistics():
    assert format_magnitude(0.12345) == "0.123" and format_magnitude(math.nan) == "-"
    assert format_magnitude(None, "undefined") == "undefined"
    assert format_difference(0.043) == "+0.0430" and format_difference(-0.1) == "-0.1000"
    assert format_precise(1 / 3) == "0.333333" and format_precise(None) == "n/a"
    # a comparison's delta, in its table and in its repr: three decimals, no negative zero, no value as -
    assert format_delta(0.0431) == "+0.043" and format_delta(-0.0004) == "+0.000" and format_delta(math.nan) == "-"


def test_a_p_value_in_a_sentence():
    # three decimals, so 0.049 and 0.051 never print alike; all pairs say a missing one n/a
    assert p_phrase(0.0494) == "p = 0.049" and p_phrase(0.0004) == "p < 0.001"
    assert p_phrase(math.nan) == "p = -" and p_phrase(math.nan, "n/a") == "p n/a"
