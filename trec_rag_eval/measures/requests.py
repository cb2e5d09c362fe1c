"""What a caller asked for, in any notation, turned into measures: trec_eval's -m syntax (``P.5,10``,
``official``), ir-measures notation (``P@5``), ranx's names (``ndcg@10``) or ir_measures' measure objects;
and the measures computed when none are asked for (the RAG set, trec_eval's ``official``; for judgment groups and
preferences, their own sets).

Each kind of judgments feeds its own measures, as in trec_eval (whose other measures fail on them): relevance
judgments (qrels) the measures of one grade per document, judgment groups (``-R qrels_jg``) the ``*_avgjg``
measures, preferences (``-R prefs``, ``-R qrels_prefs``) the ``prefs_*`` ones; runid and num_q fit all
(``check_judgments``).
"""

from __future__ import annotations

import functools
import numbers
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import InputTypeError, MeasureSyntaxError, UsageError
from trec_rag_eval.measures.ir_notation import NAMES, parse_notation, suggestion
from trec_rag_eval.measures.model import Family, Measure, on_register, range_problem
from trec_rag_eval.measures.registry import FAMILIES, NICKNAMES
from trec_rag_eval.measures.trec_syntax import is_trec_syntax, parse_trec_measures

if TYPE_CHECKING:
    from trec_rag_eval.tables import Qrels
    from trec_rag_eval.tables.judgment_kinds import Preferences

RAG_CUTOFFS = (1, 3, 5, 10)


def rag_measures(cutoffs: Sequence[int] = RAG_CUTOFFS) -> tuple[str, ...]:
    """The RAG set at ``cutoffs``, in the RAG table's order: P, R, F1, HitRate and nDCG at each, then MRR and MAP."""
    return tuple(f"{name}@{k}" for name in ("P", "R", "F1", "HitRate", "nDCG") for k in cutoffs) + ("MRR", "MAP")


DEFAULT_RAG = rag_measures()
"""The RAG set at 1, 3, 5 and 10: what is computed when no measure is asked for (outside trec_eval's output)."""

RANX_NAMES: dict[str, str] = {}
"""ranx's metric names, each read as the same measure in our notation (``Family.ranx``), computed with
trec_eval's conventions, not ranx's."""


def _add_ranx_names(family: Family) -> Callable[[], None]:
    taken = [name for name in family.ranx if name in RANX_NAMES]
    if taken:
        raise ValueError(f"{family.name}: ranx's name {taken[0]!r} is already read as {RANX_NAMES[taken[0]]}")
    return lambda: RANX_NAMES.update(family.ranx)


on_register(_add_ranx_names)


def _from_ranx(spec: str) -> str:
    """Our notation for a ranx name (``ndcg@10`` -> ``nDCG@10``, ``mrr`` -> ``MRR``); other text unchanged."""
    name, at, cutoff = spec.partition("@")
    return RANX_NAMES[name] + at + cutoff if name in RANX_NAMES else spec


def parse_measures(specs: Iterable[str] | None, order: str = "trec") -> list[Measure]:
    """Resolve ``-m`` requests in either notation (ranx's names too); None gives the RAG set.

    ``order="trec"``: trec_eval-syntax requests first, in trec_eval's fixed order (its output
    never follows the command line), then our notation, as asked. ``order="asked"``: the order of
    the requests (a nickname's members in trec_eval's order), for every other output format. The
    measures are the same either way: a trec_eval measure asked twice still takes the first
    request with parameters.
    """
    if specs is None:  # the RAG set, in the RAG table's order: P, R, F1, HitRate, nDCG, then MRR and MAP
        return list(_rag_set())
    if order not in ("trec", "asked"):
        raise ValueError(f"order must be 'trec' or 'asked', got {order!r}")
    specs = list(specs)
    trec = [s for s in specs if is_trec_syntax(s)]
    resolved = parse_trec_measures(trec) if trec else []
    out = [] if order == "asked" else list(resolved)
    # a measure asked in both syntaxes (set_F.2 and SetF(beta=2.0)) is one measure under one name, the first
    # request's (set_F_2 in trec_eval's output): they differ only in the text trec_eval's name keeps as typed
    seen = {replace(m, text=None) for m in out}
    for spec in specs:
        if is_trec_syntax(spec):
            if order == "trec":
                continue
            name = spec.partition(".")[0]
            families = set(NICKNAMES.get(name, (name,)))
            batch = [m for m in resolved if m.family in families]
        else:
            batch = [_parse_notation(spec)]
        for m in batch:
            key = replace(m, text=None)
            if key not in seen:
                seen.add(key)
                out.append(m)
    return out


