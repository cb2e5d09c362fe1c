"""The evaluate command's output, one run at a time, whatever the number of runs.

Each run's text is made where the run was evaluated, as soon as it is: ``RunRenderer`` is handed to
the service (``api.evaluate_many(..., render=...)``), which calls it on the thread that evaluated the
run or, on a cluster, on the Dask worker (only the text comes back). It calls the renderers of every
format (``render.trec``, ``render.table``: column-wise for large evaluations), so a run's text is the
same wherever it is made. ``Document`` then lays the texts out in run order, as they come, around
what holds them together (a JSON list, the CSV header, each trec_eval block's ``runid`` line), and
writes each run's text as soon as the next one arrives: the caller holds one or two runs' texts, never
all of them, and the result is the output the whole list of evaluations gives at once:

* ``trec``: one run alone is trec_eval's output, byte for byte. trec_eval reads one run, so its lines
  never say which run they belong to: with several runs each block opens with trec_eval's own
  ``runid  all  TAG`` line (the line ``-m runid`` and ``-m official`` print), which every reader of
  trec_eval's output already parses. The value is the run's tag; a run whose tag an earlier block
  already gave is named by its path instead, so no two blocks read alike (the blocks are written as
  they come: a later run's tag is not known when an earlier block is written). A ``runid`` asked
  with ``-m`` is not printed twice.
* ``table``: one table per run, separated by an empty line; summary tables are titled ``run: PATH``
  when there are several.
* ``json``: one object for one run, else a list of them (one valid document either way).
* ``csv``: one header, then every run's rows.
* ``jsonl``: every run's rows, one JSON object a line (the CSV's rows and columns), with nothing around them.

"One run" or "several" counts the runs that are written (a run that failed is not): the first run's
text is held until a second arrives or the output ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trec_rag_eval.arguments import check_choice
from trec_rag_eval.credentials import without_credentials

if TYPE_CHECKING:
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.measures.model import Measure

FORMATS = ("trec", "table", "json", "csv", "jsonl")


@dataclass(frozen=True)
class RunText:
    """One run's part of the output, made where it was evaluated (``RunRenderer``)."""

    format: str
    tag: str
    """The run's tag (trec: the ``runid`` line that opens its block among several)."""
    body: tuple[str, ...]
    """Its text in pieces, written one after another and never joined (trec's ``-q`` lines of 7,000
    queries are 25 MB: blocks of whole queries, each written in turn, instead of one string of them
    all, copied again on its way out). trec: the per-query lines (``-q``); table: its table(s) without
    title; json: its object (``json.dumps(indent=2)``), not indented as a list item; csv: its rows,
    without the header; jsonl: its lines."""
    summary: str = ""
    """trec: the ``all`` lines among several runs (without a ``runid`` line: the block opens with one)."""
    summary_alone: str = ""
    """trec: the ``all`` lines of a run alone (a ``runid`` asked for, in its place)."""
    measures: list[Measure] = field(default_factory=list)
    """The measures evaluated, in output order (what ``--crosscheck`` computes again)."""
    titled: bool = False
    """table: a summary table, titled by its run among several (a per-query table is not)."""


@dataclass(frozen=True)
class RunRenderer:
    """An evaluation's ``RunText`` in ``format`` (``-q``: ``per_query``; ``-n``: not ``summary``). A value:
    sent to the Dask workers as it is, to render there.

    Without ``summary`` (``-n``), what aggregates over queries is left out: trec_eval's ``all`` lines, the
    table's ``all`` row, the csv and jsonl rows of query ``all``, the JSON document's ``summary`` and
    ``context_tokens``. With ``trec`` and not ``per_query`` nothing is left, as trec_eval prints nothing
    for ``-n`` alone; the other formats refuse that pair (``check_summary``)."""

    format: str
    per_query: bool = False
    summary: bool = True

    def __post_init__(self) -> None:
        check_choice("format", self.format, FORMATS)
        check_summary(self.format, self.per_query, self.summary)

    def __call__(self, evaluation: Evaluation) -> RunText:
        measures = list(evaluation.measures)
        if self.format == "trec":
            from trec_rag_eval.render.trec import per_query_pieces, summary_text

            return RunText("trec", evaluation.run_tag, tuple(per_query_pieces(evaluation)) if self.per_query else (),
                           summary_text(evaluation, runid=False) if self.summary else "",
                           summary_text(evaluation, runid=True) if self.summary else "", measures)
        from trec_rag_eval.render.table import csv_rows, json_text, jsonl_rows, per_query_table, summary_table

        if self.format == "json" and not self.summary and evaluation.context is not None:
            from trec_rag_eval.errors import UsageError

            raise UsageError(NO_CONTEXT_WITHOUT_SUMMARY, SUMMARY_PARAMETERS)
        if self.format == "table":
            body = per_query_table(evaluation, self.summary) if self.per_query else summary_table(evaluation)
        elif self.format == "json":
            body = json_text(evaluation, self.per_query, self.summary)
        elif self.format == "jsonl":
            body = jsonl_rows(evaluation, self.per_query, self.summary)
        else:
            body = csv_rows(evaluation, self.per_query, self.summary)
        return RunText(self.format, evaluation.run_tag, (body,), measures=measures,
                       titled=self.format == "table" and not self.per_query)


