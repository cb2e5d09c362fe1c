"""The one-call functions of the public API: every input shape in, the library's own types out.

Each function turns its qrels and runs into ``Qrels`` / ``Run`` (paths in any format the command
line reads, dicts, DataFrames, ir_measures tuples: see ``tables.shapes`` and ``io.any_input``) and its measures into
``Measure`` values (any notation, ranx's names too: see ``measures.requests.resolve_measures``), then
calls the layer that does the work. ``import trec_rag_eval`` reaches them lazily.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from trec_rag_eval.call_scope import per_call
from trec_rag_eval.core.settings import Settings as Settings
from trec_rag_eval.io.any_format import QRELS_FORMATS as QRELS_FORMATS
from trec_rag_eval.io.any_format import RUN_FORMATS as RUN_FORMATS
from trec_rag_eval.io.location import is_url as is_url
from trec_rag_eval.measures.requests import MeasuresArg, resolve_measures
from trec_rag_eval.notes import Note
from trec_rag_eval.service.inputs import read_judgments as read_judgments
from trec_rag_eval.service.inputs import run_from_any_shape

if TYPE_CHECKING:
    from trec_rag_eval.checks.crosscheck import CrosscheckReport
    from trec_rag_eval.checks.validate import ValidationReport
    from trec_rag_eval.compare.agreement import Agreement
    from trec_rag_eval.compare.allpairs import AllPairs
    from trec_rag_eval.compare.planning import TopicSetPlan
    from trec_rag_eval.compare.result import Comparison
    from trec_rag_eval.conversion import ConversionReport
    from trec_rag_eval.evaluation.context_cost import ContextCost
    from trec_rag_eval.evaluation.evaluate import Evaluation, QueryResult
    from trec_rag_eval.fusion import Fusion
    from trec_rag_eval.io.id_paths import IdLocator
    from trec_rag_eval.llm.client import progress_path_for as progress_path_for
    from trec_rag_eval.llm.judging import JudgeReport
    from trec_rag_eval.llm.queries import GenerationReport
    from trec_rag_eval.run_outcome import RunOutcome
    from trec_rag_eval.tables import Qrels, Run


@per_call
def evaluate(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None, *,
             cluster: Any = None, corpus: Any = None, tokenizer: Any = None, **options: Any) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` with trec_eval's conventions.

    ``qrels`` and ``run``: a path, a ``Qrels`` / ``Run``, a dict ``{query_id: {doc_id: relevance or
    score}}``, a pandas or polars DataFrame (query_id, doc_id, relevance / score), ir_measures tuples,
    or (qrels) a list of dataset rows (the French RAG tutorial's shape); a run dict keyed by query text
    finds its queries through the qrels' texts. ``measures``: None (the RAG set), ``"nDCG@10"``, a list
    of names in any notation (``"ndcg_cut.10"``, ranx's ``"ndcg@10"``), ``Measure`` values or
    ir_measures' (``ir_measures.AP``).
    ``settings``: a ``Settings``, or its fields as keywords (``relevance_level=2``, ``judged_only=True``,
    ``max_retrieved=100``, ``queries="intersection"``, ``trec_eval_9=True``); ``doc_map`` maps chunk
    ids to document ids; ``judgments`` (``"human"``, ``"llm"`` or ``"both"``, the default) chooses which
    judgments of a qrels file written by ``judge`` count, as ``--judgments`` does. ``id``: where search
    results (in memory, or in a JSON results file) keep their document id when none of the usual keys
    does: a key path (``id="metadata.source"``, LangChain's) or a callable ``result -> id``.
    A run given as a path is read as the command line reads it: in pieces when it is larger than a
    quarter of the memory available. What the command prints as warnings and notes (queries missing
    from the run or only in it, chunk ids, the RAG checks of JSON results) comes as ``TrecRagEvalWarning``.
    ``cluster``: a ``dask.distributed.Client`` (used as it is), a scheduler address or ``"local:N"``
    to evaluate on Dask workers (the ``dask`` extra); a run given as a path (or a list of shard paths)
    is then read by the workers where it lies and split by query id: the same numbers (see
    ``trec_rag_eval.cluster``).
    ``corpus``: the results' texts (a JSONL path, ``[{"id", "text"}]`` or ``{doc_id: text}``): the
    evaluation then holds the context cost (``evaluation.context``: the tokens of the top k results
    per query, mean and p95, at the measures' cutoffs), shown beside the measures and tabled against
    k by ``context_table()``; ``tokenizer`` counts the tokens (any callable text -> count or tokens;
    default whitespace words: see ``evaluation.context_cost``).
    ``qrels`` may also be judgment groups or preferences (trec_eval's ``-R qrels_jg``, ``prefs``, ``qrels_prefs``:
    ``qrels_format=`` names them, or ``read_qrels(path, format=...)`` reads them), each scored by its own measures
    (``measures="qrels_jg"``, ``"all_prefs"``; by default trec_eval's set of the kind). ``zscores``: a file of
    per-query means and standard deviations (trec_eval's ``-Z``): every value is then a z-score
    (``evaluation.zscores``).

    >>> evaluate("qrels.txt", "run.txt", "nDCG@10").summary["nDCG@10"]
    """
    from trec_rag_eval.service.pipeline import evaluate_one

    return evaluate_one(qrels, run, measures, settings, cluster=cluster, corpus=corpus, tokenizer=tokenizer, **options)


