"""The analyses built on evaluations, their judgments and runs read as ``evaluate`` reads them: the bodies of the
facade's ``compare``, ``plan``, ``fuse``, ``agree`` and ``crosscheck`` (``trec_rag_eval.api.analyses``, which forwards
to them and holds their documentation). A small job's facade function does its work itself (``api.validate``)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import InputTypeError
from trec_rag_eval.measures.requests import MeasuresArg, resolve_measures
from trec_rag_eval.service.inputs import check_run_format, read_judgments, read_pair, run_from_any_shape

if TYPE_CHECKING:
    from trec_rag_eval.checks.crosscheck import CrosscheckReport
    from trec_rag_eval.compare.agreement import Agreement
    from trec_rag_eval.compare.allpairs import AllPairs
    from trec_rag_eval.compare.comparison import Comparison
    from trec_rag_eval.compare.planning import TopicSetPlan
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.fusion import Fusion
    from trec_rag_eval.tables import Qrels, Run


def compare_runs_read(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None,
                      baseline: str | None = None, settings: Settings | None = None, *, pairs: str = "baseline",
                      **options: Any) -> Comparison | AllPairs:
    """``api.compare``: the runs read whole, then compared with the baseline (or every pair)."""
    from trec_rag_eval.compare import compare_all, compare_runs

    if pairs not in ("baseline", "all"):
        from trec_rag_eval.errors import UsageError

        raise UsageError(f"pairs must be 'baseline' (each run against the baseline) or 'all' (every pair), "
                         f"got {pairs!r}")
    if pairs == "all" and baseline is not None:
        from trec_rag_eval.errors import UsageError

        raise UsageError("baseline names the run the others are compared with; pairs='all' compares every pair",
                         {"baseline ": "baseline", "pairs='all'": "all_pairs"})
    check_pairs(pairs, options)
    if pairs == "all":  # None given is left out
        options = {name: value for name, value in options.items() if name not in ("interval", "confidence")}
    from trec_rag_eval.compare import run_names

    judgments, chosen, given = paired_runs(qrels, runs, options, "compare needs")
    if not measures and not options.get("primary") and not options.get("all_measures"):
        # judgment groups, preferences: trec_eval's set of their own measures, not the primary set
        from trec_rag_eval.measures.requests import compared_measure_set

        measures = compared_measure_set(judgments) or measures
    if pairs == "all":
        return compare_all(judgments, chosen, measures, settings=settings, **options)
    if baseline is not None and not isinstance(chosen, Mapping):
        baseline = baseline_name(baseline, run_names(chosen), given)
    return compare_runs(judgments, chosen, measures, baseline, settings=settings, **options)


def paired_runs(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], options: dict[str, Any],
                 needs: str) -> tuple[Qrels, Sequence[Run] | Mapping[str, Run], list[Any]]:
    """The judgments and the runs of ``compare`` and ``plan``, each read whole in any shape (the options
    ``qrels_format``, ``topics``, ``judgments``, ``run_format``, ``doc_map`` or ``doc_id_pattern`` and ``id`` taken
    out of ``options``): a list of runs, or a mapping name -> run as given; and the runs as given, in order. Fewer than
    two are refused first (``needs``: ``compare needs``, ``plan needs a pilot of``)."""
    from trec_rag_eval.arguments import check_runs
    from trec_rag_eval.io.chunks import doc_map_asked
    from trec_rag_eval.io.id_paths import check_locator
    from trec_rag_eval.service.inputs import read_whole_run

    if isinstance(runs, Iterator):  # a generator of runs: a list of them
        runs = list(runs)
    if isinstance(runs, (Sequence, Mapping)) and not isinstance(runs, str):
        check_runs(len(runs), needs)  # before anything is read
    check_locator(options.get("id"))  # and so is an id= that is no key path
    listed = runs.values() if isinstance(runs, Mapping) else runs if isinstance(runs, (list, tuple)) else ()
    check_run_format(list(listed), options.get("run_format"))  # and a run_format= with no run file
    doc_map = doc_map_asked(options.pop("doc_map", None), options.pop("doc_id_pattern", None))  # and both mappings
    judgments, notes = read_judgments(qrels, format=options.pop("qrels_format", None),
                                      topics=options.pop("topics", None), judgments=options.pop("judgments", None))
    for note in notes:
        note.warn()
    run_format, id = options.pop("run_format", "auto"), options.pop("id", None)
    if isinstance(runs, Mapping):
        given: list[tuple[str | None, Any, str]] = [(str(name), run, f"run {name!r}") for name, run in runs.items()]
    elif isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Sequence):
        raise InputTypeError(f"runs must be a list of runs or a mapping name -> run ({needs} two or more); "
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


def check_pairs(pairs: str, options: Mapping[str, Any], shown: Mapping[str, Any] | None = None) -> None:
    """Refuse, before anything is read, what the pairs compared do not have: a test of every pair (Tukey's)
    against a baseline; for every pair, what only deltas to a baseline have: an interval or its confidence level,
    and what the compare command shows of them (``shown``, from ``api.check_compare``: each query's deltas,
    ``per_query``, and their figure, ``plot``; no parameters of ``compare``, which refuses them as unknown
    settings whatever its pairs)."""
    from trec_rag_eval.compare.stats import ALL_PAIRS_TESTS, TESTS
    from trec_rag_eval.errors import UsageError

    test = options.get("test")
    if pairs == "baseline" and test in ALL_PAIRS_TESTS and test not in TESTS:
        raise UsageError(f"test={test} tests every pair of runs: use pairs='all'",
                         {"test=": "test", "pairs='all'": "all_pairs"})
    given = [f"{name}=" for name in ("interval", "confidence") if options.get(name) is not None]
    shown = shown or {}
    given += ["per_query=True"] * bool(shown.get("per_query")) + ["plot="] * (shown.get("plot") is not None)
    if pairs == "all" and given:
        listed = given[0] if len(given) == 1 else f"{', '.join(given[:-1])} and {given[-1]}"
        raise UsageError(f"{listed} {'shows' if len(given) == 1 else 'show'} deltas to a baseline (and their "
                         "intervals); pairs='all' has none",
                         {**{name: name.split("=")[0] for name in given}, "pairs='all'": "all_pairs"})


def plan_runs_read(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], measures: MeasuresArg = None, *,
                   delta: float, alpha: float = 0.05, power: float = 0.8, ci_width: float | None = None,
                   queries: int | None = None, confidence: float = 0.95, settings: Settings | None = None,
                   **options: Any) -> TopicSetPlan:
    """``api.plan``: its arguments checked before anything is read, the runs read as ``compare`` reads them."""
    from trec_rag_eval.compare.planning import check_plan_arguments, plan_runs

    check_plan_arguments(delta, alpha, power, confidence, ci_width, queries)  # before reading anything
    judgments, chosen, _ = paired_runs(qrels, runs, options, "plan needs a pilot of")
    return plan_runs(judgments, chosen, measures, delta=delta, alpha=alpha, power=power, confidence=confidence,
                     ci_width=ci_width, queries=queries, settings=settings, **options)


def baseline_name(requested: str, names: list[str], runs: list[Any]) -> str:
    """The name of the baseline ``requested``: a run's name, or the file of one of the runs."""
    if requested in names:
        return requested
    for name, run in zip(names, runs, strict=True):
        if isinstance(run, (str, os.PathLike)) and os.path.exists(requested) and os.path.samefile(requested, run):
            return name
    from trec_rag_eval.errors import UsageError

    raise UsageError(f"baseline {requested!r} is neither a run name nor a run file; runs: {', '.join(names)}",
                     {"baseline ": "baseline"})


def fuse_runs(runs: Sequence[Any] | Mapping[str, Any], method: str = "rrf", norm: str | None = None,
              k: float | None = None, weights: Sequence[float] | None = None, *, depth: int | None = None,
              run_tag: str | None = None, optimize: Any = None, measure: str = "nDCG@10", folds: int = 5,
              seed: int = 42, step: float = 0.1, ks: Sequence[float] | None = None, settings: Settings | None = None,
              progress: bool | None = None, **options: Any) -> Fusion:
    """``api.fuse`` (its signature, whose defaults tell what was given: ``check_fusion_parameters``)."""
    from trec_rag_eval.core.settings import settings_of
    from trec_rag_eval.fusion import fuse_tables

    run_format = options.pop("run_format", None)  # how run files are read, as the command's --run-format
    if isinstance(runs, Iterator):
        runs = list(runs)
    check_run_format(_listed(runs), run_format)
    check_fusion_parameters(method, optimize, {"k": k, "measure": measure, "folds": folds, "seed": seed,
                                                "step": step, "ks": ks, "progress": progress, "settings": settings},
                             options)
    judgments, views = None, options.pop("judgments", None)  # judgments=None given is judgments left out
    if optimize is not None:
        judgments, notes = read_judgments(optimize, judgments=views)
        for note in notes:
            note.warn()
    chosen = settings_of(settings, **options) if (settings is not None or options) else None
    tables: Sequence[Run] | Mapping[str, Run]
    if isinstance(runs, Mapping):
        tables = {str(name): _run_read(run, judgments, f"run {name!r}", str(name), run_format)
                  for name, run in runs.items()}
    elif isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Sequence):
        raise InputTypeError("runs must be a list of runs or a mapping name -> run (fusion needs two or more); "
                        f"got {type(runs).__name__}")
    else:
        tables = [_run_read(run, judgments, f"run {i + 1}", "run", run_format) for i, run in enumerate(runs)]
    return fuse_tables(tables, method, norm, k, weights, depth, run_tag, optimize=judgments, measure=measure,
                       folds=folds, seed=seed, step=step, ks=ks, settings=chosen, progress=progress)


