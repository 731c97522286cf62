"""Sequential rounds (verdict/sequential.py): rounds are added to the groups whose findings are undecided and could be
decided within the budget, until each is decided, none left open can be, or the budget is spent; a budget too small
for one round is refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.store.location import as_location
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict import cli as verdict_cli
from jax_benchmarks.cli.rounds import RoundDone
from jax_benchmarks.verdict.cli import add_rounds
from jax_benchmarks.verdict.findings import latest_runs
from jax_benchmarks.verdict.scale import SCALES, Scale, Step
from jax_benchmarks.verdict.sequential import (Settle, figures_measured, figures_wanted, measured_round_s, next_round,
                                              RoundKey, open_groups, rounds_wanted, settle_by_group)
from tests.conftest import invoke
from tests.verdict.fixtures import RUN, figure

CASE = "matmul_1000x1000_float64"
# Per round: drift of ±2 %, numpy's the mirror of jax's: 3 rounds cannot tell a 10 % difference from the 5 % margin.
DRIFT = (1.00, 1.02, 0.98, 1.01, 0.99, 1.00, 1.02, 0.98, 1.01, 0.99, 1.0, 1.0)
SCALE = Scale("quick", 3, (Step("xla", "all", ("--quick",), 5.0), Step("scipy", "all", ("--quick",), 5.0)), "test")


def xla_round(index: int, numpy_s: float = 0.0110) -> list[Record]:
    """Round `index` of jax (10 ms) against numpy (`numpy_s`): the same drift pattern, mirrored."""
    jax = figure("xla", "jax", CASE, 0.0100, rounds=index + 1, drift=DRIFT)[index]
    numpy = figure("xla", "numpy", CASE, numpy_s, rounds=index + 1, drift=tuple(reversed(DRIFT)))[index]
    return [jax, numpy]


def test_only_groups_with_an_undecided_finding_get_another_round() -> None:
    undecided = [r for i in range(3) for r in xla_round(i)]
    assert open_groups(settle_by_group(latest_runs(undecided), 0.98)) == ["xla"]
    wanted = rounds_wanted(settle_by_group(latest_runs(undecided), 0.98))
    assert list(wanted) == ["xla"] and wanted["xla"] >= 1
    clear = figure("xla", "jax", CASE, 0.005) + figure("xla", "numpy", CASE, 0.010)
    assert open_groups(settle_by_group(latest_runs(clear), 0.98)) == []
    assert rounds_wanted(settle_by_group(latest_runs(clear), 0.98)) == {}
    more = next_round(SCALE, 3, {"xla": 1}, spent_s=30.0, budget_s=240.0, pace=1.0)
    assert more is not None and [s.group for s in more.steps] == ["xla"] and more.rounds == 4
    assert next_round(SCALE, 3, {}, 30.0, 240.0, 1.0) is None  # nothing undecided
    assert next_round(SCALE, 3, {"xla": 1}, 236.0, 240.0, 1.0) is None  # 5 s more would pass the budget
    assert next_round(SCALE, 3, {"xla": 1}, 200.0, 240.0, 10.0) is None  # at this pace a round takes 50 s


def test_a_group_gets_a_round_only_where_the_rounds_it_needs_fit_the_budget() -> None:
    # 10 s of budget left, 5 s a round: a comparison that needs 2 more rounds gets one; one that needs 3 does not.
    assert next_round(SCALE, 3, {"xla": 2}, spent_s=230.0, budget_s=240.0, pace=1.0) is not None
    assert next_round(SCALE, 3, {"xla": 3}, spent_s=230.0, budget_s=240.0, pace=1.0) is None
    # The cheapest decision first: scipy's 1 round (5 s) before xla's 2 (10 s) when only 10 s are left.
    more = next_round(SCALE, 3, {"xla": 2, "scipy": 1}, spent_s=230.0, budget_s=240.0, pace=1.0)
    assert more is not None and [s.group for s in more.steps] == ["scipy"]


def test_a_group_s_round_costs_what_its_rounds_of_this_verdict_took_not_its_reference_figure() -> None:
    # jit has two commands (each step its own median); mnist in turns took 44-46 s where its figure says 99.
    took = [(("jit", "all", ()), 10.0), (("jit", "flax", ()), 30.0), (("jit", "all", ()), 12.0),
            (("jit", "flax", ()), 34.0), (("mnist", "all", ()), 44.0), (("mnist", "all", ()), 46.0),
            (("mnist", "all", ()), 45.0)]
    assert measured_round_s(took) == {("jit", "all", ()): 11.0, ("jit", "flax", ()): 32.0, ("mnist", "all", ()): 45.0}
    scale = Scale("standard", 3, (Step("mnist", "all", (), 99.0), Step("scipy", "all", (), 10.0)), "test")
    # 200 s left, mnist asks for 4 more: at its figure (4 × 99 s) it does not fit, at what it took (4 × 45 s) it does.
    assert next_round(scale, 3, {"mnist": 4}, spent_s=400.0, budget_s=600.0, pace=1.0) is None
    more = next_round(scale, 3, {"mnist": 4}, spent_s=400.0, budget_s=600.0, pace=1.0,
                      measured=measured_round_s(took))
    assert more is not None and [s.group for s in more.steps] == ["mnist"]
    # A group with no round measured yet costs its figure at the pace.
    assert next_round(scale, 3, {"scipy": 1}, spent_s=590.0, budget_s=600.0, pace=2.0,
                      measured={("mnist", "all", ()): 45.0}) is None


def test_a_comparison_within_its_rounds_noise_of_one_and_of_the_margin_asks_for_no_rounds() -> None:
    # An equal pair whose rounds spread by ±20 %: neither "the same within ±5 %" nor a difference off 1 is decided
    # within 100 rounds a side at that spread.
    noisy = (1.0, 1.2, 0.8)
    edge = (figure("xla", "jax", CASE, 0.0100, drift=noisy)
            + figure("xla", "numpy", CASE, 0.0100, drift=tuple(reversed(noisy))))
    assert open_groups(settle_by_group(latest_runs(edge), 0.98, 5.0)) == ["xla"]
    assert rounds_wanted(settle_by_group(latest_runs(edge), 0.98, 5.0)) == {}


def test_a_budget_too_small_for_every_open_group_buys_rounds_for_the_cheapest() -> None:
    scale = Scale("quick", 3, (Step("xla", "all", (), 20.0), Step("jit", "all", (), 5.0), Step("jit", "flax", (), 4.0),
                               Step("scipy", "all", (), 6.0)), "test")
    more = next_round(scale, 3, {"xla": 1, "jit": 1, "scipy": 1}, spent_s=200.0, budget_s=216.0, pace=1.0)
    # 16 s left: scipy (6 s) and then jit (both its steps, 9 s) fit; xla (20 s) does not.
    assert more is not None and [(s.group, s.command) for s in more.steps] == [("jit", "all"), ("jit", "flax"),
                                                                              ("scipy", "all")]
    assert more.rounds == 4


def test_a_group_s_added_round_runs_only_the_steps_whose_figures_its_open_findings_rest_on() -> None:
    """jit's `flax` step (30-40 s a round) records only Flax's figures: a round added for `jax jit against eager`,
    which `jit all` records, runs `jit all` alone and costs what `jit all` takes, so it fits where both would not."""
    scale = Scale("standard", 3, (Step("xla", "all", (), 14.0), Step("jit", "all", (), 15.0),
                                  Step("jit", "flax", (), 35.0)), "test")
    all_three = frozenset({"numpy", "pytorch", "jax"})
    runs = {("xla", "all"): all_three, ("jit", "all"): all_three, ("jit", "flax"): frozenset({"flax"})}
    # 40 s left: jit's two steps (50 s) do not fit; the one its open finding needs (15 s) does.
    assert next_round(scale, 3, {"jit": 1}, spent_s=440.0, budget_s=480.0, pace=1.0) is None
    jax, flax = ("jax", "f_100000_float32"), ("flax", "train_step_128x28x28_float32")
    more = next_round(scale, 3, {"jit": 1}, spent_s=440.0, budget_s=480.0, pace=1.0, needs={"jit": frozenset({jax})},
                      runs=runs)
    assert more is not None and [(s.group, s.command) for s in more.steps] == [("jit", "all")]
    flax_open = next_round(scale, 3, {"jit": 1}, 400.0, 480.0, 1.0, needs={"jit": frozenset({flax})}, runs=runs)
    assert flax_open is not None and [(s.group, s.command) for s in flax_open.steps] == [("jit", "flax")]
    both = next_round(scale, 3, {"jit": 1}, 400.0, 480.0, 1.0, needs={"jit": frozenset({flax, jax})}, runs=runs)
    assert both is not None and [(s.group, s.command) for s in both.steps] == [("jit", "all"), ("jit", "flax")]
    # Each step runs only the cases of its own backends' open figures.
    assert [s.cases for s in both.steps] == [("f_100000_float32",), ("train_step_128x28x28_float32",)]


def test_an_added_round_runs_only_the_cases_its_open_findings_rest_on() -> None:
    """xla's open matmul rests on one of its six cases: the added round runs `-k` that case (in place of the step's
    own `-k`), and once such a round has run it costs what it took (4.6 s), not a whole round (9.7 s)."""
    step = Step("xla", "all", ("--quick", "-k", "matmul"), 10.0)
    scale = Scale("quick", 3, (step,), "test")
    runs = {("xla", "all"): frozenset({"numpy", "pytorch", "jax"})}
    needs = {"xla": frozenset({("jax", CASE), ("numpy", CASE)})}
    more = next_round(scale, 3, {"xla": 1}, 30.0, 240.0, 1.0, needs=needs, runs=runs)
    assert more is not None and [s.cases for s in more.steps] == [(CASE,)]
    assert more.steps[0].own_options == ("--quick", "-k", CASE) and more.steps[0].label == f"xla all --quick -k {CASE}"
    assert verdict_cli.step_name(more.steps[0]) == f"xla ({CASE})"
    # 20 s left, 4 more rounds wanted: at a whole round's 9.7 s they do not fit; at the 4.6 s the narrowed ones took,
    # they do. A narrowed round not yet run costs a whole one (an upper bound).
    whole: dict[RoundKey, float] = {("xla", "all", ()): 9.7}
    assert next_round(scale, 3, {"xla": 4}, 220.0, 240.0, 1.0, whole, needs, runs) is None
    narrowed = {**whole, ("xla", "all", (CASE,)): 4.6}
    assert next_round(scale, 3, {"xla": 4}, 220.0, 240.0, 1.0, narrowed, needs, runs) is not None
    # A step whose backends are not known runs every case: a -k that selected none of its cases would fail the round.
    unknown = next_round(scale, 3, {"xla": 1}, 30.0, 240.0, 1.0, needs=needs, runs={})
    assert unknown is not None and unknown.steps == (step,) and step.own_options == step.options
    # Where the open findings rest on every case its backends measured, the round is a whole one (no -k of them all).
    inverse = "inverse_1000x1000_float64"
    measures = figures_measured({"xla": [*xla_round(0), *(r.model_copy(update={"case": inverse}) for r in xla_round(0))]})
    assert measures == {"xla": frozenset({("jax", CASE), ("numpy", CASE), ("jax", inverse), ("numpy", inverse)})}
    only_matmul = next_round(scale, 3, {"xla": 1}, 30.0, 240.0, 1.0, needs=needs, runs=runs, measures=measures)
    assert only_matmul is not None and [s.cases for s in only_matmul.steps] == [(CASE,)]
    every = next_round(scale, 3, {"xla": 1}, 30.0, 240.0, 1.0, needs=measures, runs=runs, measures=measures)
    assert every is not None and every.steps == (step,)


def test_the_backends_a_finding_rests_on_come_from_its_records_and_its_answer() -> None:
    undecided = [r for i in range(3) for r in xla_round(i)]
    settle = settle_by_group(latest_runs(undecided), 0.98)
    assert figures_wanted(settle) == {"xla": frozenset({("jax", CASE), ("numpy", CASE)})}
    # A finding that rests on no record (a time to accuracy no run reached) leaves its group's steps all needed.
    flax = frozenset({("flax", "train_step_128x28x28_float32")})
    assert figures_wanted({"mnist": [Settle(1), Settle(2, flax)], "jit": [Settle(0)]}) == {}
    assert verdict_cli.step_backends(Step("jit", "flax", ())) == frozenset({"flax"})
    assert verdict_cli.step_backends(Step("mnist", "pytorch", ("--compile",))) == frozenset({"pytorch"})
    assert verdict_cli.step_backends(Step("jit", "all", ())) == frozenset({"numpy", "pytorch", "jax"})
    joined = Step("mnist", "all", (), in_turns=("flax", "pytorch", "pytorch --compile"))
    assert verdict_cli.step_backends(joined) == frozenset({"flax", "pytorch"})


def test_rounds_are_added_until_the_finding_is_decided(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The matmul is open, the inverse (JAX 2× faster, every round) decided from the first rounds: the added rounds
    run only the matmul (`-k`), as the real rounds would record only it."""
    store = tmp_path / "r.jsonl"
    ran: list[tuple[tuple[str, ...], int]] = []
    cases: list[tuple[tuple[str, ...], ...]] = []
    inverse = "inverse_1000x1000_float64"

    def fake_measure(scale: Scale, results: object, run_id: str, log: Path, show: object, threads: object = None,
                     first_round: int = 0) -> list[RoundDone]:
        ran.append((tuple(s.group for s in scale.steps), first_round))
        cases.append(tuple(s.cases for s in scale.steps))
        with store.open("a", encoding="utf-8") as out:
            for index in range(first_round, scale.rounds):
                decided = [r.model_copy(update={"case": inverse}) for r in xla_round(index, 0.0200)]
                ran_cases = scale.steps[0].cases or (CASE, inverse)
                out.write("".join(r.model_dump_json() + "\n" for r in (*xla_round(index), *decided)
                                  if r.case in ran_cases))
        xla = scale.steps[0]
        return [RoundDone(f"round {i}", 5.0, 0, xla.group, i, command=xla.command, cases=xla.cases)
                for i in range(first_round, scale.rounds)]

    monkeypatch.setattr(verdict_cli, "measure", fake_measure)
    done = fake_measure(SCALE, store, RUN, tmp_path / "log", None)  # the scale's 3 rounds
    rounds = add_rounds(SCALE, 240.0, as_location(store), RUN, tmp_path / "log", done, 0.98, None, 5.0)
    added = ran[1:]
    assert added and all(groups == ("xla",) for groups, _ in added)  # scipy has no records: not rerun
    assert [first for _, first in added] == list(range(3, 3 + len(added)))  # one round more each time
    records = [r for i in range(3 + len(added)) for r in xla_round(i)]
    assert open_groups(settle_by_group(latest_runs(records), 0.98, 5.0)) == []  # it stopped: the finding was decided
    assert open_groups(settle_by_group(latest_runs(records[:-2]), 0.98, 5.0)) == ["xla"]  # ... and not a round earlier
    assert len(rounds) == 3 + len(added)
    assert cases[0] == ((), ()) and all(each == ((CASE,),) for each in cases[1:]), cases