@per_call
def evaluate_many(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
                  settings: Settings | None = None, **options: Any) -> Iterator[RunOutcome]:
    """Evaluate several runs against ``qrels`` read once: one ``RunOutcome`` per run (``label``,
    ``evaluation``, ``notes``, ``error``), in the order given, each as soon as it is ready. A run with
    bad input fails alone: its outcome holds the error and the others are evaluated.

    ``runs``: paths (a folder stands for the run files in it), runs in any shape ``evaluate`` takes,
    or a mapping label -> run. ``options``: those of ``evaluate`` and ``qrels_format``, ``run_format``,
    ``topics`` (a TREC topics file), ``order`` (``"trec"``: the measures in trec_eval's order),
    ``stream``, ``chunk_bytes``, ``jobs`` (runs at once), ``progress`` (True: progress bars on stderr for
    runs read in pieces and tasks on a cluster; or, given a run's path, a context reporting the bytes
    read of a run read in pieces), ``task_progress`` (called with the tasks done and in all on a
    cluster), ``cluster``, ``shards`` (the files are pieces of one run), ``corpus``
    and ``tokenizer`` (the context cost of each run, as in ``evaluate``), ``render`` (called with each
    evaluation where it was made, on its thread or its Dask worker: the outcome then holds what it
    returned, ``rendered``, instead of the evaluation; e.g. ``render.output.RunRenderer``, the command
    line's text). The notes about each run are in its outcome, not warned.
    """
    from trec_rag_eval.service.pipeline import evaluate_runs

    return evaluate_runs(qrels, runs, measures, settings, **options)


@per_call
def context_cost(run: Any, corpus: Any, k_values: Sequence[int] = (1, 3, 5, 10), *, tokenizer: Any = None,
                 query_ids: Sequence[str] | None = None, qrels: Any = None, format: str | None = None) -> ContextCost:
    """The tokens the top k results of each query would put into a prompt, for each k of ``k_values``:
    ``ContextCost`` (``mean(k)``, ``p95(k)``, ``per_query()``). ``run`` in any shape ``evaluate`` takes
    (ranked as the measures rank it), ``corpus`` as in ``io.json.corpus.corpus_texts`` (or already such a dict),
    ``tokenizer`` any callable text -> count or tokens, or one named ``"package.module:callable"``
    (default: whitespace words), ``query_ids`` the
    queries to report (default the run's; one with no results sends 0 tokens); ``format`` that of a run
    file when it is not to be detected."""
    from trec_rag_eval.service.pipeline import run_context_cost

    return run_context_cost(run, corpus, k_values, tokenizer=tokenizer, query_ids=query_ids, qrels=qrels,
                            format=format)


@per_call
def iter_evaluate(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None,
                  **options: Any) -> Iterator[QueryResult]:
    """``evaluate``, one query at a time: ``QueryResult(query_id, values)`` in trec_eval's query order,
    ``values`` keyed by measure name (as ir_measures' ``iter_calc``, grouped by query)."""
    yield from evaluate(qrels, run, measures, settings, **options).iter_queries()


@overload
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: Literal["baseline"] = "baseline",
            **options: Any) -> Comparison: ...


@overload
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: Literal["all"],
            **options: Any) -> AllPairs: ...


