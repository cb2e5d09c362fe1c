"""A search engine (or a tokenizer) named by text, the way a command line or a config file names it."""

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
    return load_object(spec, "engine")


def load_object(spec: str, parameter: str) -> Any:
    """``load_engine`` for any object a parameter names by text (``engine``, ``tokenizer``): errors
    name the parameter (the command line says its flag)."""
    named = {f"{parameter}=": parameter}
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UsageError(f"{parameter}={spec!r}: expected package.module:callable", named)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"{parameter}={spec!r}: cannot import {module_name!r} ({err})", named) from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise UsageError(f"{parameter}={spec!r}: {module_name!r} has no attribute {attribute!r}", named) from None
    if isinstance(target, type):
        target = target()
    return target


def load_tokenizer(tokenizer: Any) -> Any:
    """A tokenizer given as ``"package.module:callable"`` imported (a class built without arguments);
    None or a callable as it is; anything else refused."""
    if isinstance(tokenizer, str):
        tokenizer = load_object(tokenizer, "tokenizer")
    if tokenizer is not None and not callable(tokenizer):
        raise UsageError(f"tokenizer= must be a callable text -> number of tokens or tokens, got "
                         f"{type(tokenizer).__name__}", {"tokenizer= ": "tokenizer"})
    return tokenizer
