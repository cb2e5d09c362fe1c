"""pytrec_eval's interface, computed by trec-rag-eval: write ``from trec_rag_eval import pytrec_eval`` where the
code said ``import pytrec_eval``, and nothing else changes.

The same names (``RelevanceEvaluator``, ``supported_measures``, ``supported_nicknames``, ``parse_qrel``,
``parse_run``, ``compute_aggregated_measure``), the same measure names and nicknames (``"map"``, ``"ndcg_cut.10"``,
``"ndcg_cut_10"``, ``"P.5,10"``, ``"official"``, ``"all_trec"``), and the same dict back, with the same keys
(``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``, ``utility``) and the same values. pytrec_eval embeds trec_eval
9 (the terrier fork 0.5.11 bundles usnistgov/trec_eval at de6a29f), so its conventions are the ones applied here:
scores rounded to 32-bit floats before ranking, iprec_at_recall and 11pt_avg cut at floor(p*R + 0.9)
(``trec_eval_9=True``), and only the queries of both the judgments and the run (``queries="intersection"``), in
the run's order; a query judged with an empty dict counts as not judged, as pytrec_eval drops it. Per query, as
pytrec_eval hands them: ``gm_map`` and ``gm_bpref`` are the logarithms of AP and bpref floored at 1e-5 (their
means are the logarithms of the geometric means), ``num_q`` is 1, and ``runid`` and ``relstring`` are 0.

The judgments are read once, when the evaluator is made (a ``Qrels``), and each run is evaluated through the
facade (``trec_rag_eval.api.evaluate_many``), as ``evaluate`` evaluates it. What pytrec_eval refuses is refused
with the same exception type (``TypeError`` for a value of the wrong type, ``ValueError`` for an unknown measure),
naming the query, the document or the measure. What pytrec_eval would crash on or silently get wrong is refused
too: a cutoff of 0 or given twice (``"P.5,05"``), utility without its four coefficients, a gain list
(``"ndcg.1"``), a relevance level below 1 (pytrec_eval's C reads -1 as 4294967295), a NaN score (its ranking is
then undefined) or an empty document id.
"""

from __future__ import annotations

import collections
import functools
import re
import warnings
from array import array
from collections.abc import Iterable, Mapping
from itertools import chain
from numbers import Integral
from operator import countOf
from typing import Any

import numpy as np

from trec_rag_eval import api
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.errors import InputFormatError, MeasureSyntaxError, TrecRagEvalError, TrecRagEvalWarning
from trec_rag_eval.evaluation.evaluate import GM_FLOOR
from trec_rag_eval.measures.model import Measure, on_register
from trec_rag_eval.measures.registry import FAMILIES, NICKNAMES
from trec_rag_eval.measures.trec_syntax import parse_trec_measures
from trec_rag_eval.service.inputs import as_qrels
from trec_rag_eval.syntax import INT32
from trec_rag_eval.tables import Qrels
from trec_rag_eval.tables.bulk import joined_strings

__all__ = ["parse_run", "parse_qrel", "supported_measures", "supported_nicknames", "RelevanceEvaluator",
           "compute_aggregated_measure"]

_ADDED_BY_TREC_EVAL_10 = ("unj", "rbp", "rbp_resid")
"""The measures trec_eval 10 added to ``all_trec``: trec_eval 9, and so pytrec_eval, has none of them."""

supported_measures: set[str] = {name for name in NICKNAMES["all_trec"] if name not in _ADDED_BY_TREC_EVAL_10}
"""trec_eval 9's ``all_trec`` measures: the measures pytrec_eval computes."""

_SUPPORTED = frozenset(supported_measures)
"""The same, taken at import, against which measure names are read: the listing above is the caller's to read, and
changing it changes no evaluator (a set of names is read once per process: it must mean the same every time)."""
_LONGEST_FIRST = tuple(sorted(_SUPPORTED, key=len, reverse=True))

