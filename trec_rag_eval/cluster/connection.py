"""The cluster itself: ``connect`` to a ``dask.distributed.Client``, a scheduler address or ``local:N`` (started
and stopped here), what distributed says made one line (``ClusterError``), and its log kept quiet."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import MissingDependencyError, TrecRagEvalError, UsageError

if TYPE_CHECKING:
    from distributed import Client


LOCAL = "local:"

LOCAL_WORKERS_PER_CORE = 4
"""``local:N`` starts at most this many worker processes per core: beyond, the processes only
compete for the cores (and each holds its own memory); a larger cluster spans machines."""

CONNECT_TIMEOUT = 30.0
"""Seconds for the whole handshake with a scheduler given by its address (connect, say who it is, register)."""

WORKERS_TIMEOUT = 60.0
"""Seconds to wait for a scheduler given by its address to have at least one worker."""



class ClusterError(TrecRagEvalError):
    """The cluster could not be reached, or could not finish a task."""

    __module__ = "trec_rag_eval.cluster"  # shown (and pickled) by the name users import it by



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
        raise ClusterError(f"cannot connect to the Dask scheduler at {cluster}: {one_line(err)}") from None
    with _quiet(client), client:
        try:
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
        except Exception as err:  # noqa: BLE001
            if scheduler_lost(client):
                raise ClusterError(f"lost the Dask scheduler at {cluster} ({one_line(err)})") from None
            raise ClusterError(f"the Dask scheduler at {cluster} has no worker (waited {WORKERS_TIMEOUT:g} s): start "
                               "workers with `dask worker " + cluster + "`, or check that they can reach it") from None
        try:
            yield client
        except TrecRagEvalError:
            raise
        except Exception as err:
            if scheduler_lost(client) or isinstance(err, (OSError, TimeoutError)) or is_comm_error(err):
                raise ClusterError(f"lost the Dask scheduler at {cluster} mid-run ({one_line(err)}); is it still "
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

COMM_CLOSED = "Batched Comm Closed"
"""How distributed's send loop logs (at INFO, with a traceback) the connection to the scheduler closing under the
client: a scheduler lost mid-run, which the command says itself as one ClusterError line."""



@contextmanager
def _quiet(client: Client) -> Iterator[None]:
    """Within the block (the client's close included), distributed logs nothing of what is said here or
    changes nothing for the user: once its scheduler is lost, its client's log (a traceback of the
    reconnection cancelled, "Failed to reconnect to scheduler"; its send loop's "Batched Comm Closed", logged as the
    connection closes, sometimes before the client knows; said here as one ClusterError); a result
    lost with its worker while fetched, which Dask computes again ("Couldn't gather 1 keys, rescheduling",
    by the client, and by a scheduler running in this process, as with local:N). docs/scaling-out.md promises the
    command's stderr no line of distributed's log."""
    import logging

    class Quiet(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not scheduler_lost(client) and not str(record.msg).startswith(RESCHEDULED)

    class Rescheduled(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not str(record.msg).startswith(RESCHEDULED)

    class Closed(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not str(record.msg).startswith(COMM_CLOSED)

    filters = [(logging.getLogger("distributed.client"), Quiet()),
               (logging.getLogger("distributed.scheduler"), Rescheduled()),
               (logging.getLogger("distributed.batched"), Closed())]
    for logger, quiet in filters:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger, quiet in filters:
            logger.removeFilter(quiet)



def one_line(err: BaseException) -> str:
    """An exception of distributed's, in one line (its message, or its kind when it has none)."""
    reason = getattr(err, "reason", None)
    if isinstance(reason, str):  # a future cancelled: why, without the advice that follows
        return f"{type(err).__name__}: {reason}"
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__



def scheduler_lost(client: Client) -> bool:
    """Whether ``client`` has lost its scheduler (it is reconnecting, or gave up and closed)."""
    return client.status not in ("running", "newly-created")



def is_comm_error(err: BaseException) -> bool:
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
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {one_line(err)}") from None
    except (Exception, MemoryError) as err:  # noqa: BLE001 - refused, timed out, garbage read as a message
        if isinstance(err, (TimeoutError, asyncio.TimeoutError)):
            raise ClusterError(f"no Dask scheduler answered at {address} within {CONNECT_TIMEOUT:g} s (is it a "
                               "Dask scheduler's address, such as tcp://host:8786, and not its dashboard or another "
                               "service?)") from None
        if isinstance(err, MemoryError):  # the start of another protocol's reply read as a message's length
            raise ClusterError(f"{address} is not a Dask scheduler: it answered with something that is not a Dask "
                               "message (is it a Dask scheduler's address, such as tcp://host:8786, and not its "
                               "dashboard or another service?)") from None
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {one_line(err)} (is it a Dask "
                           "scheduler's address, such as tcp://host:8786?)") from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise ClusterError(f"{address} is not a Dask scheduler (it answered as {kind!s}); give the scheduler's "
                           "address, such as tcp://host:8786")



def task_error(what: str, err: Exception) -> ClusterError:
    """A task that Dask could not finish, said in one line: its workers kept dying (memory?), or
    the workers cannot run this package (not installed there, another version)."""
    from distributed.scheduler import KilledWorker

    if isinstance(err, KilledWorker):
        return ClusterError(f"{what}: the workers evaluating it died ({err}); is a worker short of memory?")
    if isinstance(err, ImportError):
        return ClusterError(f"{what}: a worker cannot import what the task needs ({err}); install "
                            "trec-rag-eval (the same version) on every worker")
    return ClusterError(f"{what}: the task failed on its worker: {type(err).__name__}: {err}")
