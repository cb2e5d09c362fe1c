"""Text renderings of a ``Comparison``, one function per output format that writes one (``render_table``,
``render_markdown``, ...: ``render.output_formats`` names them).

Formatting only: every number is read from the ``Comparison``; nothing is computed here
except the per-query differences it defines (``Comparison.deltas``). Measures keep their
order, runs their input order, queries the comparison's query order.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import TYPE_CHECKING, Any

from trec_rag_eval.number_formats import format_delta, format_magnitude, format_needed, format_number, plain_number
from trec_rag_eval.render.latex import latex_best, latex_cell, latex_escape, latex_table
from trec_rag_eval.render.numbers import (
    format_effect,
    format_p,
    format_percent,
    format_plain,
    p_phrase,
)
from trec_rag_eval.render.text_table import aligned_lines, labelled_lines

if TYPE_CHECKING:
    from trec_rag_eval.compare.comparison import Comparison, PairResult

SIGNIFICANT_MARK = "*"
TEST_NAMES = {"t": "paired t-test", "randomization": "paired randomization test"}
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "none"}


def verdict(comparison: Comparison, pair: PairResult) -> str:
    """One line that says what was tested, e.g. ``B better: +0.043, p = 0.003 after Holm over 3
    comparisons (p = 0.001 uncorrected), 95% CI [+0.021, +0.064]`` or ``B vs A: not significant
    after Holm over 22 comparisons (p = 0.012 uncorrected), +0.300, 95% CI [+0.150, +0.450] ...``.
    """
    if pair.wins == 0 and pair.losses == 0:
        return f"{pair.run} vs {pair.baseline}: identical on every query"
    interval = f"[{format_delta(pair.ci_low)}, {format_delta(pair.ci_high)}]"
    ci_text = f"{format_percent(comparison.confidence)} CI {interval}"
    family = len([p for p in comparison.pairs if not math.isnan(p.p_value)])
    corrected = comparison.correction != "none" and family > 1
    if corrected:
        method = f"{CORRECTION_NAMES[comparison.correction]} over {family} comparisons"
        raw = f"{p_phrase(pair.p_value)} uncorrected"
    else:
        method, raw = f"alpha {format_plain(comparison.alpha)}", ""
    if pair.significant:
        p_text = f"{p_phrase(pair.p_adjusted)} after {method}" if corrected else p_phrase(pair.p_value)
        if raw:
            p_text += f" ({raw})"
        ruling = _ruling(comparison, pair, family, corrected)
        return f"{pair.run} {pair.direction}: {format_delta(pair.delta)}, {p_text}, {ci_text}" + (
            f" ({ruling})" if ruling else "")
    if corrected:
        tested = f"not significant after {method} ({raw})"
    else:
        tested = f"not significant ({p_phrase(pair.p_value)})"
    text = f"{pair.run} vs {pair.baseline}: {tested}, {format_delta(pair.delta)}, {ci_text}"
    ruling = _ruling(comparison, pair, family, corrected)
    if ruling:
        text += f" ({ruling})"
    if not math.isnan(pair.mdd_beyond_span):
        return (f"{text}; too few queries ({comparison.n_queries}) to detect any difference {pair.measure} can take "
                f"(its values span {format_plain(pair.value_span)}; a paired t-test at power "
                f"{format_plain(comparison.power)} would need {format_needed(pair.mdd_beyond_span)})")
    if pair.min_detectable_delta == math.inf:  # an unbounded measure: no noncentrality a float holds has the power
        return f"{text}; this query set detects no difference a float holds"
    if not math.isnan(pair.min_detectable_delta):
        text += f"; this query set detects about {format_magnitude(pair.min_detectable_delta)}"
        if abs(pair.delta) >= pair.min_detectable_delta:
            # a delta above the MDD that is not significant reads as a contradiction: it is not one
            text += (f" ({format_percent(comparison.power)} of the time only: a planning figure, the test rules "
                     "here)")
    return text

def _ruling(comparison: Comparison, pair: PairResult, family: int, corrected: bool) -> str:
    """When the interval and the verdict could be read two ways, which one rules and why: the test,
    after the correction, is what decides (it is the figure the family of comparisons was corrected
    for); the interval can only disagree when it is not adjusted for that family, is another method
    than the test's, or has another level than 1 - alpha. Empty when they agree."""
    excludes_zero = pair.ci_low > 0 or pair.ci_high < 0
    if excludes_zero == pair.significant:
        return ""
    reasons = []
    if corrected and excludes_zero:
        reasons.append(f"the interval is not adjusted for the {family} comparisons")
    if comparison.interval != comparison.test:
        reasons.append(f"the interval is {INTERVAL_ARTICLES[comparison.interval]}, not the "
                       f"{TEST_NAMES[comparison.test]}'s own, and can disagree with it")
    elif not math.isclose(comparison.confidence, 1 - comparison.alpha):
        reasons.append(f"its level, {format_percent(comparison.confidence)}, is not 1 - alpha")
    if not reasons:
        return ""
    return f"the test rules: {'; '.join(reasons)}"


