"""What one call of the library keeps while it lasts, and no longer.

An input that can be read only once (standard input ``-``, a named pipe, ``/dev/stdin``, a process
substitution) is read whole the first time a call needs it and kept for the rest of that call
(``io.sources.spooled``), so detecting its format, reading it and citing its duplicate lines all see the
same bytes. Kept for the life of the process, a second call (a notebook cell, a server's request, a
test) would be given the first call's input again: a silently wrong number. So:

- each public function of the facade (``api``) and each command of the command line runs in a scope of
  its own (``per_call``, ``one_call``), dropped when it returns (a generator's, when it is exhausted
  or closed); the next call reads its inputs anew, and an input left empty is then the usual error;
- a call made inside another (a command calling the facade, the facade calling itself) shares the
  outer scope: one command reads its standard input once, whatever it calls;
- the threads a call starts run in its scope (``carried``): the runs evaluated side by side, the run
  read ahead while the judgments are read;
- a read-once input read outside any scope is an internal error (``this_call``), never bytes kept
  from another call;
- what fsspec keeps for the process (a file system's listings of folders and sizes) is refreshed once
  per call (``first_in_this_call``, ``io.urls``).

The scope is a ``contextvars`` variable, so two calls on two threads (a server) each have their own.
"""

from __future__ import annotations

import contextvars
import functools
import threading
import types
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")


class Call:
    """What one call keeps: the bytes of each read-once input it has read, by the name it was given,
    and what it has already refreshed (``first_in_this_call``)."""

    def __init__(self) -> None:
        self.inputs: dict[str, bytes] = {}
        self.lock = threading.Lock()
        """Held while an input is read, so two threads of one call read it once."""
        self.met: set[Hashable] = set()

    def end(self) -> None:
        """The call is over: what it kept is dropped."""
        self.inputs.clear()
        self.met.clear()


_CALL: contextvars.ContextVar[Call | None] = contextvars.ContextVar("trec_rag_eval_call", default=None)


def current_call() -> Call | None:
    """The scope of the call running here, None outside any."""
    return _CALL.get()


def this_call(path: str) -> Call:
    """The scope of the call running here, which is about to read ``path`` (read-once) and keep it;
    outside any scope, an internal error: the input would be read and kept for nobody, or kept from
    one call to the next."""
    call = _CALL.get()
    if call is None:
        raise RuntimeError(f"internal error: {path} can be read only once and is read outside a call of the "
                           "library; run the reading inside trec_rag_eval.call_scope.one_call()")
    return call


def first_in_this_call(key: Hashable) -> bool:
    """Whether the call running here meets ``key`` for the first time (then it is remembered until the
    call ends); always True outside any call. ``io.urls`` refreshes a file system's listings, which
    fsspec keeps for the process, once per call: a folder or a file changed between two calls is seen
    as it is now, and as one state throughout one call."""
    call = _CALL.get()
    if call is None:
        return True
    with call.lock:
        if key in call.met:
            return False
        call.met.add(key)
        return True


@contextmanager
def one_call() -> Iterator[Call]:
    """The scope of one call (a command of the command line): what it reads once is kept until the
    block ends. Inside another call's scope, that one (nothing is dropped at the end)."""
    outer = _CALL.get()
    if outer is not None:
        yield outer
        return
    call = Call()
    token = _CALL.set(call)
    try:
        yield call
    finally:
        _CALL.reset(token)
        call.end()


def per_call(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` run in a scope of its own (``one_call``), or in its caller's when there is one. A
    generator's scope lasts until it is exhausted or closed, and is never left set in its caller's
    context between two items (the caller may make other calls meanwhile)."""

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if _CALL.get() is not None:
            return function(*args, **kwargs)
        scope = Call()
        context = contextvars.copy_context()
        context.run(_CALL.set, scope)
        try:
            result = context.run(function, *args, **kwargs)
        except BaseException:
            scope.end()
            raise
        if isinstance(result, types.GeneratorType):
            return cast(R, _items_in(context, scope, result))
        scope.end()
        return result

    return call


def _items_in(context: contextvars.Context, scope: Call, items: types.GeneratorType[Any, Any, Any]
              ) -> Iterator[Any]:
    """The items of the generator ``items``, each made in ``context``; ``scope`` dropped at the end."""
    try:
        while True:
            try:
                item = context.run(next, items)
            except StopIteration:
                return
            yield item
    finally:
        context.run(items.close)  # its own clean-up (a thread pool shut down) runs in its scope too
        scope.end()


def carried(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` to run on another thread in the scope of the call running here (a thread starts in
    an empty context otherwise). Each call of the result runs in a copy of this context: the same
    ``Call``, shared."""
    context = contextvars.copy_context()

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return context.copy().run(function, *args, **kwargs)

    return run
