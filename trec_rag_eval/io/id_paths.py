"""Where a search result keeps its document id, when the usual keys do not say: ``id=``.

``id`` is a key path (``"metadata.source"``: the ``source`` key of the result's ``metadata``, each
step a dict key or an attribute, so LangChain's ``Document.metadata["source"]`` and a JSON object's
``{"metadata": {"source": ...}}`` read alike) or a callable taking the result and returning its id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

IdLocator = str | Callable[[Any], Any]
"""``id=``: a key path such as ``"metadata.source"``, or a callable ``result -> id``."""

MISSING = object()
"""What ``locate_id`` returns when a step of the key path is not there."""


def check_locator(id: Any) -> IdLocator | None:
    """``id`` as given, once checked: None, a non-empty key path or a callable."""
    if id is None or callable(id):
        return id  # type: ignore[no-any-return]
    if isinstance(id, str) and id and all(id.split(".")):
        return id
    from trec_rag_eval.errors import UsageError

    raise UsageError(f"id must be a key path such as 'metadata.source' or a callable result -> id, got {id!r}",
                     {"id ": "id"})


def locate_id(item: Any, id: IdLocator) -> Any:
    """The value ``id`` points at in ``item``, or ``MISSING`` when a step of the key path is absent."""
    if callable(id):
        return id(item)
    value = item
    for step in id.split("."):
        if isinstance(value, Mapping):
            value = value.get(step, MISSING)
        else:
            value = getattr(value, step, MISSING)
        if value is MISSING:
            return MISSING
    return value


def describe(id: IdLocator) -> str:
    """How an error names ``id``: the key path quoted, or the callable's name."""
    return repr(id) if isinstance(id, str) else getattr(id, "__qualname__", type(id).__name__)
