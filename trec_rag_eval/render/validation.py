"""The text of a ``ValidationReport`` (``trec-rag-eval validate``): each value that differs or that a known
convention explains, each measure not compared, the verdict with its counts.

Formatting only: the values are the report's; what each convention means is ``checks.validate.VARIANTS``'
sentence (imported when a report is rendered: ``render.results`` imports this module whenever any result is
shown).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trec_rag_eval.checks.validate import ValidationReport


def validation_json(report: ValidationReport) -> str:
    """The report as one JSON document (``ValidationReport.to_dict``)."""
    return json.dumps(report.to_dict(), indent=2) + "\n"


def validation_text(report: ValidationReport) -> str:
    from trec_rag_eval.checks.validate import VARIANTS

    if report.measures:
        values = f"{report.compared} value{'s' if report.compared != 1 else ''} of {', '.join(report.measures)}"
        asked = (f" (of {report.compared + report.left_out} in the reference: the measures asked leave "
                 f"{report.left_out} out)" if report.left_out else "")
        lines = [f"Validating against {report.reference_path} ({report.reference_format}): {values} compared{asked}"]
    else:
        lines = [f"Validating against {report.reference_path} ({report.reference_format}): {report.compared} values "
                 f"compared"]
    for title, rows in (("DIFFER", report.mismatches), ("convention", report.conventions)):
        for m in rows:
            where = f" (line {m.line})" if m.line else ""
            ours = "missing" if m.ours is None else f"{m.ours:.10g}"
            text = f"  {title:<10} {m.measure} {m.query_id}: reference {m.reference!r}, ours {ours}, " \
                   f"allowed +/-{m.tolerance:.2g}{where}"
            if m.convention:
                text += f": matches under {VARIANTS[m.convention][0]}"
            lines.append(text)
    for name, why in report.not_compared.items():
        lines.append(f"  skipped    {name}: {why}")
    verdict = "OK" if report.ok else "FAILED"
    lines.append(f"Verdict: {verdict}: {report.compared - len(report.mismatches) - len(report.conventions)} agree, "
                 f"{len(report.conventions)} agree under a known convention, {len(report.mismatches)} differ")
    return "\n".join(lines) + "\n"
