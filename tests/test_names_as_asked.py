"""Results keyed as the user asked, suggestions for misspelt names, typed results, progress on long
comparisons."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from conftest import invoke

import trec_rag_eval as tre
from trec_rag_eval.errors import MeasureSyntaxError

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
RUN = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 1.0}}
# by hand: q1 ranks b, a (a relevant at 2): AP 1/2, hit in top 5 1; q2: c at 1: AP 1, hit 1


def test_keys_are_the_names_asked_and_every_alias_still_finds_them():
    result = tre.evaluate(QRELS, RUN, ["map@100", "hit_rate@5", "ndcg@10", "RR"])
    assert list(result.summary) == ["map@100", "hit_rate@5", "ndcg@10", "RR"]
    assert result.summary["map@100"] == result.summary["MAP@100"] == result.summary["AP@100"] == 0.75
    assert result.summary["hit_rate@5"] == result.summary["HitRate@5"] == result.summary["Success@5"] == 1.0
    assert result.summary["nDCG@10"] == result.summary["ndcg_cut.10"] == result.summary["ndcg@10"]
    assert result.summary["MRR"] == result.summary["recip_rank"] == 0.75
    assert list(result.per_query["q1"]) == ["map@100", "hit_rate@5", "ndcg@10", "RR"]
    assert set(result.to_pandas()["measure"]) == {"map@100", "hit_rate@5", "ndcg@10", "RR"}
    np.testing.assert_array_equal(result.values["MAP@100"], [0.5, 1.0])
    # the same in a comparison and in the harness
    comparison = tre.compare(QRELS, {"A": RUN, "B": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}}, ["map@100"])
    assert comparison.measures == ["map@100"] and comparison.summary["B"]["AP@100"] == 1.0
    report = tre.Evaluator(lambda q, k: ["b", "a"] if q == "x" else ["c"]).evaluate(
        [{"id": "q1", "query": "x", "relevant": ["a"]}, {"id": "q2", "query": "y", "relevant": ["c"]}],
        measures=["hit_rate@5", "map@100"])
    assert list(report.summary) == ["hit_rate@5", "map@100"] and report.summary["MAP@100"] == 0.75


def test_trec_eval_requests_keep_trec_eval_s_measures():
    # "P.5,10" asks for two measures: they keep their names (and the trec_eval output is unchanged)
    assert list(tre.evaluate(QRELS, RUN, ["P.5,10"]).summary) == ["P@5", "P@10"]


def test_pytrec_eval_s_keys_ask_for_their_measures_in_python_and_on_the_command_line(tmp_path):
    # by hand: AP@100 is 0.75 (above), P@5 is (1 + 1) / 5 / 2 = 0.2
    result = tre.evaluate(QRELS, RUN, ["map_cut_100", "P_5"])
    assert dict(result.summary) == {"map_cut_100": 0.75, "P_5": 0.2}
    assert result.summary["AP@100"] == 0.75 and result.summary["P.5"] == 0.2
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 2 1.0 r\nq1 Q0 b 1 2.0 r\nq2 Q0 c 1 1.0 r\n")
    printed = invoke("-m", "map_cut_100", "-m", "P_5", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"))
    asked = invoke("-m", "map_cut.100", "-m", "P.5", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"))
    assert printed.exit_code == 0 and sorted(printed.stdout.splitlines()) == sorted(asked.stdout.splitlines())
    assert "map_cut_100           \tall\t0.7500" in printed.stdout


@pytest.mark.parametrize(("typed", "suggested"), [
    ("ndgc@10", "'nDCG@10'"), ("mapp", "'MAP'"), ("Recal@5", "'Recall@5'"), ("ndcg_cutt.10", "'ndcg_cut.10'"),
    ("recip_rnk", "'recip_rank'"), ("Sucess@3", "'Success@3'"), ("mrrr", "'MRR'")])
def test_a_misspelt_name_gets_the_closest_one(typed, suggested, tmp_path):
    with pytest.raises(MeasureSyntaxError) as info:
        tre.evaluate(QRELS, RUN, typed)
    assert f"unknown measure (did you mean {suggested}?)" in str(info.value)
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.0 r\n")
    result = invoke("-m", typed, str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"))
    assert result.exit_code == 2 and f"did you mean {suggested}?" in result.stderr


def test_nothing_close_says_where_the_names_are():
    with pytest.raises(MeasureSyntaxError, match=r"unknown measure \(see: trec-rag-eval measures\)"):
        tre.evaluate(QRELS, RUN, "zzzz@3")


def test_results_are_typed():
    from trec_rag_eval.compare.comparison import Comparison
    from trec_rag_eval.engine.harness import EngineEvaluation
    from trec_rag_eval.evaluation.evaluate import Evaluation

    hints = typing.get_type_hints(Evaluation)
    assert "ByMeasure[float]" in str(hints["summary"]) and "ndarray" in str(hints["values"])
    for owner in (Evaluation, EngineEvaluation, Comparison):
        assert owner.to_pandas.__annotations__["return"] == "pd.DataFrame"
        assert owner.to_polars.__annotations__["return"] == "pl.DataFrame"
    assert EngineEvaluation.summary.fget.__annotations__["return"] == "ByMeasure[float]"
    from trec_rag_eval.measures.by_measure import ByMeasure
    assert issubclass(ByMeasure, typing.Mapping)


def test_long_comparisons_show_their_progress(capsys):
    runs = {f"r{i}": {"q1": {"a": float(i % 3), "b": 1.0}, "q2": {"c": 1.0}} for i in range(10)}
    tre.compare(QRELS, runs, "P@1")
    err = capsys.readouterr().err
    assert "Evaluating" in err and "10/10" in err and "Testing" in err and "9/9" in err
    tre.compare(QRELS, dict(list(runs.items())[:3]), "P@1")
    assert "Testing" not in capsys.readouterr().err        # a short one stays quiet
    tre.compare(QRELS, dict(list(runs.items())[:3]), "P@1", progress=True)
    assert "2/2" in capsys.readouterr().err


def test_a_measure_is_its_fields_whatever_is_read_from_them():
    """What is derived from a measure's fields (its family, its parameters by name, its name as shown) is
    fixed when it is made and read as attributes; equality, hashing, repr and pickling stay those of the
    fields: MAP@100 and AP@100 are one measure, and an unpickled measure finds the registered family again,
    not a copy of it."""
    import pickle

    from trec_rag_eval.measures.model import REGISTERED, Measure

    shown_as_map, plain = tre.parse_measure("MAP@100"), tre.parse_measure("AP@100")
    assert shown_as_map == plain and hash(shown_as_map) == hash(plain)
    assert (str(shown_as_map), str(plain)) == ("MAP@100", "AP@100")
    assert shown_as_map.spec is REGISTERED["map_cut"]
    assert repr(plain) == ("Measure(family='map_cut', cutoff=100, params=(), text=None, rel=None, alias=None, "
                           "asked=None)")
    back = pickle.loads(pickle.dumps(shown_as_map))
    assert back == shown_as_map and str(back) == "MAP@100" and back.spec is REGISTERED["map_cut"]
    gains = Measure("ndcg_cut", 10, params=(("gains", ((0, 0.0), (1, 3.0))),))
    assert gains.named == {"gains": ((0, 0.0), (1, 3.0))} and gains.param("gains") == ((0, 0.0), (1, 3.0))
    assert gains.param("dcg", "log2") == "log2"


def test_a_measure_is_hashed_once_when_it_is_made_as_its_compared_fields():
    """Results are looked up by Measure many times per evaluation: its hash is the hash of the fields equality
    compares (family, cutoff, params, text, rel; not alias or asked), taken once when the measure is made, and
    the same after pickling, copying or ``replace``; a parameter value that cannot be hashed is refused when the
    measure is hashed, as a dataclass's own hash refuses it."""
    import copy
    import pickle
    from dataclasses import replace

    from trec_rag_eval.measures.model import Measure

    class Counted:
        hashed = 0

        def __hash__(self) -> int:
            Counted.hashed += 1
            return 7

    measure = Measure("ndcg_cut", 10, params=(("gains", Counted()),))
    made = Counted.hashed
    assert [hash(measure) for _ in range(3)] == [hash(("ndcg_cut", 10, (("gains", measure.params[0][1]),),
                                                         None, None))] * 3
    assert Counted.hashed == made + 1  # the hash of the fields above: the measure's own was not taken again
    asked = tre.parse_measure("MAP@100")
    for same in (tre.parse_measure("AP@100"), Measure("map_cut", 100.0), replace(asked, asked="map@100"),
                 pickle.loads(pickle.dumps(asked)), copy.copy(asked), copy.deepcopy(asked)):
        assert same == asked and hash(same) == hash(asked) == hash(("map_cut", 100, (), None, None))
    assert hash(replace(asked, text="100")) == hash(("map_cut", 100, (), "100", None))
    unhashable = Measure("ndcg_cut", 10, params=(("gains", [1]),))
    with pytest.raises(TypeError, match="unhashable type: 'list'"):
        hash(unhashable)


