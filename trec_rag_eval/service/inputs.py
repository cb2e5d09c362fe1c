"""The inputs of every evaluation, in any shape: judgments and runs from any value the library takes (``as_qrels``,
``as_run``: a ``Qrels`` or ``Run`` as it is, a path to any file ``io.loading`` reads, or an in-memory shape,
``tables.shapes``), the judgments (``read_judgments``; a cluster's workers read them again by
``service.spread.qrels_loader``), a run read whole (``run_from_any_shape``, ``read_whole_run``, its
chunk ids mapped as ``doc_id_map`` says), the judgments and one run together (``read_pair``), and the run files a
folder stands for and their sizes (``run_files``), which decide how each is read: whole, on a background thread
while the judgments are read (``read_ahead``), or in pieces when too large for the memory (``should_stream``;
``service.large_runs`` evaluates those), and one read whole (``read_run_file``)."""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from trec_rag_eval.call_scope import carried
from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.loading import FORMATS, load_qrels, load_run
from trec_rag_eval.notes import Note, note
from trec_rag_eval.run_outcome import map_chunks
from trec_rag_eval.tables import Qrels, Run
from trec_rag_eval.tables.bulk import blocked_run_columns, id_texts, joined_strings
from trec_rag_eval.tables.shapes import (
    QRELS_KINDS,
    RUN_KINDS,
    empty_keys,
    is_columns,
    library_of,
    none_empty,
    qrels_data,
    run_data,
    source_name,
)
from trec_rag_eval.tables.small_frames import PANDAS_LIST_MAX_ROWS, POLARS_LIST_MAX_ROWS, frame_content

if TYPE_CHECKING:
    from trec_rag_eval.io.chunks import DocIdMap
    from trec_rag_eval.io.id_paths import IdLocator
    from trec_rag_eval.tables import ResultsReport


# -- values in memory ----------------------------------------------------------------------------

def as_qrels(value: Any, name: str = "qrels") -> Qrels:
    """Judgments from any object ``tables.shapes`` accepts, a path to any file ``load_qrels`` reads, or a
    ``Qrels`` as it is. A dict or a DataFrame given again with the same content gives the same ``Qrels``
    (``_prepared``)."""
    if isinstance(value, Qrels):
        return value
    # preference judgments pass as they are; a value is one only once their module (tables.judgment_kinds) is
    # loaded, which judgments of relevance alone never need
    kinds = sys.modules.get("trec_rag_eval.tables.judgment_kinds")
    if kinds is not None and isinstance(value, kinds.Preferences):
        return value  # type: ignore[no-any-return]
    if isinstance(value, (str, os.PathLike)):
        return load_qrels(value)
    if isinstance(value, list) and value and isinstance(value[0], Mapping) and "doc_id" not in value[0]:
        from trec_rag_eval.io.json.content import read_dataset_rows

        return read_dataset_rows(value, f"{name} (list of dataset rows)")
    return _prepared(value, name)


def _prepared(value: Any, name: str) -> Qrels:
    """The ``Qrels`` of judgments in memory; given as a dict or a pandas or polars DataFrame, the table made the last
    time judgments of the same content came, with what the ranking derived from them (``tables.derived_from``), so a
    loop that hands ``evaluate`` its qrels at every call pays for them once. A dict's content is told by its pickle,
    which names every object's type (1, 1.0, True and numpy's 1 differ: ``marshal`` would take numpy's 1 for the
    bytes of its buffer) and differs as soon as a key, a value or their order does (or which ids are one object); a
    frame's by its columns' bytes (``tables.small_frames.frame_content``), else its pickle. Judgments past
    ``PREPARED_MAX_JUDGMENTS``, frames of ``PREPARED_MIN_FRAME_ROWS`` rows or fewer, other shapes: read every call."""
    key: tuple[Any, ...] | None = None
    size = None
    try:
        if type(value) is dict:
            size = sum(map(len, value.values()))
        elif (library := library_of(value)) is not None and PREPARED_MIN_FRAME_ROWS < len(value):
            size = len(value)
            content = frame_content(value, library == "pandas") if size <= PREPARED_MAX_JUDGMENTS else None
            key = None if content is None else (name, library, content)
        if key is None and size is not None and size <= PREPARED_MAX_JUDGMENTS:
            key = (name, pickle.dumps(value, protocol=5))
    except Exception:  # noqa: BLE001 - a value without a length, an object pickle refuses: read as it is
        pass
    if key is not None:
        with _PREPARED_LOCK:
            kept = _PREPARED.pop(key, None)
            if kept is not None:
                _PREPARED[key] = kept  # now the newest
                return kept[0]
    table = Qrels(qrels_data(value, name, QRELS_KINDS, frames_checked=True), source_name(value, name),
                  unjudged=empty_keys(value), checked=True)
    if key is not None:  # kept once made: a dict that fails a check raised above
        with _PREPARED_LOCK:
            _PREPARED[key] = (table, size or 0)
            while len(_PREPARED) > PREPARED_KEPT or sum(n for _, n in _PREPARED.values()) > PREPARED_KEPT_JUDGMENTS:
                del _PREPARED[next(iter(_PREPARED))]  # the one used longest ago
    return table