def _printed_request(typed: str) -> tuple[str, list[Measure]] | None:
    """The trec_eval request of a name as trec_eval prints it (the family, '_', the parameters as typed:
    ``P_5``, ``ndcg_cut_10``, ``utility_1,-1,0,0``, ``rbp_p=0.8``) and the measures it computes, when that
    request parses; else None."""
    for family in sorted(FAMILIES, key=len, reverse=True):  # ndcg_cut_10 is ndcg_cut's, not ndcg's
        if typed.startswith(family + "_") and len(typed) > len(family) + 1:
            request = f"{family}.{typed[len(family) + 1:]}"
            try:
                return request, parse_trec_measures([request])
            except MeasureSyntaxError:
                continue
    return None


def _parse_notation(spec: str) -> Measure:
    """Our notation (ranx's names too), or a measure's name as trec_eval and pytrec_eval print it (``P_5``,
    ``ndcg_cut_10``, ``iprec_at_recall_0.10``, ``utility_2,-1,0,0``): the measure its request (``P.5``)
    computes, so that results keyed by those names (pytrec_eval's) are asked for by the same names."""
    try:
        return parse_notation(_from_ranx(spec))
    except MeasureSyntaxError as err:
        typed = spec.strip()
        printed = _printed_request(typed)
        if printed is not None and len(printed[1]) == 1:
            return printed[1][0]
        if printed is not None:  # P_5,10: trec_eval prints no such name; its request asks for several
            raise MeasureSyntaxError(err.text, err.start, err.end, f"{typed} names {len(printed[1])} measures, "
                                     f"not one: ask for them with {printed[0]!r}") from None
        if "unknown measure" not in err.reason:
            raise
        # a misspelt name: the closest of every name (ours, trec_eval's, ranx's), the rest as typed
        name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", typed)
        close = suggestion(typed, 0, name.end(), [*NAMES, *FAMILIES, *NICKNAMES, *RANX_NAMES],
                           lambda text: parse_measures([text])) if name else None
        if close is None:
            raise
        raise MeasureSyntaxError(err.text, err.start, err.end, f"unknown measure (did you mean {close!r}?)") from None


def default_measures(trec_output: bool = False) -> list[Measure]:
    """The measures computed when none are asked for: trec_eval's ``official`` set when the output is
    trec_eval's (as trec_eval itself does), the RAG set otherwise."""
    return parse_measures(["official"] if trec_output else None)


def parse_measure(text: str | Measure) -> Measure:
    """One measure from any name it has: our notation (``nDCG@10``), trec_eval's (``ndcg_cut.10``,
    ``map``) or ranx's (``ndcg@10``, ``mrr``), or an ir_measures measure object; a ``Measure`` is
    returned as it is. A trec_eval name that means several (``P``) is an error."""
    if isinstance(text, Measure):
        return _within_ranges(text)
    if is_ir_measures_measure(text):
        return from_ir_measures(text)
    if not isinstance(text, str):
        raise InputTypeError(f"a measure name must be a string, got {type(text).__name__}")
    measures = parse_measures([text])
    if len(measures) != 1:
        shown = ", ".join(str(m) for m in measures[:5]) + (", ..." if len(measures) > 5 else "")
        raise MeasureSyntaxError(text, 0, len(text), f"names {len(measures)} measures ({shown}), not one")
    return measures[0]


MeasuresArg = str | Measure | Iterable[str | Measure] | None
"""What ``evaluate(measures=...)`` takes: None (the RAG set), one name (``"nDCG@10"``, or several
separated by spaces), one ``Measure`` (or ir_measures measure object), or a list of them."""


def resolve_measures(measures: MeasuresArg) -> list[Measure]:
    """The measures of ``evaluate(measures=...)``, each once, in the order asked (see ``MeasuresArg``)."""
    if measures is None:
        return parse_measures(None)
    if isinstance(measures, str):  # the common call, resolved once per process
        return list(_resolved(measures))
    items: Iterable[object]
    if isinstance(measures, (str, Measure)) or is_ir_measures_measure(measures):
        items = [measures]
    elif isinstance(measures, Iterable):
        items = measures
    else:
        raise InputTypeError("measures must be a name ('nDCG@10'), a Measure, or a list of them; "
                             f"got {type(measures).__name__}", {"measures": "measures"})
    out: list[Measure] = []
    for item in items:
        if isinstance(item, Measure):
            out.append(_within_ranges(item))
        elif isinstance(item, str):
            out.extend(_named(item))
        elif is_ir_measures_measure(item):
            out.append(from_ir_measures(item))
        else:
            raise InputTypeError(f"a measure must be a name, a Measure or an ir_measures measure, got "
                                 f"{type(item).__name__}: {item!r}")
    unique: dict[Measure, Measure] = {}
    for m in out:  # one measure once, whatever text trec_eval's name of it keeps (as parse_measures)
        unique.setdefault(m if m.text is None else replace(m, text=None), m)
    return list(unique.values())


