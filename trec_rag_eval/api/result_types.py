"""The classes the facade's functions return, named in their annotations and imported only when first read.

``typing.get_type_hints(tre.compare)`` (as pydantic, typer, typeguard and editors ask for it) evaluates the annotation
``result_types.Comparison`` in the facade module's globals: this module is there, and reading one of its names
imports the class's own module then (module ``__getattr__``) and gives the class itself. A bare name would have to be
imported with the facade module (``get_type_hints`` reads a function's globals, a plain dict, where a module's
``__getattr__`` is never asked), and most of these are modules a call loads only when it needs them (``tre.evaluate``
never loads the comparisons, the LLM jobs or the judgment groups). Type checkers import them all, below (``X as X``:
names this module gives, not uses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trec_rag_eval.lazy_modules import lazy_names

if TYPE_CHECKING:
    from trec_rag_eval.checks.crosscheck import CrosscheckReport as CrosscheckReport
    from trec_rag_eval.checks.validate import ValidationReport as ValidationReport
    from trec_rag_eval.compare.agreement import Agreement as Agreement
    from trec_rag_eval.compare.allpairs import AllPairs as AllPairs
    from trec_rag_eval.compare.comparison import Comparison as Comparison
    from trec_rag_eval.compare.planning import TopicSetPlan as TopicSetPlan
    from trec_rag_eval.conversion import ConversionReport as ConversionReport
    from trec_rag_eval.evaluation.context_cost import ContextCost as ContextCost
    from trec_rag_eval.evaluation.evaluate import Evaluation as Evaluation
    from trec_rag_eval.evaluation.evaluate import QueryResult as QueryResult
    from trec_rag_eval.fusion import Fusion as Fusion
    from trec_rag_eval.llm.judging import JudgeReport as JudgeReport
    from trec_rag_eval.llm.queries import GenerationReport as GenerationReport
    from trec_rag_eval.tables.judgment_kinds import Preferences as Preferences

HOMES = {
    "CrosscheckReport": "trec_rag_eval.checks.crosscheck",
    "ValidationReport": "trec_rag_eval.checks.validate",
    "Agreement": "trec_rag_eval.compare.agreement",
    "AllPairs": "trec_rag_eval.compare.allpairs",
    "Comparison": "trec_rag_eval.compare.comparison",
    "TopicSetPlan": "trec_rag_eval.compare.planning",
    "ConversionReport": "trec_rag_eval.conversion",
    "ContextCost": "trec_rag_eval.evaluation.context_cost",
    "Evaluation": "trec_rag_eval.evaluation.evaluate",
    "QueryResult": "trec_rag_eval.evaluation.evaluate",
    "Fusion": "trec_rag_eval.fusion",
    "JudgeReport": "trec_rag_eval.llm.judging",
    "GenerationReport": "trec_rag_eval.llm.queries",
    "Preferences": "trec_rag_eval.tables.judgment_kinds",
}
"""Each name's module: the imports above, for run time (``tests/test_type_hints.py`` checks they agree)."""


__getattr__ = lazy_names(globals(), HOMES)