PREPARED_KEPT = 8
"""``_prepared`` keeps the tables of the last eight judgments used (a development and a test set; datasets in turn)."""
PREPARED_MAX_JUDGMENTS = 100_000  # larger judgments are not kept: their pickle and table would stay in memory
PREPARED_KEPT_JUDGMENTS = 200_000
"""The kept tables' judgments in all, ~95 bytes each kept: past it, those used longest ago are let go."""
PREPARED_MIN_FRAME_ROWS = max(POLARS_LIST_MAX_ROWS, PANDAS_LIST_MAX_ROWS)
"""A frame of at most this many rows is read as lists (``tables.small_frames``) about as fast as it is found again: not
kept (one query of ten, between other work, found by its pickle: pandas 0.50-0.72 ms a call, 0.64-0.79 kept)."""
_PREPARED: dict[tuple[Any, ...], tuple[Qrels, int]] = {}
_PREPARED_LOCK = threading.Lock()


def as_run(value: Any, qrels: Qrels | None = None, name: str = "run", run_tag: str = "run",
           id: IdLocator | None = None) -> Run:
    """A run from any object ``tables.shapes`` accepts, a path to any file ``load_run`` reads, or a
    ``Run`` as it is; ``qrels`` (with topics) lets JSON results keyed by query text find their query ids."""
    if isinstance(value, Run):
        return value
    if isinstance(value, (str, os.PathLike)):
        return load_run(value, qrels=qrels, id=id)
    source = source_name(value, name)
    if isinstance(value, Mapping) and qrels is not None and qrels.topics:
        from trec_rag_eval.io.json.runs import keyed_by_query_id

        value = keyed_by_query_id(value, qrels, source)
    return Run(run_data(value, name, RUN_KINDS, frames_checked=True), run_tag, source, checked=True)


# -- judgments -------------------------------------------------------------------------------------

def read_judgments(qrels: Any, *, format: str | None = None, topics: str | os.PathLike[str] | None = None,
                   judgments: str | None = None) -> tuple[Qrels, list[Note]]:
    """The judgments ``qrels`` (a path in any format the library reads, or any in-memory shape) and
    the notes about them. ``topics``: a TREC topics file (its queries with no judgment are evaluated
    too); ``judgments``: which judgments of a qrels file written by ``judge`` count (``"human"``,
    ``"llm"`` or ``"both"``, the default when its sidecar is there). Read in the scope of the facade's call
    (``api.read_judgments`` is this function in a scope of its own: ``call_scope.per_call``)."""
    is_path = isinstance(qrels, (str, os.PathLike))
    if is_path:
        table = load_qrels(qrels, format, topics=topics)
    else:
        if topics is not None or format not in (None, "auto"):
            raise UsageError("topics= and format= describe a qrels file: give the qrels as its path",
                             {"topics=": "topics", "format=": "qrels_format"})
        table = as_qrels(qrels)
    if judgments is None and not is_path:
        return table, []
    if not is_path:
        raise UsageError("judgments= chooses among the judgments of a qrels file written by judge: give the qrels "
                         f"as that file's path (got {type(qrels).__name__})")
    from trec_rag_eval.io.sources import SIDECAR_SUFFIX, is_file

    if judgments is None and not is_file(os.fspath(qrels) + SIDECAR_SUFFIX):  # judge wrote no sidecar beside it
        return table, []  # (the judgments module, entered only to choose among judge's views, is not)
    from trec_rag_eval.io.judgments import choose_judgments

    table, said = choose_judgments(qrels, table, judgments)
    return table, [] if said is None else [note(said)]


