"""Renderings of a ``TopicSetPlan`` (``trec-rag-eval plan``): the table, one verdict per measure and the footer
in each output format that writes a plan (``plan_table``, ``plan_markdown``, ...: ``render.output_formats``
names them); the notebook table; the power curves.

Formatting only: every number is read from the plan (``compare.planning``); the power curves evaluate the
design's power function (``compare.sample_size``) over a range of query counts.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from typing import TYPE_CHECKING, Any

from trec_rag_eval.number_formats import format_magnitude, format_needed, format_number, plain_data, plain_number
from trec_rag_eval.render.latex import latex_escape
from trec_rag_eval.render.notebook import html_list, html_table
from trec_rag_eval.render.numbers import format_percent, format_plain
from trec_rag_eval.render.text_table import aligned_lines, labelled_lines

if TYPE_CHECKING:
    from trec_rag_eval.compare.planning import DesignSize, MeasurePlan, TopicSetPlan



def format_queries(queries: int | None, limit: int) -> str:
    """A number of queries with thousands separators; None is more than the designs look at."""
    return f"more than {limit:,}" if queries is None else f"{queries:,}"


def format_power(value: float) -> str:
    """A power as a whole percentage: ``6%``, ``80%``; below 1% and above 99% said as such; none as ``-``."""
    if math.isnan(value):
        return "-"
    if value < 0.01:
        return "< 1%"
    if value > 0.99:
        return "> 99%"
    return f"{round(value * 100)}%"


def _limit() -> int:
    from trec_rag_eval.compare.sample_size import MAX_QUERIES

    return MAX_QUERIES


def plan_title(plan: TopicSetPlan) -> str:
    width = f", CI width {format_magnitude(plan.ci_width)}" if plan.ci_width is not None else ""
    return (f"Queries needed, from a pilot of {len(plan.runs)} runs ({', '.join(plan.runs)}) over {plan.n_queries} "
            f"queries: delta {format_magnitude(plan.delta)}, alpha {format_plain(plan.alpha)}, power "
            f"{format_plain(plan.power)}{width}")


def plan_header(plan: TopicSetPlan) -> list[str]:
    return ["measure", "design", "sd", "queries", "approx.", f"{format_percent(plan.confidence)} range",
            "pilot power", f"detects at {plan.at_queries:,}"]


def _design_label(plan: TopicSetPlan, size: DesignSize) -> str:
    if size.design == "ci_width":
        return f"CI width <= {format_magnitude(plan.ci_width)}"
    return size.name


def _range(size: DesignSize, limit: int) -> str:
    if size.queries_low is None and size.queries_high is None:
        return "-"
    return f"{format_queries(size.queries_low, limit)}-{format_queries(size.queries_high, limit)}"


def plan_rows(plan: TopicSetPlan) -> list[list[str]]:
    """The cells of the table, as every format of a table and the notebook show them."""
    limit = _limit()
    rows = []
    for measure_plan in plan.plans:
        for i, size in enumerate(measure_plan.designs):
            none = not measure_plan.plannable
            rows.append([
                measure_plan.measure if i == 0 else "",
                _design_label(plan, size),
                format_number(measure_plan.sd) if i == 0 else "",
                "-" if none else format_queries(size.queries, limit),
                "-" if size.approx_queries is None else f"{size.approx_queries:,}",
                "-" if none else _range(size, limit),
                format_power(size.pilot_power),
                _detectable(measure_plan, size.detectable_delta),
            ])
    return rows


def _detectable(measure_plan: MeasurePlan, delta: float) -> str:
    """A detectable delta, or ``> span`` when it is more than the measure can differ by."""
    if delta > measure_plan.value_span:  # NaN (no span known) compares False
        return f"> {format_plain(measure_plan.value_span)}"
    return format_magnitude(delta)


def plan_verdicts(plan: TopicSetPlan) -> list[tuple[str, str]]:
    """One sentence per measure: what each design needs, the range the pilot's variance allows (and whether
    it is wide), and what the pilot (or ``at_queries``) can detect."""
    return [(measure_plan.measure, _verdict(plan, measure_plan)) for measure_plan in plan.plans]


def _verdict(plan: TopicSetPlan, measure_plan: MeasurePlan) -> str:
    limit = _limit()
    delta = format_magnitude(plan.delta)
    if not measure_plan.plannable:
        same = ("the runs differ by the same amount on every query" if plan.paired else
                "the runs differ by the same amounts on every query (the two-way ANOVA leaves no residual)")
        return f"{same}, so the pilot has no variance to plan from: judge queries on which they differ"
    interval = f"the {format_percent(plan.confidence)} interval of the pilot's variance"
    ratio = measure_plan.variance_high / measure_plan.variance_low
    wide = (f": a wide range, as {plan.n_queries} queries pin the variance down only within a factor of "
            f"{ratio:.1f}" if measure_plan.wide else "")
    goal = f"with {format_percent(plan.power)} power at alpha {format_plain(plan.alpha)}"
    if plan.paired:
        main = measure_plan.design("paired_t")
        text = (f"a paired t-test needs {format_queries(main.queries, limit)} queries to detect a difference of "
                f"{delta} {goal} ({_between(main, limit)} over {interval}{wide})")
    else:
        main, pairs = measure_plan.design("anova"), measure_plan.design("tukey_hsd")
        text = (f"a one-way ANOVA over the {len(plan.runs)} runs needs {format_queries(main.queries, limit)} queries "
                f"to detect a range of {delta} between the best and worst run {goal} ({_between(main, limit)} over "
                f"{interval}{wide}), and a Tukey HSD {format_queries(pairs.queries, limit)} to find a pair {delta} "
                f"apart ({_between(pairs, limit)})")
    if plan.ci_width is not None:
        width = measure_plan.design("ci_width")
        which = "the difference" if plan.paired else "a pair's difference"
        text += (f"; a {format_percent(1 - plan.alpha)} interval of {which} expected no wider than "
                 f"{format_magnitude(plan.ci_width)} needs {format_queries(width.queries, limit)} "
                 f"({_between(width, limit)})")
    found = "a difference" if plan.paired else "a range"
    if main.detectable_delta > measure_plan.value_span:
        detects = (f"no difference {measure_plan.measure} can take (its values span "
                   f"{format_plain(measure_plan.value_span)}; the test would need "
                   f"{format_needed(main.detectable_delta)})")
    elif main.detectable_delta == math.inf:  # an unbounded measure: as compare's verdict says it
        detects = "no difference a float holds"
    else:
        detects = f"{found} of about {format_magnitude(main.detectable_delta)}"
    if plan.at_queries == plan.n_queries:
        text += (f"; the pilot's {plan.n_queries} queries detect {detects} and have {format_power(main.pilot_power)} "
                 f"power for {delta}")
    else:
        text += (f"; {plan.at_queries:,} queries would detect {detects} ({format_power(main.power_at_queries)} "
                 f"power for {delta}), the pilot's {plan.n_queries} have {format_power(main.pilot_power)}")
    return text


def _between(size: DesignSize, limit: int) -> str:
    return f"{format_queries(size.queries_low, limit)} to {format_queries(size.queries_high, limit)}"


def plan_footer(plan: TopicSetPlan) -> list[str]:
    """What was computed, one line per design, then the range and the columns."""
    first = plan.plans[0] if plan.plans else None
    df = first.variance_df if first is not None else 0
    lines = []
    if plan.paired:
        lines.append(f"paired t-test: exact power from the noncentral t (scipy); sd = the pilot's sd of the per-query "
                     f"differences ({df} df); approx. = ((z(alpha/2) + z(beta)) sd / delta)^2 + z(alpha/2)^2 / 2, "
                     "the normal approximation Sakai's design starts from (Sakai 2016).")
    else:
        lines.append(f"one-way ANOVA: exact power from the noncentral F, delta the range between the best and worst "
                     "run, the others at the grand mean (lambda = n delta^2 / (2 sd^2)); approx. = the noncentral "
                     "chi-square's lambda (an infinite error df) / (delta^2 / (2 sd^2)) (Sakai 2016). Tukey HSD: "
                     "the power to find one pair delta apart (studentized range, noncentral t; sd^2 for each run). "
                     f"sd^2 = the residual variance of the pilot's two-way ANOVA without replication ({df} df; "
                     "Sakai, EVIA 2014).")
    if plan.ci_width is not None:
        variance = "sd^2" if plan.paired else "2 sd^2 (a pair's difference)"
        lines.append(f"CI width: the fewest queries whose {format_percent(1 - plan.alpha)} t-interval, of variance "
                     f"{variance}, is expected no wider than {format_magnitude(plan.ci_width)}; approx. = "
                     "(2 z(alpha/2) sd / width)^2 (Sakai 2016).")
    lines.append(f"{format_percent(plan.confidence)} range: the queries needed at the ends of the "
                 f"{format_percent(plan.confidence)} chi-square interval of the pilot's variance. pilot power: the "
                 f"power the pilot's {plan.n_queries} queries have for {format_magnitude(plan.delta)}; detects: the "
                 f"delta found with power {format_plain(plan.power)} at {plan.at_queries:,} queries.")
    return lines


# --- the formats ----------------------------------------------------------------------------------------
def plan_text(plan: TopicSetPlan, fmt: str = "table") -> str:
    """``plan`` in the output format ``fmt``: one that writes a plan (``render.output_formats``:
    ``choices(PLAN)``; ``table``, the command's text, by default)."""
    from trec_rag_eval.render.output_formats import PLAN, find_format

    return str(find_format(fmt, PLAN).render(PLAN, plan))


def plan_table(plan: TopicSetPlan) -> str:
    rows = [plan_header(plan), *plan_rows(plan)]
    lines = [plan_title(plan), "", *aligned_lines(rows, right={2, 3, 4, 5, 6, 7})]
    said = labelled_lines(((m, f"{text}.") for m, text in plan_verdicts(plan)), plan.measures)
    lines += ["", "Verdicts:", *said, "", *plan_footer(plan)]
    return "\n".join(lines) + "\n"


def plan_markdown(plan: TopicSetPlan) -> str:
    head = plan_header(plan)
    lines = [f"**{plan_title(plan)}**", "", "| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in plan_rows(plan)]
    lines += ["", *(f"- **{m}**: {text}." for m, text in plan_verdicts(plan)), "", *plan_footer(plan)]
    return "\n".join(lines) + "\n"


def plan_latex(plan: TopicSetPlan) -> str:
    head = plan_header(plan)
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{ll" + "r" * (len(head) - 2) + "}", r"\toprule",
             " & ".join(latex_escape(h) for h in head) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(cell) for cell in row) + r" \\" for row in plan_rows(plan)]
    lines += [r"\bottomrule", r"\end{tabular}", r"\caption{" + latex_escape(plan_title(plan)) + ".}", r"\end{table}"]
    lines += [f"% {latex_escape(m)}: {latex_escape(text)}." for m, text in plan_verdicts(plan)]
    lines += [f"% {latex_escape(line)}" for line in plan_footer(plan)]
    return "\n".join(lines) + "\n"


