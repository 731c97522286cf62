"""Results store: one JSON line per measured figure, appended as soon as it exists.

Guarantees (tests/core/test_store.py shows each one):
* a record is one `write()` of one complete line on an O_APPEND descriptor, then fsync: a crash or kill
  leaves either the whole line or nothing, and concurrent writers never interleave inside a line;
* a file whose last line has no newline (an editor, an older crash) gets one before the next record,
  so a torn line never swallows a new record;
* a write that fails (full disk, I/O error) is undone (the partial line is truncated away) and raised
  as a one-line `ResultsWriteError`;
* `check_results_path` refuses, before any work, a path that is not a regular file (FIFO, device,
  directory), a file that is not JSON lines (binary), an unwritable path and a full file system.

Reading skips every corrupt, hostile or impossible line (bad bytes, broken JSON, deep nesting, huge
numbers, negative / NaN / infinite times) and reports them in one summarised warning. The report reads
index-only (see `read_records`): a line is checked in full when its record is shown.
"""

from __future__ import annotations

import codecs
import gc
import json
import os
import re
import secrets
import signal
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, BinaryIO, cast

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from jax_benchmarks.hardware.environment import environment
from jax_benchmarks.errors import ResultsWriteError, Terminated
from jax_benchmarks.measure.progress import NoProgress, Progress
from jax_benchmarks.measure.timing import Measurement

DEFAULT_RESULTS = Path("data/results/results.jsonl")
SCHEMA_VERSION = 2  # 2: `memory`; records written before the field existed load as version 0
Scalar = float | int | str | bool | None
# A duration is finite, never negative and below ~32 years: anything else in a file is corrupt, not data.
MAX_SECONDS = 1e9
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]

SNIFF_BYTES = 1 << 16  # head and tail of a results file checked for being JSON-lines text
MIN_FREE_BYTES = 1 << 20  # room for some hundreds of records
LISTED_LINES = 5  # bad line numbers named in the summary warning
MAX_LINE_BYTES = 1 << 24  # a record is a few KB; a longer line is skipped without being held in memory


class Record(BaseModel):
    """One measured figure and everything needed to interpret it later."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    run_id: str
    timestamp: str
    group: str
    backend: str
    variant: str | None = None  # e.g. "jit" / "eager", shown next to the backend
    case: str
    device: str
    dtype: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    median_s: Seconds | None = None
    iqr_s: Seconds | None = None
    min_s: Seconds | None = None
    repeats: int = Field(0, ge=0)
    samples_s: list[Seconds] = Field(default_factory=list)
    compile_s: Seconds | None = None
    noisy: bool = False
    metrics: dict[str, Scalar] = Field(default_factory=dict)
    checks: dict[str, Scalar] = Field(default_factory=dict)
    # --rounds N: every round (a fresh process) shares the run id and records its index (0-based).
    round_index: int | None = None
    rounds: int | None = None
    # Memory figures (src/jax_benchmarks/measure/memory.py); empty in records of version 1 and before.
    memory: dict[str, Scalar] = Field(default_factory=dict)
    # Last: report's index-only read takes env from the end of each line (INDEX_HEAD, ENV_KEY).
    env: dict[str, Scalar] = Field(default_factory=dict)
    # Where the line is (file, byte offset, line number) while the record is index-only; see `complete_records`.
    _source: tuple[Path, int, int] | None = PrivateAttr(default=None)


def new_run_id() -> str:
    """Sortable and unique: UTC time plus a random suffix."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


# ---------------------------------------------------------------- writing ---