def has_llm_judgments(notes: Sequence[Note]) -> bool:
    """Whether the judgments read by ``read_judgments`` include an LLM's (the judge sidecar was used)."""
    return any(n.message.startswith("judgments: ") and not n.message.startswith("judgments: human")
               for n in notes)

# -- runs --------------------------------------------------------------------------------------------

def doc_id_map(value: Any = None) -> DocIdMap | None:
    """The chunk -> document map asked for (``value``: anything ``io.chunks.as_doc_map`` takes: a regular
    expression, a dict, a callable, a map file as ``os.PathLike``, the one value of ``doc_map_asked``); None
    when none is given."""
    if value is None:
        return None
    from trec_rag_eval.io.chunks import as_doc_map

    return as_doc_map(value)


def run_from_any_shape(value: Any, qrels: Qrels | None = None, name: str = "run", run_tag: str = "run",
                       id: IdLocator | None = None) -> Run:
    """A run in any shape the library takes (``as_run``), plus what a search function returns,
    per query: ``{query_id: results}`` where results are ``{"id", "score"}`` dicts, ``(id, score)``
    pairs or LangChain / LlamaIndex objects, best first (read as the engine harness reads them:
    ``engine.search_results.ranked_results``). A list is ranked in its order, whatever its scores
    (``io.ranked_lists``); scores that rise along it, and a document listed twice (its first place kept), are
    warned about, as from a file. ``id``: where each result keeps its document id (a key path such as
    ``"metadata.source"`` or a callable, ``io.id_paths``), in memory and in a JSON results file: checked
    (``check_locator``) where the caller took it from the user, before anything is read (``check_options``,
    ``read_pair``, ``read_whole_run``)."""
    if id is not None and isinstance(value, (str, os.PathLike)):
        return as_run(value, qrels, name, run_tag, id=id)
    if isinstance(value, Mapping) and not is_columns(value, "score"):
        table = _run_from_mapping(value, qrels, name, run_tag, id)
        empty = _empty_queries(value, qrels)
        if not empty:
            return table
        import dataclasses

        return dataclasses.replace(table, empty_queries=empty, checked=True)
    return as_run(value, qrels, name, run_tag)


def _empty_queries(value: Mapping[Any, Any], qrels: Qrels | None) -> frozenset[str]:
    """The queries of ``{query: results}`` answered with an empty list (or dict): a search that found
    nothing. Keys are query ids, or the dataset's query texts (``Qrels.topics``)."""
    if none_empty(value):
        return frozenset()
    empty = [key for key, results in value.items() if isinstance(results, (list, tuple, dict)) and not results]
    if not empty:
        return frozenset()
    by_text = {text: query_id for query_id, text in ((qrels.topics if qrels is not None else None) or {}).items()}
    return frozenset(by_text.get(key, str(key)) if isinstance(key, str) else str(key) for key in empty)


