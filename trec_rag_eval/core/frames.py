"""Results as tables: long and wide rows, pandas or polars DataFrames.

Shared by ``Evaluation``, ``EngineEvaluation`` and ``Comparison`` so the three give the same shapes:

* long: one row per (run, query, measure): columns ``run, query_id, measure, value`` (ir_measures'
  ``iter_calc`` rows, with the run named so that several runs concatenate);
* wide: one row per query, one column per measure: ``query_id, <measure>, ...``.

pandas is optional: only ``frame(..., "pandas")`` imports it, and says how to install it when it is
missing. How results look (their text, notebook tables and reprs) is ``render``'s: see
``trec_rag_eval.renderer_registry``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trec_rag_eval.errors import MissingDependencyError

SHAPES = ("long", "wide")


def check_shape(shape: str, shapes: Sequence[str] = SHAPES) -> None:
    if shape not in shapes:
        allowed = " or ".join(repr(s) for s in shapes)
        raise ValueError(f"unknown shape {shape!r}: expected {allowed}")


def long_columns(run: str, per_query: Mapping[str, Mapping[str, Any]]) -> dict[str, list[Any]]:
    """``run, query_id, measure, value`` from ``{query_id: {measure: value}}``, queries then measures in order."""
    rows = [(run, query_id, name, value) for query_id, values in per_query.items() for name, value in values.items()]
    return {column: [row[i] for row in rows] for i, column in enumerate(("run", "query_id", "measure", "value"))}


def wide_columns(per_query: Mapping[str, Mapping[str, Any]], names: Sequence[str]) -> dict[str, list[Any]]:
    """``query_id`` then one column per measure name, from ``{query_id: {measure: value}}``."""
    columns: dict[str, list[Any]] = {"query_id": list(per_query)}
    for name in names:
        columns[name] = [values[name] for values in per_query.values()]
    return columns


def results_frame(run: str, per_query: Mapping[str, Mapping[str, Any]], names: Sequence[str], shape: str,
                  library: str) -> Any:
    """The ``shape`` (long or wide) DataFrame of one run's ``{query_id: {measure: value}}``, for ``names``."""
    check_shape(shape)
    chosen = {query_id: {name: values[name] for name in names} for query_id, values in per_query.items()}
    if shape == "long":
        return frame(long_columns(run, chosen), library)
    return frame(wide_columns(chosen, names), library)


def frame(columns: dict[str, list[Any]], library: str) -> Any:
    """A pandas or polars DataFrame of ``columns`` (column order kept)."""
    if library == "pandas":
        try:
            import pandas as pd
        except ImportError:
            raise MissingDependencyError("pandas", "pandas") from None
        return pd.DataFrame(columns)
    import polars as pl

    return pl.DataFrame(columns, strict=False)
