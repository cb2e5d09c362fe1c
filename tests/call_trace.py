"""A call's way through the package: the modules it enters and the distinct module-to-module edges it takes.

    python tests/call_trace.py api               tre.evaluate(dict, dict, "nDCG@10")
    python tests/call_trace.py command           trec-rag-eval fixtures/qrels.txt fixtures/run_bm25.txt
    python tests/call_trace.py command --edges   and every edge, caller -> callee

Counted with ``sys.setprofile``: every Python function entered whose code lies in the package (a method, a
property, a generator resumed and a callback included), and for each its caller, the nearest frame down the
stack whose code lies in the package (another library's frames between, numpy's or click's, are passed
over); an edge joins two different modules. Module bodies are left out, and the call is made once before it
is traced: what is counted is the way of every call after the first, not the imports of the first.
Printed as JSON: ``{"modules": n, "edges": n}`` (and ``"edge_list"`` with ``--edges``). A test of its own
process (``tests/test_call_trace.py``), so that what other tests imported changes nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import warnings
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QRELS = {"q1": {"d1": 1, "d2": 0, "d5": 2}, "q2": {"d3": 2, "d4": 1}}
RUN = {"q1": {"d1": 1.0, "d2": 0.5, "d9": 0.2}, "q2": {"d3": 1.0, "d4": 0.1}}


def module_of(filename: str, root: str) -> str | None:
    """The module of the package at ``root`` whose source is ``filename``; None outside the package."""
    if not filename.startswith(root) or not filename.endswith(".py"):
        return None
    parts = filename[len(root):-3].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([os.path.basename(root.rstrip(os.sep)), *parts])


def trace(call: Callable[[], Any], package: str | None = None) -> tuple[set[str], set[tuple[str, str]]]:
    """The modules of ``package`` (a folder; default trec_rag_eval's) that ``call`` enters and the edges
    it takes (see the module's docstring)."""
    if package is None:
        import trec_rag_eval

        package = os.path.dirname(trec_rag_eval.__file__)
    root = os.path.abspath(package) + os.sep
    names: dict[CodeType, str | None] = {}
    entered: set[str] = set()
    edges: set[tuple[str, str]] = set()

    def name(code: CodeType) -> str | None:
        if code not in names:
            names[code] = module_of(code.co_filename, root)
        return names[code]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name == "<module>":
            return
        callee = name(frame.f_code)
        if callee is None:
            return
        entered.add(callee)
        caller = frame.f_back
        while caller is not None and name(caller.f_code) is None:
            caller = caller.f_back
        if caller is not None and name(caller.f_code) != callee:
            edges.add((name(caller.f_code), callee))  # type: ignore[arg-type]

    call()  # the first call: its imports
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return entered, edges


def evaluate_in_memory() -> None:
    import trec_rag_eval as tre

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tre.evaluate(QRELS, RUN, "nDCG@10")


def default_command() -> None:
    from trec_rag_eval.cli import main

    os.chdir(REPO)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(["fixtures/qrels.txt", "fixtures/run_bm25.txt"])


CALLS = {"api": evaluate_in_memory, "command": default_command}


if __name__ == "__main__":
    entered, edges = trace(CALLS[sys.argv[1]])
    shown: dict[str, Any] = {"modules": len(entered), "edges": len(edges)}
    if "--edges" in sys.argv:
        shown["edge_list"] = [f"{a} -> {b}" for a, b in sorted(edges)]
    print(json.dumps(shown, indent=1))