class Document:
    """The output of several runs, written through ``write`` a run at a time: ``add`` each run's text
    in run order, then ``close`` (see the module's docstring)."""

    def __init__(self, format: str, write: Callable[[str], None]) -> None:
        check_choice("format", format, FORMATS)
        self.format, self._write = format, write
        self.count = 0
        """Runs added so far."""
        self._held: tuple[str, RunText] | None = None
        self._names: set[str] = set()

    def add(self, label: str, text: RunText) -> None:
        """One more run (``label``: as the user named it, its path; a URL's without its password), after those
        added before."""
        label = without_credentials(label)
        self.count += 1
        if self.count == 1:
            self._held = (label, text)  # one run alone or the first of several: known when the next comes
            return
        if self._held is not None:
            first, self._held = self._held, None
            self._write_all((self._opening(), *self._among(*first)))
        self._write_all((self._separator(), *self._among(label, text)))

    def close(self) -> None:
        """Write what is held and what closes the output (nothing when no run was added)."""
        if self._held is not None:
            label, text = self._held
            self._held = None
            self._write_all(self._alone(text))
        elif self.count > 1 and self.format == "json":
            self._write("\n]\n")

    def _write_all(self, pieces: tuple[str, ...]) -> None:
        for piece in pieces:
            if piece:
                self._write(piece)

    def _opening(self) -> str:
        return {"json": "[\n  ", "csv": _csv_header()}.get(self.format, "")

    def _separator(self) -> str:
        return {"json": ",\n  ", "table": "\n"}.get(self.format, "")

    def _alone(self, text: RunText) -> tuple[str, ...]:
        if self.format == "trec":
            return *text.body, text.summary_alone
        if self.format == "json":
            return *text.body, "\n"
        if self.format == "csv":
            return _csv_header(), *text.body
        return text.body

    def _among(self, label: str, text: RunText) -> tuple[str, ...]:
        if self.format == "trec":
            name = label if text.tag in self._names else text.tag
            self._names.add(name)
            return f"{'runid':<22}\tall\t{name}\n", *text.body, text.summary  # trec_eval's "%-22s\t%s\t%s\n"
        if self.format == "json":
            # an item of the list, as json.dumps(indent=2) writes it
            return tuple(piece.replace("\n", "\n  ") for piece in text.body)
        if text.titled:
            return f"run: {label}\n", *text.body
        return text.body


SUMMARY_PARAMETERS = {"summary=False": "no_summary", "per_query=True": "per_query", "corpus=": "corpus"}
"""How the messages about ``summary`` name the parameters (the command line says its flags)."""
NO_CONTEXT_WITHOUT_SUMMARY = ("summary=False drops the JSON document's context_tokens (means over queries), the only "
                              "place it shows the context cost: drop corpus= or summary=False, or choose the csv, "
                              "jsonl or table format (their rows per query keep the tokens)")


def check_summary(format: str, per_query: bool, summary: bool) -> None:
    """Refuse, before any work, an output left empty by ``summary=False``: every format but trec without
    ``per_query`` (trec_eval prints nothing for ``-n`` alone, and trec keeps its bytes)."""
    if summary or per_query or format == "trec":
        return
    from trec_rag_eval.errors import UsageError

    raise UsageError(f"summary=False drops the summary (query 'all'), which is all the {format} format shows without "
                     "per_query=True: add per_query=True (each query's values, without the summary)",
                     SUMMARY_PARAMETERS)


def _csv_header() -> str:
    from trec_rag_eval.render.table import CSV_HEADER

    return CSV_HEADER