def test_no_round_is_added_that_the_budget_cannot_turn_into_a_decision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "r.jsonl"
    # 2 % apart with the margin at 5 %: undecided however many rounds this budget allows, and its rounds say so.
    five = latest_runs([r for i in range(5) for r in xla_round(i, 0.0102)])
    assert open_groups(settle_by_group(five, 0.98, 5.0)) == ["xla"]
    needed = rounds_wanted(settle_by_group(latest_runs([r for i in range(3) for r in xla_round(i, 0.0102)]), 0.98, 5.0))
    # The first three rounds take 15 s against 30 s of reference (pace 0.5): an xla round costs 2.5 s, 10 s are left.
    assert needed["xla"] * 2.5 > 10.0

    def fake_measure(scale: Scale, results: object, run_id: str, log: Path, show: object, threads: object = None,
                     first_round: int = 0) -> list[RoundDone]:
        with store.open("a", encoding="utf-8") as out:
            for index in range(first_round, scale.rounds):
                out.write("".join(r.model_dump_json() + "\n" for r in xla_round(index, 0.0102)))
        return [RoundDone(f"round {i}", 5.0, 0) for i in range(first_round, scale.rounds)]

    monkeypatch.setattr(verdict_cli, "measure", fake_measure)
    monkeypatch.setenv("COLUMNS", "80")  # a narrow terminal's width, as rich reads it
    done = fake_measure(SCALE, store, RUN, tmp_path / "log", None)
    rounds = add_rounds(SCALE, 25.0, as_location(store), RUN, tmp_path / "log", done, 0.98, None, 5.0)
    assert len(rounds) == 3  # 15 s for the first 3 (30 s of reference: pace 0.5): 2 more fit in 25 s, not enough
    said = capsys.readouterr().err.splitlines()
    assert " ".join(said) == (f"verdict run {RUN}: no round added with 10 s of --budget left: the undecided findings "
                              f"need more rounds (xla {needed['xla']} more)")
    assert all(len(line) <= 80 for line in said)  # wrapped at the console's width


