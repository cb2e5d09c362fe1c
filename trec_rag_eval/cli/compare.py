"""``trec-rag-eval compare`` and ``trec-rag-eval report``: thin click layers over ``compare()``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from trec_rag_eval.api import check_compare, check_outputs
from trec_rag_eval.cli import options as common
from trec_rag_eval.cli.chunks import doc_map_options, id_key_option
from trec_rag_eval.cli.llm import judgments_option
from trec_rag_eval.cli.params import PROBABILITY, SEED, InputPath, Integer, OutputPath, QrelsPath
from trec_rag_eval.errors import UsageError
from trec_rag_eval.io.atomic import write_atomic, write_stream
from trec_rag_eval.render.output_formats import ALL_PAIRS, COMPARISON, find_format

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {
    "compare": "Compare runs: deltas, significance tests, intervals.",
    "report": "Write a self-contained HTML comparison report.",
}


def _comparison_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by ``compare`` and ``report`` (applied bottom-up, so listed in reverse)."""
    options: list[Callable[[Any], Any]] = [
        click.argument("qrels", type=QrelsPath(exists=True, allow_dash=True)),
        click.argument("runs", nargs=-1, required=True, type=InputPath(exists=True, dir_okay=False, allow_dash=True)),
        click.option(
            "-m",
            "--measure",
            "measures",
            multiple=True,
            metavar="NAME",
            help="Measure to compare (repeatable; either notation: P@5, ndcg_cut.20): exactly these, in the "
            "order given, each measure once, the correction over them alone. None given: the primary set "
            "nDCG@10, R@5, MRR.",
        ),
        click.option(
            "--primary/--no-primary",
            default=None,
            help="--primary compares the primary set nDCG@10, R@5, MRR before the -m measures; --no-primary "
            "refuses to fall back on it when no -m is given. Default: the -m measures, or the primary set "
            "when there is none.",
        ),
        click.option(
            "--all-measures",
            is_flag=True,
            help="Compare every measure of the RAG table (P, R, F1, HitRate, nDCG at 1, 3, 5, 10, MRR, MAP) "
            "instead of the primary set, then any -m not in it; the correction then covers all of them.",
        ),
        click.option(
            "--topics",
            "topics_path",
            type=QrelsPath(exists=True, dir_okay=False),
            default=None,
            help="Topics file (query_id<TAB>text) of TREC qrels: its queries with no judgment are "
            "compared too (scored 0).",
        ),
        click.option(
            "-b",
            "--baseline",
            metavar="RUN",
            help="Baseline run: its name (run tag) or its file. Default: the first run.",
        ),
        click.option(
            "--test",
            type=click.Choice(["t", "randomization", "tukey-hsd", "tukey"]),
            default=None,
            help="Test: paired t-test (the default against a baseline), randomization (sign-flip) test; with "
            "--all-pairs also tukey-hsd (the randomised Tukey HSD, its default) or tukey (parametric, ranx's).",
        ),
        click.option(
            "--interval",
            type=click.Choice(["t", "randomization", "bootstrap"]),
            default=None,
            help="Interval of each delta. Default: the test's own (the t-interval with the t-test, the deltas the "
            "randomization test keeps with it), which excludes 0 exactly when the uncorrected test rejects at "
            "1 - confidence; bootstrap (BCa) on request.",
        ),
        click.option(
            "--correction",
            type=click.Choice(["holm", "bonferroni", "none"]),
            default="holm",
            show_default=True,
            help="Correction for multiple comparisons over measures x runs.",
        ),
        click.option("--alpha", type=PROBABILITY, default=0.05, show_default=True, help="Significance level."),
        click.option(
            "--confidence",
            type=PROBABILITY,
            default=0.95,
            show_default=True,
            help="Confidence level of the intervals (1 - alpha keeps them in step with the test).",
        ),
        click.option(
            "--n-resamples",
            type=Integer(1, 10_000_000),
            default=10_000,
            show_default=True,
            help="Resamples for the randomization test and interval, and for the bootstrap.",
        ),
        click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of every random draw."),
        click.option("-q", "--per-query", is_flag=True, help="Add per-query values and deltas."),
        common.level("Lowest judgment that counts as relevant."),
        common.max_retrieved("Keep only the top N documents of each query."),
        common.judged_only("Drop unjudged documents before ranking."),
        common.trec_eval_9(),
        common.qrels_format(),
        common.run_format(),
    ]
    for option in reversed(options):
        function = option(function)
    return judgments_option(id_key_option(doc_map_options(function)))


def _run_comparison(qrels_path: str, run_paths: tuple[str, ...], options: dict[str, Any]) -> Any:
    from trec_rag_eval import api

    shared = dict(
        measures=list(options["measures"]),
        all_measures=options["all_measures"],
        primary=options["primary"],
        correction=options["correction"],
        alpha=options["alpha"],
        n_resamples=options["n_resamples"],
        seed=options["seed"],
        settings=api.Settings(relevance_level=options["relevance_level"], judged_only=options["judged_only"],
                              max_retrieved=options["max_retrieved"], trec_eval_9=options["trec_eval_9"]),
        qrels_format=options["qrels_format"],
        topics=options["topics_path"],
        judgments=options["judgments"],
        run_format=options["run_format"],
        doc_map=options["doc_map"],
        doc_id_pattern=options["doc_id_pattern"],
        id=options["id_key"],
    )
    if options.get("all_pairs"):
        # a --baseline, --interval or --confidence given too is the library's to refuse, in its words said with
        # the flags
        typed_confidence = click.get_current_context().get_parameter_source("confidence") != ParameterSource.DEFAULT
        return api.compare(qrels_path, list(run_paths), baseline=options["baseline"], pairs="all",
                           test=options["test"] or "tukey-hsd", interval=options["interval"],
                           confidence=options["confidence"] if typed_confidence else None, **shared)
    return api.compare(
        qrels_path,
        list(run_paths),
        baseline=options["baseline"],
        test=options["test"] or "t",
        confidence=options["confidence"],
        interval=options["interval"],
        **shared,
    )


