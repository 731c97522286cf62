"""A click group whose first argument must name one of its subcommands; help that names the program as invoked."""

from __future__ import annotations

import click

from jax_benchmarks.errors import DEFAULT_PROGRAM

# How the help texts' examples name the program; shown as the user invoked it (`jax-benchmarks` in a pip install).
EXAMPLE_PROGRAM = "python main.py"


def program_name(ctx: click.Context) -> str:
    """The command as the user invoked it, for hints: the root context's name (`invoked_as`, through `main`).
    Here, not in cli/console.py, so that `--help` imports no rich (the help formatter reads it)."""
    return ctx.find_root().info_name or DEFAULT_PROGRAM


class ProgramFormatter(click.HelpFormatter):
    """Help text with its examples' program (`EXAMPLE_PROGRAM`) replaced by `program`."""

    def __init__(self, program: str, width: int | None = None, max_width: int | None = None) -> None:
        super().__init__(width=width, max_width=max_width)
        self.program = program

    def write_text(self, text: str) -> None:
        super().write_text(text.replace(EXAMPLE_PROGRAM, self.program))


class InvokedContext(click.Context):
    """A context whose help names the program as the root context's name gives it (`program_name`)."""

    def make_formatter(self) -> click.HelpFormatter:
        return ProgramFormatter(program_name(self), width=self.terminal_width, max_width=self.max_content_width)


class ProgramCommand(click.Command):
    """A command whose help names the program as invoked."""

    context_class = InvokedContext


class NamedSubcommands(click.Group):
    """An unknown subcommand is one usage line (exit 2) naming every allowed one, in `list_commands` order;
    click's own message would only suggest near matches. `argument` is how the message names the slot."""

    argument = "COMMAND"
    context_class = InvokedContext

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        allowed = self.list_commands(ctx)
        if not name.startswith("-") and name not in allowed:
            raise click.UsageError(
                f"Invalid value for '{self.argument}': {name!r} is not one of {', '.join(allowed)}.", ctx
            )
        return super().resolve_command(ctx, args)
