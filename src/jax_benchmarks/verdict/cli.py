"""`python main.py verdict`: every group at a named scale, then one page of findings.

    verdict --scale quick                      measure (each group's rounds in fresh processes), then the page
    verdict --from RESULTS                     the page from records already measured, nothing run
    verdict --from A --against B               two machines side by side, with the ratios between them
    verdict --from A --against B --against C   the fleet: one column per machine, each against A

Each round of each group is its own process, started by the one round loop `--rounds` and `calibrate` use too
(cli/rounds.py: a round whose process died is run once more; one that dies twice is said in its group's
findings and not judged), recorded under the verdict's one run id with its round index, so that `report --baseline` and the
findings can judge the variation between rounds. The children's output goes to a log file beside the
store (store/location.py's `side_folder`); this command draws which group runs and how long is left, on stderr. The page goes to a new file
beside the store (or to --output; `-o -`: stdout), and stdout says the plain answer and the page's path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

import click

from jax_benchmarks.cli.choice import ProgramCommand
from jax_benchmarks.errors import Failed, interrupt_signal, interrupted
from jax_benchmarks.settings import FiniteFloatRange, lock_timeout_option
from jax_benchmarks.store.sqlite import LOCK_TIMEOUT_S
from jax_benchmarks.store.location import (DefaultStoreOption, LocationParam, ResultsLocation, as_location, default_text,
                                           saved_count, side_folder)
from jax_benchmarks.cli.rounds import RoundDone, Step, duration_text, run_steps
from jax_benchmarks.verdict.findings import FailedRound
from jax_benchmarks.verdict.scale import SCALE_NAMES, SCALES, Scale, ScaleName, seconds_left

Format = Literal["html", "markdown"]


class VerdictFailed(Failed):
    """A group's round failed: the others still ran and the page was written; exit 1."""


def profiled(scale: Scale) -> Scale:
    """`scale` with `--profile` given to every step's rounds (measure/profile.py's untimed pass)."""
    return replace(scale, steps=tuple(replace(step, options=(*step.options, "--profile")) for step in scale.steps))


def taken_in_turns(scale: Scale) -> Scale:
    """`scale` with each group's `all` step taken in turns (`--turns`: cli/commands.py's `turn_plan`).

    A step of the same group that runs one of `all`'s backends with options of its own before `all`'s (`mnist pytorch
    --compile` beside `mnist all`) joins `all`'s turns as one more process (`joins_turns`), where every round of `all`
    is taken in turns: its figures are then paired round by round with the others' (the CNN's headline pair, Flax's
    jitted step against torch.compile's, which two separate steps never pair), and it starts no round of its own. The
    joined step's round time is added to `all`'s (an upper bound: in turns the processes' untimed work overlaps)."""
    from jax_benchmarks.cli.commands import turn_plan

    steps, joined = [], set()
    for step in scale.steps:
        backends, first = turn_plan(step.group) if step.command == "all" else ((), 0)
        joining = [other for other in scale.steps if backends and first == 0 and joins_turns(other, step, backends)]
        joined.update(joining)
        steps.append(replace(step, in_turns=(*backends, *(own_command(other, step) for other in joining)),
                             turns_from=first, round_s=step.round_s + sum(other.round_s for other in joining)))
    return replace(scale, steps=tuple(step for step in steps if step not in joined))


def joins_turns(other: Step, all_step: Step, backends: Sequence[str]) -> bool:
    """Whether `other` runs one of `all_step`'s `backends` with options of its own before all of `all_step`'s."""
    own = len(other.options) - len(all_step.options)
    return (other.group == all_step.group and other.command in backends and own > 0
            and other.options[own:] == all_step.options)


def own_command(other: Step, all_step: Step) -> str:
    """`other` as one process of `all_step`'s turns: its command and the options it has before `all_step`'s."""
    return " ".join((other.command, *other.options[:len(other.options) - len(all_step.options)]))


