"""``trec-rag-eval plan``: a thin click layer over ``plan()`` (topic set size design from a pilot)."""

from __future__ import annotations

from typing import Any

import click

from trec_rag_eval.api import check_outputs
from trec_rag_eval.cli import options as common
from trec_rag_eval.cli.chunks import doc_map_options, id_key_option
from trec_rag_eval.cli.llm import judgments_option
from trec_rag_eval.cli.params import InputPath, Integer, OutputPath, QrelsPath, Real
from trec_rag_eval.errors import UsageError
from trec_rag_eval.io.atomic import write_atomic
from trec_rag_eval.render.output_formats import PLAN

# its commands and their lines in `trec-rag-eval --help`, read without importing this module (cli.commands)
COMMANDS = {"plan": "How many queries do I need? Topic set size design from a pilot's runs."}

NUMBER = Real()
"""Any finite number: the plan's parameters are checked by the library (``compare.planning``), whose one-line
error names the flag (a --delta of 0, an --alpha of 1), as the Python caller's names the parameter."""


@click.command("plan")
@click.argument("qrels", type=QrelsPath(exists=True, allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=InputPath(exists=True, dir_okay=False, allow_dash=True))
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help="Measure to plan for (repeatable; either notation: P@5, ndcg_cut.20). None given: compare's "
              "primary set nDCG@10, R@5, MRR.")
@click.option("--delta", type=NUMBER, default=None, metavar="D",
              help="Required: the smallest difference worth detecting, in the measure's units (0.02: two points of "
              "nDCG). "
              "With more than two runs: the range between the best and worst run (ANOVA) and a pair's difference "
              "(Tukey HSD).")
@click.option("--alpha", type=NUMBER, default=0.05, show_default=True, help="Significance level of the test.")
@click.option("--power", type=NUMBER, default=0.8, show_default=True,
              help="Probability of detecting a difference of --delta.")
@click.option("--ci-width", "ci_width", type=NUMBER, default=None, metavar="W",
              help="Also the queries needed for a (1 - alpha) interval of a difference expected no wider than W.")
@click.option("--queries", type=Integer(), default=None, metavar="N",
              help="Give the delta detectable (and the power for --delta) with N queries. Default: the pilot's.")
@click.option("--confidence", type=NUMBER, default=0.95, show_default=True,
              help="Level of the interval on the pilot's variance that gives the range of query counts.")
@click.option("--topics", "topics_path", type=QrelsPath(exists=True, dir_okay=False), default=None,
              help="Topics file (query_id<TAB>text) of TREC qrels: its queries with no judgment count too (scored 0).")
@common.level("Lowest judgment that counts as relevant.")
@common.max_retrieved("Keep only the top N documents of each query.")
@common.judged_only("Drop unjudged documents before ranking.")
@common.trec_eval_9()
@common.qrels_format()
@common.run_format()
@common.output_options(PLAN, default="table",
                       force_help="Allow -o and --plot to replace an existing file (never an input).")
@click.option("--plot", "plot_path", type=OutputPath(dir_okay=False), default=None, metavar="FILE",
              help="Also draw power against the number of queries for half, once and twice --delta (.png or .svg).")
@judgments_option
@id_key_option
@doc_map_options
def plan_command(qrels: str, runs: tuple[str, ...], output_format: str, output: str | None, plot_path: str | None,
                 **options: Any) -> None:
    """How many queries do I need? Topic set size design from a pilot.

    \b
    trec-rag-eval plan QRELS RUN_A RUN_B --delta 0.02
    trec-rag-eval plan -m nDCG@10 --delta 0.02 --queries 200 QRELS A B
    trec-rag-eval plan --delta 0.05 --ci-width 0.1 QRELS A B C      (ANOVA, Tukey HSD)
    trec-rag-eval plan --delta 0.02 --plot power.png -f json QRELS A B > plan.json

    The pilot runs are evaluated as compare evaluates them (the qrels' queries; a query missing from
    a run scores 0). From their per-query values, each measure's variance: with two runs the
    variance of the per-query differences, with more the residual variance of a two-way ANOVA
    without replication (Sakai, "Topic set size design", IRJ 2016; EVIA 2014). Then the smallest
    number of queries for which a paired t-test (two runs), or a one-way ANOVA and a Tukey HSD over
    all pairs (more runs), detects --delta at --alpha with --power, computed exactly (noncentral t
    and F, studentized range), the normal approximation beside; with --ci-width, the queries whose
    interval of a difference is expected no wider. A variance estimated from few queries is itself
    uncertain: the range gives the counts at the ends of its chi-square interval (--confidence).
    Last, the power the pilot has for --delta and the delta it detects (or --queries N would).
    """
    if options["delta"] is None:
        raise UsageError("plan needs --delta D: the smallest difference worth detecting (0.02: two points of nDCG)")
    if plot_path is not None:
        from trec_rag_eval.render.plot import plot_format, require_matplotlib

        plot_format(plot_path)  # a bad suffix, or no matplotlib, fails before any work or output
        require_matplotlib("--plot")
    check_outputs([output, plot_path], options["force"], [qrels, *runs, options["doc_map"]])  # before any work
    from trec_rag_eval import api

    result = api.plan(
        qrels, list(runs), list(options["measures"]) or None, delta=options["delta"], alpha=options["alpha"],
        power=options["power"], ci_width=options["ci_width"], queries=options["queries"],
        confidence=options["confidence"],
        settings=api.Settings(relevance_level=options["relevance_level"], judged_only=options["judged_only"],
                              max_retrieved=options["max_retrieved"], trec_eval_9=options["trec_eval_9"]),
        qrels_format=options["qrels_format"], topics=options["topics_path"], judgments=options["judgments"],
        run_format=options["run_format"], doc_map=options["doc_map"], doc_id_pattern=options["doc_id_pattern"],
        id=options["id_key"],
    )
    from trec_rag_eval.render.planning import plan_text

    common.write_results(plan_text(result, output_format), output, options["force"])
    if plot_path is not None:
        from trec_rag_eval.render.planning import plan_figure
        from trec_rag_eval.render.plot import figure_bytes, plot_format

        write_atomic(plot_path, figure_bytes(plan_figure(result), plot_format(plot_path)), force=options["force"])
        click.echo(f"Wrote {plot_path}", err=True)
