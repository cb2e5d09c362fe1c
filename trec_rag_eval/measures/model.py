"""A measure is a value: a family plus its parameters, with one canonical name."""

from __future__ import annotations

import functools
import importlib
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

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
    if TYPE_CHECKING:  # set by __post_init__, not fields: fields(), asdict() and astuple() give the seven above
        spec: Family = field(init=False, repr=False, compare=False)
        """The registered family of this measure (see ``register``), looked up when the measure is made."""
        named: Mapping[str, Any] = field(init=False, repr=False, compare=False)
        """``params`` by name (``m.named.get("gains")``), what the kernels read; read-only."""
        shown: str = field(init=False, repr=False, compare=False)
        """Its name as shown, ``str(m)``: as asked, else in our notation. Results are keyed by it on every
        evaluation, so it is made once, with the measure (the fields it is made of never change, nor does the
        family registered under a name)."""
        at: int | float = field(init=False, repr=False, compare=False)
        """The cutoff of a measure of a cutoff family, ``cutoff`` as its kernel reads it: a number, never None (the
        parser always sets it for those families), read as an attribute on every evaluation (``int(m.at)``). A
        measure without a cutoff has no ``at``."""

    def __post_init__(self) -> None:
        # a measure is a value: what is derived from its fields is fixed with them, and read as attributes
        spec = REGISTERED.get(self.family)
        if spec is None:
            raise ValueError(f"unknown measure family {self.family!r}: a Measure's family is the registered name of "
                             "one (trec_eval's: 'map', 'ndcg_cut'; see: trec-rag-eval measures)")
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "named", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "shown", self.asked if self.asked is not None else spec.label(self))
        if self.cutoff is not None:
            object.__setattr__(self, "at", self.cutoff)
        key = (self.family, self.cutoff, self.params, self.text, self.rel)  # what __eq__ compares
        try:
            object.__setattr__(self, "_hash", hash(key).__int__)
        except TypeError:  # a parameter value that cannot be hashed: refused when hashed, as it was
            object.__setattr__(self, "_hash", functools.partial(hash, key))

    # Results are keyed by Measure: an evaluation of 18 measures hashes them some 160 times. The hash of the fields
    # __eq__ compares (dataclass's own, but made once, with the measure), returned by C code alone: a property
    # whose getter, an attrgetter, gives the int's bound __int__, which hash() calls (frozen dataclasses keep a
    # __hash__ of their class body).
    __hash__ = property(operator.attrgetter("_hash"))

    def __reduce__(self) -> tuple[type[Measure], tuple[Any, ...]]:
        """Pickled as the fields it is made of (the family is looked up again where it is unpickled)."""
        return Measure, (self.family, self.cutoff, self.params, self.text, self.rel, self.alias, self.asked)

    def param(self, name: str, default: Any = None) -> Any:
        return self.named.get(name, default)

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints: ``P_5``, ``iprec_at_recall_0.10``, ``ndcg_1=3,2=9``."""
        return self.spec.trec_label(self)

    def __str__(self) -> str:
        return self.shown


# an array of one value per query; relstring's kernel returns strings, and runid's (never called:
# the run tag is not computed per query) returns None
Kernel = Callable[[Any, Measure], "np.ndarray | list[str] | None"]


class Deferred:
    """A kernel whose module is imported when it is first called: the registry names the measures of the
    families few evaluations ask for (preferences, judgment groups, diversity, C/W/L) without importing their
    modules, so a process that evaluates P@10 or the official set loads none of them."""

    __slots__ = ("module", "name", "_kernel")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name
        self._kernel: Kernel | None = None

    def __call__(self, ctx: Any, m: Measure) -> np.ndarray | list[str] | None:
        if self._kernel is None:
            self._kernel = getattr(importlib.import_module(self.module), self.name)
        return self._kernel(ctx, m)

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


class Range(NamedTuple):
    """The values a real parameter means something at: from ``low`` to ``high``, an end left out when
    ``open`` names it (``"low"``, ``"high"`` or ``"both"``); ``why`` says what the parameter is, and so why
    the range (it follows a refusal). The default is every finite number.

    ``Range``, ``Param`` and ``IrMeasures`` are records of the registry's table, never changed: named tuples (a
    frozen dataclass's six methods are compiled from source when its class is made, at every import of the
    measures; a named tuple's one)."""

    low: float = -math.inf
    high: float = math.inf
    open: str = ""
    why: str = ""

    def __contains__(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        above = value > self.low if self.open in ("low", "both") else value >= self.low
        below = value < self.high if self.open in ("high", "both") else value <= self.high
        return above and below

    def __str__(self) -> str:
        """``a number in (0, 1]``, ``a number > 0``, ``any finite number``."""
        low_open, high_open = self.open in ("low", "both"), self.open in ("high", "both")
        low, high = format(self.low, "g"), format(self.high, "g")
        if math.isinf(self.low) and math.isinf(self.high):
            return "any finite number"
        if math.isinf(self.high):
            return f"a number {'>' if low_open else '>='} {low}"
        if math.isinf(self.low):
            return f"a number {'<' if high_open else '<='} {high}"
        return f"a number in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"

    def refusal(self, key: str) -> str:
        """The sentence refusing a value of parameter ``key`` outside the range."""
        return f"{key} must be {self}" + (f" ({self.why})" if self.why else "")


ANY_FINITE = Range()


class Param(NamedTuple):
    """A typed parameter of a name in our notation: ``kind`` is int (a relevance level, >= 0), level (any
    judgment), float, bool, str (one of ``choices``), gains (a dict judgment -> gain) or reals (a list of
    finite numbers written ``(0.2,0.5)``, ``size`` of them when ``size`` is set: utility's coefficients).
    ``below``: another parameter of the same name its value must be below (C/W/L's ``min_rel`` below
    ``max_rel``). ``within``: the values a float means something at, and each number of a list of reals or
    gains (the registry's table of ranges); every way a measure is given is checked against it
    (``range_problem``)."""

    kind: str
    default: Any = None
    choices: tuple[Any, ...] = ()
    help: str = ""
    required: bool = False
    below: str = ""
    size: int = 0
    within: Range = ANY_FINITE
    widens: tuple[Any, ...] = ()
    """Its values with which a measure reads documents below its cutoff (``Family.reads_top``): ``judged_only``'s
    True, ``ideal``'s ``"retrieved"``."""

    def refusal(self, key: str, value: Any) -> str | None:
        """Why ``value`` (already of the parameter's type) is outside ``within``; None when it is inside."""
        if self.kind == "float":
            numbers = [value]
        elif self.kind == "reals":
            numbers = list(value) if isinstance(value, (tuple, list)) else [value]
        elif self.kind == "gains":
            pairs = value.items() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
            numbers = [pair[1] if isinstance(pair, tuple) and len(pair) == 2 else None for pair in pairs]
        else:
            return None
        if all(number in self.within for number in numbers):
            return None
        return self.within.refusal(key if self.kind == "float" else f"{key}: each")


class IrMeasures(NamedTuple):
    """How the cross-check writes a measure of a family in ir_measures' notation: ``name``, then the
    ``first`` parameters, the relevance level, and the measure's other parameters in name order (with
    ``judged_only=True`` under -J), e.g. ``SetF(beta=2.0,rel=2,judged_only=True)``.

    ``rel``: ``level`` writes ``rel=L`` unless L is 1 (L the measure's own level, else the evaluation's);
    ``asked`` only the measure's own; ``always`` even at 1; ``none`` never (graded measures).
    ``first``: (parameter, value) written first: the measure's value, else this one (None: left out), for a
    parameter whose default differs in ir_measures or that names the variant (``relative=True``).
    ``judged_only``: why ir_measures cannot restrict it to judged documents ("": it can).
    ``refused``: (our parameter, why ir_measures has no such parameter): a measure setting it is not compared.
    ``max_cutoff``: the largest cutoff it is computed at, with why (a cutoff is then required).
    ``conventions``: (convention, provider) of ``checks.crosscheck.CONVENTIONS`` that may explain a difference
    for this measure beyond its provider's own ("": with any provider).
    ``within``: (our parameter, the range ir_measures computes the same measure in, its ``why`` saying why): a
    measure with the parameter (or its default) outside is not compared.
    """

    name: str
    rel: str = "level"
    first: tuple[tuple[str, Any], ...] = ()
    judged_only: str = ""
    refused: tuple[tuple[str, str], ...] = ()
    max_cutoff: tuple[int, str] | None = None
    conventions: tuple[tuple[str, str], ...] = ()
    within: tuple[tuple[str, Range], ...] = ()

    @property
    def shown(self) -> str:
        """The name as ``trec-rag-eval measures`` lists it (at the defaults)."""
        args = [f"{key}={value!r}" for key, value in self.first if value is not None]
        args += ["rel=1"] if self.rel == "always" else []
        return self.name + (f"({','.join(args)})" if args else "")

    def arguments_of(self, m: Measure, spec: Family, level: int, judged_only: bool
                     ) -> tuple[tuple[tuple[str, Any], ...] | None, str]:
        """The parameters of ``m`` (a measure of ``spec``) in ir_measures' notation under the evaluation's
        relevance ``level`` and -J, in the order its name writes them and with the values of ir_measures'
        types (gains a dict of integers), the value after @ last as ``("@", value)``; or (None, why
        ir_measures cannot compute it). The cross-check builds ir_measures' measure objects from them, never
        through ir_measures' parser of names."""
        params = dict(m.params)
        if params.pop("judged_only", False):
            judged_only = True
        if judged_only and self.judged_only:
            return None, self.judged_only
        if self.max_cutoff and spec.kind == "int_cutoffs" and (m.cutoff is None or m.cutoff > self.max_cutoff[0]):
            return None, self.max_cutoff[1]
        for key, why in self.refused:
            if key in params:
                return None, why
        for key, compared in self.within:
            value = params.get(key, spec.params[key].default if key in spec.params else None)
            if value is not None and value not in compared:
                return None, compared.why
        gains = params.get("gains")
        if gains and any(float(v) != int(v) for _, v in gains):
            return None, "pytrec_eval takes integer gains only"
        if gains and any(v < 0 for _, v in gains):
            return None, "ir-measures hands pytrec_eval the gains as the judgments, where a negative one is unjudged"
        args = [(key, _ir_value(key, params.pop(key, value))) for key, value in self.first
                if key in params or value is not None]
        rel = m.rel if m.rel is not None else level
        if self.rel == "always" or self.rel == "level" and rel != 1 or self.rel == "asked" and m.rel is not None:
            args.append(("rel", rel))
        if judged_only:
            params["judged_only"] = True
        args += [(key, _ir_value(key, value)) for key, value in sorted(params.items())]
        if m.cutoff is not None:
            args.append(("@", m.cutoff))
        return tuple(args), ""

    def name_of(self, m: Measure, spec: Family, level: int, judged_only: bool) -> tuple[str | None, str]:
        """The ir_measures notation of ``m`` (see ``arguments_of``), or (None, why ir_measures cannot compute
        it)."""
        args, why = self.arguments_of(m, spec, level, judged_only)
        if args is None:
            return None, why
        written = [f"{key}={_ir_text(value)}" for key, value in args if key != "@"]
        at = "".join(f"@{value}" for key, value in args if key == "@")
        return self.name + (f"({','.join(written)})" if written else "") + at, ""


def _ir_value(key: str, value: Any) -> Any:
    """A parameter value of ours as ir_measures types it: gains as a dict {judgment: gain} of integers."""
    if key == "gains":
        return {k: int(v) for k, v in value}
    return value


def _ir_text(value: Any) -> str:
    """A parameter value as ir_measures writes it: gains as ``{judgment:gain}``."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in value.items()) + "}"
    return repr(value)


FAMILY_KINDS = ("none", "int_cutoffs", "real_cutoffs", "real_list", "gain_pairs")
"""How trec_eval's -m reads a family's parameters (``Family.kind``)."""


@dataclass(frozen=True)
class Family:
    """A registry entry: how to parse, name, compute and aggregate one kind of measure.

    kinds of trec_eval parameters: ``none``; ``int_cutoffs`` (sorted, >0, one measure per
    cutoff); ``real_cutoffs`` (sorted, names use %3.2f); ``real_list`` (as typed, one measure: see
    ``list_param``, ``list_values`` and ``list_first``); ``gain_pairs`` (``judgment=gain,...``, and rbp's
    ``p=``, as typed, one measure).
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
    names: tuple[str, ...] = ()
    """Its names in our notation (ir_measures' where it has one), as listed: ``AP`` (no @), ``AP@k`` (a cutoff
    required), ``IPrec@p`` (a recall level), ``RprecMult@x`` (any real >= 0), both ``Judged`` and ``Judged@k``
    (either). The first is the name it is shown by (the family's own name without one); every measure's name
    reads back as the same measure (``parse_notation(str(m)) == m``). A name may belong to two families, one
    without @ and one with (``AP``: map, ``AP@k``: map_cut)."""
    aliases: tuple[str, ...] = ()
    """Other names of it, shown as asked (``MAP``, ``MRR``, ``HitRate@k``), written as ``names``; or another
    family's name with one of its parameters (``SetP(relative=True)``, ``NumRet(rel=k)``: at any level)."""
    params: Mapping[str, Param] = field(default_factory=dict, hash=False)
    """The typed parameters its names take in our notation: ``P(rel=2,judged_only=True)@5``."""
    ranx: Mapping[str, str] = field(default_factory=dict, hash=False)
    """ranx's names of it, each with the same measure in our notation (``{"mrr": "MRR"}``)."""
    ir_measures: IrMeasures | None = None
    """Its name in ir_measures' notation, which the cross-check compares it with (None: ir_measures has none)."""
    reference: str = "trec_eval v10 (usnistgov/trec_eval)"
    list_param: str = ""
    """A ``real_list`` family: the parameter its measures hold trec_eval's list as (utility's ``coefficients``:
    ``-m utility.2,-1,0,0`` is ``Utility(coefficients=(2.0,-1.0,0.0,0.0))``, left out at ``defaults``), also
    what an error about the list's values calls them."""
    list_values: tuple[str, ...] = ()
    """A ``real_list`` family whose list has a fixed length: the name of each value, in order (utility's
    ``a``, ``b``, ``c``, ``d``); trec_eval's -m refuses another count."""
    list_first: str | None = None
    """A ``real_list`` family of which trec_eval reads only the first value: the parameter of our notation that
    value is (set_F's ``beta``, so ``set_F.2`` is ``SetF(beta=2.0)``; left out at its default); a measure asked
    with it in our notation prints it in its trec_eval name (``SetF(beta=2.0)`` is ``set_F_2.0``). ``"@"``: the
    value is the measure's cutoff (relstring's length: ``relstring.3`` is ``relstring@3``)."""
    value_range: tuple[float, float] | None = (0.0, 1.0)
    run_tag: bool = False
    """Its value is the run's tag (runid): no kernel computes it, the summary holds the tag; tables leave it out
    and trec_eval's summary may (several runs)."""
    quoted: bool = False
    """trec_eval prints its text values between single quotes (relstring's ``'-3-'``)."""
    trec_per_query: bool = True
    """trec_eval prints it in its per-query lines (``-q``); False: in the summary only (num_q, whose value per
    query is 1), though our other formats show it per query."""
    trec_eval_9: bool = False
    """It has trec_eval 9's own rule, which ``--trec-eval-9`` asks for: its kernel is given the parameter
    ``trec_eval_9=True`` (interpolated precision cut at floor(p*R + 0.9))."""
    subtopics: bool = False
    """An intent-aware measure: it reads the qrels' iteration column as the subtopic (ndeval's format)."""
    zscore: bool = True
    """Its values become z-scores under trec_eval's -Z; False for num_q, whose summary stays the number of
    queries (trec_eval counts them afresh)."""
    reads_top: bool = False
    """With a cutoff k, its value for a query reads the judgments and the first k documents of the query's ranking,
    none below: an evaluation of such measures alone matches no document ranked below the deepest cutoff with
    the judgments (``evaluation.evaluate.ranks_read``). A parameter value that makes it read further is in that
    parameter's ``widens`` (``ideal='retrieved'`` sorts every retrieved document's gain; ``judged_only`` drops
    unjudged documents first)."""
    judgments: str = "relevance"
    """The judgments it scores: ``relevance`` (one grade per document: qrels), ``groups`` (qrels of several
    judgment groups: trec_eval's qrels_jg), ``preferences`` (trec_eval's prefs and qrels_prefs) or ``any``
    (runid, num_q)."""

    def __post_init__(self) -> None:
        if self.kind not in FAMILY_KINDS:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {', '.join(FAMILY_KINDS)}")
        if self.kind == "real_list" and not self.list_param:
            raise ValueError(f"{self.name}: a real_list family names the parameter its list is held as (list_param)")
        if self.kind != "real_list" and (self.list_param or self.list_values or self.list_first):
            raise ValueError(f"{self.name}: list_param, list_values and list_first are for a real_list family")
        if self.list_first not in (None, "@") and self.list_first not in self.params:
            raise ValueError(f"{self.name}: list_first {self.list_first!r} is not one of its parameters")

    def label(self, m: Measure, alias: bool = True) -> str:
        """The notation of ``m``: under the name it was asked by, or (``alias=False``) the canonical one."""
        base = (m.alias if alias else None) or self.shown
        args = []
        if m.rel is not None:
            args.append(f"rel={m.rel}")
        for key, value in m.params:
            args.append(f"{key}={_format_value(value)}")
        text = base + (f"({','.join(args)})" if args else "")
        if m.cutoff is not None:
            text += f"@{_format_value(m.cutoff)}"
        return text

    @property
    def shown(self) -> str:
        """The name its measures are shown by in our notation: its first name (``AP`` for ``AP@k``)."""
        return self.names[0].partition("@")[0] if self.names else self.name

    def trec_label(self, m: Measure) -> str:
        cut_elsewhere = m.cutoff is not None and self.kind not in ("int_cutoffs", "real_cutoffs") and not (
            self.list_first == "@" and m.text is not None)
        if m.rel is not None or (m.params and m.text is None) or cut_elsewhere:
            # parameters trec_eval's syntax cannot carry (P(rel=2)@5, nDCG(dcg='exp-log2')@10, RR@10,
            # RBP@10): the canonical notation itself, so two different measures never print under one
            # name and one measure always prints under the same one
            return self.label(m, alias=False)
        name = self.name
        if self.kind == "int_cutoffs" and m.cutoff is not None:
            return f"{name}_{int(m.cutoff)}"
        if self.kind == "real_cutoffs" and m.cutoff is not None:
            # trec_eval writes the value %3.2f into 8 characters, cutting a longer one (Rprec_mult.1e10 prints
            # as Rprec_mult_10000000)
            return f"{name}_{m.cutoff:3.2f}"[: len(name) + 9]
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


def range_problem(m: Measure) -> str | None:
    """Why a measure's parameters are outside the registry's table of ranges (``Param.within``; the first
    such parameter), None when they are all inside: what the parsers refuse, for a ``Measure`` built in
    Python."""
    spec = m.spec
    for key, value in m.params:
        param = spec.params.get(key)
        problem = param.refusal(key, value) if param is not None else None
        if problem:
            return problem
    return None


REGISTERED: dict[str, Family] = {}
"""Every family by name, in registration order. Filled by ``register`` (``measures.registry`` registers
the built-in families); this module knows no family itself."""

_WATCHERS: list[Callable[[Family], Callable[[], None]]] = []


def register(family: Family) -> Family:
    """Add a family; a name registered twice is an error (two definitions of one measure), and so is a name
    of the notation or of ranx that another family has: the tables derived from the registry refuse it, and
    nothing is added."""
    if family.name in REGISTERED:
        raise ValueError(f"measure family {family.name!r} registered twice")
    updates = [watcher(family) for watcher in _WATCHERS]
    REGISTERED[family.name] = family
    for update in updates:
        update()
    return family


def on_register(watcher: Callable[[Family], Callable[[], None]]) -> None:
    """Keep a table derived from the registry (our notation's names, ranx's) in step with it: ``watcher(family)``
    checks a family against the table (ValueError to refuse it) and returns how to add it, for every family
    registered so far and each one registered later."""
    for family in REGISTERED.values():
        watcher(family)()
    _WATCHERS.append(watcher)
