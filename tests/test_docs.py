"""The docs cannot drift: every link in README.md and docs/*.md resolves, and every command they show is
run or checked against the real CLI, by the rule stated at the top of docs/README.md (each `check_*`
below is one row of its table). Commands are the `$ ` lines of ```console blocks; a command in any other
kind of block fails this test, so none escapes the rule.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from jax_benchmarks.groups import BENCHMARK_GROUPS
from jax_benchmarks.store.record import Record
from tests.conftest import invoke
from tests.report.fixtures import all_records, record, write_results, xla_rounds

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
README_MAX_LINES = 200

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")
# [text](target) and ![alt](target); the target ends at the first space or closing parenthesis.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
SHELL_BLOCKS = {"bash", "sh", "shell", "zsh", "console"}
# Options that make a command start other processes: such a command is parsed, never run here.
PROCESS_OPTIONS = {"--launch-local", "--num-processes", "--process-id", "--coordinator"}
LAUNCHERS = {"srun", "torchrun", "mpirun"}
CLI_PROGRAMS = {"jax-benchmarks", ".venv/bin/jax-benchmarks"}
PYTHONS = {"python", "python3", ".venv/bin/python", ".venv/bin/python3"}
PYTESTS = {"pytest", ".venv/bin/pytest"}
COMPLETION_VAR = "_JAX_BENCHMARKS_COMPLETE"  # Click's: _{PROG_NAME}_COMPLETE


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Command:
    page: Path
    line: int  # 1-based line of the `$ ` line
    text: str  # without the `$ ` prompt, continuation lines joined
    output: tuple[str, ...]  # the lines shown under it, up to the next command

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> Iterator[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    start, fence, lang = 0, "", ""
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if not fence:
            if match:
                start, fence, lang, body = number, match.group(2), match.group(3), []
        elif line.strip() == fence:
            yield Block(page, start, lang, tuple(body))
            fence = ""
        else:
            body.append(line)


def outside_fences(page: Path) -> Iterator[tuple[int, str]]:
    """The lines outside fenced blocks, as written, with their line numbers."""
    fence = ""
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if not fence and match:
            fence = match.group(2)
        elif fence and line.strip() == fence:
            fence = ""
        elif not fence:
            yield number, line


def prose_lines(page: Path) -> Iterator[tuple[int, str]]:
    """The lines outside fenced blocks, with inline code removed (a link inside code is no link)."""
    return ((number, INLINE_CODE.sub("", line)) for number, line in outside_fences(page))


def commands(block: Block) -> Iterator[Command]:
    body = [line.strip() for line in block.lines]
    index = 0
    while index < len(body):
        if not body[index].startswith("$ "):
            index += 1
            continue
        line = block.line + 1 + index
        text = body[index][2:]
        while text.endswith("\\") and index + 1 < len(body):
            index += 1
            text = text[:-1] + " " + body[index]
        index += 1
        output = []
        while index < len(body) and not body[index].startswith("$ "):
            output.append(body[index])
            index += 1
        yield Command(block.page, line, text, tuple(output))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation removed, spaces -> '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").strip().lower()
    return "".join(ch for ch in text if ch.isalnum() or ch in " -_").replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in heading_lines(page):
        base = slug(line.lstrip("#"))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def heading_lines(page: Path) -> Iterator[tuple[int, str]]:
    return ((number, line) for number, line in outside_fences(page) if re.match(r"^#{1,6} ", line))


def links() -> list[tuple[str, Path, str]]:
    found = []
    for page in PAGES:
        for number, line in prose_lines(page):
            for target in LINK.findall(line):
                if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not checked here
                    found.append((f"{page.relative_to(REPO)}:{number}:{target}", page, target))
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks(page)]
ALL_COMMANDS = [command for block in ALL_BLOCKS if block.lang == "console" for command in commands(block)]


# ---------------------------------------------------------------------------------------------- pages, links


def test_readme_is_short() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the rest belongs in docs/"


def test_the_readmes_headline_table_is_the_verdict_of_the_committed_records() -> None:
    # tools/headline_table.py --check runs `verdict --from docs/headline-cpu.jsonl --format markdown` and
    # compares its findings table with the one between the README's markers, and the page with the file.
    done = subprocess.run([sys.executable, str(REPO / "tools" / "headline_table.py"),
                           str(REPO / "docs" / "headline-cpu.jsonl"), "--page", str(REPO / "docs" / "headline-cpu.md"),
                           "--check"], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]


def test_every_docs_page_is_in_the_index() -> None:
    index = REPO / "docs" / "README.md"
    linked = {(index.parent / target.split("#")[0]).resolve() for _, page, target in links() if page == index}
    missing = [p.name for p in PAGES if p.parent == index.parent and p != index and p.resolve() not in linked]
    assert not missing, f"docs/README.md does not link {missing}"


@pytest.mark.parametrize(("where", "page", "target"), links(), ids=[where for where, _, _ in links()])
def test_link_resolves(where: str, page: Path, target: str) -> None:
    path, _, anchor = target.partition("#")
    resolved = (page.parent / path).resolve() if path else page
    assert resolved.exists(), f"{where}: {path} does not exist"
    assert resolved.is_relative_to(REPO), f"{where}: {path} is outside the repository"
    if anchor:
        assert resolved.suffix == ".md", f"{where}: an anchor into a file that is not markdown"
        assert anchor in anchors(resolved), f"{where}: no heading of {resolved.name} has the anchor #{anchor}"


def test_the_record_format_page_names_every_field() -> None:
    from jax_benchmarks.store.record import Record

    page = (REPO / "docs" / "records.md").read_text(encoding="utf-8")
    missing = [name for name in Record.model_fields if f"`{name}`" not in page]
    assert not missing, f"docs/records.md does not describe the Record field(s) {missing}"


# ---------------------------------------------------------------------------------------------- blocks


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[f"{b.page.relative_to(REPO)}:{b.line}" for b in ALL_BLOCKS])
def test_block_kind_is_checked(block: Block) -> None:
    """Commands are `$ ` lines of console blocks (so the rule below sees every one); python blocks compile."""
    if block.lang in SHELL_BLOCKS - {"console"}:
        pytest.fail(f"a ```{block.lang} block: write commands as `$ ` lines of a ```console block")
    if block.lang == "console":
        assert any(line.strip().startswith("$ ") for line in block.lines), "a console block without a `$ ` command"
    if block.lang == "python":
        compile(textwrap.dedent("\n".join(block.lines)), f"{block.page.name}:{block.line}", "exec")
    if block.lang in ("", "text"):
        shown = [line for line in block.lines if line.strip().startswith("$ ")]
        assert not shown, f"commands in a ```{block.lang or 'plain'} block are never checked: use ```console"


# ---------------------------------------------------------------------------------------------- commands


def words(text: str) -> list[str]:
    """The command's words: comments, leading VAR=value assignments and output redirections removed."""
    argv = shlex.split(text, comments=True)
    while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
        argv.pop(0)
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in (">", ">>", "2>", "<"):
            skip = True
        elif not re.match(r"^\d?>", word):
            kept.append(word)
    return kept


