"""Where results are kept (`--results`), and the store that keeps them there.

* a path ending in `.jsonl`, or an existing file of JSON lines: a JSON-lines file
  (src/jax_benchmarks/store/jsonl.py), read and appended as is;
* `postgresql://…` or `postgres://…`: a PostgreSQL database (src/jax_benchmarks/store/postgres.py);
* any other path: an SQLite file (src/jax_benchmarks/store/sqlite.py).

Every command (the benchmark groups, report, verdict, smoke) has the same default store (docs/store.md):
data/results/results.sqlite of the project when run inside a checkout of this project, else results.sqlite in
the user's data folder (Linux: $XDG_DATA_HOME/jax-benchmarks, by default ~/.local/share/jax-benchmarks; macOS:
~/Library/Application Support/jax-benchmarks; Windows: %LOCALAPPDATA%/jax-benchmarks). The environment
variable JAX_BENCHMARKS_RESULTS, where set, replaces that default (a team points every machine at one database
with it). A location is shown with its password left out, wherever it is printed.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from jax_benchmarks.store.jsonl import (
    SNIFF_BYTES, JsonlStore, check_results_path, file_kind, regular_file_problem, require_free_space,
)
from jax_benchmarks.store.sql import StoreError
from jax_benchmarks.store.sqlite import SqliteStore, sqlite_problem
from jax_benchmarks.store.views import ResultsStore

RESULTS_ENV = "JAX_BENCHMARKS_RESULTS"
# Where a checkout keeps its store, relative to the checkout's root (the folder of its pyproject.toml).
CHECKOUT_STORE = Path("data/results/results.sqlite")
APP_FOLDER = "jax-benchmarks"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
HIDDEN = "***"
Kind = Literal["jsonl", "sqlite", "postgres"]


@dataclass(frozen=True)
class ResultsLocation:
    """A `--results` value. `str()` shows it with any password replaced by ***; `value` is the one to connect to."""

    value: str

    @property
    def kind(self) -> Kind:
        """postgres by the URL's scheme; a file by its name (.jsonl), or an existing file by its first
        bytes: a results file of earlier versions, JSON lines under another name, stays JSON lines."""
        if self.value.startswith(POSTGRES_SCHEMES):
            return "postgres"
        return "jsonl" if self.value.endswith(".jsonl") or starts_like_json_lines(self.path) else "sqlite"

    @property
    def path(self) -> Path:
        return Path(self.value)

    @property
    def password(self) -> str | None:
        """The password a PostgreSQL URL holds (in its user part or as ?password=), None if none."""
        if self.kind != "postgres":
            return None
        parts = urlsplit(self.value)
        query = dict(parse_qsl(parts.query))
        return unquote(parts.password) if parts.password else query.get("password")

    def __str__(self) -> str:
        if self.kind != "postgres":
            return self.value
        parts = urlsplit(self.value)
        netloc = parts.netloc
        if parts.password is not None:
            user, _, host = netloc.rpartition("@")
            netloc = f"{user.partition(':')[0]}:{HIDDEN}@{host}"
        query = urlencode([(k, HIDDEN if k == "password" else v) for k, v in parse_qsl(parts.query)], safe="*")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def starts_like_json_lines(path: Path) -> bool:
    """An existing regular file whose first non-blank byte opens a JSON object (an SQLite file starts
    with its header, "SQLite format 3")."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as fh:
            return fh.read(SNIFF_BYTES).lstrip()[:1] == b"{"
    except OSError:
        return False


def as_location(value: object) -> ResultsLocation:
    """A ResultsLocation from an option's text, a Path or a location."""
    if isinstance(value, ResultsLocation):
        return value
    if isinstance(value, (str, Path)) and str(value):
        location = ResultsLocation(str(value))
        if location.kind == "postgres":
            try:
                urlsplit(location.value)
            except ValueError as exc:  # the URL's text is not shown: it may hold the password
                raise ValueError(f"not a PostgreSQL URL ({exc}); the form is "
                                 "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE") from None
        return location
    raise ValueError("give a file path (.jsonl: JSON lines, else SQLite) or a postgresql:// URL")


def checkout_root(start: Path) -> Path | None:
    """The checkout of this project that `start` is in (itself or a parent holding this project's
    pyproject.toml), None outside one."""
    for folder in (start, *start.parents):
        manifest = folder / "pyproject.toml"
        try:
            if manifest.is_file() and f'name = "{APP_FOLDER}"' in manifest.read_text(encoding="utf-8"):
                return folder
        except (OSError, UnicodeDecodeError):  # unreadable: not ours to use
            continue
    return None


