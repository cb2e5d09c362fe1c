"""Evaluate on a Dask cluster: many runs at once, or one run too large for one machine.

``cluster`` is a ``dask.distributed.Client`` (used as it is and left open), a scheduler address
(``tcp://10.0.0.5:8786``) or ``local:N`` (a LocalCluster of N worker processes on this machine's
loopback, started and stopped here). dask and distributed are the ``[dask]`` extra, imported only
here and only when asked.

Workers read the runs themselves, where they lie: every run path must be readable by every worker
under the same name (a shared or network file system, object storage mounted alike, or one machine).
The qrels given by their path are read by a task on a worker (which Dask can compute again, so a lost
worker costs only its own work); qrels given in memory are sent to every worker once.

* ``iter_run_tasks``: one task per run (read, evaluate, notes: ``run_outcome.evaluate_run_file``, the
  step the single machine takes), each outcome given in run order as soon as it is done. A run
  with bad input fails alone, its error naming the file and the line; the others still report.
  Dask re-runs the tasks of a worker lost mid-way on the workers left (up to its
  ``distributed.scheduler.allowed-failures``).
* ``evaluate_partitioned``: one run given as Parquet partitions or TREC text shards (or an
  in-memory ``Run``). Each piece (a file, a slice of rows of a large Parquet file, or a byte range
  of a large TREC text file, cut at line ends) is read by a task, and its rows go by query id to
  buckets: while the (piece, bucket) pairs are few (``PAIRS_LIMIT``), split where they are read and
  handed on by a task per pair, the cheapest way in processor time; beyond, by Dask's peer-to-peer
  shuffle (``dask.dataframe``), worker to worker, with a number of tasks linear in the pieces and
  buckets (7 per piece and 2 per bucket, measured), where a task per pair would grow with the
  square of the data. Each bucket, holding whole queries, is evaluated by the kernels of the
  in-memory path (``evaluation.streaming.evaluate_piece``), and the per-query values are
  aggregated here by ``combine_pieces``, the streaming path's aggregation: the same numbers as the
  in-memory path, byte for byte in trec_eval's format.
"""

from __future__ import annotations

import math
import operator
import os
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from trec_rag_eval.errors import MissingDependencyError, TrecRagEvalError, TrecRagEvalWarning, UsageError
from trec_rag_eval.notes import Note, warning
from trec_rag_eval.run_outcome import RunOutcome

if TYPE_CHECKING:
    import polars as pl
    from distributed import Client, Future

    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.measures.requests import MeasuresArg
    from trec_rag_eval.tables import Places, Qrels, Run

LOCAL = "local:"
LOCAL_WORKERS_PER_CORE = 4
"""``local:N`` starts at most this many worker processes per core: beyond, the processes only
compete for the cores (and each holds its own memory); a larger cluster spans machines."""
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


CONNECT_TIMEOUT = 30.0
"""Seconds for the whole handshake with a scheduler given by its address (connect, say who it is, register)."""
WORKERS_TIMEOUT = 60.0
"""Seconds to wait for a scheduler given by its address to have at least one worker."""
LOST_DATA_ATTEMPTS = 3
"""How many times work is submitted when workers die holding the data sent to them (see _again_if_lost)."""
_T = TypeVar("_T")

Progress = Callable[[int, int], None]
"""Called with (tasks done, tasks in all) each time the cluster finishes a task, from 0."""


class ClusterError(TrecRagEvalError):
    """The cluster could not be reached, or could not finish a task."""


def local_workers(cluster: str) -> int:
    """N of ``local:N``, checked at once (before anything is read): at least 1, at most
    ``LOCAL_WORKERS_PER_CORE`` per core of this machine."""
    count = cluster[len(LOCAL):]
    if not count.isdigit() or int(count) < 1:
        raise UsageError(f"cluster={cluster}: expected local:N with N, the number of worker processes, >= 1",
                         {"cluster=": "cluster"})
    cores = os.cpu_count() or 1
    if int(count) > LOCAL_WORKERS_PER_CORE * cores:
        raise UsageError(f"cluster={cluster}: at most {LOCAL_WORKERS_PER_CORE * cores} local worker processes on "
                         f"this machine ({LOCAL_WORKERS_PER_CORE} per core, {cores} cores); for more, start a Dask "
                         "cluster over several machines and give its scheduler address", {"cluster=": "cluster"})
    return int(count)


