"""--profile: one untimed call of a case's step under its framework's profiler, after the timed samples.

The measurement core runs it (`harness.measure_case`), as it runs the memory pass: after the timed samples and the
memory pass, never around a timed call, so no figure is measured under a profiler. A group only declares its
case's step (`Timed.call`, its `sync`, and where a jitted JAX step has one, its `program`), and whether the case
is `compiled`; which profiler runs is the backend's framework's (its descriptor's `profiler`,
frameworks/descriptors.py):

* JAX / Flax: `jax.profiler.trace(..., create_perfetto_trace=True)`; its Perfetto trace JSON (gzip) is read back,
  scrubbed (below) and written as `NAME.trace.json`, which Perfetto (ui.perfetto.dev) and Chrome's
  chrome://tracing open;
* PyTorch: `torch.profiler.profile` (Kineto), `export_chrome_trace`, scrubbed the same way;
* NumPy and the project's own engine: Python's `cProfile`, written as `NAME.profile.txt` (pstats, sorted by
  cumulative time).

The compiled program (measure/compiled.py) comes with the trace: a jitted JAX case's from its `Timed.program`; a
case compiled by torch.compile's from the profiler's `watch`, started before the case's fixtures and its first
(compiling) call, which says what inductor generated while the case ran.

A profiler's `environment` is what its framework reads when it loads or first profiles (PyTorch's Kineto prints
a start and a stop line on stderr at every trace unless its log level says otherwise): the CLI sets it before any
backend is imported, where the user has not set it (`set_environment`).

The step is wrapped in an annotation named `STEP` (jax.profiler.TraceAnnotation, torch's record_function), so
that the trace says where the step starts and ends (`measure/breakdown.py` reads the shares inside it).

Traces go to `profiles/RUN_ID/` in the folder beside the store (`store.location.side_folder`: the store file's
folder; the working directory for a PostgreSQL store); the record's `profile` names the file relative to that folder. A profiler that is missing or fails is one
logged line and a `profile_status` in the record: the case's timed figures are recorded all the same. Work that
can run only once (an epoch, a solve) is not called again: its record says so.

What a trace file keeps: the trace events and the time unit, nothing else of what the profilers write (torch's
`host_name`, `traceName` (a path), `trace_id`, `baseTimeNanoseconds` are dropped). Before a file is written, its
text is searched for the value of every environment variable whose name says it holds a secret (`SECRET_NAMES`);
a trace that holds one is not written (the record says why).
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import re
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jax_benchmarks.errors import first_line
from jax_benchmarks.measure.breakdown import breakdown_figures
from jax_benchmarks.measure.compiled import program_figures
from jax_benchmarks.store.record import Scalar

if TYPE_CHECKING:
    from jax_benchmarks.store.location import ResultsLocation

PROFILES = "profiles"
CPROFILE = "cprofile"  # a record's `profile.profiler` where the framework has no profiler of its own
# What a written Chrome trace keeps of the profiler's JSON: everything else is metadata about the machine.
KEPT_KEYS = ("displayTimeUnit", "traceEvents")
# An environment variable whose name holds one of these words holds a secret: its value never goes into a file.
SECRET_NAMES = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH", re.I)
# Shorter values ("1", "true") would match by chance in any trace.
MIN_SECRET_CHARS = 6

Log = Callable[[str], None]


class Step(Protocol):
    """What the pass reads of a case's `harness.Timed` (declared here: the harness imports this module)."""

    @property
    def call(self) -> Callable[[], Any]: ...
    @property
    def sync(self) -> Callable[[Any], object]: ...
    @property
    def program(self) -> Callable[[], object] | None: ...
    @property
    def single_pass(self) -> bool: ...


@dataclass(frozen=True)
class Profiler:
    """A framework's profiler for `--profile`'s untimed pass (a descriptor's `profiler`): `trace(step, scratch)`
    runs the step once under it, the step wrapped in an annotation named `breakdown.STEP`, and returns the Chrome
    trace JSON it wrote (in `scratch`, a folder removed afterwards). `name`: what a record's `profile.profiler`
    says. `watch()`, for a framework whose compiler's code is observed rather than asked for (torch.compile),
    starts watching before a compiled case and returns a function that stops watching and returns the code
    generated meanwhile (a `compiled.GeneratedCode`), called after the case's untimed pass. `environment`:
    variables its framework reads once, set before it loads (`set_environment`)."""

    name: str
    trace: Callable[[Callable[[], None], Path], dict[str, Any]]
    watch: Callable[[], Callable[[], object]] | None = None
    environment: Mapping[str, str] = field(default_factory=dict)


def set_environment(profilers: Iterable[Profiler | None], environ: MutableMapping[str, str]) -> None:
    """--profile: the profilers' `environment` into `environ` before their frameworks load; a variable the user
    set keeps the user's value."""
    for profiler in profilers:
        for name, value in ({} if profiler is None else profiler.environment).items():
            environ.setdefault(name, value)


def profiles_root(results: ResultsLocation) -> Path:
    """`profiles/` in the folder beside the store (store/location.py's `side_folder`)."""
    from jax_benchmarks.store.location import side_folder

    return side_folder(results) / PROFILES


