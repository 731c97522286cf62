"""The verdict's plain answer (issue 38): its first lines, against records with a known answer."""

from __future__ import annotations

import pytest

from jax_benchmarks.verdict.answer import answers, plain_answer
from jax_benchmarks.verdict.build import build_page
from jax_benchmarks.verdict.findings import all_findings, latest_runs
from jax_benchmarks.verdict.page import undecided_keys
from jax_benchmarks.verdict.sequential import decided_count
from jax_benchmarks.store.record import Record
from tests.verdict.fixtures import QUIET_DRIFT, epochs, figure, matmul

GRAD = "grad_1000_float32"


def gradients(numpy_s: float, jax_s: float, **kwargs: object) -> list[Record]:
    return (figure("autograd", "numpy", GRAD, numpy_s, variant="vectorised", **kwargs)  # type: ignore[arg-type]
            + figure("autograd", "jax", GRAD, jax_s, variant="vmap+jit", **kwargs))  # type: ignore[arg-type]


def answer_lines(records: list[Record]) -> list[str]:
    return plain_answer(answers(all_findings(latest_runs(records))))


def test_jax_faster_is_worth_it_with_its_ratio() -> None:
    lines = answer_lines(gradients(0.8, 0.1))
    assert lines[0] == "On this machine JAX is worth it for gradients (×8.0)."
    assert len(lines) == 2 and "at the margin ±10 %" in lines[1]


def test_another_framework_faster_or_the_same_is_not_worth_it() -> None:
    lines = answer_lines(matmul(1.0, 2.0, 0.5) + gradients(0.8, 0.1))
    assert lines[0] == "On this machine JAX is worth it for gradients (×8.0)."
    assert lines[1] == "Not for dense linear algebra: matmul (pytorch 4.0× faster)."
    same = answer_lines(matmul(1.0, 1.0, rounds=8, drift=QUIET_DRIFT))
    assert same[0].startswith("On this machine JAX is not worth it for dense linear algebra: matmul (the same within ±")


def test_too_few_rounds_or_an_interval_wider_than_10x_is_undecided() -> None:
    few = answer_lines(matmul(1.0, 0.25, rounds=1))
    assert few[0] == "On this machine it is undecided for dense linear algebra: matmul (undecided after 1 round: too few rounds to judge, 3 needed a side)."
    wild = answer_lines(matmul(1.0, 0.5, drift=(0.05, 1.0, 20.0)))  # JAX's rounds 400× apart
    assert wild[0].startswith("On this machine it is undecided for dense linear algebra: matmul (99.9 % CI ")
    assert "too wide to tell" in wild[0]


def test_no_jax_beside_another_framework_says_so() -> None:
    lines = answer_lines(figure("xla", "numpy", "matmul_1000x1000_float64", 1.0))
    assert lines[0].startswith("No answer yet")


@pytest.mark.parametrize("output_format", ["markdown", "html"])
def test_the_page_opens_with_the_answer_and_the_scale(output_format: str) -> None:
    page = build_page(matmul(1.0, 2.0, 0.5) + gradients(0.8, 0.1), None, None, output_format,  # type: ignore[arg-type]
                      scale="quick")
    if output_format == "markdown":
        lines = page.splitlines()
        assert lines[0] == "## Is JAX worth it on this machine, for my kind of work?"
        assert lines[2] == "On this machine JAX is worth it for gradients (×8.0)."
        assert lines[3] == "Not for dense linear algebra: matmul (pytorch 4.0× faster)."
        assert lines[5].startswith("> **quick scale: a smoke test, not a result · Test CPU (2 cores)")
    else:
        body = page[page.index("<body>"):]
        first = body.index("On this machine JAX is worth it for gradients (×8.0).")
        assert body.index("quick scale: a smoke test, not a result") < first < body.index("<img")
        assert first < body.index("Findings on") < body.index("Environment of the runs")


def test_the_engines_cnn_step_leaves_the_jax_question_to_mnists_train_step() -> None:
    # The engine's finding times mnist's Flax and PyTorch models on the same batch: whether JAX is worth it for
    # that CNN is the mnist finding's question, answered and counted once; the engine's finding counts by its own
    # comparison (PyTorch eager against the engine: 2× here, decided).
    case = "cnn_train_step_128x28x28_float32"
    engine = figure("autograd", "numpy", case, 2.0, variant="train step", metrics={"images_per_s": 64.0})
    torch = figure("autograd", "pytorch", case, 1.0, variant="train step", metrics={"images_per_s": 128.0})
    flax = figure("autograd", "jax", case, 1.0, variant="train step", metrics={"images_per_s": 128.0})
    records = (engine + torch + flax + epochs("flax", 10.0, [0.9], mode="jit")
               + epochs("pytorch", 10.0, [0.9], mode="compile:default"))
    found = all_findings(latest_runs(records))
    topics = {a.key: a.topic for a in answers(found)}
    assert f"autograd-{case}" not in topics and topics["training"] == "CNN training speed"
    lines = answer_lines(records)
    assert "CNN training speed" in lines[0] and "beside the engine" not in " ".join(lines)
    engines = next(f for f in found if f.key == f"autograd-{case}")
    assert engines.status == "found" and decided_count([engines], undecided_keys(answers(found))) == (1, 0)