def parse_only(argv: list[str]) -> None:
    """Parse argv against the real root command, subcommand by subcommand, invoking nothing."""
    from jax_benchmarks.cli.root import cli

    command: click.Command = cli
    try:
        context = command.make_context("jax-benchmarks", list(argv))
        while isinstance(command, click.Group):
            rest = [*context._protected_args, *context.args]
            assert rest, f"`{' '.join(argv)}` names no subcommand"
            name, sub, rest = command.resolve_command(context, rest)
            assert sub is not None and name is not None
            command, context = sub, sub.make_context(name, rest, parent=context)
    except click.exceptions.Exit as exit_:  # an eager option such as --version
        assert exit_.exit_code == 0
    except click.ClickException as exc:
        pytest.fail(f"`{' '.join(argv)}`: {exc.format_message()}")


def runs_processes(argv: list[str]) -> bool:
    return any(word.split("=")[0] in PROCESS_OPTIONS for word in argv)


def asks_gpu(argv: list[str]) -> bool:
    return any(a == "--device" and b == "gpu" for a, b in zip(argv, argv[1:])) or "--device=gpu" in argv


def gpu_visible() -> bool:
    from jax_benchmarks.hardware.devices import gpu_names

    return bool(gpu_names())


def is_benchmark(argv: list[str]) -> bool:
    return (len(argv) >= 2 and argv[0] in BENCHMARK_GROUPS and not argv[1].startswith("-")
            and argv[1] not in ("evaluate", "preprocess-images"))


