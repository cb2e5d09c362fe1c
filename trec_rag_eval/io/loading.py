"""Reading judgments or a run from a file in any supported format: the formats (one record each, ``Format``, in
one registry), how each is recognised, and loading (``load_qrels``, ``load_run``, ``load_run_report``,
``load_run_shards``), the format detected from the content or given; and what a file holds (``detect_kind``).

A format says how to recognise a file (``sniff``; the registry's order is the order of detection), how to read
judgments and runs from it, how to write them, and whether a run in it is read whole (JSON results: never in
pieces, one task on a cluster, checked by the RAG checks). The sniffers are here (Parquet's magic bytes too,
``is_parquet``): detecting a file's format calls no reader's module. Loading, the service, the cluster,
``convert`` and the command line's ``--qrels-format`` / ``--run-format`` choices all take their formats from
here. A new format is its reader module, one ``register_format(Format(...))`` below and its tests (see
CONTRIBUTING.md).

Detection reads the start of the file (after gzip, if compressed):

* a Parquet file (its magic bytes ``PAR1``) or a folder of ``*.parquet`` partitions: Parquet
  (see ``parquet``);
* another folder, a TSV whose first line is a header such as ``query-id<TAB>corpus-id<TAB>score``, or
  rows of three fields: BEIR (qrels TSV, with the query texts of a ``queries.jsonl`` beside it; see ``beir``);
* a first non-blank character ``[`` or ``{``: JSON or JSONL (see ``io.json.content``);
* anything else: TREC (``query_id iteration doc_id relevance`` / ``query_id Q0 doc_id rank score tag``).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.id_paths import IdLocator
from trec_rag_eval.io.sources import (
    STANDARD_INPUT,
    exists,
    head_bytes,
    head_text,
    is_dir,
    is_irds_name,
    open_bytes,
    read_head,
    spooled,
)
from trec_rag_eval.io.trec.topics import load_topics
from trec_rag_eval.syntax import parse_integer, parse_real, split_fields
from trec_rag_eval.tables import Qrels, ResultsReport, Run, joined_places

BEIR_HEADER_WORDS = frozenset({"query-id", "query_id", "qid", "corpus-id", "corpus_id", "doc-id", "doc_id", "docid"})
"""The words of a BEIR qrels header's first two columns (query-id corpus-id score)."""
HEAD_BYTES = 65536
"""How much of a file (after gzip) detection reads."""

