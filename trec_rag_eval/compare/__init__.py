"""Compare runs: per-measure deltas, paired significance tests, intervals, corrections.

``compare_runs(qrels, runs)`` evaluates every run with the core evaluator and compares each with a
baseline; ``compare_values(values, query_ids)`` does the same from per-query arrays you already
have. Both return a ``Comparison`` that renders itself in every output format that writes one (and HTML).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.arguments import check_choice, check_fractions, check_resampling, check_runs
from trec_rag_eval.compare import stats
from trec_rag_eval.compare.comparison import Comparison, PairResult
from trec_rag_eval.compare.per_query import per_query_arrays
from trec_rag_eval.compare.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from trec_rag_eval.core.settings import Settings, settings_of
from trec_rag_eval.errors import UsageError
from trec_rag_eval.measures.requests import DEFAULT_RAG, parse_measures, resolve_measures
from trec_rag_eval.progress import progress_bar

if TYPE_CHECKING:
    from trec_rag_eval.compare.allpairs import AllPairs
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.measures.requests import MeasuresArg
    from trec_rag_eval.tables import Qrels, Run

__all__ = ["PRIMARY_MEASURES", "RAG_MEASURES", "Comparison", "PairResult", "compare", "compare_all", "compare_values",
           "comparison_measures", "run_names"]

PRIMARY_MEASURES = ("nDCG@10", "R@5", "MRR")
"""What ``compare`` tests when no measure is asked: one graded, one recall and one first-hit measure.
Testing the 22 measures of the RAG table at once makes the correction so strict that clear
differences vanish; the full table stays available (``compare_runs(all_measures=True)``). Measures
asked are compared alone, in the order asked (``primary=True`` puts this set before them)."""
RAG_MEASURES = DEFAULT_RAG
"""The evaluator's default RAG table, for a comparison of every measure in it."""

PROGRESS_RUNS = 10
"""``compare`` shows its progress (the runs evaluated, then the pairs tested) from this many runs on."""


def compare_values(
    values: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]],
    query_ids: Sequence[str],
    baseline: str | None = None,
    measures: Sequence[str] | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    power: float = 0.8,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    interval: str | None = None,
    progress: bool | None = None,
) -> Comparison:
    """Compare runs from per-query values: ``values[run][measure]`` aligned with ``query_ids``.

    The baseline is ``baseline`` or the first run. Every other run is compared with it on every
    measure; the correction covers that whole family (measures x runs). Randomness is drawn from
    generators seeded by (seed, measure name, run name, baseline name, purpose), one for the
    randomization test and one for the bootstrap: a pair's interval and p-value do not depend on
    which other measures or runs are compared, in what order, nor on which test was chosen.
    ``interval``: ``None`` (the test's own, so they agree by construction: the t-interval with the
    t-test, the randomization interval, the deltas the sign-flip test keeps, with the randomization
    test, from the same flips), or ``"t"``, ``"randomization"``, ``"bootstrap"`` (BCa) on request.
    ``progress``: a progress bar on stderr (a widget in a notebook) over the pairs tested; None shows
    it from ``PROGRESS_RUNS`` runs on.
    A detectable delta wider than the measure's range (``Family.value_range``) is not reported:
    the pair keeps the delta that would have been needed (``mdd_beyond_span``) and the measure's
    ``value_span``, and the verdict says why.
    """
    runs = list(values)
    check_runs(len(runs), "compare needs")
    if baseline is None:
        baseline = runs[0]
    if baseline not in values:
        raise UsageError(f"baseline {baseline!r} is not one of the runs: {', '.join(runs)}")
    check_choice("test", test, stats.TESTS)
    if interval is None:
        interval = test
    check_choice("interval", interval, stats.INTERVALS)
    check_choice("correction", correction, stats.CORRECTIONS)
    check_fractions(alpha=alpha, confidence=confidence, power=power)
    check_resampling(n_resamples, seed)
    if test == "t" and interval == "t":
        stats.say_unused({"seed": seed != DEFAULT_SEED, "n_resamples": n_resamples != DEFAULT_RESAMPLES},
                         "the paired t-test and its t-interval draw nothing at random (the seed and the resamples "
                         "are those of the randomization test, its interval and the bootstrap)")
    if measures is None:
        measures = list(values[baseline])
    measures = [measures] if isinstance(measures, str) else list(measures)
    n = len(query_ids)
    arrays = per_query_arrays(values, runs, measures, n)
    if n == 0:
        raise UsageError("no queries to compare")

    means = {run: {m: float(np.mean(arrays[run][m])) for m in measures} for run in runs}
    others = [run for run in runs if run != baseline]
    raw: list[dict[str, object]] = []
    shown = progress if progress is not None else len(runs) >= PROGRESS_RUNS
    tested = [(measure, run) for measure in measures for run in others]
    for measure, run in progress_bar(tested, len(tested), "Testing", unit="pair", enabled=shown):
        a = arrays[baseline][measure]
        b = arrays[run][measure]
        p_value, (low, high) = _test_and_interval(a, b, test, interval, confidence, n_resamples,
                                                  functools.partial(_stream, seed, measure, run, baseline))
        mdd = stats.minimum_detectable_delta(a, b, alpha=alpha, power=power)
        mdd_beyond_span = math.nan
        width = _range_width(measure)
        if width is not None and mdd > width:  # inf too (no float noncentrality reaches the power); NaN never
            mdd, mdd_beyond_span = math.nan, mdd
        wins, ties, losses = stats.wins_ties_losses(a, b)
        raw.append(
            dict(
                measure=measure,
                run=run,
                baseline=baseline,
                baseline_mean=means[baseline][measure],
                run_mean=means[run][measure],
                delta=float(np.mean(b - a)),
                p_value=p_value,
                ci_low=low,
                ci_high=high,
                effect_size=stats.effect_size(a, b),
                wins=wins,
                ties=ties,
                losses=losses,
                min_detectable_delta=mdd,
                mdd_beyond_span=mdd_beyond_span,
                value_span=math.nan if width is None else width,
            )
        )
    adjusted = stats.adjust_p_values([float(r["p_value"]) for r in raw], correction)  # type: ignore[arg-type]
    pairs = [
        PairResult(**r, p_adjusted=p, significant=bool(not math.isnan(p) and p < alpha))  # type: ignore[arg-type]
        for r, p in zip(raw, adjusted, strict=True)
    ]
    return Comparison(
        runs=runs,
        measures=measures,
        baseline=baseline,
        query_ids=list(query_ids),
        values=arrays,
        means=means,
        pairs=pairs,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        power=power,
        n_resamples=n_resamples,
        seed=seed,
        interval=interval,
    )


