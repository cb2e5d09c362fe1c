"""The facade's analyses of judgments and runs: ``compare``, ``plan``, ``fuse``, ``agree``, ``crosscheck``,
``validate``. Each holds its job's documentation; a small job is done here (``validate``), a longer one forwarded to
its body in ``service.analyses``, which reads the inputs as ``evaluate`` reads them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from trec_rag_eval.api import result_types
from trec_rag_eval.call_scope import per_call
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.measures.requests import MeasuresArg, resolve_measures
from trec_rag_eval.service import inputs

__all__ = ["compare", "plan", "fuse", "agree", "crosscheck", "validate"]
"""The facade's names this module holds: ``trec_rag_eval.api`` takes them all (``api.<name>``)."""


@overload
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: Literal["baseline"] = "baseline",
            **options: Any) -> result_types.Comparison: ...


@overload
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: Literal["all"],
            **options: Any) -> result_types.AllPairs: ...


@per_call
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: str = "baseline",
            **options: Any) -> result_types.Comparison | result_types.AllPairs:
    """Evaluate every run and compare each with the baseline: deltas, paired tests, intervals.

    ``pairs="all"``: every pair of runs instead of each against a baseline, the randomised Tukey HSD
    by default (``test="tukey-hsd"``; ``"tukey"``, ``"t"`` or ``"randomization"`` with ``correction``),
    each measure's pairs one family; returns an ``AllPairs`` (letters table, pairs; see
    ``trec_rag_eval.compare.allpairs``).

    ``runs``: a list (or generator) of runs in any shape ``evaluate`` takes (named by run tag, or file
    name), or a mapping name -> run. ``baseline``: a run's name, or its file. ``measures`` are compared,
    exactly those, in the order given, and the correction covers them alone; none given, the primary
    set (nDCG@10, R@5, MRR) (``primary=True``: the primary set, then ``measures``;
    ``all_measures=True``: the whole RAG table, then ``measures``). ``judgments``, ``topics``,
    ``qrels_format``, ``run_format``, ``doc_map`` or ``doc_id_pattern`` and ``id``: as in ``evaluate``. Other
    options (``test``,
    ``correction``, ``alpha``, ``seed``, ...) and the settings are those of
    ``trec_rag_eval.compare.compare_runs``. What ``evaluate`` warns of (a qrels query missing from a run,
    scored 0; chunk ids) is warned here too.
    """
    from trec_rag_eval.service.analyses import compare_runs_read

    return compare_runs_read(qrels, runs, measures, baseline, settings, pairs=pairs, **options)


@per_call
def plan(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None, *, delta: float,
         alpha: float = 0.05, power: float = 0.8, ci_width: float | None = None, queries: int | None = None,
         confidence: float = 0.95, settings: Settings | None = None, **options: Any) -> result_types.TopicSetPlan:
    """How many queries must be judged to detect a difference of ``delta``? A topic set size plan from a pilot.

    ``runs`` (two or more, in any shape ``compare`` takes) are evaluated on the pilot's judgments as ``compare``
    evaluates them, on ``measures`` (none given: compare's primary set nDCG@10, R@5, MRR). For each measure the
    plan gives the queries a paired t-test (two runs) or a one-way ANOVA and a Tukey HSD over all pairs (more
    runs) needs to detect ``delta`` at ``alpha`` with ``power``, and with ``ci_width`` the queries whose interval
    of a difference is expected no wider; the range of those counts over the ``confidence`` interval of the
    pilot's variance; the pilot's power for ``delta``; and the delta detectable at ``queries`` (default: the
    pilot's). Returns a ``TopicSetPlan`` (``str()`` is the command's text, ``render(format)``, ``to_pandas()``,
    ``plot()``); the methods are ``trec_rag_eval.compare.planning``'s. ``judgments``, ``topics``,
    ``qrels_format``, ``run_format``, ``doc_map`` or ``doc_id_pattern``, ``id`` and the settings as in ``compare``.
    """
    from trec_rag_eval.service.analyses import plan_runs_read

    return plan_runs_read(qrels, runs, measures, delta=delta, alpha=alpha, power=power, ci_width=ci_width,
                          queries=queries, confidence=confidence, settings=settings, **options)