supported_nicknames: dict[str, set[str]] = {
    "official": set(NICKNAMES["official"]),
    "set": set(NICKNAMES["set"]),
    "all_trec": set(supported_measures),
    # trec_eval's nicknames of its preference and judgment-group measures: pytrec_eval lists them, but reads
    # judgments in the qrels format only, so their measures are unsupported there, and here
    "all_prefs": {"runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                  "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
                  "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
                  "prefs_avgjg_imp"},
    "prefs": {"runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"},
    "qrels_jg": {"runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"},
}
"""trec_eval 9's nicknames, each with the measures it stands for."""

# the parameters pytrec_eval reads after a measure's name and '.' or '_': numbers with a point or not, separated by
# commas, read from the start of the rest (ndcg_cut.10x is ndcg_cut.10); nothing else, so no gain list, no sign
_PARAMETERS = re.compile(r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)")


def parse_run(f_run: Iterable[str]) -> collections.defaultdict[str, dict[str, float]]:
    """``{query_id: {doc_id: score}}`` from the lines of a TREC run (``query_id Q0 doc_id rank score run_tag``,
    any whitespace between), as pytrec_eval reads them. A malformed line or a document listed twice for one query
    is a ``ValueError`` naming its line (pytrec_eval: a bare assertion or an unpacking error)."""
    run: collections.defaultdict[str, dict[str, float]] = collections.defaultdict(dict)
    lines: dict[str, array[int]] = {}  # each query's line numbers, in its documents' order: to cite a repeat
    for number, line in enumerate(f_run, start=1):
        fields = line.split()
        if len(fields) != 6:
            raise ValueError(f"line {number}: expected 6 columns (query_id Q0 doc_id rank score run_tag), got "
                             f"{len(fields)}: {line.strip()!r}")
        query_id, _, doc_id, _, score, _ = fields
        try:
            value = float(score)
        except ValueError:
            raise ValueError(f"line {number}: the score {score!r} is not a number: {line.strip()!r}") from None
        _add(run[query_id], lines.setdefault(query_id, array("q")), doc_id, value, number, "listed")
    return run


def parse_qrel(f_qrel: Iterable[str]) -> collections.defaultdict[str, dict[str, int]]:
    """``{query_id: {doc_id: relevance}}`` from the lines of TREC qrels (``query_id iteration doc_id relevance``),
    as pytrec_eval reads them. A malformed line or a document judged twice for one query is a ``ValueError``
    naming its line."""
    qrel: collections.defaultdict[str, dict[str, int]] = collections.defaultdict(dict)
    lines: dict[str, array[int]] = {}
    for number, line in enumerate(f_qrel, start=1):
        fields = line.split()
        if len(fields) != 4:
            raise ValueError(f"line {number}: expected 4 columns (query_id iteration doc_id relevance), got "
                             f"{len(fields)}: {line.strip()!r}")
        query_id, _, doc_id, relevance = fields
        try:
            value = int(relevance)
        except ValueError:
            raise ValueError(f"line {number}: the relevance {relevance!r} is not an integer: "
                             f"{line.strip()!r}") from None
        _add(qrel[query_id], lines.setdefault(query_id, array("q")), doc_id, value, number, "judged")
    return qrel


def _add(docs: dict[str, Any], lines: array[int], doc_id: str, value: Any, number: int, verb: str) -> None:
    """``docs[doc_id] = value`` read at line ``number``; a document already there is refused with both lines."""
    if doc_id in docs:
        first = lines[list(docs).index(doc_id)]
        raise ValueError(f"line {number}: document {doc_id!r} {verb} twice for its query (first at line {first})")
    docs[doc_id] = value
    lines.append(number)


def compute_aggregated_measure(measure: str, values: list[float]) -> float:
    """One measure over queries from its per-query values, as pytrec_eval aggregates them: a sum for ``num_*``, the
    exponential of the mean for ``gm_*`` (whose per-query values are logarithms), else the mean."""
    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


