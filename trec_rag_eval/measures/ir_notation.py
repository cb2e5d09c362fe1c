"""Parse measures in ir-measures notation: ``Name(param=value,...)@at``.

Examples: ``P@5``, ``P(rel=2)@5``, ``R@100``, ``AP``, ``AP@100``, ``RR@10``, ``nDCG@10``,
``nDCG(dcg='exp-log2')@10``, ``nDCG(judged_only=True)``, ``SetF(beta=2.0)``, ``IPrec@0.5``,
``Judged@10``, ``ERR@20``; the aliases ``MAP``, ``MRR``, ``HitRate@k`` (AP, RR and Success@k, shown
under the name asked for) and ``NDCG``; our ``F1@k`` and the RAG variants ``nDCG(ideal='retrieved')@k``
and ``P(denominator='returned')@k``.

Every parameter is typed and checked; a bad one raises ``MeasureSyntaxError`` pointing at the
characters at fault. Parameters equal to their default are dropped, so each measure has one
canonical string and ``parse_notation(str(m)) == m`` (as in ir-measures, ``SetF(beta=1.0)`` is
``SetF``). ``rel`` is kept as written: it overrides the evaluation's relevance level (``-l``).
"""

from __future__ import annotations

import ast
import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from trec_rag_eval.errors import MeasureSyntaxError
from trec_rag_eval.measures import registry  # noqa: F401  (the built-in families, registered first)
from trec_rag_eval.measures.model import REGISTERED, Family, Measure, Param, on_register
from trec_rag_eval.syntax import INT32, RELEVANCE_RANGE

CUTOFF_MAX = INT32[1]
"""The largest cutoff: trec_eval's largest -M; a larger one cannot mean anything more."""


class Name(NamedTuple):
    """One name of the notation: which family it means without and with ``@``, and its parameters. A record (a
    named tuple: a dataclass's methods are compiled when its class is made, and every evaluation parses names)."""

    family: str | None  # without @ (None: the @ value is required)
    family_at: str | None  # with @ (None: no @ allowed)
    params: Mapping[str, Param]
    at: str = "cutoff"  # "cutoff" (positive integer), "recall" (a real in [0, 1]) or "real" (a real >= 0)
    alias: bool = False  # another name of the family's own notation, kept for display (MAP, MRR, HitRate)
    variants: tuple[tuple[str, Any, str], ...] = ()
    """(parameter, value, family): with that parameter at that value (None: at any value), the name means that
    other family (``SetP(relative=True)`` is set_relative_P, ``NumRet(rel=2)`` num_rel_ret at level 2); the
    parameter is then dropped, but for ``rel``, kept as the measure's level."""


_AT_KINDS = {"k": "cutoff", "p": "recall", "x": "real"}
"""What follows @ in a name as ``Family.names`` lists it: k a cutoff, p a recall level, x any real >= 0."""

_VARIANT = re.compile(r"([^()@]+)\((\w+)=([^()]+)\)")


def names_of(families: Iterable[Family], known: Mapping[str, Name] | None = None) -> dict[str, Name]:
    """The names of the notation ``known`` and those of ``families`` (``Family.names`` and ``aliases``): a
    name written ``AP`` means its family without @, ``AP@k`` (``IPrec@p``: a recall level) with one; two
    families may share a name, one without @ and one with (``AP`` and ``AP@k``), with the same parameters.
    ValueError for a name that would mean two things."""
    names: dict[str, Name] = dict(known or {})
    variants: list[tuple[str, str]] = []
    for family in families:
        for spelling, alias in [(s, False) for s in family.names] + [(s, True) for s in family.aliases]:
            if "(" in spelling:  # another family's name with a parameter: SetP(relative=True)
                variants.append((spelling, family.name))
                continue
            text, at, mark = spelling.partition("@")
            if at and mark not in _AT_KINDS:
                raise ValueError(f"{family.name}: a name is written NAME, NAME@k, NAME@p or NAME@x, not {spelling!r}")
            before = names.get(text, Name(None, None, family.params, _AT_KINDS.get(mark, "cutoff"), alias))
            if before.params != family.params or before.alias != alias or at and before.at != _AT_KINDS[mark]:
                raise ValueError(f"{spelling!r} is written with other parameters by {before.family} and {family.name}")
            taken = before.family_at if at else before.family
            if taken not in (None, family.name):
                raise ValueError(f"{spelling!r} names two measure families: {taken} and {family.name}")
            names[text] = before._replace(family_at=family.name) if at else before._replace(family=family.name)
    for spelling, family_name in variants:
        found = _VARIANT.fullmatch(spelling)
        if found is None or found[1] not in names or found[2] not in names[found[1]].params:
            raise ValueError(f"{family_name}: {spelling!r} is not a name with one of its parameters")
        text, key = found[1], found[2]
        value = None if key == "rel" and found[3] == "k" else ast.literal_eval(found[3])  # rel=k: at any level
        names[text] = names[text]._replace(variants=(*names[text].variants, (key, value, family_name)))
    return names


