"""A page judges one machine: from a store that several machines append to (one PostgreSQL store for a lab, two
results files put together) it takes the runs of the latest run's machine (or `--run`'s), never sets one machine's
figure against another's, and says which runs it left out. Synthetic records, known answers."""

from __future__ import annotations

from pathlib import Path

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.build import build_verdict
from jax_benchmarks.verdict.findings import one_machine
from tests.verdict.fixtures import ENV, figure
from tests.conftest import invoke
from tests.verdict.test_cli import write

CASE = "matmul_1000x1000_float64"
LAPTOP = {**ENV, "host": "laptop", "cpu": "Laptop CPU", "cpu_cores": 8}
BOX = {**ENV, "host": "box", "cpu": "Box CPU", "cpu_cores": 64}
OLDER, NEWER = "20261124T120000Z-aaaaaa", "20261125T120000Z-bbbbbb"


def two_machines() -> list[Record]:
    """The laptop timed JAX and NumPy (JAX 2× faster there); later the box timed NumPy alone, 4× faster than the
    laptop's NumPy. Pooled, the box's NumPy (the latest NumPy figure) would be set against the laptop's JAX."""
    return (figure("xla", "jax", CASE, 0.010, run_id=OLDER, env=LAPTOP)
            + figure("xla", "numpy", CASE, 0.020, run_id=OLDER, env=LAPTOP)
            + figure("xla", "numpy", CASE, 0.005, run_id=NEWER, env=BOX))


def test_the_latest_runs_machine_is_judged_and_the_others_are_left_out() -> None:
    kept, left_out = one_machine(two_machines())
    assert {r.run_id for r in kept} == {NEWER} and left_out == (OLDER,)
    verdict = build_verdict(two_machines(), None, None, "markdown")
    matmul = next(line for line in verdict.page.splitlines() if line.startswith("| dense linear algebra: matmul"))
    assert "numpy" in matmul and "jax" not in matmul.split("|")[2]  # the box has no JAX figure: nothing compared
    assert f"Left out: 1 run(s) of another machine in the same store ({OLDER})" in verdict.page
    assert verdict.left_out.startswith("Left out: 1 run(s) of another machine")


def test_run_picks_that_runs_machine_and_names_no_other() -> None:
    # A page of one run (--run, or the run a measuring verdict just made into a shared store) pools nothing.
    kept, left_out = one_machine(two_machines(), OLDER)
    assert {r.run_id for r in kept} == {OLDER} and left_out == ()
    page = build_verdict(two_machines(), None, OLDER, "markdown").page
    assert "Left out" not in page
    matmul = next(line for line in page.splitlines() if line.startswith("| dense linear algebra: matmul"))
    assert "jax is fastest, 2.00× faster than numpy" in matmul


def test_one_machine_keeps_every_run_and_says_nothing() -> None:
    records = two_machines()[:6] + figure("xla", "pytorch", CASE, 0.015, run_id=NEWER, env=LAPTOP)
    kept, left_out = one_machine(records)
    assert kept == records and left_out == ()
    verdict = build_verdict(records, None, None, "markdown")
    assert "Left out" not in verdict.page and verdict.left_out == ""


def test_a_multi_host_runs_other_processes_stay_with_their_run() -> None:
    # Process 1 of a two-host run records its own host; the run is process 0's machine's.
    run = (figure("mnist", "flax", "train_step_128x28x28_float32", 0.05, run_id=NEWER, env=BOX,
                  params={"process_index": 0, "world_size": 2})
           + figure("mnist", "flax", "train_step_128x28x28_float32", 0.05, run_id=NEWER, env={**BOX, "host": "box2"},
                    params={"process_index": 1, "world_size": 2}))
    kept, left_out = one_machine([*run[3:], *run[:3]])  # process 1's records first in the store
    assert len(kept) == 6 and left_out == ()


def test_records_that_name_no_machine_are_not_held_against_it() -> None:
    # Records written before the machine was recorded (no host, CPU or GPU in env) stay beside any machine's.
    bare = {key: value for key, value in ENV.items() if key not in ("cpu", "cpu_cores", "gpu")}
    records = figure("xla", "jax", CASE, 0.010, run_id=OLDER, env=bare) + figure("xla", "numpy", CASE, 0.020,
                                                                                 run_id=NEWER, env=BOX)
    assert one_machine(records) == (records, ())


def test_the_cli_says_what_it_left_out_on_stderr(tmp_path: Path) -> None:
    store = tmp_path / "mixed.jsonl"
    write(store, two_machines())
    result = invoke("verdict", "--from", str(store), "--format", "markdown", "-o", str(tmp_path / "page.md"))
    assert result.exit_code == 0, result.output
    assert "Left out: 1 run(s) of another machine in the same store" in " ".join(result.stderr.split())
    assert "Left out" not in result.stdout