@per_call
def compare(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
            baseline: str | None = None, settings: Settings | None = None, *, pairs: str = "baseline",
            **options: Any) -> Comparison | AllPairs:
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
    ``qrels_format``, ``run_format``, ``doc_map`` and ``id``: as in ``evaluate_many``. Other options (``test``,
    ``correction``, ``alpha``, ``seed``, ...) and the settings are those of
    ``trec_rag_eval.compare.compare_runs``. What ``evaluate`` warns of (a qrels query missing from a run,
    scored 0; chunk ids) is warned here too.
    """
    from trec_rag_eval.compare import compare_all, compare_runs

    if pairs not in ("baseline", "all"):
        from trec_rag_eval.errors import UsageError

        raise UsageError(f"pairs must be 'baseline' (each run against the baseline) or 'all' (every pair), "
                         f"got {pairs!r}")
    if pairs == "all" and baseline is not None:
        from trec_rag_eval.errors import UsageError

        raise UsageError("baseline names the run the others are compared with; pairs='all' compares every pair")
    from trec_rag_eval.compare import run_names

    judgments, chosen, given = _paired_runs(qrels, runs, options, "a comparison")
    if not measures and not options.get("primary") and not options.get("all_measures"):
        # judgment groups, preferences: trec_eval's set of their own measures, not the primary set
        from trec_rag_eval.evaluation.judgment_kinds import compared_measure_set

        measures = compared_measure_set(judgments) or measures
    if pairs == "all":
        return compare_all(judgments, chosen, measures, settings=settings, **options)
    if baseline is not None and not isinstance(chosen, Mapping):
        baseline = _baseline_name(baseline, run_names(chosen), given)
    return compare_runs(judgments, chosen, measures, baseline, settings=settings, **options)


def _paired_runs(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], options: dict[str, Any],
                 what: str) -> tuple[Qrels, Sequence[Run] | Mapping[str, Run], list[Any]]:
    """The judgments and the runs of ``compare`` and ``plan``, each read whole in any shape (the options
    ``qrels_format``, ``topics``, ``judgments``, ``run_format``, ``doc_map`` and ``id`` taken out of
    ``options``): a list of runs, or a mapping name -> run as given; and the runs as given, in order."""
    from trec_rag_eval.service.inputs import read_whole_run

    judgments, notes = read_judgments(qrels, format=options.pop("qrels_format", None),
                                      topics=options.pop("topics", None), judgments=options.pop("judgments", None))
    for note in notes:
        note.warn()
    run_format, doc_map, id = options.pop("run_format", "auto"), options.pop("doc_map", None), options.pop("id", None)
    if isinstance(runs, Iterator):  # a generator of runs: a list of them
        runs = list(runs)
    if isinstance(runs, Mapping):
        given: list[tuple[str | None, Any, str]] = [(str(name), run, f"run {name!r}") for name, run in runs.items()]
    elif isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Sequence):
        raise TypeError(f"runs must be a list of runs or a mapping name -> run ({what} needs two or more); "
                        f"got {type(runs).__name__}")
    else:
        given = [(None, run, f"run {i + 1}") for i, run in enumerate(runs)]
    tables = []
    for name, value, label in given:
        if isinstance(value, (str, os.PathLike)):
            label = os.fspath(value)
        table, notes = read_whole_run(value, judgments, name=label, run_tag=name or "run", run_format=run_format,
                                      doc_map=doc_map, id=id)
        for note in notes:  # queries missing from the run are said by the comparison, as evaluate says them
            note.about(label).warn()
        tables.append(table)
    chosen: Sequence[Run] | Mapping[str, Run] = (
        dict(zip([str(name) for name, _, _ in given], tables, strict=True)) if isinstance(runs, Mapping) else tables)
    return judgments, chosen, [value for _, value, _ in given]


@per_call
def plan(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None, *, delta: float,
         alpha: float = 0.05, power: float = 0.8, ci_width: float | None = None, queries: int | None = None,
         confidence: float = 0.95, settings: Settings | None = None, **options: Any) -> TopicSetPlan:
    """How many queries must be judged to detect a difference of ``delta``? A topic set size plan from a pilot.

    ``runs`` (two or more, in any shape ``compare`` takes) are evaluated on the pilot's judgments as ``compare``
    evaluates them, on ``measures`` (none given: compare's primary set nDCG@10, R@5, MRR). For each measure the
    plan gives the queries a paired t-test (two runs) or a one-way ANOVA and a Tukey HSD over all pairs (more
    runs) needs to detect ``delta`` at ``alpha`` with ``power``, and with ``ci_width`` the queries whose interval
    of a difference is expected no wider; the range of those counts over the ``confidence`` interval of the
    pilot's variance; the pilot's power for ``delta``; and the delta detectable at ``queries`` (default: the
    pilot's). Returns a ``TopicSetPlan`` (``str()`` is the command's text, ``render(format)``, ``to_pandas()``,
    ``plot()``); the methods are ``trec_rag_eval.compare.planning``'s. ``judgments``, ``topics``,
    ``qrels_format``, ``run_format``, ``doc_map``, ``id`` and the settings as in ``compare``.
    """
    from trec_rag_eval.compare.planning import check_plan_arguments, plan_runs

    check_plan_arguments(delta, alpha, power, confidence, ci_width, queries)  # before reading anything
    judgments, chosen, _ = _paired_runs(qrels, runs, options, "a plan")
    return plan_runs(judgments, chosen, measures, delta=delta, alpha=alpha, power=power, confidence=confidence,
                     ci_width=ci_width, queries=queries, settings=settings, **options)


def _baseline_name(requested: str, names: list[str], runs: list[Any]) -> str:
    """The name of the baseline ``requested``: a run's name, or the file of one of the runs."""
    if requested in names:
        return requested
    for name, run in zip(names, runs, strict=True):
        if isinstance(run, (str, os.PathLike)) and os.path.exists(requested) and os.path.samefile(requested, run):
            return name
    from trec_rag_eval.errors import UsageError

    raise UsageError(f"baseline {requested!r} is neither a run name nor a run file; runs: {', '.join(names)}",
                     {"baseline ": "baseline"})


@per_call
def fuse(runs: Sequence[Any] | Mapping[str, Any], method: str = "rrf", norm: str | None = None, k: float | None = None,
         weights: Sequence[float] | None = None, *, depth: int | None = None, run_tag: str | None = None,
         optimize: Any = None, measure: str = "nDCG@10", folds: int = 5, seed: int = 42, step: float = 0.1,
         ks: Sequence[float] | None = None, settings: Settings | None = None, progress: bool | None = None,
         **options: Any) -> Fusion:
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
    parameter that would change nothing is a mistake to say, not to ignore).
    """
    from trec_rag_eval.core.settings import settings_of
    from trec_rag_eval.fusion import fuse_tables

    _check_fusion_parameters(method, optimize, {"k": k, "measure": measure, "folds": folds, "seed": seed,
                                                "step": step, "ks": ks, "progress": progress, "settings": settings},
                             options)
    judgments = None
    if optimize is not None:
        judgments, notes = read_judgments(optimize, judgments=options.pop("judgments", None))
        for note in notes:
            note.warn()
    chosen = settings_of(settings, **options) if (settings is not None or options) else None
    if isinstance(runs, Iterator):
        runs = list(runs)
    tables: Sequence[Run] | Mapping[str, Run]
    if isinstance(runs, Mapping):
        tables = {str(name): run_from_any_shape(run, judgments, name=f"run {name!r}", run_tag=str(name))
                  for name, run in runs.items()}
    elif isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Sequence):
        raise TypeError("runs must be a list of runs or a mapping name -> run (fusion needs two or more); "
                        f"got {type(runs).__name__}")
    else:
        tables = [run_from_any_shape(run, judgments, name=f"run {i + 1}") for i, run in enumerate(runs)]
    return fuse_tables(tables, method, norm, k, weights, depth, run_tag, optimize=judgments, measure=measure,
                       folds=folds, seed=seed, step=step, ks=ks, settings=chosen, progress=progress)


def _check_fusion_parameters(method: str, optimize: Any, given: Mapping[str, Any], options: Mapping[str, Any]) -> None:
    """Refuse what would change nothing: ``k`` (other than its default) with a method other than rrf, and
    without ``optimize`` the parameters that tune it, those of ``given`` and the settings in ``options``
    that differ from their defaults (``fuse``'s signature, ``Settings()``)."""
    import inspect
    from numbers import Real

    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.errors import UsageError
    from trec_rag_eval.fusion.methods import method_name
    from trec_rag_eval.syntax import is_number

    defaults = {name: parameter.default for name, parameter in inspect.signature(fuse).parameters.items()}
    if given["k"] is not None and method_name(method) != "rrf":
        shown = f"{given['k']:g}" if is_number(given["k"], Real) else repr(given["k"])
        raise UsageError(f"k={shown} is rrf's constant: {method_name(method)} has none", {"k=": "k"})
    if optimize is not None:
        return
    plain = Settings()
    named = [f"{name}=" for name, value in given.items() if name != "k" and value != defaults[name]]
    # a name that is no setting (nor judgments=) is left to settings_of, which says so
    named += [f"{name}=" for name, value in options.items()
              if value != getattr(plain, name, value if name != "judgments" else None)]
    if not named:
        return
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    raise UsageError(f"{listed} {'tunes' if len(named) == 1 else 'tune'} optimize= (the qrels on which the setting is "
                     f"chosen): give optimize=, or leave {'it' if len(named) == 1 else 'them'} out",
                     {**{name: name[:-1] for name in named}, "optimize=": "optimize"})


@per_call
def agree(a: Any, b: Any = None, runs: Sequence[Any] | Mapping[str, Any] | None = None,
          measures: MeasuresArg = None, *, judgments: Sequence[str] | None = None, relevance_level: int = 1,
          confidence: float = 0.95, n_resamples: int = 1000, seed: int | None = 42,
          settings: Settings | None = None, **options: Any) -> Agreement:
    """Do two sets of judgments agree? Label agreement on the (query, document) pairs both judge
    (Cohen's kappa binary and linearly weighted, Krippendorff's alpha, confusion matrix, pairs only
    one side judges) and, given ``runs``, per measure (default nDCG@10, R@5, MRR) the ranking of the
    runs under each, Kendall's tau, tau_AP, the pairs that swap and a bootstrap interval of tau over
    queries. A is the reference (tau_AP weighs B's errors near A's top).

    ``a``, ``b``: qrels in any shape. ``judgments=("human", "llm")``: the views of files ``judge`` wrote
    (``"human"``, ``"llm"`` or ``"both"``, as ``evaluate(judgments=...)``); ``b`` None is ``a`` again (with
    ``judgments``, or ``a`` a file ``judge`` wrote: its human judgments are compared with the LLM's);
    otherwise one set of judgments, or one object given twice, is refused, as the command refuses one
    file given twice. ``runs``: a list or mapping in any run shape. See ``trec_rag_eval.compare.agreement``.
    """
    from trec_rag_eval.compare.agreement import agree_tables
    from trec_rag_eval.errors import UsageError

    if b is None and judgments is None and not isinstance(a, (str, os.PathLike)):
        raise UsageError("b= is missing: give two sets of judgments (A, then B), or a file judge wrote (its LLM "
                         "judgments beside it), or judgments= naming the two views of one file")
    if b is a and judgments is None and not isinstance(a, (str, os.PathLike)):
        raise UsageError("A and B are the same judgments (one object given twice): give two sets of judgments")
    if runs is None or isinstance(runs, (Sequence, Mapping)) and not isinstance(runs, str) and not runs:
        _check_no_ranking({"measures": measures, "confidence": confidence, "n_resamples": n_resamples, "seed": seed})
    if b is None:
        b = a
    if judgments is None and isinstance(a, (str, os.PathLike)) and isinstance(b, (str, os.PathLike)) and (
            os.path.realpath(a) == os.path.realpath(b)):
        from trec_rag_eval.io.judgments import sidecar_path_for

        if not sidecar_path_for(a).is_file():
            raise UsageError(f"A and B are the same file, {os.fspath(a)}, and it has no LLM judgments beside it "
                             f"(expected {sidecar_path_for(a)}): give two sets of judgments")
        judgments = ("human", "llm")
    if judgments is not None and (isinstance(judgments, str) or len(judgments) != 2):
        raise UsageError(f"judgments: two views expected, one for A and one for B (e.g. ('human', 'llm')), "
                         f"got {judgments!r}")
    # which judgments each side holds is in its source's name ("... (human judgments)"): no note needed
    first = read_judgments(a, judgments=None if judgments is None else judgments[0])[0]
    second = read_judgments(b, judgments=None if judgments is None else judgments[1])[0]
    tables: Sequence[Run] | Mapping[str, Run] | None = None
    if runs is not None:
        if isinstance(runs, Iterator):
            runs = list(runs)
        if isinstance(runs, Mapping):
            tables = {str(name): run_from_any_shape(run, first, name=f"run {name!r}", run_tag=str(name))
                      for name, run in runs.items()}
        elif isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Sequence):
            raise TypeError(f"runs must be a list of runs or a mapping name -> run; got {type(runs).__name__}")
        else:
            tables = [run_from_any_shape(run, first, name=f"run {i + 1}") for i, run in enumerate(runs)]
    chosen = settings_of_options(settings, options)
    return agree_tables(first, second, tables, measures, relevance_level=relevance_level, confidence=confidence,
                        n_resamples=n_resamples, seed=seed, settings=chosen)


