"""How a result shows itself (``str()``, a notebook table, a figure) without knowing the renderers.

The result types (``Evaluation``, ``Comparison``, ``EngineEvaluation``, ``CrosscheckReport``,
``ValidationReport``, ``Fusion``, ...) live below ``render/`` (layers import one way), yet ``str()`` of each
(or its ``render()``) must be the command line's own text and its notebook table must be rendered by the same
functions, so there is one wording. No result type writes text or HTML itself: its ``__str__``, ``render()``
and ``_repr_html_`` ask this registry, keyed by the type itself and a way (``"text"``, ``"html"``,
``"plot"``, ...). A result type is marked ``@shown_by("trec_rag_eval.render.results:register_fusion")``: the
first time one of its values is shown, that function of ``render/`` is imported, as a plugin is loaded, and
called with the type, which it registers (``register_renderer(cls, way, renderer)``). The static imports still
go one way (nothing here imports ``render``), and a type's renderers load only when one of its values is shown
(a comparison's, with scipy, never for an evaluation). A misspelt registrar fails at once (an ImportError); a
way nobody registered raises a ``TypeError`` naming the type, never a repr in place of the text. The command
line, above ``render``, calls the render functions directly.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any, TypeVar

T = TypeVar("T", bound=type)

_REGISTRY: dict[tuple[type, str], Callable[..., Any]] = {}
_REGISTRARS: dict[type, str] = {}


def shown_by(registrar: str) -> Callable[[T], T]:
    """Mark a result type: ``registrar`` (``"module:function"``, a function of ``render/``) registers its
    renderers, called with the type the first time one of its values is shown."""
    module, _, function = registrar.partition(":")
    if not module or not function:
        raise ValueError(f"a registrar is 'module:function', got {registrar!r}")

    def mark(cls: T) -> T:
        _REGISTRARS[cls] = registrar
        return cls

    return mark


def register_renderer(cls: type, way: str, renderer: Callable[..., Any]) -> None:
    """Show the values of ``cls`` (the type itself, or a base of theirs) this ``way`` with ``renderer``."""
    if not isinstance(cls, type):
        raise TypeError(f"register_renderer takes the result type itself, not {cls!r}")
    _REGISTRY[(cls, way)] = renderer


def renderer_for(cls: type, way: str) -> Callable[..., Any] | None:
    """The renderer registered for ``cls`` (or a base of it) and ``way``, its registrar called first; else None."""
    for base in cls.__mro__:
        registrar = _REGISTRARS.get(base)
        if registrar is not None:
            module, _, function = registrar.partition(":")
            getattr(import_module(module), function)(base)
            del _REGISTRARS[base]  # registered: not called again
        found = _REGISTRY.get((base, way))
        if found is not None:
            return found
    return None


def renderer(value: Any, way: str) -> Callable[..., Any] | None:
    """The renderer registered for ``value``'s type (or a base of it) and ``way``, else None."""
    return renderer_for(type(value), way)


def show(value: Any, way: str, *args: Any, **kwargs: Any) -> Any:
    """``value`` rendered this ``way``, by the renderer registered for its type (a ``TypeError`` if none is)."""
    found = renderer(value, way)
    if found is None:
        raise TypeError(f"{type(value).__name__} cannot be shown as {way!r}: no renderer is registered for it "
                        "(renderer_registry.shown_by, register_renderer)")
    return found(value, *args, **kwargs)
