"""trec_eval's -m syntax for the families whose parameter is a list of reals: utility's four coefficients,
set_F's first value (its beta squared), relstring's length and 11pt_avg's recall levels.

Every expected output of TREC_EVAL is trec_eval 10's (usnistgov/trec_eval f4253652) on QRELS and RUN, with the
command written above it; the last test registers toy families to show the rules come from the registry entry.
By hand, at relevance level 1: query 1 has R = 3 (a, c, d), retrieves a, b, x (N = 3, one relevant: P = R = 1/3);
query 2 has R = 1 (a), retrieves e, a, z (P = 1/3, R = 1).
"""

from __future__ import annotations

import pytest
from conftest import invoke

from trec_rag_eval.measures.ir_notation import parse_notation
from trec_rag_eval.measures.requests import parse_measures

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n1 0 d 1\n2 0 a 1\n2 0 e 0\n"
RUN = "1 Q0 a 1 3.0 r\n1 Q0 b 2 2.0 r\n1 Q0 x 3 1.0 r\n2 Q0 e 1 3 r\n2 Q0 a 2 2 r\n2 Q0 z 3 1 r\n"

TREC_EVAL = [
    # trec_eval -q -m utility -m set_F.0.5: utility 1,-1,0,0 = 1 - (3 - 1) = -1 in both queries;
    # set_F.0.5 = 1.5 P R / (0.5 P + R): 1/3, then (1.5/3) / (0.5/3 + 1) = 3/7
    (["-q", "-m", "utility", "-m", "set_F.0.5"],
     "utility               \t1\t-1.0000\n"
     "set_F_0.5             \t1\t0.3333\n"
     "utility               \t2\t-1.0000\n"
     "set_F_0.5             \t2\t0.4286\n"
     "utility               \tall\t-1.0000\n"
     "set_F_0.5             \tall\t0.3810\n"),
    # trec_eval -q -m utility.2,-1,1,0 -m set_F.2,3: set_F uses its first value only (2), named as typed
    (["-q", "-m", "utility.2,-1,1,0", "-m", "set_F.2,3"],
     "utility_2,-1,1,0      \t1\t2.0000\n"
     "set_F_2,3             \t1\t0.3333\n"
     "utility_2,-1,1,0      \t2\t0.0000\n"
     "set_F_2,3             \t2\t0.6000\n"
     "utility_2,-1,1,0      \tall\t1.0000\n"
     "set_F_2,3             \tall\t0.4667\n"),
    # trec_eval -m set_F.1 -m set_F: the request with parameters wins, whatever the order
    (["-m", "set_F.1", "-m", "set_F"], "set_F_1               \tall\t0.4167\n"),
    # trec_eval -m set_F -m set_F.2
    (["-m", "set_F", "-m", "set_F.2"], "set_F_2               \tall\t0.4667\n"),
    # trec_eval -m utility.1,-1,0,0 -m utility.2,0,0,0: the first request with parameters wins
    (["-m", "utility.1,-1,0,0", "-m", "utility.2,0,0,0"], "utility_1,-1,0,0      \tall\t-1.0000\n"),
    # trec_eval -m set_F.1.0 -m set_F.2.0
    (["-m", "set_F.1.0", "-m", "set_F.2.0"], "set_F_1.0             \tall\t0.4167\n"),
    # trec_eval -m set_F.0.25,9
    (["-m", "set_F.0.25,9"], "set_F_0.25,9          \tall\t0.3590\n"),
    # trec_eval -q -m relstring.2,5 -m 11pt_avg.0.5,1: relstring's first value is its length
    (["-q", "-m", "relstring.2,5", "-m", "11pt_avg.0.5,1"],
     "relstring_2,5         \t1\t'10'\n"
     "11pt_avg_0.5,1        \t1\t0.0000\n"
     "relstring_2,5         \t2\t'01'\n"
     "11pt_avg_0.5,1        \t2\t0.5000\n"
     "11pt_avg_0.5,1        \tall\t0.2500\n"),
    # trec_eval -m set -m set_F.3: the nickname's set_F takes the parameters asked for it
    (["-m", "set", "-m", "set_F.3"],
     "runid                 \tall\tr\n"
     "num_q                 \tall\t2\n"
     "num_ret               \tall\t6\n"
     "num_rel               \tall\t4\n"
     "num_rel_ret           \tall\t2\n"
     "utility               \tall\t-1.0000\n"
     "set_P                 \tall\t0.3333\n"
     "set_relative_P        \tall\t0.6667\n"
     "set_recall            \tall\t0.6667\n"
     "set_map               \tall\t0.2222\n"
     "set_F_3               \tall\t0.5000\n"),
]


def _files(tmp_path):
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


