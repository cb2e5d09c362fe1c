"""A measure is a value: a family plus its parameters, with one canonical name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np


@dataclass(frozen=True)
class Measure:
    """One number per query (or one string, for relstring).

    ``family`` is the registry key (trec_eval's measure name where trec_eval has one).
    ``cutoff`` is the single parameter of cutoff families (k of P@k, the recall level of
    iprec_at_recall, the multiplier of Rprec_mult). ``params`` holds any other typed parameters
    as sorted (name, value) pairs, e.g. ``(("gains", ((1, 3.0),)),)``. ``text`` is trec_eval's
    parameter text as typed, which some families print back in their names (``utility_2,-1,0,0``).
    ``rel`` overrides the relevance level of the evaluation for this measure.
    ``alias`` is the other name it was asked by (``MAP``, ``MRR``, ``HitRate``: the RAG literature's
    names of AP, RR and Success); it changes only how the measure is shown, never what it is, so
    ``MAP == AP`` and asking for both computes and prints one measure.
    """

    family: str
    cutoff: int | float | None = None
    params: tuple[tuple[str, Any], ...] = ()
    text: str | None = None
    rel: int | None = None
    alias: str | None = field(default=None, compare=False)
    asked: str | None = field(default=None, compare=False)
    """The whole name as a caller typed it (``map@100``, ``hit_rate@5``): results are keyed by it, and
    every other name still finds them. Like ``alias``, it changes how the measure is shown, never what
    it is."""

    def param(self, name: str, default: Any = None) -> Any:
        for key, value in self.params:
            if key == name:
                return value
        return default

    @property
    def spec(self) -> Family:
        """The registered family of this measure (see ``register``)."""
        return REGISTERED[self.family]

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints: ``P_5``, ``iprec_at_recall_0.10``, ``ndcg_1=3,2=9``."""
        return self.spec.trec_label(self)

    def __str__(self) -> str:
        return self.asked if self.asked is not None else self.spec.label(self)


# an array of one value per query; relstring's kernel returns strings, and runid's (never called:
# the run tag is not computed per query) returns None
Kernel = Callable[[Any, Measure], "np.ndarray | list[str] | None"]


def cutoff_of(m: Measure) -> int | float:
    """The cutoff of a measure of a cutoff family (the parser always sets it for those families)."""
    return cast("int | float", m.cutoff)


@dataclass(frozen=True)
class Family:
    """A registry entry: how to parse, name, compute and aggregate one kind of measure.

    kinds of trec_eval parameters: ``none``; ``int_cutoffs`` (sorted, >0, one measure per
    cutoff); ``real_cutoffs`` (sorted, names use %3.2f); ``real_list`` (as typed, one measure);
    ``pairs`` (``k=v,k=v``, as typed, one measure).
    aggregate: ``mean``, ``sum``, ``gmean`` (floored at 1e-5), or ``none`` (per query only).
    value_range: the (lowest, highest) value one query can take, or None when unbounded (counts,
    DCG, utility); ``compare`` does not claim a detectable delta wider than this range.
    """

    name: str
    kernel: Kernel
    definition: str
    kind: str = "none"
    defaults: tuple[Any, ...] = ()
    value_type: str = "float"
    aggregate: str = "mean"
    per_query: bool = True
    notation: str | None = None
    ir_measures: str | None = None
    trec_eval: str | None = None
    reference: str = "trec_eval v10 (usnistgov/trec_eval)"
    edge_cases: str = ""
    extra_params: tuple[str, ...] = field(default=())
    value_range: tuple[float, float] | None = (0.0, 1.0)
    subtopics: bool = False
    """An intent-aware measure: it reads the qrels' iteration column as the subtopic (ndeval's format)."""

    def label(self, m: Measure, alias: bool = True) -> str:
        """The notation of ``m``: under the name it was asked by, or (``alias=False``) the canonical one."""
        base = (m.alias if alias else None) or self.notation or self.name
        args = []
        if m.rel is not None:
            args.append(f"rel={m.rel}")
        for key, value in m.params:
            args.append(f"{key}={_format_value(value)}")
        text = base + (f"({','.join(args)})" if args else "")
        if m.cutoff is not None:
            text += f"@{_format_value(m.cutoff)}"
        return text

    def trec_label(self, m: Measure) -> str:
        cut_elsewhere = m.cutoff is not None and self.kind not in ("int_cutoffs", "real_cutoffs")
        if m.rel is not None or (m.params and m.text is None) or cut_elsewhere:
            # parameters trec_eval's syntax cannot carry (P(rel=2)@5, nDCG(dcg='exp-log2')@10, RR@10,
            # RBP@10): the canonical notation itself, so two different measures never print under one
            # name and one measure always prints under the same one
            return self.label(m, alias=False)
        name = self.trec_eval or self.name
        if self.kind == "int_cutoffs" and m.cutoff is not None:
            return f"{name}_{int(m.cutoff)}"
        if self.kind == "real_cutoffs" and m.cutoff is not None:
            return f"{name}_{m.cutoff:3.2f}"
        if m.text is not None:
            return f"{name}_{m.text}"
        return name


def _format_value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    if isinstance(value, tuple) and all(isinstance(item, tuple) for item in value):  # gains {judgment: gain}
        return "{" + ",".join(f"{k}:{_format_value(v)}" for k, v in value) + "}"
    if isinstance(value, tuple):  # a list of reals (utility's coefficients, 11pt_avg's levels)
        return "(" + ",".join(_format_value(v) for v in value) + ")"
    return repr(value) if isinstance(value, str) else str(value)


REGISTERED: dict[str, Family] = {}
"""Every family by name, in registration order. Filled by ``register`` (``measures.registry`` registers
the built-in families); this module knows no family itself."""


def register(family: Family) -> Family:
    """Add a family; a name registered twice is an error (two definitions of one measure)."""
    if family.name in REGISTERED:
        raise ValueError(f"measure family {family.name!r} registered twice")
    REGISTERED[family.name] = family
    return family