def _listed(runs: Any) -> list[Any]:
    """The runs of a list or a mapping, for ``check_run_format`` (nothing of any other shape, refused later)."""
    if isinstance(runs, Mapping):
        return list(runs.values())
    return list(runs) if isinstance(runs, (list, tuple)) else []


def _run_read(value: Any, qrels: Qrels | None, name: str, run_tag: str, run_format: str | None) -> Run:
    """One run of ``fuse`` or ``agree`` in any shape; a file in ``run_format`` when one is given (None, ``auto``:
    told by its content, as ``evaluate`` tells it)."""
    if isinstance(value, (str, os.PathLike)) and run_format not in (None, "auto"):
        from trec_rag_eval.io.loading import load_run

        return load_run(value, run_format, qrels)
    return run_from_any_shape(value, qrels, name=name, run_tag=run_tag)


def check_fusion_parameters(method: str, optimize: Any, given: Mapping[str, Any], options: Mapping[str, Any]) -> None:
    """Refuse what would change nothing: ``k`` (other than its default) with a method other than rrf, and
    without ``optimize`` the parameters that tune it, those of ``given`` and the settings in ``options``
    that differ from their defaults (``fuse_runs``'s signature, the facade's, ``Settings()``)."""
    import inspect
    from numbers import Real

    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.errors import UsageError
    from trec_rag_eval.fusion.methods import method_name
    from trec_rag_eval.syntax import is_number

    defaults = {name: parameter.default for name, parameter in inspect.signature(fuse_runs).parameters.items()}
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