def _test_and_interval(a: np.ndarray, b: np.ndarray, test: str, interval: str, confidence: float,
                       n_resamples: int, stream: Any) -> tuple[float, tuple[float, float]]:
    """The pair's p-value and interval. The randomization test and its interval share one set of
    sign flips (drawn once), so the interval excludes 0 exactly when the test rejects at 1 - confidence."""
    flips: stats.SignFlips | None = None

    def sign_flips() -> stats.SignFlips | None:
        nonlocal flips
        if flips is None and np.any(np.abs(b - a) > stats.TIE_TOLERANCE) and a.size > 1:
            flips = stats.SignFlips(b - a, n_resamples, stream(0))
        return flips

    if test == "t":
        p_value = stats.paired_t_test(a, b)
    else:
        p_value = sign_flips().p_value() if sign_flips() is not None else 1.0  # type: ignore[union-attr]
    if interval == "t":
        return p_value, stats.t_interval(a, b, confidence)
    if interval == "bootstrap":
        return p_value, stats.bootstrap_interval(a, b, confidence=confidence, n_resamples=n_resamples, rng=stream(1))
    if sign_flips() is None or stats._is_constant(b - a):
        return p_value, stats.randomization_interval(a, b, confidence, n_resamples, stream(0))
    return p_value, sign_flips().interval(confidence)  # type: ignore[union-attr]


def _stream(seed: int | None, measure: str, run: str, baseline: str, purpose: int) -> np.random.Generator:
    """The random stream of one (measure, run, baseline) pair and one purpose (0 the sign flips of the
    randomization test and interval, 1 the bootstrap),
    keyed by names (CRC-32, stable across processes), never by position."""
    if seed is None:
        return np.random.default_rng()
    keys = [zlib.crc32(text.encode("utf-8")) for text in (measure, run, baseline)]
    return np.random.default_rng([seed, *keys, purpose])


def _range_width(measure: str) -> float | None:
    """Width of the range one query's value can take, when the name parses to a bounded measure."""
    try:
        parsed = parse_measures([measure])
    except Exception:  # noqa: BLE001 - a name of the caller's own (compare_values): no range known
        return None
    if len(parsed) != 1 or parsed[0].spec.value_range is None:
        return None
    low, high = parsed[0].spec.value_range
    return high - low


