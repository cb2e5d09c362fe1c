"""How a result shows itself (``str()``, a notebook table, a figure) without knowing the renderers.

The result types (``Evaluation``, ``Comparison``, ``EngineEvaluation``, ``CrosscheckReport``,
``ValidationReport``, ``Fusion``, ...) live below ``render/`` (layers import one way), yet ``str()`` of each
(or its ``render()``) must be the command line's own text and its notebook table must be rendered by the same
functions, so there is one wording. No result type writes text or HTML itself: its ``__str__``, ``render()``
and ``_repr_html_`` ask this registry, which ``render.results`` fills, one entry per type (its qualified
name) and way (``"text"``, ``"html"``, ``"plot"``, ...). The registry loads that module by name the first
time a result is shown, as a plugin is loaded (the static imports still go one way: nothing here imports
``render``). The command line, above ``render``, calls the render functions directly. A way nobody
registered falls back to the short repr (text) or raises (anything else).

Also here, since the result types' short reprs use them: ``short_repr`` and the number formats of what a
person reads: ``format_number`` (a measure's value in every table: the command's, the notebook's, a repr),
``format_delta`` (a comparison's delta), ``format_magnitude`` (a coefficient, a detectable delta) and
``format_precise`` (a cross-check's values). ``render.trec`` has trec_eval's, ``render.numbers`` the other
statistics' and the JSON/CSV values'.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any

RENDERERS_MODULE = "trec_rag_eval.render.results"

_REGISTRY: dict[tuple[str, str], Callable[..., Any]] = {}
_loaded = False


def register_renderer(type_name: str, way: str, renderer: Callable[..., Any]) -> None:
    """Show instances of the type named ``type_name`` (``module.QualName``) this ``way`` with ``renderer``."""
    _REGISTRY[(type_name, way)] = renderer


def _type_names(value: Any) -> list[str]:
    return [f"{cls.__module__}.{cls.__qualname__}" for cls in type(value).__mro__]


def renderer(value: Any, way: str) -> Callable[..., Any] | None:
    """The renderer registered for ``value``'s type (or a base of it) and ``way``, else None."""
    global _loaded
    if not _loaded:
        _loaded = True
        import_module(RENDERERS_MODULE)  # registers every result type's renderers
    for name in _type_names(value):
        found = _REGISTRY.get((name, way))
        if found is not None:
            return found
    return None


def show(value: Any, way: str, *args: Any, **kwargs: Any) -> Any:
    """``value`` rendered this ``way``: its ``"text"`` falls back to ``repr``; other ways must be registered."""
    found = renderer(value, way)
    if found is None:
        if way == "text":
            return repr(value)
        raise TypeError(f"{type(value).__name__} cannot be shown as {way!r}")
    return found(value, *args, **kwargs)


def format_number(value: Any, missing: str = "nan") -> str:
    """A number in a table a person reads: a float with 4 decimals (trec_eval's precision), NaN as
    ``missing`` (``nan``; a comparison's tables write ``-``, as for its other statistics), integers
    (counts) and text as they are."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return missing if math.isnan(value) else f"{value:.4f}"
    return str(value)


def format_delta(value: float) -> str:
    """Signed, three decimals: ``+0.043``, ``-0.100``."""
    if math.isnan(value):
        return "-"
    text = f"{value:+.3f}"
    return "+0.000" if text == "-0.000" else text


def format_magnitude(value: float | None, missing: str = "-") -> str:
    """Three decimals (a detectable delta, an agreement coefficient: kappa, alpha, tau), NaN or None as
    ``missing``."""
    if value is None or math.isnan(value):
        return missing
    return f"{value:.3f}"


def format_precise(value: float | None) -> str:
    """A cross-check's number: 6 decimals (it is about small differences), no value as ``n/a``."""
    return "n/a" if value is None else f"{value:.6f}"


def short_repr(kind: str, head: Sequence[str], values: Mapping[str, Any], limit: int = 6) -> str:
    """``Kind(head..., m1=0.1234, m2=..., +n more)``: a repr that stays short whatever the size."""
    shown = [f"{name}={format_number(value)}" for name, value in list(values.items())[:limit]]
    if len(values) > limit:
        shown.append(f"+{len(values) - limit} more")
    return f"{kind}({', '.join([*head, *shown])})"