@contextmanager
def connect(cluster: Any) -> Iterator[Client]:
    """A Client for ``cluster`` (see the module's docstring); what this opens, it closes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise MissingDependencyError("distributed", "dask") from None
    if isinstance(cluster, Client):
        yield cluster
        return
    if not isinstance(cluster, str) or not cluster:
        raise UsageError(f"cluster must be a dask.distributed.Client, a scheduler address or local:N, got {cluster!r}")
    if cluster.startswith(LOCAL):
        count = local_workers(cluster)
        guard = ("from a Python script, call this under `if __name__ == \"__main__\":`, as each worker process "
                 "imports the script")
        if _importing_main():
            # A worker process of ours runs the script that asked for it while it boots (the script has no
            # guard): a cluster started here would start processes of its own, which multiprocessing refuses
            # only once a scheduler is up and a nanny has failed (its traceback on stderr, at times a hang).
            # Said at once, nothing started; the script's own process goes on with its workers.
            raise ClusterError(f"cannot start the {count} local worker process(es) of {cluster} (this process "
                               f"is a worker process starting, importing the script that asked for them); {guard}")
        import dask

        # Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in its workers to give memory back sooner; it also
        # turns off glibc's adaptive mmap threshold, so every large array is mapped afresh: the
        # kernels ran 1.5-2x slower (measured). Workers started here keep the default allocator.
        # Loopback only, on free ports (the scheduler always serves HTTP: 8787 may be taken).
        allocator = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
        with dask.config.set(allocator):
            try:
                local = LocalCluster(n_workers=int(count), threads_per_worker=1, processes=True, host="127.0.0.1",
                                     dashboard_address=":0", silence_logs=40)
            except RuntimeError as err:  # the workers did not start: most often a script without the guard
                raise ClusterError(f"cannot start the {count} local worker process(es) of {cluster} ({err}); "
                                   f"{guard}") from None
        with local, Client(local) as client, _quiet(client):
            yield client
        return
    _probe(cluster)
    try:
        client = Client(cluster, timeout=f"{CONNECT_TIMEOUT}s")
    except Exception as err:  # noqa: BLE001 - whatever distributed raises, said in one line
        raise ClusterError(f"cannot connect to the Dask scheduler at {cluster}: {_said(err)}") from None
    with _quiet(client), client:
        try:
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
        except Exception as err:  # noqa: BLE001
            if _lost(client):
                raise ClusterError(f"lost the Dask scheduler at {cluster} ({_said(err)})") from None
            raise ClusterError(f"the Dask scheduler at {cluster} has no worker (waited {WORKERS_TIMEOUT:g} s): start "
                               "workers with `dask worker " + cluster + "`, or check that they can reach it") from None
        try:
            yield client
        except TrecRagEvalError:
            raise
        except Exception as err:
            if _lost(client) or isinstance(err, (OSError, TimeoutError)) or _is_comm_error(err):
                raise ClusterError(f"lost the Dask scheduler at {cluster} mid-run ({_said(err)}); is it still "
                                   "running?") from None
            raise


def _importing_main() -> bool:
    """Whether this process is a multiprocessing child still booting: importing the parent's main script, when
    it may start no process (multiprocessing's own check, ``spawn._check_not_importing_main``, reads this
    flag; it raises only from within a process start, which a LocalCluster makes after starting a scheduler)."""
    import multiprocessing

    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


RESCHEDULED = "Couldn't gather"
"""How distributed's client and scheduler log a result lost with its worker while it was fetched: Dask computes
it again (the result is the same), so nothing is for the user to act on."""


@contextmanager
def _quiet(client: Client) -> Iterator[None]:
    """Within the block (the client's close included), distributed logs nothing of what is said here or
    changes nothing for the user: once its scheduler is lost, its client's log (a traceback of the
    reconnection cancelled, "Failed to reconnect to scheduler"; said here as one ClusterError); a result
    lost with its worker while fetched, which Dask computes again ("Couldn't gather 1 keys, rescheduling",
    by the client, and by a scheduler running in this process, as with local:N). docs/scaling-out.md promises the
    command's stderr no line of distributed's log."""
    import logging

    class Quiet(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not _lost(client) and not str(record.msg).startswith(RESCHEDULED)

    class Rescheduled(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not str(record.msg).startswith(RESCHEDULED)

    filters = [(logging.getLogger("distributed.client"), Quiet()),
               (logging.getLogger("distributed.scheduler"), Rescheduled())]
    for logger, quiet in filters:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger, quiet in filters:
            logger.removeFilter(quiet)


def _said(err: BaseException) -> str:
    """An exception of distributed's, in one line (its message, or its kind when it has none)."""
    reason = getattr(err, "reason", None)
    if isinstance(reason, str):  # a future cancelled: why, without the advice that follows
        return f"{type(err).__name__}: {reason}"
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _lost(client: Client) -> bool:
    """Whether ``client`` has lost its scheduler (it is reconnecting, or gave up and closed)."""
    return client.status not in ("running", "newly-created")