def _is_numeric(values: object) -> bool:
    """Per-query values a test can use (runid and relstring are text; they are not compared)."""
    if values is None:
        return False
    try:
        np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return True


def run_names(runs: Sequence[Run]) -> list[str]:
    """Display names: each run's tag, or its source file name when tags collide."""
    tags = [run.run_tag for run in runs]
    if len(set(tags)) == len(tags):
        return tags
    from pathlib import PurePath

    names = [PurePath(run.source).name for run in runs]
    if len(set(names)) == len(names):
        return names
    return [f"{i + 1}:{name}" for i, name in enumerate(names)]


def run_label(name: str, source: str) -> str:
    """A run named by its name in the comparison, with its source when that says more: what tells apart
    two runs of one source (two configurations of one engine are both ``<engine bm25>``, never one name)."""
    if source == name or source.startswith(f"run {name!r}"):
        return source
    return f"run {name!r} ({source})"


def comparison_measures(measures: MeasuresArg = None, all_measures: bool = False,
                        primary: bool | None = None) -> list[Measure]:
    """What ``compare`` tests: the measures asked, in the order asked, each once (the evaluator's
    trec_eval family order is not the comparison's); the primary set when none is asked, as
    ``evaluate`` and trec_eval fall back on their default set only then. ``primary=True`` puts the
    primary set before the measures asked, ``all_measures=True`` the whole RAG table; ``primary=False``
    refuses to fall back on the primary set."""
    asked = [] if measures is None else resolve_measures(measures)
    for measure in asked:
        _check_comparable(measure)
    if all_measures:
        base = resolve_measures(RAG_MEASURES)
    elif primary or (primary is None and not asked):
        base = resolve_measures(PRIMARY_MEASURES)
    elif asked:
        base = []
    else:
        raise UsageError("primary=False compares only the measures given, and none was given",
                         {"primary=False": "primary", "the measures given": "measures"})
    return list(dict.fromkeys([*base, *asked]))


_AGGREGATES = {"gmean": "a geometric mean", "sum": "a sum"}


def _check_comparable(measure: Measure) -> None:
    """A measure whose summary is the mean of its per-query values, the one thing compare tests."""
    aggregate = measure.spec.aggregate
    if aggregate == "mean":
        return
    if aggregate in _AGGREGATES:
        raise UsageError(f"{measure} summarises the queries by {_AGGREGATES[aggregate]}, but compare tests "
                         "differences of means of per-query values: compare a per-query measure (AP for GMAP), "
                         "or evaluate each run for this one")
    raise UsageError(f"{measure} has no numeric value per query to compare")


def compare_runs(
    qrels: Qrels,
    runs: Sequence[Run] | Mapping[str, Run],
    measures: MeasuresArg = None,
    baseline: str | None = None,
    all_measures: bool = False,
    primary: bool | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    power: float = 0.8,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    interval: str | None = None,
    progress: bool | None = None,
    settings: Settings | None = None,
    doc_map: Any = None,
    **overrides: Any,
) -> Comparison:
    """Evaluate each run on ``qrels`` and compare it with the baseline (default: the first run).

    ``runs`` is a list (named by run tag, or file name when tags collide) or a mapping
    name -> Run. Every run is evaluated on the qrels' queries (a query missing from a run
    scores 0, with the warning ``evaluate`` gives), so the per-query values are paired query by
    query. What is compared is exactly ``measures`` (the evaluator's names), in the order given, each
    measure once whatever its name (RR is MRR, ndcg_cut.10 is nDCG@10); when none is given, the
    primary set (``PRIMARY_MEASURES``: nDCG@10, R@5, MRR; a short family, so the correction for
    multiple comparisons stays meaningful). ``primary=True`` compares the primary set, then the
    measures given not already in it; ``all_measures=True`` the whole RAG table, then the others. A
    pre-registered measure asked alone keeps the family at one comparison per run. The correction
    covers exactly the family compared. ``progress``: bars on stderr (widgets in a notebook) over the
    runs evaluated and the pairs tested; None shows them from ``PROGRESS_RUNS`` runs on. ``settings``
    as for ``evaluate``, except the query set, always the qrels'. ``doc_map`` maps chunk ids to
    documents in every run (see ``evaluate``). See ``compare_values`` for the statistics.
    """
    shown = progress if progress is not None else len(runs) >= PROGRESS_RUNS
    values, query_ids, names, sources, described = evaluated_values(qrels, runs, measures, all_measures, primary,
                                                                    settings, doc_map, overrides, shown)
    comparison = compare_values(
        values,
        query_ids or [],
        baseline=baseline,
        measures=names,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        power=power,
        n_resamples=n_resamples,
        seed=seed,
        interval=interval,
        progress=shown,
    )
    return dataclasses.replace(comparison, sources=sources, evaluation_settings=described)


