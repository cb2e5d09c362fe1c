"""One run too large for one machine on a cluster (``evaluate_partitioned``): its pieces read by tasks, their
rows sent by query id to buckets, each bucket evaluated by the in-memory kernels, the values aggregated here."""

from __future__ import annotations

import math
import operator
import os
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trec_rag_eval.cluster.connection import connect, is_comm_error, scheduler_lost, task_error
from trec_rag_eval.cluster.run_tasks import Progress, again_if_lost, follow, refuse_pipes, run_kind, share_qrels
from trec_rag_eval.errors import TrecRagEvalError, TrecRagEvalWarning, UsageError

if TYPE_CHECKING:
    import polars as pl
    from distributed import Client, Future

    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.measures.requests import MeasuresArg
    from trec_rag_eval.tables import Places, Qrels, Run

ROWS_PER_PIECE = 4_000_000
"""A Parquet file with more rows is read as several pieces (slices of rows), so one large file
still spreads over the workers."""

BYTES_PER_PIECE = 128 << 20
"""A plain TREC text file larger than this is read as several pieces, byte ranges cut at line ends
(``io.trec.pieces.read_run_range``), so one large file still spreads over the workers. A gzip file is
read from its start to its end, by one task: it cannot be cut."""

PAIRS_LIMIT = 4096
"""Up to this many (piece, bucket) pairs, each piece's rows are split by bucket where it is read and
each part is handed to its bucket by a task of its own (the cheapest way, in processor time, to move
rows between workers); beyond, by Dask's peer-to-peer shuffle, whose tasks grow with the pieces and
buckets, not with their product (see ``evaluate_partitioned``)."""

ROWS_PER_BUCKET = 4_000_000
"""The run is split into about total rows / this many buckets (at least two per worker): a bucket
must fit in a worker's memory with its ranking."""



@dataclass(frozen=True)
class Piece:
    """What one task reads: a whole file (TREC text or Parquet), a slice of a Parquet file's rows, or
    a byte range of a TREC text file."""

    path: str
    kind: str
    rows: tuple[int, int] | None = None
    size: int = 0
    """Its number of rows (Parquet), or an estimate (TREC text: 40 bytes a line)."""
    span: tuple[int, int] | None = None
    """A TREC text file's bytes [start, end): the piece holds the lines that start there."""



@dataclass(frozen=True)
class PieceRead:
    """What the client learns of a piece read by a task; its rows stay on the workers."""

    run_tag: str | None
    """The tag of its last result line (None: it holds none, only comments or blank lines)."""
    lines: int = 0
    """Its line ends (a byte range): the ranges after it number their lines after these."""
    error: TrecRagEvalError | None = None
    """Bad input, numbered in the piece (``io.trec.pieces.renumbered`` numbers it in the file)."""
    warnings: tuple[tuple[str, dict[str, str] | None, str], ...] = ()
    """What the library warned of while reading it (text, parameters, kind), numbered in the piece too."""



