"""Parse measure requests in trec_eval's syntax (``-m P.5,10``) and in our notation (``P@5``).

trec_eval syntax: the text up to the first ``.`` is the measure (or a nickname: official,
all_trec, set); the rest is its parameter list. Integer cutoffs are read like C ``atol``
(``23.4`` is 23), sorted, and must be > 0 and distinct. Real cutoffs are sorted and distinct.
Real lists and ``k=v`` pairs are kept as typed and printed back in the name. When a measure is
asked for more than once, the first request with parameters wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from trec_rag_eval.errors import MeasureSyntaxError
from trec_rag_eval.measures.model import Family, Measure
from trec_rag_eval.measures.registry import FAMILIES, NICKNAMES, ORDER

# the seeds' RAG set: P, R, F1, HitRate and nDCG at 1, 3, 5, 10, then MRR and MAP
RAG_CUTOFFS = (1, 3, 5, 10)
DEFAULT_RAG = tuple(f"{name}@{k}" for name in ("P", "R", "F1", "HitRate", "nDCG") for k in RAG_CUTOFFS) + (
    "MRR", "MAP")

_INT_PREFIX = re.compile(r"\s*[+-]?\d+")
_FLOAT_PREFIX = re.compile(r"\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|nan)", re.I)

def _atol(text: str) -> int:
    match = _INT_PREFIX.match(text)
    return int(match.group()) if match else 0


def _atof(text: str) -> float:
    match = _FLOAT_PREFIX.match(text)
    return float(match.group()) if match else 0.0


def is_trec_syntax(text: str) -> bool:
    name = text.split(".", 1)[0]
    if "@" in text or "(" in text:
        return False
    if name in NICKNAMES:
        return True
    # a cutoff family without default cutoffs (Judged, ERR) means its notation form
    return name in FAMILIES and not (FAMILIES[name].kind == "int_cutoffs" and not FAMILIES[name].defaults)


def _trec_params(spec: str, family: Family, params: str, offset: int) -> list[Measure]:
    items = params.split(",")
    if family.kind == "none":
        return [Measure(family.name)]
    if family.kind == "int_cutoffs":
        values = sorted(_atol(item) for item in items)
        if values[0] <= 0:
            raise MeasureSyntaxError(spec, offset, len(spec), "cutoffs must be positive integers")
        if len(set(values)) != len(values):
            raise MeasureSyntaxError(spec, offset, len(spec), "the same cutoff is given twice")
        return [Measure(family.name, cutoff=v) for v in values]
    if family.kind == "real_cutoffs":
        reals = sorted(_atof(item) for item in items)
        if len(set(reals)) != len(reals):
            raise MeasureSyntaxError(spec, offset, len(spec), "the same cutoff is given twice")
        return [Measure(family.name, cutoff=v) for v in reals]
    if family.kind == "real_list":
        reals_in_order = tuple(_atof(item) for item in items)
        if family.name == "utility" and len(reals_in_order) != 4:
            raise MeasureSyntaxError(spec, offset, len(spec), "utility takes exactly 4 coefficients a,b,c,d")
        if family.name == "set_F":
            # trec_eval uses only the first value; the same value as SetF(beta=x) in the notation
            beta = reals_in_order[0]
            return [Measure(family.name, params=(("beta", beta),) if beta != 1.0 else (), text=params)]
        key = family.extra_params[0]
        return [Measure(family.name, params=((key, reals_in_order),), text=params)]
    # pairs: k=v,k=v
    gains: list[tuple[int, float]] = []
    extra: list[tuple[str, float]] = []
    position = offset
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise MeasureSyntaxError(spec, position, position + len(item), "malformed pair, expected key=value")
        if re.fullmatch(r"[+-]?\d+", key.strip()):
            gains.append((int(key), _atof(value)))
        elif key == "p":
            extra.append(("p", _atof(value)))
        position += len(item) + 1
    typed: list[tuple[str, object]] = []
    if gains:
        typed.append(("gains", tuple(sorted(dict(gains).items()))))
    typed.extend(extra)
    return [Measure(family.name, params=tuple(typed), text=params)]


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
            raise MeasureSyntaxError(spec, 0, len(name), "unknown measure (see: trec-rag-eval measures)")
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
    for name in sorted(chosen, key=ORDER.__getitem__):
        out.extend(chosen[name] or _defaults(FAMILIES[name]))
    return out


def parse_notation(text: str) -> Measure:
    """Parse one measure in ir-measures notation (``P@5``, ``nDCG(dcg='exp-log2')@10``, ``AP``):
    see ``trec_rag_eval.measures.notation``."""
    from trec_rag_eval.measures.notation import parse_measure

    return parse_measure(text)


def parse_measures(specs: Iterable[str] | None) -> list[Measure]:
    """Resolve ``-m`` requests in either notation; None gives the seeds' RAG set.

    trec_eval-syntax requests come first, in trec_eval's order; then our notation, as asked.
    """
    if specs is None:  # the RAG set, in the seeds' order: P, R, F1, HitRate, nDCG, then MRR and MAP
        return [parse_notation(spec) for spec in DEFAULT_RAG]
    specs = list(specs)
    trec = [s for s in specs if is_trec_syntax(s)]
    out = parse_trec_measures(trec) if trec else []
    for spec in specs:
        if not is_trec_syntax(spec):
            measure = parse_notation(spec)
            if measure not in out:
                out.append(measure)
    return out