def evaluated_values(
    qrels: Qrels, runs: Sequence[Run] | Mapping[str, Run], measures: MeasuresArg, all_measures: bool,
    primary: bool | None, settings: Settings | None, doc_map: Any, overrides: dict[str, Any],
    progress: bool | None = None,
) -> tuple[dict[str, dict[str, np.ndarray]], list[str], list[str], dict[str, str], dict[str, str]]:
    """Every run evaluated on the qrels' queries: ``values[run][measure]`` paired query by query,
    the query ids, the measure names compared, the sources and the settings described for reports."""
    from trec_rag_eval.evaluation.evaluate import evaluate_tables

    chosen = settings_of(settings, **overrides)
    if chosen.queries != "qrels":
        raise UsageError("compare evaluates every run on the qrels' queries (queries='qrels'), "
                         "so the values pair query by query")

    if isinstance(runs, Mapping):
        named = dict(runs)
    else:
        named = dict(zip(run_names(list(runs)), runs, strict=True))
    requested = comparison_measures(measures, all_measures, primary)
    wanted = [str(m) for m in requested]
    values: dict[str, dict[str, np.ndarray]] = {}
    query_ids: list[str] | None = None
    names: list[str] | None = None
    shown = progress if progress is not None else len(named) >= PROGRESS_RUNS
    shared = Counter(run.source for run in named.values())
    for name, run in progress_bar(named.items(), len(named), "Evaluating", unit="run", enabled=shown):
        result = evaluate_tables(qrels, run, measures=requested, settings=chosen, doc_map=doc_map)
        # queries missing from the run score 0: said as evaluate says it, of the run by its source (its file),
        # by its name in the comparison too when another run has the same source (<engine bm25> twice)
        result.warn_query_set(run_label(name, run.source) if shared[run.source] > 1 else run.source)
        if query_ids is None:
            query_ids = list(result.query_ids)
            evaluated = set(result.names)
            names = [m for m in wanted if m in evaluated and _is_numeric(result.values.get(m))]
            if not names:
                raise UsageError("none of the requested measures has numeric per-query values to compare")
            values[name] = {m: np.asarray(result.values[m], dtype=np.float64) for m in names}
            continue
        # Pair query by query, whatever order the evaluator returned them in.
        position = {q: i for i, q in enumerate(result.query_ids)}
        if set(position) != set(query_ids):
            raise UsageError(f"run {name!r} was evaluated on a different query set than the others")
        order = np.array([position[q] for q in query_ids], dtype=np.int64)
        values[name] = {m: np.asarray(result.values[m], dtype=np.float64)[order] for m in names or []}
    described = {
        "relevance level": str(chosen.relevance_level),
        "judged only (-J)": "yes" if chosen.judged_only else "no",
        "max retrieved (-M)": "all" if chosen.max_retrieved is None else str(chosen.max_retrieved),
    }
    if doc_map is not None:
        described["chunk to document mapping"] = doc_map if isinstance(doc_map, str) else type(doc_map).__name__
    sources = {"qrels": qrels.source, **{name: run.source for name, run in named.items()}}
    return values, query_ids or [], names or [], sources, described


def compare_all(
    qrels: Qrels,
    runs: Sequence[Run] | Mapping[str, Run],
    measures: MeasuresArg = None,
    all_measures: bool = False,
    primary: bool | None = None,
    test: str = "tukey-hsd",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = DEFAULT_SEED,
    settings: Settings | None = None,
    doc_map: Any = None,
    **overrides: Any,
) -> AllPairs:
    """Evaluate each run on ``qrels`` (as ``compare``) and test every pair of runs on every measure:
    the randomised Tukey HSD by default, each measure's pairs one family (see ``compare.allpairs``)."""
    from trec_rag_eval.compare.allpairs import compare_all_pairs

    values, query_ids, names, sources, described = evaluated_values(qrels, runs, measures, all_measures, primary,
                                                                    settings, doc_map, overrides)
    every = compare_all_pairs(values, query_ids, measures=names, test=test, correction=correction, alpha=alpha,
                              n_resamples=n_resamples, seed=seed)
    return dataclasses.replace(every, sources=sources, evaluation_settings=described)