def _is_comm_error(err: BaseException) -> bool:
    from distributed.comm.core import CommClosedError

    return isinstance(err, CommClosedError)


def _refused(address: str) -> bool:
    """Whether a TCP connection to ``address`` (``tcp://``, ``tls://``, ``ws://``, ``wss://``, or no scheme) is
    refused: asked once, within ``CONNECT_TIMEOUT``, and closed at once. Anything else (a malformed address,
    another protocol, a host that does not answer) is left to distributed's handshake, which words it."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls", "ws", "wss"):  # websockets run over TCP too
            return False
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        return False
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def _check_no_credentials(address: str) -> None:
    """Refuse a scheduler address holding a user or password (``tcp://user:password@host:8786``): distributed
    has none in its addresses (a cluster is secured by TLS certificates), and its errors would echo them. The
    credentials are remembered first, so that no form of them is shown."""
    from trec_rag_eval.credentials import remember_url

    scheme, separator, rest = address.partition("://")
    location = (rest if separator else address).split("/", 1)[0]
    if "@" not in location:
        return
    remember_url(address if separator else f"tcp://{address}")
    raise ClusterError(f"cannot connect to the Dask scheduler at {address}: a scheduler's address holds no user or "
                       "password (distributed secures a cluster with TLS certificates, not credentials in its "
                       "address); give tcp://host:8786, or tls://host:8786 with Dask's security settings")


def _probe(address: str) -> None:
    """Ask ``address`` who it is, within ``CONNECT_TIMEOUT`` seconds for the whole exchange, before a
    Client connects: distributed bounds only parts of its handshake, so a silent listener or an HTTP
    server at the address would hold the Client for ever (or, for a proxy's reply read as a message's
    length, make it allocate exabytes). Anything but a Dask scheduler answering is one ClusterError; a
    connection refused (nothing listens there), at once: distributed would retry it for the whole bound."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect as comm_connect

    _check_no_credentials(address)
    if _refused(address):
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: connection refused (nothing listens "
                           "there: is the scheduler running, and is this its address, such as tcp://host:8786?)")

    async def identity() -> Any:
        comm = await comm_connect(address, timeout=CONNECT_TIMEOUT)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        # on a thread of its own: the caller may be running an event loop already (a notebook)
        with ThreadPoolExecutor(max_workers=1) as thread:
            reply = thread.submit(asyncio.run, asyncio.wait_for(identity(), CONNECT_TIMEOUT)).result()
    except ValueError as err:  # a malformed address
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {_said(err)}") from None
    except (Exception, MemoryError) as err:  # noqa: BLE001 - refused, timed out, garbage read as a message
        if isinstance(err, (TimeoutError, asyncio.TimeoutError)):
            raise ClusterError(f"no Dask scheduler answered at {address} within {CONNECT_TIMEOUT:g} s (is it a "
                               "Dask scheduler's address, such as tcp://host:8786, and not its dashboard or another "
                               "service?)") from None
        if isinstance(err, MemoryError):  # the start of another protocol's reply read as a message's length
            raise ClusterError(f"{address} is not a Dask scheduler: it answered with something that is not a Dask "
                               "message (is it a Dask scheduler's address, such as tcp://host:8786, and not its "
                               "dashboard or another service?)") from None
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {_said(err)} (is it a Dask "
                           "scheduler's address, such as tcp://host:8786?)") from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise ClusterError(f"{address} is not a Dask scheduler (it answered as {kind!s}); give the scheduler's "
                           "address, such as tcp://host:8786")


def evaluate_on_cluster(qrels: Qrels, run: Any, measures: list[Measure], settings: Settings, *, cluster: Any,
                        run_format: str = "auto", doc_map: Any = None) -> Evaluation:
    """One run evaluated on the cluster (``trec_rag_eval.evaluate(..., cluster=...)``).

    ``run``: a path (a Parquet file or directory, or a TREC file: split by query id over the
    workers; JSON results, or any run with ``doc_map``: one task), a list of paths (shards of one
    run) or a ``Run`` in memory (split here, each bucket sent once). Bad input raises its error.
    """
    from trec_rag_eval.tables import Run

    if isinstance(run, (str, os.PathLike)):
        _refuse_pipes([os.fspath(run)])
    if isinstance(run, (str, os.PathLike)) and (doc_map is not None or _kind(os.fspath(run), run_format) == "json"):
        [outcome] = evaluate_run_tasks(qrels, [os.fspath(run)], measures, settings, cluster=cluster,
                                       run_format=run_format, doc_map=doc_map)
        if outcome.error is not None:
            raise outcome.error
        for said in outcome.notes:
            said.warn()
        assert outcome.evaluation is not None
        return outcome.evaluation
    collapse = None
    if doc_map is not None:
        if not isinstance(run, Run):
            raise UsageError("doc_map reads each run whole: not with a run in shards (a list of paths)")
        from trec_rag_eval.io.chunk_collapse import collapse_run

        run, collapse = collapse_run(run, doc_map, qrels)  # in memory already: mapped here, then split
    if not isinstance(run, (str, os.PathLike, Run)) and not (
            isinstance(run, Sequence) and all(isinstance(p, (str, os.PathLike)) for p in run)):
        raise UsageError(f"run must be a path, a list of paths (shards) or a Run, got {type(run).__name__}")
    evaluation = evaluate_partitioned(qrels, run, measures, settings, cluster=cluster, run_format=run_format)
    evaluation.collapse = collapse
    return evaluation


def _refuse_pipes(paths: Sequence[str]) -> None:
    """The workers read each run by its path, in their own processes: standard input or a pipe, which
    this process alone can read (once), cannot be sent to them."""
    from trec_rag_eval.io.text import read_once

    for path in paths:
        if read_once(path):
            raise UsageError(f"{path} is standard input or a pipe: the workers of a cluster read each run from its "
                             "file; save it to a file first (or evaluate without a cluster)")


def _kind(path: str, run_format: str) -> str:
    if run_format != "auto":
        return run_format
    from trec_rag_eval.io.any_format import detect_format
    from trec_rag_eval.io.location import exists
    from trec_rag_eval.io.text import STANDARD_INPUT

    if path != STANDARD_INPUT and not exists(path):
        from trec_rag_eval.errors import InputFormatError

        raise InputFormatError(path, None, "no such file")
    return detect_format(path)


# -- many runs -----------------------------------------------------------------------------------

def evaluate_run_tasks(qrels: Qrels, paths: Sequence[str], measures: MeasuresArg = None,
                       settings: Settings | None = None, *, cluster: Any, run_format: str = "auto",
                       doc_map: Any = None, progress: Progress | None = None,
                       qrels_from: Callable[[], Qrels] | None = None) -> list[RunOutcome]:
    """Evaluate every run file on the cluster, one task each; outcomes in the order of ``paths``
    (``iter_run_tasks``, gathered)."""
    return list(iter_run_tasks(qrels, paths, measures, settings, cluster=cluster, run_format=run_format,
                               doc_map=doc_map, progress=progress, qrels_from=qrels_from))


def iter_run_tasks(qrels: Qrels, paths: Sequence[str], measures: MeasuresArg = None,
                   settings: Settings | None = None, *, cluster: Any, run_format: str = "auto",
                   doc_map: Any = None, progress: Progress | None = None,
                   qrels_from: Callable[[], Qrels] | None = None,
                   render: Callable[[Evaluation], Any] | None = None) -> Iterator[RunOutcome]:
    """Each run file evaluated on the cluster, one task each, its outcome given in the order of
    ``paths`` as soon as it and those before it are done (not once all are), its result then released
    on the cluster. ``measures`` and ``settings`` as for ``evaluate``; ``progress`` follows the tasks;
    ``qrels_from``: how a worker reads ``qrels`` itself (see ``_share_qrels``). When workers die
    holding data sent to them, the runs not yet given are submitted again (``_again_if_lost``).
    ``render`` (a picklable callable): each evaluation is rendered on its worker, and only what it
    returns comes back (``RunOutcome.rendered``; the evaluation stays there and is released)."""
    from concurrent.futures import CancelledError

    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.measures.requests import resolve_measures

    measures, settings = resolve_measures(measures), settings or Settings()
    _refuse_pipes(paths)
    given = 0

    def once(client: Client) -> Iterator[RunOutcome]:
        from distributed import as_completed

        token = uuid.uuid4().hex[:8]
        shared = _share_qrels(client, qrels, qrels_from, token)
        left = list(paths[given:])
        futures: list[Future | None] = [
            client.submit(_run_task, shared, path, measures, settings, run_format, doc_map, render,
                          key=f"trec-rag-eval-run-{given + index}-{token}") for index, path in enumerate(left)]
        ready: set[int] = set()
        index_of = {future.key: index for index, future in enumerate(futures) if future is not None}
        done, following = given, 0
        if progress is not None:
            progress(done, len(paths))
        for finished in as_completed([f for f in futures if f is not None]):
            ready.add(index_of[finished.key])
            done += 1
            if progress is not None:
                progress(done, len(paths))
            while following in ready:  # in run order: each as soon as those before it are given
                future = futures[following]
                assert future is not None
                outcome = _outcome(left[following], future)
                futures[following] = None  # its result is released on the cluster
                future.release()
                following += 1
                yield outcome

    with connect(cluster) as client:
        for attempt in range(1, LOST_DATA_ATTEMPTS + 1):
            try:
                for outcome in once(client):
                    given += 1
                    yield outcome
                return
            except CancelledError as err:
                error = _stop_after(err, client, attempt, _runs_named(paths), _runs_named(paths[given:]))
                if error is not None:
                    raise error from None


def _share_qrels(client: Client, qrels: Qrels, qrels_from: Callable[[], Qrels] | None, token: str) -> Any:
    """The qrels for the tasks: with ``qrels_from`` (a picklable call reading them from their path, which
    every worker sees as it sees the runs), a task that reads them on a worker, which Dask recomputes
    elsewhere if that worker dies, so a lost worker costs only its own work; otherwise (qrels in
    memory) the table itself, sent to every worker once."""
    if qrels_from is not None:
        return client.submit(qrels_from, key=f"trec-rag-eval-qrels-{token}", pure=False)
    [shared] = client.scatter([qrels], broadcast=True, hash=False)
    return shared


def _again_if_lost(what: str, once: Callable[[Client], _T], client: Client) -> _T:
    """``once(client)``, done afresh (data sent again, tasks submitted again) when a worker died holding
    data sent by ``scatter``: Dask recomputes lost task results, but it cannot recompute scattered
    data, and its active memory manager keeps a single copy of it once no task waits for it on
    another worker (``broadcast`` or not), so the futures that need it are cancelled ("already
    forgotten", "lost dependencies") instead of retried."""
    from concurrent.futures import CancelledError

    for attempt in range(1, LOST_DATA_ATTEMPTS + 1):
        try:
            return once(client)
        except CancelledError as err:
            error = _stop_after(err, client, attempt, what, what)
            if error is not None:
                raise error from None
    raise AssertionError("unreachable")


def _stop_after(err: BaseException, client: Client, attempt: int, what: str, left: str) -> ClusterError | None:
    """After the work on ``what`` was cancelled (``err``): the error to stop with, or None to submit
    ``left`` again. The scheduler lost: nothing to submit again to. Workers that died holding the data
    sent to them ``LOST_DATA_ATTEMPTS`` times in a row: most likely short of memory."""
    if _lost(client):
        return ClusterError(f"{what}: lost the Dask scheduler at {client.scheduler.address} mid-run ({_said(err)}); "
                            "is it still running?")
    if attempt == LOST_DATA_ATTEMPTS:
        return ClusterError(f"{left}: workers died holding the data sent to them, {attempt} times in a row ({err}); "
                            "is a worker short of memory?")
    return None


def _runs_named(paths: Sequence[str]) -> str:
    """Runs for a message: their paths, or the first two and how many more (a sweep has hundreds)."""
    if len(paths) <= 3:
        return ", ".join(paths)
    return f"{paths[0]}, {paths[1]} and {len(paths) - 2} more runs"


def _follow(futures: list[Future], progress: Progress | None, done: int, total: int) -> int:
    """Report each of ``futures`` as it finishes (failed ones too); the count of tasks done after them."""
    if progress is None:
        return done + len(futures)
    from distributed import as_completed

    if done == 0:
        progress(0, total)
    for _ in as_completed(futures):
        done += 1
        progress(done, total)
    return done


def _run_task(qrels: Qrels, path: str, measures: list[Measure], settings: Settings, run_format: str,
              doc_map: Any, render: Callable[[Evaluation], Any] | None = None
              ) -> tuple[Evaluation | None, list[Note], TrecRagEvalError | None, Any]:
    """On a worker: one run (rendered there with ``render``: its text travels, not its evaluation). Bad
    input is returned, not raised: it is an answer, not a task to retry."""
    from trec_rag_eval.run_outcome import evaluate_run_file

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TrecRagEvalWarning)
        try:
            evaluation, notes = evaluate_run_file(qrels, path, measures, settings, run_format, doc_map)
        except TrecRagEvalError as err:
            return None, [], err, None
    # the library leads a warning with the run's path; the note is said of the run by whoever prints
    # it (as on one machine), so the path is not said twice
    library = [warning(str(w.message).removeprefix(f"{path}: "), parameters=getattr(w.message, "parameters", None))
               for w in caught if issubclass(w.category, TrecRagEvalWarning)]
    outcome = RunOutcome(path, evaluation, library + notes).render_with(render)
    return outcome.evaluation, outcome.notes, None, outcome.rendered


