"""Every output format, registered once: one ``OutputFormat`` object each, in ``OUTPUT_FORMATS``.

A format is its name, a few words saying what it is, and what it writes:

* **an evaluation** (the evaluate command, ``Evaluation.render``), run after run, as ``render.output`` lays
  the runs out: a run's ``body`` value by value, and ``body_columns``, the same bytes built a column at a time
  (``render.columnar_text``) for a large evaluation (``COLUMN_WISE_FROM`` per-query values or more: ~670,000 for
  ``-q -m all_trec`` on 7,000 queries, which one Python call per value would take seconds to write); what opens
  several runs (``opening``), stands between two (``separator``) and closes them (``closing``); how a run alone
  (``alone``) and a run among several (``among``) are written;
* **the other results** (``COMPARISON``, ``ALL_PAIRS``, ``AGREEMENT``, ``CROSSCHECK``, ``VALIDATION``, ``PLAN``): one
  function of ``render/`` for each it writes (``renders``), imported when first used.

Every command's ``--format`` choices and help (``choices``, ``choices_help``), the renderers, the result types'
``render()`` and the errors naming formats read this registry: no list of format names is written anywhere else.
A new format is one subclass and one ``register_output_format`` (CONTRIBUTING.md, recipe 4); the tests check
that its two bodies give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.measures.model import Measure

EVALUATION = "evaluation"
"""An ``Evaluation``, run after run: the evaluate command and ``Evaluation.render``."""
COMPARISON = "comparison"
"""A ``Comparison`` with a baseline: ``compare`` and ``Comparison.render``."""
ALL_PAIRS = "all_pairs"
"""An ``AllPairs``: ``compare --all-pairs`` and ``AllPairs.render``."""
AGREEMENT = "agreement"
"""An ``Agreement``: ``agree``."""
CROSSCHECK = "crosscheck"
"""The cross-check of each run: ``crosscheck``. Its renderers take ``(run path, CrosscheckReport)`` pairs as
they are made and give the text in pieces (each run's as soon as it is known, when the format allows)."""
VALIDATION = "validation"
"""A ``ValidationReport``: ``validate``."""
PLAN = "plan"
"""A ``TopicSetPlan``: ``plan`` and ``TopicSetPlan.render``."""

COLUMN_WISE_FROM = 20_000
"""Per-query values from which a run's body is built a column at a time (``body_columns``, with polars);
below, value by value (``body``), before polars would be imported: a small evaluation never loads it."""


def _render(module: str, function: str) -> Callable[..., Any]:
    """A renderer of ``trec_rag_eval.render.<module>``, imported when first called (``--help`` stays light)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(f"trec_rag_eval.render.{module}"), function)(*args, **kwargs)

    call.__name__ = call.__qualname__ = function
    call.target = (module, function)  # type: ignore[attr-defined]
    return call


@dataclass(frozen=True)
class RunText:
    """One run's part of the evaluate command's output, made where it was evaluated (``render.output``)."""

    format: str
    tag: str
    """The run's tag (trec: the ``runid`` line that opens its block among several)."""
    body: tuple[str, ...]
    """Its text in pieces, written one after another and never joined (trec's ``-q`` lines of 7,000
    queries are 25 MB: blocks of whole queries, each written in turn, instead of one string of them
    all, copied again on its way out): the format's ``body``."""
    summary: str = ""
    """trec: the ``all`` lines among several runs (without a ``runid`` line: the block opens with one)."""
    summary_alone: str = ""
    """trec: the ``all`` lines of a run alone (a ``runid`` asked for, in its place)."""
    measures: list[Measure] = field(default_factory=list)
    """The measures evaluated, in output order (what ``--crosscheck`` computes again)."""
    titled: bool = False
    """table: a summary table, titled by its run among several (a per-query table is not)."""


class OutputFormat:
    """One output format: a subclass says what it writes (see the module docstring). The evaluate command
    names it to its Dask workers (``RunRenderer``), which find it in their own registry."""

    name: ClassVar[str]
    summary: ClassVar[str]
    """What it is, in a few words: every command's ``--format`` help says it after the name."""
    summaries: ClassVar[Mapping[str, str]] = {}
    """What it is for one kind of result, when ``summary`` says too little (``csv`` of an evaluation: its columns)."""
    renders: ClassVar[Mapping[str, Callable[..., Any]]] = {}
    """Its text of each result other than an evaluation, by kind (``COMPARISON``, ...)."""

    # --- an evaluation, run after run (a format that writes none leaves body and body_columns alone) -------
    opening: ClassVar[str] = ""
    """Before the first of several runs (csv's header; json's list)."""
    separator: ClassVar[str] = ""
    """Between two runs."""
    closing: ClassVar[str] = ""
    """After the last of several runs."""
    context_tokens: ClassVar[bool] = False
    """Whether it shows the context cost of the top k (``corpus=``, ``--corpus``, refused by the others)."""
    trec_eval: ClassVar[bool] = False
    """trec_eval's own output: its order of measures, and its leftovers for a query missing from the run
    under ``-c`` (``Settings.leftovers``), where every other format scores such a query 0."""

    def body(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        """A run's text in pieces, written one after another and never joined, value by value (``per_query``:
        each query's values, as ``-q``; without ``summary``, nothing aggregated over queries, as ``-n``)."""
        raise NotImplementedError(f"the {self.name} format writes no evaluation")

    def body_columns(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        """``body``'s bytes, built a column at a time (``render.columnar_text``): called with ``per_query`` for
        ``COLUMN_WISE_FROM`` per-query values or more."""
        raise NotImplementedError(f"the {self.name} format writes no evaluation")

    def extras(self, evaluation: Evaluation, per_query: bool, summary: bool) -> dict[str, Any]:
        """What ``alone`` and ``among`` need besides the body (``RunText``'s other fields)."""
        return {}

    def alone(self, text: RunText) -> Sequence[str]:
        """The output of a run alone."""
        return text.body

    def among(self, label: str, text: RunText, named: set[str]) -> Sequence[str]:
        """A run among several (``label``: its path; ``named``: the names earlier runs were given)."""
        return text.body

    def check_evaluation(self, per_query: bool, summary: bool, context: bool = False, zscored: bool = False) -> None:
        """Refuse, before any work, an evaluation this format cannot show whole: its context cost (``context``:
        ``corpus=``) where it has no place for it, z-scores (``zscored``: ``zscores=``) outside trec_eval's
        lines, then what its ``check`` refuses. The one check of the evaluate command's options against its
        format, said by the command line with its flags."""
        from trec_rag_eval.errors import UsageError

        if zscored and not self.trec_eval:
            shown = " or ".join(f"format={name}" for name in choices(EVALUATION) if OUTPUT_FORMATS[name].trec_eval)
            raise UsageError(f"zscores= prints trec_eval's z-score lines: {shown} only",
                             {"zscores=": "zscores", "format=": "format"})
        if context and not self.context_tokens:
            raise UsageError(f"corpus= adds the context tokens to the {_listed(_with_context_tokens())} formats: not "
                             f"with format={self.name} (its lines have no place for them)",
                             {"corpus=": "corpus", "format=": "format"})
        self.check(per_query, summary, context)

    def check(self, per_query: bool, summary: bool, context: bool) -> None:
        """Refuse, before any work, what would leave the output empty: without ``summary`` (``-n``) and
        without ``per_query`` nothing aggregated is left to show."""
        if summary or per_query:
            return
        from trec_rag_eval.errors import UsageError

        raise UsageError(f"summary=False drops the summary (query 'all'), which is all the {self.name} format shows "
                         "without per_query=True: add per_query=True (each query's values, without the summary)",
                         SUMMARY_PARAMETERS)

    # --- the machinery ------------------------------------------------------------------------------------
    @property
    def kinds(self) -> tuple[str, ...]:
        """What it writes: ``EVALUATION`` (when it has a body) and the kinds of ``renders``."""
        writes_runs = type(self).body is not OutputFormat.body
        return (*((EVALUATION,) if writes_runs else ()), *self.renders)

    def about(self, kind: str) -> str:
        """What it is, for ``kind``."""
        return self.summaries.get(kind, self.summary)

    def run_text(self, evaluation: Evaluation, per_query: bool, summary: bool) -> RunText:
        """A run's ``RunText``: its body value by value or a column at a time (``column_wise``)."""
        make = self.body_columns if per_query and column_wise(evaluation) else self.body
        return RunText(self.name, evaluation.run_tag, tuple(make(evaluation, per_query, summary)),
                       measures=list(evaluation.measures), **self.extras(evaluation, per_query, summary))

    def render(self, kind: str, result: Any, **options: Any) -> Any:
        """``result`` (of ``kind``, not an evaluation) in this format: its text (``CROSSCHECK``: its pieces)."""
        return self.renders[kind](result, **options)

    def __repr__(self) -> str:
        return f"OutputFormat({self.name!r})"


SUMMARY_PARAMETERS = {"summary=False": "no_summary", "per_query=True": "per_query", "corpus=": "corpus"}
"""How the messages about ``summary`` name the parameters (the command line says its flags)."""

OUTPUT_FORMATS: dict[str, OutputFormat] = {}
"""Every output format, by name, in the order the help lists them."""


def register_output_format(fmt: OutputFormat) -> OutputFormat:
    """Add ``fmt`` to the registry; a name is registered once."""
    if fmt.name in OUTPUT_FORMATS:
        raise ValueError(f"the output format {fmt.name!r} is registered already")
    OUTPUT_FORMATS[fmt.name] = fmt
    return fmt


def choices(*kinds: str) -> tuple[str, ...]:
    """The formats that write any of ``kinds``, in the registry's order: a command's ``--format`` choices."""
    return tuple(name for name, fmt in OUTPUT_FORMATS.items() if set(fmt.kinds) & set(kinds))


def _with_context_tokens() -> list[str]:
    return [name for name in choices(EVALUATION) if OUTPUT_FORMATS[name].context_tokens]


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def context_token_formats() -> str:
    """The formats that show the context cost (``corpus=``), as a sentence lists them."""
    return _listed(_with_context_tokens())


def choices_help(*kinds: str, only: Mapping[str, str] | None = None) -> str:
    """``name (what it is), ...`` for each format that writes one of ``kinds``; a format that writes only
    some of them says so when ``only`` has a note for the kind it writes (``--all-pairs only``)."""
    texts = []
    for name in choices(*kinds):
        fmt = OUTPUT_FORMATS[name]
        written = [kind for kind in kinds if kind in fmt.kinds]
        note = (only or {}).get(written[0]) if len(written) < len(kinds) else None
        about = fmt.about(written[0])
        texts.append(f"{name} ({about}{'; ' + note if note else ''})")
    return ", ".join(texts)


WRITTEN = {EVALUATION: "an evaluation", COMPARISON: "a comparison with a baseline", ALL_PAIRS: "the all-pairs table",
           AGREEMENT: "an agreement", CROSSCHECK: "a cross-check", VALIDATION: "a validation", PLAN: "a plan"}
"""Each kind of result, as the errors name it."""


def find_format(name: str, kind: str = EVALUATION) -> OutputFormat:
    """The format ``name``, which must write ``kind`` (else a ``UsageError`` naming those that do, and what a
    format of another kind of result writes). The registry is looked in once; the errors are worded only when
    it holds no such format."""
    found = OUTPUT_FORMATS.get(name)
    if found is not None and kind in found.kinds:
        return found
    from trec_rag_eval.arguments import check_choice
    from trec_rag_eval.errors import UsageError

    if found is not None:
        its = " and ".join(WRITTEN[other] for other in found.kinds)
        listed = choices(kind)
        raise UsageError(f"format={name} writes {its}, not {WRITTEN[kind]}: {WRITTEN[kind]} is written as "
                         f"{', '.join(listed[:-1])} or {listed[-1]}" if len(listed) > 1 else
                         f"format={name} writes {its}, not {WRITTEN[kind]}: {WRITTEN[kind]} is written as {listed[0]}",
                         {"format=": "format"})
    check_choice("format", name, choices(kind))  # an unknown name, refused in the words of every unknown choice
    raise AssertionError(f"check_choice let the unknown format {name!r} through")


def column_wise(evaluation: Evaluation) -> bool:
    """Whether a run's per-query values are many enough to build its body a column at a time."""
    per_query = [m for m in evaluation.measures if m.spec.per_query and m.shown in evaluation.values]
    return len(evaluation.query_ids) * len(per_query) >= COLUMN_WISE_FROM


# --- the formats ---------------------------------------------------------------------------------------------

class Trec(OutputFormat):
    """trec_eval's lines, byte for byte: ``-q``'s per-query lines, then the ``all`` lines. One run alone is
    trec_eval's output. trec_eval reads one run, so its lines never say which run they belong to: among several,
    each block opens with trec_eval's own ``runid  all  TAG`` line (the line ``-m runid`` prints), which every
    reader of its output already parses; a run whose tag an earlier block gave is named by its path instead, so
    no two blocks read alike, and a ``runid`` asked with ``-m`` is not printed twice. ``-n`` alone leaves
    nothing, as trec_eval prints nothing."""

    name = "trec"
    summary = "trec_eval's lines"
    trec_eval = True

    def body(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.trec import per_query_lines

        return per_query_lines(evaluation) if per_query else ()

    def body_columns(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.trec import per_query_blocks

        return per_query_blocks(evaluation) if per_query else ()

    def extras(self, evaluation: Evaluation, per_query: bool, summary: bool) -> dict[str, Any]:
        from trec_rag_eval.render.trec import summary_text

        return {"summary": summary_text(evaluation, runid=False) if summary else "",
                "summary_alone": summary_text(evaluation, runid=True) if summary else ""}

    def alone(self, text: RunText) -> Sequence[str]:
        return *text.body, text.summary_alone

    def among(self, label: str, text: RunText, named: set[str]) -> Sequence[str]:
        name = label if text.tag in named else text.tag
        named.add(name)
        return f"{'runid':<22}\tall\t{name}\n", *text.body, text.summary  # trec_eval's "%-22s\t%s\t%s\n"

    def check(self, per_query: bool, summary: bool, context: bool) -> None:
        return  # -n alone prints nothing, as trec_eval does


class Table(OutputFormat):
    """The table a person reads: measures x cutoffs (``-q``: one row per query, one column per measure); among
    several runs, one table each, separated by an empty line, a summary table titled ``run: PATH``."""

    name = "table"
    summary = "to read"
    summaries = {EVALUATION: "measures x cutoffs"}
    renders = {COMPARISON: _render("comparison", "render_table"), ALL_PAIRS: _render("allpairs", "allpairs_table"),
               PLAN: _render("planning", "plan_table")}
    separator = "\n"
    context_tokens = True

    def body(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.table import per_query_table, summary_table

        return (per_query_table(evaluation, summary) if per_query else summary_table(evaluation),)

    def body_columns(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.table import per_query_table_columns, summary_table

        return (per_query_table_columns(evaluation, summary) if per_query else summary_table(evaluation),)

    def extras(self, evaluation: Evaluation, per_query: bool, summary: bool) -> dict[str, Any]:
        return {"titled": not per_query}

    def among(self, label: str, text: RunText, named: set[str]) -> Sequence[str]:
        return (f"run: {label}\n", *text.body) if text.titled else text.body


class Markdown(OutputFormat):
    name = "markdown"
    summary = "Markdown"
    renders = {COMPARISON: _render("comparison", "render_markdown"),
               ALL_PAIRS: _render("allpairs", "allpairs_markdown"), PLAN: _render("planning", "plan_markdown")}


class Latex(OutputFormat):
    name = "latex"
    summary = "LaTeX, booktabs"
    renders = {COMPARISON: _render("comparison", "render_latex"), ALL_PAIRS: _render("allpairs", "allpairs_latex"),
               PLAN: _render("planning", "plan_latex")}


class Json(OutputFormat):
    """One JSON document: one object for one run, a list of them for several (``json.dumps(indent=2)``)."""

    name = "json"
    summary = "one document"
    renders = {COMPARISON: _render("comparison", "render_json"), ALL_PAIRS: _render("allpairs", "allpairs_json"),
               AGREEMENT: lambda result: result.to_json(), CROSSCHECK: _render("crosscheck", "crosscheck_json"),
               VALIDATION: _render("validation", "validation_json"),
               PLAN: _render("planning", "plan_json")}
    opening = "[\n  "
    separator = ",\n  "
    closing = "\n]\n"
    context_tokens = True

    def body(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.data_formats import json_text

        return (json_text(evaluation, per_query, summary),)

    def body_columns(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.data_formats import json_text_columns

        return (json_text_columns(evaluation, per_query, summary),)

    def alone(self, text: RunText) -> Sequence[str]:
        return *text.body, "\n"

    def among(self, label: str, text: RunText, named: set[str]) -> Sequence[str]:
        return tuple(piece.replace("\n", "\n  ") for piece in text.body)  # an item of the list, as json writes it

    def check(self, per_query: bool, summary: bool, context: bool) -> None:
        super().check(per_query, summary, context)
        if not summary and context:
            from trec_rag_eval.errors import UsageError

            others = sorted(name for name in choices(EVALUATION)
                            if name != self.name and OUTPUT_FORMATS[name].context_tokens)
            raise UsageError("summary=False drops the JSON document's context_tokens (means over queries), the only "
                             "place it shows the context cost: drop corpus= or summary=False, or choose the "
                             f"{', '.join(others[:-1])} or {others[-1]} format (their rows per query keep the tokens)",
                             SUMMARY_PARAMETERS)


class Csv(OutputFormat):
    """One header, then every run's rows."""

    name = "csv"
    summary = "rows under one header"
    summaries = {EVALUATION: "run,query_id,measure,value rows"}
    renders = {COMPARISON: _render("comparison", "render_csv"), ALL_PAIRS: _render("allpairs", "allpairs_csv"),
               PLAN: _render("planning", "plan_csv")}
    context_tokens = True

    opening = "run,query_id,measure,value\n"

    def body(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.data_formats import csv_rows

        return (csv_rows(evaluation, per_query, summary),)

    def body_columns(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.data_formats import csv_rows_columns

        return (csv_rows_columns(evaluation, per_query, summary),)

    def alone(self, text: RunText) -> Sequence[str]:
        return self.opening, *text.body


class Jsonl(OutputFormat):
    """JSON Lines: every run's rows (the csv's rows and columns), one JSON object a line, nothing around them."""

    name = "jsonl"
    summary = ("JSON Lines: the csv's rows, one JSON object a line, for jq, polars.read_ndjson, "
               "pandas.read_json(lines=True)")
    context_tokens = True

    def body(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.data_formats import jsonl_rows

        return (jsonl_rows(evaluation, per_query, summary),)

    def body_columns(self, evaluation: Evaluation, per_query: bool, summary: bool) -> Sequence[str]:
        from trec_rag_eval.render.data_formats import jsonl_rows_columns

        return (jsonl_rows_columns(evaluation, per_query, summary),)


class Html(OutputFormat):
    name = "html"
    summary = "an HTML fragment"
    renders = {ALL_PAIRS: _render("allpairs", "allpairs_html")}


class Text(OutputFormat):
    name = "text"
    summary = "to read"
    renders = {AGREEMENT: _render("agreement", "agreement_text"), CROSSCHECK: _render("crosscheck", "crosschecks_text"),
               VALIDATION: _render("validation", "validation_text")}


for _format in (Trec(), Table(), Text(), Markdown(), Latex(), Json(), Csv(), Jsonl(), Html()):
    register_output_format(_format)
