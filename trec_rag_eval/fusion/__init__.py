"""Fuse runs into one run (hybrid search): RRF, CombSUM and its family, weighted sum, Borda, ISR.

``fuse_tables(runs, method, norm, k, weights)`` returns a ``Fusion``: the fused ``Run`` and how it was made.
With ``optimize=qrels`` the method's free parameters (wsum's weights, rrf's k) are chosen by k-fold
cross-validation over queries (``fusion.optimize``), and the report gives the held-out score beside
the training one. The definitions and their references are in ``fusion.methods``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np

from trec_rag_eval.arguments import check_count, check_runs
from trec_rag_eval.errors import UsageError
from trec_rag_eval.fusion.fusion_result import Fusion
from trec_rag_eval.fusion.methods import (
    METHODS,
    NORMS,
    RANK_METHODS,
    SIGNIFICANT_DIGITS,
    WEIGHTED,
    Aligned,
    align,
    combine,
    fused_run,
    method_name,
    norm_name,
    rounded,
)
from trec_rag_eval.notes import note
from trec_rag_eval.syntax import is_number

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.tables import Qrels, Run

__all__ = ["METHODS", "NORMS", "Fusion", "fuse"]

DEFAULT_K = 60
DEFAULT_STEP = 0.1


def fuse_tables(
    runs: Sequence[Run] | Mapping[str, Run],
    method: str = "rrf",
    norm: str | None = None,
    k: float | None = None,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
    run_tag: str | None = None,
    *,
    optimize: Qrels | None = None,
    measure: str = "nDCG@10",
    folds: int = 5,
    seed: int = 42,
    step: float = DEFAULT_STEP,
    ks: Sequence[float] | None = None,
    settings: Settings | None = None,
    progress: bool | None = None,
) -> Fusion:
    """Fuse ``runs`` (two or more; a list, named by run tag, or a mapping name -> Run) with ``method``.

    ``norm``: how each run's scores are scaled per query before a score method combines them
    (default ``minmax``, as ranx; rrf, isr and borda read ranks and take none). ``k``: rrf's constant
    (default ``DEFAULT_K``, 60). ``weights``: one per run, for wsum (default: equal weights summing to 1)
    and rrf (default 1 each). Infinite, huge and tiny scores: see ``fusion.methods``.
    ``depth``: keep the top ``depth`` documents of each query (default all). ``optimize``: qrels on
    which to choose wsum's weights (a grid of ``step``) or rrf's k (``ks``) by ``folds``-fold
    cross-validation over queries, scored with ``measure`` (see ``fusion.optimize``); ``progress``:
    a bar on stderr over the settings evaluated (None: from ``optimize.PROGRESS_SETTINGS`` on).
    """
    names, tables = _named(runs)
    chosen_method = method_name(method)
    chosen_norm = _chosen_norm(chosen_method, norm)
    if k is not None:
        _check_k(k)
    if optimize is not None:
        _check_not_chosen(chosen_method, k, weights)
        _check_grid(chosen_method, step, ks)
    given_weights = weights
    weights = _checked_weights(chosen_method, weights, len(tables))
    if depth is not None:
        check_count("depth", depth)
    tag = run_tag or f"fused-{chosen_method}"
    aligned = align(tables, chosen_norm, names)
    tuning = None
    k = DEFAULT_K if k is None else k
    if optimize is not None:
        from trec_rag_eval.fusion.optimize import cross_validate

        tuning = cross_validate(aligned, optimize, chosen_method, k=float(k), weights=weights, measure=measure,
                                folds=folds, seed=seed, step=step, ks=ks, settings=settings, depth=depth,
                                progress=progress)
        k, weights = tuning.chosen.k, tuning.chosen.weights
    scores = combine(aligned, chosen_method, float(k), weights)
    if chosen_method == "rrf":
        _say_if_ranks_vanish(float(k), aligned, given_weights is not None)
    run = fused_run(aligned, scores, tag, depth, source=f"<{chosen_method} of {', '.join(names)}>")
    return Fusion(run=run, runs=names, method=chosen_method, norm=chosen_norm,
                  k=float(k) if chosen_method == "rrf" else None,
                  weights=None if weights is None else [float(w) for w in weights],
                  depth=depth, tuning=tuning)


def _named(runs: Sequence[Run] | Mapping[str, Run]) -> tuple[list[str], list[Run]]:
    if isinstance(runs, Mapping):
        names, tables = [str(name) for name in runs], list(runs.values())
    else:
        tables = list(runs)
        names = _run_names(tables)
    check_runs(len(tables), "fusion needs")
    return names, tables


def _run_names(runs: list[Run]) -> list[str]:
    """Each run's tag, or its file name when tags collide (``compare.run_names``' rule)."""
    from pathlib import PurePath

    for names in ([run.run_tag for run in runs], [PurePath(run.source).name for run in runs]):
        if len(set(names)) == len(names):
            return names
    return [f"{i + 1}:{PurePath(run.source).name}" for i, run in enumerate(runs)]


def _chosen_norm(method: str, norm: str | None) -> str:
    if method in RANK_METHODS:
        chosen = norm_name(norm)  # checked, then not used: ranks do not change under a normalisation
        if norm is not None and chosen != "none":
            note(f"norm={norm!r} changes nothing: {method} reads each run's ranks, which a normalisation of its "
                 "scores leaves as they are", parameters={"norm=": "norm"}).warn()
        return "none"
    return "minmax" if norm is None else norm_name(norm)


def _check_not_chosen(method: str, k: float | None, weights: Sequence[float] | None) -> None:
    """With ``optimize``, refuse the parameter it chooses when given too (it would be replaced in silence)."""
    if method == "wsum" and weights is not None:
        raise UsageError("weights= and optimize= both set wsum's weights: optimize= chooses them (every vector of "
                         "multiples of step= summing to 1); give one or the other",
                         {"weights=": "weights", "optimize=": "optimize", "step=": "step"})
    if method == "rrf" and k is not None:
        shown = f"{k:g}" if is_number(k, Real) else repr(k)
        raise UsageError(f"k={shown} and optimize= both set rrf's k: optimize= chooses it among ks=; give one or the "
                         "other (ks= with that one value keeps it, with the cross-validated score)",
                         {"k=": "k", "optimize=": "optimize", "ks=": "ks"})


def _check_grid(method: str, step: float, ks: Sequence[float] | None) -> None:
    """With ``optimize``, refuse the grid of the other method's parameter (it would be ignored in silence)."""
    if method == "wsum" and ks is not None:
        raise UsageError("ks= lists the values of rrf's k that optimize= tries: wsum's weights are chosen on a grid "
                         "of step=; leave ks= out", {"ks=": "ks", "optimize=": "optimize", "step=": "step"})
    if method == "rrf" and step != DEFAULT_STEP:
        raise UsageError("step= is the grid step of wsum's weights: optimize= chooses rrf's k among ks=; leave step= "
                         "out", {"step=": "step", "optimize=": "optimize", "ks=": "ks"})


