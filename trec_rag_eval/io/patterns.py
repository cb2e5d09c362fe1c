"""Document id patterns: Python's ``re`` semantics always, with bounded time and Ctrl-C that works.

A pattern (``--doc-id-pattern``, ``doc_map='...'``) means what Python's ``re.search`` makes of it,
whatever the size or the order of the ids. Two engines give those answers:

- polars' regex engine (Rust, no backtracking: linear time, it cannot hang) when the pattern can be
  rewritten for it with *provably* the same meaning. The pattern is parsed by ``re``'s own parser and
  rewritten node by node; every character and every class becomes an explicit set of code points
  (``\\d``, ``\\w``, ``\\s`` and their negations are the sets Python's ``re`` matches, computed from
  ``re`` itself), so the two engines never interpret the same text differently. Only literals,
  classes, ``.``, groups, alternation, greedy and lazy repetition of something that cannot match
  the empty string, and the anchors ``^``, ``$``, ``\\A``, ``\\Z`` are rewritten (``$`` only when no
  id holds a newline, where Python's ``$`` also matches before a final newline). Anything else
  (flags such as ``(?i)``, ``\\b``, look-around, back-references, possessive or atomic groups) keeps
  Python's engine.
- Python's ``re`` otherwise, in a child process: each id gets ``PATTERN_SECONDS_PER_ID`` seconds,
  after which the run stops with an error naming the pattern and the id (catastrophic backtracking
  such as ``(\\w+)+$`` on ``aaa...!``). The caller waits on a pipe, so Ctrl-C is handled at once even
  when the mapping runs in a worker thread, and the child is stopped with it.

The ``regex`` package's ``timeout=`` was not used: its ``\\w``, ``\\b`` and case folding follow other
Unicode rules than ``re``'s, which would be a second semantics. A callable mapping from Python is the
caller's own code and runs as it is.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import UsageError

if TYPE_CHECKING:
    import polars as pl

try:  # Python 3.11+
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

PATTERN_SECONDS_PER_ID = 2.0
"""Time Python's ``re`` may spend on one id before the pattern is given up as pathological."""

_ALLOWED_FLAGS = re.UNICODE | re.VERBOSE   # flags that change nothing once the pattern is parsed


class _Untranslatable(Exception):
    pass


def _hex(code: int) -> str:
    return f"\\x{{{code:X}}}"


_CATEGORIES = {
    sre_constants.CATEGORY_DIGIT: r"\d", sre_constants.CATEGORY_NOT_DIGIT: r"\D",
    sre_constants.CATEGORY_SPACE: r"\s", sre_constants.CATEGORY_NOT_SPACE: r"\S",
    sre_constants.CATEGORY_WORD: r"\w", sre_constants.CATEGORY_NOT_WORD: r"\W",
}


@cache
def _category_ranges(escape: str) -> tuple[tuple[int, int], ...]:
    """The code points Python's ``re`` matches with ``escape`` (Unicode patterns), as ranges;
    surrogates left out (they cannot occur in the ids polars holds)."""
    out: list[tuple[int, int]] = []
    for start, stop in ((0, 0xD800), (0xE000, 0x110000)):
        text = "".join(map(chr, range(start, stop)))
        out.extend((start + m.start(), start + m.end() - 1) for m in re.finditer(f"[{escape}]+", text))
    return tuple(out)


def _class_items(items: list[tuple[Any, Any]]) -> tuple[bool, str]:
    negate = False
    parts = []
    for op, av in items:
        if op is sre_constants.NEGATE:
            negate = True
        elif op is sre_constants.LITERAL:
            parts.append(_hex(av))
        elif op is sre_constants.RANGE:
            parts.append(f"{_hex(av[0])}-{_hex(av[1])}")
        elif op is sre_constants.CATEGORY and av in _CATEGORIES:
            parts.extend(_hex(lo) if lo == hi else f"{_hex(lo)}-{_hex(hi)}"
                         for lo, hi in _category_ranges(_CATEGORIES[av]))
        else:
            raise _Untranslatable(str(op))
    return negate, "".join(parts)


def _emit(pattern: Any, state: dict[str, bool]) -> str:
    out = []
    for op, av in pattern:
        if op is sre_constants.LITERAL:
            out.append(_hex(av))
        elif op is sre_constants.NOT_LITERAL:
            out.append(f"[^{_hex(av)}]")
        elif op is sre_constants.ANY:
            out.append(r"[^\n]")
        elif op is sre_constants.IN:
            negate, body = _class_items(av)
            if not body:
                raise _Untranslatable("empty class")
            out.append(f"[{'^' if negate else ''}{body}]")
        elif op is sre_constants.BRANCH:
            out.append("(?:" + "|".join(_emit(alt, state) for alt in av[1]) + ")")
        elif op is sre_constants.SUBPATTERN:
            group, add_flags, del_flags, body = av
            if add_flags or del_flags:
                raise _Untranslatable("scoped flags")
            out.append(("(" if group is not None else "(?:") + _emit(body, state) + ")")
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            low, high, body = av
            if body.getwidth()[0] == 0:   # a repeated part that can match "": engines differ on it
                raise _Untranslatable("repeat of a part that can be empty")
            bound = f"{{{low},}}" if high == sre_constants.MAXREPEAT else f"{{{low},{high}}}"
            lazy = "?" if op is sre_constants.MIN_REPEAT else ""
            out.append(f"(?:{_emit(body, state)}){bound}{lazy}")
        elif op is sre_constants.AT:
            if av in (sre_constants.AT_BEGINNING, sre_constants.AT_BEGINNING_STRING):
                out.append(r"\A")
            elif av is sre_constants.AT_END_STRING:
                out.append(r"\z")
            elif av is sre_constants.AT_END:
                state["dollar"] = True
                out.append(r"\z")
            else:
                raise _Untranslatable(str(av))
        else:
            raise _Untranslatable(str(op))
    return "".join(out)