INTERVAL_ARTICLES = {"t": "a t-interval", "randomization": "a randomization interval",
                     "bootstrap": "a bootstrap interval"}


def verdicts(comparison: Comparison) -> list[tuple[str, str]]:
    """(measure, verdict line) for every pair, in table order."""
    return [(pair.measure, verdict(comparison, pair)) for pair in comparison.pairs]

def comparison_footer(comparison: Comparison) -> str:
    """What was computed and how: test, correction, seed, number of queries."""
    family = len(comparison.pairs)
    correction = (
        "no correction for multiple comparisons"
        if comparison.correction == "none"
        else f"{CORRECTION_NAMES[comparison.correction]} correction over {family} "
        f"comparison{'s' if family != 1 else ''}"
    )
    test = TEST_NAMES[comparison.test]
    if comparison.test == "randomization":
        test += f" ({comparison.n_resamples} resamples)"
    seed = "none (not reproducible)" if comparison.seed is None else str(comparison.seed)
    drawn = f"seed {seed}; " if comparison.draws else ""  # a t-test with its t-interval draws nothing
    return (
        f"{test}, {correction}, alpha {format_plain(comparison.alpha)}; "
        f"{format_percent(comparison.confidence)} CI: {comparison.interval_method}, not adjusted; "
        f"{drawn}{comparison.n_queries} queries; baseline {comparison.baseline}. "
        f"d = mean delta / sd of deltas. MDD = smallest delta a paired t-test detects here "
        f"(alpha {format_plain(comparison.alpha)}, power {format_plain(comparison.power)}, observed sd)."
    )


def _p_header(comparison: Comparison) -> str:
    if comparison.correction == "none":
        return "p"
    return f"p ({CORRECTION_NAMES[comparison.correction]})"


def summary_header(comparison: Comparison) -> list[str]:
    return [
        "measure",
        "run",
        "mean",
        "delta",
        f"{format_percent(comparison.confidence)} CI",
        _p_header(comparison),
        "d",
        "W/T/L",
        "MDD",
    ]


def summary_rows(comparison: Comparison) -> list[list[str]]:
    """One row per (measure, run); the baseline row carries only its mean."""
    rows: list[list[str]] = []
    for measure in comparison.measures:
        first = True
        for run in comparison.runs:
            label = measure if first else ""
            first = False
            mean = format_number(comparison.means[run][measure], missing="-")
            if run == comparison.baseline:
                rows.append([label, f"{run} (baseline)", mean, "", "", "", "", "", ""])
                continue
            pair = comparison.pair(measure, run)
            mark = SIGNIFICANT_MARK if pair.significant else ""
            rows.append(
                [
                    label,
                    run,
                    mean,
                    format_delta(pair.delta) + mark,
                    f"[{format_delta(pair.ci_low)}, {format_delta(pair.ci_high)}]",
                    format_p(pair.p_adjusted),
                    format_effect(pair.effect_size),
                    f"{pair.wins}/{pair.ties}/{pair.losses}",
                    format_magnitude(pair.min_detectable_delta),
                ]
            )
    return rows


def per_query_header(comparison: Comparison) -> list[str]:
    header = ["query_id", "measure", comparison.baseline]
    for run in comparison.others:
        header += [run, f"delta {run}"]
    return header


def per_query_rows(comparison: Comparison) -> list[list[str]]:
    """One row per (measure, query): baseline value, then each run's value and delta."""
    rows: list[list[str]] = []
    for measure in comparison.measures:
        base = comparison.values[comparison.baseline][measure]
        deltas = {run: comparison.deltas(measure, run) for run in comparison.others}
        for i, query_id in enumerate(comparison.query_ids):
            row = [query_id, measure, format_number(float(base[i]), missing="-")]
            for run in comparison.others:
                row += [
                    format_number(float(comparison.values[run][measure][i]), missing="-"),
                    format_delta(float(deltas[run][i])),
                ]
            rows.append(row)
    return rows


def _aligned(header: list[str], rows: list[list[str]], numeric_from: int) -> list[str]:
    """The table's lines, the columns from ``numeric_from`` on (the numbers) aligned to the right."""
    return aligned_lines([header, *rows], right=range(numeric_from, len(header)))


def comparison_title(comparison: Comparison) -> str:
    n_runs = len(comparison.runs)
    return (
        f"Comparison of {n_runs} runs over {comparison.n_queries} queries (baseline: {comparison.baseline})"
    )