def _say_if_ranks_vanish(k: float, aligned: Aligned, weighted: bool) -> None:
    """A note when k is so large that every rank's share 1 / (k + r) rounds to one number (``rounded``):
    the fused run then follows the number of runs that retrieved each document, not their ranks."""
    deepest = float(np.nanmax(aligned.ranks)) if aligned.ranks.size else 1.0
    if deepest < 2:
        return
    first, last = rounded(np.array([1.0 / (k + 1.0), 1.0 / (k + deepest)]))
    if first != last:
        return
    by = "the sum of the weights of the runs" if weighted else "the number of runs"
    note(f"k={k:g} is so large that 1 / (k + r) is the same to {SIGNIFICANT_DIGITS} significant digits for every "
         f"rank r up to {deepest:g}: the fused run orders each query's documents by {by} that retrieved them, then "
         "by doc id", parameters={"k=": "k"}).warn()


def _check_k(k: float) -> None:
    if not is_number(k, Real) or not math.isfinite(k) or k < 0:
        raise UsageError(f"k must be a finite number >= 0, got {k!r}")


def _checked_weights(method: str, weights: Sequence[float] | None, count: int) -> list[float] | None:
    if weights is None:
        return [1.0 / count] * count if method == "wsum" else None
    if method not in WEIGHTED:
        raise UsageError(f"weights apply to {' and '.join(WEIGHTED)}, not to {method}")
    values = list(weights)
    if len(values) != count:
        raise UsageError(f"weights: one per run expected ({count} runs), got {len(values)}")
    for value in values:
        if not is_number(value, Real) or not math.isfinite(value) or value < 0:
            raise UsageError(f"weights must be finite numbers >= 0, got {value!r}")
    if not any(values):
        raise UsageError("weights are all 0: at least one run must count")
    return [float(v) for v in values]
