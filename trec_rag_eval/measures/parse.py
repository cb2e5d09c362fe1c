"""Parse measure requests in trec_eval's syntax (``-m P.5,10``) and in our notation (``P@5``).

trec_eval syntax: the text up to the first ``.`` is the measure (or a nickname: official,
all_trec, set); the rest is its parameter list. Integer cutoffs are read like C ``atol``
(``23.4`` is 23), sorted, and must be > 0 and distinct. Real cutoffs are sorted and distinct.
Real lists and ``k=v`` pairs are kept as typed and printed back in the name. When a measure is
asked for more than once, the first request with parameters wins.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from trec_rag_eval.errors import MeasureSyntaxError
from trec_rag_eval.measures.model import Family, Measure, on_register
from trec_rag_eval.measures.notation import CUTOFF_MAX, NAMES, closest, parse_notation
from trec_rag_eval.measures.registry import FAMILIES, NICKNAMES
from trec_rag_eval.syntax import RELEVANCE_RANGE, atof_prefix, atol_prefix, quote

# the RAG set: P, R, F1, HitRate and nDCG at 1, 3, 5, 10, then MRR and MAP
RAG_CUTOFFS = (1, 3, 5, 10)
DEFAULT_RAG = tuple(f"{name}@{k}" for name in ("P", "R", "F1", "HitRate", "nDCG") for k in RAG_CUTOFFS) + (
    "MRR", "MAP")

CUTOFF_RANGE = (1, CUTOFF_MAX)


def _atol(spec: str, item: str, offset: int, what: str, bounds: tuple[int, int]) -> int:
    """``item`` read as trec_eval reads it (C ``atol``: 23.4 is 23, abc is 0), within ``bounds``."""
    value = atol_prefix(item)
    low, high = bounds
    if not low <= value <= high:
        raise MeasureSyntaxError(spec, offset, offset + len(item), f"{what} {quote(item)} is out of range "
                                 f"({low} to {high})")
    return value


def _atof(spec: str, item: str, offset: int, what: str) -> float:
    """``item`` read as C ``atof`` (.5x is 0.5), which must be finite: NaN or inf has no meaning as a
    cutoff, a coefficient or a gain, and trec_eval would compute with it in silence."""
    value = atof_prefix(item)
    if not math.isfinite(value):
        raise MeasureSyntaxError(spec, offset, offset + len(item), f"{what} must be finite numbers")
    return value


def _items(params: str, offset: int) -> list[tuple[str, int]]:
    """The comma-separated items of a parameter list, each with its offset in the request."""
    out = []
    for item in params.split(","):
        out.append((item, offset))
        offset += len(item) + 1
    return out


def is_trec_syntax(text: str) -> bool:
    name = text.split(".", 1)[0]
    if "@" in text or "(" in text:
        return False
    if name in NICKNAMES:
        return True
    from trec_rag_eval.measures.notation import NAMES

    if name in NAMES and any(param.required for param in NAMES[name].params.values()):
        return False  # INST, SDCG, ...: parameters only the notation can give
    # a cutoff family without default cutoffs (Judged, ERR) means its notation form
    return name in FAMILIES and not (FAMILIES[name].kind == "int_cutoffs" and not FAMILIES[name].defaults)


def _trec_params(spec: str, family: Family, params: str, offset: int) -> list[Measure]:
    items = _items(params, offset)
    if family.kind == "none":
        return [Measure(family.name)]
    if family.kind == "int_cutoffs":
        if min(atol_prefix(item) for item, _ in items) <= 0:
            raise MeasureSyntaxError(spec, offset, len(spec), "cutoffs must be positive integers")
        values = sorted(_atol(spec, item, at, "cutoff", CUTOFF_RANGE) for item, at in items)
        if len(set(values)) != len(values):
            raise MeasureSyntaxError(spec, offset, len(spec), "the same cutoff is given twice")
        return [Measure(family.name, cutoff=v) for v in values]
    if family.kind == "real_cutoffs":
        reals = sorted(_atof(spec, item, at, "cutoffs") for item, at in items)
        if len(set(reals)) != len(reals):
            raise MeasureSyntaxError(spec, offset, len(spec), "the same cutoff is given twice")
        return [Measure(family.name, cutoff=v) for v in reals]
    if family.kind == "real_list":
        what = family.extra_params[0]
        reals_in_order = tuple(_atof(spec, item, at, what) for item, at in items)
        if family.name == "utility" and len(reals_in_order) != 4:
            raise MeasureSyntaxError(spec, offset, len(spec), "utility takes exactly 4 coefficients a,b,c,d")
        if family.name == "set_F":
            # trec_eval uses only the first value; the same value as SetF(beta=x) in the notation
            beta = reals_in_order[0]
            return [Measure(family.name, params=(("beta", beta),) if beta != 1.0 else (), text=params)]
        return [Measure(family.name, params=((what, reals_in_order),), text=params)]
    # pairs: k=v,k=v; a key that is not an integer (other than p) is ignored, as trec_eval does
    gains: list[tuple[int, float]] = []
    extra: list[tuple[str, float]] = []
    for item, at in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise MeasureSyntaxError(spec, at, at + len(item), "malformed pair, expected key=value")
        value_at = at + len(key) + 1
        if _JUDGMENT.fullmatch(key):
            judgment = _atol(spec, key, at, "judgment", RELEVANCE_RANGE)
            gains.append((judgment, _atof(spec, value, value_at, "gains")))
        elif key == "p":
            extra.append(("p", _atof(spec, value, value_at, "p")))
    typed: list[tuple[str, object]] = []
    if gains:
        typed.append(("gains", tuple(sorted(dict(gains).items()))))
    typed.extend(extra)
    return [Measure(family.name, params=tuple(typed), text=params)]


_JUDGMENT = re.compile(r"[ \t]*[+-]?[0-9]+[ \t]*", re.ASCII)


def _defaults(family: Family) -> list[Measure]:
    if family.kind in ("int_cutoffs", "real_cutoffs"):
        return [Measure(family.name, cutoff=v) for v in family.defaults]
    return [Measure(family.name)]


def parse_trec_measures(specs: Iterable[str]) -> list[Measure]:
    """Resolve trec_eval ``-m`` requests into measures, in trec_eval's internal output order."""
    chosen: dict[str, list[Measure] | None] = {}
    for spec in specs:
        name, dot, params = spec.partition(".")
        if name in NICKNAMES:
            for member in NICKNAMES[name]:
                chosen.setdefault(member, None)
            continue
        if name not in FAMILIES:
            close = closest(name, [*FAMILIES, *NICKNAMES])
            hint = f"did you mean {close[0] + dot + params!r}?" if close else "see: trec-rag-eval measures"
            raise MeasureSyntaxError(spec, 0, len(name), f"unknown measure ({hint})")
        family = FAMILIES[name]
        if dot and not params:
            raise MeasureSyntaxError(spec, len(spec) - 1, len(spec), "a '.' must be followed by parameters")
        if dot and family.kind == "none":
            raise MeasureSyntaxError(spec, len(name) + 1, len(spec), f"{name} takes no parameters")
        if dot:
            if chosen.get(name) is None:
                chosen[name] = _trec_params(spec, family, params, len(name) + 1)
        else:
            chosen.setdefault(name, None)
    out: list[Measure] = []
    order = {name: i for i, name in enumerate(FAMILIES)}  # trec_eval's output order
    for name in sorted(chosen, key=order.__getitem__):
        out.extend(chosen[name] or _defaults(FAMILIES[name]))
    return out


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
        return [parse_notation(spec) for spec in DEFAULT_RAG]
    if order not in ("trec", "asked"):
        raise ValueError(f"order must be 'trec' or 'asked', got {order!r}")
    specs = list(specs)
    trec = [s for s in specs if is_trec_syntax(s)]
    resolved = parse_trec_measures(trec) if trec else []
    out = [] if order == "asked" else list(resolved)
    for spec in specs:
        if is_trec_syntax(spec):
            if order == "trec":
                continue
            name = spec.partition(".")[0]
            families = set(NICKNAMES.get(name, (name,)))
            batch = [m for m in resolved if m.family in families]
        else:
            batch = [_parse_notation(spec)]
        out.extend(m for m in batch if m not in out)
    return out