class RelevanceEvaluator:
    """Evaluate runs against the judgments ``query_relevance`` (``{query_id: {doc_id: relevance}}``, integer
    relevance) with ``measures`` (names and nicknames, in any iterable): pytrec_eval's ``RelevanceEvaluator``.

    ``relevance_level``: a judgment at or above it is relevant (an integer >= 1). ``judged_docs_only_flag``:
    drop the retrieved documents without a judgment first (trec_eval -J). Measure names are read as pytrec_eval
    reads them: a nickname stands for its measures; ``meas.p1,p2`` and ``meas_p1,p2`` give parameters (numbers
    only), joined over every name of one measure (``{"P.5", "P_10"}`` is ``P.5,10``), and a measure asked with
    parameters is computed at those alone (``{"P", "P.5"}`` is ``P_5`` only); a measure without parameters
    ignores them (``map.5`` is ``map``). An unknown name is a ``ValueError`` ``unsupported measure NAME``.
    """

    def __init__(self, query_relevance: Mapping[str, Mapping[str, int]], measures: Iterable[str],
                 relevance_level: int = 1, judged_docs_only_flag: bool = False) -> None:
        self._measures, self._keys = _resolve(measures)
        level = _c_int(relevance_level, "relevance_level")
        if level < 1:
            raise TypeError(f"Argument relevance_level should be positive: got {relevance_level!r}")
        judged_only = _c_int(judged_docs_only_flag, "judged_docs_only_flag") != 0
        self._settings = Settings(relevance_level=level, judged_only=judged_only, queries="intersection",
                                  trec_eval_9=True)
        self._judgments = _judgments(query_relevance)
        self._qrels = _qrels(self._judgments) if self._judgments else None

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` for the queries of ``scores`` (``{query_id: {doc_id: score}}``) that
        are judged, in the order of ``scores``; an empty run gives ``{}``."""
        if not scores:
            return {}
        if not isinstance(scores, dict):
            raise TypeError(f"Argument object scores should be of type dictionary: got {type(scores).__name__}")
        wanted: list[str] = []
        ranked: dict[str, Any] = {}
        for query_id, docs in scores.items():
            if not isinstance(query_id, str):
                raise TypeError(f"the run's query id {query_id!r} is a {type(query_id).__name__}: expected a string")
            if not isinstance(docs, dict):
                raise TypeError(f"query {query_id!r}: expected a dict {{doc_id: score}}, got {type(docs).__name__}")
            if query_id in self._judgments:
                wanted.append(query_id)
                if docs:
                    ranked[query_id] = docs
        if not wanted:
            return {}
        if not self._measures:
            return {query_id: {} for query_id in wanted}
        found = self._values(ranked, self._settings) if ranked else {}
        if len(ranked) < len(wanted):
            found.update(self._without_documents([query_id for query_id in wanted if query_id not in ranked]))
        return {query_id: found[query_id] for query_id in wanted}

    def _without_documents(self, query_ids: list[str]) -> dict[str, dict[str, float]]:
        """The values of queries given no document, as trec_eval 9 computes them on an empty ranking (a
        parameterised utility is (c - d) R, iprec_at_recall_0.00 and 11pt_avg are NaN), not as trec_eval -c
        scores a judged query missing from the run: each is given one document it has no judgment of, which
        judged_only removes before anything is computed."""
        run = {query_id: {_unjudged(self._judgments[query_id]): 0.0} for query_id in query_ids}
        with warnings.catch_warnings():  # that nothing is left of the run is what is asked here, not a mistake
            warnings.simplefilter("ignore", TrecRagEvalWarning)
            return self._values(run, self._settings.but(judged_only=True))

    def _values(self, run: dict[str, Any], settings: Settings) -> dict[str, dict[str, float]]:
        """The values of the queries of ``run``, keyed as pytrec_eval keys them."""
        [outcome] = api.evaluate_many(self._qrels, [run], self._measures, settings)
        if outcome.error is not None:
            raise _python_error(outcome.error, TypeError) from None
        evaluation = outcome.evaluation
        assert evaluation is not None
        count = len(evaluation.query_ids)
        columns = [_per_query(measure, evaluation.values, count) for measure in self._measures]
        keys = self._keys
        return {query_id: dict(zip(keys, row, strict=True))
                for query_id, row in zip(evaluation.query_ids, zip(*columns, strict=True), strict=True)}


def _per_query(measure: Measure, values: Mapping[Any, Any], count: int) -> list[float]:
    """A measure's per-query values as pytrec_eval hands them (floats): the logarithm of the floored value for
    the geometric means (trec_eval 9 computes gm_map that way per query), 0 for the text measures (runid,
    relstring: trec_eval keeps no number for them)."""
    family = measure.spec
    if family.value_type == "str":
        return [0.0] * count
    column = np.asarray(values[measure], dtype=np.float64)
    if family.aggregate == "gmean":
        column = np.log(np.maximum(column, GM_FLOOR))
    return column.tolist()  # type: ignore[no-any-return]


def _resolve(measures: Iterable[str]) -> tuple[list[Measure], list[str]]:
    """The measures asked for (pytrec_eval's reading: see ``RelevanceEvaluator``), in trec_eval's order, and the
    key of each in the results: fresh lists, the caller's to keep."""
    if isinstance(measures, str):  # pytrec_eval reads each character as a name: 'map' is unsupported measure 'm'
        raise ValueError(f"unsupported measure {measures[0] if measures else measures!r}: measures is the string "
                         f"{measures!r}, not a set of names such as {{{measures!r}}}")
    names: set[str] = set()
    plain = True
    for name in measures:
        if not isinstance(name, str):
            raise TypeError(f"a measure name must be a string, got {type(name).__name__}: {name!r}")
        plain = plain and type(name) is str
        names.update(supported_nicknames.get(name, {name}))  # read at each call, as pytrec_eval reads them
    # a subclass of str may hash or compare as it likes: its names are read every time, never kept
    chosen, keys = _read_once(frozenset(names)) if plain else _read(names)
    return list(chosen), list(keys)


@functools.lru_cache(maxsize=256)
def _read_once(names: frozenset[str]) -> tuple[tuple[Measure, ...], tuple[str, ...]]:
    """``_read`` of one set of names, once per process (a training loop or a sweep asks for the same set at every
    call; reading it was a fifth of a call): immutable, so no caller can change what the next one gets. A
    refused set is not kept: refused again, with the same message, each time."""
    return _read(names)


on_register(lambda family: _read_once.cache_clear)  # a new family may change what a name means


def _read(names: set[str] | frozenset[str]) -> tuple[tuple[Measure, ...], tuple[str, ...]]:
    """The measures the measure names ``names`` (nicknames expanded) ask for, and their keys."""
    parameters: dict[str, set[str]] = {}
    for name in sorted(names):
        if name in _SUPPORTED:
            parameters.setdefault(name, set())
            continue
        family, typed = _with_parameters(name)
        if family is None:
            raise ValueError(f"unsupported measure {name}")
        parameters.setdefault(family, set()).update(typed.split(","))
    requests = []
    for family, given in parameters.items():
        # a measure without parameters ignores those given (trec_eval does); the others are read as trec_eval's -m
        request = family if not given or FAMILIES[family].kind == "none" else f"{family}.{','.join(sorted(given))}"
        try:
            parse_trec_measures([request])
        except MeasureSyntaxError as err:
            raise ValueError(f"unsupported measure {request}: {err.reason}") from None
        requests.append(request)
    chosen = tuple(parse_trec_measures(requests))
    return chosen, tuple(_key(measure) for measure in chosen)


def _with_parameters(name: str) -> tuple[str | None, str]:
    """The measure ``name`` names with parameters (``ndcg_cut_10``, ``P.5,10``) and its parameters as typed; (None,
    "") when it names none."""
    for family in _LONGEST_FIRST:  # ndcg_cut_10 is ndcg_cut's, not ndcg's
        found = _PARAMETERS.match(name, len(family)) if name.startswith(family) else None
        if found is not None:
            return family, found[1]
    return None, ""


def _key(measure: Measure) -> str:
    """The name pytrec_eval keys a measure's values by: trec_eval's, with the cutoff for the cutoff measures
    (``P_5``, ``iprec_at_recall_0.10``), without the parameters for the others (``utility``, ``set_F``)."""
    family = measure.spec
    if family.kind in ("int_cutoffs", "real_cutoffs"):
        return measure.trec_name
    return family.name


def _unjudged(judgments: dict[str, int]) -> str:
    """A document id without a judgment in ``judgments``."""
    doc_id = "unjudged"
    while doc_id in judgments:
        doc_id += "_"
    return doc_id


def _c_int(value: Any, name: str) -> int:
    """``value`` as the C int pytrec_eval reads it into: an integer (True is 1) within 32 bits; else TypeError."""
    if not isinstance(value, Integral):
        raise TypeError(f"Argument {name} should be an integer: got {type(value).__name__} {value!r}")
    number = int(value)
    if not INT32[0] <= number <= INT32[1]:
        raise TypeError(f"Argument {name} should be an integer from {INT32[0]} to {INT32[1]}: got {number}")
    return number


def _judgments(query_relevance: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """The judged queries of ``query_relevance``, checked as pytrec_eval checks them (string ids, a dict per
    query, integer relevance; TypeError otherwise), without the queries judged with an empty dict. The documents'
    ids and relevance of every query are checked at once, by C-level passes; a query's own, row by row
    (``_checked``), only when those find another type: to make an integer of it, or to name it."""
    judged: dict[str, dict[str, int]] = {}
    for query_id, docs in query_relevance.items():
        if len(docs) == 0:  # pytrec_eval drops them: they are judged nowhere
            continue
        if not isinstance(query_id, str):
            raise TypeError(f"the judgments' query id {query_id!r} is a {type(query_id).__name__}: expected a string")
        if not isinstance(docs, dict):
            raise TypeError(f"judgments of query {query_id!r}: expected a dict {{doc_id: relevance}}, got "
                            f"{type(docs).__name__}")
        judged[query_id] = docs
    relevance = list(chain.from_iterable(map(dict.values, judged.values())))
    doc_ids = list(chain.from_iterable(judged.values()))
    if countOf(map(type, relevance), int) == len(relevance) and joined_strings(doc_ids) is not None:
        return judged
    for query_id, docs in judged.items():
        if countOf(map(type, docs.values()), int) != len(docs) or joined_strings(docs) is None:
            judged[query_id] = _checked(query_id, docs)
    return judged


def _checked(query_id: str, docs: dict[Any, Any]) -> dict[str, int]:
    """One query's judgments with other types than ``str`` ids and ``int`` relevance: integer ones (True, numpy's)
    as ints; TypeError for a document id that is not a string or a relevance that is not an integer."""
    out: dict[str, int] = {}
    for doc_id, relevance in docs.items():
        if not isinstance(doc_id, str):
            raise TypeError(f"judgments of query {query_id!r}: the document id {doc_id!r} is a "
                            f"{type(doc_id).__name__}: expected a string")
        if not isinstance(relevance, Integral):
            raise TypeError(f"judgments of query {query_id!r}, document {doc_id!r}: expected relevance to be "
                            f"integer, got {type(relevance).__name__} {relevance!r}")
        out[doc_id] = int(relevance)
    return out


def _qrels(judgments: dict[str, dict[str, int]]) -> Qrels:
    """The ``Qrels`` of checked judgments, read as ``evaluate`` reads a dict (``service.inputs.as_qrels``: the same
    judgments again, an evaluator made per call with the same dict, are read once); a value the library refuses (out
    of range, an empty id) is a ValueError."""
    try:
        return as_qrels(judgments)
    except InputFormatError as err:
        raise _python_error(err, ValueError) from None


def _python_error(err: TrecRagEvalError, kind: type[Exception]) -> Exception:
    """The library's error as the exception pytrec_eval raises for that input (``kind``), with its message."""
    if isinstance(err, InputFormatError):
        return kind(str(err))
    return err
