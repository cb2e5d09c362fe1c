"""Figures that show in a notebook when a cell makes them, as pyplot's figures do.

The library draws with matplotlib's object API (no pyplot: no global state, nothing left open in a script or
a command), so by itself a figure would be shown only where a notebook shows a value: when it is the cell's
last expression. matplotlib users expect pyplot's behaviour: a figure made in a cell appears under it,
``fig = comparison.plot()`` included. So, in a Jupyter kernel, each figure the library hands out
(``Comparison.plot()``, ``plot_context()``, ``TopicSetPlan.plot()``) is kept until its cell ends, then shown
unless it was shown already (as the cell's value, or by ``display(fig)``): once, as the inline backend shows
pyplot's. Outside a kernel (a script, a terminal, the command line) nothing is kept and nothing is shown.

Imported only when a figure is drawn (matplotlib is the ``plot`` extra).
"""

from __future__ import annotations

import sys
from typing import Any

from matplotlib.figure import Figure

SHOWN = "_trec_rag_eval_shown"
"""The attribute a figure gets once a notebook has shown it."""


class LibraryFigure(Figure):
    """A matplotlib ``Figure`` that shows itself as a PNG in a notebook (``_repr_png_``), with or without
    ``%matplotlib inline``, and remembers that it was shown."""

    def _repr_png_(self) -> bytes:
        return png_of(self)


PLAIN_TEXT: Any = {"text.parse_math": False, "text.usetex": False}  # Any: matplotlib types its keys as Literals
"""matplotlib's settings under which every text is drawn as written (``render.plot.plain_text``)."""


def png_of(figure: Figure) -> bytes:
    """The figure as PNG bytes, as the notebook shows it (its texts as written); marks it shown."""
    import io

    import matplotlib

    setattr(figure, SHOWN, True)
    buffer = io.BytesIO()
    with matplotlib.rc_context(PLAIN_TEXT):
        figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def kernel_shell() -> Any:
    """The IPython shell of a Jupyter kernel this process runs in, else None (a script, a terminal, IPython
    in a terminal: nothing is shown there). Never imports IPython."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def shown_when_the_cell_ends(figure: Figure) -> Figure:
    """``figure``, kept to be shown when the running notebook cell ends unless it is shown before (see the
    module's docstring); unchanged outside a kernel."""
    shell = kernel_shell()
    if shell is None:
        return figure
    pending = getattr(shell, "_trec_rag_eval_figures", None)
    if pending is None:
        pending = []
        shell._trec_rag_eval_figures = pending
        # the PNG of our figures is ours, before the inline backend's printer for every Figure: shown, it is marked
        shell.display_formatter.formatters["image/png"].for_type(LibraryFigure, png_of)
        shell.events.register("post_run_cell", lambda result: _show_pending(pending))
    pending.append(figure)
    return figure


def _show_pending(pending: list[Figure]) -> None:
    from IPython.display import display

    figures = list(pending)
    pending.clear()
    for figure in figures:
        if not getattr(figure, SHOWN, False):
            display(figure)
