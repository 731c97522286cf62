"""`report --scaling`: how training throughput grows with the number of processes.

From the training-epoch records of process 0 (its images/s counts every
process's images: the global batch), of the groups that declare training epochs (`training_epochs` on their
entry in jax_benchmarks.groups: mnist): for each backend, device, data set and
global batch, the latest run at each process count, its median epoch images/s,
the speed-up over the 1-process run and the scaling efficiency
(images/s ÷ (processes × 1-process images/s); 1.0 is perfect). A 1-process run
on several devices of one process (`--devices N`) is not a baseline: the
baseline is one process on one device.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from jax_benchmarks.cli.console import markdown_text, spreadsheet_cell
from jax_benchmarks.groups import GROUPS
from jax_benchmarks.measure.contention import busy_fields
from jax_benchmarks.store.record import Record, of_operation

# (backend, device, dataset, global batch)
SetupKey = tuple[str, str, str, int]


@dataclass(frozen=True)
class ScalingRow:
    backend: str
    device: str
    dataset: str
    batch: int
    processes: int
    devices_per_process: int
    run_id: str
    epochs: int
    images_per_s: float
    speedup: float | None  # None: no 1-process run of this setup to compare with, or `busy`
    efficiency: float | None
    busy: bool = False  # its epochs or the 1-process run's were taken on a busy machine: not compared


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) else default


def training_groups() -> dict[str, str]:
    """The groups that declare training epochs (their `training_epochs` in jax_benchmarks.groups), each with the
    operation of its epochs' cases (mnist: `train_epoch_{batch}x28x28_float32`, or `train_epoch` in older records)."""
    return {name: entry.training_epochs for name, entry in GROUPS.items() if entry.training_epochs is not None}


def is_training_epoch(record: Record, epochs_of: Mapping[str, str]) -> bool:
    """A training epoch's record, by the operation its group declares (`epochs_of`: `training_groups`)."""
    operation = epochs_of.get(record.group)
    return operation is not None and of_operation(record.case, operation)


def median_rate(epochs: Sequence[Record]) -> float:
    """Median images/s over a run's epochs (only records whose images/s is a float get this far)."""
    return statistics.median(float(r.metrics["images_per_s"] or 0.0) for r in epochs)


def scaling_rows(records: Sequence[Record]) -> list[ScalingRow]:
    """One row per (setup, process count): its latest run, against the latest 1-process, 1-device run."""
    runs: dict[tuple[SetupKey, int, int], dict[str, list[Record]]] = {}
    epochs_of = training_groups()
    for r in records:
        if not is_training_epoch(r, epochs_of) or _int(r.params.get("process_index"), 0) != 0:
            continue
        if not isinstance(r.metrics.get("images_per_s"), float):
            continue
        setup = (r.backend, r.device, str(r.params.get("dataset")), _int(r.params.get("batch"), 0))
        shape = (setup, _int(r.params.get("world_size"), 1), _int(r.params.get("devices"), 1))
        runs.setdefault(shape, {}).setdefault(r.run_id, []).append(r)
    latest = {shape: by_run[max(by_run, key=lambda run_id: by_run[run_id][-1].timestamp)]
              for shape, by_run in runs.items()}
    rows = []
    for (setup, processes, devices), epochs in sorted(latest.items(), key=lambda item: (item[0][0], item[0][1:])):
        rate = median_rate(epochs)
        base = latest.get((setup, 1, 1))
        # A ratio to or from an epoch taken on a busy machine is not printed (measure/contention.py).
        busy = any(busy_fields(r.contention) for r in [*epochs, *(base or [])])
        base_rate = median_rate(base) if base and not busy else None
        speedup = rate / base_rate if base_rate else None
        rows.append(ScalingRow(
            backend=setup[0], device=setup[1], dataset=setup[2], batch=setup[3], processes=processes,
            devices_per_process=devices, run_id=epochs[0].run_id, epochs=len(epochs), images_per_s=rate,
            speedup=speedup, efficiency=speedup / (processes * devices) if speedup is not None else None,
            busy=busy,
        ))
    return rows


def _ratio(value: float | None, suffix: str = "") -> str:
    return "—" if value is None else f"{value:.2f}{suffix}"


def cells(row: ScalingRow) -> list[str]:
    workers = f"{row.processes}" + (f" × {row.devices_per_process} devices" if row.devices_per_process > 1 else "")
    if row.busy:
        return [row.backend, f"{row.device} · {row.dataset} · batch {row.batch}", workers,
                f"{row.images_per_s:.0f}", "busy", "busy", row.run_id]
    return [row.backend, f"{row.device} · {row.dataset} · batch {row.batch}", workers, f"{row.images_per_s:.0f}",
            _ratio(row.speedup, "×"), _ratio(row.efficiency), row.run_id]


HEADER = ["backend", "setup", "processes", "images/s", "speed-up", "efficiency", "run"]


def render_text(rows: Sequence[ScalingRow], fmt: str) -> str:
    """markdown, csv or json (the rich table is drawn by the CLI)."""
    if fmt == "json":
        return json.dumps([asdict(row) for row in rows], indent=2)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow([f.replace("-", "_").replace("/", "_per_") for f in HEADER])
        writer.writerows([spreadsheet_cell(cell) for cell in cells(row)] for row in rows)
        return out.getvalue()
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(markdown_text(cell) for cell in cells(row)) + " |" for row in rows]
    return "\n".join(lines)
