"""Do two sets of judgments agree? On the labels, and on the ranking of systems they produce.

``agree_tables(a, b, runs, measures)`` compares qrels A (the reference, e.g. human judgments) with qrels B
(e.g. an LLM's):

* labels, on the (query, document) pairs both judge (a negative grade, in the pool but not judged, is
  no label): Cohen's kappa on binary labels (relevant = grade >= ``relevance_level``) and linearly
  weighted over the grades (weights ``|g_a - g_b|``, Cohen 1968), Krippendorff's alpha (nominal on the
  binary labels, interval on the grades; Krippendorff 2004, two coders, no missing value), the share of
  identical labels, the confusion matrix, and the pairs only one side judges;
* rankings, when runs are given: each run evaluated under A and under B on the queries both judge,
  for each measure the two orderings of the runs, Kendall's tau between the two lists of mean scores
  (tau-b, ``scipy.stats.kendalltau``), tau_AP (Yilmaz, Aslam and Robertson, SIGIR 2008: B's ordering
  judged against A's, errors near the top weigh more; runs tied on a mean are ordered by name), the
  pairs of runs that swap (ordered one way under A, the other under B), and a percentile bootstrap
  interval of tau over queries (the queries resampled with replacement, seeded).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.arguments import check_fractions, check_resampling, check_runs
from trec_rag_eval.core.frames import check_shape, frame
from trec_rag_eval.errors import UsageError
from trec_rag_eval.number_formats import format_number, plain_data
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.value_equality import same_fields

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.tables import Qrels, Run


# --- label agreement ------------------------------------------------------------------------------
def cohen_kappa(a: np.ndarray, b: np.ndarray, weighted: bool = False) -> float:
    """Cohen's kappa of two raters' integer labels; ``weighted``: linear weights ``|a - b|`` on the
    label values (Cohen 1968). 1 - observed / expected disagreement; NaN when no disagreement is
    expected (both raters gave one and the same label to everything)."""
    labels = np.union1d(a, b)
    index_a, index_b = np.searchsorted(labels, a), np.searchsorted(labels, b)
    k, n = labels.size, a.size
    observed = np.zeros((k, k))
    np.add.at(observed, (index_a, index_b), 1.0)
    observed /= n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weights = (np.abs(labels[:, None] - labels[None, :]).astype(np.float64) if weighted
               else 1.0 - np.eye(k))
    disagreement = float((weights * expected).sum())
    if disagreement == 0:
        return math.nan
    return 1.0 - float((weights * observed).sum()) / disagreement


def krippendorff_alpha(a: np.ndarray, b: np.ndarray, metric: str = "nominal") -> float:
    """Krippendorff's alpha of two coders who both coded every unit: 1 - D_o / D_e, with the
    coincidence matrix (each unit's two values paired both ways) and delta^2 = [c != k] (nominal)
    or (c - k)^2 (interval). NaN when every value is the same (no expected disagreement)."""
    values = np.union1d(a, b)
    k = values.size
    coincidence = np.zeros((k, k))
    ia, ib = np.searchsorted(values, a), np.searchsorted(values, b)
    np.add.at(coincidence, (ia, ib), 1.0)
    np.add.at(coincidence, (ib, ia), 1.0)
    totals = coincidence.sum(axis=1)
    n = totals.sum()
    if metric == "nominal":
        delta = 1.0 - np.eye(k)
    elif metric == "interval":
        delta = (values[:, None] - values[None, :]).astype(np.float64) ** 2
    else:
        raise UsageError(f"unknown metric {metric!r}; expected nominal or interval")
    observed = float((coincidence * delta).sum()) / n
    expected = float((np.outer(totals, totals) * delta).sum()) / (n * (n - 1)) if n > 1 else 0.0
    if expected == 0:
        return math.nan
    return 1.0 - observed / expected


def tau_ap(reference: Sequence[float], estimate: Sequence[float], names: Sequence[str]) -> float:
    """tau_AP (Yilmaz, Aslam and Robertson 2008) of the ordering by ``estimate`` against the one by
    ``reference``: 2/(N-1) * sum over i = 2..N of C(i)/(i-1), minus 1, where i runs down the estimated
    ordering and C(i) counts the systems above i there that are above it in the reference too.
    Ties in either are broken by name (ascending); NaN when either list is constant (no ordering to
    compare), as Kendall's tau-b."""
    n = len(names)
    if n < 2 or len(set(reference)) == 1 or len(set(estimate)) == 1:
        return math.nan
    ref_rank = {name: r for r, name in enumerate(_ordering(reference, names))}
    order = _ordering(estimate, names)
    total = 0.0
    for i in range(1, n):
        correct = sum(ref_rank[order[j]] < ref_rank[order[i]] for j in range(i))
        total += correct / i
    return 2.0 * total / (n - 1) - 1.0


def _ordering(scores: Sequence[float], names: Sequence[str]) -> list[str]:
    """Names by score descending, ties by name ascending."""
    return [name for _, name in sorted(zip(scores, names, strict=True), key=lambda item: (-item[0], item[1]))]


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b (``scipy.stats.kendalltau``); NaN when either list is constant."""
    from scipy.stats import kendalltau

    if len(a) < 2:
        return math.nan
    return float(kendalltau(a, b).statistic)


@dataclass(frozen=True, eq=False)  # its own __eq__ (value_equality.same_fields), and no hash
class LabelAgreement:
    """The labels of the (query, document) pairs both sides judge, compared."""

    shared: int
    only_a: int
    only_b: int
    relevance_level: int
    kappa_binary: float
    kappa_linear: float
    alpha_nominal: float
    alpha_interval: float
    same_binary: float
    same_grade: float
    grades: list[int]
    confusion: list[list[int]]
    """``confusion[i][j]``: pairs A grades ``grades[i]`` and B grades ``grades[j]``."""

    def __eq__(self, other: object) -> bool:
        """The same values, NaN equal to NaN (``value_equality.same_fields``); not hashable, as the tables."""
        return same_fields(self, other) if type(other) is type(self) else NotImplemented


@dataclass(frozen=True)
class Swap:
    """Two runs ordered one way under A and the other under B (differences are first - second)."""

    measure: str
    first: str
    second: str
    delta_a: float
    delta_b: float


@dataclass(frozen=True, eq=False)  # its own __eq__ (value_equality.same_fields), and no hash
class RankingAgreement:
    """One measure: each run's mean under A and B, and how the two orderings agree."""

    measure: str
    runs: list[str]
    scores_a: list[float]
    scores_b: list[float]
    tau: float
    tau_ap: float
    tau_low: float
    tau_high: float
    swaps: list[Swap]

    def __eq__(self, other: object) -> bool:
        """The same values, NaN equal to NaN (``value_equality.same_fields``); not hashable, as the tables."""
        return same_fields(self, other) if type(other) is type(self) else NotImplemented

    def ordering(self, side: str) -> list[str]:
        """The runs best first under ``"a"`` or ``"b"`` (ties by name)."""
        return _ordering(self.scores_a if side == "a" else self.scores_b, self.runs)


@shown_by("trec_rag_eval.render.results:register_agreement")
@dataclass(frozen=True, eq=False)  # its own __eq__ (value_equality.same_fields), and no hash
class Agreement:
    """What ``agree`` found (see the module docstring)."""

    source_a: str
    source_b: str
    labels: LabelAgreement
    rankings: list[RankingAgreement] = field(default_factory=list)
    query_ids: list[str] = field(default_factory=list)
    confidence: float = 0.95
    n_resamples: int = 1000
    seed: int | None = 42

    def __eq__(self, other: object) -> bool:
        """The same values, NaN equal to NaN (``value_equality.same_fields``); not hashable, as the tables."""
        return same_fields(self, other) if type(other) is type(self) else NotImplemented

    def ranking(self, measure: str) -> RankingAgreement:
        for ranking in self.rankings:
            if ranking.measure == measure:
                return ranking
        raise KeyError(measure)

    def to_dict(self) -> dict[str, Any]:
        labels = self.labels
        return {
            "a": self.source_a, "b": self.source_b,
            "labels": {"shared": labels.shared, "only_a": labels.only_a, "only_b": labels.only_b,
                       "relevance_level": labels.relevance_level, "kappa_binary": labels.kappa_binary,
                       "kappa_linear": labels.kappa_linear, "alpha_nominal": labels.alpha_nominal,
                       "alpha_interval": labels.alpha_interval, "same_binary": labels.same_binary,
                       "same_grade": labels.same_grade, "grades": labels.grades, "confusion": labels.confusion},
            "queries": len(self.query_ids), "confidence": self.confidence, "n_resamples": self.n_resamples,
            "seed": self.seed,
            "rankings": {r.measure: {
                "scores_a": dict(zip(r.runs, r.scores_a, strict=True)),
                "scores_b": dict(zip(r.runs, r.scores_b, strict=True)),
                "ordering_a": r.ordering("a"), "ordering_b": r.ordering("b"),
                "kendall_tau": r.tau, "tau_ap": r.tau_ap, "tau_interval": [r.tau_low, r.tau_high],
                "swaps": [{"first": s.first, "second": s.second, "delta_a": s.delta_a, "delta_b": s.delta_b}
                          for s in r.swaps],
            } for r in self.rankings},
        }

    def to_pandas(self, shape: str = "rankings") -> Any:
        """``rankings``: one row per measure and run (mean and rank under A and B); ``confusion``: the
        confusion matrix (rows A's grades, columns B's); ``swaps``: one row per swapped pair."""
        return self._frame(shape, "pandas")

    def to_polars(self, shape: str = "rankings") -> Any:
        return self._frame(shape, "polars")

    def _frame(self, shape: str, library: str) -> Any:
        check_shape(shape, ("rankings", "confusion", "swaps"))
        if shape == "confusion":
            columns: dict[str, list[Any]] = {"grade_a": list(self.labels.grades)}
            for j, grade in enumerate(self.labels.grades):
                columns[f"b_{grade}"] = [row[j] for row in self.labels.confusion]
            return frame(columns, library)
        if shape == "swaps":
            swaps = [s for r in self.rankings for s in r.swaps]
            return frame({"measure": [s.measure for s in swaps], "first": [s.first for s in swaps],
                          "second": [s.second for s in swaps], "delta_a": [s.delta_a for s in swaps],
                          "delta_b": [s.delta_b for s in swaps]}, library)
        rows: dict[str, list[Any]] = {"measure": [], "run": [], "score_a": [], "score_b": [], "rank_a": [],
                                      "rank_b": []}
        for r in self.rankings:
            rank_a = {name: i + 1 for i, name in enumerate(r.ordering("a"))}
            rank_b = {name: i + 1 for i, name in enumerate(r.ordering("b"))}
            for name, score_a, score_b in zip(r.runs, r.scores_a, r.scores_b, strict=True):
                for column, value in (("measure", r.measure), ("run", name), ("score_a", score_a),
                                      ("score_b", score_b), ("rank_a", rank_a[name]), ("rank_b", rank_b[name])):
                    rows[column].append(value)
        return frame(rows, library)

    def __repr__(self) -> str:
        taus = ", ".join(f"{r.measure}: tau={format_number(r.tau)}" for r in self.rankings[:3])
        return (f"Agreement(shared={self.labels.shared}, kappa_binary={format_number(self.labels.kappa_binary)}, "
                f"kappa_linear={format_number(self.labels.kappa_linear)}" + (f", {taus}" if taus else "") + ")")

    def __str__(self) -> str:
        """The command's text (``render.agreement``)."""
        return str(show(self, "text"))

    def _repr_html_(self) -> str:
        return str(show(self, "html"))

    def to_json(self) -> str:
        """``to_dict`` as JSON, an undefined value (NaN: kappa with no disagreement expected, tau of tied
        runs) as null: JSON has no NaN."""
        return json.dumps(plain_data(self.to_dict()), indent=2) + "\n"


def label_agreement(a: Qrels, b: Qrels, relevance_level: int = 1) -> LabelAgreement:
    """Compare the labels of the pairs both qrels judge (see the module docstring). A negative grade
    (in the pool, not judged: trec_eval's convention) is no label: that side does not judge the pair."""
    grades_a, grades_b = _labels(a), _labels(b)
    shared = [key for key in grades_a if key in grades_b]
    only_a = len(grades_a) - len(shared)
    only_b = len(grades_b) - len(shared)
    if not shared:
        return LabelAgreement(0, only_a, only_b, relevance_level, math.nan, math.nan, math.nan, math.nan, math.nan,
                              math.nan, [], [])
    x = np.array([grades_a[key] for key in shared], dtype=np.int64)
    y = np.array([grades_b[key] for key in shared], dtype=np.int64)
    bx, by = (x >= relevance_level).astype(np.int64), (y >= relevance_level).astype(np.int64)
    grades = [int(g) for g in np.union1d(x, y)]
    position = {g: i for i, g in enumerate(grades)}
    confusion = [[0] * len(grades) for _ in grades]
    for g, h in zip(x.tolist(), y.tolist(), strict=True):
        confusion[position[g]][position[h]] += 1
    return LabelAgreement(
        shared=len(shared), only_a=only_a, only_b=only_b, relevance_level=relevance_level,
        kappa_binary=cohen_kappa(bx, by), kappa_linear=cohen_kappa(x, y, weighted=True),
        alpha_nominal=krippendorff_alpha(bx, by, "nominal"), alpha_interval=krippendorff_alpha(x, y, "interval"),
        same_binary=float(np.mean(bx == by)), same_grade=float(np.mean(x == y)), grades=grades, confusion=confusion)


def _labels(qrels: Qrels) -> dict[tuple[str, str], int]:
    """The judged pairs and their grades: every judgment but the negative ones (in the pool, not judged)."""
    rows = qrels.frame.select("query_id", "doc_id", "relevance").iter_rows()
    return {(q, d): int(r) for q, d, r in rows if r >= 0}


def ranking_agreement(measure: str, runs: list[str], per_query_a: np.ndarray, per_query_b: np.ndarray,
                      confidence: float, n_resamples: int, rng: np.random.Generator) -> RankingAgreement:
    """One measure's rankings from per-query values (queries x runs) under A and under B."""
    scores_a = per_query_a.mean(axis=0)
    scores_b = per_query_b.mean(axis=0)
    swaps = []
    for i, j in itertools.combinations(range(len(runs)), 2):
        da, db = float(scores_a[i] - scores_a[j]), float(scores_b[i] - scores_b[j])
        if da * db < 0:
            swaps.append(Swap(measure, runs[i], runs[j], da, db))
    swaps.sort(key=lambda s: -abs(s.delta_a))
    n = per_query_a.shape[0]
    taus = []
    for _ in range(n_resamples):
        sample = rng.integers(0, n, n)
        taus.append(kendall_tau(per_query_a[sample].mean(axis=0).tolist(), per_query_b[sample].mean(axis=0).tolist()))
    finite = np.array([t for t in taus if not math.isnan(t)])
    tail = (1 - confidence) / 2
    low, high = (float(np.quantile(finite, tail)), float(np.quantile(finite, 1 - tail))) if finite.size else (
        math.nan, math.nan)
    return RankingAgreement(measure, runs, [float(s) for s in scores_a], [float(s) for s in scores_b],
                            kendall_tau(scores_a.tolist(), scores_b.tolist()),
                            tau_ap(scores_a.tolist(), scores_b.tolist(), runs), low, high, swaps)


def agree_tables(a: Qrels, b: Qrels, runs: Sequence[Run] | Mapping[str, Run] | None = None, measures: Any = None, *,
                 relevance_level: int = 1, confidence: float = 0.95, n_resamples: int = 1000, seed: int | None = 42,
                 settings: Settings | None = None) -> Agreement:
    """Label agreement of ``a`` and ``b`` and, given ``runs``, the agreement of the system rankings
    they produce on ``measures`` (default nDCG@10, R@5, MRR), over the queries both judge."""
    from trec_rag_eval.compare import evaluated_values, run_names
    from trec_rag_eval.core.settings import settings_of

    chosen = settings_of(settings, relevance_level=relevance_level)  # relevance_level checked as evaluate checks it
    check_fractions(confidence=confidence)
    check_resampling(n_resamples, seed)
    labels = label_agreement(a, b, chosen.relevance_level)
    result = Agreement(a.source, b.source, labels, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if runs is None or len(runs) == 0:
        return result
    named = dict(runs) if isinstance(runs, Mapping) else dict(zip(run_names(list(runs)), runs, strict=True))
    check_runs(len(named), "a ranking needs")
    queries = sorted(set(a.query_ids) & set(b.query_ids))
    if not queries:
        raise UsageError(f"{a.source} and {b.source} judge no query in common: no ranking to compare")
    # the queries only one side judges are left out of both: the runs' results for them are not evaluated
    named = {name: _only_run(run, queries) for name, run in named.items()}
    values_a, ids_a, names, _, _ = evaluated_values(_only(a, queries), named, measures, False, None, chosen, None, {})
    values_b, ids_b, _, _, _ = evaluated_values(_only(b, queries), named, names, False, None, chosen, None, {})
    order_b = {q: i for i, q in enumerate(ids_b)}
    align = np.array([order_b[q] for q in ids_a], dtype=np.int64)
    rankings: list[RankingAgreement] = []
    for measure in names:
        rng = np.random.default_rng() if seed is None else np.random.default_rng([seed, len(rankings)])
        matrix_a = np.column_stack([values_a[run][measure] for run in named])
        matrix_b = np.column_stack([values_b[run][measure][align] for run in named])
        rankings.append(ranking_agreement(measure, list(named), matrix_a, matrix_b, confidence, n_resamples, rng))
    return Agreement(a.source, b.source, labels, rankings, list(ids_a), confidence, n_resamples, seed)


def _only_run(run: Run, queries: list[str]) -> Run:
    import polars as pl

    from trec_rag_eval.tables import Run as RunTable

    return RunTable(run.frame.filter(pl.col("query_id").is_in(queries)), run.run_tag, run.source,
                    empty_queries=run.empty_queries, checked=True)


def _only(qrels: Qrels, queries: list[str]) -> Qrels:
    """The judgments of ``queries`` alone (no topics: a query without judgments is in neither)."""
    import polars as pl

    from trec_rag_eval.tables import Qrels as QrelsTable

    kept = qrels.frame.filter(pl.col("query_id").is_in(queries))
    return QrelsTable(kept, qrels.source, checked=True)
