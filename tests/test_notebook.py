"""The RAG engineer's notebook (examples/rag_engineer.ipynb) runs end to end, offline, as Jupyter runs it:
executed by nbconvert in a fresh kernel from its own folder, every cell without error, and its tables
and pictures are the library's displays."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "examples" / "rag_engineer.ipynb"


def _outputs(notebook, kind: str) -> list[str]:
    return [output["data"][kind] for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
            if kind in output.get("data", {})]


@pytest.mark.slow  # a Jupyter kernel of its own
def test_the_notebook_runs_and_shows_the_librarys_tables_and_plots(monkeypatch):
    import nbformat  # imported here: collecting the default run, which leaves this test out, does not load them
    from nbconvert.preprocessors import ExecutePreprocessor

    # the kernel imports this checkout's package, whatever is installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    ExecutePreprocessor(timeout=300, kernel_name="python3").preprocess(
        notebook, {"metadata": {"path": str(NOTEBOOK.parent)}})  # raises CellExecutionError on any error
    errors = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
              if output.output_type == "error"]
    assert errors == []
    html = _outputs(notebook, "text/html")
    # the evaluation with its context tokens, the comparison with the command's columns and verdicts
    assert any("<td>nDCG</td>" in page and "<td>tokens p95</td>" in page for page in html)
    assert any("W/T/L" in page and "MDD" in page and "this query set detects about" in page for page in html)
    assert not any("noise" in page for page in html)
    printed = "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                      for output in cell.outputs if output.output_type == "stream")
    assert "latency per query: p50" in printed and "\nnDCG " in printed  # print(report): the command's text
    assert len(_outputs(notebook, "image/png")) == 2  # comparison.plot(), chunked.plot_context()
