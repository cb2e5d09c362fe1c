"""Human-readable renderings of an evaluation: a measure x cutoff table, JSON and CSV."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.measures.model import Measure


def _base(measure: Measure) -> str:
    return str(measure).rsplit("@", 1)[0] if measure.cutoff is not None else str(measure)


def _num(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    return f"{value:.4f}"


def summary_grid(evaluation: Evaluation) -> tuple[list[Any], dict[str, dict[Any, Any]], list[tuple[str, Any]]]:
    """The summary as the table lays it out: (cutoffs, {measure family: {cutoff: mean}}, [(measure, mean)]
    of the measures without a cutoff). With a context cost, two more rows: the tokens of the top k
    (mean, then p95 over queries), as text with one decimal, at its cutoffs."""
    with_cutoff = [m for m in evaluation.measures if m.cutoff is not None and m in evaluation.summary]
    plain = [m for m in evaluation.measures if m.cutoff is None and evaluation.summary.get(m) is not None
             and m.family != "runid"]
    cutoffs = {m.cutoff for m in with_cutoff if m.cutoff is not None}  # always true: for mypy
    rows: dict[str, dict[Any, Any]] = {}
    for m in with_cutoff:
        rows.setdefault(_base(m), {})[m.cutoff] = evaluation.summary[m]
    context = evaluation.context
    if context is not None:
        cutoffs |= set(context.ks)
        rows[TOKENS_MEAN] = {k: f"{context.mean(k):.1f}" for k in context.ks}
        rows[TOKENS_P95] = {k: f"{context.p95(k):.1f}" for k in context.ks}
    return sorted(cutoffs), rows, [(str(m), evaluation.summary[m]) for m in plain]


TOKENS_MEAN, TOKENS_P95 = "tokens", "tokens p95"


def context_note(evaluation: Evaluation) -> str | None:
    """What the tokens rows count, or None without a context cost."""
    context = evaluation.context
    if context is None:
        return None
    text = (f"tokens: of the top k results sent as context, counted as {context.tokenizer}; "
            f"mean and 95th percentile over {len(context.query_ids)} queries")
    if context.missing_texts:
        shown = ", ".join(context.missing_texts[:3]) + (", ..." if len(context.missing_texts) > 3 else "")
        text += f"; {len(context.missing_texts)} retrieved documents have no text, counted 0 ({shown})"
    return text


def summary_table(evaluation: Evaluation, title: str | None = None) -> str:
    """One row per measure, one column per cutoff; measures without a cutoff below; the context
    tokens of the top k under the measures, when known."""
    cutoffs, rows, plain = summary_grid(evaluation)
    width = max([len(name) for name in list(rows) + [name for name, _ in plain]] + [7])
    lines = []
    if title:
        lines.append(title)
    if rows:
        header = "measure".ljust(width) + "".join(f"{'@' + format_cutoff(k):>9}" for k in cutoffs)
        lines.append(header)
        lines.append("-" * len(header))
        for name, by_k in rows.items():
            cells = "".join(f"{_num(by_k[k]) if k in by_k else '':>9}" for k in cutoffs)
            lines.append(name.ljust(width) + cells)
    if plain:
        if rows:
            lines.append("")
        for name, value in plain:
            lines.append(name.ljust(width) + f"{_num(value):>9}")
    lines.append("")
    note = context_note(evaluation)
    if note is not None:
        lines.append(note)
    lines.append(footer(evaluation))
    return "\n".join(lines) + "\n"


def format_cutoff(k: Any) -> str:
    return str(int(k)) if float(k).is_integer() else str(k)


def footer(evaluation: Evaluation) -> str:
    n = len(evaluation.query_ids)
    text = f"queries: {n}"
    if evaluation.missing_queries:
        text += f" ({len(evaluation.missing_queries)} missing from the run, scored 0)"
    text += f"; run: {evaluation.run_tag}"
    return text


def per_query_table(evaluation: Evaluation) -> str:
    """One row per query (then 'all'), one column per measure; then the context tokens at each k, when known."""
    measures = [m for m in evaluation.measures if m in evaluation.values and m.spec.per_query]
    names = [str(m) for m in measures]
    context = evaluation.context
    tokens = [] if context is None else [f"tokens@{k}" for k in context.ks]
    qwidth = max([len(q) for q in evaluation.query_ids] + [8])
    widths = [max(len(n), 7) for n in [*names, *tokens]]
    lines = ["query".ljust(qwidth) + "".join(f" {n:>{w}}" for n, w in zip([*names, *tokens], widths, strict=False))]
    spent = {} if context is None else context.per_query()
    for i, q in enumerate(evaluation.query_ids):
        cells = [_num(evaluation.values[m][i]) for m in measures] + [str(spent[q][k]) for k in spent.get(q, {})]
        lines.append(q.ljust(qwidth) + "".join(f" {c:>{w}}" for c, w in zip(cells, widths, strict=False)))
    totals = [_num(evaluation.summary.get(m)) if evaluation.summary.get(m) is not None else '' for m in measures]
    totals += [] if context is None else [f"{context.mean(k):.1f}" for k in context.ks]
    lines.append("all".ljust(qwidth) + "".join(f" {c:>{w}}" for c, w in zip(totals, widths, strict=False)))
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    if isinstance(value, str) or value is None:
        return value
    value = float(value)
    return None if math.isnan(value) else value


def to_dict(evaluation: Evaluation, per_query: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "run": evaluation.run_tag,
        "num_queries": len(evaluation.query_ids),
        "measures": [str(m) for m in evaluation.measures],
        "summary": {str(m): _plain(v) for m, v in evaluation.summary.items() if v is not None},
        "missing_queries": evaluation.missing_queries,
        "extra_queries": evaluation.extra_queries,
    }
    if evaluation.context is not None:
        out["context_tokens"] = {"tokenizer": evaluation.context.tokenizer,
                                 **{f"@{k}": v for k, v in evaluation.context.summary.items()}}
    if per_query:
        out["per_query"] = {
            q: {str(m): _plain(evaluation.values[m][i]) for m in evaluation.measures
                if m in evaluation.values and m.spec.per_query}
            for i, q in enumerate(evaluation.query_ids)
        }
    return out


def to_json(evaluations: list[Evaluation], per_query: bool = False) -> str:
    payload: Any = [to_dict(e, per_query) for e in evaluations]
    if len(evaluations) == 1:
        payload = payload[0]
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def to_csv(evaluations: list[Evaluation], per_query: bool = False) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run", "query_id", "measure", "value"])
    for e in evaluations:
        if per_query:
            for i, q in enumerate(e.query_ids):
                for m in e.measures:
                    if m in e.values and m.spec.per_query:
                        writer.writerow([e.run_tag, q, str(m), _plain(e.values[m][i])])
        if per_query and e.context is not None:
            for q, by_k in e.context.per_query().items():
                for k, count in by_k.items():
                    writer.writerow([e.run_tag, q, f"tokens@{k}", count])
        for m in e.measures:
            value = e.summary.get(m)
            if value is not None:
                writer.writerow([e.run_tag, "all", str(m), _plain(value)])
        if e.context is not None:  # the context cost at each k: mean, then p95 over queries
            for k in e.context.ks:
                writer.writerow([e.run_tag, "all", f"tokens@{k}", e.context.mean(k)])
                writer.writerow([e.run_tag, "all", f"tokens_p95@{k}", e.context.p95(k)])
    return buffer.getvalue()
