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

from trec_rag_eval.arguments import check_count
from trec_rag_eval.errors import UsageError
from trec_rag_eval.fusion.methods import (
    METHODS,
    NORMS,
    RANK_METHODS,
    WEIGHTED,
    align,
    combine,
    fused_run,
    method_name,
    norm_name,
)
from trec_rag_eval.fusion.result import Fusion
from trec_rag_eval.notes import note
from trec_rag_eval.syntax import is_number

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.tables import Qrels, Run

__all__ = ["METHODS", "NORMS", "Fusion", "fuse"]

DEFAULT_K = 60


def fuse_tables(
    runs: Sequence[Run] | Mapping[str, Run],
    method: str = "rrf",
    norm: str | None = None,
    k: float = DEFAULT_K,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
    run_tag: str | None = None,
    *,
    optimize: Qrels | None = None,
    measure: str = "nDCG@10",
    folds: int = 5,
    seed: int = 42,
    step: float = 0.1,
    ks: Sequence[float] | None = None,
    settings: Settings | None = None,
    progress: bool | None = None,
) -> Fusion:
    """Fuse ``runs`` (two or more; a list, named by run tag, or a mapping name -> Run) with ``method``.

    ``norm``: how each run's scores are scaled per query before a score method combines them
    (default ``minmax``, as ranx; rrf, isr and borda read ranks and take none). ``k``: rrf's constant.
    ``weights``: one per run, for wsum (default: equal weights summing to 1) and rrf (default 1 each).
    ``depth``: keep the top ``depth`` documents of each query (default all). ``optimize``: qrels on
    which to choose wsum's weights (a grid of ``step``) or rrf's k (``ks``) by ``folds``-fold
    cross-validation over queries, scored with ``measure`` (see ``fusion.optimize``); ``progress``:
    a bar on stderr over the settings evaluated (None: from ``optimize.PROGRESS_SETTINGS`` on).
    """
    names, tables = _named(runs)
    chosen_method = method_name(method)
    chosen_norm = _chosen_norm(chosen_method, norm)
    _check_k(k)
    weights = _checked_weights(chosen_method, weights, len(tables))
    if depth is not None:
        check_count("depth", depth)
    tag = run_tag or f"fused-{chosen_method}"
    aligned = align(tables, chosen_norm)
    tuning = None
    if optimize is not None:
        from trec_rag_eval.fusion.optimize import cross_validate

        tuning = cross_validate(aligned, optimize, chosen_method, k=float(k), weights=weights, measure=measure,
                                folds=folds, seed=seed, step=step, ks=ks, settings=settings, depth=depth,
                                progress=progress)
        k, weights = tuning.chosen.k, tuning.chosen.weights
    scores = combine(aligned, chosen_method, float(k), weights)
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
    if len(tables) < 2:
        raise UsageError(f"fusion needs at least two runs, got {len(tables)}")
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
