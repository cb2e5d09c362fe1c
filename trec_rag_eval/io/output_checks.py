"""No output replaces or joins what a command reads: every file an input opens (``files_read``), checked
against the outputs before any work (``check_outputs_against_inputs``, which hands the rest to
``io.atomic.check_output_paths``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from trec_rag_eval.errors import TrecRagEvalError
from trec_rag_eval.io.loading import detect
from trec_rag_eval.io.sources import local_path


def check_outputs_against_inputs(outputs: Sequence[str | os.PathLike[str] | None], force: bool = False,
                                 inputs: Sequence[str | os.PathLike[str] | None] = (),
                                 progress: Sequence[str | os.PathLike[str] | None] = ()) -> None:
    """Before any work: refuse every output (and ``progress`` file) that would replace or join what
    is read: an input, a file inside an input folder, or a file an input brings along (``files_read``),
    whatever the spelling (links included); outputs that exist unless ``force``; two outputs naming
    one file (``io.atomic.check_output_paths``). With no output and no progress file (standard output alone)
    there is nothing to check, and no input is looked at."""
    if all(path is None for path in (*outputs, *progress)):
        return
    from trec_rag_eval.io.atomic import check_output_paths

    read = [name for path in inputs if path is not None for name in files_read(path)]
    check_output_paths(outputs, force, read, progress)


def files_read(path: str | os.PathLike[str]) -> list[str]:
    """Every file reading ``path`` as qrels or a run may open: the path itself (a folder stands for
    every file inside it), the LLM-judgment sidecar beside it (``PATH.llm.tsv``, read by
    ``--judgments`` and ``judge``), and for a BEIR qrels TSV the ``queries.jsonl`` it takes the query
    texts from. What the command line checks its outputs against, so none replaces an input."""
    given = os.fspath(path)
    name = local_path(given)
    if name is None:  # a URL whose data is not on this machine: no output can replace it
        return []
    found = [name, f"{name}.llm.tsv"]
    if os.path.isfile(name):
        try:
            beir = detect(name) == "beir"
        except TrecRagEvalError:
            beir = False  # the reader reports it, with the line
        if beir:
            from trec_rag_eval.io.published.beir import queries_beside

            found += [os.fspath(p) for p in queries_beside(Path(name))]
    return found
