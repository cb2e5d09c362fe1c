"""A search engine named by text, the way a command line or a config file names it."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from trec_rag_eval.errors import UsageError


def load_engine(spec: str) -> Any:
    """Import ``package.module:attribute`` (dotted attributes allowed); a class is built without arguments.

    The current directory is importable, as with ``python -m``.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UsageError(f"engine={spec!r}: expected package.module:callable", {"engine=": "engine"})
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"engine={spec!r}: cannot import {module_name!r} ({err})", {"engine=": "engine"}) from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise UsageError(f"engine={spec!r}: {module_name!r} has no attribute {attribute!r}",
                             {"engine=": "engine"}) from None
    if isinstance(target, type):
        target = target()
    return target