def _run_from_mapping(value: Mapping[Any, Any], qrels: Qrels | None, name: str, run_tag: str,
                      id: IdLocator | None) -> Run:
    if _holds_any_results(value):
        from trec_rag_eval.engine.search_results import ranked_results, ranked_search_results

        repeated: list[tuple[object, str, int]] = []
        read = ranked_search_results(value) if id is None else None  # the usual shapes, on whole columns
        if read is not None:
            doc_ids, ranked, lengths, disordered = read
            query_ids = None if qrels is not None and qrels.topics else id_texts(list(value))
            if query_ids is not None:  # keyed by query ids: the run's columns as they are
                table = Run(blocked_run_columns(query_ids, doc_ids, ranked, lengths), run_tag, source_name(value, name),
                            checked=True)
            else:  # keyed by the dataset's query texts, or by ids only the rows can word: as a dict of dicts
                scores, bounds = ranked.tolist(), [0, *accumulate(lengths)]
                table = as_run({query_id: dict(zip(doc_ids[a:b], scores[a:b], strict=True))
                                for query_id, a, b in zip(value, bounds[:-1], bounds[1:], strict=True)},
                               qrels, name, run_tag)
        else:
            scored: dict[Any, dict[str, float]] = {}
            disordered = []
            for query_id, results in value.items():
                doc_ids, scores, rising = ranked_results(results, depth=max(len(results), 1), id=id)
                scored[query_id] = dict(zip(doc_ids, scores, strict=True))
                if rising:
                    disordered.append(str(query_id))
                if len(doc_ids) < len(results):  # a document given twice: its first place kept, as from a file
                    repeated += _repeats(query_id, results, id)
            table = as_run(scored, qrels, name, run_tag)
        if repeated:
            from trec_rag_eval.errors import warn
            from trec_rag_eval.io.ranked_lists import repeat_warning

            warn(f"{table.source}: {repeat_warning(repeated)}")
        if disordered:
            from trec_rag_eval.errors import warn
            from trec_rag_eval.io.ranked_lists import order_warning

            warn(f"{table.source}: {order_warning(disordered)}")
        return table
    return as_run(value, qrels, name, run_tag)


def _repeats(query_id: Any, results: Any, id: IdLocator | None) -> list[tuple[object, str, int]]:
    """The documents given more than once in one query's search results, as a results file's check names them."""
    from collections import Counter

    from trec_rag_eval.engine.search_results import result_item

    counts = Counter(result_item(item, id)[0] for item in results)
    return [(query_id, doc_id, n) for doc_id, n in counts.items() if n > 1]


def _holds_any_results(value: Mapping[Any, Any]) -> bool:
    """Whether some query's value is a list of result items rather than of doc ids (or a dict of scores),
    told by the kinds of the values and of the items, not by a Python step per item."""
    if not any(issubclass(kind, (list, tuple)) for kind in set(map(type, value.values()))):
        return False
    return any(isinstance(results, (list, tuple)) and not _all_ids(results) for results in value.values())


def _all_ids(items: list[Any] | tuple[Any, ...]) -> bool:
    """Whether every item is a doc id (a string or an integer, of those types or theirs): a list of strings, the
    usual one, told by joining them (``joined_strings``)."""
    return joined_strings(items) is not None or all(issubclass(kind, (str, int)) for kind in set(map(type, items)))


def read_whole_run(value: Any, qrels: Qrels, *, name: str = "run", run_tag: str = "run", run_format: str = "auto",
                   doc_map: Any = None, id: IdLocator | None = None) -> tuple[Run, list[Note]]:
    """One run, whole, in any shape (a path in any format, or in memory), its chunk ids mapped to
    documents when ``doc_map`` asks, and the notes about it: the run every command that needs a run
    in memory (compare, crosscheck, validate) evaluates. ``name`` and ``run_tag``: those of a run in
    memory (a file's come from the file); ``id``: where each result keeps its document id (``run_from_any_shape``)."""
    from trec_rag_eval.io.id_paths import check_locator

    id = check_locator(id)
    if isinstance(value, (str, os.PathLike)):
        run = load_run(value, run_format, qrels, id)
    else:
        run = run_from_any_shape(value, qrels, name=name, run_tag=run_tag, id=id)
    mapped, notes, _ = map_chunks(run, doc_id_map(doc_map), qrels)
    return mapped, notes


def check_run_format(runs: Sequence[Any], run_format: str | None) -> None:
    """Refuse a ``run_format`` given when no run is a file: it says how a file is read, and would be ignored."""
    if run_format not in (None, "auto") and runs and not any(isinstance(run, (str, os.PathLike)) for run in runs):
        raise UsageError("run_format= describes a run file: give the run as its path", {"run_format=": "run_format"})


