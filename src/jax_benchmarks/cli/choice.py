"""A click group whose first argument must name one of its subcommands."""

from __future__ import annotations

import click


class NamedSubcommands(click.Group):
    """An unknown subcommand is one usage line (exit 2) naming every allowed one, in `list_commands` order;
    click's own message would only suggest near matches. `argument` is how the message names the slot."""

    argument = "COMMAND"

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
