"""The arguments the library's random and counted work takes, checked in one place with one wording:
``compare`` (``compare_values``, ``compare_all_pairs``), ``agree``, ``fuse``, the search harness and the
LLM settings (depth, concurrency, questions per document) say the same thing of the same mistake. Each
check raises ``UsageError`` naming the parameter as the library spells it (the command line says its
flag)."""

from __future__ import annotations

import sys
from numbers import Integral, Real
from typing import Any

from trec_rag_eval.errors import UsageError
from trec_rag_eval.syntax import is_number


def check_count(name: str, value: Any, least: int = 1, parameter: str | None = None) -> None:
    """A count (resamples, folds, a depth): an integer, at least ``least``. ``name`` is how the message
    says it; ``parameter``, the parameter it is when ``name`` is a phrase (the command line says its flag)."""
    said = {name: parameter} if parameter is not None else None
    if not is_number(value, Integral):
        raise UsageError(f"{name} must be an integer, got {value!r}", said)
    if value < least:
        raise UsageError(f"{name} must be at least {least}, got {value}", said)


def check_positive(name: str, value: Any) -> None:
    """A length of time or a rate: a number > 0."""
    if not is_number(value, Real):
        raise UsageError(f"{name} must be a number, got {value!r}")
    if not value > 0:
        raise UsageError(f"{name} must be positive, got {value}")


def check_seed(seed: Any, optional: bool = True) -> None:
    """A seed of numpy's generators: an integer >= 0, or None (fresh randomness) when ``optional``."""
    if seed is None and optional:
        return
    if not is_number(seed, Integral) or seed < 0:
        raise UsageError(f"seed must be a non-negative integer (numpy's seeds are), got {seed!r}")


def check_resampling(n_resamples: Any, seed: Any) -> None:
    """``n_resamples``: an integer >= 1; ``seed``: None or an integer >= 0."""
    check_count("n_resamples", n_resamples)
    check_seed(seed)


def check_fractions(**levels: Any) -> None:
    """Each of ``alpha``, ``confidence``, ``power``, ... given: a number strictly between 0 and 1, and no smaller
    than the smallest normal float: below it a float keeps few digits (1e-320 is held as 9.99989e-321), and the
    statistics built on alpha overflow (a t quantile of alpha / 2 beyond the largest float)."""
    for name, value in levels.items():
        if not is_number(value, Real) or not 0 < value < 1:
            raise UsageError(f"{name} must be between 0 and 1, got {value!r}")
        if value < sys.float_info.min:
            raise UsageError(f"{name} must be at least {sys.float_info.min!r} (the smallest normal float: below it a "
                             f"float keeps few of its digits), got {value!r}", {name: name})


def check_runs(count: int, needs: str) -> None:
    """At least two runs, for what compares them (``needs``: what the sentence says of it, ``compare needs``,
    ``plan needs a pilot of``)."""
    if count < 2:
        raise UsageError(f"{needs} at least two runs, got {count}")


def check_choice(what: str, value: Any, choices: Any) -> None:
    """``value`` is one of ``choices`` (a test, an interval, a correction)."""
    if value not in choices:
        raise UsageError(f"unknown {what} {value!r}; expected one of {', '.join(choices)}")