def file_stem(backend: str, label: str, device: str, round_index: int | None) -> str:
    """A file name of letters, digits, '.', '_' and '-' for one case of one round."""
    parts = [backend, label, device, *([] if round_index is None else [f"round{round_index}"])]
    return "-".join(re.sub(r"[^0-9A-Za-z._-]+", "_", part).strip("_") for part in parts)


def secret_values(environ: Mapping[str, str]) -> list[str]:
    return [value for name, value in environ.items()
            if SECRET_NAMES.search(name) and len(value) >= MIN_SECRET_CHARS]


def scrubbed(trace: Mapping[str, Any]) -> dict[str, Any]:
    """The trace events and the time unit of a profiler's Chrome trace, nothing else."""
    return {key: trace[key] for key in KEPT_KEYS if key in trace}


class TraceRefused(Exception):
    """A trace that would write a secret to disk."""


def checked_text(text: str, environ: Mapping[str, str], known: Collection[str] = ()) -> str:
    """`text`, unless it holds the value of an environment variable named like a secret or a `known` secret (the
    results store's password): then TraceRefused, and nothing is written."""
    if any(value in text for value in secret_values(environ)):
        raise TraceRefused("the trace holds the value of an environment variable named like a secret; not written")
    if any(secret and secret in text for secret in known):
        raise TraceRefused("the trace holds the results store's password; not written")
    return text


def step_call(timed: Step) -> Callable[[], None]:
    def call() -> None:
        timed.sync(timed.call())
    return call


def cprofile_text(step: Callable[[], None]) -> str:
    """The step under cProfile, as pstats' text sorted by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        step()
    finally:
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
    return out.getvalue()


@dataclass
class ProfilePass:
    """--profile's pass for one backend: which profiler, where its files go, where a failure is said."""

    folder: Path  # profiles/RUN_ID
    # The profiler of a backend's framework, None for cProfile (NumPy, the engine): the descriptors' `profiler_of`,
    # given by the command (the descriptors import the measurement core, so the core does not import them).
    profiler_of: Callable[[str], Profiler | None]
    relative_to: Path  # the store's folder: records name files relative to it
    log: Log
    round_index: int | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)  # searched for secrets, never written
    secrets: tuple[str, ...] = ()  # the results store's password, never written either

    @classmethod
    def of(cls, results: ResultsLocation, run_id: str, profiler_of: Callable[[str], Profiler | None], log: Log,
           round_index: int | None = None) -> ProfilePass:
        from jax_benchmarks.store.location import side_folder

        return cls(profiles_root(results) / run_id, profiler_of, side_folder(results), log, round_index,
                   secrets=results.secrets)

    def watch(self, backend: str) -> Callable[[], object] | None:
        """Start watching the code a compiled case of `backend` generates, where its framework's profiler watches
        (torch.compile's); None elsewhere. Called before the case's fixtures are made and its first call."""
        profiler = self.profiler_of(backend)
        return None if profiler is None or profiler.watch is None else profiler.watch()

    def take(self, timed: Step, backend: str, label: str, device: str,
             generated: Callable[[], object] | None = None) -> dict[str, Scalar]:
        """Profile one more call of the case's step; the record's `profile` figures (or why there are none).
        `generated`: what `watch` returned for this case (its program then: what its compiler generated)."""
        if timed.single_pass:
            if generated is not None:
                generated()  # stops the watch
            return {"profile_status": "not profiled: work done once or a fixed number of times is not called again"}
        stem = file_stem(backend, label, device, self.round_index)
        profiler = self.profiler_of(backend)
        figures: dict[str, Scalar] = {"profiler": CPROFILE if profiler is None else profiler.name}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            figures.update(self._trace(step_call(timed), stem, profiler))
            figures["profile_status"] = "measured"
        except Exception as exc:  # a failed profile is a missing trace, never a lost figure
            reason = f"{type(exc).__name__}: {first_line(exc, 200)}"
            self.log(f"--profile: {backend} {label} @{device}: no trace ({reason}); its timed figures are recorded")
            figures["profile_status"] = f"unavailable: {reason}"
        program = generated if generated is not None else timed.program
        if program is not None:
            figures.update(program_figures(program, self.folder, stem, self.relative_to, self.environ, self.write))
        return figures

    def _trace(self, step: Callable[[], None], stem: str, profiler: Profiler | None) -> dict[str, Scalar]:
        if profiler is None:
            path = self.folder / f"{stem}.profile.txt"
            self.write(path, cprofile_text(step))
            return {"trace": self.relative(path), "trace_format": "cProfile text (pstats, cumulative)"}
        with tempfile.TemporaryDirectory(prefix=".scratch-", dir=self.folder) as scratch:
            trace = scrubbed(profiler.trace(step, Path(scratch)))
        path = self.folder / f"{stem}.trace.json"
        self.write(path, json.dumps(trace))
        return {"trace": self.relative(path), "trace_format": "Chrome trace JSON", **breakdown_figures(trace)}

    def write(self, path: Path, text: str) -> None:
        """A side file, refused where it holds a secret (`checked_text`), never torn (`write_atomically`)."""
        write_atomically(path, checked_text(text, self.environ, self.secrets))

    def relative(self, path: Path) -> str:
        return path.relative_to(self.relative_to).as_posix()


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename: a kill never leaves a torn trace."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
