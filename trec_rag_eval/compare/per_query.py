"""Per-query values as the comparisons read them: one float64 array per run and measure, aligned on the
same queries, checked once for compare and all pairs alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from trec_rag_eval.errors import UsageError


def per_query_arrays(values: Mapping[str, Mapping[str, Any]], runs: Sequence[str], measures: Sequence[str],
                     n: int) -> dict[str, dict[str, np.ndarray]]:
    """Each run's values of each measure as a float64 array of the ``n`` queries, or a UsageError naming
    the run and measure that lack them or have another number (compare and all pairs alike)."""
    arrays: dict[str, dict[str, np.ndarray]] = {}
    for run in runs:
        arrays[run] = {}
        for measure in measures:
            if measure not in values[run]:
                raise UsageError(f"run {run!r} has no values for measure {measure!r}")
            array = np.asarray(values[run][measure], dtype=np.float64)
            if array.shape != (n,):
                raise UsageError(f"run {run!r}, measure {measure!r}: expected {n} per-query values, got shape "
                                 f"{array.shape}")
            arrays[run][measure] = array
    return arrays
