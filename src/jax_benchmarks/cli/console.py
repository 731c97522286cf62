"""Human output: stdout normally, stderr with --json so stdout carries only JSON.

Text that comes from data (a results file's run ids, case names, backends,
variants, environment; a path the user typed) is printed literally: `visible`
shows control characters as escapes (an ESC in a case name cannot clear the
screen or set the window title), and `literal` also escapes rich's markup (a
`[/]` in a case name is text, not a closing tag). A terminal whose encoding
cannot show `·`, `×`, `≤` gets ASCII stand-ins (`encodable_streams`) rather
than a UnicodeEncodeError.
"""

from __future__ import annotations

import codecs
import html
import io
import json
import os
import re
import sys
import textwrap
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

# Defined with the error lines (they show it too); imported from here by the printing code.
from jax_benchmarks.errors import DEFAULT_PROGRAM
from jax_benchmarks.errors import literal as literal, visible as visible

if TYPE_CHECKING:  # the root command imports this module for `encodable_streams`: `--help` loads no store
    from jax_benchmarks.run import Run
    from jax_benchmarks.settings import BenchSettings


def make_console(json_output: bool = False) -> Console:
    """The console every command prints through (emoji codes such as `:x:` in data stay text)."""
    return Console(stderr=json_output, highlight=False, emoji=False)


def visible_lines(text: str) -> str:
    """A whole output (CSV, markdown, an HTML page) with every control or format character of its lines written
    as an escape (`visible`), its line breaks kept: a terminal it is printed on, or piped through, shows an ESC
    that came from a record instead of obeying it."""
    return "\n".join(visible(line) for line in text.split("\n"))


def visible_json(text: str) -> str:
    """JSON text with the control and format characters JSON lets through raw (C1 controls such as CSI, DEL,
    bidi overrides: `ensure_ascii=False`, pydantic's dumps) written as \\u escapes: the same data, and a terminal
    shows them instead of obeying them. JSON holds such characters only inside its strings."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\n" else json.dumps(c)[1:-1] for c in text)


# What CommonMark/GFM read as markup inside a line, escaped with a backslash: `*` and backticks always; `_`
# except inside a word (snake_case is not emphasis); `~` next to a non-blank (strikethrough; "×1.50 ~" stays);
# `|` (a table cell's end); `](` (a link or an image); a backslash before punctuation (`\x1b` stays as it
# reads). `<`, `>` and `&` become entities (raw HTML, autolinks).
MARKDOWN_INLINE = re.compile(r"[*`|]|_|~(?=\S)|(?<=\S)~|\](?=\()|\\(?=[!-/:-@\[-`{-~])")
# What makes a line a heading, a list item or a setext underline where the text starts one.
MARKDOWN_LINE_START = re.compile(r"^(\s*)(?:(#{1,6}|[-+])(?=\s|$)|(\d{1,9})([.)])(?=\s|$)|([=-])(?=[=-]*\s*$))")


def _escape_inline(match: re.Match[str]) -> str:
    char, text, at = match.group(), match.string, match.start()
    if char == "_" and 0 < at < len(text) - 1 and text[at - 1].isalnum() and text[at + 1].isalnum():
        return char
    return "\\" + char


def _escape_line_start(match: re.Match[str]) -> str:
    blank, marker, digits, delimiter, underline = match.groups()
    if digits is not None:
        return f"{blank}{digits}\\{delimiter}"
    return f"{blank}\\{marker or underline}"


def markdown_text(text: object) -> str:
    """Data (a CPU name, a case, a run id, or a sentence that holds them) as markdown text that renders exactly
    as it reads: control characters visible, HTML escaped, markdown's markup characters backslash-escaped."""
    escaped = MARKDOWN_INLINE.sub(_escape_inline, html.escape(visible(str(text)), quote=False))
    return MARKDOWN_LINE_START.sub(_escape_line_start, escaped, count=1)


def markdown_row(cells: Iterable[object]) -> str:
    """A markdown table row of data, each cell shown exactly as it reads (`markdown_text`: a `|` stays in its cell)."""
    return "| " + " | ".join(markdown_text(cell) for cell in cells) + " |"


# OWASP's CSV injection: a cell that starts with one of these is a formula to a spreadsheet.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> object:
    """A CSV cell: text that came from data with its control characters visible and, where a spreadsheet would
    take it for a formula (OWASP: starting with = + - @ tab or carriage return), prefixed with `'`; numbers
    (our own figures, negative ones too) stay numbers."""
    if not isinstance(value, str):
        return value
    return "'" + visible(value) if value.startswith(FORMULA_STARTS) else visible(value)


def print_whole_words(console: Console, text: str) -> None:
    """`text` (data: printed literally) wrapped at the console's width between words, as rich wraps a note, except
    that a word wider than the console stays whole on a line of its own instead of being cut at the edge: an
    XLA flag (`--xla_cpu_experimental_ynn_fusion_type=LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT` and its `XLA_FLAGS=`)
    can then be found with grep and copied."""
    lines = textwrap.wrap(text, width=console.width, break_long_words=False, break_on_hyphens=False)
    for line in lines or [""]:
        console.print(literal(line), overflow="ignore", crop=False)  # already wrapped: printed as it is