def _check_no_ranking(given: Mapping[str, Any]) -> None:
    """Without runs, refuse what only the ranking of runs reads (its measures, its bootstrap's level, resamples
    and seed) when set to other than ``agree``'s defaults: it would change nothing."""
    import inspect

    from trec_rag_eval.errors import UsageError

    defaults = {name: parameter.default for name, parameter in inspect.signature(agree).parameters.items()}
    named = [f"{name}=" for name, value in given.items() if value is not None and value != defaults[name]]
    if not named:
        return
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    raise UsageError(f"{listed} {'applies' if len(named) == 1 else 'apply'} to the ranking of runs, and no run is "
                     f"given: give runs, or leave {'it' if len(named) == 1 else 'them'} out",
                     {name: name[:-1] for name in named})


def settings_of_options(settings: Settings | None, options: dict[str, Any]) -> Settings | None:
    """``settings`` with the keyword settings applied (None when neither is given)."""
    if settings is None and not options:
        return None
    from trec_rag_eval.core.settings import settings_of

    return settings_of(settings, **options)


@per_call
def crosscheck(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None,
               **options: Any) -> CrosscheckReport:
    """Compute the measures with ir-measures too and say, per measure, whether both agree (and when
    they differ, which known convention explains it). ``options``: ``tolerance``, the settings, and
    ``qrels_format``, ``topics``, ``run_format`` and ``doc_map`` as in ``evaluate_many``. ``measures``
    None: ``checks.crosscheck.DEFAULT_MEASURES``, as the ``crosscheck`` command."""
    from trec_rag_eval.checks.crosscheck import crosscheck_tables
    from trec_rag_eval.tables.judgment_kinds import judgment_kind

    judgments, table = _one_pair(qrels, run, options)
    if judgment_kind(judgments) != "relevance":
        from trec_rag_eval.errors import UsageError

        raise UsageError(f"{judgments.source} holds {judgment_kind(judgments)}: ir-measures, which the cross-check "
                         "computes the measures with, reads relevance judgments (qrels) only")
    chosen = None if measures is None else resolve_measures(measures)
    return crosscheck_tables(judgments, table, chosen, settings, **options)


