"""Errors the CLI turns into one-line messages and exit codes."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click


class CheckFailed(click.ClickException):
    """A correctness check of a benchmark failed; the records are already saved."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(f"check failed: {message}")


class DataError(click.UsageError):
    """Bad input data (missing file, wrong magic number, ...): exit 2."""


def run_cli(command: click.Command, argv: Sequence[str] | None = None) -> int:
    """Invoke `command`; print any usage error as a single line; return the exit code."""
    try:
        command.main(args=list(argv) if argv is not None else None, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:
        # A group given no subcommand (`python main.py`, `python main.py xla`): its help, not an error.
        click.echo(exc.ctx.get_help())
        return 0
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 130
    except click.ClickException as exc:
        message = " ".join(exc.format_message().split())
        click.echo(f"Error: {message}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("Interrupted: the records measured so far are saved.", err=True)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 1
    return 0