@pytest.mark.parametrize("args,expected", TREC_EVAL, ids=[" ".join(a) for a, _ in TREC_EVAL])
def test_list_parameters_as_trec_eval_reads_them(tmp_path, args, expected):
    result = invoke("--format", "trec", *args, *_files(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected


@pytest.mark.parametrize("spec,caret", [
    ("utility.1", "          ^\n"),
    ("utility.1,2", "          ^^^\n"),
    ("utility.1,2,3", "          ^^^^^\n"),
    ("utility.1,-1,0,0,5", "          ^^^^^^^^^^\n"),
])
def test_utility_takes_exactly_four_coefficients(tmp_path, spec, caret):
    # trec_eval 10 refuses each of these ("trec_eval.calc_utility: improper number of coefficients", exit 4),
    # after reading the files; we refuse before, pointing at the coefficients
    result = invoke("-m", spec, *_files(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: bad measure '{spec}': utility takes exactly 4 coefficients a,b,c,d\n"
                             f"  {spec}\n{caret}")


@pytest.mark.parametrize("spec,message", [
    ("set_F.inf", "beta2 must be finite numbers"),
    ("set_F.2,nan", "beta2 must be finite numbers"),
    ("relstring.nan", "length must be finite numbers"),
])
def test_list_values_must_be_finite(tmp_path, spec, message):
    result = invoke("-m", spec, *_files(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: bad measure '{spec}': {message}\n")


def test_set_f_beta_in_both_notations():
    # trec_eval's set_F.x is the notation's SetF(beta=x): one measure, printed as trec_eval prints set_F.x
    assert parse_measures(["set_F.0.5"]) == [parse_notation("SetF(beta=0.5)")]
    assert parse_notation("SetF(beta=0.5)").trec_name == "set_F_0.5"
    assert parse_notation("SetF(beta=2)").trec_name == "set_F_2.0"
    # beta 1 is the default: SetF(beta=1.0) is set_F, named as trec_eval names it without parameters
    assert parse_notation("SetF(beta=1.0)") == parse_measures(["set_F"])[0]
    assert parse_notation("SetF(beta=1.0)").trec_name == "set_F"
    # set_F.1 is typed with a parameter, which trec_eval prints back (set_F_1, above), at the default's value
    (typed,) = parse_measures(["set_F.1"])
    assert typed.param("beta", 1.0) == 1.0 and typed.trec_name == "set_F_1"
    # set_F's other values are ignored, as trec_eval ignores them; utility's are kept in order
    assert parse_measures(["set_F.2,3"])[0].param("beta") == 2.0
    assert parse_measures(["utility.2,-1,1,0"])[0].param("coefficients") == (2.0, -1.0, 1.0, 0.0)


def test_set_f_in_notation_matches_trec_eval(tmp_path):
    # trec_eval -m set_F.0.5 (above): 0.3810; SetF(beta=0.5) asked in our notation prints the same line
    result = invoke("--format", "trec", "-m", "SetF(beta=0.5)", *_files(tmp_path))
    assert result.stdout == "set_F_0.5             \tall\t0.3810\n"


# A family registered later gets the same rules from its entry alone: the parser names no family
TOY = '''
from trec_rag_eval.errors import MeasureSyntaxError
from trec_rag_eval.measures import sets
from trec_rag_eval.measures.ir_notation import parse_notation
from trec_rag_eval.measures.model import Family, Param, register
from trec_rag_eval.measures.requests import parse_measures

register(Family("toy_list", sets.utility, "A toy.", kind="real_list", defaults=(1.0, 2.0), list_param="weights",
                list_values=("x", "y"), value_range=None))
register(Family("toy_first", sets.set_f, "A toy.", kind="real_list", defaults=(1.0,), names=("ToyF",),
                params={"beta": Param("float", 1.0)}, list_param="beta2", list_first="beta"))
(m,) = parse_measures(["toy_list.3,4"])
print(m.param("weights"), m.trec_name)
try:
    parse_measures(["toy_list.3"])
except MeasureSyntaxError as err:
    print(err.reason)
(m,) = parse_measures(["toy_first.2,5"])
print(m.param("beta"), m.trec_name, parse_measures(["toy_first.2.0"]) == [parse_notation("ToyF(beta=2.0)")])
print(parse_notation("ToyF(beta=0.5)").trec_name, parse_notation("ToyF(beta=1.0)").trec_name)
for wrong in [dict(kind="none", list_param="weights"), dict(kind="real_list"),
              dict(kind="real_list", list_param="beta2", list_first="beta")]:
    try:
        Family("wrong", sets.utility, "A toy.", **wrong)
    except ValueError as err:
        print(err)
'''


def test_a_new_list_family_reads_its_rules_from_its_entry(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "toy.py"
    script.write_text(TOY, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    # toy_first.2,5: only the first value counts (beta 2), printed back as typed, as set_F_2,3 is (above)
    assert done.stdout.splitlines() == [
        "(3.0, 4.0) toy_list_3,4",
        "toy_list takes exactly 2 weights x,y",
        "2.0 toy_first_2,5 True",
        "toy_first_0.5 toy_first",
        "wrong: list_param, list_values and list_first are for a real_list family",
        "wrong: a real_list family names the parameter its list is held as (list_param)",
        "wrong: list_first 'beta' is not one of its parameters",
    ]