@functools.lru_cache(maxsize=256)
def _resolved(text: str) -> tuple[Measure, ...]:
    """``resolve_measures`` of one string (a name, or several separated by spaces)."""
    return tuple(resolve_measures([text]))


@functools.lru_cache(maxsize=256)
def _named(text: str) -> tuple[Measure, ...]:
    """The measures one string asks for, named as asked: parsed once per process (a training loop asks for
    the same names every epoch); forgotten when a family is registered, which may change what a name means."""
    return _parsed_as_asked(tuple(_split_names(text)), "asked")


@functools.lru_cache(maxsize=1)
def _rag_set() -> tuple[Measure, ...]:
    """The RAG set (``DEFAULT_RAG``), parsed once per process as the names asked are (``_named``): every call
    that asks for no measure computes it."""
    return tuple(parse_notation(spec) for spec in DEFAULT_RAG)


on_register(lambda family: _named.cache_clear)
on_register(lambda family: _resolved.cache_clear)
on_register(lambda family: _rag_set.cache_clear)


def _within_ranges(measure: Measure) -> Measure:
    """A ``Measure`` built in Python, refused as the parsers refuse its name when a parameter is outside the
    registry's table of ranges, or without what every name of its family carries: a cutoff where each of its names has
    one (``P@k``: ``P`` alone is trec_eval's list of cutoffs, never one measure) or a required parameter
    (``max_rel``)."""
    spec = measure.spec
    missing = [key for key, param in spec.params.items() if param.required and key not in measure.named]
    problem = range_problem(measure)
    if measure.cutoff is None and spec.kind in ("int_cutoffs", "real_cutoffs") and all("@" in n for n in spec.names):
        problem = f"{measure.family} needs a cutoff, e.g. Measure({measure.family!r}, cutoff=10)"
    elif missing:
        problem = (f"{measure.family} needs {' and '.join(missing)}, e.g. "
                   f"Measure({measure.family!r}, params=(({missing[0]!r}, 3),))")
    if problem:
        text = str(measure)
        raise MeasureSyntaxError(text, 0, len(text), problem)
    return measure


def parse_as_asked(specs: Sequence[str], order: str = "asked") -> list[Measure]:
    """``parse_measures(specs, order)`` named as asked (``named_as_asked``): what a list of names asks for,
    parsed once per process for each list and order (a training loop, a sweep, asks for the same list on
    every call); forgotten when a family is registered."""
    return list(_parsed_as_asked(tuple(specs), order))


@functools.lru_cache(maxsize=256)
def _parsed_as_asked(specs: tuple[str, ...], order: str) -> tuple[Measure, ...]:
    return tuple(named_as_asked(parse_measures(list(specs), order=order), list(specs)))


on_register(lambda family: _parsed_as_asked.cache_clear)


def named_as_asked(measures: list[Measure], specs: list[str]) -> list[Measure]:
    """``measures`` (parsed from ``specs``), each named as it was typed when one name asked for it alone
    in our notation or ranx's (``map@100`` stays ``map@100``, not ``MAP@100``); trec_eval's requests
    (``P.5,10``, ``map``) keep the canonical names, as they may ask for several measures."""
    typed: dict[Measure, str] = {}
    for spec in specs:
        if not is_trec_syntax(spec):
            typed.setdefault(_parse_notation(spec), spec.strip())
    return [replace(m, asked=typed[m]) if m in typed and m.asked is None else m for m in measures]


def is_ir_measures_measure(value: object) -> bool:
    """Whether ``value`` is one of ir_measures' measure objects (``ir_measures.nDCG@10``): its ``str``
    is its name in the notation we read. Told by its module, without importing ir_measures."""
    return type(value).__module__.startswith("ir_measures.measures") and hasattr(value, "NAME")


