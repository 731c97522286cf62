"""The page never contradicts itself (issue 48, item 6): a comparison taken on a busy machine is drawn as not judged
(a hollow grey dot, no interval, labelled) and its reason is said once."""

from __future__ import annotations

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.answer import answers
from jax_benchmarks.verdict.chart import NOT_JUDGED_COLOUR, points
from jax_benchmarks.verdict.findings import all_findings, latest_runs
from tests.verdict.fixtures import figure

BUSY = {"window_s": 0.5, "busy": True, "cores": 2, "others_cores": 1.6, "steal_cores": 0.0}
GRAD = "grad_1000_float32"


def gradients(**extra: object) -> list[Record]:
    return (figure("autograd", "numpy", GRAD, 0.8, variant="vectorised", rounds=6, **extra)  # type: ignore[arg-type]
            + figure("autograd", "jax", GRAD, 0.1, variant="vmap+jit", rounds=6, **extra))  # type: ignore[arg-type]


def test_a_busy_comparison_is_drawn_as_not_judged_and_its_reason_said_once() -> None:
    findings = all_findings(latest_runs(gradients(contention=BUSY)))
    [point] = points(answers(findings))
    assert not point.judged and point.interval is None and point.colour == NOT_JUDGED_COLOUR
    assert point.label.endswith(" · not judged (busy machine)")
    sentence = next(f.sentence for f in findings if f.key == f"autograd-{GRAD}")
    assert sentence.count("taken on a busy machine") == 1 and sentence.count("undecided after 6 rounds") == 1
    assert "(6 vs 6 round(s))" in sentence


def test_a_quiet_comparison_is_drawn_judged_with_its_interval() -> None:
    [point] = points(answers(all_findings(latest_runs(gradients()))))
    assert point.judged and point.interval is not None and point.interval[0] < 8.0 < point.interval[1]
    assert "not judged" not in point.label and point.colour != NOT_JUDGED_COLOUR


def test_the_decided_line_says_how_many_stayed_open_because_the_machine_was_busy() -> None:
    """Issue 48's goal with two CPU-bound processes beside a verdict: the page says how many comparisons were left
    undecided because their figures were taken on a busy machine."""
    from jax_benchmarks.verdict.build import machine
    from jax_benchmarks.verdict.page import decided_line

    busy, _ = machine(gradients(contention=BUSY), None, None, draw=False)
    assert "Decided: 0 of 1 comparisons; 1 stayed undecided" in decided_line(busy)
    assert "; 1 of them because their figures were taken while other processes held the cores (not judged)" in (
        decided_line(busy))
    quiet, _ = machine(gradients(), None, None, draw=False)
    assert "other processes" not in decided_line(quiet) and "Decided: 1 of 1" in decided_line(quiet)


def test_the_plain_answer_gives_a_busy_comparisons_reason_not_its_interval() -> None:
    """Seen in a quick verdict beside two CPU-bound processes: the terminal's answer said "matmul (99.9 % CI
    0.17–6×, too wide to tell)" while the page's row said "taken on a busy machine, not judged"."""
    from jax_benchmarks.verdict.answer import plain_answer

    wide = (1.0, 3.0, 0.4, 2.5, 0.5, 3.5)  # rounds that spread so the 99.9 % interval is wider than 10×
    records = (figure("autograd", "numpy", GRAD, 0.8, variant="vectorised", rounds=6, drift=wide, contention=BUSY)
               + figure("autograd", "jax", GRAD, 0.7, variant="vmap+jit", rounds=6, contention=BUSY))
    [answer] = answers(all_findings(latest_runs(records)))
    assert answer.contrast.interval is not None and answer.contrast.interval[1] / answer.contrast.interval[0] > 10
    text = " ".join(plain_answer([answer]))
    assert "taken on a busy machine" in text and "too wide" not in text and "% CI" not in text