def render_table(comparison: Comparison, per_query: bool = False) -> str:
    """Aligned plain-text table, verdict lines and footer, for a terminal."""
    lines = [comparison_title(comparison), ""]
    lines += _aligned(summary_header(comparison), summary_rows(comparison), numeric_from=2)
    lines += ["", f"{SIGNIFICANT_MARK} significant at alpha {comparison.alpha:g} after correction", ""]
    lines.append("Verdicts:")
    lines += labelled_lines(verdicts(comparison), comparison.measures)
    if per_query:
        lines += ["", "Per-query values and deltas (run - baseline):"]
        lines += _aligned(per_query_header(comparison), per_query_rows(comparison), numeric_from=2)
    lines += ["", comparison_footer(comparison)]
    return "\n".join(lines) + "\n"


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown_table(header: list[str], rows: list[list[str]], numeric_from: int) -> list[str]:
    lines = ["| " + " | ".join(_markdown_cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---:" if i >= numeric_from else ":---" for i in range(len(header))) + "|")
    for row in rows:
        lines.append("| " + " | ".join(_markdown_cell(c) for c in row) + " |")
    return lines


def render_markdown(comparison: Comparison, per_query: bool = False) -> str:
    """GitHub-flavoured Markdown: summary table, verdict list, footer."""
    lines = [f"**{comparison_title(comparison)}**", ""]
    lines += _markdown_table(summary_header(comparison), summary_rows(comparison), numeric_from=2)
    lines += ["", f"`{SIGNIFICANT_MARK}` significant at alpha {comparison.alpha:g} after correction.", ""]
    for measure, verdict in verdicts(comparison):
        lines.append(f"- **{_markdown_cell(measure)}**: {_markdown_cell(verdict)}")
    if per_query:
        lines += ["", "Per-query values and deltas (run - baseline):", ""]
        lines += _markdown_table(per_query_header(comparison), per_query_rows(comparison), numeric_from=2)
    lines += ["", f"_{comparison_footer(comparison)}_"]
    return "\n".join(lines) + "\n"


def _latex_mark(pair: PairResult | None) -> str:
    if pair is None or not pair.significant:
        return ""
    return r"$^{\dagger}$" if pair.delta > 0 else r"$^{\ddagger}$"


def render_latex(comparison: Comparison, per_query: bool = False, caption: str | None = None,
                 label: str | None = "tab:comparison") -> str:
    """A booktabs table ready for a paper: runs as rows, measures as columns, each measure's highest mean in
    bold, significance marks aligned in their column, a caption (``caption``, by default the number of
    queries, then what the bold and the marks mean) and a ``label``.

    dagger = significantly better than the baseline, double dagger = significantly worse, after
    the correction. Needs ``\\usepackage{booktabs}``.
    """
    measures, runs = comparison.measures, comparison.runs
    cells: dict[str, list[str]] = {}
    for measure in measures:
        means = [comparison.means[run][measure] for run in runs]
        marks = ["" if run == comparison.baseline else _latex_mark(comparison.pair(measure, run)) for run in runs]
        phantom = r"$^{\dagger}$" if any(marks) else ""
        cells[measure] = [latex_cell(mean, best, mark, phantom)
                          for mean, best, mark in zip(means, latex_best(means), marks, strict=True)]
    rows = [" & ".join([latex_escape(run) + (" (baseline)" if run == comparison.baseline else ""),
                        *(cells[m][i] for m in measures)]) for i, run in enumerate(runs)]
    correction = (
        "no correction"
        if comparison.correction == "none"
        else f"{CORRECTION_NAMES[comparison.correction]} correction"
    )
    test = "paired t-test" if comparison.test == "t" else "paired randomization test"
    seed = "none" if comparison.seed is None else str(comparison.seed)
    lead = f"Mean over {comparison.n_queries} queries." if caption is None else caption
    legend = (
        r"\textbf{Bold}: the highest mean of each measure. $^{\dagger}$/$^{\ddagger}$: "
        f"significantly better/worse than {latex_escape(comparison.baseline)} "
        f"({test}, {correction} over {len(comparison.pairs)} comparisons, "
        f"$p < {comparison.alpha:g}${f'; seed {seed}' if comparison.draws else ''})."
    )
    lines = latex_table("l" + "r" * len(measures), "Run & " + " & ".join(latex_escape(m) for m in measures), rows,
                        f"{lead} {legend}", label)
    if per_query:
        header = per_query_header(comparison)
        lines += ["", r"\begin{tabular}{ll" + "r" * (len(header) - 2) + "}", r"\toprule"]
        lines.append(" & ".join(latex_escape(h) for h in header) + r" \\")
        lines.append(r"\midrule")
        for row in per_query_rows(comparison):
            lines.append(" & ".join(latex_escape(c) for c in row) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


CSV_COLUMNS = [
    "query_id",
    "measure",
    "run",
    "baseline",
    "value",
    "baseline_value",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "effect_size",
    "wins",
    "ties",
    "losses",
    "min_detectable_delta",
]


def render_csv(comparison: Comparison, per_query: bool = False) -> str:
    """Long CSV, one row per (measure, run) with query_id ``all``; ``per_query`` adds one row per
    (measure, run, query) with the values and delta only. The baseline's rows have no delta."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    base = comparison.baseline
    for measure in comparison.measures:
        for run in comparison.runs:
            mean = plain_number(comparison.means[run][measure])
            base_mean = plain_number(comparison.means[base][measure])
            if run == base:
                writer.writerow(["all", measure, run, base, mean, base_mean] + [""] * (len(CSV_COLUMNS) - 6))
                continue
            p = comparison.pair(measure, run)
            writer.writerow(
                [
                    "all",
                    measure,
                    run,
                    base,
                    mean,
                    base_mean,
                    plain_number(p.delta),
                    plain_number(p.ci_low),
                    plain_number(p.ci_high),
                    plain_number(p.p_value),
                    plain_number(p.p_adjusted),
                    "true" if p.significant else "false",
                    plain_number(p.effect_size),
                    p.wins,
                    p.ties,
                    p.losses,
                    plain_number(p.min_detectable_delta),
                ]
            )
    if per_query:
        for measure in comparison.measures:
            base_values = comparison.values[base][measure]
            for run in comparison.others:
                run_values = comparison.values[run][measure]
                deltas = comparison.deltas(measure, run)
                for i, query_id in enumerate(comparison.query_ids):
                    writer.writerow(
                        [
                            query_id,
                            measure,
                            run,
                            base,
                            plain_number(run_values[i]),
                            plain_number(base_values[i]),
                            plain_number(deltas[i]),
                        ]
                        + [""] * (len(CSV_COLUMNS) - 7)
                    )
    return out.getvalue()


def comparison_dict(comparison: Comparison, per_query: bool = False) -> dict[str, Any]:
    """Plain data (JSON-ready: NaN becomes None). ``per_query`` adds values and deltas by query."""
    out: dict[str, Any] = {
        "baseline": comparison.baseline,
        "runs": list(comparison.runs),
        "measures": list(comparison.measures),
        "n_queries": comparison.n_queries,
        "test": comparison.test,
        "correction": comparison.correction,
        "alpha": comparison.alpha,
        "confidence": comparison.confidence,
        "power": comparison.power,
        # the seed and the resamples only where something was drawn at random (a t-test with its t-interval: no)
        **({"n_resamples": comparison.n_resamples, "seed": comparison.seed} if comparison.draws else {}),
        "means": {
            run: {m: plain_number(v) for m, v in by_measure.items()}
            for run, by_measure in comparison.means.items()
        },
        "comparisons": [
            {
                "measure": p.measure,
                "run": p.run,
                "baseline": p.baseline,
                "baseline_mean": plain_number(p.baseline_mean),
                "run_mean": plain_number(p.run_mean),
                "delta": plain_number(p.delta),
                "ci": [plain_number(p.ci_low), plain_number(p.ci_high)],
                "p_value": plain_number(p.p_value),
                "p_adjusted": plain_number(p.p_adjusted),
                "significant": p.significant,
                "effect_size": plain_number(p.effect_size),
                "wins": p.wins,
                "ties": p.ties,
                "losses": p.losses,
                "min_detectable_delta": plain_number(p.min_detectable_delta),
                "verdict": verdict(comparison, p),
            }
            for p in comparison.pairs
        ],
        "footer": comparison_footer(comparison),
    }
    if per_query:
        out["query_ids"] = list(comparison.query_ids)
        out["per_query"] = {
            measure: {
                run: dict(
                    zip(
                        comparison.query_ids,
                        (plain_number(v) for v in comparison.values[run][measure]),
                        strict=True,
                    )
                )
                for run in comparison.runs
            }
            for measure in comparison.measures
        }
        out["per_query_deltas"] = {
            measure: {
                run: dict(
                    zip(
                        comparison.query_ids,
                        (plain_number(v) for v in comparison.deltas(measure, run)),
                        strict=True,
                    )
                )
                for run in comparison.others
            }
            for measure in comparison.measures
        }
    return out


def render_json(comparison: Comparison, per_query: bool = False) -> str:
    return json.dumps(comparison_dict(comparison, per_query=per_query), indent=2) + "\n"


def render(comparison: Comparison, fmt: str = "table", per_query: bool = False) -> str:
    """``comparison`` in the output format ``fmt``: one that writes a comparison (``render.output_formats``:
    ``choices(COMPARISON)``). The HTML report page is ``render.html.render_html``."""
    from trec_rag_eval.render.output_formats import COMPARISON, find_format

    return find_format(fmt, COMPARISON).render(COMPARISON, comparison, per_query=per_query)