@per_call
def validate(qrels: Any, run: Any, reference: str | os.PathLike[str], settings: Settings | None = None,
             measures: MeasuresArg = None, **options: Any) -> ValidationReport:
    """Compare our scores with a published scores file (trec_eval -q, ir_measures -q or JSON): every value
    it holds, or those of ``measures`` (either notation; each must be in the file). ``options``: those of
    ``checks.validate.validate_tables``, and ``qrels_format``, ``topics``, ``run_format`` and ``doc_map`` as
    in ``evaluate_many``."""
    from trec_rag_eval.checks.validate import validate_tables

    chosen = None if measures is None else resolve_measures(measures)
    judgments, table = _one_pair(qrels, run, options)
    return validate_tables(judgments, table, os.fspath(reference), settings, measures=chosen, **options)


def _one_pair(qrels: Any, run: Any, options: dict[str, Any]) -> tuple[Qrels, Run]:
    """The judgments and the one run of ``crosscheck`` and ``validate``, read as ``evaluate`` reads them
    (their notes warned to the caller of the public function); their reading options taken out of
    ``options``."""
    from trec_rag_eval.service.inputs import read_whole_run

    judgments, notes = read_judgments(qrels, format=options.pop("qrels_format", None),
                                      topics=options.pop("topics", None), judgments=options.pop("judgments", None))
    table, more = read_whole_run(run, judgments, run_format=options.pop("run_format", "auto"),
                           doc_map=options.pop("doc_map", None), id=options.pop("id", None))
    if isinstance(run, (str, os.PathLike)):
        more = [note.about(os.fspath(run)) for note in more]
    for note in notes + more:
        note.warn()
    return judgments, table


