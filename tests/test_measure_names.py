"""Every measure's name reads back as the same measure, in every family and parameter form (trec_eval's
requests too), reads well, and an unknown name's suggestion is never the text typed nor one refused."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from trec_rag_eval.errors import MeasureSyntaxError
from trec_rag_eval.measures.ir_notation import NAMES, parse_notation
from trec_rag_eval.measures.registry import FAMILIES, NICKNAMES
from trec_rag_eval.measures.requests import RANX_NAMES, parse_measures
from trec_rag_eval.measures.trec_syntax import is_trec_syntax, parse_trec_measures


def _trec_requests(name: str) -> list[str]:
    """trec_eval -m requests of one family: bare, and with each kind of parameter list it takes."""
    family = FAMILIES[name]
    params = {
        "none": [],
        "int_cutoffs": ["1,7", "20.4"],
        "real_cutoffs": ["0.25,.5", "1"] + (["2.0,0.2"] if name == "Rprec_mult" else []),
        "gain_pairs": ["1=3,2=9", "p=0.8", "1=2,p=0.5", "p=0.9", "0=1,p=0.95,x=3"],
    }.get(family.kind)
    if params is None:  # real_list
        if family.list_values:
            params = [",".join(["2", "-1", "0.5", "3"][: len(family.list_values)]),
                      ",".join(str(v) for v in family.defaults)]
        elif family.list_first is not None:
            params = ["3", "2.5", "1", "1,4"]
        else:
            params = ["0.2,.5", "1", ",".join(str(v) for v in family.defaults)]
    return [name] + [f"{name}.{p}" for p in params]


def _needs_the_notation(name: str) -> bool:
    """Whether the family's measures need a parameter only our notation gives (C/W/L's ``max_rel``)."""
    return name in NAMES and any(param.required for param in NAMES[name].params.values())


# every family that trec_eval's syntax can ask for (C/W/L's need max_rel, which only the notation gives)
TREC_REQUESTS = [request for name in FAMILIES if not _needs_the_notation(name)
                 for request in _trec_requests(name) if is_trec_syntax(request)]


@pytest.mark.parametrize("request_text", TREC_REQUESTS)
def test_every_trec_request_is_named_as_it_reads_back(request_text: str) -> None:
    for measure in parse_trec_measures([request_text]):
        again = parse_notation(str(measure))
        # trec_eval's name keeps the parameters as typed (utility_2,-1,0.5,3; set_F_2.5): the only difference
        assert replace(again, text=measure.text) == measure, (request_text, str(measure))
        assert str(again) == str(measure)
        assert parse_measures([str(measure)]) == [again]


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_name_of_the_notation_reads_back(name: str) -> None:
    spec = NAMES[name]
    params = [f"{k}=3" if p.kind == "level" and k == "max_rel" else None for k, p in spec.params.items()]
    text = name + (f"({','.join(p for p in params if p)})" if any(params) else "")
    texts = [text] if spec.family is not None else []
    if spec.family_at is not None:
        texts.append(text + {"cutoff": "@4", "recall": "@0.5", "real": "@1.5"}[spec.at])
    for typed in texts:
        measure = parse_notation(typed)
        assert parse_notation(str(measure)) == measure, typed
        assert str(parse_notation(str(measure))) == str(measure)


@pytest.mark.parametrize("request_text, name, trec_name", [
    # relstring's length is a count of top documents, a cutoff: written as P's is
    ("relstring.3", "relstring@3", "relstring_3"),
    ("relstring.2.5", "relstring@2", "relstring_2.5"),  # trec_eval reads 2.5 as 2 documents
    ("relstring@3", "relstring@3", "relstring_3"),
    ("relstring", "relstring", "relstring"),
    ("utility.1,2,3,4", "Utility(coefficients=(1.0,2.0,3.0,4.0))", "utility_1,2,3,4"),
    ("utility.1,-1,0,0", "Utility", "utility_1,-1,0,0"),  # the default coefficients: left out as in SetF
    ("Utility(coefficients=(2,-1,0,0))", "Utility(coefficients=(2.0,-1.0,0.0,0.0))", "utility_2.0,-1.0,0.0,0.0"),
    ("11pt_avg.0.2,.5", "IPrecAvg(levels=(0.2,0.5))", "11pt_avg_0.2,.5"),
    ("IPrecAvg(levels=(0.5))", "IPrecAvg(levels=(0.5))", "11pt_avg_0.5"),
    ("set_F.2", "SetF(beta=2.0)", "set_F_2"),
    ("Rprec_mult.2", "RprecMult@2.0", "Rprec_mult_2.00"),
    ("RprecMult@0.5", "RprecMult@0.5", "Rprec_mult_0.50"),
    ("rbp.p=0.8", "RBP(p=0.8)", "rbp_p=0.8"),
    ("rbp.p=0.9", "RBP", "rbp_p=0.9"),
    ("ndcg.p=0.5", "nDCG", "ndcg_p=0.5"),  # ndcg has no p: ignored, as trec_eval ignores it
    ("G.1=2,p=0.5", "G(gains={1:2.0})", "G_1=2,p=0.5"),
    ("unj.5", "Unj@5", "unj_5"),
    ("P.5", "P@5", "P_5"),
    ("iprec_at_recall.0.5", "IPrec@0.5", "iprec_at_recall_0.50"),
])
def test_names_read_well(request_text: str, name: str, trec_name: str) -> None:
    (measure,) = parse_measures([request_text])
    assert (str(measure), measure.trec_name) == (name, trec_name)


def test_a_trec_request_and_its_notation_are_one_measure() -> None:
    # relstring@3 is what relstring.3 computes and prints (relstring_3), as SetF(beta=2.0) is set_F.2.0
    assert parse_measures(["relstring.3"]) == [parse_notation("relstring@3")]
    assert parse_measures(["set_F.2.0"]) == [parse_notation("SetF(beta=2.0)")]
    assert parse_measures(["utility.2.0,-1.0,0.0,0.0"]) == [parse_notation("Utility(coefficients=(2,-1,0,0))")]


def test_relstring_at_k_on_the_command_line(run_cli, tmp_path) -> None:
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("1 0 a 2\n1 0 b 0\n", encoding="utf-8")
    run.write_text("1 Q0 a 1 3 r\n1 Q0 x 2 2 r\n1 Q0 b 3 1 r\n", encoding="utf-8")
    # a is judged 2, x is not in the pool (-), b judged 0
    assert run_cli("-q", "-m", "relstring@2", str(qrels), str(run)).stdout == "relstring_2           \t1\t'2-'\n"
    csv = run_cli("-m", "relstring.3", "-q", "--format", "csv", str(qrels), str(run)).stdout
    assert csv.splitlines()[1] == "r,1,relstring@3,2-0"


# -- suggestions --------------------------------------------------------------------------------
POOL = sorted({*NAMES, *FAMILIES, *NICKNAMES, *RANX_NAMES})


def _typos(name: str) -> list[str]:
    out = {name.swapcase(), name[:-1] + name[-1] * 2}
    if len(name) > 3:
        out.add(name[:2] + name[3:])
    return sorted(t for t in out if t and t not in POOL)


@pytest.mark.parametrize("name", POOL)
def test_a_suggestion_is_never_the_text_typed_and_always_parses(name: str) -> None:
    for typo in _typos(name):
        for tail in ("", "@2", ".5", "(rel=2)"):
            typed = typo + tail
            try:
                parse_measures([typed])
            except MeasureSyntaxError as err:
                found = re.search(r"did you mean '([^']*)'", err.reason)
                if found:
                    assert found[1] != typed, typed
                    parse_measures([found[1]])  # raises if the suggestion is refused


def test_the_suggestion_for_a_misspelt_relstring() -> None:
    with pytest.raises(MeasureSyntaxError) as err:
        parse_measures(["relstirng@2"])
    assert err.value.reason == "unknown measure (did you mean 'relstring@2'?)"
    with pytest.raises(MeasureSyntaxError) as err:
        parse_measures(["utilty.1,2"])  # utility.1,2 is refused (4 coefficients): the name alone
    assert err.value.reason == "unknown measure (did you mean 'Utility'?)"


def test_one_measure_asked_in_both_syntaxes_is_one_row(run_cli, tmp_path) -> None:
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 0 b 1\n", encoding="utf-8")
    run.write_text("1 Q0 a 1 3 r\n1 Q0 x 2 2 r\n", encoding="utf-8")
    # P = 1/2, R = 1/2: F with beta^2 = 2 is (2+1)PR/(2P+R) = 0.75/1.5 = 0.5
    csv = run_cli("-m", "set_F.2", "-m", "SetF(beta=2.0)", "--format", "csv", str(qrels), str(run)).stdout
    assert csv == "run,query_id,measure,value\nr,all,SetF(beta=2.0),0.5\n"
    # trec_eval's output too: one line, under the first request's name (trec_eval keeps the first -m set_F
    # with parameters); in the other order, the notation's (SetF(beta=2.0) is set_F_2.0)
    trec = run_cli("-m", "set_F.2", "-m", "SetF(beta=2.0)", str(qrels), str(run)).stdout
    assert trec == "set_F_2               \tall\t0.5000\n"
    trec = run_cli("-m", "SetF(beta=2.0)", "-m", "set_F.2", "--format", "trec", str(qrels), str(run)).stdout
    assert trec == "set_F_2               \tall\t0.5000\n"


def test_a_measure_asked_twice_keeps_its_own_value_under_c(run_cli, tmp_path) -> None:
    # query 2 is missing from the run: trec_eval -c scores its dummy ranking (one unjudged document), and
    # utility_1,-1,0,0 keeps the dummy's -1 (trec_eval clears only the bare name's); Utility, asked in our
    # notation, is the same measure and prints once, as the first request names it
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("1 0 a 1\n2 0 c 1\n", encoding="utf-8")
    run.write_text("1 Q0 a 1 2 r\n", encoding="utf-8")
    trec = run_cli("-q", "-c", "-m", "utility.1,-1,0,0", "-m", "Utility", str(qrels), str(run)).stdout
    assert trec == ("utility_1,-1,0,0      \t1\t1.0000\nutility_1,-1,0,0      \t2\t-1.0000\n"
                    "utility_1,-1,0,0      \tall\t0.0000\n")


# -- rules of a measure live on its registry entry ------------------------------------------------
def test_renderers_and_evaluators_name_no_family() -> None:
    # what sets a family apart (quoted values, the run tag, summary-only lines, trec_eval 9's rule) is a
    # field of its entry (Family.quoted, run_tag, trec_per_query, trec_eval_9, zscore); the one rule left by
    # name is trec_eval's -c recount of num_rel, a rule of its summary about that one count
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "trec_rag_eval"
    pattern = re.compile(r"""(family|\.name)\s*(==|!=|in)\s*[("']""")
    found = [f"{path.relative_to(root)}: {line.strip()}"
             for folder in ("render", "evaluation", "compare", "checks")
             for path in sorted((root / folder).rglob("*.py"))
             for line in path.read_text(encoding="utf-8").splitlines() if pattern.search(line)]
    assert found == ['evaluation/aggregation.py: return measure.spec.name == "num_rel" and complete_flag']


def test_validate_reads_trec_eval_output_with_relstring(run_cli, tmp_path) -> None:
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    reference = tmp_path / "reference"
    qrels.write_text("1 0 a 2\n1 0 b 0\n", encoding="utf-8")
    run.write_text("1 Q0 a 1 3 r\n1 Q0 x 2 2 r\n", encoding="utf-8")
    # trec_eval -q -m relstring.3 -m P.5 qrels run (P_5 = 1/5; relstring quoted, as trec_eval prints it)
    reference.write_text("P_5                   \t1\t0.2000\nrelstring_3           \t1\t'2-'\n"
                         "P_5                   \tall\t0.2000\n", encoding="utf-8")
    result = run_cli("validate", str(qrels), str(run), str(reference))
    assert result.exit_code == 0, result.output


def test_every_name_of_a_measure_finds_its_value() -> None:
    from trec_rag_eval.api import evaluate

    qrels = {"1": {"a": 1, "b": 1}}
    run = {"1": {"a": 2.0, "x": 1.0}}
    result = evaluate(qrels, run, ["utility.2,-1,0,0", "set_F.2", "relstring.3"])
    # utility: 2 * 1 relevant retrieved - 1 * 1 other retrieved = 1; F(beta^2 = 2) with P = R = 1/2 is 0.5
    for name in ("utility.2,-1,0,0", "Utility(coefficients=(2,-1,0,0))", "utility.2.0,-1,0,0"):
        assert result.summary[name] == 1.0, name
    for name in ("set_F.2", "set_F.2.0", "SetF(beta=2)", "SetF(beta=2.0)"):
        assert result.summary[name] == 0.5, name
    for name in ("relstring.3", "relstring@3", "relstring.3.0"):
        assert result.values[name] == ["1-"], name


@pytest.mark.parametrize("request_text", TREC_REQUESTS)
def test_a_name_as_trec_eval_prints_it_is_its_measure(request_text: str) -> None:
    # pytrec_eval and trec_eval's output key results by the printed name (utility_2,-1,0.5,3, rbp_p=0.8):
    # that name reads as the very measure its request computes
    for measure in parse_trec_measures([request_text]):
        assert parse_measures([measure.trec_name]) == [measure], (request_text, measure.trec_name)


# every family that takes integer cutoffs and needs no parameter only our notation can give (C/W/L's max_rel)
CUTOFF_FAMILIES = [name for name, family in FAMILIES.items() if family.kind == "int_cutoffs"
                   and not _needs_the_notation(name)]


@pytest.mark.parametrize("name", CUTOFF_FAMILIES)
def test_every_cutoff_family_takes_trec_eval_s_list_of_cutoffs(name: str) -> None:
    # -m X.5,10 is X at 5 and X at 10, as P.5,10 is P@5 and P@10: for the families trec_eval has (P, recall,
    # ndcg_cut) and for ours alike (F1, which has default cutoffs, and Judged, ERR, alpha_nDCG, which have none)
    at_k = next(n for n in FAMILIES[name].names if n.endswith("@k"))
    assert parse_measures([f"{name}.10,5"]) == parse_measures([at_k.replace("@k", "@5"), at_k.replace("@k", "@10")])
    assert parse_measures([f"{name}.3"]) == parse_measures([at_k.replace("@k", "@3")])


def test_a_cutoff_family_without_default_cutoffs_asked_bare_is_its_whole_ranking() -> None:
    # ERR and Judged have no default cutoffs: asked bare, they are the notation's ERR and Judged (no cutoff),
    # not a list of defaults
    assert [m.cutoff for m in parse_measures(["ERR", "Judged"])] == [None, None]


def test_a_list_of_cutoffs_for_a_family_that_needs_the_notation_says_so() -> None:
    # SDCG needs max_rel, which trec_eval's syntax cannot carry: the error names the family and the notation
    for request, written in (("SDCG.5", "SDCG(max_rel=...)@k"), ("NERR8.5,10", "NERR8(max_rel=...)@k")):
        with pytest.raises(MeasureSyntaxError) as raised:
            parse_measures([request])
        assert (raised.value.text, raised.value.reason) == (
            request, f"{request.split('.')[0]} needs max_rel, which trec_eval's syntax cannot give: write it in "
            f"the notation, {written}")


def test_the_families_marked_as_trec_eval_s_are_trec_eval_s_measures_in_its_order() -> None:
    # trec_eval 10's own table of measures (tests/golden/trec_eval_measures.txt, with the command that listed
    # it): the families the registry marks as trec_eval's are exactly those, registered first and in that order;
    # every other family (F1, Judged, ERR, the diversity and C/W/L measures) comes after them
    from pathlib import Path

    from trec_rag_eval.measures.registry import BEYOND_TREC_EVAL, TREC_EVAL_FAMILIES, TREC_EVAL_ORDER

    listed = Path(__file__).parent / "golden" / "trec_eval_measures.txt"
    trec_eval = [line for line in listed.read_text().splitlines() if line and not line.startswith("#")]
    assert [family.name for family in TREC_EVAL_ORDER] == trec_eval
    assert TREC_EVAL_FAMILIES == set(trec_eval)
    assert list(FAMILIES)[: len(trec_eval)] == trec_eval
    assert {family.name for family in BEYOND_TREC_EVAL} & TREC_EVAL_FAMILIES == set()
    assert {"F1", "Judged", "ERR", "alpha_nDCG", "SDCG"} <= {family.name for family in BEYOND_TREC_EVAL}


def test_a_family_of_an_unknown_kind_is_refused_when_it_is_made() -> None:
    # kind says how trec_eval's -m reads the parameters: a misspelt or former kind ('pairs', now 'gain_pairs')
    # would read them another way in silence
    from trec_rag_eval.measures.model import Family

    with pytest.raises(ValueError, match="toy: kind 'pairs' is not one of none, int_cutoffs, real_cutoffs, "
                                         "real_list, gain_pairs"):
        Family("toy", lambda ctx, m: None, "A toy.", kind="pairs")