def file_kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def regular_file_problem(path: Path) -> str | None:
    """Why `path` cannot be a results file we read or append to (None: absent or a regular file).
    Checked before opening: opening a FIFO blocks until someone opens its other end."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot use {path}: {exc.strerror}"
    return None if stat.S_ISREG(mode) else f"{path} is {file_kind(mode)}, not a regular file"


def text_problem(path: Path) -> str | None:
    """Why an existing file is not a JSON-lines results file: NUL bytes, bytes that are not UTF-8,
    or a first line that is not a JSON object. Only the head and the tail are read (fast on any size)."""
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES)
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(len(head), size - SNIFF_BYTES))
        tail = fh.read(SNIFF_BYTES)
    # A multi-byte character may be cut at a chunk's edges: skip continuation bytes at the start of the
    # tail, and let the incremental decoder hold back an unfinished character at the end.
    skip = next((i for i, byte in enumerate(tail[:3]) if not 0x80 <= byte <= 0xBF), len(tail[:3]))
    for chunk, where in ((head, "start"), (tail[skip:], "end")):
        if b"\0" in chunk:
            return f"binary data (NUL bytes) near its {where}"
        try:
            codecs.getincrementaldecoder("utf-8")().decode(chunk, final=False)
        except UnicodeDecodeError:
            return f"bytes that are not UTF-8 near its {where}"
    first = head.lstrip()[:1]
    if first and first != b"{":
        return "its first line is not a JSON object"
    return None


def check_results_path(path: Path) -> Path:
    """Preflight of a results file before any work: a regular file or absent, JSON-lines text,
    writable, on a file system with space left. Raises ValueError with the reason."""
    problem = regular_file_problem(path)
    if problem:
        raise ValueError(problem)
    if path.exists():
        try:
            problem = text_problem(path)
        except OSError as exc:
            raise ValueError(f"cannot read {path}: {exc.strerror}") from None
        if problem:
            raise ValueError(f"{path} is not a JSON-lines results file ({problem}); give another --results file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The same open as append_record (O_NONBLOCK: never waits on a FIFO made since the check).
        os.close(os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o666))
        vfs = os.statvfs(path)
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror}") from None
    free = vfs.f_bavail * vfs.f_frsize
    if free < MIN_FREE_BYTES:
        raise ValueError(f"no space left for records next to {path}: {free:,} bytes free")
    return path


def append_record(path: Path, record: Record) -> None:
    """Append one complete line in one write() and fsync it; on failure leave no part of it."""
    line = (record.model_dump_json() + "\n").encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise ResultsWriteError(path, exc.strerror or str(exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ResultsWriteError(path, f"it is {file_kind(mode)}, not a regular file")
        _append_line(fd, path, line)
    finally:
        os.close(fd)


def _append_line(fd: int, path: Path, line: bytes) -> None:
    size = os.fstat(fd).st_size
    # A last line without its newline (torn by a crash, or left by an editor) must not swallow this one.
    data = line if size == 0 or os.pread(fd, 1, size - 1) == b"\n" else b"\n" + line
    written = 0
    try:
        written = os.write(fd, data)  # O_APPEND: one write lands whole at the end, never interleaved
        if written != len(data):
            raise OSError(28, f"short write ({written} of {len(data)} bytes): no space left on device")
        os.fsync(fd)
    except OSError as exc:
        _undo_partial(fd, written)
        raise ResultsWriteError(path, exc.strerror or str(exc)) from None


def _undo_partial(fd: int, written: int) -> None:
    """Truncate away the bytes of a failed append, if it is still the file's last write."""
    if written == 0:
        return
    end = os.lseek(fd, 0, os.SEEK_CUR)  # with O_APPEND: just past the bytes this write put
    try:
        if os.fstat(fd).st_size == end:
            os.ftruncate(fd, end - written)
    except OSError:
        pass  # nothing more to do: a reader skips the torn line, the next append starts a new one


# ---------------------------------------------------------------- reading ---