def expected_line(shown: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(part) for part in shown.split("…")) + "$")


def check_error(argv: list[str], shown: str) -> None:
    """The command fails with the `Error:` line shown. A benchmark command gets --list: should the error not
    come, nothing is measured (and the exit code fails the test)."""
    if asks_gpu(argv) and gpu_visible():
        pytest.skip("the error shown is for a machine without a GPU; this one has one")
    result = invoke(*argv, "--list") if is_benchmark(argv) else invoke(*argv)
    assert result.exit_code != 0, f"`{' '.join(argv)}` succeeded; the docs show it failing"
    printed = [line for line in (result.stderr + result.stdout).splitlines() if line.startswith("Error:")]
    assert any(expected_line(shown).match(line) for line in printed), (shown, printed)


def check_cli(argv: list[str], command: Command, tmp_path: Path, *, launched: bool) -> None:
    if command.output and command.output[0].startswith("Error:"):
        check_error(argv, command.output[0])
    elif launched or runs_processes(argv) or (asks_gpu(argv) and not gpu_visible()):
        # --list would refuse `--device gpu` where no GPU is visible, as it should: parse only.
        parse_only(argv)
    elif is_benchmark(argv) and "--list" in argv and command.output and not gpu_visible():
        # The docs show the list itself (of a machine without a GPU): every line shown must be printed.
        listed = {line.strip() for line in listed_output(argv, tmp_path).splitlines()}
        shown = [line for line in command.output if "..." not in line and "…" not in line]
        assert [line for line in shown if line not in listed] == [], listed
    elif is_benchmark(argv):
        result = invoke(*argv, "--list")
        assert result.exit_code == 0, f"`{command.text} --list`: {result.stderr or result.stdout}"
    elif argv[:1] == ["report"]:
        results = write_results(tmp_path / "fixture.jsonl", report_records())
        replaced = without_option(argv, "--results")
        result = invoke(*replaced, "--results", str(results))
        # 1: the regression gate's verdict (a figure slower than --fail-on-regression allows); 2 would be bad input.
        assert result.exit_code in (0, 1), f"`{' '.join(replaced)}`: {result.stderr or result.stdout}"
    elif argv == ["--version"]:
        result = invoke(*argv)
        assert result.exit_code == 0 and result.stdout.startswith("jax-benchmarks ")
    else:
        parse_only(argv)


def listed_output(argv: list[str], cwd: Path) -> str:
    """What `--list` prints. mnist in a fresh process: a Flax run sets its XLA flags before JAX loads, and
    in a process where JAX is loaded already the flags in effect (and so the cases' variant) are JAX's own."""
    if argv[0] != "mnist":
        result = invoke(*argv)
        assert result.exit_code == 0, result.stderr
        return result.stdout
    listed = subprocess.run([sys.executable, str(REPO / "main.py"), *argv], capture_output=True, text=True,
                            cwd=cwd, timeout=300)
    assert listed.returncode == 0, listed.stderr
    return listed.stdout


def without_option(argv: list[str], option: str) -> list[str]:
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == option:
            skip = True
        elif not word.startswith(option + "="):
            kept.append(word)
    return kept


