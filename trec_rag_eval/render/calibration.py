"""The text of a ``CalibrationAgreement`` (``trec-rag-eval judge --calibrate``): Cohen's kappa, binary and
graded, and the confusion matrix of the human grades against the model's.

Formatting only: every number is the agreement's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trec_rag_eval.number_formats import format_magnitude

if TYPE_CHECKING:
    from trec_rag_eval.llm.judging import CalibrationAgreement

UNDEFINED = "undefined (a single label)"
"""A kappa with no value (fewer than two documents, or both raters giving one label alone)."""


def calibration_text(agreement: CalibrationAgreement) -> str:
    width = max(5, *(len(str(label)) + 2 for label in agreement.labels))
    binary, graded = (format_magnitude(kappa, UNDEFINED) for kappa in (agreement.kappa_binary, agreement.kappa_graded))
    lines = [
        f"Agreement with the human judgments on {agreement.pairs} calibration documents:",
        f"  binary (relevant = grade >= {agreement.relevance_level}): Cohen's kappa {binary}, "
        f"same verdict {agreement.binary_agreement:.0%}",
        f"  graded (linear weights): Cohen's kappa {graded}, same grade {agreement.raw_agreement:.0%}",
        "  confusion matrix (rows: human grade, columns: LLM grade):",
        "  " + " " * 7 + "".join(f"{label:>{width}}" for label in agreement.labels),
    ]
    for label, row in zip(agreement.labels, agreement.confusion, strict=True):
        lines.append(f"  {'human ' + str(label):<7}" + "".join(f"{count:>{width}}" for count in row))
    return "\n".join(lines) + "\n"
