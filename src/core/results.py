"""Results store: one JSON line per measured figure, appended as soon as it exists.

A run interrupted half-way keeps every line it finished; a reader skips a
truncated or corrupt line with a warning and loses nothing else.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from src.core.environment import environment
from src.core.timing import Measurement

DEFAULT_RESULTS = Path("data/results/results.jsonl")
Scalar = float | int | str | bool | None


class Record(BaseModel):
    """One measured figure and everything needed to interpret it later."""

    model_config = ConfigDict(extra="allow")

    run_id: str
    timestamp: str
    group: str
    backend: str
    variant: str | None = None  # e.g. "jit" / "eager", shown next to the backend
    case: str
    device: str
    dtype: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    median_s: float | None = None
    iqr_s: float | None = None
    min_s: float | None = None
    repeats: int = 0
    samples_s: list[float] = Field(default_factory=list)
    compile_s: float | None = None
    noisy: bool = False
    metrics: dict[str, Scalar] = Field(default_factory=dict)
    checks: dict[str, Scalar] = Field(default_factory=dict)
    env: dict[str, Scalar] = Field(default_factory=dict)
    # --rounds N: every round (a fresh process) shares the run id and records its index (0-based).
    round_index: int | None = None
    rounds: int | None = None


def new_run_id() -> str:
    """Sortable and unique: UTC time plus a random suffix."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def append_record(path: Path, record: Record) -> None:
    """Append one complete line and flush it to disk before returning."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = record.model_dump_json() + "\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def read_records(path: Path, warn: Callable[[str], None]) -> Iterator[Record]:
    """Yield every valid record; report each bad line (with its number) through `warn`."""
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield Record.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as exc:
                reason = str(exc).splitlines()[0]
                warn(f"{path}:{number}: skipped a corrupt record ({reason})")


class Run:
    """One invocation of a benchmark command: a run id, a results file, the records.

    Backends call `record(...)`; the record is written at once. `log` is a
    sink the CLI provides, so that backends never print themselves.
    """

    def __init__(
        self,
        group: str,
        results: Path,
        log: Callable[[str], None] = lambda _msg: None,
        run_id: str | None = None,
        *,
        round_index: int | None = None,
        rounds: int | None = None,
        settings_env: dict[str, Scalar] | None = None,
    ) -> None:
        self.group = group
        self.results = results
        self.log = log
        self.run_id = run_id or new_run_id()
        self.records: list[Record] = []
        self.round_index = round_index
        self.rounds = rounds
        # Settings that decide speed and hold for the whole run (--threads, the GPU policy), recorded
        # in every record's env next to what environment() reads.
        self.settings_env = dict(settings_env or {})

    def record(
        self,
        *,
        backend: str,
        case: str,
        device: str,
        measurement: Measurement | None = None,
        variant: str | None = None,
        dtype: str | None = None,
        params: dict[str, Any] | None = None,
        compile_s: float | None = None,
        metrics: dict[str, Scalar] | None = None,
        checks: dict[str, Scalar] | None = None,
    ) -> Record:
        timing: dict[str, Any] = {}
        metrics = dict(metrics or {})
        if measurement is not None:
            if measurement.first_call_s is not None:
                metrics.setdefault("first_call_s", measurement.first_call_s)
            timing = dict(
                median_s=measurement.median_s,
                iqr_s=measurement.iqr_s,
                min_s=measurement.min_s,
                repeats=measurement.repeats,
                samples_s=list(measurement.samples_s),
                noisy=measurement.noisy,
            )
        record = Record(
            run_id=self.run_id,
            timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            group=self.group,
            backend=backend,
            variant=variant,
            case=case,
            device=device,
            dtype=dtype,
            params=params or {},
            compile_s=compile_s,
            metrics=metrics,
            checks=checks or {},
            env={**environment(), **self.settings_env},
            round_index=self.round_index,
            rounds=self.rounds,
            **timing,
        )
        append_record(self.results, record)
        self.records.append(record)
        return record
