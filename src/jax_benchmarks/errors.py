"""Errors the CLI turns into one-line messages and exit codes."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click


def visible(text: str) -> str:
    """`text` with every control or format character (ESC, BEL, newline, DEL, C1, bidi overrides) written as a
    Python escape (`\\x1b`, `\\u202e`), so that the terminal shows it instead of obeying it."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def literal(text: object) -> str:
    """Data for rich: control characters visible, markup escaped (printed exactly as it reads)."""
    from rich.markup import escape

    return escape(visible(str(text)))


def first_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's message as one line of at most `limit` characters (its first non-blank line), or its
    type's name when it has no message: for one-line reports of what went wrong."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0][:limit] if lines else type(exc).__name__


class Failed(click.ClickException):
    """Work that ran and failed (a broken check, a job that could not form, a round that crashed): one line,
    exit 1. Bad input is click's UsageError, exit 2."""

    exit_code = 1


class CheckFailed(Failed):
    """A correctness check of a benchmark failed; the records are already saved."""

    def __init__(self, message: str) -> None:
        super().__init__(f"check failed: {message}")


class DataError(click.UsageError):
    """Bad input data (missing file, wrong magic number, ...): exit 2."""


class StoreError(DataError):
    """A results store cannot be used (a bad location, a server down, wrong credentials, another program's
    file, a damaged or locked store): one line that names the store and the problem, never the password;
    exit 2, the same line from every command (report, verdict, smoke, every group)."""


# The command named in hints when the program's name as invoked is not known (the installed script's).
DEFAULT_PROGRAM = "jax-benchmarks"


class NoResultsYet(StoreError, ValueError):
    """A store or file to read holds no records yet: exit 2, with a hint naming a command that makes some.
    The hint names the program as the user invoked it (`python main.py`, `jax-benchmarks`), which only the CLI
    layer knows: it prints `hint(program)` (`run_cli`). A ValueError too, so that a settings validator that
    meets it keeps it (pydantic hands it on as the error's cause), with the option it was given for."""

    FIRST_RUN = "xla all"

    def __init__(self, what: str, option: str | None = None) -> None:
        self.what = what
        self.option = option
        super().__init__(self.hint(DEFAULT_PROGRAM))

    def hint(self, program: str) -> str:
        prefix = f"Invalid value for '{self.option}': " if self.option else ""
        return f"{prefix}{self.what}: run a benchmark first (e.g. `{program} {self.FIRST_RUN}`)"

    def for_option(self, option: str) -> NoResultsYet:
        return NoResultsYet(self.what, option)


class SettingsError(click.UsageError):
    """Options that cannot work together, found once a command's cases are declared: exit 2, one line naming
    the option."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"Invalid value for '{option}': {message}")


class OutOfMemory(click.UsageError):
    """The device ran out of memory mid-run (the up-front estimate could not tell): exit 2, one line."""

    def __init__(self, cause: BaseException) -> None:
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        super().__init__(
            f"out of device memory ({type(cause).__name__}: {first[:200]}); the records so far are saved; "
            "use a smaller size (e.g. --matrix-size or --train-batch-size)"
        )


class ResultsWriteError(Failed):
    """A record could not be written (full disk, I/O error): exit 1; no part of it stays in the file."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"cannot write a record to {path}: {reason}; nothing of that record was kept")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt so that every cleanup path treats them alike."""


class RunInterrupted(click.ClickException):
    """Ctrl-C during a run (exit 130); the message says what was saved."""

    exit_code = 128 + signal.SIGINT


class RunTerminated(RunInterrupted):
    """SIGTERM during a run (exit 143)."""

    exit_code = 128 + signal.SIGTERM


def interrupted(message: str, signum: int) -> RunInterrupted:
    return RunTerminated(message) if signum == signal.SIGTERM else RunInterrupted(message)


NOTHING_SAVED = "Interrupted: no record was written."


def nothing_saved(argv: Sequence[str]) -> str:
    """What a process stopped before its run began says. A round of `--rounds` (its starter gives it
    `--round-index I --run-id ID`, relaunch.round_argv) wrote nothing itself, but its run holds the earlier rounds'
    records, which the starter counts on the next line: "no record was written" there would contradict it."""
    def value(option: str) -> str | None:
        return next((argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == option), None)

    index, run_id = value("--round-index"), value("--run-id")
    if index is None or not index.isdigit():
        return NOTHING_SAVED
    of_run = f" of run {run_id}" if run_id else ""
    return f"Interrupted: round {int(index) + 1}{of_run} was stopped before it wrote a record."


@contextmanager
def handling(signum: int, handler: Callable[[int, Any], None]) -> Iterator[None]:
    """Install a signal handler for the duration of the block (signals reach the main thread only). A signal
    the process was started with ignored (`nohup`, a script's background job) stays ignored."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signum) == signal.SIG_IGN:
        yield
        return
    previous = signal.signal(signum, handler)
    try:
        yield
    finally:
        signal.signal(signum, previous if previous is not None else signal.SIG_DFL)


def interrupt_signal(exc: BaseException) -> int:
    return signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT


def raise_terminated(signum: int, _frame: object) -> None:
    raise Terminated()


def run_cli(command: click.Command, argv: Sequence[str] | None = None, program: str = DEFAULT_PROGRAM) -> int:
    """Invoke `command` as `program` (the command as the user invoked it: the root context's name, which usage
    lines and hints show); print any usage error as a single line; return the exit code."""
    # SIGTERM ends like Ctrl-C (exit 143 instead of 130): the run says what it saved, no traceback.
    with handling(signal.SIGTERM, raise_terminated):
        return _run(command, argv, program)


def _run(command: click.Command, argv: Sequence[str] | None, program: str) -> int:
    given = list(argv) if argv is not None else sys.argv[1:]
    try:
        command.main(args=list(argv) if argv is not None else None, prog_name=program, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:
        # A group given no subcommand (`python main.py`, `python main.py xla`): its help, not an error.
        click.echo(exc.ctx.get_help())
        return 0
    except click.Abort as exc:
        # Click turns a KeyboardInterrupt outside a run (while parsing, importing) into a bare Abort.
        signum = interrupt_signal(exc.__context__) if exc.__context__ is not None else signal.SIGINT
        click.echo(nothing_saved(given), err=True)
        return 128 + signum
    except RunInterrupted as exc:
        click.echo(exc.format_message(), err=True)
        return exc.exit_code
    except click.ClickException as exc:
        # One line; text the user or a file gave (a -k pattern, a path) shows its control characters as escapes.
        text = exc.hint(program) if isinstance(exc, NoResultsYet) else exc.format_message()
        message = visible(" ".join(text.split()))
        click.echo(f"Error: {message}", err=True)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        click.echo(nothing_saved(given), err=True)
        return 128 + interrupt_signal(exc)
    except BrokenPipeError:
        sys.stderr.close()
        return 1
    return 0
