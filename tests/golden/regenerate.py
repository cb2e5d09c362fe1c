"""Rewrite tests/golden/expected/ by running trec_eval on the golden inputs, as commands.txt says.

    python tests/golden/regenerate.py --trec-eval /path/to/trec_eval [--trec-eval-9 /path/to/trec_eval_9]

``--trec-eval`` is trec_eval 10 built from usnistgov/trec_eval at f4253652c8efd0d86ddffd0d163cc0a0f813111a
(``git clone https://github.com/usnistgov/trec_eval && cd trec_eval && git checkout f425365 && make``);
``--trec-eval-9`` is trec_eval 9.0.8 built the same way from tag v9.0.8 (its binary says 9.0.7); without
it the files under expected/v9/ are left as they are. Every command must exit 0 with nothing on stderr,
and a file named by two commands must come out byte for byte the same from both; otherwise nothing is
written and the script says which command failed. Inputs come from make_inputs.py (run it first if the
seed or the generator changed).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
COMMANDS = HERE / "commands.txt"
INPUTS = HERE / "inputs"
EXPECTED = HERE / "expected"
TOOLS = ("trec_eval", "trec_eval_9")


class Case(NamedTuple):
    tool: str  # "trec_eval" (10) or "trec_eval_9"
    args: tuple[str, ...]  # the arguments, input files named relative to inputs/
    expected: str  # the output file, relative to expected/
    line: int  # in commands.txt

    @property
    def command(self) -> str:
        return f"{self.tool} {shlex.join(self.args)} > {self.expected}"


def read_commands(path: Path = COMMANDS) -> list[Case]:
    """The cases of commands.txt: ``TOOL ARGS... > EXPECTED`` a line; blank lines and # comments skipped."""
    cases = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        words = shlex.split(text)
        if len(words) < 4 or words[0] not in TOOLS or words[-2] != ">":
            raise ValueError(f"{path}:{number}: expected 'trec_eval ARGS... > FILE', got {text!r}")
        cases.append(Case(words[0], tuple(words[1:-2]), words[-1], number))
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", required=True, help="trec_eval 10 binary")
    parser.add_argument("--trec-eval-9", help="trec_eval 9.0.8 binary (expected/v9/ is kept as is without it)")
    args = parser.parse_args(argv)
    binaries = {"trec_eval": args.trec_eval, "trec_eval_9": args.trec_eval_9}
    outputs: dict[str, bytes] = {}
    for case in read_commands():
        binary = binaries[case.tool]
        if binary is None:
            print(f"skipped (no --trec-eval-9): {case.command}")
            continue
        done = subprocess.run([str(Path(binary).resolve()), *case.args], cwd=INPUTS, capture_output=True)
        if done.returncode != 0 or done.stderr:
            print(f"commands.txt:{case.line}: {case.command}: exit {done.returncode}: "
                  f"{done.stderr.decode(errors='replace').strip()}", file=sys.stderr)
            return 1
        if case.expected in outputs and outputs[case.expected] != done.stdout:
            print(f"commands.txt:{case.line}: {case.command}: differs from the earlier command writing "
                  f"{case.expected}", file=sys.stderr)
            return 1
        outputs[case.expected] = done.stdout
    for name, data in outputs.items():
        path = EXPECTED / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"wrote {path.relative_to(HERE)} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
