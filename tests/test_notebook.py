"""The example notebooks (examples/rag_engineer.ipynb, examples/ir_researcher.ipynb) run end to end, offline, as
Jupyter runs them: executed by nbconvert in a fresh kernel from their own folder, every cell without error or
warning, and their tables and pictures are the library's displays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "examples" / "rag_engineer.ipynb"
IR_NOTEBOOK = REPO / "examples" / "ir_researcher.ipynb"


def _outputs(notebook, kind: str) -> list[str]:
    return [output["data"][kind] for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
            if kind in output.get("data", {})]


def _executed(path: Path, monkeypatch):
    import nbformat  # imported here: collecting the default run, which leaves these tests out, does not load them
    from nbconvert.preprocessors import ExecutePreprocessor

    # the kernel imports this checkout's package, whatever is installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(path, as_version=4)
    ExecutePreprocessor(timeout=300, kernel_name="python3").preprocess(
        notebook, {"metadata": {"path": str(path.parent)}})  # raises CellExecutionError on any error
    errors = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
              if output.output_type == "error"]
    assert errors == []
    # clean in a fresh kernel: no warning, no text progress bar (stderr) under any cell
    assert [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
            if output.get("name") == "stderr"] == []
    return notebook


def _printed(notebook) -> str:
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.outputs if output.output_type == "stream")


@pytest.mark.slow  # a Jupyter kernel of its own
def test_the_notebook_runs_and_shows_the_librarys_tables_and_plots(monkeypatch):
    notebook = _executed(NOTEBOOK, monkeypatch)
    html = _outputs(notebook, "text/html")
    # the evaluation with its context tokens, the comparison with the command's columns and verdicts
    assert any("<td>nDCG</td>" in page and "<td>tokens p95</td>" in page for page in html)
    assert any("W/T/L" in page and "MDD" in page and "this query set detects about" in page for page in html)
    assert not any("noise" in page for page in html)
    printed = _printed(notebook)
    assert "latency per query: p50" in printed and "\nnDCG " in printed  # print(report): the command's text
    assert len(_outputs(notebook, "image/png")) == 2  # comparison.plot(), chunked.plot_context()


@pytest.mark.slow  # a Jupyter kernel of its own
def test_the_researchers_notebook_runs_and_shows_every_step(monkeypatch):
    notebook = _executed(IR_NOTEBOOK, monkeypatch)
    html = _outputs(notebook, "text/html")
    printed = _printed(notebook)
    # fusion tuned by cross-validation, with its held-out score
    assert "held out (each query scored with the setting chosen without it)" in printed
    # all pairs: the letters table (six runs, letters a to f), and the significant pairs as a DataFrame
    assert any("<sup>" in page and "<td>f</td>" in page and "randomised Tukey HSD" in page for page in html)
    # two sets of judgments: labels and system rankings
    assert "Cohen's kappa" in printed and "tau_AP" in printed
    # the LaTeX table for the paper, with its caption and label
    assert "\\begin{table}[t]" in printed and "\\label{tab:french-runs}" in printed and "\\textbf{" in printed
    # fig = comparison.plot(): a figure made in a cell is shown under it
    assert len(_outputs(notebook, "image/png")) == 1


def _run_cells(sources: list[str], monkeypatch) -> list[list[dict]]:
    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    ExecutePreprocessor(timeout=300, kernel_name="python3").preprocess(notebook, {"metadata": {"path": str(REPO)}})
    return [cell.outputs for cell in notebook.cells]


def _images(outputs: list[dict]) -> int:
    return sum("image/png" in output.get("data", {}) for output in outputs)


@pytest.mark.slow  # a Jupyter kernel of its own
def test_a_figure_made_in_a_cell_is_shown_once(monkeypatch):
    # as pyplot's figures: shown under the cell that makes them, assigned or not, once even when displayed
    setup = ("import trec_rag_eval as tre\n"
             "comparison = tre.compare('fixtures/qrels.txt', {'bm25': 'fixtures/run_bm25.txt', "
             "'hybrid': 'fixtures/run_hybrid.txt'}, ['P@5'])")
    outputs = _run_cells([
        setup,
        "fig = comparison.plot()",                          # assigned: shown when the cell ends
        "comparison.plot()",                                # the cell's value: shown once, not twice
        "fig = comparison.plot()\ndisplay(fig)",            # displayed by hand: not shown again
        "fig = comparison.plot()\nfig.savefig('/dev/null', format='png')\nlen(fig.axes) > 0",
        "fig",                                              # an old figure asked again: shown
        "%matplotlib inline\nfig = comparison.plot()",      # with the inline backend, the same
        "comparison.plot();",                               # a semicolon hides the value, not the figure
        "x = 1",                                            # a cell that makes no figure shows none
    ], monkeypatch)
    assert [_images(cell) for cell in outputs] == [0, 1, 1, 1, 1, 1, 1, 1, 0]
    assert not [output for cell in outputs for output in cell if output.get("name") == "stderr"]


@pytest.mark.slow  # a Jupyter kernel of its own
def test_progress_bars_are_widgets_in_a_notebook(monkeypatch):
    outputs = _run_cells([
        "import trec_rag_eval as tre\n"
        "runs = {'bm25': 'fixtures/run_bm25.txt', 'hybrid': 'fixtures/run_hybrid.txt'}\n"
        "comparison = tre.compare('fixtures/qrels.txt', runs, ['P@5'], progress=True)",
    ], monkeypatch)
    kinds = {key for output in outputs[0] for key in output.get("data", {})}
    assert "application/vnd.jupyter.widget-view+json" in kinds
    assert not [output for output in outputs[0] if output.get("name") == "stderr"]  # no IProgress warning