NAMES: dict[str, Name] = {}
"""Every name of the notation, derived from the registry (see ``names_of``), a family registered later too."""


def _add_names(family: Family) -> Callable[[], None]:
    names = names_of([family], NAMES)

    def update() -> None:
        NAMES.clear()
        NAMES.update(names)

    return update


on_register(_add_names)

_IDENT = re.compile(r"(?:[A-Za-z_]|α)[A-Za-z0-9_]*")  # α: ir_measures' α_nDCG and α_DCG
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][+-]?[0-9]+)?")  # ASCII, as in C
_STRING = re.compile(r"'([^'\\]*)'|\"([^\"\\]*)\"")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, start: int, end: int, reason: str) -> MeasureSyntaxError:
        return MeasureSyntaxError(self.text, start, end, reason)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str, reason: str) -> None:
        if self.peek() != char:
            raise self.error(self.pos, self.pos + 1, reason)
        self.pos += 1

    def after_item(self, closer: str, reason: str) -> None:
        """After an item of a list that ``closer`` ends: past its ``,``, or at ``closer``; else ``reason``."""
        if self.peek() == ",":
            self.pos += 1
        elif self.peek() != closer:
            raise self.error(self.pos, self.pos + 1, reason)

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        self.skip()
        found = pattern.match(self.text, self.pos)
        if found:
            self.pos = found.end()
        return found

    def value(self) -> tuple[Any, int, int]:
        """A literal: number, 'string', True/False, {int: number, ...} or (number, ...); with its span."""
        self.skip()
        start = self.pos
        if self.peek() == "(":
            self.pos += 1
            reals: list[Any] = []
            while self.peek() != ")":
                found_number = self.match(_NUMBER)
                if not found_number:
                    raise self.error(self.pos, self.pos + 1, "expected a number in the list")
                reals.append(_number(found_number.group()))
                self.after_item(")", "expected ',' or ')' in the list")
            self.pos += 1
            return tuple(reals), start, self.pos
        if self.peek() == "{":
            self.pos += 1
            items: dict[int, int | float] = {}
            while self.peek() != "}":
                key, k_start, k_end = self.value()
                low, high = RELEVANCE_RANGE
                if not isinstance(key, int) or isinstance(key, bool) or not low <= key <= high:
                    raise self.error(k_start, k_end, f"gain keys must be integer judgments from {low} to {high}")
                self.expect(":", "expected ':' between a judgment and its gain")
                gain, g_start, g_end = self.value()
                if isinstance(gain, (bool, str, dict)) or not math.isfinite(gain):
                    raise self.error(g_start, g_end, "a gain must be a finite number")
                items[key] = gain
                self.after_item("}", "expected ',' or '}' in the gains")
            self.pos += 1
            return items, start, self.pos
        found = self.match(_STRING)
        if found:
            return (found.group(1) if found.group(1) is not None else found.group(2)), start, self.pos
        found = self.match(_NUMBER)
        if found:
            return _number(found.group()), start, self.pos
        found = self.match(_IDENT)
        if found and found.group() in ("True", "False"):
            return found.group() == "True", start, self.pos
        end = found.end() if found else start + 1
        raise self.error(start, end, "expected a value: a number, 'text', True, False or {judgment: gain}")


def _number(token: str) -> int | float:
    """A number token as written: an int without a point or exponent, else a float."""
    return int(token) if re.fullmatch(r"[+-]?[0-9]+", token) else float(token)


def _check(scanner: _Scanner, key: str, spec: Param, value: Any, start: int, end: int) -> Any:
    """Type-check one parameter value, normalised (ints to floats for real parameters), within its range
    (``Param.within``, the registry's table of ranges)."""
    checked = _typed(scanner, key, spec, value, start, end)
    problem = spec.refusal(key, checked)
    if problem:
        raise scanner.error(start, end, problem)
    return checked