def test_a_budget_too_small_for_one_round_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    store = tmp_path / "new.jsonl"
    result = invoke("verdict", "--scale", "standard", "--budget", "10", "--results", str(store))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: Invalid value for '--budget': 10 s is too small for even one round of --scale standard (about "
        f"{SCALES['standard'].one_round_s:.0f} s on a quiet 2-core CPU); allowed: at least "
        f"{SCALES['standard'].one_round_s:.0f}"]
    assert not store.exists() and not list(tmp_path.iterdir())


def test_the_page_says_how_many_comparisons_stayed_undecided() -> None:
    from jax_benchmarks.verdict.build import build_page

    clear = figure("xla", "jax", CASE, 0.005) + figure("xla", "numpy", CASE, 0.010)
    unclear = [r for i in range(3) for r in xla_round(i, 0.0106)]
    unclear = [r.model_copy(update={"case": "inverse_1000x1000_float64"}) for r in unclear]
    page = build_page(clear + unclear, None, None, "markdown")
    assert "Decided: 1 of 2 comparisons; 1 stayed undecided (at most 3 rounds a figure)." in page.splitlines()


def test_answers_are_judged_as_the_page_judges_them_one_family_across_groups() -> None:
    drift = (1.00, 1.03, 0.97)
    # JAX 25 % faster at the BFGS fit: decided when its answer is judged alone, undecided beside xla's (a matmul
    # 3 % apart, undecided): Benjamini–Hochberg over the page's answers asks more of each.
    scipy = (figure("scipy", "jax", "solve_10000_float64", 0.0100, drift=drift)
             + figure("scipy", "numpy", "solve_10000_float64", 0.0125, drift=tuple(reversed(drift))))
    xla = (figure("xla", "jax", CASE, 0.0100, drift=drift)
           + figure("xla", "numpy", CASE, 0.0103, drift=tuple(reversed(drift))))
    assert rounds_wanted(settle_by_group(latest_runs(scipy), None)) == {}
    assert rounds_wanted(settle_by_group(latest_runs(scipy + xla), None)) == {"scipy": 1, "xla": 7}
    assert sorted(open_groups(settle_by_group(latest_runs(scipy + xla), None))) == ["scipy", "xla"]


