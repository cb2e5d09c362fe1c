"""Equality of the results that hold numpy arrays (an evaluation's per-query values, a comparison's p-values): value
by value, where the equality a dataclass makes compares arrays by their truth, which raises for more than one."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any


def same_values(one: Any, other: Any) -> bool:
    """Whether two values are equal: dataclasses of one type field by field (the fields their equality compares;
    a class with an ``__eq__`` of its own, a table, by it), mappings key by key, lists and tuples item by item,
    numpy's arrays and numbers value by value, a NaN equal to a NaN (a value computed on neither side); anything
    else by ``==``."""
    if one is other:
        return True
    kind = type(one)
    if dataclasses.is_dataclass(kind) and kind.__dataclass_params__.eq:  # type: ignore[attr-defined]
        return same_fields(one, other)
    if kind.__module__ == "numpy" or type(other).__module__ == "numpy":
        import numpy as np

        try:
            return bool(np.array_equal(one, other, equal_nan=True))
        except TypeError:  # values in which numpy cannot look for NaN (strings, objects)
            return bool(np.array_equal(one, other))
    if isinstance(one, Mapping):
        return (isinstance(other, Mapping) and one.keys() == other.keys()
                and all(same_values(value, other[key]) for key, value in one.items()))
    if isinstance(one, (list, tuple)):
        return (type(other) is kind and len(one) == len(other)
                and all(same_values(a, b) for a, b in zip(one, other, strict=True)))
    if isinstance(one, float) and isinstance(other, float) and math.isnan(one) and math.isnan(other):
        return True
    return bool(one == other)


def same_fields(one: Any, other: Any) -> bool:
    """Whether two dataclasses are of one type and equal field by field (the fields their equality compares), each by
    ``same_values``: the ``__eq__`` of a result that holds arrays (declared ``eq=False``, so that dataclass makes it
    no hash of its fields: it is not hashable, as a table is not)."""
    return type(other) is type(one) and all(same_values(getattr(one, field.name), getattr(other, field.name))
                                            for field in dataclasses.fields(one) if field.compare)