@per_call
def read_qrels(path: str | os.PathLike[str], format: str | None = None, *,
               topics: str | os.PathLike[str] | None = None, judgments: str | None = None) -> Qrels:
    """Judgments from any file the command line reads (TREC, JSON/JSONL dataset, BEIR), detected from
    the content unless ``format`` says (``"trec"``, ``"json"``, ``"beir"``, ...; ``"qrels_jg"``, ``"prefs"`` and
    ``"qrels_prefs"`` read trec_eval's judgment groups and preferences: ``tables.judgment_kinds``). ``judgments``
    (``"human"``, ``"llm"``, ``"both"``): that view of a file ``judge`` wrote, as in ``evaluate``."""
    from trec_rag_eval.io.any_format import load_qrels

    table = load_qrels(path, format, topics=topics)
    if judgments is None:
        return table
    from trec_rag_eval.io.judgments import choose_judgments

    return choose_judgments(path, table, judgments)[0]


@per_call
def read_run(path: str | os.PathLike[str], format: str | None = None, qrels: Qrels | None = None, *,
             doc_map: Any = None, id: IdLocator | None = None) -> Run:
    """A run from any run file the command line reads: TREC, JSON/JSONL results, Parquet (``qrels``
    with topics matches results keyed by query text; ``id``: where each JSON result keeps its document
    id, as in ``evaluate``). ``doc_map`` maps its chunk ids to documents (with ``qrels``), as
    ``evaluate`` does; what that did is warned."""
    from trec_rag_eval.io.any_format import load_run
    from trec_rag_eval.io.id_paths import check_locator

    if doc_map is None:
        return load_run(path, format, qrels, check_locator(id))
    if qrels is None:
        from trec_rag_eval.errors import UsageError

        raise UsageError("doc_map= needs the qrels (qrels=): which ids are judged decides how chunks are mapped")
    from trec_rag_eval.service.inputs import read_whole_run

    run, notes = read_whole_run(path, qrels, run_format=format or "auto", doc_map=doc_map, id=id)
    for note in notes:
        note.about(os.fspath(path)).warn()
    return run


@per_call
def convert(input_path: str | os.PathLike[str], **options: Any) -> ConversionReport:
    """Convert judgments and runs between JSON, TREC and Parquet files, losing nothing: see
    ``conversion.convert_files`` for the options (``qrels=``, ``topics=``, ``run=``, ``json=``, ``dataset=``,
    ...). Returns what was written and its notes (``ConversionReport``); Python callers are warned of
    the notes too when ``warn=True`` (the default)."""
    from trec_rag_eval.conversion import convert_files

    warn = options.pop("warn", True)
    report = convert_files(input_path, **options)
    if warn:
        for note in report.notes:
            note.warn()
    return report


@per_call
def search_engine(spec: str | None = None, corpus: str | os.PathLike[str] | None = None, *, language: str = "fr",
                  remove_stop_words: bool = True) -> Any:
    """A search engine for the ``Evaluator``: ``spec`` ``"module:callable"`` (your own, imported), or the
    built-in BM25 over a JSONL ``corpus`` (offline; ``language`` its stop words and accents)."""
    if (spec is None) == (corpus is None):
        from trec_rag_eval.errors import UsageError

        raise UsageError("give either an engine spec (module:callable) or a corpus (built-in BM25)",
                         {"an engine spec (module:callable)": "engine", "a corpus": "corpus"})
    if spec is not None:
        from trec_rag_eval.engine.load import load_engine

        return load_engine(spec)
    from trec_rag_eval.engine.bm25 import BM25Engine

    return BM25Engine(corpus, language=language, remove_stop_words=remove_stop_words)  # type: ignore[arg-type]


def __getattr__(name: str) -> Any:
    """Names imported when first asked for: the harness type ``Evaluator`` (``engine.harness``), and
    ``progress_path_for`` (``llm.client``, which loads the http and email modules: only the commands that ask
    an LLM need it, not every evaluation)."""
    if name == "Evaluator":
        from trec_rag_eval.engine.harness import Evaluator

        return Evaluator
    if name == "progress_path_for":
        from trec_rag_eval.llm.client import progress_path_for

        return progress_path_for
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_outputs(outputs: Sequence[str | os.PathLike[str] | None], force: bool = False,
                  inputs: Sequence[str | os.PathLike[str] | None] = (),
                  progress: Sequence[str | os.PathLike[str] | None] = ()) -> None:
    """Before any work: refuse every output (and ``progress`` file) that would replace or join what
    is read: an input, a file inside an input folder, or a file an input brings along (its
    ``.llm.tsv`` judgments, a BEIR TSV's ``queries.jsonl``), whatever the spelling (links
    included); outputs that exist unless ``force``; two outputs naming one file
    (``io.output_checks.check_outputs_against_inputs``)."""
    from trec_rag_eval.io.output_checks import check_outputs_against_inputs

    check_outputs_against_inputs(outputs, force, inputs, progress)


