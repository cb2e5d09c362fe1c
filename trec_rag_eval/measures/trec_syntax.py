"""trec_eval's -m syntax (``-m P.5,10``, ``-m utility.2,-1,0,0``, ``-m official``) read into measures.

The text up to the first ``.`` is the measure (or a nickname: official,
all_trec, set); the rest is its parameter list. Integer cutoffs are read like C ``atol``
(``23.4`` is 23), sorted, and must be > 0 and distinct. Real cutoffs are sorted and distinct.
Real lists and ``k=v`` pairs are kept as typed and printed back in the name. When a measure is
asked for more than once, the first request with parameters wins.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from trec_rag_eval.errors import MeasureSyntaxError
from trec_rag_eval.measures.ir_notation import CUTOFF_MAX, NAMES, suggestion
from trec_rag_eval.measures.model import Family, Measure, range_problem
from trec_rag_eval.measures.registry import FAMILIES, NICKNAMES
from trec_rag_eval.syntax import RELEVANCE_RANGE, atof_prefix, atol_prefix, quote

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
    name, dot, _ = text.partition(".")
    if "@" in text or "(" in text:
        return False
    if name in NICKNAMES:
        return True
    if name not in FAMILIES:
        return False
    if dot:  # a parameter list (ERR.5,10 as P.5,10); a family that needs the notation is refused with its form
        return True
    if _notation_params(name):
        return False  # INST, SDCG, ...: parameters only the notation can give
    # a cutoff family without default cutoffs (Judged, ERR), bare, means its notation form: the whole ranking
    return not (FAMILIES[name].kind == "int_cutoffs" and not FAMILIES[name].defaults)


def _notation_params(name: str) -> list[str]:
    """The parameters a family's measures need that only our notation can give (C/W/L's ``max_rel``)."""
    if name not in NAMES:
        return []
    return [key for key, param in NAMES[name].params.items() if param.required]


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
        what = family.list_param
        reals_in_order = tuple(_atof(spec, item, at, what) for item, at in items)
        count = len(family.list_values)
        if count and len(reals_in_order) != count:
            raise MeasureSyntaxError(spec, offset, len(spec), f"{family.name} takes exactly {count} {what} "
                                     f"{','.join(family.list_values)}")
        if family.list_first == "@":
            # trec_eval reads the first value only, as a count (relstring's length): the measure's cutoff
            return [Measure(family.name, cutoff=int(min(max(reals_in_order[0], 0.0), float(CUTOFF_MAX))),
                            text=params)]
        if family.list_first is not None:
            # trec_eval reads the first value only: the same value as that parameter in our notation
            key, first = family.list_first, reals_in_order[0]
            return [Measure(family.name, params=((key, first),) if first != family.params[key].default else (),
                            text=params)]
        # the default list is left out, as our notation leaves it out: one measure, one name
        return [Measure(family.name, params=((what, reals_in_order),) if reals_in_order != family.defaults else (),
                        text=params)]
    # gain_pairs: k=v,k=v; a key that is not an integer (other than p) is ignored, as trec_eval does
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
        elif key == "p" and "p" in family.params:  # rbp's persistence; other families ignore it, as trec_eval
            p = _atof(spec, value, value_at, "p")
            extra.extend([("p", p)] if p != family.params["p"].default else [])
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
            close = suggestion(spec, 0, len(name), [*FAMILIES, *NICKNAMES], lambda text: parse_trec_measures([text]))
            hint = f"did you mean {close!r}?" if close else "see: trec-rag-eval measures"
            raise MeasureSyntaxError(spec, 0, len(name), f"unknown measure ({hint})")
        family = FAMILIES[name]
        needed = _notation_params(name)
        if needed:
            at = "@k" if family.kind == "int_cutoffs" else ""
            raise MeasureSyntaxError(spec, 0, len(spec), f"{name} needs {', '.join(needed)}, which trec_eval's "
                                     f"syntax cannot give: write it in the notation, "
                                     f"{name}({', '.join(f'{key}=...' for key in needed)}){at}")
        if dot and not params:
            raise MeasureSyntaxError(spec, len(spec) - 1, len(spec), "a '.' must be followed by parameters")
        if dot and family.kind == "none":
            raise MeasureSyntaxError(spec, len(name) + 1, len(spec), f"{name} takes no parameters")
        if dot:
            if chosen.get(name) is None:
                chosen[name] = _trec_params(spec, family, params, len(name) + 1)
                for measure in chosen[name] or ():  # the registry's table of ranges, as every notation
                    problem = range_problem(measure)
                    if problem:
                        raise MeasureSyntaxError(spec, len(name) + 1, len(spec), problem)
        else:
            chosen.setdefault(name, None)
    out: list[Measure] = []
    order = {name: i for i, name in enumerate(FAMILIES)}  # trec_eval's output order
    for name in sorted(chosen, key=order.__getitem__):
        out.extend(chosen[name] or _defaults(FAMILIES[name]))
    return out
