"""The library's figures outside a notebook: plain matplotlib Figures, kept nowhere; inside a kernel they are
shown when their cell ends (tests/test_notebook.py runs that in a real kernel)."""

from __future__ import annotations

import sys
import types

import pytest

import trec_rag_eval as tre

pytest.importorskip("matplotlib")

RUNS = {"bm25": "fixtures/run_bm25.txt", "hybrid": "fixtures/run_hybrid.txt"}


@pytest.fixture(scope="module")
def comparison():
    return tre.compare("fixtures/qrels.txt", RUNS, ["P@5"])


def test_a_figure_is_a_matplotlib_figure_that_a_notebook_can_show(comparison):
    from matplotlib.figure import Figure

    figure = comparison.plot()
    assert isinstance(figure, Figure)
    assert figure._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")  # shown without %matplotlib inline too


def test_outside_a_kernel_nothing_is_kept(comparison, monkeypatch):
    from trec_rag_eval.render.figures import kernel_shell

    shell = types.SimpleNamespace(kernel=None)  # IPython in a terminal: no kernel
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert kernel_shell() is None
    comparison.plot()
    assert not hasattr(shell, "_trec_rag_eval_figures")


def test_in_a_kernel_the_figure_waits_for_the_end_of_its_cell(comparison, monkeypatch):
    from trec_rag_eval.render import figures

    hooks, printers, shown = [], {}, []
    formatter = types.SimpleNamespace(for_type=lambda kind, printer: printers.setdefault(kind, printer))
    shell = types.SimpleNamespace(kernel=object(), display_formatter=types.SimpleNamespace(
        formatters={"image/png": formatter}), events=types.SimpleNamespace(register=lambda name, hook: hooks.append(
            (name, hook))))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    monkeypatch.setitem(sys.modules, "IPython.display", types.SimpleNamespace(display=shown.append))
    first, second = comparison.plot(), comparison.plot()
    assert [name for name, _ in hooks] == ["post_run_cell"]  # registered once
    printers[figures.LibraryFigure](second)  # the notebook showed the second (the cell's value)
    hooks[0][1](None)  # the cell ends
    assert shown == [first]
    hooks[0][1](None)  # the next cell made none: nothing more
    assert shown == [first]


def test_without_ipywidgets_a_notebook_gets_the_text_bar_without_a_warning(monkeypatch):
    import importlib.util

    from trec_rag_eval.progress import _tqdm_class

    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    from tqdm.std import tqdm

    assert _tqdm_class() is tqdm