def agree_judgments(a: Any, b: Any = None, runs: Sequence[Any] | Mapping[str, Any] | None = None,
                    measures: MeasuresArg = None, *, judgments: Sequence[str] | None = None, relevance_level: int = 1,
                    confidence: float = 0.95, n_resamples: int = 1000, seed: int | None = 42,
                    settings: Settings | None = None, **options: Any) -> Agreement:
    """``api.agree``: the two sets of judgments (or two views of one file) and the runs read, then compared."""
    from trec_rag_eval.compare.agreement import agree_tables
    from trec_rag_eval.errors import UsageError

    if b is None and judgments is None and not isinstance(a, (str, os.PathLike)):
        raise UsageError("b= is missing: give two sets of judgments (A, then B), or a file judge wrote (its LLM "
                         "judgments beside it), or judgments= naming the two views of one file")
    if b is a and judgments is None and not isinstance(a, (str, os.PathLike)):
        raise UsageError("A and B are the same judgments (one object given twice): give two sets of judgments")
    if runs is None or isinstance(runs, (Sequence, Mapping)) and not isinstance(runs, str) and not runs:
        check_no_ranking({"measures": measures, "confidence": confidence, "n_resamples": n_resamples, "seed": seed})
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
    run_format = options.pop("run_format", None)  # how run files are read, as the command's --run-format
    if isinstance(runs, Iterator):
        runs = list(runs)
    check_run_format(_listed(runs), run_format)
    # which judgments each side holds is in its source's name ("... (human judgments)"): no note needed
    first = read_judgments(a, judgments=None if judgments is None else judgments[0])[0]
    second = read_judgments(b, judgments=None if judgments is None else judgments[1])[0]
    tables: Sequence[Run] | Mapping[str, Run] | None = None
    if runs is not None:
        if isinstance(runs, Mapping):
            tables = {str(name): _run_read(run, first, f"run {name!r}", str(name), run_format)
                      for name, run in runs.items()}
        elif isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Sequence):
            raise InputTypeError(f"runs must be a list of runs or a mapping name -> run; got {type(runs).__name__}")
        else:
            tables = [_run_read(run, first, f"run {i + 1}", "run", run_format) for i, run in enumerate(runs)]
    chosen = settings_of_options(settings, options)
    return agree_tables(first, second, tables, measures, relevance_level=relevance_level, confidence=confidence,
                        n_resamples=n_resamples, seed=seed, settings=chosen)