def test_values_keyed_by_measure_are_named_as_pairs_of_them_are():
    """``ByMeasure.of(measures, values)`` is the mapping made of the pairs (measure, value) of the measures that
    have a value, in the order of ``measures``: each named as shown, found by any name, the first of two equal
    measures (MAP and AP) finding both by its name."""
    from trec_rag_eval.measures.by_measure import ByMeasure

    measures = [tre.parse_measure(name) for name in ("nDCG@10", "MAP", "P@5", "AP", "runid")]
    values = {measures[2]: 0.25, measures[0]: 0.5, measures[1]: 0.75}
    made = ByMeasure.of(measures, values)
    pairs = ByMeasure((m, values[m]) for m in measures if m in values)
    assert list(made.items()) == list(pairs.items()) == [("nDCG@10", 0.5), ("MAP", 0.75), ("P@5", 0.25), ("AP", 0.75)]
    assert made.measures() == pairs.measures() == measures[:3]
    for key in ("ndcg_cut.10", "map", "AP", "P.5", measures[3]):
        assert made[key] == pairs[key]
    assert "runid" not in made and ByMeasure.of(measures, made) is made


def test_a_measure_of_no_registered_family_is_refused_when_it_is_made():
    """``Measure`` takes a registered family's name (trec_eval's); another one is refused where it is made,
    saying what was expected, not a bare KeyError from the registry."""
    from trec_rag_eval.measures.model import Measure

    with pytest.raises(ValueError, match=r"^unknown measure family 'bogus': a Measure's family is the registered "
                                         r"name of one \(trec_eval's: 'map', 'ndcg_cut'; see: trec-rag-eval "
                                         r"measures\)$"):
        Measure("bogus")
    assert str(Measure("ndcg_cut", 10)) == "nDCG@10"


def test_what_a_measure_derives_is_no_field_and_cannot_be_changed():
    """A measure's family, parameters by name and name as shown are read from it, not fields of the value:
    ``dataclasses.fields``, ``asdict`` and ``astuple`` give the seven fields it is made of, as before they were
    kept on it (``asdict`` copied the whole registered family into the dict). Its parameters by name, which the
    kernels read, cannot be changed behind its equality and hash."""
    import dataclasses

    measure = tre.parse_measure("RBP(p=0.8)@10")
    made_of = ("family", "cutoff", "params", "text", "rel", "alias", "asked")
    assert tuple(f.name for f in dataclasses.fields(measure)) == made_of
    assert dataclasses.asdict(measure) == {"family": "rbp", "cutoff": 10, "params": (("p", 0.8),), "text": None,
                                           "rel": None, "alias": None, "asked": None}
    assert dataclasses.astuple(measure) == ("rbp", 10, (("p", 0.8),), None, None, None, None)
    with pytest.raises(TypeError):
        measure.named["p"] = 0.5  # type: ignore[index]
    assert measure.param("p") == 0.8 and str(measure) == "RBP(p=0.8)@10"
