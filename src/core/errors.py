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


class OutOfMemory(click.UsageError):
    """The device ran out of memory mid-run (the up-front estimate could not tell): exit 2, one line."""

    def __init__(self, cause: BaseException) -> None:
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        super().__init__(
            f"out of device memory ({type(cause).__name__}: {first[:200]}); the records so far are saved; "
            "use a smaller size (e.g. --matrix-size or --train-batch-size)"
        )


def is_out_of_memory(exc: BaseException) -> bool:
    """PyTorch's OutOfMemoryError (CUDA allocator) or XLA's RESOURCE_EXHAUSTED, recognised without importing
    either framework."""
    return type(exc).__name__ == "OutOfMemoryError" or (
        type(exc).__name__ in ("XlaRuntimeError", "JaxRuntimeError") and "RESOURCE_EXHAUSTED" in str(exc)
    )


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