def user_data_folder() -> Path:
    """The platform's folder for a user's application data, with this project's folder in it."""
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / APP_FOLDER
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / APP_FOLDER
    # The XDG base directory specification: a relative $XDG_DATA_HOME is invalid and ignored.
    xdg = os.environ.get("XDG_DATA_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else home / ".local" / "share") / APP_FOLDER


def default_path(cwd: Path) -> Path:
    """The default store's file for a command run in `cwd`: the checkout's data/results/results.sqlite
    (relative when `cwd` is the checkout's root, as a user there types it), else the user data folder's."""
    root = checkout_root(cwd)
    if root is None:
        return user_data_folder() / "results.sqlite"
    return CHECKOUT_STORE if root == cwd else root / CHECKOUT_STORE


def default_location() -> ResultsLocation:
    """Where results go when --results is not given: $JAX_BENCHMARKS_RESULTS, else `default_path`."""
    return as_location(os.environ.get(RESULTS_ENV) or default_path(Path.cwd()))


def legacy_jsonl(path: Path) -> Path:
    """The JSON-lines file an SQLite store imports once: the same name, .jsonl (results.sqlite <- results.jsonl)."""
    return path.with_suffix(".jsonl")


def open_store(location: ResultsLocation | Path | str, *, create: bool = True,
               log: Callable[[str], None] = lambda _msg: None) -> ResultsStore:
    """The store at `location`. create=False (reading): a missing file is an error, unless an SQLite store
    can be made from its JSON-lines file. Raises StoreError with a one-line reason."""
    where = as_location(location)
    if where.kind == "postgres":
        from jax_benchmarks.store.postgres import PostgresStore

        return PostgresStore(where.value, str(where), where.password)
    problem = regular_file_problem(where.path)
    if problem:
        raise StoreError(problem)
    if where.kind == "jsonl":
        if not create and not where.path.exists():
            raise StoreError(f"{where.path} does not exist: no results yet, run a benchmark first "
                             "(e.g. `python main.py xla all`)")
        return JsonlStore(where.path)
    legacy = legacy_jsonl(where.path)
    has_legacy = legacy.is_file()
    store = SqliteStore(where.path, create=create or has_legacy)
    if has_legacy and store.meta(f"imported {legacy.resolve()}") is None:
        failures: tuple[type[Exception], ...] = (OSError, *store.driver_errors)
        try:
            note = store.import_jsonl(legacy)
        except failures as exc:
            store.close()
            raise StoreError(f"cannot import {legacy} into {where.path}: {store.reason(exc)}") from None
        if note is not None:
            log(note.text(str(where.path)))
    return store


def check_writable(location: ResultsLocation) -> ResultsLocation:
    """Preflight before any work: records can be appended at `location` (a database is connected to; a
    file is checked, not opened: the run opens it, and imports its JSON-lines file where it has one).
    Raises ValueError with the reason."""
    if location.kind == "jsonl":
        check_results_path(location.path)
    elif location.kind == "postgres":
        _open_and_close(location, create=True)
    else:
        _check_sqlite_file(location.path)
        try:
            location.path.parent.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=location.path.parent, prefix=".write-check-")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise ValueError(f"cannot write {location.path}: {exc.strerror}") from None
        require_free_space(location.path)
    return location


def check_readable(location: ResultsLocation) -> ResultsLocation:
    """Preflight of a store to read: it exists and is one. Raises ValueError with the reason."""
    if location.kind == "postgres":
        return _open_and_close(location, create=False)
    if location.path.is_dir():
        raise ValueError(f"{location.path} is {file_kind(stat.S_IFDIR)}, not a results file")
    exists = location.path.exists() or (location.kind == "sqlite" and legacy_jsonl(location.path).is_file())
    if not exists:
        raise ValueError(f"{location.path} does not exist: no results yet, run a benchmark first "
                         "(e.g. `python main.py xla all`)")
    if location.kind == "sqlite":
        _check_sqlite_file(location.path)
    return location


def _check_sqlite_file(path: Path) -> None:
    problem = regular_file_problem(path)
    if problem is None and path.exists():
        try:
            problem = sqlite_problem(path)
        except OSError as exc:
            problem = f"cannot read {path}: {exc.strerror}"
        if problem is not None:
            problem = f"{path} is {problem}; give another --results file"
    if problem is not None:
        raise ValueError(problem)


def _open_and_close(location: ResultsLocation, *, create: bool) -> ResultsLocation:
    try:
        open_store(location, create=create).close()
    except StoreError as exc:
        raise ValueError(str(exc)) from None
    return location


@contextmanager
def store_errors(store: ResultsStore) -> Iterator[None]:
    """A driver's error while reading (a server gone, a locked or damaged file) as a one-line StoreError."""
    try:
        yield
    except store.driver_errors as exc:
        raise StoreError(f"cannot read {store.location}: {store.reason(exc)}") from None
