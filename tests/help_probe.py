"""`--help` of a command in a process of its own: its exit code, its help text and which heavy frameworks it
imported. Every group's --help test uses `probe`; tests/test_cli.py probes every command (`every_help`).

A probe runs in a child forked from one server interpreter (started once, at the first probe) that has
imported the CLI's root and light modules most commands import (no framework; `serve` says which). Each child
runs the command's --help from there, without paying for a fresh interpreter and those imports (about 1 s a
probe on a busy 2-core machine; the suite probes some 60 commands). `probe(..., fresh=True)`
starts a fresh interpreter instead (the e2e twin in tests/test_cli.py).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import json
import os
import subprocess
import sys
import traceback

HEAVY = ("torch", "jax", "flax", "comet_ml", "optax", "tensorflow")


def one(watch: list[str], args: list[str]) -> None:
    from jax_benchmarks.cli.root import cli
    from jax_benchmarks.errors import run_cli

    with contextlib.redirect_stdout(io.StringIO()) as out:
        code = run_cli(cli, [*args, "--help"])
    print(json.dumps({"code": code, "heavy": [m for m in watch if m in sys.modules], "help": out.getvalue()}),
          flush=True)


def serve() -> None:
    """Read one JSON request (watch, args) a line; answer each from a forked child (one JSON line).

    Besides the CLI's root, the server imports the settings and stores that most commands' --help import
    (two thirds of a help's time), none of which imports a module any probe watches: a module imported here
    can only add to what a child reports, never hide what it imports itself (the e2e twin compares)."""
    import jax_benchmarks.cli.root  # noqa: F401  what main.py imports first
    import jax_benchmarks.errors  # noqa: F401
    import jax_benchmarks.hardware.xla_flags  # noqa: F401
    import jax_benchmarks.settings  # noqa: F401
    import jax_benchmarks.store.location  # noqa: F401

    for line in sys.stdin:
        watch, args = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            try:
                one(watch, args)
            except BaseException:  # the test reads the failure, the server goes on
                print(json.dumps({"code": -1, "heavy": [], "help": traceback.format_exc()}), flush=True)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)


@functools.cache
def server() -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)

    def stop() -> None:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)

    atexit.register(stop)
    return process


def probe(args: list[str], watch: tuple[str, ...] = HEAVY, fresh: bool = False) -> dict[str, object]:
    """`python main.py *args --help` in a process of its own: exit code, help text, and which of the `watch`
    modules it imported (a forked child of the probe server; `fresh`: a fresh interpreter)."""
    if fresh:
        res = subprocess.run([sys.executable, __file__, "--one", ",".join(watch), *args],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            return {"code": res.returncode, "heavy": [], "help": res.stderr}
        answer = res.stdout.strip().splitlines()[-1]
    else:
        process = server()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps([list(watch), args]) + "\n")
        process.stdin.flush()
        answer = process.stdout.readline()
        if not answer:
            return {"code": process.wait(timeout=60), "heavy": [], "help": "the probe server died"}
    parsed: dict[str, object] = json.loads(answer)
    return parsed


def every_help(fresh: bool = False) -> dict[str, dict[str, object]]:
    """`probe` of the root, every group and every subcommand, by command line."""
    import click

    from jax_benchmarks.cli.root import GROUPS, cli

    results = {"": probe([], fresh=fresh)}
    for group in GROUPS:
        results[group] = probe([group], fresh=fresh)
        command = cli.get_command(click.Context(cli), group)
        if isinstance(command, click.Group):
            for sub in command.commands:
                results[f"{group} {sub}"] = probe([group, sub], fresh=fresh)
    return results


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "src"))
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2].split(","), sys.argv[3:])
    elif sys.argv[1:2] == ["--serve"]:
        serve()
    else:
        print(json.dumps(every_help()))
