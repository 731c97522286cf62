"""What `verdict --turns` runs (verdict/cli.py's `taken_in_turns`): each group's `all` in turns, and a step that runs
one of `all`'s backends with options of its own before `all`'s (`mnist pytorch --compile`) joined to `all`'s turns as
one more process, so that the CNN's headline pair (Flax's jitted step against torch.compile's) is paired round by
round; and the training finding judges such rounds as pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.cli.rounds import Step
from jax_benchmarks.mnist.findings import findings
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.cli import taken_in_turns
from jax_benchmarks.verdict.scale import SCALES, Scale
from tests.verdict.fixtures import epochs


def test_compiled_pytorch_joins_mnist_s_turns_at_every_scale_that_trains() -> None:
    for name in ("quick", "standard", "full"):
        scale = SCALES[name]
        [all_step, compiled] = [step for step in scale.steps if step.group == "mnist"]
        planned = taken_in_turns(scale)
        [mnist] = [step for step in planned.steps if step.group == "mnist"]
        assert mnist.command == "all" and mnist.options == all_step.options, name
        assert mnist.in_turns == ("flax", "pytorch", "pytorch --compile") and mnist.turns_from == 0, name
        assert mnist.round_s == all_step.round_s + compiled.round_s, name
        # The joined round's time is kept, not lost. Equal up to float rounding: the joined step's figure is one sum
        # rounded before the scale's sum, and Python 3.12+ sums floats with compensation (3.11 does not).
        assert planned.one_round_s == pytest.approx(scale.one_round_s, rel=1e-12, abs=0), name
        # The other groups' steps are all still there, in their order (jit flax: options of its own, not all's).
        assert [(s.group, s.command) for s in planned.steps] == [
            (s.group, s.command) for s in scale.steps if s is not compiled], name


def test_a_step_joins_only_where_every_round_of_all_is_in_turns_and_its_options_end_with_all_s() -> None:
    scale = Scale("quick", 3, (
        Step("autograd", "all", ("--quick",), 10.0),
        Step("autograd", "pytorch", ("--extra", "--quick"), 5.0),  # autograd's first round is one process: not joined
        Step("xla", "all", ("--matrix-size", "1000"), 10.0),
        Step("xla", "jax", ("--matrix-size", "2000"), 5.0),  # its own size, not all's: not joined
        Step("xla", "numpy", ("--x64", "--matrix-size", "1000"), 5.0),  # joins
        Step("xla", "nonesuch", ("--x64", "--matrix-size", "1000"), 5.0),  # not one of all's backends
    ), "a test scale")
    planned = taken_in_turns(scale)
    assert [(s.group, s.command, s.options) for s in planned.steps] == [
        ("autograd", "all", ("--quick",)), ("autograd", "pytorch", ("--extra", "--quick")),
        ("xla", "all", ("--matrix-size", "1000")), ("xla", "jax", ("--matrix-size", "2000")),
        ("xla", "nonesuch", ("--x64", "--matrix-size", "1000"))]
    autograd, _, xla, *_ = planned.steps
    assert autograd.turns_from == 1 and "pytorch --extra" not in autograd.in_turns
    assert xla.in_turns == ("numpy", "pytorch", "jax", "numpy --x64") and xla.round_s == 15.0


def in_turns(records: list[Record]) -> list[Record]:
    return [r.model_copy(update={"env": {**r.env, "turns": True}}) for r in records]


def test_the_cnn_headline_pair_taken_in_turns_is_judged_round_by_round() -> None:
    # Five rounds of one run in turns: Flax's jitted step and torch.compile's, one process each, as joined above.
    # The mode's per-round drift moves both sides alike, so the pairs decide what Welch across rounds leaves open.
    flax = epochs("flax", [10.0, 13.0, 8.0, 12.0, 9.0], [0.9], rounds=5, mode="jit")
    compiled = epochs("pytorch", [8.0, 10.4, 6.4, 9.6, 7.2], [0.9], rounds=5, mode="compile:default", compile_s=5.0)
    paired = next(f for f in findings(in_turns(flax + compiled), None) if f.key == "training")
    welch = next(f for f in findings(flax + compiled, None) if f.key == "training")
    assert "5 paired round(s)" in paired.sentence and "paired" not in welch.sentence
    assert paired.status == "found" and welch.status == "undecided"
    assert "pytorch compile:default trains 1.25× faster per step than flax" in paired.sentence


@pytest.mark.e2e
def test_a_real_mnist_round_in_turns_trains_compiled_pytorch_in_a_process_of_its_own(tmp_path: Path) -> None:
    # The quick scale's mnist step as `verdict --turns` runs it: flax, pytorch and pytorch --compile side by side.
    from jax_benchmarks.cli.rounds import round_options, run_round_in_turns

    [mnist] = [step for step in taken_in_turns(SCALES["quick"]).steps if step.group == "mnist"]
    store = tmp_path / "r.jsonl"
    done = run_round_in_turns("mnist", mnist.in_turns, [*round_options(mnist, 0), "--results", str(store)],
                              rounds=3, index=0, run_id="20261128T100000Z-dddddd", log=tmp_path / "log")
    assert (done.code, done.failure) == (0, ""), (tmp_path / "log").read_text()
    steps = [Record.model_validate_json(line) for line in store.read_text().splitlines()
             if '"train_step_' in line]
    assert sorted((r.backend, r.variant or "") for r in steps) == [
        ("flax", ""), ("pytorch", ""), ("pytorch", "compile:default")]
    assert all(r.env.get("turns") is True and r.round_index == 0 for r in steps)
    assert next(r for r in steps if r.variant == "compile:default").compile_s is not None
