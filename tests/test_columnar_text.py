"""The column-wise number formatting behind every -q output gives Python's own bytes, value for value."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trec_rag_eval.render import columnar_text

# decimal ties (exact in binary: decided by round-half-even on the exact value), values next to them,
# signed zeros, the edges of the fast path, non-finite values
TRICKY = [0.0, -0.0, 0.03125, 0.09375, 0.15625, 0.96875, 0.00005, 0.00015, 0.99995, 0.999949999, 1.0, -1.0,
          -0.00001, -0.03125, 1 / 3, 2 / 3, 0.1 + 0.2, 12345.67885, 99999.99995, 1e5, 1e9, 1e12, 1e20, -1e20,
          5e-324, 1e-5, 1.5e-5, 9.99e-5, 1e-4, 1e15, 9999999999999998.0, 1e16, 2.5e16, math.inf, -math.inf,
          math.nan]


def _values() -> np.ndarray:
    rng = np.random.default_rng(7)
    random = rng.random(20000) * 10.0 ** rng.integers(-7, 18, 20000) * rng.choice([-1, 1], 20000)
    # the fractions trec_eval's measures give most often: k / n for small n (ties among them)
    fractions = np.array([k / n for n in range(1, 65) for k in range(0, n + 1)])
    return np.concatenate([np.array(TRICKY), random, fractions, np.round(rng.random(5000), 5)])


def test_fixed_is_percent_f_for_every_value() -> None:
    values = _values()
    got = columnar_text.fixed(values, 4, nan="-nan").to_list()
    expected = ["-nan" if math.isnan(v) else format(v, ".4f") for v in values.tolist()]
    assert got == expected


@pytest.mark.parametrize("decimals", [0, 2, 6])
def test_fixed_other_precisions(decimals: int) -> None:
    values = _values()
    expected = ["nan" if math.isnan(v) else format(v, f".{decimals}f") for v in values.tolist()]
    assert columnar_text.fixed(values, decimals).to_list() == expected


def test_shortest_is_repr_for_every_value() -> None:
    values = _values()
    expected = [None if math.isnan(v) else repr(v) for v in values.tolist()]
    assert columnar_text.shortest(values).to_list() == expected


def test_integers_and_layout_helpers() -> None:
    assert columnar_text.integers(np.array([0.0, 7.0, 1000.0, -3.0])).to_list() == ["0", "7", "1000", "-3"]
    a, b = columnar_text.strings(["a0", "a1"]), columnar_text.strings(["b0", "b1"])
    assert columnar_text.interleave([a, b]).to_list() == ["a0", "b0", "a1", "b1"]
    assert columnar_text.repeat_each(["x", "y"], 2).to_list() == ["x", "x", "y", "y"]
    assert columnar_text.cycle(["x", "y"], 2).to_list() == ["x", "y", "x", "y"]
    assert columnar_text.joined([a, b]) == "a0b0\na1b1\n"
    assert columnar_text.joined([columnar_text.strings([])]) == ""
    # rows written as they are, whatever they hold: no quoting of quotes, commas, spaces or empty items
    c = columnar_text.strings(["'q\"1'", ""])
    assert columnar_text.separated([a, c, b]) == "a0\t'q\"1'\tb0\na1\t\tb1\n"
    assert columnar_text.separated([a, b], ",") == "a0,b0\na1,b1\n"
    assert columnar_text.separated([columnar_text.strings([])]) == ""


@pytest.mark.parametrize("decimals", [0, 1, 4])
def test_fixed_of_measures_in_zero_to_ten(decimals: int) -> None:
    """Most measures lie in [0, 10): their text is looked up by their rounded digits; the edges of the
    table (9.99995 rounds to 10.0000, past it; -0.0 keeps its sign) and ties are formatted elsewhere."""
    rng = np.random.default_rng(11)
    values = np.concatenate([rng.random(30000) * 10.0, np.array([0.0, -0.0, 9.99995, 9.99994, 0.03125, 1.0, 10.0]),
                             np.array([k / n for n in range(1, 40) for k in range(0, n + 1)])])
    expected = [format(v, f".{decimals}f") for v in values.tolist()]
    assert columnar_text.fixed(values, decimals).to_list() == expected


@pytest.mark.parametrize(("decimals", "width"), [(4, 6), (4, 8), (0, 1), (0, 3), (2, 4), (6, 10)])
def test_fixed_padded_is_percent_width_f(decimals: int, width: int) -> None:
    """``width`` pads on the left as ``%6.4f`` does (trec_eval's values): the [0, 10) texts of the table
    already have decimals + 2 characters, the others (negative, >= 10, NaN) are padded one by one."""
    values = np.concatenate([_values(), np.array([0.5, 9.99995, -0.25, 12.5])])
    expected = [f"{'nan':>{width}}" if math.isnan(v) else format(v, f"{width}.{decimals}f") for v in values.tolist()]
    assert columnar_text.fixed(values, decimals, width=width).to_list() == expected
    assert columnar_text.repeat_each(columnar_text.strings(["x", "y"]), 2).to_list() == ["x", "x", "y", "y"]
    assert columnar_text.cycle(columnar_text.strings(["x", "y"]), 2).to_list() == ["x", "y", "x", "y"]


@pytest.mark.parametrize("decimals", [0, 1, 2, 3, 4])
def test_the_table_of_zero_to_ten_holds_every_text_in_order(decimals: int) -> None:
    # the table fixed looks most measures up in: the i-th text is "%.{decimals}f" of i / 10^decimals
    table = columnar_text._one_digit_texts(decimals).to_list()
    assert table == [f"{i / 10 ** decimals:.{decimals}f}" for i in range(10 ** (decimals + 1))]
