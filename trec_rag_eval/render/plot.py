"""Pictures of a comparison (mean deltas with their intervals, sorted per-query deltas) and of quality
and context tokens against k.

matplotlib is optional (``pip install 'trec-rag-eval[plot]'``) and imported only here, when a
picture is drawn. We use the object API (``matplotlib.figure.Figure``) with the Agg canvas, never
pyplot, so drawing changes no global state and needs no display.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.errors import MissingDependencyError, UsageError

if TYPE_CHECKING:
    from trec_rag_eval.compare.comparison import Comparison
    from trec_rag_eval.evaluation.evaluate import Evaluation

PLOT_FORMATS = {".png": "png", ".svg": "svg"}
BETTER, WORSE, NEUTRAL = "#1a9641", "#d7191c", "#7f7f7f"
RUN_COLOURS = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]


def require_matplotlib(feature: str = "plots") -> None:
    """Fail with the install line, before any work, when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingDependencyError("matplotlib", "plot", feature) from None


def _figure_class() -> Any:
    """matplotlib's ``Figure``, as a notebook shows it (``render.figures.LibraryFigure``)."""
    require_matplotlib()
    from trec_rag_eval.render.figures import LibraryFigure

    return LibraryFigure


figure_class = _figure_class


def plain_text() -> Any:
    """A context in which matplotlib draws every text as it is written: run tags and file names are
    the user's, and ``$x^^y$`` or ``$\\foo{$`` must show as typed, not be parsed as TeX math (a
    syntax error) nor passed to LaTeX. Text artists read the setting when they are made, so the
    drawing and the saving (which may make tick labels) both run inside it."""
    require_matplotlib()
    import matplotlib

    from trec_rag_eval.render.figures import PLAIN_TEXT

    return matplotlib.rc_context(PLAIN_TEXT)


def draw_intervals(figure: Any, comparison: Comparison) -> None:
    """See ``_draw_intervals``; every text is drawn as written (``plain_text``)."""
    with plain_text():
        _draw_intervals(figure, comparison)


def _draw_intervals(figure: Any, comparison: Comparison) -> None:
    """Each measure's mean delta (run - baseline) with its interval (the comparison's: ``Comparison.interval``).

    Filled markers are significant after the correction; the grey band around zero spans
    +/- the smallest delta this query set can detect (MDD), so a short query set shows as a
    wide band.
    """
    axes = figure.add_subplot(1, 1, 1)
    others = comparison.others
    measures = comparison.measures
    height = 0.8 / max(1, len(others))
    for r_index, run in enumerate(others):
        colour = RUN_COLOURS[r_index % len(RUN_COLOURS)]
        for m_index, measure in enumerate(measures):
            pair = comparison.pair(measure, run)
            y = len(measures) - 1 - m_index + (len(others) - 1 - 2 * r_index) * height / 2
            if np.isfinite(pair.min_detectable_delta):
                axes.fill_betweenx(
                    [y - height / 2, y + height / 2],
                    -pair.min_detectable_delta,
                    pair.min_detectable_delta,
                    color="#dddddd",
                    linewidth=0,
                )
            axes.errorbar(
                [pair.delta],
                [y],
                xerr=[[pair.delta - pair.ci_low], [pair.ci_high - pair.delta]],
                fmt="o",
                color=colour,
                markerfacecolor=colour if pair.significant else "white",
                capsize=3,
                label=run if m_index == 0 else None,
            )
    axes.axvline(0.0, color="black", linewidth=0.8)
    axes.set_yticks(range(len(measures)))
    axes.set_yticklabels(list(reversed(measures)))
    axes.set_xlabel(f"mean delta vs {comparison.baseline} ({comparison.confidence * 100:g}% CI: {comparison.interval})")
    axes.set_title("Mean delta per measure (filled: significant; grey: below detectable delta)", fontsize=10)
    axes.legend(loc="best", fontsize=8)
    axes.grid(axis="x", alpha=0.3)


def draw_per_query(figure: Any, comparison: Comparison) -> None:
    """See ``_draw_per_query``; every text is drawn as written (``plain_text``)."""
    with plain_text():
        _draw_per_query(figure, comparison)