_PRINTED = re.compile(r"([A-Za-z0-9_]+?)_([0-9]+(?:\.[0-9]+)?)")
"""A name as trec_eval prints it: the family, '_', the parameter (``P_5``, ``ndcg_cut_10``)."""


def _parse_notation(spec: str) -> Measure:
    """Our notation (ranx's names too); a name as trec_eval prints it (``P_5``) gets a hint to its
    request form (``P.5``), since pytrec_eval hands results keyed that way."""
    try:
        return parse_notation(_from_ranx(spec))
    except MeasureSyntaxError as err:
        if "unknown measure" not in err.reason:
            raise
        printed = _PRINTED.fullmatch(spec.strip())
        if printed is None or printed[1] not in FAMILIES:
            # a misspelt name: the closest of every name (ours, trec_eval's, ranx's), the rest as typed
            typed = spec.strip()
            name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", typed)
            close = closest(name.group(), [*NAMES, *FAMILIES, *NICKNAMES, *RANX_NAMES]) if name else []
            if not close or name is None:
                raise
            raise MeasureSyntaxError(err.text, err.start, err.end, f"unknown measure (did you mean "
                                     f"{close[0] + typed[name.end():]!r}?)") from None
        asked = f"{printed[1]}.{printed[2]}"
        raise MeasureSyntaxError(err.text, err.start, err.end,
                                 f"unknown measure: did you mean {asked!r}? ({spec.strip()} is how trec_eval "
                                 "prints it)") from None