def _typed(scanner: _Scanner, key: str, spec: Param, value: Any, start: int, end: int) -> Any:
    """One parameter value of the type its ``Param`` says, normalised (ints to floats for real parameters)."""
    kind = spec.kind
    if kind == "int":  # rel, a relevance level: negative levels would make unjudged documents relevant
        low, high = 0, RELEVANCE_RANGE[1]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise scanner.error(start, end, f"{key} must be an integer from {low} to {high}")
        return value
    if kind == "level":  # a judgment, negative ones too
        low, high = RELEVANCE_RANGE
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise scanner.error(start, end, f"{key} must be an integer judgment from {low} to {high}")
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise scanner.error(start, end, f"{key} must be a finite number")
        return float(value)
    if kind == "reals":
        if not isinstance(value, tuple) or not value or not all(math.isfinite(v) for v in value):
            raise scanner.error(start, end, f"{key} must be a list of finite numbers, e.g. (0.2,0.5)")
        if spec.size and len(value) != spec.size:
            raise scanner.error(start, end, f"{key} must be a list of {spec.size} numbers")
        return tuple(float(v) for v in value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise scanner.error(start, end, f"{key} must be True or False")
        return value
    if kind == "str":
        if not isinstance(value, str) or value not in spec.choices:
            allowed = ", ".join(repr(c) for c in spec.choices)
            raise scanner.error(start, end, f"{key} must be one of {allowed}")
        return value
    if not isinstance(value, dict):
        raise scanner.error(start, end, f"{key} must be a dict {{judgment: gain}}")
    # identity entries change nothing; dropping them gives one canonical value (as ir-measures does)
    return tuple(sorted((k, v) for k, v in value.items() if k != v))


def closest(name: str, known: Iterable[str], n: int = 1) -> list[str]:
    """The ``n`` known names closest to a misspelt one (``ndgc`` -> ``nDCG``), compared without case
    (``difflib``'s ratio, at least 0.6), closest first; a name equal but for case comes first."""
    import difflib

    by_lower: dict[str, str] = {}
    for candidate in known:
        by_lower.setdefault(candidate.lower(), candidate)
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.6)
    return [by_lower[match] for match in found]


def suggestion(text: str, start: int, end: int, known: Iterable[str], parses: Callable[[str], object]) -> str | None:
    """What to suggest for ``text`` whose name (``text[start:end]``) is unknown: the closest ``known`` name in
    its place, the rest kept (else the name alone), when that text parses (``parses`` raises
    ``MeasureSyntaxError`` if not) and is not ``text`` itself; None when no close name gives such a text. A
    suggestion is never one the parser would refuse."""
    if getattr(_SUGGESTING, "on", False):  # a candidate being tried: its own errors need no suggestion
        return None
    _SUGGESTING.on = True
    try:
        return _first_parsing(text, start, end, closest(text[start:end], known, n=5), parses)
    finally:
        _SUGGESTING.on = False


_SUGGESTING = threading.local()


def _first_parsing(text: str, start: int, end: int, names: list[str], parses: Callable[[str], object]) -> str | None:
    for candidate in [text[:start] + name + text[end:] for name in names] + [text[:start] + name for name in names]:
        if candidate == text:
            continue
        try:
            parses(candidate)
        except MeasureSyntaxError:
            continue
        return candidate
    return None