def test_the_page_says_how_many_undecided_comparisons_no_budget_would_decide() -> None:
    from jax_benchmarks.verdict.build import build_page

    clear = figure("xla", "jax", CASE, 0.005) + figure("xla", "numpy", CASE, 0.010)
    noisy = (1.0, 1.2, 0.8)  # an equal pair whose rounds spread by ±20 %: more than 100 rounds a side at ±5 %
    edge = (figure("xla", "jax", "inverse_1000x1000_float64", 0.0100, drift=noisy)
            + figure("xla", "numpy", "inverse_1000x1000_float64", 0.0100, drift=tuple(reversed(noisy))))
    page = build_page(clear + edge, None, None, "markdown", margin_pct=5.0)
    assert ("Decided: 1 of 2 comparisons; 1 stayed undecided (at most 3 rounds a figure); 1 of them would need more "
            "than 100 rounds a side here (a ratio within the rounds' noise of the margin).") in page.splitlines()


def test_an_added_jit_round_runs_jit_all_alone_when_only_its_findings_are_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the verdict's own loop (`add_rounds`): Flax's jit against eager is decided after 3 rounds, JAX's is
    not; the added rounds run `jit all` (whose rounds record JAX's figures) and never `jit flax`."""
    store = tmp_path / "r.jsonl"
    scale = Scale("standard", 3, (Step("jit", "all", (), 15.0), Step("jit", "flax", (), 35.0)), "test")
    ran: list[tuple[tuple[str, ...], int]] = []
    cases: list[tuple[tuple[str, ...], ...]] = []
    noisy = (1.0, 1.06, 0.95, 1.03, 0.98, 1.0, 1.02, 0.99, 1.01, 1.0, 1.0, 1.0)

    def step_round(command: str, index: int) -> list[Record]:
        if command == "flax":  # jit 2× faster than eager, rounds ±2 %: decided after 3
            return [figure("jit", "flax", "train_step_128x28x28_float32", seconds, variant=variant, rounds=index + 1,
                           compile_s=2.0 if variant == "jit" else None)[index]
                    for variant, seconds in (("jit", 0.15), ("eager", 0.30))]
        return [figure("jit", "jax", "f_100000_float32", seconds, variant=variant, rounds=index + 1, drift=drift,
                       compile_s=0.05 if variant == "jit" else None)[index]
                for variant, seconds, drift in (("jit", 0.0080, noisy), ("eager", 0.0092, tuple(reversed(noisy))))]

    def fake_measure(scale: Scale, results: object, run_id: str, log: Path, show: object, threads: object = None,
                     first_round: int = 0) -> list[RoundDone]:
        ran.append((tuple(s.command for s in scale.steps), first_round))
        cases.append(tuple(s.cases for s in scale.steps))
        with store.open("a", encoding="utf-8") as out:
            for step in scale.steps:
                for index in range(first_round, scale.rounds):
                    out.write("".join(r.model_dump_json() + "\n" for r in step_round(step.command, index)))
        return [RoundDone(f"round {i}", 15.0 if s.command == "all" else 35.0, 0, s.group, i, command=s.command)
                for s in scale.steps for i in range(first_round, scale.rounds)]

    monkeypatch.setattr(verdict_cli, "measure", fake_measure)
    done = fake_measure(scale, store, RUN, tmp_path / "log", None)
    add_rounds(scale, 600.0, as_location(store), RUN, tmp_path / "log", done, None, None, 10.0)
    added = ran[1:]
    assert added, "JAX's jit against eager asks for rounds the budget holds"
    assert all(commands == ("all",) for commands, _ in added), added
    # The finding rests on every case `jit all` measured here (one): whole rounds, no -k naming them all.
    assert all(each == ((),) for each in cases[1:]), cases