@lru_cache(maxsize=256)
def rust_equivalent(pattern: str, flags: int = 0) -> tuple[str, bool] | None:
    """The pattern for polars' engine that finds the same first group as ``re.search(pattern)``, and
    whether that holds only for ids without a newline (a ``$``); None when no such rewrite is
    known (see the module's docstring)."""
    if flags & ~_ALLOWED_FLAGS:
        return None
    try:
        parsed = sre_parse.parse(pattern, flags)
    except re.error:
        return None
    if parsed.state.flags & ~_ALLOWED_FLAGS:
        return None
    state = {"dollar": False}
    try:
        return _emit(parsed, state), state["dollar"]
    except (_Untranslatable, RecursionError):
        return None


def extract_first_group(pattern: re.Pattern[str], ids: pl.Series) -> pl.Series:
    """``re.search(pattern, id).group(1)`` for each id of a polars Series (null where it does not
    match or the group does not take part), by polars' engine when that is provably the same,
    else by Python's ``re`` under a time budget (``python_first_group``)."""
    import polars as pl

    rewrite = rust_equivalent(pattern.pattern, pattern.flags)
    if rewrite is not None:
        rust, dollar = rewrite
        if not (dollar and bool(ids.str.contains("\n", literal=True).any())):
            try:
                return ids.str.extract(rust, 1).alias(ids.name)
            except Exception:  # noqa: BLE001 - beyond polars' size limits: Python does it
                pass
    distinct = ids.unique(maintain_order=True)
    found = python_first_group(pattern, distinct.to_list())
    table = dict(zip(distinct.to_list(), found, strict=True))
    return ids.replace_strict(table, default=None, return_dtype=pl.Utf8)


def first_groups(pattern: re.Pattern[str], ids: list[str]) -> list[str | None]:
    """``extract_first_group`` for a list of ids."""
    import polars as pl

    return extract_first_group(pattern, pl.Series("id", ids, dtype=pl.Utf8)).to_list()


_LIVE: set[subprocess.Popen[bytes]] = set()
"""The children matching right now: when Ctrl-C ends the main thread while a worker thread waits on
one, they are stopped before Python waits for its threads (not after their time budget)."""
_LIVE_LOCK = threading.Lock()
_stopping = threading.Event()
"""Set once the main thread ends: a worker thread starts no child after that (one started in between
would run its whole budget unseen)."""


def _stop_children() -> None:
    with _LIVE_LOCK:  # a child being started now is in _LIVE once this runs
        _stopping.set()
        for process in list(_LIVE):
            process.kill()


if hasattr(threading, "_register_atexit"):  # runs as the main thread ends, before threads are joined
    # concurrent.futures joins its threads in its own such hook; the hooks run last registered first,
    # so it is registered before this one
    import concurrent.futures.thread  # noqa: F401

    threading._register_atexit(_stop_children)  # type: ignore[attr-defined]

_WORKER = r"""
import json, re, signal, sys, time
request = json.loads(sys.stdin.buffer.read())
pattern = re.compile(request["pattern"], request["flags"])
budget = request["budget"]
started = [time.monotonic()]
class Slow(Exception):
    pass
def tick(signum, frame):
    if time.monotonic() - started[0] > budget:
        raise Slow
if hasattr(signal, "setitimer"):
    signal.signal(signal.SIGALRM, tick)
    signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
out = []
for position, text in enumerate(request["ids"]):
    started[0] = time.monotonic()
    try:
        match = pattern.search(text)
    except Slow:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        sys.stdout.write(json.dumps({"slow": position}))
        sys.exit(0)
    out.append(None if match is None else match.group(1))
signal.setitimer(signal.ITIMER_REAL, 0, 0)
sys.stdout.write(json.dumps({"groups": out}))
"""


def python_first_group(pattern: re.Pattern[str], ids: list[str],
                       seconds_per_id: float | None = None) -> list[str | None]:
    """``re.search(pattern, id).group(1)`` for each id, computed by Python's ``re`` in a child
    process that gives each id ``seconds_per_id``; a ``UsageError`` names the pattern and the id
    that took longer (default ``PATTERN_SECONDS_PER_ID``). Ctrl-C stops the child too."""
    if not ids:
        return []
    if seconds_per_id is None:
        seconds_per_id = PATTERN_SECONDS_PER_ID
    request = json.dumps({"pattern": pattern.pattern, "flags": pattern.flags,
                          "budget": seconds_per_id, "ids": ids}).encode()
    with _LIVE_LOCK:  # started and listed at once, so the main thread's end never misses it
        if _stopping.is_set():
            raise KeyboardInterrupt
        process = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WORKER], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _LIVE.add(process)
    try:
        stdout, stderr = process.communicate(request)
    finally:  # Ctrl-C, or anything else: the child does not outlive the call
        _LIVE.discard(process)
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.returncode != 0:
        raise UsageError(f"the document id pattern '{pattern.pattern}' could not be applied: "
                         + (stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1])
    answer = json.loads(stdout)
    if "slow" in answer:
        doc_id = ids[answer["slow"]]
        shown = doc_id if len(doc_id) <= 80 else doc_id[:77] + "..."
        raise UsageError(
            f"the document id pattern '{pattern.pattern}' takes over {seconds_per_id:g} s on the id {shown!r} "
            "(catastrophic backtracking: a repeated group inside a repetition, such as '(a+)+'); "
            "write it without nested repetition, e.g. '^(.*)#\\d+$'"
        )
    groups: list[str | None] = answer["groups"]
    return groups