def check_no_ranking(given: Mapping[str, Any]) -> None:
    """Without runs, refuse what only the ranking of runs reads (its measures, its bootstrap's level, resamples
    and seed) when set to other than ``agree``'s defaults (``agree_judgments``'s signature, the facade's): it
    would change nothing."""
    import inspect

    from trec_rag_eval.errors import UsageError

    defaults = {name: parameter.default for name, parameter in inspect.signature(agree_judgments).parameters.items()}
    named = [f"{name}=" for name, value in given.items() if value is not None and value != defaults[name]]
    if not named:
        return
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    raise UsageError(f"{listed} {'applies' if len(named) == 1 else 'apply'} to the ranking of runs, and no run is "
                     f"given: give runs, or leave {'it' if len(named) == 1 else 'them'} out",
                     {name: name[:-1] for name in named})


_CROSSCHECK_READS = ("the cross-check computes the measures with ir-measures too, which reads relevance judgments "
                     "(qrels) only: not with ")
_KINDS = {"groups": "judgment groups", "preferences": "preference judgments"}


def check_crosscheck_options(qrels_format: str | None = None, shards: bool = False) -> None:
    """Refuse, before anything is read, a cross-check that cannot be: judgments in a format of judgment groups or
    preferences (ir-measures reads relevance judgments only), or runs given in pieces (``shards=True``: the
    cross-check reads each run file whole). ``crosscheck_read`` checks its ``qrels_format``; the evaluate
    command, which cross-checks the runs it evaluated, the options it evaluated them with (``api.check_crosscheck``),
    and says "the cross-check" with its flag (``--crosscheck``)."""
    from trec_rag_eval.errors import UsageError
    from trec_rag_eval.io.loading import FORMATS

    if qrels_format in FORMATS and FORMATS[qrels_format].judgment_kind != "relevance":
        raise UsageError(f"{_CROSSCHECK_READS}{qrels_format} judgments", {"the cross-check": "crosscheck"})
    if shards:
        raise UsageError("the cross-check reads each run file as a whole run: not with shards=True",
                         {"the cross-check": "crosscheck", "shards=True": "shards"})


def crosscheck_read(qrels: Any, run: Any, measures: MeasuresArg = None, settings: Settings | None = None,
                    **options: Any) -> CrosscheckReport:
    """``api.crosscheck``: the judgments (relevance judgments only) and the run read, then cross-checked."""
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    check_crosscheck_options(options.get("qrels_format"))
    judgments, table = read_pair(qrels, run, options)
    if judgments.kind != "relevance":  # judgments given as a table (or detected in a file)
        from trec_rag_eval.errors import UsageError

        raise UsageError(f"{_CROSSCHECK_READS}the {_KINDS[judgments.kind]} of {judgments.source}")
    chosen = None if measures is None else resolve_measures(measures)
    return crosscheck_tables(judgments, table, chosen, settings, **options)


def settings_of_options(settings: Settings | None, options: dict[str, Any]) -> Settings | None:
    """``settings`` with the keyword settings applied (None when neither is given)."""
    if settings is None and not options:
        return None
    from trec_rag_eval.core.settings import settings_of

    return settings_of(settings, **options)