def _draw_per_query(figure: Any, comparison: Comparison) -> None:
    """Per-query deltas sorted from largest win to largest loss, one small panel per measure.

    With one compared run the bars are green (query won) and red (query lost); with several,
    each run is a step line in its own colour.
    """
    measures = comparison.measures
    columns = min(4, len(measures))
    rows = (len(measures) + columns - 1) // columns
    others = comparison.others
    for index, measure in enumerate(measures):
        axes = figure.add_subplot(rows, columns, index + 1)
        for r_index, run in enumerate(others):
            deltas = np.sort(comparison.deltas(measure, run))[::-1]
            positions = np.arange(1, deltas.size + 1)
            if len(others) == 1:
                colours = np.where(deltas > 0, BETTER, np.where(deltas < 0, WORSE, NEUTRAL))
                axes.bar(positions, deltas, width=1.0, color=list(colours), linewidth=0)
            else:
                colour = RUN_COLOURS[r_index % len(RUN_COLOURS)]
                axes.step(positions, deltas, where="mid", color=colour, label=run)
        axes.axhline(0.0, color="black", linewidth=0.6)
        if len(others) == 1:
            pair = comparison.pair(measure, others[0])
            axes.set_title(f"{measure}  W/T/L {pair.wins}/{pair.ties}/{pair.losses}", fontsize=9)
        else:
            axes.set_title(measure, fontsize=9)
            if index == 0:
                axes.legend(fontsize=7)
        axes.tick_params(labelsize=7)
        if index % columns == 0:
            axes.set_ylabel("delta", fontsize=8)
    figure.suptitle(
        f"Per-query deltas vs {comparison.baseline}, sorted ({comparison.n_queries} queries)", fontsize=10
    )


def intervals_figure(comparison: Comparison) -> Any:
    figure = _figure_class()(
        figsize=(8, 1.2 + 0.45 * len(comparison.measures) * max(1, len(comparison.others)))
    )
    draw_intervals(figure, comparison)
    with plain_text():
        figure.tight_layout()
    return figure


def per_query_figure(comparison: Comparison) -> Any:
    rows = (len(comparison.measures) + 3) // 4
    figure = _figure_class()(figsize=(10, 1.0 + 2.0 * rows))
    draw_per_query(figure, comparison)
    with plain_text():
        figure.tight_layout()
    return figure


def comparison_figure(comparison: Comparison) -> Any:
    """Both pictures in one figure: intervals on top, per-query deltas below."""
    top = 1.2 + 0.45 * len(comparison.measures) * max(1, len(comparison.others))
    bottom = 1.0 + 2.0 * ((len(comparison.measures) + 3) // 4)
    figure = _figure_class()(figsize=(10, top + bottom), layout="constrained")
    upper, lower = figure.subfigures(2, 1, height_ratios=[top, bottom])
    draw_intervals(upper, comparison)
    draw_per_query(lower, comparison)
    return figure


def figure_bytes(figure: Any, fmt: str) -> bytes:
    """The figure encoded as ``png`` or ``svg``; SVG output has no timestamp, so it is reproducible."""
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    with plain_text():
        figure.savefig(buffer, format=fmt, dpi=100, metadata=metadata)
    return buffer.getvalue()


def plot_format(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise UsageError(f"cannot draw {str(path)!r}: the plot file must end in .png or .svg")
    return PLOT_FORMATS[suffix]


def save_plot(comparison: Comparison, path: str | Path, *, force: bool = False) -> None:
    """Write the combined picture to ``path`` (.png or .svg, chosen by the suffix) through the one
    writer (``io.atomic``): an existing file is kept unless ``force``, and nothing is half-written."""
    from trec_rag_eval.io.atomic import write_atomic

    fmt = plot_format(path)
    write_atomic(path, figure_bytes(comparison_figure(comparison), fmt), force=force)


def context_figure(evaluation: Evaluation) -> Any:
    """Quality and context cost against k (``Evaluation.context_table``): each measure at each k on the
    left axis, the tokens of the top k (mean, solid; p95, dashed) on the right one."""
    from trec_rag_eval.evaluation.context_cost import context_columns

    columns = context_columns(evaluation)
    ks = columns.pop("k")
    mean, p95 = columns.pop("tokens_mean"), columns.pop("tokens_p95")
    figure = _figure_class()(figsize=(7, 4.2), layout="constrained")
    quality = figure.subplots()
    for i, (name, values) in enumerate(columns.items()):
        quality.plot(ks, values, marker="o", color=RUN_COLOURS[i % len(RUN_COLOURS)], label=name)
    quality.set_xlabel("k (results sent as context)")
    quality.set_ylabel("quality at k")
    quality.set_xticks(ks)
    tokens = quality.twinx()
    tokens.plot(ks, mean, color=NEUTRAL, marker="s", label="tokens (mean)")
    tokens.plot(ks, p95, color=NEUTRAL, linestyle="--", marker="s", label="tokens (p95)")
    tokens.set_ylabel(f"context tokens ({evaluation.context.tokenizer if evaluation.context else ''})")
    handles = quality.get_legend_handles_labels()[0] + tokens.get_legend_handles_labels()[0]
    quality.legend(handles=handles, loc="center right", fontsize="small")
    quality.set_title(f"Quality and context tokens against k: {evaluation.run_tag}, "
                      f"{len(evaluation.query_ids)} queries")
    return figure
