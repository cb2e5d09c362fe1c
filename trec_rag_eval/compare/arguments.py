"""The arguments every comparison takes, checked in one place with one wording: ``compare_values`` (and
so ``compare``), ``compare_all_pairs`` (``compare(pairs="all")``) and ``agree`` say the same thing of the
same mistake. Each check raises ``UsageError`` naming the parameter as the library spells it (the
command line says its flag)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from trec_rag_eval.errors import UsageError
from trec_rag_eval.syntax import is_number


def check_resampling(n_resamples: Any, seed: Any) -> None:
    """``n_resamples``: an integer >= 1; ``seed``: None or an integer >= 0 (what numpy's generators take)."""
    if not is_number(n_resamples, Integral):
        raise UsageError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise UsageError(f"n_resamples must be at least 1, got {n_resamples}")
    if seed is not None and (not is_number(seed, Integral) or seed < 0):
        raise UsageError(f"seed must be a non-negative integer (numpy's seeds are), got {seed!r}")


def check_fractions(**levels: Any) -> None:
    """Each of ``alpha``, ``confidence``, ``power``, ... given: a number strictly between 0 and 1."""
    for name, value in levels.items():
        if not is_number(value, Real) or not 0 < value < 1:
            raise UsageError(f"{name} must be between 0 and 1, got {value!r}")


def check_choice(what: str, value: Any, choices: Any) -> None:
    """``value`` is one of ``choices`` (a test, an interval, a correction)."""
    if value not in choices:
        raise UsageError(f"unknown {what} {value!r}; expected one of {', '.join(choices)}")
