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

# our notation: Name, Name@cutoff, Name(key=value,...)@cutoff
_NOTATION = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_]*)(?:\((?P<args>[^()]*)\))?(?:@(?P<cutoff>[^@()]+))?$")
_NOTATION_FAMILIES = {
    "P": "P", "R": "recall", "F1": "F1", "HitRate": "HitRate", "Success": "success", "AP": "map",
    "MAP": "MAP", "RR": "recip_rank", "MRR": "MRR", "nDCG": "ndcg", "NDCG": "ndcg", "Rprec": "Rprec",
    "Bpref": "bpref", "infAP": "infAP", "SetP": "set_P", "SetR": "set_recall", "SetF": "set_F",
    "SetAP": "set_map", "SetRelP": "set_relative_P", "IPrec": "iprec_at_recall", "NumQ": "num_q",
    "NumRel": "num_rel", "NumRet": "num_ret", "NumRelRet": "num_rel_ret", "Judged": "Judged", "ERR": "ERR",
    "RelP": "relative_P", "DCG": "dcg", "IDCG": "ideal_dcg", "GMAP": "gm_map", "RBP": "rbp",
}
# families whose notation with a cutoff means another trec_eval family
_WITH_CUTOFF = {"ndcg": "ndcg_cut", "map": "map_cut", "MAP": "map_cut"}


def _atol(text: str) -> int:
    match = _INT_PREFIX.match(text)
    return int(match.group()) if match else 0


def _atof(text: str) -> float:
    match = _FLOAT_PREFIX.match(text)
    return float(match.group()) if match else 0.0


def is_trec_syntax(text: str) -> bool:
    name = text.split(".", 1)[0]
    return "@" not in text and "(" not in text and (name in FAMILIES or name in NICKNAMES)


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
    """Parse one measure in our notation: ``P@5``, ``nDCG@10``, ``AP``, ``RR``, ``P(rel=2)@5``."""
    match = _NOTATION.match(text.strip())
    if not match:
        raise MeasureSyntaxError(text, 0, len(text), "expected Name, Name@k or Name(param=value)@k")
    name = match.group("name")
    if name not in _NOTATION_FAMILIES:
        raise MeasureSyntaxError(text, 0, len(name), "unknown measure (see: trec-rag-eval measures)")
    family_name = _NOTATION_FAMILIES[name]
    cutoff_text = match.group("cutoff")
    cutoff: int | float | None = None
    if cutoff_text is not None:
        start = match.start("cutoff")
        try:
            cutoff = float(cutoff_text) if family_name == "iprec_at_recall" else int(cutoff_text)
        except ValueError:
            raise MeasureSyntaxError(text, start, len(text), "the cutoff must be a number") from None
        if family_name != "iprec_at_recall" and cutoff <= 0:
            raise MeasureSyntaxError(text, start, len(text), "the cutoff must be a positive integer")
        family_name = _WITH_CUTOFF.get(family_name, family_name)
    family = FAMILIES[family_name]
    if family.kind in ("int_cutoffs",) and cutoff is None and family_name not in ("Judged",):
        raise MeasureSyntaxError(text, len(text), len(text) + 1, f"{name} needs a cutoff, e.g. {name}@10")
    rel = None
    args = match.group("args")
    if args:
        start = match.start("args")
        for item in args.split(","):
            key, _, value = item.partition("=")
            if key.strip() != "rel" or not re.fullmatch(r"\s*-?\d+\s*", value):
                raise MeasureSyntaxError(text, start, start + len(item), "expected rel=<integer>")
            rel = int(value)
            start += len(item) + 1
    return Measure(family_name, cutoff=cutoff, rel=rel)


def parse_measures(specs: Iterable[str] | None) -> list[Measure]:
    """Resolve ``-m`` requests in either notation; None gives the seeds' RAG set.

    trec_eval-syntax requests come first, in trec_eval's order; then our notation, as asked.
    """
    specs = list(DEFAULT_RAG if specs is None else specs)
    trec = [s for s in specs if is_trec_syntax(s)]
    out = parse_trec_measures(trec) if trec else []
    for spec in specs:
        if not is_trec_syntax(spec):
            measure = parse_notation(spec)
            if measure not in out:
                out.append(measure)
    return out