def parse_notation(text: str) -> Measure:
    """Parse one measure in ir-measures notation into a ``Measure`` value."""
    scanner = _Scanner(text)
    found = scanner.match(_IDENT)
    if not found:
        raise scanner.error(scanner.pos, scanner.pos + 1, "expected a measure name such as P, nDCG or AP")
    name = found.group()
    name_start, name_end = found.span()
    if name not in NAMES:
        close = suggestion(text, name_start, name_end, NAMES, parse_notation)
        hint = f" (did you mean {close!r}?)" if close else " (see: trec-rag-eval measures)"
        raise scanner.error(name_start, name_end, "unknown measure" + hint)
    spec = NAMES[name]
    rel: int | None = None
    params: dict[str, Any] = {}
    at: int | float | None = None
    keyword = _AT_KEYWORDS.get(spec.at) if spec.family_at is not None else None
    if scanner.peek() == "(":
        scanner.pos += 1
        while scanner.peek() != ")":
            key_match = scanner.match(_IDENT)
            if not key_match:
                raise scanner.error(scanner.pos, scanner.pos + 1, "expected a parameter name")
            key = key_match.group()
            if key not in spec.params and key != keyword:
                allowed = ", ".join(spec.params) or "none"
                raise scanner.error(*key_match.span(), f"{name} has no parameter {key!r} (allowed: {allowed})")
            if key == "rel" and rel is not None or key in params or key == keyword and at is not None:
                raise scanner.error(*key_match.span(), f"{key} is given twice")
            scanner.expect("=", f"expected '=' after {key}")
            value, start, end = scanner.value()
            if key == keyword:  # ir_measures' P(cutoff=10), IPrec(recall=0.5): the value after @
                at = _at_value(scanner, spec, value, start, end, key)
            elif key == "rel":
                rel = _check(scanner, key, spec.params[key], value, start, end)
            else:
                params[key] = _check(scanner, key, spec.params[key], value, start, end)
            scanner.after_item(")", "expected ',' or ')'")
        scanner.pos += 1
    if scanner.peek() == "@":
        scanner.pos += 1
        scanner.skip()
        start = scanner.pos
        found_at = scanner.match(_NUMBER)
        end = found_at.end() if found_at else len(text)
        if spec.family_at is None:
            raise scanner.error(start - 1, max(end, start), f"{name} takes no @ value")
        if at is not None:
            raise scanner.error(start - 1, max(end, start), f"the {keyword} is given twice ({keyword}= and @)")
        at = _at_value(scanner, spec, _number(found_at.group()) if found_at else None, start, end)
    if scanner.peek():
        raise scanner.error(scanner.pos, len(text), "unexpected text after the measure")
    if at is None and spec.family is None:
        what = {"recall": "a recall level, e.g. IPrec@0.5", "real": f"a value, e.g. {name}@0.5"}.get(
            spec.at, f"a cutoff, e.g. {name}@10")
        raise scanner.error(name_start, len(text), f"{name} needs {what}")
    missing = [key for key, param in spec.params.items() if param.required and key not in params]
    if missing:
        example = f"{name}({missing[0]}=3)" + (f"@{at}" if at is not None else "@10" if spec.family is None else "")
        raise scanner.error(name_start, len(text), f"{name} needs {' and '.join(missing)}, e.g. {example}")
    for key, param in spec.params.items():
        high = params.get(param.below, spec.params[param.below].default) if param.below else None
        if high is not None and params.get(key, param.default) >= high:
            raise scanner.error(name_start, len(text), f"{key} must be below {param.below}")
    family = spec.family_at if at is not None else spec.family
    assert family is not None
    # ir-measures spellings that name another family: SetP(relative=True), NumRet(rel=k) (Family.aliases)
    for key, value, variant in spec.variants:
        given = rel if key == "rel" else params.pop(key, None)
        if given is not None if value is None else given == value:
            family = variant
    typed = tuple(sorted((k, v) for k, v in params.items() if v != spec.params[k].default and v != ()))
    # the parameter trec_eval's list gives (Family.list_first) prints in the trec_eval name, as -m writes it:
    # SetF(beta=2.0) is set_F_2.0, as `-m set_F.2.0` is; relstring@3 is relstring_3
    first = REGISTERED[family].list_first
    text_param = repr(params[first]) if first is not None and first in dict(typed) else None
    if first == "@" and at is not None:
        text_param = str(at)
    list_param = REGISTERED[family].list_param
    if first is None and list_param in dict(typed):  # Utility(coefficients=(2,-1,0,0)) is utility_2.0,-1.0,0.0,0.0
        text_param = ",".join(repr(value) for value in dict(typed)[list_param])
    return Measure(family, cutoff=at, params=typed, rel=rel, text=text_param, alias=name if spec.alias else None)


_AT_KEYWORDS = {"cutoff": "cutoff", "recall": "recall"}
"""The parameter ir_measures lets the value after @ be given as, by what that value is: ``P(cutoff=10)`` is
``P@10``, ``IPrec(recall=0.5)`` is ``IPrec@0.5`` (its measures' ``AT_PARAM``)."""


def _at_value(scanner: _Scanner, spec: Name, value: Any, start: int, end: int, keyword: str = "") -> int | float:
    """The value after @ (or given as ``keyword=``), checked for what the name takes there."""
    what = keyword or {"recall": "the recall level after @", "real": "the value after @"}.get(
        spec.at, "the cutoff after @")
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if spec.at == "recall":
        if number is None or not 0.0 <= number <= 1.0:
            raise scanner.error(start, end, f"{what} must be a number in [0, 1]")
        return float(number)
    if spec.at == "real":
        if number is None or not 0.0 <= number < math.inf:
            raise scanner.error(start, end, f"{what} must be a finite number >= 0")
        return float(number)
    if not isinstance(number, int) or number <= 0:
        raise scanner.error(start, end, f"{what} must be a positive integer")
    if number > CUTOFF_MAX:
        raise scanner.error(start, end, f"{what} must be a positive integer (at most {CUTOFF_MAX})")
    return number


def split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "({"
        depth -= char in ")}"
        if char == " " and depth == 0:
            if current:
                parts.append(current)
            current = ""
        else:
            current += char
    if current:
        parts.append(current)
    return parts