# --- LLM test queries and judgments (the generate-queries and judge commands go through these) --------------


def _corpus_documents(corpus: Any) -> list[dict[str, str]]:
    from trec_rag_eval.io.json.corpus import corpus_documents

    return corpus_documents(corpus)


def _llm_client(client: Any, base_url: str | None, api_key: str | None) -> Any:
    if client is not None:
        return client
    from trec_rag_eval.llm.client import make_client

    return make_client(base_url, api_key)


@per_call
def generate_queries(corpus: Any, output: str | os.PathLike[str], *, model: str, n: int = 3,
                     language: str = "fr", base_url: str | None = None, api_key: str | None = None,
                     client: Any = None, concurrency: int = 4, timeout: float = 60.0, max_retries: int = 5,
                     temperature: float | None = None, progress_path: str | os.PathLike[str] | None = None,
                     force: bool = False, progress: bool = True,
                     on_note: Callable[[Note], None] | None = None) -> GenerationReport:
    """Ask an OpenAI-compatible LLM for ``n`` questions per document of ``corpus`` and write the
    dataset (the French RAG tutorial's shape: id, requête/query, pertinents/relevant, lexical_overlap) to
    ``output``, as ``trec-rag-eval generate-queries`` does (it calls this function).

    ``corpus``: a JSONL path (``{"id", "text"}`` a line), a list of such dicts or ``{doc_id: text}``.
    The model: ``model`` at ``base_url`` (a local vLLM / Ollama / llama.cpp server, or OpenAI with
    ``OPENAI_API_KEY`` / ``api_key``), or an ``openai.OpenAI`` ``client`` of your own. Finished documents
    go to a progress file beside ``output`` (``progress_path``), so calling again after a failure or an
    interrupt asks only for the rest; ``output`` is written once every document is done (an existing
    one only with ``force``). Returns the ``GenerationReport``: ``report.dataset`` is the dataset
    itself (give it to ``Evaluator.evaluate``), ``report.written``, ``report.failures``, the requests
    and tokens spent, ``report.mean_overlap`` (a note says how much the questions copy their documents'
    words: ``on_note(note)`` receives it, by default a ``TrecRagEvalWarning``). Needs the ``llm`` extra (openai).

    >>> report = generate_queries("corpus.jsonl", "dataset.json", model="llama3", base_url="http://localhost:8000/v1")
    """
    from trec_rag_eval.llm.client import progress_path_for
    from trec_rag_eval.llm.queries import GenerationSettings, generate_dataset, overlap_warning

    settings = GenerationSettings(model=model, n=n, language=language, concurrency=concurrency, timeout=timeout,
                                  max_retries=max_retries, temperature=temperature)
    settings.check()
    if client is None and base_url is not None:
        from trec_rag_eval.llm.client import check_base_url

        check_base_url(base_url)  # a malformed URL is one line, before anything is read
    progress_file = progress_path or progress_path_for(output)
    # before any call: the dataset and the progress file are distinct, and neither is the corpus
    check_outputs([output], force, [corpus] if isinstance(corpus, (str, os.PathLike)) else [], [progress_file])
    documents = _corpus_documents(corpus)
    chosen = _llm_client(client, base_url, api_key)
    report = generate_dataset(documents, output, settings, chosen, force=force, progress_path=progress_file,
                              show_progress=progress)
    if report.mean_overlap is not None:
        (on_note or Note.warn)(overlap_warning(report.mean_overlap))
    return report