def from_ir_measures(value: Any) -> Measure:
    """One of ir_measures' measure objects as our measure: its name with every parameter it carries, even one
    at ir_measures' default (which its ``str`` leaves out), written in our notation and read by its parser,
    so a value outside its range is refused as a typed name is. A parameter left to ir_measures' default takes
    that default where ours differs (RBP's persistence: 0.8 there, 0.9 here); the relevance level, when not
    given, stays the evaluation's (ir_measures' default, 1, is ours). A parameter ours has not is dropped when at
    ir_measures' default, which is what ours computes (``AP_IA(judged_only=False)``), and refused otherwise."""
    name = str(value.__name__)
    params = dict(value.params)
    at_key = str(value.AT_PARAM)
    ours = NAMES.get(name)
    for key, info in value.SUPPORTED_PARAMS.items():
        default = getattr(info, "default", None)
        if ours is None or key in (at_key, "rel") or not isinstance(default, (int, float, str)):
            continue
        if key in ours.params and key not in params and default != ours.params[key].default:
            params[key] = default
        elif key not in ours.params and key in params and params[key] == default and type(params[key]) is type(default):
            del params[key]  # judged_only=False of an intent-aware measure: what ours does, without the parameter
    at = params.pop(at_key, None)
    if at is not None:  # the keyword form our notation reads as ir_measures does: P(cutoff=10), IPrec(recall=0.5)
        params[at_key] = at
    args = ",".join(f"{key}={_literal(given)}" for key, given in params.items())
    return parse_notation(name + (f"({args})" if args else ""))


def _literal(value: Any) -> str:
    """A parameter value of an ir_measures object as our notation writes it (anything else as its ``repr``,
    which the parser refuses, pointing at it)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, dict):
        return "{" + ",".join(f"{_literal(k)}:{_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _split_names(text: str) -> list[str]:
    """``"P@5 nDCG@10"`` -> two names (ir-measures' command-line form); spaces inside brackets stay."""
    from trec_rag_eval.measures.ir_notation import split_top_level

    return split_top_level(text.strip()) or [text]


# -- the kinds of judgments: which measures fit which (``tables.judgment_kinds``) ---------------------------

DEFAULT_SETS = {"preferences": "prefs", "groups": "qrels_jg"}
"""The measures evaluated when none are asked for, by kind: trec_eval's nicknames of their own sets."""

_WHAT = {
    "relevance": "relevance judgments (qrels: one grade per document)",
    "groups": "judgment groups (qrels whose iteration column names the group)",
    "preferences": "preference judgments",
}
_HOW = {
    "relevance": "ask for measures of one grade per document (map, P.10, nDCG@10, ...)",
    "groups": "ask for map_avgjg, P_avgjg or Rprec_mult_avgjg (qrels_jg)",
    "preferences": "ask for the prefs_* measures (all_prefs)",
}
_READ = {
    "relevance": "read the qrels as qrels (format='trec')",
    "groups": "read the qrels with format='qrels_jg'",
    "preferences": "read them with format='prefs' (query_id group subgroup doc_id level) or, from a qrels file, "
                   "format='qrels_prefs'",
}
FORMAT_PARAMETERS = {"format='trec'": "trec_format", "format='qrels_jg'": "qrels_jg_format",
                     "format='prefs'": "prefs_format", "format='qrels_prefs'": "qrels_prefs_format"}
"""How the messages name the formats, for the command line to say its -R instead."""


def check_judgments(judgments: Qrels | Preferences, measures: Sequence[Measure]) -> None:
    """Refuse a measure that does not score the kind of ``judgments`` at hand, saying what would."""
    kind = judgments.kind
    for measure in measures:
        reads = measure.spec.judgments
        if reads not in ("any", kind):
            source = getattr(judgments, "source", "the judgments")
            raise UsageError(f"{measure.asked or measure.trec_name} scores {_WHAT[reads]}, and {source} holds "
                             f"{_WHAT[kind]}: {_HOW[kind]}, or {_READ[reads]}", FORMAT_PARAMETERS)


def default_measure_set(judgments: Qrels | Preferences) -> str | None:
    """The measures to evaluate when none are asked for: None (the usual default) for relevance judgments."""
    return DEFAULT_SETS.get(judgments.kind)


def compared_measure_set(judgments: Qrels | Preferences) -> list[str] | None:
    """The measures ``compare`` compares when none are asked for: those of ``default_measure_set`` that score
    the kind itself and are averaged over queries (not runid, num_q, nor the preference counts); None for
    relevance judgments."""
    kind, nickname = judgments.kind, default_measure_set(judgments)
    return None if nickname is None else [name for name in NICKNAMES[nickname]
                                          if FAMILIES[name].judgments == kind and FAMILIES[name].aggregate == "mean"]