@per_call
def fuse(runs: Sequence[Any] | Mapping[str, Any], method: str = "rrf", norm: str | None = None, k: float | None = None,
         weights: Sequence[float] | None = None, *, depth: int | None = None, run_tag: str | None = None,
         optimize: Any = None, measure: str = "nDCG@10", folds: int = 5, seed: int = 42, step: float = 0.1,
         ks: Sequence[float] | None = None, settings: Settings | None = None, progress: bool | None = None,
         **options: Any) -> result_types.Fusion:
    """Fuse runs into one (hybrid search): ``rrf`` (default), ``combsum``, ``combmnz``, ``combmax``,
    ``combmin``, ``combanz``, ``wsum``, ``borda`` or ``isr`` (ranx's names too: ``sum``, ``mnz``, ...).

    ``runs``: two or more, in any shape ``evaluate`` takes (a list, named by run tag or file name, or a
    mapping name -> run). ``norm``: ``minmax`` (the default for score methods), ``zscore``, ``sum``,
    ``max``, ``rank`` or ``none`` (ranx's ``min-max``, ``zmuv``). ``k``: rrf's constant (default 60).
    ``weights``: one per run (wsum, rrf); with ``optimize``, the parameter it chooses (wsum's weights, rrf's
    k) is refused. ``depth``: documents kept per query. ``optimize``: qrels (any shape) on which
    wsum's weights or rrf's k are chosen by ``folds``-fold cross-validation over queries on ``measure``;
    the result reports the held-out score beside the training one (``progress``: a bar over the
    settings tried; None shows it from 20 on). Returns a ``Fusion``: ``.run`` (a
    ``Run``), ``.write(path)``, ``to_dict()``, ``to_pandas()``; definitions in ``trec_rag_eval.fusion.methods``.
    ``measure``, ``folds``, ``seed``, ``step``, ``ks``, ``progress`` and the settings tune ``optimize``: given
    other than their defaults without it, they are refused, as ``k`` is with a method other than rrf (a
    parameter that would change nothing is a mistake to say, not to ignore). ``run_format``: how the run files
    are read, as in ``evaluate`` (refused when no run is a file).
    """
    from trec_rag_eval.service.analyses import fuse_runs

    return fuse_runs(runs, method, norm, k, weights, depth=depth, run_tag=run_tag, optimize=optimize, measure=measure,
                     folds=folds, seed=seed, step=step, ks=ks, settings=settings, progress=progress, **options)


@per_call
def agree(a: Any, b: Any = None, runs: Sequence[Any] | Mapping[str, Any] | None = None,
          measures: MeasuresArg = None, *, judgments: Sequence[str] | None = None, relevance_level: int = 1,
          confidence: float = 0.95, n_resamples: int = 1000, seed: int | None = 42,
          settings: Settings | None = None, **options: Any) -> result_types.Agreement:
    """Do two sets of judgments agree? Label agreement on the (query, document) pairs both judge
    (Cohen's kappa binary and linearly weighted, Krippendorff's alpha, confusion matrix, pairs only
    one side judges) and, given ``runs``, per measure (default nDCG@10, R@5, MRR) the ranking of the
    runs under each, Kendall's tau, tau_AP, the pairs that swap and a bootstrap interval of tau over
    queries. A is the reference (tau_AP weighs B's errors near A's top).

    ``a``, ``b``: qrels in any shape. ``judgments=("human", "llm")``: the views of files ``judge`` wrote
    (``"human"``, ``"llm"`` or ``"both"``, as ``evaluate(judgments=...)``); ``b`` None is ``a`` again (with
    ``judgments``, or ``a`` a file ``judge`` wrote: its human judgments are compared with the LLM's);
    otherwise one set of judgments, or one object given twice, is refused, as the command refuses one
    file given twice. ``runs``: a list or mapping in any run shape (``run_format``: how its files are read, as in
    ``evaluate``). See ``trec_rag_eval.compare.agreement``.
    """
    from trec_rag_eval.service.analyses import agree_judgments

    return agree_judgments(a, b, runs, measures, judgments=judgments, relevance_level=relevance_level,
                           confidence=confidence, n_resamples=n_resamples, seed=seed, settings=settings, **options)


@per_call
def crosscheck(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None,
               **options: Any) -> result_types.CrosscheckReport:
    """Compute the measures with ir-measures too and say, per measure, whether both agree (and when
    they differ, which known convention explains it). ``options``: ``tolerance``, the settings, and
    ``qrels_format``, ``topics``, ``run_format`` and ``doc_map`` or ``doc_id_pattern`` as in ``evaluate``.
    ``measures``
    None: ``checks.crosscheck.DEFAULT_MEASURES``, as the ``crosscheck`` command."""
    from trec_rag_eval.service.analyses import crosscheck_read

    return crosscheck_read(qrels, run, measures, settings, **options)


@per_call
def validate(qrels: Any, run: Any, reference: str | os.PathLike[str], settings: Settings | None = None,
             measures: MeasuresArg = None, **options: Any) -> result_types.ValidationReport:
    """Compare our scores with a published scores file (trec_eval -q, ir_measures -q or JSON): every value
    it holds, or those of ``measures`` (either notation; each must be in the file). ``options``: those of
    ``checks.validate.validate_tables``, and ``qrels_format``, ``topics``, ``run_format`` and ``doc_map`` or
    ``doc_id_pattern`` as in ``evaluate``."""
    from trec_rag_eval.checks.validate import validate_tables

    chosen = None if measures is None else resolve_measures(measures)
    judgments, table = inputs.read_pair(qrels, run, options)
    return validate_tables(judgments, table, os.fspath(reference), settings, measures=chosen, **options)