class BadLines:
    """Line numbers and the first reasons of skipped lines, reported once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.numbers: list[int] = []
        self.reasons: list[str] = []  # the reason of the first bad line
        self.first = 0

    def add(self, number: int, reason: str) -> None:
        self.numbers.append(number)
        if not self.reasons or number < self.first:
            self.first, self.reasons = number, [f"line {number}: {reason}"]

    def summary(self) -> str | None:
        if not self.numbers:
            return None
        numbers = sorted(self.numbers)
        listed = ", ".join(str(n) for n in numbers[:LISTED_LINES])
        more = f" and {len(self.numbers) - LISTED_LINES} more" if len(self.numbers) > LISTED_LINES else ""
        return (f"{self.path}: skipped {len(self.numbers)} corrupt or impossible record(s) at line(s) "
                f"{listed}{more} (first: {self.reasons[0]})")


def parse_record(line: bytes) -> Record:
    """One line as a Record; ValueError (with a short reason) for anything that is not a valid record."""
    try:
        data = json.loads(line)
    except UnicodeDecodeError:
        raise ValueError("bytes that are not UTF-8") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and integers beyond Python's digit limit
        raise ValueError(str(exc).splitlines()[0][:120]) from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    data.setdefault("schema_version", 0)  # written before records carried a version
    record = _exact_record(data)
    if record is not None:
        return record
    try:
        return Record.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise ValueError(f"{where}: {error['msg']}") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


# ------------------------------------------------- fast path of reading ---
# Pydantic's validation costs ~30 µs a record, three times the JSON parsing: a line exactly as
# `Run.record` writes it (every field of its own type, durations finite and ≥ 0, no extra keys) is
# checked here with plain type tests and becomes a Record without it; anything else takes pydantic's
# way (coercion, or the reason it is refused).
REQUIRED_TEXT = ("run_id", "timestamp", "group", "backend", "case", "device")
OPTIONAL_TEXT = ("variant", "dtype")
DURATIONS = ("median_s", "iqr_s", "min_s", "compile_s")
SCALAR_MAPS = ("metrics", "checks", "memory", "env")
SCALAR_TYPES = frozenset({float, int, str, bool, type(None)})
OPTIONAL_COUNTS = ("round_index", "rounds")
FIELD_NAMES = tuple(Record.model_fields)
FIELDS = frozenset(FIELD_NAMES)
_PLAIN_DEFAULTS = {name: info.default for name, info in Record.model_fields.items()
                   if not info.is_required() and info.default_factory is None}
# Record's factories take no argument (list, dict); called directly: pydantic's get_default inspects the
# factory's signature on every call, which multiplied a 100,000-line report's time by ten.
_FACTORY_DEFAULTS = {name: cast(Callable[[], Any], info.default_factory)
                     for name, info in Record.model_fields.items() if info.default_factory is not None}
_FIELD_SETS: dict[frozenset[str], set[str]] = {}
_INDEXED_FIELDS = ("schema_version", "run_id", "timestamp", "group", "backend", "env")


def _is_duration(value: object) -> bool:
    # NaN fails both comparisons; bool is excluded by the exact type test.
    return (type(value) is float or type(value) is int) and 0 <= value <= MAX_SECONDS


def _with_defaults(values: dict[str, Any]) -> dict[str, Any]:
    """`values` plus every field of Record they lack at its default (fresh containers): a line may lack
    fields added after it was written (e.g. round_index), and an index-only record has only a few."""
    filled = {**_PLAIN_DEFAULTS, **values}
    for name, factory in _FACTORY_DEFAULTS.items():
        if name not in filled:
            filled[name] = factory()
    return filled


def _exact_record(data: dict[str, Any]) -> Record | None:
    if not FIELDS.issuperset(data) or type(data.get("schema_version")) is not int:
        return None
    for name in REQUIRED_TEXT:
        if type(data.get(name)) is not str:
            return None
    for name in OPTIONAL_TEXT:
        if data.get(name) is not None and type(data[name]) is not str:
            return None
    for name in DURATIONS:
        if data.get(name) is not None and not _is_duration(data[name]):
            return None
    samples = data.get("samples_s", [])
    if type(samples) is not list or not all(map(_is_duration, samples)):
        return None
    repeats = data.get("repeats", 0)
    if type(repeats) is not int or repeats < 0 or type(data.get("noisy", False)) is not bool:
        return None
    for name in OPTIONAL_COUNTS:
        count = data.get(name)
        if count is not None and (type(count) is not int or count < 0):
            return None
    if type(data.get("params", {})) is not dict:
        return None
    for name in SCALAR_MAPS:
        mapping = data.get(name, {})
        if type(mapping) is not dict or not SCALAR_TYPES.issuperset(map(type, mapping.values())):
            return None
    values = _with_defaults(data)
    return _record_of({name: values[name] for name in FIELD_NAMES}, _fields_set(data))


def _fields_set(keys: Iterable[str]) -> set[str]:
    """The one fields-set object shared by records with these keys (only read by model_dump(exclude_unset=...))."""
    return _FIELD_SETS.setdefault(frozenset(keys), set(keys))


def _record_of(fields: dict[str, Any], fields_set: set[str]) -> Record:
    """A Record from checked values: what pydantic's model_construct sets, without its per-field Python loop."""
    record: Record = Record.__new__(Record)
    object.__setattr__(record, "__dict__", fields)
    object.__setattr__(record, "__pydantic_fields_set__", fields_set)
    object.__setattr__(record, "__pydantic_extra__", {})
    object.__setattr__(record, "__pydantic_private__", {"_source": None})
    return record