def read_pair(qrels: Any, run: Any, options: dict[str, Any]) -> tuple[Qrels, Run]:
    """The judgments and the one run of ``crosscheck`` and ``validate``, read as ``evaluate`` reads them
    (their notes warned to the caller of the public function); their reading options (``qrels_format``, ``topics``,
    ``judgments``, ``run_format``, ``doc_map`` or ``doc_id_pattern``, ``id``) taken out of ``options``; an ``id``
    that is no key path, or both ways of mapping chunk ids, refused before anything is read."""
    from trec_rag_eval.io.chunks import doc_map_asked
    from trec_rag_eval.io.id_paths import check_locator

    check_locator(options.get("id"))
    check_run_format([run], options.get("run_format"))
    doc_map = doc_map_asked(options.pop("doc_map", None), options.pop("doc_id_pattern", None))
    judgments, notes = read_judgments(qrels, format=options.pop("qrels_format", None),
                                      topics=options.pop("topics", None), judgments=options.pop("judgments", None))
    table, more = read_whole_run(run, judgments, run_format=options.pop("run_format", "auto"), doc_map=doc_map,
                                 id=options.pop("id", None))
    if isinstance(run, (str, os.PathLike)):
        more = [said.about(os.fspath(run)) for said in more]
    for said in notes + more:
        said.warn()
    return judgments, table


# -- run files: listed, sized, and how each is read (whole, ahead, or in pieces) ---------------------

def run_files(runs: Sequence[Any], folders: bool = True, workers_read: bool = False
              ) -> tuple[list[Any], dict[str, int]]:
    """The runs to evaluate (paths as ``str``), and the size of each that is a file, by path
    (``io.sources.size_if_file``): asked once, here, for what decides how a run is read (``read_ahead``,
    ``should_stream``). With ``folders``, when every run is a path, a folder stands for the files in it, in name
    order, except a folder of Parquet files, which is one run in partitions. A folder given by URL is listed
    through fsspec (``io.sources``): its files are named by the folder's URL, and none is opened here.
    ``workers_read``: a cluster's workers read the runs, with their own credentials: no size is asked, and a URL
    this machine lacks the credentials to ask about is taken for a run file, left to them. A URL whose size
    cannot be asked here has none: its reader says why in its turn."""
    from trec_rag_eval.errors import TrecRagEvalError
    from trec_rag_eval.io.loading import is_parquet
    from trec_rag_eval.io.sources import is_dir, is_dir_here, join, list_dir, size_if_file

    sizes: dict[str, int] = {}

    def sized(path: str) -> bool:
        """Whether ``path`` is a file (its size kept in ``sizes``)."""
        if workers_read:
            return False
        try:
            found = size_if_file(path)
        except TrecRagEvalError:
            return False
        if found is not None:
            sizes[path] = found
        return found is not None

    expand = folders and all(isinstance(run, (str, os.PathLike)) for run in runs)
    out: list[Any] = []
    for run in runs:
        if not isinstance(run, (str, os.PathLike)):
            out.append(run)
            continue
        path = os.fspath(run)
        if sized(path) or not expand or not (is_dir_here(path) if workers_read else is_dir(path)) or is_parquet(path):
            out.append(path)
            continue
        try:
            entries = list_dir(path)
        except OSError as err:
            raise InputFormatError(path, None, f"cannot read the folder: {err.strerror or err}") from None
        found = sorted(join(path, name) for name, is_file in entries if not name.startswith(".") and is_file)
        if not found:
            raise InputFormatError(path, None, "no run file in this folder (sub-folders are not read)")
        for name in found:
            sized(name)
        out.extend(found)
    return out, sizes


def read_run_file(path: str, run_format: str = "auto", qrels: Qrels | None = None, id: IdLocator | None = None,
                  ahead: RunReader | None = None) -> tuple[Run, ResultsReport]:
    """The run file at ``path``, whole, and its reader's report (``io.loading.load_run_report``: any format;
    ``qrels`` with topics lets JSON results keyed by query text find their ids; ``id``: where each JSON result
    keeps its document id): taken from ``ahead`` when that reader is reading this file since before the
    judgments were read (``read_ahead``), else read now."""
    if ahead is not None and ahead.path == path:
        return ahead.result()
    from trec_rag_eval.io.loading import load_run_report

    return load_run_report(path, run_format, qrels, id)


