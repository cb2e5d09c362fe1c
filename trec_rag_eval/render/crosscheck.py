"""Renderings of a ``CrosscheckReport`` (``trec-rag-eval crosscheck``): the command's lines and the notebook table.

Formatting only: the verdicts, numbers and queries are the report's; what each known convention means is
``checks.crosscheck.CONVENTIONS``' sentence (imported when a report is rendered: ``render.results`` imports
this module whenever any result is shown, and ``checks.crosscheck`` loads polars).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from trec_rag_eval.number_formats import format_precise, plain_data
from trec_rag_eval.render.notebook import html_table

if TYPE_CHECKING:
    from trec_rag_eval.checks.crosscheck import CrosscheckReport


def crosscheck_text(report: CrosscheckReport) -> str:
    """The command's lines: the settings, one line per measure (and one per convention that explains a
    difference), the verdict with its counts."""
    from trec_rag_eval.checks.crosscheck import CONVENTIONS

    lines = [f"Cross-check against ir-measures {report.ir_measures_version} on {report.num_queries} queries "
             f"({'trec_eval 9 mode' if report.settings.get('trec_eval_9') else 'trec_eval 10 mode'}, "
             f"tolerance {report.settings.get('tolerance'):g})"]
    width = max([len(v.measure) for v in report.verdicts] + [7])
    for v in report.verdicts:
        head = f"  {v.measure:<{width}}  "
        if v.status == "unsupported":
            lines.append(head + f"not supported by ir-measures ({v.reason})")
            continue
        where = f"{v.ir_measures} via {v.provider}"
        if v.status == "agree":
            lines.append(head + f"agree     {where}: mean {format_precise(v.ours)}")
        elif v.status == "convention":
            lines.append(head + f"agree     {where}, up to known conventions (max |diff| "
                         f"{v.max_difference:.3g}):")
            for key, queries in v.conventions.items():
                extra = " (and its ideal ranking's equal judgments by score, then qrels order)" if (
                    v.provider == "compat") else ""
                text = CONVENTIONS[key].format(provider=v.provider, extra=extra)
                lines.append(" " * (width + 4) + f"- {len(queries)} quer{'y' if len(queries) == 1 else 'ies'}: "
                             f"{text} ({_list(queries)})")
        else:
            lines.append(head + f"DIFFER    {where}: max |diff| {v.max_difference:.6g} in "
                         f"{len(v.differing_queries)} quer{'y' if len(v.differing_queries) == 1 else 'ies'} "
                         f"({_list(v.differing_queries)}); mean ours {format_precise(v.ours)} vs ir-measures "
                         f"{format_precise(v.theirs)}{'; ' + v.reason if v.reason else ''}")
    statuses = ("agree", "convention", "differ", "unsupported")
    counts = {s: sum(v.status == s for v in report.verdicts) for s in statuses}
    lines.append(f"Verdict: {'OK' if report.ok else 'FAILED'}: {counts['agree']} agree, {counts['convention']} agree "
                 f"up to known conventions, {counts['differ']} differ, {counts['unsupported']} not supported")
    return "\n".join(lines) + "\n"


def crosscheck_html(report: CrosscheckReport) -> str:
    """One row per measure (status, the ir-measures name and provider, both means, the largest
    difference, what explains it); the command's first and last lines as caption and note."""
    lines = crosscheck_text(report).splitlines()
    rows = []
    for v in report.verdicts:
        explained = v.reason or "; ".join(f"{key}: {len(queries)} queries" for key, queries in v.conventions.items())
        status = {"convention": "agree up to known conventions", "differ": "DIFFER",
                  "unsupported": "not supported by ir-measures"}.get(v.status, v.status)
        supported = v.status != "unsupported"
        rows.append([v.measure, status, f"{v.ir_measures} via {v.provider}" if supported else "",
                     format_precise(v.ours), format_precise(v.theirs),
                     f"{v.max_difference:.3g}" if supported else "", explained])
    header = ["measure", "verdict", "ir-measures", "ours", "ir-measures mean", "max |diff|", "note"]
    return html_table(header, rows, lines[0], notes=[lines[-1]])


def _list(queries: list[str], limit: int = 5) -> str:
    shown = ", ".join(queries[:limit])
    return shown + (f", ... {len(queries) - limit} more" if len(queries) > limit else "")


def crosschecks_text(reports: Iterable[tuple[str, CrosscheckReport]]) -> Iterator[str]:
    """The crosscheck command's text: each run's report under a ``run: PATH`` line, as soon as it is made."""
    for path, report in reports:
        yield f"run: {path}\n" + crosscheck_text(report)


def crosscheck_json(reports: Iterable[tuple[str, CrosscheckReport]]) -> Iterator[str]:
    """The crosscheck command's JSON, once every run's report is made: each report (``to_dict``) with its
    run's path, in a list; one run alone, its object."""
    payload = [{"run": path, **plain_data(report.to_dict())} for path, report in reports]  # NaN as null
    yield json.dumps(payload[0] if len(payload) == 1 else payload, indent=2) + "\n"