@per_call
def judge(dataset: Any, runs: Any, corpus: Any, output: str | os.PathLike[str], *, model: str,
          topics: str | os.PathLike[str] | None = None, depth: int = 10, language: str = "fr",
          calibrate: int = 0, seed: int = 42, max_chars: int = 8000, relevance_level: int = 1,
          base_url: str | None = None, api_key: str | None = None, client: Any = None, concurrency: int = 4,
          timeout: float = 60.0, max_retries: int = 5, temperature: float | None = None,
          progress_path: str | os.PathLike[str] | None = None, doc_map: Any = None, allow_failures: bool = False,
          force: bool = False, progress: bool = True, on_note: Callable[[Note], None] | None = None) -> JudgeReport:
    """Grade with an LLM, on a 0-3 scale, the unjudged documents in the top ``depth`` of ``runs``, and
    write the judgments with those holes filled to ``output`` (TREC qrels, or a JSON dataset when it
    ends in ``.json``) and the LLM's to its ``.llm.tsv`` sidecar, as ``trec-rag-eval judge`` does (it
    calls this function). Human judgments are kept as they are.

    ``dataset``: the human judgments with their query texts (a JSON dataset path or list of rows, a
    ``Qrels`` with topics, or a TREC qrels path with ``topics``; an earlier ``judge`` output too: its
    LLM judgments are recognised by their sidecar, not asked again and never taken for human ones).
    ``runs``: one run or a list (or mapping name -> run) in any shape ``evaluate`` takes; chunk ids
    pooled as their documents with ``doc_map``. ``corpus``: the passages shown to the model, as in
    ``generate_queries``. ``calibrate=N`` also asks about N human-judged documents per query and
    reports the agreement (``report.agreement``: Cohen's kappa; needs scikit-learn). The model,
    ``progress_path`` and resuming: as in ``generate_queries``. ``on_note(note)`` receives the notes
    (chunk mapping, earlier LLM judgments, then ``report.notes``: unjudged documents missing from the
    corpus or with an empty text, passages cut at ``max_chars``, run queries without a query text), by
    default each a ``TrecRagEvalWarning``.

    Returns the ``JudgeReport``: ``report.qrels`` (the filled judgments, to ``evaluate`` with),
    ``report.coverage`` (per run: Judged@depth before and after), grades, failures, tokens.
    Evaluate with the humans' judgments only, the LLM's or both: ``evaluate(output, run, judgments=...)``.
    """
    from trec_rag_eval.evaluation.evaluate import evaluate_tables
    from trec_rag_eval.io.any_format import load_qrels
    from trec_rag_eval.io.any_input import as_qrels
    from trec_rag_eval.io.judgments import read_llm_judgments, sidecar_path_for
    from trec_rag_eval.llm.client import progress_path_for
    from trec_rag_eval.llm.judging import JudgeSettings, judge_holes
    from trec_rag_eval.notes import note as make_note
    from trec_rag_eval.progress import bar
    from trec_rag_eval.service.inputs import read_whole_run

    note = on_note or Note.warn
    settings = JudgeSettings(model=model, language=language, depth=depth, calibrate=calibrate, seed=seed,
                             max_chars=max_chars, concurrency=concurrency, timeout=timeout, max_retries=max_retries,
                             temperature=temperature)
    settings.check()
    if client is None and base_url is not None:
        from trec_rag_eval.llm.client import check_base_url

        check_base_url(base_url)  # a malformed URL is one line, before anything is read
    progress_file = progress_path or progress_path_for(output)
    named = list(runs.items()) if isinstance(runs, Mapping) else [
        (os.fspath(run) if isinstance(run, (str, os.PathLike)) else f"run {i + 1}", run)
        for i, run in enumerate(runs if isinstance(runs, (list, tuple)) else [runs])]
    paths = [value for value in (dataset, corpus, topics, *(run for _, run in named))
             if isinstance(value, (str, os.PathLike))]
    if isinstance(doc_map, os.PathLike):  # a map file (a str is a pattern)
        paths.append(doc_map)
    # before any LLM call: the judgments, their sidecar and the progress file are three distinct
    # files, none of them an input (the dataset's own sidecar included)
    check_outputs([output, sidecar_path_for(output)], force, paths, [progress_file])
    if isinstance(dataset, (str, os.PathLike)):
        qrels = load_qrels(dataset, topics=topics)
        earlier = sidecar_path_for(dataset)
        previous = read_llm_judgments(earlier) if earlier.is_file() else []
    else:
        qrels, previous = as_qrels(dataset), []
    if previous:
        note(make_note(f"{os.fspath(dataset)} was written by judge: its {len(previous)} LLM judgments ({earlier}) "
                        "are not asked again, never taken for human ones, and carried into the new sidecar"))
    tables = []
    for label, run in named:
        table, said = read_whole_run(run, qrels, doc_map=doc_map)
        for one in said:
            note(one.about(label))
        tables.append(table)
    documents = {d["id"]: d["text"] for d in _corpus_documents(corpus)}
    chosen = _llm_client(client, base_url, api_key)
    bars: list[Any] = []  # the bar starts once the number of documents to ask is known

    def on_start(total: int) -> None:
        if progress:
            bars.append(bar(total, "Judging", unit="doc"))

    def on_task(key: str, error: str | None) -> None:
        for shown in bars:
            shown.update(1)

    try:
        report = judge_holes(qrels, tables, documents, output, settings, chosen, relevance_level=relevance_level,
                             force=force, allow_failures=allow_failures, progress_path=progress_file,
                             on_start=on_start, on_task=on_task, previous=previous,
                             corpus_name=os.fspath(corpus) if isinstance(corpus, (str, os.PathLike)) else "the corpus")
    finally:
        for shown in bars:
            shown.close()
    for one in report.notes:  # what could not be judged as asked
        note(one)
    if report.qrels is not None:
        measure = f"Judged@{depth}"
        report.coverage = [(label, float(evaluate_tables(qrels, table, [measure]).value(measure)),
                            float(evaluate_tables(report.qrels, table, [measure]).value(measure)))
                           for (label, _), table in zip(named, tables, strict=True)]
    return report
