"""How each result type shows itself: its ``str()`` is the command line's text, its notebook table
(``_repr_html_``) the same information in HTML, its ``plot()`` render.plot's figure.

One registrar per result type (``register_evaluation``, ``register_comparison``, ...), named by the type's
``@renderer_registry.shown_by`` and called with the type the first time one of its values is shown: it registers the
type's renderers by the type itself, so the result types below ``render`` reach these functions without
importing them, and nothing here imports a result type (a comparison's module, with scipy, is not loaded to
show an evaluation). Each function reuses the one the command line prints with: one wording.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trec_rag_eval.render.agreement import agreement_html, agreement_text
from trec_rag_eval.render.allpairs import allpairs_html, allpairs_text
from trec_rag_eval.render.calibration import calibration_text
from trec_rag_eval.render.crosscheck import crosscheck_html, crosscheck_text
from trec_rag_eval.render.fusion import fusion_html, fusion_text
from trec_rag_eval.render.notebook import html_list, html_table
from trec_rag_eval.render.validation import validation_text
from trec_rag_eval.renderer_registry import register_renderer

if TYPE_CHECKING:
    from trec_rag_eval.compare.comparison import Comparison
    from trec_rag_eval.engine.harness import EngineEvaluation
    from trec_rag_eval.evaluation.evaluate import Evaluation


# --- Evaluation: the command line's RAG table (``trec-rag-eval QRELS RUN``) -------------------------------
def evaluation_text(evaluation: Evaluation, format: str = "table", per_query: bool = False,
                    summary: bool = True) -> str:
    """The evaluation in an output format that writes evaluations (``render.output_formats``; ``table``, the
    default output: measures x cutoffs, or one row per query with ``per_query``), made as the command makes it
    for one run (``render.output``); ``summary=False`` as ``-n`` (``RunRenderer``)."""
    from trec_rag_eval.render.output import Document, RunRenderer

    pieces: list[str] = []
    document = Document(format, pieces.append)
    document.add(evaluation.run_tag, RunRenderer(format, per_query, summary)(evaluation))
    document.close()
    return "".join(pieces)


def evaluation_html(evaluation: Evaluation, title: str | None = None) -> str:
    """The table of ``evaluation_text``: one row per measure, one column per cutoff, the footer as caption."""
    from trec_rag_eval.render.table import evaluation_footer, format_cutoff, summary_grid

    cutoffs, grid, plain = summary_grid(evaluation)
    footer = evaluation_footer(evaluation)
    caption: str | None = footer if title is None else f"{title}; {footer}"
    parts = []
    if grid:
        header = ["measure", *(f"@{format_cutoff(k)}" for k in cutoffs)]
        rows = [[name, *(by_k.get(k, "") for k in cutoffs)] for name, by_k in grid.items()]
        parts.append(html_table(header, rows, caption))
        caption = None
    if plain or not grid:
        parts.append(html_table(["measure", "value"], plain, caption))
    from trec_rag_eval.render.table import context_note

    note = context_note(evaluation)
    if note is not None:
        parts.append(f"<p>{_escape(note)}</p>")
    return "".join(parts)


def evaluation_context_plot(evaluation: Evaluation) -> Any:
    from trec_rag_eval.render.figures import shown_when_the_cell_ends
    from trec_rag_eval.render.plot import context_figure

    return shown_when_the_cell_ends(context_figure(evaluation))


# --- Comparison: ``trec-rag-eval compare``'s table, verdicts and footer -----------------------------------
def comparison_text(comparison: Comparison, format: str = "table", per_query: bool = False) -> str:
    from trec_rag_eval.render.comparison import render

    return render(comparison, format, per_query=per_query)


def comparison_html(comparison: Comparison) -> str:
    """The command's table (mean, delta, interval, p, d, W/T/L, MDD per run and measure), its verdict
    sentences and its footer."""
    from trec_rag_eval.render.comparison import (
        SIGNIFICANT_MARK,
        comparison_footer,
        comparison_title,
        summary_header,
        summary_rows,
        verdicts,
    )

    table = html_table(summary_header(comparison), summary_rows(comparison), comparison_title(comparison),
                       notes=[f"{SIGNIFICANT_MARK} significant at alpha {comparison.alpha:g} after correction"])
    return table + html_list(verdicts(comparison)) + f"<p>{_escape(comparison_footer(comparison))}</p>"


def comparison_plot(comparison: Comparison) -> Any:
    """The figure ``Comparison.plot()`` returns: in a notebook, shown when the cell ends (``render.figures``)."""
    from trec_rag_eval.render.plot import comparison_figure

    figure = comparison_figure(comparison)
    from trec_rag_eval.render.figures import shown_when_the_cell_ends

    return shown_when_the_cell_ends(figure)


# --- EngineEvaluation: ``trec-rag-eval search``'s table and latency line ----------------------------------
def engine_text(evaluation: EngineEvaluation, title: str | None = None) -> str:
    from trec_rag_eval.render.engine import engine_report

    return engine_report(evaluation, title)


def engine_html(evaluation: EngineEvaluation) -> str:
    from trec_rag_eval.render.engine import default_title, latency_line

    table = evaluation_html(evaluation.result, title=default_title(evaluation))
    failed = len(evaluation.failures)
    notes = [latency_line(evaluation)] + ([f"{failed} failed (scored 0)"] if failed else [])
    return table + "".join(f"<p>{_escape(note)}</p>" for note in notes)


def _escape(text: str) -> str:
    import html

    return html.escape(text)


# --- the registrars, one per result type (``@renderer_registry.shown_by`` names each) ------------------------------
def register_evaluation(cls: type) -> None:
    register_renderer(cls, "text", evaluation_text)
    register_renderer(cls, "html", evaluation_html)
    register_renderer(cls, "context_plot", evaluation_context_plot)


def _comparison_latex(comparison: Comparison, caption: str | None, label: str | None) -> str:
    from trec_rag_eval.render.comparison import render_latex

    return render_latex(comparison, caption=caption, label=label)


def _allpairs_latex(result: Any, caption: str | None, label: str | None) -> str:
    from trec_rag_eval.render.allpairs import allpairs_latex

    return allpairs_latex(result, caption=caption, label=label)


def register_comparison(cls: type) -> None:
    register_renderer(cls, "latex", _comparison_latex)
    register_renderer(cls, "text", comparison_text)
    register_renderer(cls, "html", comparison_html)
    register_renderer(cls, "plot", comparison_plot)


def register_engine_evaluation(cls: type) -> None:
    register_renderer(cls, "text", engine_text)
    register_renderer(cls, "html", engine_html)


def register_crosscheck_report(cls: type) -> None:
    register_renderer(cls, "text", crosscheck_text)
    register_renderer(cls, "html", crosscheck_html)


def register_validation_report(cls: type) -> None:
    register_renderer(cls, "text", validation_text)


def register_calibration_agreement(cls: type) -> None:
    register_renderer(cls, "text", calibration_text)


def register_fusion(cls: type) -> None:
    register_renderer(cls, "text", fusion_text)
    register_renderer(cls, "html", fusion_html)


def register_all_pairs(cls: type) -> None:
    register_renderer(cls, "latex", _allpairs_latex)
    register_renderer(cls, "text", allpairs_text)
    register_renderer(cls, "html", allpairs_html)


def register_agreement(cls: type) -> None:
    register_renderer(cls, "text", agreement_text)
    register_renderer(cls, "html", agreement_html)


def _plan_text(plan: Any, format: str = "table") -> str:
    from trec_rag_eval.render.planning import plan_text

    return plan_text(plan, format)


def _plan_html(plan: Any) -> str:
    from trec_rag_eval.render.planning import plan_html

    return plan_html(plan)


def _plan_plot(plan: Any) -> Any:
    from trec_rag_eval.render.planning import plan_figure

    figure = plan_figure(plan)
    from trec_rag_eval.render.figures import shown_when_the_cell_ends

    return shown_when_the_cell_ends(figure)


def register_topic_set_plan(cls: type) -> None:
    register_renderer(cls, "text", _plan_text)
    register_renderer(cls, "html", _plan_html)
    register_renderer(cls, "plot", _plan_plot)
