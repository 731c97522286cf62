"""CI runs every test but the opt-in benchmarks (`slow`): the default suite, then the markers it leaves out.

A test is selected by its markers alone, so checking every combination of the declared markers against the
`-m` expressions of CI's `./cli.sh test` lines (.ci/run; pyproject's addopts where a line gives none) covers
every test there is, and every one that will be written."""

from __future__ import annotations

import itertools
import shlex
import tomllib
from pathlib import Path

from _pytest.mark.expression import Expression

REPO = Path(__file__).resolve().parents[1]
PYTEST = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
DECLARED = sorted(marker.split(":")[0].strip() for marker in PYTEST["markers"])
OPT_IN = {"slow"}  # long benchmarks that print figures: run by hand, never by CI


def marker_expression(args: list[str]) -> str:
    """The `-m` expression pytest uses for these arguments: the last -m given, else the addopts one."""
    chosen = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "-m"]
    if chosen:
        return chosen[-1]
    return marker_expression(shlex.split(PYTEST["addopts"]) + ["--"])


def ci_expressions(script: str) -> list[str]:
    """The -m expression of every `./cli.sh test` line of a CI script (environment assignments before it)."""
    found = []
    for line in script.splitlines():
        if "./cli.sh" not in line:
            continue
        words = shlex.split(line, comments=True)
        if "./cli.sh" in words and words[words.index("./cli.sh") + 1:][:1] == ["test"]:
            found.append(marker_expression(words[words.index("./cli.sh") + 2:] + ["--"]))
    return found


def selects(expression: str, markers: set[str]) -> bool:
    return Expression.compile(expression).evaluate(lambda name, /, **_: name in markers)


def every_combination() -> list[set[str]]:
    return [set(c) for n in range(len(DECLARED) + 1) for c in itertools.combinations(DECLARED, n)]


def test_ci_runs_every_test_but_the_opt_in_benchmarks() -> None:
    expressions = ci_expressions((REPO / ".ci" / "run").read_text())
    missed = [sorted(markers) for markers in every_combination()
              if not markers & OPT_IN and not any(selects(e, markers) for e in expressions)]
    assert missed == [], f"tests with these markers run in no `./cli.sh test` line of .ci/run: {missed}"


def test_the_default_suite_leaves_out_the_end_to_end_runs_and_ci_runs_them() -> None:
    default = marker_expression(["--"])
    assert selects(default, set()) and not selects(default, {"e2e"}) and not selects(default, {"slow"})
    assert "e2e" in ci_expressions((REPO / ".ci" / "run").read_text())


def test_the_check_reads_a_ci_line_and_finds_what_it_misses() -> None:
    script = 'echo "== ./cli.sh test"\nX=1 PYTHON="$P" ./cli.sh test -p no:cacheprovider\n./cli.sh test -m typing\n'
    expressions = ci_expressions(script)
    assert expressions == [marker_expression(["--"]), "typing"]
    assert not any(selects(e, {"e2e"}) for e in expressions)  # a CI without the e2e line misses them
