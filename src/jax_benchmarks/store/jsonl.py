"""JSON-lines results: one line per record, appended as soon as it exists (the interchange format, and a
store of its own for `--results FILE.jsonl`).

Guarantees (tests/store/test_hostile_files.py shows each one):
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
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import BinaryIO

from jax_benchmarks.errors import ResultsWriteError
from jax_benchmarks.store.record import (
    INDEXED_FIELDS, REQUIRED_TEXT, SCALAR_TYPES, Record, Scalar, fields_set, parse_record, record_of, with_defaults,
)
from jax_benchmarks.store.views import EarlierRun, RunHistory, by_run, latest_runs, run_key

SNIFF_BYTES = 1 << 16  # head and tail of a results file checked for being JSON-lines text
MIN_FREE_BYTES = 1 << 20  # room for some hundreds of records
LISTED_LINES = 5  # bad line numbers named in the summary warning
MAX_LINE_BYTES = 1 << 24  # a record is a few KB; a longer line is skipped without being held in memory


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
            # The same open as append_record, less O_CREAT (O_NONBLOCK: never waits on a FIFO made since the check).
            os.close(os.open(path, os.O_RDWR | os.O_APPEND | os.O_NONBLOCK))
        except OSError as exc:
            raise ValueError(f"cannot write {path}: {exc.strerror}") from None
    else:
        check_folder_writable(path)
    require_free_space(path)
    return path


def existing_folder(path: Path) -> Path:
    """The folder `path` is (or would be, once its missing folders are made) in, nearest to it, that exists."""
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_folder_writable(path: Path) -> None:
    """A file can be made at `path` (or beside it, where it exists): its nearest existing folder takes a new file.
    Neither the file nor
    a missing folder is made (a command refused later leaves nothing behind); the check makes and removes a
    file there (os.access would say yes to root on a read-only mount). A ValueError naming the cause otherwise."""
    folder = existing_folder(path)
    if not folder.is_dir():
        raise ValueError(f"cannot write {path}: {folder} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror}") from None


def require_free_space(path: Path) -> None:
    """Room next to `path` for some hundreds of records (MIN_FREE_BYTES); a ValueError naming it otherwise."""
    try:
        vfs = os.statvfs(existing_folder(path))
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror}") from None
    free = vfs.f_bavail * vfs.f_frsize
    if free < MIN_FREE_BYTES:
        raise ValueError(f"no space left for records next to {path}: {free:,} bytes free")


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
    """Line numbers (or a database's record ids) and the first reasons of skipped records, reported once."""

    def __init__(self, path: Path | str, unit: str = "line") -> None:
        self.path = path
        self.unit = unit
        self.numbers: list[int] = []
        self.reasons: list[str] = []  # the reason of the first bad line
        self.first = 0

    def add(self, number: int, reason: str) -> None:
        self.numbers.append(number)
        if not self.reasons or number < self.first:
            self.first, self.reasons = number, [f"{self.unit} {number}: {reason}"]

    def summary(self) -> str | None:
        if not self.numbers:
            return None
        numbers = sorted(self.numbers)
        listed = ", ".join(str(n) for n in numbers[:LISTED_LINES])
        more = f" and {len(self.numbers) - LISTED_LINES} more" if len(self.numbers) > LISTED_LINES else ""
        return (f"{self.path}: skipped {len(self.numbers)} corrupt or impossible record(s) at {self.unit}(s) "
                f"{listed}{more} (first: {self.reasons[0]})")


# Run.record writes the fields in Record's order (a test keeps it so): the first ones are all that picks
# runs (src/jax_benchmarks/report/select.py), and env is the last. An index-only read takes just those from such a line
# (a regular expression and, per distinct env, one small parse) and leaves the rest to `complete_records`
# for the records actually shown: most of a 100,000-line file is never parsed.
INDEX_HEAD = re.compile(
    rb'\{(?:"schema_version":(\d{1,6}),)?"run_id":"([^"\\]*)","timestamp":"([^"\\]*)","group":"([^"\\]*)",'
    rb'"backend":"([^"\\]*)",'
)
ENV_KEY = b',"env":'
INDEXED_SET = fields_set(INDEXED_FIELDS)


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


def _text_lines(fh: BinaryIO, bad: BadLines) -> Iterator[tuple[int, int, bytes]]:
    """Each non-blank line with its number and byte offset; a line too long to hold is added to `bad`."""
    for number, (start, line) in enumerate(_lines(fh), start=1):
        if line is None:
            bad.add(number, f"a line longer than {MAX_LINE_BYTES:,} bytes")
        elif line.strip():
            yield number, start, line


def _read_lines(path: Path, index: Index, bad: BadLines, index_only: bool) -> Iterator[Record]:
    with path.open("rb") as fh:
        for number, start, line in _text_lines(fh, bad):
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


def records_with_text(path: Path, bad: BadLines) -> Iterator[tuple[Record, str]]:
    """Every record of a file with its line as written (an import keeps the line's text, so that nothing
    of it is lost); bad lines are added to `bad`. A line as Run.record writes it is read index-only, as
    `read_records` reads it for a report (a torn line never is: it lacks its env and closing braces), and
    checked in full when a view reads it; a line in another layout is checked in full now."""
    index = Index()
    collecting = gc.isenabled()
    gc.disable()  # as in read_records: no line makes garbage
    try:
        with path.open("rb") as fh:
            for number, start, line in _text_lines(fh, bad):
                try:
                    text = line.decode().strip()
                    record = index.record(line, (path, start, number)) or parse_record(line)
                except (ValueError, UnicodeDecodeError) as exc:
                    bad.add(number, "bytes that are not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc))
                    continue
                yield record, text
    finally:
        if collecting:
            gc.enable()


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
            fields = with_defaults({
                "schema_version": int(version) if version is not None else 0,  # none: written before versions
                "run_id": sys.intern(run_id.decode()), "timestamp": sys.intern(timestamp.decode()),
                "group": sys.intern(group.decode()), "backend": sys.intern(backend.decode()),
                "case": "", "device": "", "env": env,  # required fields `complete_records` fills in
            })
        except UnicodeDecodeError:
            return None
        record = record_of(fields, INDEXED_SET)
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
                record.__dict__.clear()  # the fields in Record's order, as a record read in full has them
                record.__dict__.update(full.__dict__)
                object.__setattr__(record, "__pydantic_fields_set__", full.__pydantic_fields_set__)
                object.__setattr__(record, "__pydantic_extra__", full.__pydantic_extra__)
                record._source = None
        summary = bad.summary()
        if summary and skipped is None:
            warn(summary)
    return [record for record in given if id(record) not in dropped]


class JsonlStore:
    """A JSON-lines file as a results store: appends as `append_record`; every view groups one index-only
    read of the file (kept while the store is open) and reads in full only the records it hands out."""

    driver_errors: tuple[type[Exception], ...] = (OSError,)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.skipped = SkippedLines()
        self._index: list[Record] | None = None
        self._latest: dict[str | None, dict[str, list[Record]]] = {}
        self._ids: list[str] | None = None
        self._histories: dict[tuple[str, str | None], RunHistory] = {}

    @property
    def location(self) -> str:
        return str(self.path)

    def reason(self, exc: BaseException) -> str:
        return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)

    def append(self, record: Record) -> None:
        append_record(self.path, record)
        self._index = None
        self._latest, self._ids, self._histories = {}, None, {}

    def _records(self) -> list[Record]:
        if self._index is None:
            self._index = (list(read_records(self.path, lambda _: None, index_only=True, skipped=self.skipped))
                           if self.path.exists() else [])
            # The index lives as long as the store: frozen, the cyclic collector stops rescanning its ~10⁵
            # objects each time the caller allocates more (grouping runs took twice as long with it).
            gc.freeze()
        return self._index

    def _complete(self, records: Iterable[Record]) -> list[Record]:
        return complete_records(records, lambda _: None, self.skipped)

    def _selected(self, group: str | None, backend: str | None) -> list[Record]:
        return [r for r in self._records()
                if (group is None or r.group == group) and (backend is None or r.backend == backend)]

    def is_empty(self) -> bool:
        return not self._records()

    def groups(self, backend: str | None) -> list[str]:
        return sorted({r.group for r in self._selected(None, backend)})

    def backends(self, group: str | None) -> list[str]:
        return sorted({r.backend for r in self._selected(group, None)})

    def latest_run(self, group: str, backend: str | None) -> list[Record]:
        if backend not in self._latest:
            self._latest[backend] = {run[0].group: run for run in latest_runs(self._selected(None, backend))}
        return self._complete(self._latest[backend].get(group, []))

    def _sorted_ids(self) -> list[str]:
        if self._ids is None:
            runs = by_run(self._records())
            self._ids = sorted(runs, key=lambda rid: run_key(runs[rid]))
        return self._ids

    def run_ids(self, prefix: str) -> list[str]:
        return [rid for rid in self._sorted_ids() if rid.startswith(prefix)]

    def latest_run_ids(self, count: int) -> list[str]:
        return list(reversed(self._sorted_ids()[-count:]))

    def run_records(self, run_id: str) -> list[Record]:
        return self._complete(r for r in self._records() if r.run_id == run_id)

    def earlier_runs(self, current: Sequence[Record], backend: str | None) -> Iterator[EarlierRun]:
        group = current[0].group
        if (group, backend) not in self._histories:
            self._histories[group, backend] = RunHistory(self._selected(group, backend))
        for run in self._histories[group, backend].earlier(current):
            yield run[-1].env, partial(self._complete, run)

    def history(self, group: str | None, backend: str | None, *, samples: bool = True) -> list[Record]:
        return self._complete(self._selected(group, backend))  # a line is read whole, samples or not

    def all_records(self) -> Iterator[Record]:
        if self.path.exists():
            yield from read_records(self.path, lambda _: None, skipped=self.skipped)

    def warnings(self) -> list[str]:
        return self.skipped.summaries()

    def close(self) -> None:
        self._index = None