def evaluate_partitioned(qrels: Qrels, run: str | os.PathLike[str] | Sequence[str] | Run,
                         measures: MeasuresArg = None, settings: Settings | None = None, *, cluster: Any,
                         run_format: str = "auto", buckets: int | None = None,
                         progress: Progress | None = None, qrels_from: Callable[[], Qrels] | None = None,
                         shuffle: str = "auto") -> Evaluation:
    """Evaluate one run split by query id over the cluster; see the module's docstring.

    ``run``: a Parquet file or directory of partitions, a TREC text file (cut into byte ranges when
    larger than ``BYTES_PER_PIECE``), a list of TREC (or Parquet) shards of one run, or a ``Run`` in
    memory. ``buckets``: how many partitions by query id (default: about one per
    ``ROWS_PER_BUCKET`` rows, at least two per worker). ``progress`` follows the tasks (one per
    piece read, one per bucket evaluated). ``shuffle``: how the rows read reach their bucket:
    ``"pairs"``, a task per (piece, bucket) pair (2P + PB + B tasks: the least processor time, but a
    number of tasks that grows with the square of the data); ``"p2p"``, Dask's peer-to-peer shuffle
    (7P + 2B tasks, measured; about 1.5x the processor time of the pairs in its sorting and
    serializing); ``"auto"`` (default), the pairs up to ``PAIRS_LIMIT`` of them, else p2p.
    """
    if shuffle not in ("auto", "pairs", "p2p"):
        raise UsageError(f"shuffle={shuffle!r}: expected 'auto', 'pairs' or 'p2p'", {"shuffle=": "shuffle"})
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.errors import DuplicateDocumentError
    from trec_rag_eval.evaluation.streaming import combine_pieces
    from trec_rag_eval.measures.requests import resolve_measures
    from trec_rag_eval.tables import NOWHERE, Run, duplicate_error, qrels_query_ids

    measures, settings = resolve_measures(measures), settings or Settings()

    query_ids = qrels_query_ids(qrels)  # any fixed order will do: buckets are only a way to share the work
    pieces: list[Piece] = []
    if isinstance(run, Run):
        source, total = run.source, run.frame.height
        places = run.places or NOWHERE  # a bucket's rows are not the table's
    else:
        source, pieces = _pieces(run, run_format)
        total = sum(piece.size for piece in pieces)
        places = _places(pieces)

    def once(client: Client) -> Evaluation:
        import dask
        import polars as pl

        workers = max(1, len(client.scheduler_info(n_workers=-1)["workers"]))
        token = uuid.uuid4().hex[:8]
        count = buckets or max(2 * workers, math.ceil(total / ROWS_PER_BUCKET))
        count = max(1, min(count, len(query_ids)))
        done = 0
        extra: set[str] = set()
        if isinstance(run, Run):  # already here: split here, send each bucket once
            assignment = pl.DataFrame({"query_id": query_ids, "_bucket": [i % count for i in range(len(query_ids))]},
                                      schema={"query_id": pl.Utf8, "_bucket": pl.Int64})
            parts, extra = _split(run.frame, assignment, count)
            inputs: list[Any] = client.scatter(parts)
            tags = [run.run_tag]
        elif shuffle == "pairs" or (shuffle == "auto" and len(pieces) * count <= PAIRS_LIMIT):
            assignment = pl.DataFrame({"query_id": query_ids, "_bucket": [i % count for i in range(len(query_ids))]},
                                      schema={"query_id": pl.Utf8, "_bucket": pl.Int64})
            shared = client.scatter(assignment, broadcast=True, hash=False)
            splits = [client.submit(_split_piece, piece, source, shared, count, key=f"trec-rag-eval-read-{i}-{token}")
                      for i, piece in enumerate(pieces)]
            told = [client.submit(operator.getitem, split, count, key=f"trec-rag-eval-told-{i}-{token}")
                    for i, split in enumerate(splits)]
            inputs = [[client.submit(operator.getitem, split, b, key=f"trec-rag-eval-bucket-{i}-{b}-{token}")
                       for i, split in enumerate(splits)] for b in range(count)]
            del splits  # each part is then held once, by its getitem
            done = follow(told, progress, 0, len(pieces) + count)
            found = _gather(client, told, source)
            tags = _reads_checked(pieces, [read for _, read in found], source)
            extra = extra.union(*(piece_extra for piece_extra, _ in found))
        else:
            reads = [client.submit(_read_piece, piece, source, key=f"trec-rag-eval-read-{i}-{token}")
                     for i, piece in enumerate(pieces)]
            frames = [client.submit(operator.getitem, read, 0, key=f"trec-rag-eval-rows-{i}-{token}")
                      for i, read in enumerate(reads)]
            told = [client.submit(operator.getitem, read, 1, key=f"trec-rag-eval-told-{i}-{token}")
                    for i, read in enumerate(reads)]
            del reads  # each piece's rows are then held once, by its getitem
            done = follow(told, progress, 0, len(pieces) + count)
            tags = _reads_checked(pieces, _gather(client, told, source), source)
            inputs = _shuffled(frames, count)
        judged = share_qrels(client, qrels, qrels_from, token)
        task = dask.delayed(_evaluate_bucket, pure=False)
        evaluated = client.compute([task(judged, part, measures, settings, source, places,
                                         dask_key_name=f"trec-rag-eval-evaluate-{b}-{token}")
                                    for b, part in enumerate(inputs)])
        follow(evaluated, progress, done, len(pieces) + count)
        try:
            results = _gather(client, evaluated, source)
        except DuplicateDocumentError as err:  # a run built in memory: its rows are here, not on the workers
            if not isinstance(run, Run):
                raise
            raise duplicate_error(run, err.query_id, err.doc_id) from None
        extra = extra.union(*(bucket_extra for _, bucket_extra in results))
        return combine_pieces(qrels, [part for part, _ in results if part is not None], measures, settings,
                              run_tag=tags[-1] if tags else "", source=source, extra_queries=extra)

    with connect(cluster) as client:
        return again_if_lost(source, once, client)