STREAM_MEMORY_SHARE = 4
"""A run is read in pieces when it would take more than 1/STREAM_MEMORY_SHARE of the available memory."""
GZIP_RATIO = 8
"""A gzip run counts as this many times its size (a typical ratio for runs)."""
LEAST_MEMORY = 64 << 20
"""The least memory taken to be available (64 MiB: less, and the process itself could hardly run): a run that
would not take a quarter of it even as gzip (up to 2 MiB) is read whole without asking the system how much it has."""


def should_stream(path: str, size: int | None, run_format: str = "auto") -> bool:
    """Whether the run at ``path``, a file of ``size`` bytes (None: no file, a pipe, a folder), is better read in
    pieces: a TREC run larger than a quarter of the memory available now (a gzip file counted at eight times its
    size). JSON results are read whole. A file too small to matter even as gzip is not opened to see whether it
    is, and one too small to matter even in ``LEAST_MEMORY`` does not ask how much memory is available."""
    if (run_format in FORMATS and FORMATS[run_format].whole) or size is None \
            or size * STREAM_MEMORY_SHARE * GZIP_RATIO <= LEAST_MEMORY:
        return False
    available = available_memory()
    if available is None:
        return False
    size *= STREAM_MEMORY_SHARE
    if size * GZIP_RATIO <= available:
        return False
    from trec_rag_eval.io.sources import is_gzip

    return size * (GZIP_RATIO if is_gzip(path) else 1) > available


def available_memory() -> int | None:
    """Memory the system can give without swapping (MemAvailable counts reclaimable page cache);
    None when the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:  # the kernel's figures, not a user's file
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


class RunReader:
    """A TREC run file read on a background thread (``read_ahead``): the result, or the error, of
    ``io.loading.load_run_report`` when asked for."""

    def __init__(self, path: str, run_format: str) -> None:
        import threading

        self.path = path
        self._done = threading.Event()
        self._value: tuple[Run, Any] | None = None
        self._error: BaseException | None = None
        # a daemon, so it never keeps a process alive by itself; whoever starts it still waits for it (wait)
        threading.Thread(target=carried(self._read), args=(run_format,), name="trec-rag-eval read-ahead",
                         daemon=True).start()

    def _read(self, run_format: str) -> None:
        from trec_rag_eval.io.loading import load_run_report

        try:
            self._value = load_run_report(self.path, run_format)
        except BaseException as err:  # handed to the thread that asks for the run
            self._error = err
        finally:
            self._done.set()

    def wait(self) -> None:
        """Until the reading is over. Whoever starts a reader waits for it before leaving, even on an
        error: an interpreter that exits while pyarrow's threads still parse can crash on its way out."""
        self._done.wait()

    def result(self) -> tuple[Run, Any]:
        """The run and its report, once read; the reader's error if it failed."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


def read_ahead(path: str, size: int | None, run_format: str = "auto", stream: bool | None = None
               ) -> RunReader | None:
    """Start reading the run at ``path``, a file of ``size`` bytes (None: no file), on a background thread, if
    the service (``pipeline.run_outcomes``) would read it whole as a large TREC file; None otherwise.

    Called before the judgments are read: pyarrow parses the run (without the GIL) while polars reads
    the qrels, instead of one after the other. Pass the reader to ``pipeline.run_outcomes(ahead=...)``,
    and ``wait()`` for it before returning, whatever happens."""
    from trec_rag_eval.errors import TrecRagEvalError
    from trec_rag_eval.io.loading import detect_format
    from trec_rag_eval.io.trec.qrels_runs import SMALL_FILE_BYTES

    if stream or size is None or size < SMALL_FILE_BYTES:
        return None
    try:
        fmt = detect_format(path) if run_format == "auto" else run_format
    except (OSError, TrecRagEvalError):  # said by the reader in its turn, after the qrels' errors
        return None
    if fmt != "trec" or should_stream(path, size, fmt):
        return None
    return RunReader(path, fmt)
