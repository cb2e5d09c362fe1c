"""Choose a fusion's free parameters honestly: k-fold cross-validation over queries.

Tuning weights on the queries one then reports on overstates the gain (the weights fit those
queries' noise). Here the queries are shuffled (seeded) and cut into ``folds`` parts; for each part,
every setting of the grid is scored on the other parts (training) and the best one is scored on
that part (held out). Each query is thus scored once by a setting chosen without it: the mean of
those values is the cross-validated score, the estimate to report. The run that is written uses
the setting chosen on all queries (its in-sample score is shown too, and is optimistic).

Grids: wsum's weights are every vector of multiples of ``step`` summing to 1 (ranx's
``optimize_fusion`` grid); rrf's k is each of ``ks`` (default ``DEFAULT_KS``) with the weights given.
The best setting is the one with the highest mean; on a tie, the first in grid order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np

from trec_rag_eval.arguments import check_count, check_seed
from trec_rag_eval.errors import UsageError
from trec_rag_eval.fusion.methods import Aligned, combine, fused_run
from trec_rag_eval.progress import progress_bar
from trec_rag_eval.syntax import is_number

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.tables import Qrels

DEFAULT_KS = (1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)
MAX_SETTINGS = 5000
PROGRESS_SETTINGS = 20
"""From this many settings on, a progress bar shows the evaluations (``progress=None``)."""


@dataclass(frozen=True)
class Setting:
    """One point of the grid: rrf's k and the weights (None: the method's default)."""

    k: float
    weights: list[float] | None

    def label(self, method: str) -> str:
        parts = []
        if method == "rrf":
            parts.append(f"k={self.k:g}")
        if self.weights is not None and (method == "wsum" or len(set(self.weights)) > 1):
            parts.append("weights=" + ",".join(f"{w:g}" for w in self.weights))
        return " ".join(parts)


@dataclass(frozen=True)
class Fold:
    """One part of the queries held out: the setting chosen on the others, its training and held-out means."""

    fold: int
    n_queries: int
    chosen: Setting
    training: float
    held_out: float


@dataclass(frozen=True)
class Tuning:
    """What the cross-validation found (see the module docstring)."""

    measure: str
    parameter: str
    n_settings: int
    folds: list[Fold]
    held_out: float
    training: float
    chosen: Setting
    chosen_score: float
    n_queries: int
    seed: int


def grid(method: str, count: int, k: float, weights: list[float] | None, step: float,
         ks: Sequence[float] | None) -> tuple[str, list[Setting]]:
    """The parameter tuned and the settings tried, in grid order."""
    if method == "wsum":
        if not is_number(step, Real) or not 0 < step <= 1:
            raise UsageError(f"step must be a number in (0, 1], got {step!r}")
        parts = round(1 / step)
        if not math.isclose(parts * step, 1.0, rel_tol=1e-9):
            raise UsageError(f"step must divide 1 into whole parts (0.1, 0.05, 0.25, ...), got {step!r}")
        total = math.comb(parts + count - 1, count - 1)
        if total > MAX_SETTINGS:
            size = total if total < 10**15 else f"about {float(total):.3g}"  # 1e-300 made a 301-digit count
            raise UsageError(f"a step of {step:g} over {count} runs makes {size} weight vectors (more than "
                             f"{MAX_SETTINGS}): choose a larger step")
        settings = [Setting(k, [c / parts for c in combo]) for combo in _compositions(parts, count)]
        return "weights", settings
    if method == "rrf":
        values = list(DEFAULT_KS if ks is None else ks)
        if not values:
            raise UsageError("ks is empty: give the values of k to try")
        for value in values:
            if not is_number(value, Real) or not math.isfinite(value) or value < 0:
                raise UsageError(f"each k must be a finite number >= 0, got {value!r}")
        return "k", [Setting(float(value), weights) for value in values]
    raise UsageError(f"{method} has no parameter to tune: optimize chooses wsum's weights or rrf's k")


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    """Every tuple of ``parts`` non-negative integers summing to ``total``, first part largest first."""
    out = []
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = (-1, *bars, total + parts - 1)
        out.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(parts)))
    return out[::-1]


def cross_validate(aligned: Aligned, qrels: Qrels, method: str, *, k: float, weights: list[float] | None,
                   measure: str, folds: int, seed: int, step: float, ks: Sequence[float] | None,
                   settings: Settings | None, depth: int | None, progress: bool | None = None) -> Tuning:
    """Score every setting on every query once, then choose per fold (see the module docstring)."""
    from trec_rag_eval.evaluation.evaluate import evaluate_tables
    from trec_rag_eval.measures.requests import resolve_measures

    resolved = resolve_measures(measure)
    if len(resolved) != 1:
        raise UsageError(f"optimize scores one measure, got {len(resolved)}: {', '.join(map(str, resolved))}")
    if resolved[0].spec.aggregate != "mean":
        raise UsageError(f"{resolved[0]} is not a mean of per-query values: optimize needs one (nDCG@10, AP, ...)")
    check_count("folds", folds, least=2)
    check_seed(seed, optional=False)
    parameter, tried = grid(method, len(aligned.scores), k, weights, step, ks)
    name = str(resolved[0])
    table: list[np.ndarray] = []
    query_ids: list[str] = []
    shown = progress if progress is not None else len(tried) >= PROGRESS_SETTINGS
    for setting in progress_bar(tried, len(tried), "Tuning", unit="setting", enabled=shown):
        run = fused_run(aligned, combine(aligned, method, setting.k, setting.weights), "tuning", depth)
        result = evaluate_tables(qrels, run, resolved, settings)
        query_ids = list(result.query_ids)
        table.append(np.asarray(result.values[name], dtype=np.float64))
    values = np.vstack(table)  # settings x queries
    n = len(query_ids)
    if n < folds:
        raise UsageError(f"{folds}-fold cross-validation needs at least {folds} queries, the qrels have {n}")
    order = np.random.default_rng(seed).permutation(n)
    results = []
    held_out = np.empty(n)
    for index, part in enumerate(np.array_split(order, folds)):
        train = np.setdiff1d(order, part)
        means = values[:, train].mean(axis=1)
        best = int(np.argmax(means))  # the first of equal means: grid order
        held_out[part] = values[best, part]
        results.append(Fold(index + 1, len(part), tried[best], float(means[best]), float(values[best, part].mean())))
    overall = values.mean(axis=1)
    best = int(np.argmax(overall))
    return Tuning(measure=name, parameter=parameter, n_settings=len(tried), folds=results,
                  held_out=float(held_out.mean()), training=float(np.mean([f.training for f in results])),
                  chosen=tried[best], chosen_score=float(overall[best]), n_queries=n, seed=seed)