def plan_csv(plan: TopicSetPlan) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    rows = plan.rows()
    columns = list(rows[0]) if rows else []
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row[c]) for c in columns])
    return out.getvalue()


def _cell(value: Any) -> Any:
    """A CSV field: a count as an integer, a number at full precision, nothing (None, NaN) as empty."""
    if isinstance(value, (bool, int, str)):
        return value
    number = plain_number(value)
    return "" if number is None else number


def plan_json(plan: TopicSetPlan) -> str:
    return json.dumps(plain_data(plan.to_dict()), indent=2, ensure_ascii=False) + "\n"


def plan_html(plan: TopicSetPlan) -> str:
    """The notebook table: the command's table with its title, its verdicts and its footer."""
    return (html_table(plan_header(plan), plan_rows(plan), plan_title(plan)) + html_list(plan_verdicts(plan))
            + "".join(f"<p>{html.escape(line)}</p>" for line in plan_footer(plan)))


# --- the power curves -----------------------------------------------------------------------------------
CURVE_FACTORS = (0.5, 1.0, 2.0)
"""The deltas drawn: half, once and twice the plan's delta."""


def plan_figure(plan: TopicSetPlan) -> Any:
    """Power against the number of queries (log scale) for half, once and twice the plan's delta, one panel per
    measure: the paired t-test for two runs, the one-way ANOVA for more (the Tukey HSD's curve lies just right
    of it and costs a quantile of the studentized range per point). The target power is a dashed line, the
    pilot's queries a dotted one. Needs matplotlib (the ``plot`` extra)."""
    from trec_rag_eval.render.plot import NEUTRAL, RUN_COLOURS, figure_class, plain_text, require_matplotlib

    require_matplotlib("plot()")
    Figure = figure_class()  # noqa: N806 - matplotlib's Figure, as a notebook shows it

    columns = min(3, max(1, len(plan.plans)))
    rows = (len(plan.plans) + columns - 1) // columns
    figure = Figure(figsize=(4.6 * columns, 3.6 * rows), layout="constrained")
    with plain_text():
        for index, measure_plan in enumerate(plan.plans):
            axes = figure.add_subplot(rows, columns, index + 1)
            axes.set_title(measure_plan.measure)
            axes.set_xlabel("queries")
            axes.set_ylabel("power")
            axes.set_ylim(0, 1.02)
            if not measure_plan.plannable:
                axes.text(0.5, 0.5, "no variance in the pilot", ha="center", va="center", transform=axes.transAxes)
                continue
            grid = _query_grid(plan, measure_plan)
            for colour, factor in zip(RUN_COLOURS, CURVE_FACTORS, strict=False):
                delta = plan.delta * factor
                axes.plot(grid, _powers(plan, measure_plan, grid, delta), color=colour,
                          label=f"delta {format_magnitude(delta)}")
            axes.set_xscale("log")
            axes.axhline(plan.power, color=NEUTRAL, linestyle="--", linewidth=1)
            axes.axvline(plan.n_queries, color=NEUTRAL, linestyle=":", linewidth=1, label="pilot")
            axes.legend(fontsize="small", loc="lower right")
        design = "paired t-test" if plan.paired else f"one-way ANOVA over {len(plan.runs)} runs"
        figure.suptitle(f"Power against queries ({design}, alpha {format_plain(plan.alpha)}), from a pilot of "
                        f"{plan.n_queries} queries")
    return figure


def _query_grid(plan: TopicSetPlan, measure_plan: MeasurePlan) -> Any:
    """From 2 queries to past what half the delta needs (at most the designs' limit), log-spaced."""
    import numpy as np

    from trec_rag_eval.compare import sample_size

    sd, runs = measure_plan.sd, len(plan.runs)
    half = plan.delta * min(CURVE_FACTORS)
    if plan.paired:
        far = sample_size.approx_paired_t(half, sd, plan.alpha, plan.power)
    else:
        far = sample_size.approx_anova(half, measure_plan.variance, runs, plan.alpha, plan.power)
    top = min(float(sample_size.MAX_QUERIES), max(4.0 * far, 2.0 * plan.n_queries, 10.0))
    return np.unique(np.geomspace(2, top, 120).astype(np.int64))


def _powers(plan: TopicSetPlan, measure_plan: MeasurePlan, grid: Any, delta: float) -> list[float]:
    from trec_rag_eval.compare import sample_size

    if plan.paired:
        return [sample_size.paired_t_power(int(n), delta, measure_plan.sd, plan.alpha) for n in grid]
    return [sample_size.anova_power(int(n), delta, measure_plan.variance, len(plan.runs), plan.alpha) for n in grid]