def invoked_as(argv0: str) -> str:
    """The command as the user typed it, from the path Python was started with (sys.argv[0]): `python main.py`
    (a checkout), `python -m jax_benchmarks`, else `jax-benchmarks` (the installed script). `main` gives it to
    click as the program's name, so every command reads it from its context (`program_name`)."""
    name = os.path.basename(argv0)
    if name == "main.py":
        return "python main.py"
    if name == "__main__.py":
        return "python -m jax_benchmarks"
    return DEFAULT_PROGRAM


# What the program's own text uses beyond ASCII, as ASCII; anything else becomes a \\x.. / \\u.... escape.
ASCII_STAND_INS = {
    "·": ".", "×": "x", "≤": "<=", "≥": ">=", "±": "+-", "µ": "u", "—": "-", "–": "-", "…": "...", "÷": "/",
    "²": "^2", "³": "^3", "⁻": "^-", "¹": "1", "→": "->", "≈": "~", "≠": "!=", "−": "-", "‘": "'", "’": "'",
    "“": '"', "”": '"', "✓": "ok", "✗": "x", "█": "#", "━": "-", "─": "-", "│": "|", "┃": "|",
}
ASCII_ERRORS = "jax_benchmarks.ascii"


def _ascii_stand_in(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start:error.end]
    return "".join(ASCII_STAND_INS.get(c) or c.encode("ascii", "backslashreplace").decode("ascii")
                   for c in text), error.end


codecs.register_error(ASCII_ERRORS, _ascii_stand_in)


def encodable_streams() -> None:
    """stdout and stderr write what their encoding cannot hold (PYTHONIOENCODING=ascii, a C locale) as ASCII
    stand-ins instead of raising UnicodeEncodeError; a UTF-8 stream is left as it is."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and codecs.lookup(stream.encoding).name != "utf-8":
            stream.reconfigure(errors=ASCII_ERRORS)


def visible_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                    line: str | None = None) -> str:
    """Python's warning text with its control characters shown as escapes (`visible_lines`): a library's
    warning may quote data, e.g. matplotlib's "Glyph 27 (\x1b) missing from font(s)" for a stored label."""
    return visible_lines(PYTHON_FORMATWARNING(message, category, filename, lineno, line))


PYTHON_FORMATWARNING = warnings.formatwarning


def visible_warnings() -> None:
    """Every warning this process prints (matplotlib's, the frameworks') shows control characters as escapes."""
    warnings.formatwarning = visible_warning


def print_run_header(console: Console, run: Run, settings: BenchSettings) -> None:
    from jax_benchmarks.frameworks.available import listed
    from jax_benchmarks.frameworks.descriptors import header_versions, registered
    from jax_benchmarks.hardware.devices import device_text
    from jax_benchmarks.hardware.environment import environment
    from jax_benchmarks.report.envdiff import cpu_text

    env = environment()
    gpu = env["gpu"] or "no GPU"
    console.print(
        f"run {run.run_id} · device {device_text(settings.device)} · {cpu_text(env)} · {gpu}\n"
        + " · ".join(f"{name} {env[name]}" for name in ("python", *header_versions())
                     if env[name] is not None)  # a framework not installed is not named
    )
    if env["gpu"]:
        # The frameworks the policy is applied to, and what those the run imports were prepared with.
        applied_to = listed([descriptor.label for descriptor in registered() if descriptor.precision is not None])
        prepared = [f" · {descriptor.prepared_label} {run.settings_env[descriptor.prepared_setting]}"
                    for descriptor in registered() if descriptor.prepared_setting in run.settings_env]
        console.print(
            f"GPU policy ({applied_to} alike): float32 products and convolutions in "
            f"{run.settings_env.get('precision')}"
            f" · convolution autotuning {'on' if run.settings_env.get('conv_autotune') else 'off'}"
            + "".join(prepared)
        )


class RichProgress:
    """Progress bars for `jax_benchmarks.measure.progress.Progress`: one line per open bar, removed when the work ends.

    Drawn on the console's stream (stderr with --json), so stdout stays clean JSON.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bars: Any = None  # a rich.progress.Progress while any bar is open
        self.open: list[Any] = []  # task ids, innermost last

    def start(self, label: str, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        if self.bars is None:
            self.bars = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                TextColumn("{task.fields[detail]}"), console=self.console, transient=True,
            )
            self.bars.start()
        self.open.append(self.bars.add_task(label, total=total, detail=""))

    def advance(self, detail: str = "") -> None:
        if self.open:
            self.bars.update(self.open[-1], advance=1, detail=detail)

    def stop(self) -> None:
        if self.open:
            self.bars.remove_task(self.open.pop())
        if not self.open and self.bars is not None:
            self.bars.stop()
            self.bars = None
