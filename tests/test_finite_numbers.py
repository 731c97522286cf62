"""NaN and ±infinity are refused wherever a number is read (issue 47, item 4): one `Error:` line naming the
option, exit 2, before any work, on every float option of every command (found by walking the command tree, so
that an option added later is covered too)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from jax_benchmarks.settings import FiniteFloat, FiniteFloatRange
from tests.conftest import invoke


def float_options() -> Iterator[tuple[tuple[str, ...], str, click.ParamType]]:
    from jax_benchmarks.cli.root import cli

    def walk(command: click.Command, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str, click.ParamType]]:
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    yield from walk(sub, (*path, name))
        for param in command.params:
            if isinstance(param.type, (click.types.FloatParamType, click.FloatRange)) and param.opts:
                yield path, param.opts[0], param.type

    return walk(cli, ())


FLOAT_OPTIONS = sorted({(path, option): kind for path, option, kind in float_options()}.items(),
                       key=lambda item: item[0])


def test_the_walk_finds_the_options_the_issue_names() -> None:
    found = {(" ".join(path), option) for (path, option), _ in FLOAT_OPTIONS}
    assert {("verdict", "--target-accuracy"), ("verdict", "--budget"), ("calibrate", "--fail-on-regression"),
            ("report", "--fail-on-regression"), ("xla numpy", "--min-time"), ("xla numpy", "--lock-timeout"),
            ("jit jax", "--total-items"), ("scipy numpy", "--tol"), ("mnist flax", "--learning-rate"),
            ("mnist flax", "--momentum")} <= found


def test_every_float_option_is_of_the_finite_type() -> None:
    assert [where for where, kind in FLOAT_OPTIONS if not isinstance(kind, (FiniteFloat, FiniteFloatRange))] == []


# One command of each group (its backends share the options), and every other command with a float option.
ONE_PER_GROUP = sorted({(path, option) for (path, option), _ in FLOAT_OPTIONS
                        if len(path) < 2 or path[1] in ("numpy", "flax", "evaluate")})


@pytest.mark.parametrize("value", ["nan", "inf", "-1e999"])
@pytest.mark.parametrize("where", ONE_PER_GROUP, ids=[f"{' '.join(p)} {o}" for p, o in ONE_PER_GROUP])
def test_nan_and_infinity_are_refused_naming_the_option(where: tuple[tuple[str, ...], str], value: str,
                                                        tmp_path: Path) -> None:
    path, option = where
    # A folder as the store: were the value taken, the command would stop there (exit 2, another line)
    # instead of measuring.
    result = invoke(*path, f"{option}={value}", "--results", str(tmp_path))
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: Invalid value for '{option}': "), result.stderr
    assert "is not a finite number; allowed: " in lines[0] and "Traceback" not in result.stderr


@pytest.mark.parametrize("value", ["NaN", "-nan", "Infinity", "-INF", "1e999"])
def test_every_spelling_of_nan_and_infinity_is_refused(value: str, tmp_path: Path) -> None:
    result = invoke("verdict", "--budget", value, "--results", str(tmp_path))
    assert result.exit_code == 2 and "Error: Invalid value for '--budget': " in result.stderr
    assert "is not a finite number; allowed: 0 < value" in result.stderr


def test_a_finite_value_still_passes() -> None:
    result = invoke("xla", "numpy", "--list", "--min-time", "0.5")
    assert result.exit_code == 0, result.stderr