# Run.record writes the fields in Record's order (a test keeps it so): the first ones are all that picks
# runs (src/jax_benchmarks/report/select.py), and env is the last. An index-only read takes just those from such a line
# (a regular expression and, per distinct env, one small parse) and leaves the rest to `complete_records`
# for the records actually shown: most of a 100,000-line file is never parsed.
INDEX_HEAD = re.compile(
    rb'\{(?:"schema_version":(\d{1,6}),)?"run_id":"([^"\\]*)","timestamp":"([^"\\]*)","group":"([^"\\]*)",'
    rb'"backend":"([^"\\]*)",'
)
ENV_KEY = b',"env":'
_INDEXED_SET = _fields_set(_INDEXED_FIELDS)


class SkippedLines:
    """Bad lines of every file a command reads, in every phase, reported as one summary per file at the end."""

    def __init__(self) -> None:
        self.files: dict[Path, BadLines] = {}

    def of(self, path: Path) -> BadLines:
        return self.files.setdefault(path, BadLines(path))

    def summaries(self) -> list[str]:
        return [text for bad in self.files.values() if (text := bad.summary())]


def read_records(path: Path, warn: Callable[[str], None], *, index_only: bool = False,
                 skipped: SkippedLines | None = None) -> Iterator[Record]:
    """Yield every valid record; bad lines are skipped and reported through `warn` in one summary
    (or collected in `skipped`, for the caller to report once with those `complete_records` finds).

    index_only=True (the report): a line as Run.record writes it gives a record with only its run, time,
    group, backend and env filled in, checked and filled by `complete_records` once the report knows
    which records it shows; a line in another layout is parsed and checked now.
    """
    bad = skipped.of(path) if skipped is not None else BadLines(path)
    index = Index()
    # Each line makes a few container objects and none is garbage: the cyclic collector, triggered by every
    # 700 new ones, would scan the growing heap over and over (half of the time of a 100,000-line file).
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield from _read_lines(path, index, bad, index_only)
    finally:
        if collecting:
            gc.enable()
    summary = bad.summary()
    if summary and skipped is None:
        warn(summary)


