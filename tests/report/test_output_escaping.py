"""Every output format escapes what it did not write itself, as that format needs (issue 47, item 3).

Records hold raw HTML, markdown, spreadsheet formulas and terminal control sequences in their CPU name, run id,
case, backend and variant, as a hostile or hand-edited results store could: the markdown page renders them as
text, a spreadsheet opening the CSV runs no formula, and no format prints a control sequence to a terminal or a
pipe (the table and JSON already did not).
"""

from __future__ import annotations

import csv
import html
import io
import json
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from jax_benchmarks.cli.console import markdown_text, spreadsheet_cell, visible_json, visible_lines, visible_warning
from tests.conftest import invoke
from tests.report.fixtures import XLA_NEW, XLA_OLD, write_results, xla_rounds
from tests.verdict.fixtures import ENV, matmul

# Terminal control: clear screen, set the window title (OSC, ended by BEL), a C1 CSI, DEL, a bidi override,
# a carriage return (overwrites the line), a backspace.
CONTROLS = ("\x1b[2J", "\x1b]0;pwned\x07", "\x9b2J", "\x7f", "\u202e", "\r", "\x08")
MARKUP = "<script>alert(1)</script> <img src=x onerror=alert(2)> *em* _u_ [link](http://evil.example) " \
         "![pixel](http://evil.example/p.png) `code` ~~gone~~ | pipe & amp \\ back"
FORMULAS = ("=HYPERLINK(\"http://evil.example\",\"x\")", "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1")


def has_control(text: str) -> bool:
    return any(not c.isprintable() and c != "\n" for c in text)


# ----------------------------------------------------------------- the functions ---

@pytest.mark.parametrize("text", [MARKUP, *CONTROLS, "# heading", "> quote", "- item", "+ item", "1. item",
                                  "12) item", "===", "---", "a\nb", "plain · text ×2",
                                  "snake_case_ok _but_ __not__ this", "\\* \\_ \\[x](y) \\x1b", "~~gone~~ ~x~"])
def test_markdown_text_renders_exactly_as_it_reads(text: str) -> None:
    rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown_text(text))
    inner = rendered.strip()
    assert inner.startswith("<p>") and inner.endswith("</p>"), rendered  # one paragraph: no heading, list, quote
    for tag in ("<script", "<img", "<a ", "<em>", "<strong>", "<code>", "<s>", "<del>"):
        assert tag not in rendered
    shown = html.unescape(inner.removeprefix("<p>").removesuffix("</p>"))
    assert shown == visible_lines(text).replace("\n", "\\n")  # the text itself, controls as escapes


@pytest.mark.parametrize("text", ["matmul_1000x1000_float64", "1.1 ms ± 30 µs ×1.50 ~", "-5.0 %", "#tag",
                                  "case[/]\\x1b[2Jx", "f(x) = 0.2·x + sin(x)"])
def test_markdown_text_leaves_what_renders_as_it_reads(text: str) -> None:
    # The raw markdown stays readable: a snake_case name, a figure, a noisy mark, a lone bracket are not markup.
    assert markdown_text(text) == text


def test_markdown_text_in_a_table_cell_stays_one_cell() -> None:
    page = "| a | b |\n|---|---|\n| " + markdown_text("x | y") + " | z |"
    rendered = MarkdownIt("commonmark").enable("table").render(page)
    assert rendered.count("<td>") == 2 and "x | y" in rendered


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_cell_a_spreadsheet_would_run_is_prefixed(formula: str) -> None:
    cell = spreadsheet_cell(formula)
    assert isinstance(cell, str) and cell.startswith("'") and not has_control(cell)


@pytest.mark.parametrize("value", [-12.5, -1, 0.0, 3, "matmul_100x100_float64", "slower", "2025-01-02T10:00:00"])
def test_numbers_and_plain_text_are_left_as_they_are(value: object) -> None:
    assert spreadsheet_cell(value) == value


def test_visible_json_keeps_the_data_and_escapes_what_json_lets_through() -> None:
    data = {"cpu": "".join(CONTROLS) + "\U000e0001 ± ×", "n": -1.5}
    text = json.dumps(data, ensure_ascii=False, indent=2)
    assert has_control(text)  # C1, DEL and the bidi override pass raw through ensure_ascii=False
    shown = visible_json(text)
    assert not has_control(shown) and json.loads(shown) == data and "± ×" in shown