@click.command("compare")
@_comparison_options
@common.output_options(COMPARISON, ALL_PAIRS, default="table", only={ALL_PAIRS: "--all-pairs only"},
                       force_help="Allow -o and --plot to replace an existing file (never an input).")
@click.option(
    "--all-pairs",
    is_flag=True,
    help="Test every pair of runs instead of each against the baseline: randomised Tukey HSD by default "
    "(--test tukey-hsd), each measure's pairs one family; a table of runs with superscript letters naming the "
    "runs each one beats.",
)
@click.option(
    "--plot",
    "plot_path",
    type=OutputPath(dir_okay=False),
    default=None,
    metavar="FILE",
    help="Also draw the mean deltas with intervals and the sorted per-query deltas (.png or .svg).",
)
def compare_command(
    qrels: str, runs: tuple[str, ...], output_format: str, output: str | None, plot_path: str | None,
    **options: Any
) -> None:
    """Compare runs with a baseline: deltas, paired tests, their intervals, verdicts.

    \b
    trec-rag-eval compare QRELS RUN_A RUN_B [RUN_C ...]
    trec-rag-eval compare --test randomization -m P@5 -m MAP QRELS A B   (P@5, MAP)
    trec-rag-eval compare -m R@5 QRELS A B                (R@5 alone)
    trec-rag-eval compare -f latex QRELS A B C > table.tex
    trec-rag-eval compare --plot deltas.png QRELS A B
    trec-rag-eval compare --all-pairs QRELS A B C D       (every pair: randomised Tukey HSD)
    trec-rag-eval compare --all-pairs -f latex QRELS A B C > letters.tex

    The measures are the -m measures, in the order given; without -m, the primary set nDCG@10,
    R@5, MRR (--primary: that set, then the -m measures; --all-measures: the whole RAG table, then
    the -m measures). The baseline is the first run unless --baseline says
    otherwise. Each other run is compared with it on every measure; p-values are corrected over all
    those comparisons (Holm by default), and each verdict says over how many. Each interval is the
    test's own (--interval says otherwise): at --confidence 1 - alpha (the default) it excludes 0
    exactly when the uncorrected test rejects; where the corrected verdict and the interval could be
    read two ways, the verdict says that the test rules, and why.

    --all-pairs tests every pair of runs (no baseline) on each measure, the pairs of a measure
    being one family: the randomised Tukey HSD (Carterette 2012) by default; --test tukey is the
    parametric Tukey HSD (scipy's, as ranx), --test t or randomization a paired test per pair with
    --correction over the measure's pairs.
    """
    all_pairs = options["all_pairs"]
    # what the command prints and draws, checked as the library checks what the pairs compared have
    check_compare("all" if all_pairs else "baseline", per_query=options["per_query"], plot=plot_path)
    try:
        find_format(output_format, ALL_PAIRS if all_pairs else COMPARISON)  # the registry's refusal, before any work
    except UsageError as refused:
        if all_pairs or output_format != "html":
            raise
        # the page of a comparison with a baseline is the report command's: the library's sentence cannot name it
        raise UsageError(f"{refused.message}, or as an HTML page by the report command", refused.parameters) from None
    if plot_path is not None:
        from trec_rag_eval.render.plot import plot_format, require_matplotlib

        plot_format(plot_path)  # a bad suffix, or no matplotlib, fails before any work or output
        require_matplotlib("--plot")
    check_outputs([output, plot_path], options["force"], [qrels, *runs, options["doc_map"]])  # before any work
    comparison = _run_comparison(qrels, runs, options)
    if all_pairs:
        text = comparison.render(output_format)
    else:
        from trec_rag_eval.render.comparison import render

        text = render(comparison, output_format, per_query=options["per_query"])
    common.write_results(text, output, options["force"])
    if plot_path is not None:
        from trec_rag_eval.render.plot import comparison_figure, figure_bytes, plot_format

        write_atomic(plot_path, figure_bytes(comparison_figure(comparison), plot_format(plot_path)),
                     force=options["force"])
        click.echo(f"Wrote {plot_path}", err=True)


@click.command("report")
@_comparison_options
@common.output("Where to write the report (refuses to overwrite without --force).", required=True,
               metavar="FILE.html")
@common.force("Allow -o to replace an existing file (never an input).")
@click.option("--title", default=None, help="Title of the page.")
@click.option("--no-plots", is_flag=True, help="Leave the pictures out (then matplotlib is not needed).")
def report_command(
    qrels: str, runs: tuple[str, ...], output: str, title: str | None, no_plots: bool, **options: Any
) -> None:
    """Write one self-contained HTML page comparing runs: tables, verdicts and plots, no external files.

    The pictures need matplotlib (pip install 'trec-rag-eval[plot]'), or give --no-plots.

    \b
    trec-rag-eval report QRELS RUN_A RUN_B -o report.html
    """
    if not no_plots:
        from trec_rag_eval.render.plot import require_matplotlib

        require_matplotlib("report (or give --no-plots)")
    check_outputs([output], options["force"], [qrels, *runs, options["doc_map"]])
    comparison = _run_comparison(qrels, runs, options)
    from trec_rag_eval.render.html import render_html

    page = render_html(comparison, per_query=options["per_query"], title=title, images=not no_plots)
    write_atomic(output, page, force=options["force"])
    write_stream(f"Wrote {output}: {len(comparison.runs)} runs, {len(comparison.measures)} measures, "
                 f"{comparison.n_queries} queries\n", sys.stdout)