def _outcome(path: str, future: Future) -> RunOutcome:
    from concurrent.futures import CancelledError

    try:
        evaluation, notes, error, rendered = future.result()
    except TrecRagEvalError as err:
        return RunOutcome(path, error=err)
    except CancelledError:  # its input was lost with a worker: all is submitted again
        raise
    except Exception as err:  # the task itself failed, not the run's data: this run only
        if _lost(future.client) or _is_comm_error(err):  # the scheduler is gone: every run, said once
            raise
        return RunOutcome(path, error=_task_error(path, err))
    return RunOutcome(path, evaluation, notes, error, rendered)


def _task_error(what: str, err: Exception) -> ClusterError:
    """A task that Dask could not finish, said in one line: its workers kept dying (memory?), or
    the workers cannot run this package (not installed there, another version)."""
    from distributed.scheduler import KilledWorker

    if isinstance(err, KilledWorker):
        return ClusterError(f"{what}: the workers evaluating it died ({err}); is a worker short of memory?")
    if isinstance(err, ImportError):
        return ClusterError(f"{what}: a worker cannot import what the task needs ({err}); install "
                            "trec-rag-eval (the same version) on every worker")
    return ClusterError(f"{what}: the task failed on its worker: {type(err).__name__}: {err}")


# -- one run in partitions ------------------------------------------------------------------------

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
            done = _follow(told, progress, 0, len(pieces) + count)
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
            done = _follow(told, progress, 0, len(pieces) + count)
            tags = _reads_checked(pieces, _gather(client, told, source), source)
            inputs = _shuffled(frames, count)
        judged = _share_qrels(client, qrels, qrels_from, token)
        task = dask.delayed(_evaluate_bucket, pure=False)
        evaluated = client.compute([task(judged, part, measures, settings, source, places,
                                         dask_key_name=f"trec-rag-eval-evaluate-{b}-{token}")
                                    for b, part in enumerate(inputs)])
        _follow(evaluated, progress, done, len(pieces) + count)
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
        return _again_if_lost(source, once, client)


def _pieces(run: str | os.PathLike[str] | Sequence[str], run_format: str) -> tuple[str, list[Piece]]:
    """The run's name (for messages and the default tag) and the pieces its tasks read."""
    from trec_rag_eval.io.location import size as file_size
    from trec_rag_eval.io.parquet import parquet_files, row_count
    from trec_rag_eval.io.text import is_gzip

    paths = [os.fspath(run)] if isinstance(run, (str, os.PathLike)) else [os.fspath(p) for p in run]
    if not paths:
        raise UsageError("no run to evaluate")
    _refuse_pipes(paths)
    pieces: list[Piece] = []
    for path in paths:
        kind = _kind(path, run_format)
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
        if _lost(client) or _is_comm_error(err):
            raise
        raise _task_error(source, err) from None
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
        return evaluate_piece(qrels, Run(frame, "", source, places), measures, settings)
    except TrecRagEvalError as err:
        return err