def _pieces(run: str | os.PathLike[str] | Sequence[str], run_format: str) -> tuple[str, list[Piece]]:
    """The run's name (for messages and the default tag) and the pieces its tasks read."""
    from trec_rag_eval.io.parquet import parquet_files, row_count
    from trec_rag_eval.io.sources import is_gzip
    from trec_rag_eval.io.sources import size as file_size

    paths = [os.fspath(run)] if isinstance(run, (str, os.PathLike)) else [os.fspath(p) for p in run]
    if not paths:
        raise UsageError("no run to evaluate")
    refuse_pipes(paths)
    pieces: list[Piece] = []
    for path in paths:
        kind = run_kind(path, run_format)
        if kind == "parquet":
            for file in parquet_files(path):
                rows = row_count(file)  # an empty partition is no piece; an empty run is refused below
                if rows <= ROWS_PER_PIECE:
                    pieces.extend([Piece(file, kind, size=rows)] if rows else [])
                else:
                    pieces.extend(Piece(file, kind, (start, min(ROWS_PER_PIECE, rows - start)),
                                        min(ROWS_PER_PIECE, rows - start)) for start in range(0, rows, ROWS_PER_PIECE))
        elif kind == "trec":
            size = file_size(path)
            if size <= BYTES_PER_PIECE or is_gzip(path):  # gzip: read from its start, whole
                pieces.append(Piece(path, kind, size=size // 40))
            else:
                step = -(-size // math.ceil(size / BYTES_PER_PIECE))
                pieces.extend(Piece(path, kind, size=(min(start + step, size) - start) // 40,
                                    span=(start, min(start + step, size))) for start in range(0, size, step))
        else:
            raise UsageError(f"{path}: a run split over a cluster must be TREC text or Parquet, not {kind}")
    if not pieces:
        from trec_rag_eval.errors import InputFormatError

        raise InputFormatError(paths[0], None, "no results found: the Parquet data has no rows")
    return paths[0], pieces



def _gather(client: Client, futures: list[Future], source: str) -> list[Any]:
    """The tasks' results; the first bad-input error a task answered with (see ``_read_piece``) is
    raised as it is, a task that failed on its worker as one ``ClusterError`` naming ``source``."""
    from concurrent.futures import CancelledError

    try:
        results = client.gather(futures)
    except (TrecRagEvalError, CancelledError):
        raise
    except Exception as err:
        if scheduler_lost(client) or is_comm_error(err):
            raise
        raise task_error(source, err) from None
    for result in results:
        if isinstance(result, TrecRagEvalError):
            raise result
    return results



def _places(pieces: list[Piece]) -> Places:
    """Where the rows of the pieces' files stand (lines of TREC text, rows of Parquet), file after file:
    a document listed twice is cited in the files, whichever buckets its rows went to."""
    from trec_rag_eval.io import parquet
    from trec_rag_eval.io.trec import qrels_runs
    from trec_rag_eval.tables import joined_places

    files = dict.fromkeys((piece.path, piece.kind) for piece in pieces)
    return joined_places([parquet.parquet_run_places(path) if kind == "parquet" else qrels_runs.trec_run_places(path)
                          for path, kind in files])



def _read_rows(piece: Piece, source: str) -> tuple[pl.DataFrame | None, PieceRead]:
    """On a worker: read one piece; its rows (None: none, or bad input) and what the client must know
    of it. Bad input is answered, not raised: it is not a task to retry, nor a failure for the worker
    to log with its traceback."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TrecRagEvalWarning)
        lines = 0
        try:
            if piece.kind == "parquet":
                from trec_rag_eval.io.parquet import read_parquet_run_files

                run: Run | None = read_parquet_run_files([piece.path], source, rows=piece.rows)
            elif piece.span is not None:
                from trec_rag_eval.io.trec.pieces import read_run_range

                run, lines = read_run_range(piece.path, *piece.span)
            else:
                from trec_rag_eval.io.trec.qrels_runs import read_trec_run

                run = read_trec_run(piece.path)
        except TrecRagEvalError as err:
            return None, PieceRead(None, lines, err)
    said = tuple((str(w.message), getattr(w.message, "parameters", None), getattr(w.message, "kind", "warning"))
                 for w in caught if issubclass(w.category, TrecRagEvalWarning))
    if run is None:
        return None, PieceRead(None, lines, warnings=said)
    return run.frame, PieceRead(run.run_tag, lines, warnings=said)



def _split_piece(piece: Piece, source: str, assignment: pl.DataFrame, count: int) -> list[Any]:
    """On a worker (the pairs): one piece read and its rows split by bucket; the last item is (the
    query ids the qrels do not know, what the client must know of the piece)."""
    frame, read = _read_rows(piece, source)
    if frame is None:
        return [None] * count + [(set(), read)]
    parts, extra = _split(frame, assignment, count)
    return [*parts, (extra, read)]



def _read_piece(piece: Piece, source: str) -> tuple[Any, PieceRead]:
    """On a worker (the p2p shuffle): one piece read, its rows in the form Dask's shuffle moves
    (pandas over the same Arrow buffers; no rows: an empty frame of the same columns)."""
    frame, read = _read_rows(piece, source)
    if frame is None:
        import polars as pl

        from trec_rag_eval.tables import RUN_SCHEMA

        frame = pl.DataFrame(schema=RUN_SCHEMA)
    return _as_pandas(frame), read



def _as_pandas(frame: pl.DataFrame) -> Any:
    """A run's rows as Dask's shuffle moves them: pandas, over the same Arrow buffers (no copy)."""
    return frame.to_pandas(use_pyarrow_extension_array=True)



def _reads_checked(pieces: list[Piece], reads: list[PieceRead], source: str) -> list[str]:
    """After every piece was read: the first piece's bad input raised, its line numbered in its whole
    file (a byte range's lines follow those of the ranges before it), the library's warnings given
    numbered so too; then the run tags that count, in order (the whole run's is the last)."""
    from trec_rag_eval.io.trec.pieces import renumbered

    before: dict[str, int] = {}  # per file: the line ends of its ranges read so far
    for piece, read in zip(pieces, reads, strict=True):
        lines_before = before.get(piece.path, 0)
        if read.error is not None:
            from trec_rag_eval.errors import InputFormatError

            raise renumbered(read.error, lines_before) if isinstance(read.error, InputFormatError) else read.error
        for text, parameters, kind in read.warnings:
            warnings.warn(TrecRagEvalWarning(_renumbered_text(text, piece.path, lines_before), parameters, kind),
                          stacklevel=2)
        before[piece.path] = lines_before + read.lines
    kept = [(piece, read.run_tag) for piece, read in zip(pieces, reads, strict=True) if read.run_tag is not None]
    if not kept:
        from trec_rag_eval.io.trec.qrels_runs import RUN_COLUMNS, NoResultsError

        raise NoResultsError(source, None, f"no results found, expected lines of {RUN_COLUMNS}")
    return _piece_tags([piece for piece, _ in kept], [tag for _, tag in kept], source)



def _renumbered_text(text: str, path: str, lines_before: int) -> str:
    """A warning of the library about a line (``path:N: ...``) read in a byte range, numbered in the file."""
    prefix = f"{path}:"
    number, colon, rest = text[len(prefix):].partition(":")
    if not lines_before or not text.startswith(prefix) or not colon or not number.isdigit():
        return text
    return f"{prefix}{int(number) + lines_before}:{rest}"



def _shuffled(frames: list[Future], count: int) -> list[Any]:
    """The pieces' rows moved into ``count`` partitions by query id (every row of a query in one),
    by Dask's peer-to-peer shuffle: each piece's rows are sent worker to worker, in tasks whose
    number grows with the pieces and the partitions (a few per piece, one per partition, and one
    barrier), not with their product. The partitions, as delayed values."""
    import dask.dataframe as dd
    import polars as pl

    from trec_rag_eval.tables import RUN_SCHEMA

    meta = _as_pandas(pl.DataFrame(schema=RUN_SCHEMA))
    rows = dd.from_delayed(frames, meta=meta, verify_meta=False)
    return list(rows.shuffle("query_id", npartitions=count, shuffle_method="p2p").to_delayed())



def _split(frame: pl.DataFrame, assignment: pl.DataFrame, count: int) -> tuple[list[pl.DataFrame], set[str]]:
    """Rows by bucket (each bucket holds whole queries), and the query ids no bucket takes."""
    import polars as pl

    joined = frame.join(assignment, on="query_id", how="left")
    extra = set(joined.filter(pl.col("_bucket").is_null())["query_id"].unique().to_list())
    joined = joined.filter(pl.col("_bucket").is_not_null())
    groups = joined.partition_by("_bucket", as_dict=True, include_key=False)
    empty = frame.clear()
    return [groups.get((b,), empty) for b in range(count)], extra



def _piece_tags(pieces: list[Piece], tags: list[str], source: str) -> list[str]:
    """The tags that count, in order: the whole run's is the last, as the last line's is for one file.
    A Parquet piece without a run_tag column reports the default name; the in-memory reader keeps
    the last tag present instead, so such pieces are skipped."""
    from trec_rag_eval.io.parquet import default_tag

    fallback = default_tag(source)
    found = [tag for piece, tag in zip(pieces, tags, strict=True) if piece.kind != "parquet" or tag != fallback]
    return found or [fallback]



def _evaluate_bucket(qrels: Qrels, rows: Any, measures: list[Measure], settings: Settings,
                     source: str, places: Places) -> tuple[Evaluation | None, set[str]] | TrecRagEvalError:
    """On a worker: the queries of one bucket (its parts from each piece, a frame split here, or a
    pandas frame from the shuffle), with the kernels of the in-memory path: their values (None: no
    judged query) and the queries the qrels do not know; bad input (a document listed twice, in two
    pieces: cited through ``places``) answered, as by ``_read_rows``."""
    import polars as pl

    from trec_rag_eval.evaluation.streaming import evaluate_piece
    from trec_rag_eval.tables import Run

    if isinstance(rows, list):
        parts = [part for part in rows if part is not None]
        frame = pl.concat(parts) if len(parts) > 1 else parts[0] if parts else pl.DataFrame()
    else:
        frame = rows if isinstance(rows, pl.DataFrame) else pl.from_pandas(rows)
    if frame.is_empty():
        return None, set()
    try:
        return evaluate_piece(qrels, Run(frame, "", source, places, checked=True), measures, settings)
    except TrecRagEvalError as err:
        return err