class Head:
    """What detection learns of the file at ``path``, each asked once whatever the number of sniffers that need
    it: called, the start of the file (HEAD_BYTES, after gzip, as text); ``folder``, whether it is a folder;
    ``parquet``, whether it is Parquet (``is_parquet``). The file is opened once: its text and Parquet's magic
    bytes come from the same first bytes (``start``)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self) -> str:
        return self.text

    @cached_property
    def start(self) -> bytes:
        return head_bytes(self.path, HEAD_BYTES)

    @cached_property
    def text(self) -> str:
        return head_text(self.path, self.start, HEAD_BYTES)

    @cached_property
    def folder(self) -> bool:
        return is_dir(self.path)

    @cached_property
    def parquet(self) -> bool:
        if self.folder:
            return _parquet_folder(self.path)
        try:
            magic = self.start[:4] == PARQUET_MAGIC
        except InputFormatError:  # unreadable: said by the reader that is chosen instead
            return False
        if magic and spooled(self.path) is not None:
            raise _parquet_in_pipe(self.path)
        return magic


@dataclass(frozen=True)
class Format:
    """One format: its name, a line for the help, and what the library can do with it."""

    name: str
    summary: str
    sniff: Callable[[str, Head], bool] | None = None
    """Whether the file at a path is in this format (None: never detected, only asked for by name)."""
    read_qrels: Callable[[str], Qrels] | None = None
    read_run: Callable[[str, Qrels | None, IdLocator | None], tuple[Run, ResultsReport]] | None = None
    write_qrels: Callable[..., int] | None = None
    """``(qrels, path, *, force) -> judgments written``."""
    write_run: Callable[..., int] | None = None
    """``(run, path, *, run_tag, force) -> lines (rows) written``."""
    suffix: str | None = None
    """An output named with this ending is written in this format."""
    unit: str = "lines"
    """What ``write_run`` counts."""
    whole: bool = False
    """A run in this format is read whole: never in pieces, one task on a cluster (JSON results, RAG-checked when
    their reader's report says they are search results: ``ResultsReport.searched``)."""
    run_by_name: bool = True
    """Whether ``format=`` may name it for a run (BEIR's run reader only answers a file detected as BEIR)."""
    judgment_kind: str = "relevance"
    """What its judgments are (``tables.judgment_kinds``): ``relevance`` (one grade per document), ``groups``
    (judgment groups) or ``preferences``."""


FORMATS: dict[str, Format] = {}
"""Every format, by name, in the order of detection."""


def register_format(fmt: Format) -> Format:
    """Add ``fmt`` to the registry; a name is registered once."""
    if fmt.name in FORMATS or fmt.name == "auto":
        raise ValueError(f"the format {fmt.name!r} is registered already")
    FORMATS[fmt.name] = fmt
    return fmt


def qrels_formats() -> tuple[str, ...]:
    """The values of ``format=`` for judgments: ``auto`` (detect), then every format that reads them."""
    return ("auto", *(name for name, fmt in _by_help() if fmt.read_qrels is not None))


def run_formats() -> tuple[str, ...]:
    """The values of ``format=`` for runs: ``auto`` (detect), then every format that reads them."""
    return ("auto", *(name for name, fmt in _by_help() if fmt.read_run is not None and fmt.run_by_name))


def _by_help() -> list[tuple[str, Format]]:
    """The formats in the order the help lists them: those detected first, then those asked by name."""
    order = list(FORMATS)
    return sorted(FORMATS.items(), key=lambda item: _HELP_ORDER.get(item[0], len(_HELP_ORDER) + order.index(item[0])))


def detect(path: str) -> str:
    """The name of the first format whose ``sniff`` recognises the file at ``path``."""
    head = Head(path)
    for name, fmt in FORMATS.items():
        if fmt.sniff is not None and fmt.sniff(path, head):
            return name
    return "trec"


def for_output(path: str | os.PathLike[str]) -> Format:
    """The format an output is written in: the one whose ``suffix`` ends its name, else TREC."""
    name = os.fspath(path).lower()
    return next((fmt for fmt in FORMATS.values() if fmt.suffix and name.endswith(fmt.suffix)), FORMATS["trec"])


def is_whole(run_format: str, path: str) -> bool:
    """Whether the run at ``path`` (``run_format``, or detected when ``"auto"``) is read whole."""
    name = detect(path) if run_format == "auto" else run_format
    return name in FORMATS and FORMATS[name].whole


def first_data_line(text: str) -> str:
    """The first line holding a field and not starting with '#' (lines end at '\\n' only, as in the
    TREC reader: U+2028 or \\x1c do not end a line)."""
    return next((line for line in text.split("\n") if split_fields(line) and not line.startswith("#")), "")


SNIFFED_LINES = 64
"""How many of the head's first data lines decide a text format (``head_lines``)."""


def head_lines(text: str) -> list[str]:
    """The first ``SNIFFED_LINES`` data lines of a file's head (as ``first_data_line`` counts them), whole
    lines only: the last one is left out when the head may have cut it."""
    lines = text.split("\n", SNIFFED_LINES * 4)  # enough for comments and blank lines between them
    # the last is the rest of the text past those, or a line the head may have cut (4 bytes a character)
    if len(lines) > SNIFFED_LINES * 4 or (len(lines) > 1 and len(text) >= HEAD_BYTES // 4):
        lines.pop()
    data = (line for line in lines if split_fields(line) and not line.startswith("#"))
    return list(itertools.islice(data, SNIFFED_LINES))


def _looks_tabular(line: str) -> bool:
    """A TREC line (``looks_like_trec_line``) or a BEIR row: three tab-separated fields, an integer last."""
    if looks_like_trec_line(line):
        return True
    fields = line.split("\t")
    if len(fields) != 3 or not all(field.strip() for field in fields):
        return False
    try:
        parse_integer(fields[2].strip())
    except ValueError:
        return False
    return True


def mostly_tabular(lines: list[str]) -> bool:
    """Whether more of ``lines`` look like TREC lines or BEIR rows than not: such a file with a bad line (a
    field lost, whatever its first character) is still read as TREC or BEIR, so that the error names that line."""
    return sum(_looks_tabular(line) for line in lines) * 2 > len(lines)


def looks_like_trec_line(line: str) -> bool:
    """A qrels line (4 fields, integer relevance) or a run line (6 fields, numeric score): a query id
    may start with '[' or '{', so the first character alone does not make a file JSON."""
    fields = split_fields(line)
    try:
        if len(fields) == 4:
            parse_integer(fields[3])
            return True
        if len(fields) == 6:
            parse_real(fields[4])
            return True
    except ValueError:
        return False
    return False


# -- the formats ------------------------------------------------------------------------------------------

PARQUET_MAGIC = b"PAR1"
"""The first four bytes of every Parquet file."""


def is_parquet(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a Parquet file (by its magic bytes) or a directory holding Parquet files
    (``io.parquet.parquet_files``)."""
    name = os.fspath(path)
    return _parquet_folder(name) if is_dir(name) else _parquet_file(name)


def _parquet_folder(name: str) -> bool:
    from trec_rag_eval.io.parquet import parquet_files

    return bool(parquet_files(name))


def _parquet_file(name: str) -> bool:
    data = spooled(name)
    if data is not None:  # a pipe or standard input, read once
        if data[:4] == PARQUET_MAGIC:
            raise _parquet_in_pipe(name)
        return False
    try:
        with open_bytes(name, head=True) as handle:
            return handle.read(4) == PARQUET_MAGIC
    except (OSError, InputFormatError):  # said by the reader that is chosen instead
        return False


def _parquet_in_pipe(name: str) -> InputFormatError:
    return InputFormatError(name, None, "a Parquet file is read from a file, not from a pipe or standard input: "
                            "save it to a file first")


def _is_parquet(path: str, head: Head) -> bool:
    return head.parquet


def _is_json(path: str, head: Head) -> bool:
    if head.folder:
        return False
    stripped = head().lstrip()
    if stripped[:1] not in ("[", "{"):
        return False
    # a query id may start with '[' or '{': TREC lines and BEIR rows are theirs, the first one bad or not
    lines = head_lines(stripped)
    return not _looks_tabular(first_data_line(stripped)) and not mostly_tabular(lines)


def _beir_fields(line: str) -> list[str]:
    return line.split("\t") if "\t" in line else split_fields(line)


def _is_beir(path: str, head: Head) -> bool:
    """A folder (not Parquet partitions), or a text whose first line is BEIR's header (query-id corpus-id score,
    tab-separated) or more of whose lines have BEIR's 3 columns than TREC's 4 or 6: the lines decide, not the
    first alone, so that a TREC file whose first line lost a field is read as TREC (and the other way round)."""
    if head.folder:  # a folder that is not Parquet partitions: a BEIR dataset
        return True
    lines = head_lines(head().lstrip())
    if not lines:  # a first line longer than the head: its fields are not all there
        return False
    first = [field.strip(" ").lower() for field in _beir_fields(lines[0])]
    if len(first) == 3 and set(first[:2]) & BEIR_HEADER_WORDS:
        return True  # the header
    # a tie is TREC's, the fallback
    return sum(len(_beir_fields(line)) == 3 for line in lines) > sum(looks_like_trec_line(line) for line in lines)


def _read(module: str, function: str) -> Callable[..., Any]:
    """A reader or writer of ``module``, imported when first called (a TREC pair needs no polars)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        from importlib import import_module

        return getattr(import_module(f"trec_rag_eval.io.{module}"), function)(*args, **kwargs)

    call.__name__ = function
    return call


def _report(read: Callable[[str], Run]) -> Callable[[str, Qrels | None, IdLocator | None], tuple[Run, ResultsReport]]:
    """A run reader whose format has nothing a Run cannot hold: its report is empty."""
    def read_with_empty_report(path: str, qrels: Qrels | None, id: IdLocator | None) -> tuple[Run, ResultsReport]:
        return read(path), ResultsReport()

    return read_with_empty_report


def _dataset(shape: str | None) -> Callable[[str], Qrels]:
    def read(path: str) -> Qrels:
        from trec_rag_eval.io.json.content import read_dataset

        return read_dataset(path, shape)

    return read


def _results(path: str, qrels: Qrels | None, id: IdLocator | None) -> tuple[Run, ResultsReport]:
    from trec_rag_eval.io.json.content import read_results_report

    return read_results_report(path, qrels, id=id)


def _is_prefs(path: str, head: Head) -> bool:
    """Whether ``path`` holds preferences by its names: Parquet with their columns, or JSON objects with their
    keys. Text is read as preferences when asked for (``format='prefs'``, trec_eval's ``-R prefs``): five
    fields on a line are as likely a qrels or run line gone wrong, which their readers name."""
    if head.folder:
        return False
    if head.parquet:  # the Parquet reader's module only for a Parquet file: a text file never loads it
        from trec_rag_eval.io.parquet import column_names
        from trec_rag_eval.tables.judgment_kinds import PREFERENCE_COLUMNS

        return set(PREFERENCE_COLUMNS) <= set(column_names(path))
    start = head().lstrip()
    return start[:1] in ("[", "{") and all(f'"{key}"' in start[:2000] for key in ("subgroup", "level", "group"))


_HELP_ORDER = {"trec": 0, "json": 1, "beir": 2, "parquet": 3}

# preferences come first: their Parquet and JSON files would otherwise be taken for qrels
register_format(Format("prefs", "preferences: query_id group subgroup doc_id level a line (trec_eval -R prefs), "
                       "or those columns in Parquet or JSON (detected)", sniff=_is_prefs,
                       read_qrels=_read("prefs_files", "read_preferences"),
                       read_run=_read("prefs_files", "refuse_as_run"),
                       write_qrels=_read("prefs_files", "write_preferences"), run_by_name=False,
                       judgment_kind="preferences"))
register_format(Format("parquet", "a Parquet file or a folder of partitions (query_id, doc_id, score / relevance)",
                sniff=_is_parquet, read_qrels=_read("parquet", "read_parquet_qrels"),
                read_run=_report(_read("parquet", "read_parquet_run")),
                write_qrels=_read("parquet", "write_parquet_qrels"), write_run=_read("parquet", "write_parquet_run"),
                suffix=".parquet", unit="rows"))
register_format(Format("json", "JSON or JSONL: a dataset (rows, ragas, LlamaIndex, dict) or results", sniff=_is_json,
                read_qrels=_dataset(None), read_run=_results, whole=True))
register_format(Format("beir", "BEIR: a dataset folder, or a qrels TSV with a queries.jsonl beside it", sniff=_is_beir,
                read_qrels=_read("published.beir", "read_beir"), read_run=_read("published.beir", "read_beir_run"),
                run_by_name=False))
register_format(Format("trec", "TREC: query_id iteration doc_id relevance / query_id Q0 doc_id rank score run_tag",
                read_qrels=_read("trec.qrels_runs", "read_trec_qrels"),
                read_run=_report(_read("trec.qrels_runs", "read_trec_run")),
                write_qrels=_read("writers", "write_trec_qrels"), write_run=_read("writers", "write_trec_run")))
register_format(Format("qrels_prefs", "a qrels file read as preferences: the iteration column as the judgment group, "
                       "the relevance as the level (trec_eval -R qrels_prefs)",
                       read_qrels=_read("prefs_files", "read_qrels_as_preferences"), judgment_kind="preferences"))
register_format(Format("qrels_jg", "qrels whose iteration column names the judgment group (trec_eval -R qrels_jg)",
                       read_qrels=_read("prefs_files", "read_grouped"), judgment_kind="groups"))
for _shape, _name, _summary in (("rows", "rag", "JSON rows (id, query, relevant, ...)"),
                                ("rows", "ragas", "ragas rows"),
                                ("llamaindex", "llamaindex", "LlamaIndex's queries/corpus/relevant_docs"),
                                ("dict", "dict", "a ranx / pytrec_eval dict {query_id: {doc_id: relevance}}")):
    register_format(Format(_name, _summary, read_qrels=_dataset(_shape)))


# -- loading ---------------------------------------------------------------------------------------------

QRELS_FORMATS = qrels_formats()
"""Values of ``load_qrels(format=...)`` (the registry above). ``json`` detects the JSON
shape; ``rag``/``ragas`` (rows), ``llamaindex`` and ``dict`` (ranx/pytrec_eval) force one."""
RUN_FORMATS = run_formats()
"""Values of ``load_run(format=...)`` (the registry above)."""


def detect_format(path: str | os.PathLike[str]) -> str:
    """The name of the format of ``path``, from its content (``detect``): ``"trec"``,
    ``"json"``, ``"beir"`` or ``"parquet"``."""
    return detect(os.fspath(path))


def detect_kind(path: str | os.PathLike[str]) -> str:
    """What a file holds: ``"dataset"`` (judgments), ``"results"`` (a run) or ``"both"`` (ragas rows).

    TREC: more lines of six fields than of four make a run (the first line decides a tie), otherwise qrels, so
    that a run whose first line lost a field is still a run, its error naming that line. BEIR: a dataset. Parquet: a
    ``score`` column makes a run, otherwise judgments. JSON: see ``io.json.content.json_content_kind``.
    """
    name = os.fspath(path)
    fmt = detect_format(name)
    if fmt == "parquet":
        from trec_rag_eval.io.parquet import column_names

        return "results" if "score" in column_names(name) else "dataset"
    if fmt == "json":
        from trec_rag_eval.io.json import content

        return content.json_content_kind(name)
    if fmt == "beir":
        return "dataset"
    counts = [len(split_fields(line)) for line in head_lines(read_head(name, HEAD_BYTES))]
    six, four = counts.count(6), counts.count(4)
    if six != four:
        return "results" if six > four else "dataset"
    return "results" if counts[:1] == [6] else "dataset"


def load_qrels(
    path: str | os.PathLike[str], format: str | None = None, *, topics: str | os.PathLike[str] | None = None
) -> Qrels:
    """Read judgments from a TREC qrels file, a JSON/JSONL dataset, BEIR data, Parquet, or an ir_datasets
    dataset named ``irds:<dataset id>`` (``irds:msmarco-passage/trec-dl-2019``; the ``irds`` extra).

    ``format`` is one of ``QRELS_FORMATS`` (None or "auto": detect). ``topics`` names a
    ``query_id<TAB>text`` file whose texts are attached as ``Qrels.topics`` (for TREC qrels).
    """
    name = os.fspath(path)
    if is_irds_name(name):  # irds:<dataset id>: qrels and topics from ir_datasets (the irds extra)
        from trec_rag_eval.io.published.irds import read_irds_qrels

        irds = read_irds_qrels(name)
        return dataclasses.replace(irds, topics=load_topics(topics), checked=True) if topics is not None else irds
    fmt = _choose(name, format, QRELS_FORMATS, "qrels_format", "load_qrels(format=...)")
    read = FORMATS[fmt].read_qrels
    assert read is not None  # QRELS_FORMATS lists the formats that read judgments
    qrels = read(name)
    if topics is not None:
        qrels = dataclasses.replace(qrels, topics=load_topics(topics), checked=True)
    return qrels


def load_run(path: str | os.PathLike[str], format: str | None = None, qrels: Qrels | None = None,
             id: IdLocator | None = None) -> Run:
    """Read a TREC run, JSON/JSONL results or Parquet; ``qrels`` (with topics) matches results keyed by query text.
    Result lists whose scores rise along them are ranked in their order all the same, and warned about
    (``io.ranked_lists``; ``load_run_report`` leaves that to its caller, in its report). ``id``: where
    each JSON result keeps its document id (``io.id_paths``)."""
    run, report = load_run_report(path, format, qrels, id)
    if report.disordered:
        from trec_rag_eval.errors import warn
        from trec_rag_eval.io.ranked_lists import order_warning

        warn(f"{os.fspath(path)}: {order_warning(report.disordered)}")
    return run


def load_run_shards(paths: list[str], format: str | None = None) -> Run:
    """One run written as several files (shards, in any order of queries): their rows together,
    the run tag that of the last shard, as the last line's is for one file."""
    if not paths:
        raise UsageError("no run shard given")
    import polars as pl

    runs = [load_run(path, format) for path in paths]
    return Run(pl.concat([run.frame for run in runs]), runs[-1].run_tag, paths[0],
               joined_places([run.places for run in runs]), checked=True)


def load_run_report(
    path: str | os.PathLike[str], format: str | None = None, qrels: Qrels | None = None,
    id: IdLocator | None = None,
) -> tuple[Run, ResultsReport]:
    """``load_run`` plus what JSON results showed and a Run cannot hold (repeated ids, empty lists),
    for ``checks.rag.check_rag``. A TREC run gives an empty report (its reader refuses repeats)."""
    name = os.fspath(path)
    fmt = _choose(name, format, RUN_FORMATS, "run_format", "load_run(format=...)")
    if id is not None and fmt not in ("json", "auto"):
        raise UsageError(f"{name}: id= says where JSON results keep their document ids; a {fmt} run has them in "
                         "its doc_id column")
    read = FORMATS[fmt].read_run
    assert read is not None  # RUN_FORMATS and detection give formats that read runs
    return read(name, qrels, id)


def _choose(path: str, format: str | None, allowed: tuple[str, ...], parameter: str, written: str) -> str:
    """The format to read ``path`` with; ``parameter`` (written ``written`` in the message) names the
    choice in errors."""
    if format is None or format == "auto":
        if path != STANDARD_INPUT and not exists(path):
            raise InputFormatError(path, None, "no such file")
        return detect_format(path)
    if format not in allowed:
        raise UsageError(f"unknown format {format!r} for {written}; expected one of {', '.join(allowed)}",
                         {written: parameter})
    return format
