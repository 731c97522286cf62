"""`verdict --against` several stores of different kinds: one column per machine, ratios to the first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import invoke
from tests.store.conftest import PgServer
from tests.store.test_same_report import fill
from tests.verdict.fixtures import ENV, figure, matmul

LAPTOP = {**ENV, "cpu": "Laptop CPU", "cpu_cores": 2}
BOX = {**ENV, "cpu": "Box CPU", "cpu_cores": 16}
GPU = {**ENV, "cpu": "Host CPU", "cpu_cores": 8, "gpu": "NVIDIA H100"}


def jit_figure(env: dict[str, object], run_id: str) -> list:  # type: ignore[type-arg]
    return figure("jit", "jax", "f_10000_float32", 0.001, variant="jit", run_id=run_id, env=env)


def test_fleet_columns_from_an_sqlite_a_jsonl_and_a_postgresql_store(tmp_path: Path, pg_server: PgServer,
                                                                     pg_url: str) -> None:
    here = fill(str(tmp_path / "laptop.sqlite"),
                matmul(numpy_s=0.010, jax_s=0.005, pytorch_s=0.008, env=LAPTOP)
                + jit_figure(LAPTOP, "20261124T120000Z-aaaaaa"))
    # Twice as fast at everything; and the GPU box: JAX 5×, PyTorch 4×, NumPy the same, and no jit records.
    box = fill(str(tmp_path / "box.jsonl"),
               matmul(numpy_s=0.005, jax_s=0.0025, pytorch_s=0.004, env=BOX, run_id="20261124T130000Z-bbbbbb")
               + jit_figure(BOX, "20261124T130000Z-bbbbbb"))
    fill(pg_url, matmul(numpy_s=0.010, jax_s=0.001, pytorch_s=0.002, env=GPU, run_id="20261124T140000Z-cccccc"))
    page = invoke("verdict", "--from", here, "--against", box, "--against", pg_url, "--format", "markdown", "-o", "-")
    assert page.exit_code == 0, page.stderr
    assert pg_server.password not in page.stdout + page.stderr
    table = page.stdout[page.stdout.index("### One column per machine"):]
    assert ("| framework | Laptop CPU (2 cores), no GPU | Box CPU (16 cores), no GPU | Host CPU (8 cores), NVIDIA H100 |"
            in table)
    rows = {line.split(" | ")[0].strip("| "): line.strip("| ").split(" | ")[1:] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| framework")}
    # The jax row holds matmul and the jit figure on the laptop and the box; the GPU box has matmul only. The box's
    # jax: matmul 2× and the jit figure as fast as the laptop's, so the geometric mean is √2.
    assert rows["numpy"] == ["×1 (1 figure(s))", "×2.00 (1 figure(s))", "×1.00 (1 figure(s))"]
    assert rows["pytorch"] == ["×1 (1 figure(s))", "×2.00 (1 figure(s))", "×4.00 (1 figure(s))"]
    assert rows["jax"][0] == "×1 (2 figure(s))" and rows["jax"][2] == "×5.00 (1 figure(s))"
    assert rows["jax"][1] == "×1.41 (2 figure(s), ×1.00–×2.00)"
    # A machine without a group's records says so in one line.
    lines = [line for line in table.splitlines() if "has no records of" in line]
    assert len(lines) == 1 and "Host CPU (8 cores), NVIDIA H100 has no records of jit: that group is not compared" \
        in lines[0]
    # Each other machine has its own findings and its ratios to the first.
    assert page.stdout.count("### Between Laptop CPU (2 cores), no GPU and ") == 2


def test_a_damaged_store_among_several_is_refused_in_one_line(tmp_path: Path) -> None:
    here = fill(str(tmp_path / "here.jsonl"), matmul(numpy_s=0.010, jax_s=0.005))
    other = fill(str(tmp_path / "other.jsonl"), matmul(numpy_s=0.005, jax_s=0.005, env=BOX))
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    result = invoke("verdict", "--from", here, "--against", other, "--against", str(damaged))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "'--against'" in result.stderr and "damaged.sqlite" in result.stderr


def test_verdict_appends_to_the_store_every_command_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import click

    from jax_benchmarks.settings import BenchSettings
    from jax_benchmarks.store.location import LocationParam
    from jax_benchmarks.verdict.cli import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JAX_BENCHMARKS_RESULTS", raising=False)
    [results] = [p for p in cli.params if p.name == "results"]
    default = LocationParam().convert(results.get_default(click.Context(cli)), results, None)
    assert default == BenchSettings().results and str(default).startswith(str(tmp_path))
    monkeypatch.setenv("JAX_BENCHMARKS_RESULTS", str(tmp_path / "team.sqlite"))
    default = LocationParam().convert(results.get_default(click.Context(cli)), results, None)
    assert default == BenchSettings().results and str(default) == str(tmp_path / "team.sqlite")