def test_a_warning_that_quotes_data_shows_its_control_characters() -> None:
    # matplotlib's text for a stored label it has no glyph for: "Glyph 27 (\x1b) missing from font(s) ..."
    text = visible_warning(UserWarning("Glyph 27 (\x1b]0;pwned\x07) missing from font(s) DejaVu Sans."),
                           UserWarning, "plot.py", 3)
    assert "\x1b" not in text and "\x07" not in text and "Glyph 27 (\\x1b]0;pwned\\x07)" in text


def test_the_cli_installs_the_visible_warning_format(monkeypatch: pytest.MonkeyPatch) -> None:
    import jax_benchmarks.cli.root as root

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after the test
    monkeypatch.setattr(root, "run_cli", lambda *_args: 0, raising=False)
    with pytest.raises(SystemExit):
        root.main(["--help"])
    assert warnings.formatwarning is visible_warning


def test_matplotlib_glyph_warning_is_printed_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setattr(warnings, "formatwarning", visible_warning)  # as `main` installs it
    figure, axes = plt.subplots()
    try:
        axes.set_title("case\x1b]0;pwned\x07")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            figure.canvas.draw()
    finally:
        plt.close(figure)
    assert caught, "matplotlib no longer warns about a missing glyph"
    # What Python's default showwarning writes to stderr.
    err = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in caught)
    assert "missing from" in err and "\x1b" not in err and "\x07" not in err and "(\\x1b)" in err


# ------------------------------------------------------------------- report ---

@pytest.fixture
def hostile_store(tmp_path: Path) -> Path:
    """Two runs (a baseline and one 20 % faster at the jax matmul: a negative change), every stored string
    hostile."""
    records = (xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00")
               + xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", {"matmul_100x100_float64": 0.8}))
    env = {**records[0].env, "cpu": MARKUP + "".join(CONTROLS)}
    cases = {case: FORMULAS[i] + CONTROLS[i] + "_" + case for i, case in enumerate(dict.fromkeys(r.case for r in records))}
    hostile = [r.model_copy(update={"env": env, "case": cases[r.case], "variant": FORMULAS[3] + "".join(CONTROLS)})
               for r in records]
    return write_results(tmp_path / "hostile.jsonl", hostile)


FORMATS = ("csv", "markdown", "html", "json", "github-benchmark", "jsonl")


@pytest.mark.filterwarnings("ignore:Glyph")  # the HTML page's charts lack glyphs for the control characters
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("history", [False, True])
def test_no_format_prints_a_control_character(hostile_store: Path, fmt: str, history: bool) -> None:
    if history and fmt in ("github-benchmark", "jsonl", "html"):
        pytest.skip("no history form (html: the same page escape as without --history, and 2 s of charts)")
    extra = ["--history"] if history else [] if fmt == "jsonl" else ["--baseline", XLA_OLD]
    result = invoke("report", "--results", str(hostile_store), "--format", fmt, *extra)
    assert result.exit_code == 0, result.stderr + result.stdout
    assert not has_control(result.stdout) and not has_control(result.stderr)
    if fmt in ("json", "github-benchmark", "jsonl"):  # the data itself is kept, as JSON escapes
        text = result.stdout
        values = [json.loads(line) for line in text.splitlines()] if fmt == "jsonl" else [json.loads(text)]
        assert any("\x1b]0;pwned\x07" in text for text in strings(values))


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def test_csv_neutralises_formulas_and_keeps_numbers(hostile_store: Path) -> None:
    result = invoke("report", "--results", str(hostile_store), "--format", "csv", "--baseline", XLA_OLD)
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows
    for row in rows:
        for key, cell in row.items():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or _is_number(cell), (key, cell)
        assert row["case"].startswith("'") and row["variant"].startswith("'")
    changes = [float(row["change_pct"]) for row in rows if row["change_pct"]]
    assert any(change < 0 for change in changes)  # a figure we wrote: a negative number, unprefixed


def test_history_csv_neutralises_formulas(hostile_store: Path) -> None:
    result = invoke("report", "--results", str(hostile_store), "--format", "csv", "--history")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows and all(row["case"].startswith("'") for row in rows)
    assert all(not cell.startswith(("=", "+", "@")) for row in rows for cell in row.values())


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)