def report_records() -> list[Record]:
    """The report tests' runs, plus mnist training epochs at 1 and 2 processes (what `--scaling` reads)."""
    epochs = [
        record(run_id, "2025-01-03T10:00:00+00:00", "mnist", backend, "train_epoch_128x28x28_float32", [seconds],
               metrics={"images_per_s": 4000 / seconds}, params={"world_size": world_size, "process_index": 0})
        for run_id, backend, world_size, seconds in (
            ("20250103T100000Z-eeeeee", "flax", 1, 4.0), ("20250103T110000Z-ffffff", "flax", 2, 3.0),
        )
    ]
    # Two --rounds 5 runs of xla on the same machine, the later one slower at matmul: what
    # `report --baseline previous --fail-on-regression` judges (single-round runs it refuses to judge).
    gated = [*xla_rounds("20250104T100000Z-aaaaaa", "2025-01-04T10:00:00+00:00"),
             *xla_rounds("20250105T100000Z-bbbbbb", "2025-01-05T10:00:00+00:00", slowdown={"matmul_100x100_float64": 2.0})]
    return [*all_records(), *epochs, *gated]


def check_pytest(args: list[str]) -> None:
    declared = {marker.split(":")[0].strip() for marker in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]}
    for flag, value in zip(args, [*args[1:], ""]):
        if flag == "-m":
            used = set(re.findall(r"[A-Za-z_]\w*", value)) - {"and", "or", "not"}
            assert used <= declared, f"marker(s) {used - declared} not declared in pyproject.toml"
    for word in args:
        if word.startswith("tests"):
            path = REPO / word.split("::")[0]
            assert path.exists(), f"{word} does not exist"


def check_script(path: str) -> None:
    script = REPO / path
    assert script.is_file(), f"{path} does not exist"
    if script.suffix == ".py":
        compile(script.read_text(encoding="utf-8"), path, "exec")
    else:
        subprocess.run(["bash", "-n", str(script)], check=True)


def check_pip(args: list[str]) -> None:
    extras = set(PYPROJECT["project"].get("optional-dependencies", {}))
    targets = [word for word in args if not word.startswith("-")]
    assert targets, "pip install of nothing"
    for word in targets:
        match = re.fullmatch(r"(\.|jax-benchmarks|dist/\S+\.whl)(?:\[([\w,-]+)\])?", word)
        assert match, f"{word}: not this project (., jax-benchmarks or a built wheel)"
        asked = set(filter(None, (match.group(2) or "").split(",")))
        assert asked <= extras, f"extra(s) {sorted(asked - extras)} not declared in pyproject.toml"


def check_completion(shell: str) -> None:
    from click.testing import CliRunner

    from jax_benchmarks.cli.root import cli

    result = CliRunner().invoke(cli, [], prog_name="jax-benchmarks", env={COMPLETION_VAR: f"{shell}_source"})
    assert result.exit_code == 0 and COMPLETION_VAR in result.output, result.output


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=[c.id for c in ALL_COMMANDS])
def test_command(command: Command, tmp_path: Path) -> None:
    completion = re.search(COMPLETION_VAR + r"=(\w+)_source jax-benchmarks", command.text)
    if completion:
        check_completion(completion.group(1))
        return
    argv = words(command.text)
    program, args = argv[0], argv[1:]
    if program in LAUNCHERS:
        entry = next((i for i, word in enumerate(argv) if word in ("main.py", *CLI_PROGRAMS)), None)
        assert entry is not None, f"`{command.text}`: no main.py or jax-benchmarks to check"
        check_cli(argv[entry + 1:], command, tmp_path, launched=True)
    elif program == "./cli.sh" and args[:1] == ["test"]:
        check_pytest(args[1:])
    elif program == "./cli.sh" or program in CLI_PROGRAMS:
        check_cli(args, command, tmp_path, launched=False)
    elif program in PYTHONS and args[:1] == ["main.py"]:
        check_cli(args[1:], command, tmp_path, launched=False)
    elif program in PYTHONS and args[:2] == ["-m", "pytest"]:
        check_pytest(args[2:])
    elif program in PYTHONS and args[:3] == ["-m", "pip", "install"]:
        check_pip(args[3:])
    elif program in PYTESTS:
        check_pytest(args)
    elif program in PYTHONS and args and args[0].startswith(("benchmarks/", "tools/")):
        check_script(args[0])
    elif program.startswith(("benchmarks/", "tools/")):
        check_script(program)
    elif program in ("pip", "pipx") and args[:1] == ["install"]:
        check_pip(args[1:])
    else:
        pytest.fail(f"`{command.text}`: no rule checks this command (see the top of docs/README.md)")