def measure(scale: Scale, results: ResultsLocation | Path, run_id: str, log: Path,
            show: Callable[[str, int, float], None], threads: int | None = None,
            first_round: int = 0) -> list[RoundDone]:
    """Run every round (from index `first_round`) of every step, one fresh process each, through the one round loop
    (cli/rounds.py's `run_steps`: a round whose process died is run once more); `show(label, rounds done, seconds
    left)` is called before each round. A failed round is noted and the rest still run."""
    return run_steps(scale.steps, scale.rounds, results, run_id, log, lambda label, done: show(
        label, len(done), seconds_left(scale, [d.seconds for d in done])), threads, first_round)


def measure_with_progress(scale: Scale, results: ResultsLocation, run_id: str, log: Path,
                          threads: int | None = None) -> list[RoundDone]:
    """`measure`, with a bar on a terminal and one line a round otherwise (both on stderr)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from jax_benchmarks.cli.console import make_console

    console = make_console(json_output=True)
    total = scale.rounds * len(scale.steps)
    say(f"verdict run {run_id} · scale {scale.name}: {len(scale.steps)} group commands × {scale.rounds} rounds, "
        f"about {duration_text(scale.budget_s)} on {scale.reference}; output of the groups in {log}")
    if not console.is_terminal:
        return measure(scale, results, run_id, log, lambda label, finished, left: say(
            f"[{finished + 1}/{total}] {label} · about {duration_text(left)} left"), threads)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("about {task.fields[left]} left"), console=console, transient=True) as bars:
        task = bars.add_task("verdict", total=total, left=duration_text(scale.budget_s))

        def show(label: str, finished: int, left: float) -> None:
            bars.update(task, completed=finished, description=label, left=duration_text(left))

        rounds = measure(scale, results, run_id, log, show, threads)
        bars.update(task, completed=total)
    return rounds


def add_rounds(scale: Scale, budget_s: float, results: ResultsLocation, run_id: str, log: Path, done: list[RoundDone],
               target: float | None, threads: int | None, margin_pct: float) -> list[RoundDone]:
    """Sequential rounds (verdict/sequential.py): one more round of each group with an undecided finding that its
    rounds say could be decided within what is left of `budget_s` (the whole verdict's wall time) at the pace `done`
    ran (each group's at what its own rounds took: `measured_round_s`); every round run. Where undecided findings stay
    but no round is added, one line says what they would need."""
    from jax_benchmarks.verdict.findings import latest_runs, without_failed
    from jax_benchmarks.verdict.decide import MAX_ROUNDS
    from jax_benchmarks.verdict.sequential import (figures_measured, figures_wanted, measured_round_s, next_round,
                                                   open_groups, rounds_wanted, settle_by_group)
    from jax_benchmarks.verdict.source import read_results

    rounds, reference_s = list(done), scale.budget_s
    runs = {(step.group, step.command): step_backends(step) for step in scale.steps}
    while True:
        spent = sum(r.seconds for r in rounds)
        records = read_results(results, warn, run_id)[0]
        judged = without_failed(records, run_id, failed_rounds(rounds))
        chosen = latest_runs(judged, run_id)
        settle = settle_by_group(chosen, target, margin_pct)
        wanted = rounds_wanted(settle)
        more = next_round(scale, max(r.round_index or 0 for r in records) + 1, wanted, spent, budget_s,
                          spent / reference_s if reference_s else 1.0,
                          measured_round_s([((r.group, r.command, r.cases), r.seconds) for r in rounds if r.group]),
                          figures_wanted(settle), runs, figures_measured(chosen))
        if more is None:
            still = open_groups(settle)
            if still:
                needs = ", ".join(f"{group} {wanted[group]} more" if group in wanted else f"{group} more than "
                                  f"{MAX_ROUNDS}" for group in still)
                say(f"verdict run {run_id}: no round added with {duration_text(max(0.0, budget_s - spent))} of "
                    f"--budget left: the undecided findings need more rounds ({needs})")
            return rounds
        say(f"verdict run {run_id}: {', '.join(step_name(s) for s in more.steps)} undecided: round {more.rounds} "
            f"({duration_text(budget_s - spent)} of --budget left)")
        rounds += measure(more, results, run_id, log, lambda label, finished, left: None, threads, more.rounds - 1)
        reference_s += sum(step.round_s for step in more.steps)


def step_backends(step: Step) -> frozenset[str]:
    """The backends whose figures a step's rounds record: a backend's own command's ('flax'; 'pytorch' of `pytorch
    --compile`), or, for `all`, the group's backends in `all` that are installed (cli/commands.py's `turn_plan`) and
    those joined to its turns; empty where they are not known (fewer than two installed): such a step serves every
    finding of its group (verdict/sequential.py's `next_round`)."""
    from jax_benchmarks.cli.commands import turn_plan

    if step.command != "all":
        return frozenset({step.command})
    backends = turn_plan(step.group)[0]
    return frozenset((*backends, *(process.split()[0] for process in step.in_turns))) if backends else frozenset()


def step_name(step: Step) -> str:
    """'jit' for a group's `all`, 'jit flax' for another of its commands; the cases after it where the step runs
    only some ('xla (matmul_1000x1000_float64)')."""
    name = step.group if step.command == "all" else f"{step.group} {step.command}"
    return f"{name} ({', '.join(step.cases)})" if step.cases else name


def failed_rounds(rounds: Sequence[RoundDone]) -> list[FailedRound]:
    """The rounds whose process died twice (cli/rounds.py): their group, index and what ended them."""
    return [(r.group, r.index, r.failure) for r in rounds if r.failure]


def checked_input(location: ResultsLocation, option: str) -> ResultsLocation:
    """A store to read, checked before any work as `report` checks its --results (opened read-only)."""
    from jax_benchmarks.errors import NoResultsYet
    from jax_benchmarks.settings import readable_store

    try:
        return readable_store(location)
    except NoResultsYet as exc:  # its hint names the program as invoked, filled in where it is printed
        raise exc.for_option(option) from None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=f"'{option}'") from None


def checked_output(path: Path, reads: Sequence[ResultsLocation] = (), force: bool = False) -> Path:
    """Refuse, before anything runs, a page path that is not a regular file or could not be made, that is (or
    is a file of) a store the verdict reads or appends to (`reads`), or holds results data, or is an existing
    file other than a verdict page (without --force: `output_problem`); its missing folders are made only when
    the page is written (a refused command leaves none behind)."""
    from jax_benchmarks.store.jsonl import check_folder_writable
    from jax_benchmarks.store.location import output_problem
    from jax_benchmarks.verdict.page import is_verdict_page

    problem = output_problem(path, "--output", reads, replaceable=is_verdict_page, what="a verdict page",
                             force=force)
    if problem is None and not path.exists():
        try:
            check_folder_writable(path)
        except ValueError as exc:
            problem = str(exc)
    if problem:
        raise click.BadParameter(problem, param_hint="'--output'")
    return path


def round_log(results: ResultsLocation, run_id: str) -> Path:
    """The rounds' output, in the folder beside the store (`side_folder`)."""
    return side_folder(results) / f"verdict-{run_id}.log"


def default_page(store: ResultsLocation, page_id: str, output_format: Format) -> Path:
    """Where the page goes without --output: a new file beside the store the verdict reads (the measuring run's
    --results or --from), named by the measuring run's id (as its round log is) or, with --from, a new id."""
    return side_folder(store) / f"verdict-{page_id}.{'html' if output_format == 'html' else 'md'}"


def write_page(path: Path, text: str, fresh: bool) -> None:
    """The page to `path`, its folders made; a `fresh` one (the default path) never replaces a file already there."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x" if fresh else "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise click.FileError(str(path), exc.strerror) from None


def tell_answer(path: Path, answer: Sequence[str], decided: str) -> None:
    """The plain answer, the decided count and the page's path on stdout, wrapped at the console's width."""
    from jax_benchmarks.cli.console import make_console, print_whole_words

    console = make_console()
    for line in [*answer, decided, f"The whole page, with the evidence: {path}"]:
        print_whole_words(console, line)  # printed `literal`: a record's control character shows as an escape


def say(text: str) -> None:
    """A line of the verdict's progress on stderr (stdout keeps the page), wrapped at the console's width between
    words as the progress header is; a path wider than the console stays whole on its own line."""
    from jax_benchmarks.cli.console import make_console, print_whole_words

    print_whole_words(make_console(json_output=True), text)


def warn(message: str) -> None:
    """A warning about a store (its path is data): control characters shown as escapes, on a terminal or piped."""
    from jax_benchmarks.cli.console import visible

    click.echo(f"warning: {visible(message)}", err=True)


@click.command("verdict", cls=ProgramCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--scale", type=click.Choice(SCALE_NAMES), default="quick", show_default=True,
              help="How much to measure: quick (small sizes), standard, gpu (standard's "
                   + ", ".join(f"{step.group} {step.command}" for step in SCALES["gpu"].steps) + ", for one GPU), "
                   "full (the groups' default sizes). Each takes up to its default --budget, the rounds it adds to "
                   f"undecided findings included (gpu: on {SCALES['gpu'].reference}; the others: on "
                   f"{SCALES['standard'].reference}): "
                   + ", ".join(f"{name} {duration_text(SCALES[name].default_budget_s)}" for name in SCALE_NAMES) + ".")
@click.option("--from", "from_path", type=LocationParam(), default=None,
              help="Build the page from the records already in this results store (a .jsonl or SQLite file, or a "
                   "postgresql:// URL), read only; nothing is run.")
@click.option("--against", "against_paths", type=LocationParam(), multiple=True,
              help="Another machine's results store (a .jsonl or SQLite file, or a postgresql:// URL), read only; "
                   "repeat it for several: their findings side by side, one column per machine with the ratios to "
                   "the first (--from or the measuring run).")
@click.option("--run", "run_id", default=None, metavar="RUN_ID",
              help="With --from: judge this run only (default: each figure from the latest run that has it).")
@click.option("--format", "output_format", type=click.Choice(["html", "markdown"]), default="html",
              show_default=True, help="html: one self-contained page; markdown: for a README or a pull request.")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True), default=None,
              help="Write the page to this file, or to stdout with - (default: a new file beside the store it reads, "
                   "verdict-ID.html or .md; the terminal then says the answer, how much was decided and the path). "
                   "An existing file is replaced only where it is a verdict page, or with --force; a results store "
                   "never.")
@click.option("--force", is_flag=True, default=False,
              help="Replace an existing --output file that is not a verdict page (never a results store, nor a "
                   "file the verdict reads).")
@click.option("--results", type=LocationParam(), default=default_text, cls=DefaultStoreOption,
              show_default=True,
              help="The store a measuring verdict appends its records to: a .jsonl or SQLite file, or a "
                   "postgresql:// URL (default: the one every command uses; $JAX_BENCHMARKS_RESULTS, where set, "
                   "replaces it).")
@click.option("--threads", type=click.IntRange(1, 1024), default=None,
              help="Threads for NumPy's BLAS/LAPACK, PyTorch and XLA alike in every group (default: each "
                   "library's own; at most the cores this process may use).")
@lock_timeout_option()
@click.option("--budget", "budget_s", type=FiniteFloatRange(0, min_open=True), default=None, metavar="SECONDS",
              help="Wall time a measuring verdict may take in all: after the scale's rounds, it adds rounds to the "
                   "groups whose findings are still undecided while one fits (default: quick 300, standard 480, gpu "
                   f"{SCALES['gpu'].default_budget_s:.0f}, full twice its estimate).")
@click.option("--margin", "margin_pct", type=FiniteFloatRange(0, 100, min_open=True), default=None,
              metavar="PERCENT",
              help="The difference worth switching for: a comparison is faster by more than it, the same within "
                   "±PERCENT, faster by a–b % (an interval crossing it) or undecided (default: 10, asv's factor "
                   "1.1; see docs/verdict.md).")
@click.option("--profile", is_flag=True, default=False,
              help="Every round also profiles each case once, untimed, after its timed samples (no figure is "
                   "measured under a profiler); the traces go to profiles/RUN_ID/ beside the store, and each "
                   "finding shows its frameworks' breakdowns (docs/profile.md).")
@click.option("--turns/--no-turns", default=False, show_default=True,
              help="Take each round of a group's `all` in turns: every framework in its own fresh process, side by "
                   "side, one timed window at a time (the others wait), so that the frameworks of a round are timed "
                   "a fraction of a second apart and each comparison is judged round by round as pairs "
                   "(docs/verdict.md, \"Rounds taken in turns\").")
@click.option("--target-accuracy", type=FiniteFloatRange(0.0, 1.0, min_open=True), default=None,
              help="Test accuracy of the 'time to accuracy' finding (default: 99 % on full MNIST, else the lowest "
                   "best accuracy of any framework and run, rounded down to a whole percent).")
def cli(scale: ScaleName, from_path: ResultsLocation | None, against_paths: tuple[ResultsLocation, ...],
        run_id: str | None,
        output_format: Format, output: Path | None, results: ResultsLocation, threads: int | None,
        budget_s: float | None, target_accuracy: float | None, margin_pct: float | None,
        lock_timeout_s: float = LOCK_TIMEOUT_S, force: bool = False, profile: bool = False,
        turns: bool = False) -> None:
    """Measure every group at --scale (each round of each group in a fresh process, one run id), then
    write one page: the findings first, each one sentence with its number and uncertainty, the evidence
    one click away. With --from, only the page. The terminal says the plain answer and where the page is.

    Example: python main.py verdict --scale quick
    """
    from jax_benchmarks.settings import writable_file
    from jax_benchmarks.store.record import new_run_id
    from jax_benchmarks.verdict.build import build_verdict
    from jax_benchmarks.verdict.source import read_results

    # --lock-timeout bounds every wait for a lock: reading --from and --against, appending to --results.
    from_path, results = (None if from_path is None else replace(from_path, lock_timeout_s=lock_timeout_s),
                          replace(results, lock_timeout_s=lock_timeout_s))
    against_paths = tuple(replace(against, lock_timeout_s=lock_timeout_s) for against in against_paths)
    if run_id is not None and from_path is None:
        raise click.BadParameter("needs --from (a measuring verdict judges its own run)", param_hint="'--run'")
    to_stdout = output == Path("-")
    page_id = new_run_id()  # a measuring verdict's run id; with --from, the page's own
    page_path = output or default_page(from_path or results, page_id, output_format)
    if not to_stdout:  # never over a store it reads or appends to: checked before any store is opened
        checked_output(page_path, [*([from_path] if from_path is not None else [results]), *against_paths], force)
    if from_path is not None:
        checked_input(from_path, "--from")
        if click.get_current_context().get_parameter_source("scale") == click.core.ParameterSource.COMMANDLINE:
            raise click.BadParameter("measures nothing with --from; give one of them", param_hint="'--scale'")
    if from_path is not None and budget_s is not None:
        raise click.BadParameter("measures nothing with --from; give one of them", param_hint="'--budget'")
    if from_path is not None and profile:
        raise click.BadParameter("measures nothing with --from (the page shows the breakdowns of profiled records "
                                 "it reads); give one of them", param_hint="'--profile'")
    if from_path is not None and turns:
        raise click.BadParameter("measures nothing with --from; give one of them", param_hint="'--turns'")
    plan = profiled(SCALES[scale]) if profile else SCALES[scale]
    plan = taken_in_turns(plan) if turns else plan
    budget = SCALES[scale].default_budget_s if budget_s is None else budget_s
    if budget < SCALES[scale].one_round_s:
        raise click.BadParameter(f"{budget:g} s is too small for even one round of --scale {scale} (about "
                                 f"{SCALES[scale].one_round_s:.0f} s on {SCALES[scale].reference}); allowed: at least "
                                 f"{SCALES[scale].one_round_s:.0f}", param_hint="'--budget'")
    for against in against_paths:
        checked_input(against, "--against")
    if threads is not None:
        from jax_benchmarks.hardware.devices import cpu_count

        if threads > cpu_count():
            raise click.BadParameter(f"{threads} threads requested but this process may use {cpu_count()} core(s); "
                                     f"allowed: 1–{cpu_count()}", param_hint="'--threads'")
    from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT

    margin = DEFAULT_MARGIN_PCT if margin_pct is None else margin_pct
    failed: list[RoundDone] = []
    twice: list[FailedRound] = []
    source: ResultsLocation | None = from_path
    used_scale: str | None = None
    if source is None:
        try:
            writable_file(as_location(results))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--results'") from None
        if profile:  # every round writes its traces there: refused before the first round, not in each
            from jax_benchmarks.settings import OptionError, writable_profiles

            try:
                writable_profiles(results)
            except OptionError as exc:
                raise click.BadParameter(str(exc), param_hint="'--profile'") from None
        # On a busy machine every framework measures with the threads that fit what others left (or as asked,
        # with a warning); the same count for all, fixed for every round (measure/oversubscription.py).
        from jax_benchmarks.measure.oversubscription import choose_threads, probe

        choice = choose_threads(threads, probe())
        if choice.line is not None:
            say(choice.line)
        threads = choice.threads
        run_id = page_id
        log = round_log(results, run_id)
        log.parent.mkdir(parents=True, exist_ok=True)  # checked writable above; made now that work starts
        try:
            rounds = measure_with_progress(plan, results, run_id, log, threads)
            rounds = add_rounds(plan, budget, results, run_id, log, rounds, target_accuracy, threads, margin)
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the round's process is ended; say what is saved
            raise interrupted(f"Interrupted: {saved_count(results, run_id)} records of verdict run "
                              f"{run_id} are saved in {results}", interrupt_signal(exc)) from None
        failed, twice = [r for r in rounds if r.code != 0], failed_rounds(rounds)
        source, used_scale = results, scale
        # A round that failed twice is not a measured round: said apart, never counted.
        say(f"verdict run {run_id}: {len(rounds) - len(twice)} rounds in "
            f"{duration_text(sum(r.seconds for r in rounds))}"
            + (f" ({len(twice)} more failed twice)" if twice else "") + f"; records in {results}")
    here, run_id = read_results(source, warn, run_id)
    others = [read_results(against, warn)[0] for against in against_paths]
    from jax_benchmarks.cli.console import visible_lines

    verdict = build_verdict(here, others, run_id, output_format, target_accuracy, used_scale,
                            [str(against) for against in against_paths], margin, twice)
    if verdict.left_out:
        say(verdict.left_out)  # stderr, wrapped at the console's width: stdout may be the page
    # The page's text as it reaches a terminal or a file that is later printed: no control character from a record.
    page = visible_lines(verdict.page)
    if to_stdout:
        click.echo(page, nl=False)
    else:
        write_page(page_path, page, fresh=output is None)
        tell_answer(page_path, verdict.answer, verdict.decided)
    if failed:
        raise VerdictFailed(f"{len(failed)} round(s) failed: {', '.join(f'{r.label} ({r.ended})' for r in failed)};"
                            " the page says which groups are missing")