def rendered_tags(markdown: str) -> list[str]:
    parser = Tags()
    parser.feed(MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown))
    return parser.tags


@pytest.mark.parametrize("history", [False, True])
def test_report_markdown_renders_the_data_as_text(hostile_store: Path, history: bool) -> None:
    result = invoke("report", "--results", str(hostile_store), "--format", "markdown",
                    *(["--history"] if history else []))
    assert result.exit_code == 0, result.stderr
    tags = set(rendered_tags(result.stdout))
    assert not tags & {"script", "img", "a", "em", "strong", "code", "s", "del"}, tags


# ------------------------------------------------------------------ verdict ---

@pytest.mark.parametrize("where", ["cpu", "run_id", "case"])
def test_verdict_markdown_renders_the_data_as_text(tmp_path: Path, where: str) -> None:
    hostile = MARKUP + "".join(CONTROLS)
    records = matmul(1.0, 0.5, 0.8, env={**ENV, "cpu": hostile} if where == "cpu" else ENV,
                     **({"run_id": "20261124T120000Z-" + hostile} if where == "run_id" else {}))
    if where == "case":
        records = [r.model_copy(update={"case": hostile + r.case}) for r in records]
    store = write_results(tmp_path / "v.jsonl", records)
    result = invoke("verdict", "--from", str(store), "--format", "markdown", "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert not has_control(result.stdout) and not has_control(result.stderr)
    tags = set(rendered_tags(result.stdout))
    assert not tags & {"script", "img", "a", "em", "code", "s", "del"}, tags
    assert "pwned" in result.stdout  # the data is shown, not dropped


@pytest.mark.parametrize("output", [False, True])
def test_verdict_html_holds_no_control_character(tmp_path: Path, output: bool) -> None:
    records = matmul(1.0, 0.5, env={**ENV, "cpu": "".join(CONTROLS) + "<script>x</script>"})
    store = write_results(tmp_path / "v.jsonl", records)
    page = tmp_path / "page.html"
    result = invoke("verdict", "--from", str(store), *(["-o", str(page)] if output else ["-o", "-"]))
    assert result.exit_code == 0, result.stderr
    text = page.read_text(encoding="utf-8") if output else result.stdout
    assert not has_control(text) and "<script>x" not in text and "\\x1b]0;pwned\\x07" in text


@pytest.mark.parametrize("reader", ["verdict", "report"])
def test_a_store_name_with_escapes_is_escaped_in_a_warning(tmp_path: Path, reader: str) -> None:
    # A damaged line makes the reader warn, naming the store: on a terminal and piped alike (click strips a
    # colour code when piped, but not a window title), the name is shown with its escapes, not obeyed.
    store = tmp_path / "a\x1b]0;pwned\x07\x9b2Jb.jsonl"
    write_results(store, matmul(1.0, 0.5))
    with store.open("a", encoding="utf-8") as fh:
        fh.write("{damaged\n")
    args = ("verdict", "--from", str(store), "--format", "markdown") if reader == "verdict" else (
        "report", "--results", str(store))
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    assert not has_control(result.stderr)
    assert "a\\x1b]0;pwned\\x07\\x9b2Jb.jsonl" in result.stderr.replace("\n", "")


def test_a_store_name_with_escapes_is_escaped_in_the_import_note(tmp_path: Path) -> None:
    # An SQLite store first imports the JSON-lines file of the same name, and says so naming both paths.
    name = tmp_path / "a\x1b]0;pwned\x07[bold]b"
    write_results(name.with_suffix(".jsonl"), matmul(1.0, 0.5))
    result = invoke("xla", "numpy", "--matrix-size", "8", "-k", "sum", "--repeats", "2",
                    "--results", str(name.with_suffix(".sqlite")))
    assert result.exit_code == 0, result.stderr + result.stdout
    out = (result.stdout + result.stderr).replace("\n", "")
    assert not has_control(result.stdout + result.stderr)
    assert "imported 6 records from" in out and "a\\x1b]0;pwned\\x07[bold]b.jsonl" in out