def default_measures(trec_output: bool = False) -> list[Measure]:
    """The measures computed when none are asked for: trec_eval's ``official`` set when the output is
    trec_eval's (as trec_eval itself does), the RAG set otherwise."""
    return parse_measures(["official"] if trec_output else None)


def parse_measure(text: str | Measure) -> Measure:
    """One measure from any name it has: our notation (``nDCG@10``), trec_eval's (``ndcg_cut.10``,
    ``map``) or ranx's (``ndcg@10``, ``mrr``), or an ir_measures measure object; a ``Measure`` is
    returned as it is. A trec_eval name that means several (``P``) is an error."""
    if isinstance(text, Measure):
        return text
    if is_ir_measures_measure(text):
        text = str(text)
    if not isinstance(text, str):
        raise TypeError(f"a measure name must be a string, got {type(text).__name__}")
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
    items: Iterable[object]
    if isinstance(measures, (str, Measure)) or is_ir_measures_measure(measures):
        items = [measures]
    elif isinstance(measures, Iterable):
        items = measures
    else:
        raise TypeError("measures must be a name ('nDCG@10'), a Measure, or a list of them; "
                        f"got {type(measures).__name__}")
    out: list[Measure] = []
    for item in items:
        if isinstance(item, Measure):
            out.append(item)
        elif isinstance(item, str):
            out.extend(_as_asked(_split_names(item)))
        elif is_ir_measures_measure(item):
            out.append(parse_measure(str(item)))
        else:
            raise TypeError(f"a measure must be a name, a Measure or an ir_measures measure, got "
                            f"{type(item).__name__}: {item!r}")
    return list(dict.fromkeys(out))


def _as_asked(specs: list[str]) -> list[Measure]:
    """``parse_measures(specs, order="asked")``, named as asked (``named_as_asked``)."""
    return named_as_asked(parse_measures(specs, order="asked"), specs)


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


def _split_names(text: str) -> list[str]:
    """``"P@5 nDCG@10"`` -> two names (ir-measures' command-line form); spaces inside brackets stay."""
    from trec_rag_eval.measures.notation import _split_top_level

    return _split_top_level(text.strip()) or [text]
