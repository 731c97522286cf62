"""Run in a fresh interpreter by tests/test_cli.py: `--help` of every command.

Prints one JSON object: for each command line, its exit code, the help text
and which heavy frameworks got imported (each probe in its own interpreter).
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

HEAVY = ("torch", "jax", "flax", "comet_ml", "optax", "tensorflow")


def one(watch: list[str], args: list[str]) -> None:
    from jax_benchmarks.cli.root import cli
    from jax_benchmarks.errors import run_cli

    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = run_cli(cli, [*args, "--help"])
    print(json.dumps({"code": code, "heavy": [m for m in watch if m in sys.modules], "help": out.getvalue()}))


def probe(args: list[str], watch: tuple[str, ...] = HEAVY) -> dict[str, object]:
    """`python main.py *args --help` in a fresh interpreter: exit code, help text, and
    which of the `watch` modules it imported. Every group's --help test uses this."""
    res = subprocess.run([sys.executable, __file__, "--one", ",".join(watch), *args],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return {"code": res.returncode, "heavy": [], "help": res.stderr}
    parsed: dict[str, object] = json.loads(res.stdout.strip().splitlines()[-1])
    return parsed


def main() -> None:
    import click

    from jax_benchmarks.cli.root import GROUPS, cli

    results = {"": probe([])}
    for group in GROUPS:
        results[group] = probe([group])
        command = cli.get_command(click.Context(cli), group)
        if isinstance(command, click.Group):
            for sub in command.commands:
                results[f"{group} {sub}"] = probe([group, sub])
    print(json.dumps(results))


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "src"))
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2].split(","), sys.argv[3:])
    else:
        main()
