"""trec-rag-eval: retrieval evaluation with trec_eval's exact conventions, for IR and RAG.

>>> import trec_rag_eval as tre
>>> result = tre.evaluate("qrels.txt", "run.txt", ["nDCG@10", "MRR"])
>>> result.summary["nDCG@10"], result.to_pandas()

Public API only. Importing the package does no work and imports nothing heavy: each name below is
loaded on first use (module ``__getattr__``), so ``import trec_rag_eval`` takes a few milliseconds.
"""

from __future__ import annotations

import sys
from types import ModuleType

from trec_rag_eval.lazy_modules import lazy_names
from trec_rag_eval.version import __version__ as __version__

# not `from typing import ...`: importing typing alone costs more than the rest of this module
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# name -> the module that defines it
_EXPORTS = {
    "evaluate": "trec_rag_eval.api.evaluations",
    "iter_evaluate": "trec_rag_eval.api.evaluations",
    "compare": "trec_rag_eval.api.analyses",
    "plan": "trec_rag_eval.api.analyses",
    "fuse": "trec_rag_eval.api.analyses",
    "agree": "trec_rag_eval.api.analyses",
    "crosscheck": "trec_rag_eval.api.analyses",
    "validate": "trec_rag_eval.api.analyses",
    "generate_queries": "trec_rag_eval.api.llm_and_search",
    "judge": "trec_rag_eval.api.llm_and_search",
    "context_cost": "trec_rag_eval.api.evaluations",
    "evaluate_many": "trec_rag_eval.api.evaluations",
    "convert": "trec_rag_eval.api.evaluations",
    "read_qrels": "trec_rag_eval.api.evaluations",
    "read_run": "trec_rag_eval.api.evaluations",
    "parse_measure": "trec_rag_eval.measures.requests",
    "Measure": "trec_rag_eval.measures.model",
    "Qrels": "trec_rag_eval.tables",
    "Run": "trec_rag_eval.tables",
    "Preferences": "trec_rag_eval.tables.judgment_kinds",
    "GroupedQrels": "trec_rag_eval.tables.judgment_kinds",
    "Settings": "trec_rag_eval.core.settings",
    "Evaluation": "trec_rag_eval.evaluation.evaluate",
    "QueryResult": "trec_rag_eval.evaluation.evaluate",
    "Comparison": "trec_rag_eval.compare.comparison",
    "AllPairs": "trec_rag_eval.compare.allpairs",
    "TopicSetPlan": "trec_rag_eval.compare.planning",
    "Agreement": "trec_rag_eval.compare.agreement",
    "Fusion": "trec_rag_eval.fusion.fusion_result",
    "Evaluator": "trec_rag_eval.engine.harness",
    "EngineEvaluation": "trec_rag_eval.engine.harness",
    "TrecRagEvalError": "trec_rag_eval.errors",
    "InputFormatError": "trec_rag_eval.errors",
    "MeasureSyntaxError": "trec_rag_eval.errors",
    "MissingDependencyError": "trec_rag_eval.errors",
    "UsageError": "trec_rag_eval.errors",
    "TrecRagEvalWarning": "trec_rag_eval.errors",
}

__all__ = [
    "evaluate", "iter_evaluate", "compare", "fuse", "agree", "crosscheck", "validate", "read_qrels", "read_run",
    "parse_measure", "Measure", "Qrels", "Run", "Settings", "Evaluation", "QueryResult", "Comparison", "AllPairs",
    "Agreement", "Fusion", "Evaluator",
    "EngineEvaluation", "TrecRagEvalError", "InputFormatError", "MeasureSyntaxError", "MissingDependencyError",
    "UsageError", "TrecRagEvalWarning", "generate_queries", "judge",
    "context_cost", "evaluate_many", "convert", "plan", "TopicSetPlan", "Preferences", "GroupedQrels",
]


class _Package(ModuleType):
    """This package's module type. The function ``compare`` shares its name with the ``compare/``
    package; importing a submodule sets it as an attribute of its package, which would hide the
    function, so that one assignment is ignored (``sys.modules`` still holds the submodule, and
    ``from trec_rag_eval.compare import stats`` works as always)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__getattr__ = lazy_names(globals(), _EXPORTS)  # each public name imported from its module when first read


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from trec_rag_eval.api.analyses import agree, compare, crosscheck, fuse, plan, validate
    from trec_rag_eval.api.evaluations import (
        context_cost,
        convert,
        evaluate,
        evaluate_many,
        iter_evaluate,
        read_qrels,
        read_run,
    )
    from trec_rag_eval.api.llm_and_search import generate_queries, judge
    from trec_rag_eval.compare.agreement import Agreement
    from trec_rag_eval.compare.allpairs import AllPairs
    from trec_rag_eval.compare.comparison import Comparison
    from trec_rag_eval.compare.planning import TopicSetPlan
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.engine.harness import EngineEvaluation, Evaluator
    from trec_rag_eval.errors import (
        InputFormatError,
        MeasureSyntaxError,
        MissingDependencyError,
        TrecRagEvalError,
        TrecRagEvalWarning,
        UsageError,
    )
    from trec_rag_eval.evaluation.evaluate import Evaluation, QueryResult
    from trec_rag_eval.fusion.fusion_result import Fusion
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.measures.requests import parse_measure
    from trec_rag_eval.tables import Qrels, Run
    from trec_rag_eval.tables.judgment_kinds import GroupedQrels, Preferences
