"""One task per run on a cluster (``iter_run_tasks``): each reads its run where it lies (``io.loading``, any
format), evaluates it and notes it (``run_outcome.evaluate_run``), the outcomes given in run order as soon as each
is done."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from trec_rag_eval.cluster.connection import ClusterError, connect, is_comm_error, one_line, scheduler_lost, task_error
from trec_rag_eval.errors import TrecRagEvalError, TrecRagEvalWarning, UsageError
from trec_rag_eval.notes import Note, warning
from trec_rag_eval.run_outcome import RunOutcome

if TYPE_CHECKING:
    from distributed import Client, Future

    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.measures.requests import MeasuresArg
    from trec_rag_eval.tables import Qrels

LOST_DATA_ATTEMPTS = 3
"""How many times work is submitted when workers die holding the data sent to them (see again_if_lost)."""

_T = TypeVar("_T")

Progress = Callable[[int, int], None]
"""Called with (tasks done, tasks in all) each time the cluster finishes a task, from 0."""



def refuse_pipes(paths: Sequence[str]) -> None:
    """The workers read each run by its path, in their own processes: standard input or a pipe, which
    this process alone can read (once), cannot be sent to them."""
    from trec_rag_eval.io.sources import read_once

    for path in paths:
        if read_once(path):
            raise UsageError(f"{path} is standard input or a pipe: the workers of a cluster read each run from its "
                             "file; save it to a file first (or evaluate without a cluster)")



def run_kind(path: str, run_format: str) -> str:
    if run_format != "auto":
        return run_format
    from trec_rag_eval.io.loading import detect_format
    from trec_rag_eval.io.sources import STANDARD_INPUT, exists

    if path != STANDARD_INPUT and not exists(path):
        from trec_rag_eval.errors import InputFormatError

        raise InputFormatError(path, None, "no such file")
    return detect_format(path)



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
    ``qrels_from``: how a worker reads ``qrels`` itself (see ``share_qrels``). When workers die
    holding data sent to them, the runs not yet given are submitted again (``again_if_lost``).
    ``render`` (a picklable callable): each evaluation is rendered on its worker, and only what it
    returns comes back (``RunOutcome.rendered``; the evaluation stays there and is released)."""
    from concurrent.futures import CancelledError

    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.measures.requests import check_judgments, resolve_measures

    measures, settings = resolve_measures(measures), settings or Settings()
    check_judgments(qrels, measures)  # once, before a task is sent: each task evaluates what it is given
    refuse_pipes(paths)
    given = 0

    def once(client: Client) -> Iterator[RunOutcome]:
        from distributed import as_completed

        token = uuid.uuid4().hex[:8]
        shared = share_qrels(client, qrels, qrels_from, token)
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



def share_qrels(client: Client, qrels: Qrels, qrels_from: Callable[[], Qrels] | None, token: str) -> Any:
    """The qrels for the tasks: with ``qrels_from`` (a picklable call reading them from their path, which
    every worker sees as it sees the runs), a task that reads them on a worker, which Dask recomputes
    elsewhere if that worker dies, so a lost worker costs only its own work; otherwise (qrels in
    memory) the table itself, sent to every worker once."""
    if qrels_from is not None:
        return client.submit(qrels_from, key=f"trec-rag-eval-qrels-{token}", pure=False)
    [shared] = client.scatter([qrels], broadcast=True, hash=False)
    return shared



def again_if_lost(what: str, once: Callable[[Client], _T], client: Client) -> _T:
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
    if scheduler_lost(client):
        return ClusterError(f"{what}: lost the Dask scheduler at {client.scheduler.address} mid-run ({one_line(err)}); "
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



def follow(futures: list[Future], progress: Progress | None, done: int, total: int) -> int:
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
    from trec_rag_eval.io.loading import load_run_report
    from trec_rag_eval.run_outcome import evaluate_run

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TrecRagEvalWarning)
        try:
            run, report = load_run_report(path, run_format, qrels)
            evaluation, notes = evaluate_run(qrels, run, measures, settings, doc_map, report)
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
        if scheduler_lost(future.client) or is_comm_error(err):  # the scheduler is gone: every run, said once
            raise
        return RunOutcome(path, error=task_error(path, err))
    return RunOutcome(path, evaluation, notes, error, rendered)
