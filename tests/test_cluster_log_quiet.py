"""docs/scaling-out.md promises the command's stderr no line of distributed's log: what distributed logs while a
client is in use and says nothing the command does not say itself is dropped (``cluster.connection._quiet``)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from trec_rag_eval.cluster.connection import _quiet


@pytest.mark.parametrize(("logger", "message"), [
    # the client's send loop when the scheduler's connection closes under it (a scheduler killed mid-run): said by
    # the command as one ClusterError line; distributed logs it at INFO with a traceback
    ("distributed.batched", "Batched Comm Closed %r"),
    # a result lost with its worker while fetched: Dask computes it again
    ("distributed.client", "Couldn't gather 1 keys, rescheduling %s"),
    ("distributed.scheduler", "Couldn't gather 1 keys, rescheduling %s"),
])
def test_what_distributed_logs_of_a_connection_lost_or_a_result_fetched_again_is_dropped(monkeypatch, logger, message):
    client = SimpleNamespace(status="running")
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    log = logging.getLogger(logger)  # its own handler: whatever other tests did to distributed's logging config
    monkeypatch.setattr(log, "disabled", False)
    monkeypatch.setattr(log, "level", logging.INFO)
    log.addHandler(handler)
    try:
        with _quiet(client):
            log.info(message, "<TCP (closed) Client->Scheduler>")
        assert seen == []
        log.info(message, "<after the block>")  # the filters go with the block
        assert len(seen) == 1
    finally:
        log.removeHandler(handler)
