"""The measures documented from the registry (never by hand): the ``measures`` command's listing and
the measure table of the documentation (docs/measures.md)."""

from __future__ import annotations

import math

from trec_rag_eval.measures.model import Param
from trec_rag_eval.measures.registry import FAMILIES, TREC_EVAL_FAMILIES


def measure_rows() -> list[dict[str, str]]:
    """One row per registry family: names in each notation, definition, parameters, reference."""
    rows = []
    for family in FAMILIES.values():
        # the family's own names first, then the other names it is known by (MAP, MRR, HitRate)
        spellings = family.names + family.aliases
        trec = family.name if family.name in TREC_EVAL_FAMILIES else ""
        if trec and family.kind in ("int_cutoffs", "real_cutoffs"):
            trec += ".k" if family.kind == "int_cutoffs" else ".p"
        elif trec and family.kind in ("gain_pairs", "real_list"):
            trec += ".params"
        rows.append({
            "family": family.name,
            "notation": ", ".join(dict.fromkeys(spellings)) or "-",
            "trec_eval": trec or "-",
            "ir_measures": family.ir_measures.shown if family.ir_measures else "-",
            "definition": family.definition,
            "parameters": "; ".join(f"{k}: {p.help}" + _default_and_range(p) for k, p in family.params.items()) or "-",
            "aggregate": {"mean": "mean", "sum": "sum", "gmean": "geometric mean",
                          "none": "per query only" if family.per_query else "one per run"}[family.aggregate],
            "reference": family.reference,
        })
    return rows


def _default_and_range(param: Param) -> str:
    """`` (default 0.95; a number in (0, 1])``: a parameter's default and the range the registry gives it."""
    parts = [f"default {param.default!r}"] if param.default is not None else []
    if math.isfinite(param.within.low) or math.isfinite(param.within.high):
        parts.append(("each " if param.kind in ("reals", "gains") else "") + str(param.within))
    return f" ({'; '.join(parts)})" if parts else ""


def markdown_table() -> str:
    """The measure table of the documentation (docs/measures.md)."""
    head = "| notation | trec_eval | ir-measures | definition | aggregate |\n|---|---|---|---|---|\n"
    body = "".join(f"| `{r['notation']}` | `{r['trec_eval']}` | `{r['ir_measures']}` | {r['definition']} | "
                   f"{r['aggregate']} |\n" for r in measure_rows())
    return head + body.replace("`-`", "-")


def measure_list() -> str:
    """The ``measures`` command's listing: each family's names, definition, names elsewhere, parameters
    and reference."""
    lines = []
    for row in measure_rows():
        lines += [row["notation"], f"    {row['definition']}",
                  f"    trec_eval: {row['trec_eval']}   ir-measures: {row['ir_measures']}   "
                  f"aggregate: {row['aggregate']}"]
        if row["parameters"] != "-":
            lines.append(f"    parameters: {row['parameters']}")
        lines.append(f"    reference: {row['reference']}")
    return "".join(line + "\n" for line in lines)
