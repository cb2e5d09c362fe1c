"""Measures: the Measure value, its two notations, the registry of families and their kernels.

Importing the package registers the built-in families, so ``Measure.spec`` finds them whichever
module of the package was imported first.
"""

from trec_rag_eval.measures import registry as _registry  # noqa: F401
