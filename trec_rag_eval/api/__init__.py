"""The facade: one function per job a user asks for by name, every input shape in, the library's own types out.

Each function turns its qrels and runs into ``Qrels`` / ``Run`` (paths in any format the command line reads, dicts,
DataFrames, ir_measures tuples: see ``tables.shapes`` and ``service.inputs``) and its measures into ``Measure`` values
(any notation, ranx's names too: see ``measures.requests.resolve_measures``), then calls the layer that does the
work. ``import trec_rag_eval`` reaches them lazily; the command line calls them as ``api.<name>``. Its modules group
them by what they serve:

- ``api.evaluations``: ``evaluate``, ``evaluate_many``, ``iter_evaluate``, ``context_cost``, and the readers
  ``read_judgments``, ``read_qrels``, ``read_run``, ``convert``;
- ``api.analyses``: the analyses of judgments and runs, ``compare``, ``plan``, ``fuse``, ``agree``, ``crosscheck``,
  ``validate``;
- ``api.llm_and_search``: the jobs that call out of the process, ``generate_queries``, ``judge``, ``search_engine``;
- ``api.command_checks``: the command line's checks before any work, ``check_input``, ``check_outputs``,
  ``check_compare``, ``check_crosscheck``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# every module's __all__: a function added to one of them (and to its __all__) is api.<name>, nothing else to edit
from trec_rag_eval.api import analyses, command_checks, evaluations, llm_and_search
from trec_rag_eval.api.analyses import *  # noqa: F403
from trec_rag_eval.api.command_checks import *  # noqa: F403
from trec_rag_eval.api.evaluations import *  # noqa: F403
from trec_rag_eval.api.llm_and_search import *  # noqa: F403
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.io.loading import QRELS_FORMATS, RUN_FORMATS
from trec_rag_eval.io.sources import is_url

if TYPE_CHECKING:
    from trec_rag_eval.engine.harness import Evaluator
    from trec_rag_eval.llm.client import progress_path_for

__all__ = [*evaluations.__all__, *analyses.__all__, *llm_and_search.__all__, *command_checks.__all__,
           "Settings", "QRELS_FORMATS", "RUN_FORMATS", "is_url", "Evaluator", "progress_path_for"]


def __getattr__(name: str) -> Any:
    """Names imported when first asked for: the harness type ``Evaluator`` (``engine.harness``), and
    ``progress_path_for`` (``llm.client``, which loads the http and email modules: only the commands that ask
    an LLM need it, not every evaluation)."""
    if name == "Evaluator":
        from trec_rag_eval.engine.harness import Evaluator

        return Evaluator
    if name == "progress_path_for":
        from trec_rag_eval.llm.client import progress_path_for

        return progress_path_for
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
