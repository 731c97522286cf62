"""A run: one invocation of a benchmark command, and the records it writes as they are measured."""

from __future__ import annotations

import signal
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jax_benchmarks.errors import ResultsWriteError, Terminated, literal
from jax_benchmarks.hardware.environment import environment
from jax_benchmarks.measure.progress import NoProgress, Progress
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.store.location import ResultsLocation, as_location, open_store
from jax_benchmarks.store.record import Output, Record, Scalar, new_run_id
from jax_benchmarks.store.sql import StoreError
from jax_benchmarks.store.views import ResultsStore


class Run:
    """One invocation of a benchmark command: a run id, where its records go (`--results`), the records.

    Backends call `record(...)`; the record is written at once (the store is opened at the first one).
    `log` and `progress` are sinks the CLI provides, so that backends never print themselves.
    """

    def __init__(
        self,
        group: str,
        results: ResultsLocation | Path | str,
        log: Callable[[str], None] = lambda _msg: None,
        run_id: str | None = None,
        *,
        round_index: int | None = None,
        rounds: int | None = None,
        settings_env: dict[str, Scalar] | None = None,
        progress: Progress | None = None,
        recording: bool = True,
    ) -> None:
        self.group = group
        # False: records are kept in `records` only, never written (a DDP rank that follows rank 0's suite).
        self.recording = recording
        # Where long work reports how far it is; the CLI draws it (src/jax_benchmarks/cli/console.py).
        self.progress: Progress = progress or NoProgress()
        self.results = as_location(results)
        self.store: ResultsStore | None = None
        self.log = log
        self.run_id = run_id or new_run_id()
        self.records: list[Record] = []
        # What the cases handed on (`Judgement.output`), in record order; only in this process.
        self.outputs: list[Output] = []
        self.round_index = round_index
        self.rounds = rounds
        # Settings that decide speed and hold for the whole run (--threads, the GPU policy), recorded
        # in every record's env next to what environment() reads.
        self.settings_env = dict(settings_env or {})
        self.stop_signal: int | None = None  # set by the CLI's SIGINT / SIGTERM handler
        self.writing = False  # a record is being written: a signal waits until it is on disk and counted

    def stop(self, signum: int) -> None:
        """Called from a signal handler: remember the signal, then raise it as an exception (once the
        record being written, if any, is on disk and in `records`, so that the count said is exact)."""
        self.stop_signal = signum
        if not self.writing:
            self.raise_if_stopped()

    def raise_if_stopped(self) -> None:
        """Raise again a signal whose exception was swallowed: one raised inside JAX's garbage-collection
        callback is only printed by Python ("Exception ignored in ..."), and the run would go on."""
        if self.stop_signal is not None:
            raise Terminated() if self.stop_signal == signal.SIGTERM else KeyboardInterrupt()

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
        memory: dict[str, Scalar] | None = None,
    ) -> Record:
        contention = dict(measurement.contention) if measurement is not None else {}
        timing: dict[str, Any] = {}
        metrics = dict(metrics or {})
        if measurement is not None:
            if measurement.first_call_s is not None:
                metrics.setdefault("first_call_s", measurement.first_call_s)
            if measurement.sample_cap is not None:  # what happened instead of the --min-time asked for
                metrics.setdefault("sample_cap", measurement.sample_cap)
                metrics.setdefault("window_s", measurement.window_s)
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
            memory=memory or {},
            contention=contention,
            profile=dict(measurement.profile) if measurement is not None else {},
            env={**environment(), **self.settings_env},
            round_index=self.round_index,
            rounds=self.rounds,
            **timing,
        )
        self.writing = True
        try:
            if self.recording:
                self.open_store().append(record)
            self.records.append(record)
        finally:
            self.writing = False
        self.raise_if_stopped()
        return record

    def open_store(self) -> ResultsStore:
        """The store records are appended to, opened once (a failure to open is one that writes nothing)."""
        if self.store is None:
            try:
                # The store's lines hold a path (data): printed literally, its control characters and markup shown.
                self.store = open_store(self.results, log=lambda message: self.log(literal(message)))
            except StoreError as exc:
                raise ResultsWriteError(str(self.results), str(exc)) from None
        return self.store

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
