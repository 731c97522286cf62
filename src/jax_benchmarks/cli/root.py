"""Root command. Imports only click: every group is loaded when it is invoked.

This follows Click's "lazily loading subcommands" pattern so that `--help`
stays instant and never pulls in torch, jax, flax or comet_ml.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from jax_benchmarks.cli.choice import NamedSubcommands
from jax_benchmarks.groups import COMMANDS, GROUPS

DISTRIBUTION = "jax-benchmarks"
PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"  # src/jax_benchmarks/cli/ -> the checkout

__all__ = ["GROUPS", "cli", "main"]  # GROUPS: the one list, jax_benchmarks.groups


class LazyGroup(NamedSubcommands):
    """A group whose subcommands are imported only when they are run."""

    argument = "GROUP"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name].module)
        command = module.cli
        if not isinstance(command, click.Command):  # pragma: no cover - programming error
            raise TypeError(f"{COMMANDS[cmd_name].module}.cli is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help comes from COMMANDS so that the root --help imports nothing.
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.help) for name, entry in COMMANDS.items()])



def project_version() -> str:
    """The version in pyproject.toml (the checkout being run), else the installed distribution's."""
    import tomllib
    from importlib import metadata

    try:
        with PYPROJECT.open("rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        try:
            return metadata.version(DISTRIBUTION)
        except metadata.PackageNotFoundError:
            return "unknown"


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"{DISTRIBUTION} {project_version()} (Python {sys.version.split()[0]})")
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def cli() -> None:
    """Benchmark NumPy, PyTorch, JAX and Flax on the same work, honestly timed.

    Example: python main.py xla jax --matrix-size 1000

    `--device auto` (the default): the GPU when one is visible, else the
    CPU, in every group; `--device all` (jit's sweep, autograd) times on
    every visible device in turn.
    """


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; usage errors become one line on stderr and exit code 2."""
    from jax_benchmarks.cli.console import encodable_streams, invoked_as, visible_warnings
    from jax_benchmarks.errors import run_cli

    encodable_streams()
    visible_warnings()
    sys.exit(run_cli(cli, argv, invoked_as(sys.argv[0] if sys.argv else "")))
