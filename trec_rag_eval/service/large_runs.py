"""Runs too large for the memory, on this machine: evaluated a piece at a time as they are read
(``evaluate_in_pieces``, with a bar over the bytes read, ``byte_progress``). Which runs are read so is decided
where the run files are listed and sized, with the other ways a run file is read (``service.inputs``:
``should_stream``, ``read_ahead``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.tables import Qrels

IN_PIECES = "trec"
"""The one format whose runs are read in pieces (``io.trec.pieces.iter_run_chunks``); the others are read whole."""

Progress = Callable[[str], AbstractContextManager[Callable[[int], None]]]
"""Given a run's path, a context in which to report the bytes read so far (for runs read in pieces)."""


def evaluate_in_pieces(qrels: Qrels, path: str, measures: list[Measure], settings: Settings, chunk_bytes: int,
                        progress: Progress | None) -> Evaluation:
    from trec_rag_eval.evaluation.streaming import evaluate_pieces
    from trec_rag_eval.io.trec.pieces import iter_run_chunks

    if progress is None:
        return evaluate_pieces(qrels, iter_run_chunks(path, chunk_bytes), measures, settings)
    with progress(path) as advance:
        return evaluate_pieces(qrels, iter_run_chunks(path, chunk_bytes, advance), measures, settings)


def byte_progress() -> Progress:
    """How a run read in pieces shows its progress: the library's tqdm bar over the file's bytes (a
    bar in a terminal, a widget in a notebook, an update every few seconds in a log file)."""
    import sys

    from trec_rag_eval.io.sources import basename
    from trec_rag_eval.io.sources import size as size_of
    from trec_rag_eval.progress import bar

    @contextmanager
    def display(path: str) -> Iterator[Callable[[int], None]]:
        size = max(size_of(path), 1)
        with bar(size, f"reading {basename(path)}", unit="B", file=sys.stderr, scale=True) as shown:

            def advance(done: int) -> None:
                shown.update(min(done, size) - shown.n)

            yield advance

    return display