def _lines(fh: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(offset, line) of each line; None for a line longer than MAX_LINE_BYTES (a binary file without
    newlines), which is skipped in pieces so that it never has to fit in memory."""
    offset = 0
    while line := fh.readline(MAX_LINE_BYTES):
        start = offset
        offset += len(line)
        if len(line) < MAX_LINE_BYTES or line.endswith(b"\n"):
            yield start, line
            continue
        while piece := fh.readline(MAX_LINE_BYTES):
            offset += len(piece)
            if piece.endswith(b"\n"):
                break
        yield start, None


def _read_lines(path: Path, index: Index, bad: BadLines, index_only: bool) -> Iterator[Record]:
    with path.open("rb") as fh:
        for number, (start, line) in enumerate(_lines(fh), start=1):
            if line is None:
                bad.add(number, f"a line longer than {MAX_LINE_BYTES:,} bytes")
                continue
            if not line.strip():
                continue
            if index_only:
                record = index.record(line, (path, start, number))
                if record is not None:
                    yield record
                    continue
            try:
                record = parse_record(line)
            except ValueError as exc:
                bad.add(number, str(exc))
                continue
            if index_only:
                index.share(record)
            yield record


class Index:
    """Index-only records of one file; equal strings and environments are shared (most are repeated)."""

    def __init__(self) -> None:
        self.envs: dict[bytes, dict[str, Scalar]] = {}

    def record(self, line: bytes, source: tuple[Path, int, int]) -> Record | None:
        """The indexed record of a line as Run.record writes it; None for any other line."""
        head = INDEX_HEAD.match(line)
        body = line.rstrip()
        env_at = line.rfind(ENV_KEY)
        if head is None or env_at < 0 or not body.endswith(b"}}"):
            return None
        env = self.env(body[env_at + len(ENV_KEY) : -1])
        if env is None:
            return None
        version, run_id, timestamp, group, backend = head.groups()
        try:
            fields = _with_defaults({
                "schema_version": int(version) if version is not None else 0,  # none: written before versions
                "run_id": sys.intern(run_id.decode()), "timestamp": sys.intern(timestamp.decode()),
                "group": sys.intern(group.decode()), "backend": sys.intern(backend.decode()),
                "case": "", "device": "", "env": env,  # required fields `complete_records` fills in
            })
        except UnicodeDecodeError:
            return None
        record = _record_of(fields, _INDEXED_SET)
        record._source = source
        return record

    def share(self, record: Record) -> None:
        """Intern the strings and share the env of a record parsed in full (a line in another layout)."""
        fields = record.__dict__
        for name in REQUIRED_TEXT:
            fields[name] = sys.intern(fields[name])
        raw = json.dumps(fields["env"], sort_keys=True).encode()
        fields["env"] = self.envs.setdefault(raw, fields["env"])

    def env(self, raw: bytes) -> dict[str, Scalar] | None:
        env = self.envs.get(raw)
        if env is None:
            try:
                parsed = json.loads(raw)
            except (ValueError, RecursionError):
                return None
            if type(parsed) is not dict or not SCALAR_TYPES.issuperset(map(type, parsed.values())):
                return None
            env = self.envs[raw] = parsed
        return env


def complete_records(records: Iterable[Record], warn: Callable[[str], None],
                     skipped: SkippedLines | None = None) -> list[Record]:
    """Read in full (checked, raw samples included) the records that an index-only read left partial;
    returns the given records less those whose line proves corrupt, reported in one summary per file."""
    wanted: dict[Path, list[Record]] = {}
    given = list(records)
    for record in given:
        if record._source is not None:
            wanted.setdefault(record._source[0], []).append(record)
    dropped: set[int] = set()
    for path, chosen in wanted.items():
        bad = skipped.of(path) if skipped is not None else BadLines(path)
        with path.open("rb") as fh:
            for record in sorted(chosen, key=lambda r: r._source[1] if r._source else 0):
                assert record._source is not None
                _, offset, number = record._source
                fh.seek(offset)
                try:
                    full = parse_record(fh.readline())
                except ValueError as exc:
                    bad.add(number, str(exc))
                    dropped.add(id(record))
                    continue
                record.__dict__.update(full.__dict__)
                object.__setattr__(record, "__pydantic_fields_set__", full.__pydantic_fields_set__)
                object.__setattr__(record, "__pydantic_extra__", full.__pydantic_extra__)
                record._source = None
        summary = bad.summary()
        if summary and skipped is None:
            warn(summary)
    return [record for record in given if id(record) not in dropped]


@dataclass(frozen=True)
class Output:
    """What a case computed, next to its record, for a later step of the same run to read (e.g. the values
    `autograd all` compares across backends). Kept in memory on `Run.outputs`, never written to the file."""

    record: Record
    value: object


class Run:
    """One invocation of a benchmark command: a run id, a results file, the records.

    Backends call `record(...)`; the record is written at once. `log` and `progress` are
    sinks the CLI provides, so that backends never print themselves.
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
        progress: Progress | None = None,
    ) -> None:
        self.group = group
        # Where long work reports how far it is; the CLI draws it (src/jax_benchmarks/cli/console.py).
        self.progress: Progress = progress or NoProgress()
        self.results = results
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
            memory=memory or {},
            env={**environment(), **self.settings_env},
            round_index=self.round_index,
            rounds=self.rounds,
            **timing,
        )
        self.writing = True
        try:
            append_record(self.results, record)
            self.records.append(record)
        finally:
            self.writing = False
        self.raise_if_stopped()
        return record
