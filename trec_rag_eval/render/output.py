"""The evaluate command's output, one run at a time, whatever the number of runs.

Each run's text is made where the run was evaluated, as soon as it is: ``RunRenderer`` is handed to
the service (``api.evaluate_many(..., render=...)``), which calls it on the thread that evaluated the
run or, on a cluster, on the Dask worker (only the text comes back). It asks the run's output format
(``render.output_formats``: value by value, or a column at a time for a large evaluation), so a run's text
is the same wherever it is made. ``Document`` then lays the texts out in run order, as they come, with what
the format puts around them (its opening, separators and closing: a JSON list, the CSV header, each
trec_eval block's ``runid`` line), and writes each run's text as soon as the next one arrives: the caller
holds one or two runs' texts, never all of them, and the result is the output the whole list of evaluations
gives at once. Each format's docstring says how it lays out several runs.

"One run" or "several" counts the runs asked, those that failed (``skip``) included: a run left alone
by another's failure is labelled as among several, so its lines still say whose they are once the error
follows. The first run's text is held until a second run (written or failed) comes, or the output ends.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trec_rag_eval.credentials import without_credentials
from trec_rag_eval.render.output_formats import EVALUATION, SUMMARY_PARAMETERS, RunText, find_format

if TYPE_CHECKING:
    from trec_rag_eval.evaluation.evaluate import Evaluation

__all__ = ["SUMMARY_PARAMETERS", "Document", "RunRenderer", "RunText", "document_to"]


@dataclass(frozen=True)
class RunRenderer:
    """An evaluation's ``RunText`` in ``format`` (``-q``: ``per_query``; ``-n``: not ``summary``). A value:
    sent to the Dask workers as it is, to render there.

    Without ``summary`` (``-n``), what aggregates over queries is left out: trec_eval's ``all`` lines, the
    table's ``all`` row, the csv and jsonl rows of query ``all``, the JSON document's ``summary`` and
    ``context_tokens``. A format left with nothing to show refuses it (``OutputFormat.check``)."""

    format: str
    per_query: bool = False
    summary: bool = True
    context: bool = False
    """The evaluations will have a context cost (``corpus=``): refused now by a format without its place."""
    zscored: bool = False
    """The evaluations will be z-scores (``zscores=``): refused now by a format other than trec_eval's."""

    def __post_init__(self) -> None:
        find_format(self.format, EVALUATION).check_evaluation(self.per_query, self.summary, self.context,
                                                              self.zscored)

    def __call__(self, evaluation: Evaluation) -> RunText:
        fmt = find_format(self.format, EVALUATION)
        fmt.check_evaluation(self.per_query, self.summary, evaluation.context is not None, evaluation.zscored)
        return fmt.run_text(evaluation, self.per_query, self.summary)


class Document:
    """The output of several runs, written through ``write`` a run at a time: ``add`` each run's text
    in run order, then ``close`` (see the module's docstring)."""

    def __init__(self, format: str, write: Callable[[str], None]) -> None:
        self.format, self._write = format, write
        self._layout = find_format(format, EVALUATION)
        self.count = 0
        """Runs added so far."""
        self._seen = 0  # runs added or skipped
        self._held: tuple[str, RunText] | None = None
        self._names: set[str] = set()

    def add(self, label: str, text: RunText) -> None:
        """One more run (``label``: as the user named it, its path), after those added before."""
        self.count += 1
        self._seen += 1
        if self._seen == 1:
            self._held = (label, text)  # one run alone or the first of several: known when the next comes
            return
        self._release()
        self._write_all(((self._layout.separator if self.count > 1 else self._layout.opening),
                         *self._among(label, text)))

    def skip(self) -> None:
        """A run asked that failed (its error is said elsewhere): the runs are several, so each is labelled."""
        self._seen += 1
        self._release()

    def _release(self) -> None:
        """The first run, held, written as the first of several."""
        if self._held is not None:
            first, self._held = self._held, None
            self._write_all((self._layout.opening, *self._among(*first)))

    def _among(self, label: str, text: RunText) -> Sequence[str]:
        """A run's text among several, labelled: its label shown here alone, so a URL's password is taken out of it
        here (one run alone is written without its label)."""
        return self._layout.among(without_credentials(label), text, self._names)

    def close(self) -> None:
        """Write what is held and what closes the output (nothing when no run was added)."""
        if self._held is not None:
            label, text = self._held
            self._held = None
            self._write_all(self._layout.alone(text))
        elif self.count and self._seen > 1:  # the runs asked were several, though one alone may be written
            self._write_all((self._layout.closing,))

    def _write_all(self, pieces: Sequence[str]) -> None:
        for piece in pieces:
            if piece:
                self._write(piece)


@contextmanager
def document_to(format: str, output: str | None, force: bool = False,
                inputs: Sequence[str | os.PathLike[str] | None] = ()) -> Iterator[Document]:
    """A ``Document`` written to ``output`` (standard output when None) through the one writer of outputs
    (``io.atomic.output_to``), a run at a time: closed when the block ends, and an output file put in place then
    if a run was added. A block left by an error leaves no output file (nor replaces one).

    An output file is checked when it is opened, before the first run is read: it replaces none of the
    ``inputs`` (nor a file an input brings along), nor an existing file unless ``force``
    (``io.output_checks.check_outputs_against_inputs``). Standard output replaces no file: nothing to check."""
    from trec_rag_eval.io.atomic import output_to

    if output is not None:
        from trec_rag_eval.io.output_checks import check_outputs_against_inputs

        check_outputs_against_inputs([output], force, inputs)
    with output_to(output, force) as out:
        document = Document(format, out.write)
        yield document
        document.close()
        if document.count:
            out.commit()
