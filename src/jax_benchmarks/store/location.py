"""Where results are kept (`--results`), and the store that keeps them there.

* a path ending in `.jsonl`, or an existing file of JSON lines: a JSON-lines file
  (src/jax_benchmarks/store/jsonl.py), read and appended as is;
* `postgresql://…` or `postgres://…` (the scheme in any capitals, blanks around the URL ignored): a PostgreSQL
  database (src/jax_benchmarks/store/postgres.py);
* any other path: an SQLite file (src/jax_benchmarks/store/sqlite.py).

Any other text that looks like a URL (`SCHEME://…`: mysql://, sqlite://, http://, a driver suffix such as
postgresql+psycopg://) or like a libpq connection string (`host=… password=…`) is refused with the reason, never
taken as a file name: it may hold a password, and a file of that name would print it and keep it on disk.
`masked` is the one way a location is shown (its password replaced by ***), wherever it is printed or written.

Every command (the benchmark groups, report, verdict, smoke) has the same default store (docs/store.md):
data/results/results.sqlite of the project when run inside a checkout of this project, else results.sqlite in
the user's data folder (Linux: $XDG_DATA_HOME/jax-benchmarks, by default ~/.local/share/jax-benchmarks; macOS:
~/Library/Application Support/jax-benchmarks; Windows: %LOCALAPPDATA%/jax-benchmarks). The environment
variable JAX_BENCHMARKS_RESULTS, where set, replaces that default (a team points every machine at one database
with it). A location is shown with its password left out, wherever it is printed.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import quote, unquote, urlsplit

import click

from jax_benchmarks.store.jsonl import (
    SNIFF_BYTES, JsonlStore, check_folder_writable, check_results_path, file_kind, regular_file_problem,
    require_free_space,
)
from jax_benchmarks.errors import NoResultsYet
from jax_benchmarks.store.sql import StoreError
from jax_benchmarks.store.sqlite import LOCK_TIMEOUT_S, SQLITE_HEADER, SqliteStore, sqlite_problem
from jax_benchmarks.store.views import ResultsStore

RESULTS_ENV = "JAX_BENCHMARKS_RESULTS"
# Where a checkout keeps its store, relative to the checkout's root (the folder of its pyproject.toml).
CHECKOUT_STORE = Path("data/results/results.sqlite")
APP_FOLDER = "jax-benchmarks"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
POSTGRES_NAMES = ("postgresql", "postgres")
POSTGRES_FORM = "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
HIDDEN = "***"
Kind = Literal["jsonl", "sqlite", "postgres"]
# Text that looks like a URL: a scheme (two characters or more: `C:/x` is a Windows drive) and a colon, then a
# slash (`mysql://…`, a mistyped `postgresql:/…`) or a user part before an @ (`mysql:bench:pw@db`).
URL_LIKE = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]+):(?:/+|(?=[^/\\]*@))")
# libpq's keyword/value connection string (`host=db dbname=x password=…`): a store's text in another form.
CONNINFO_KEYWORD = re.compile(r"(?:^|\s)(?:host|hostaddr|port|dbname|user|password|passfile|service|sslmode)\s*=",
                              re.IGNORECASE)
# A parameter whose value is a secret (libpq's `password`; what other URLs carry tokens in), in a URL's query or
# a connection string: its value is shown as ***.
SECRET_KEYS = ("password", "passwd", "pwd", "secret", "token", "apikey", "api_key", "access_key", "accesskey")


def spelled_any_way(key: str) -> str:
    """A pattern for `key` with any of its letters percent-encoded (libpq decodes a URL's query keys before it reads
    them: `?pass%77ord=` is its password), matched without regard to capitals."""
    return "".join(f"(?:{re.escape(c)}|%{ord(c.lower()):02x}|%{ord(c.upper()):02x})" for c in key)


SECRET_PARAMETER = re.compile(r"(?i)((?:%s)\s*=\s*)('[^']*'|[^&;\s#]*)" % "|".join(map(spelled_any_way, SECRET_KEYS)))


def looks_like_url(text: str) -> bool:
    """`text` is a URL (of any scheme, in any capitals, blanks around it) or a libpq connection string: never a
    file name, whatever it names."""
    return URL_LIKE.match(text) is not None or CONNINFO_KEYWORD.search(text) is not None


def masked(text: str) -> str:
    """`text` as it may be shown or written anywhere: in a URL, the password of its user part (all of the user
    part but a PostgreSQL URL's user name) and every secret parameter (?password=…) replaced by ***; in a
    connection string, its secret parameters; any other text as it is."""
    match = URL_LIKE.match(text)
    if match is None:
        return SECRET_PARAMETER.sub(rf"\g<1>{HIDDEN}", text) if CONNINFO_KEYWORD.search(text) else text
    head, rest = text[:match.end()], text[match.end():]
    # The user part ends at the last @: a password may hold an unescaped / or @ of its own.
    user_part, at, tail = rest.rpartition("@")
    if at:
        user, colon, _password = user_part.partition(":")
        postgres = match.group(1).lower() in POSTGRES_NAMES
        rest = (f"{user}:{HIDDEN}" if colon else user) if postgres and "/" not in user else HIDDEN
        rest += at + tail
    return head + SECRET_PARAMETER.sub(rf"\g<1>{HIDDEN}", rest)


def url_secrets(text: str) -> tuple[str, ...]:
    """The secrets `masked` hides in `text`, as written and percent-decoded: what a driver's message may quote."""
    found: list[str] = []
    match = URL_LIKE.match(text)
    if match is not None:
        user_part, at, _tail = text[match.end():].rpartition("@")
        user, colon, password = user_part.partition(":")
        postgres = match.group(1).lower() in POSTGRES_NAMES
        if at and postgres and "/" not in user:  # what `masked` hides: a PostgreSQL URL's password
            found.append(password)
        elif at:  # or the whole user part of any other URL
            found.append(user_part)
    found += [value.strip("'") for _key, value in SECRET_PARAMETER.findall(text)]
    return tuple(dict.fromkeys(part for secret in found if secret for part in (secret, unquote(secret))))


def store_text(text: str) -> str:
    """The --results text to use: a PostgreSQL URL with blanks around it removed and its scheme in small letters,
    any other path as given. Raises ValueError (the text masked) for any other URL or a connection string."""
    match = URL_LIKE.match(text)
    if match is None:
        if CONNINFO_KEYWORD.search(text):
            raise ValueError(f"{masked(text)} looks like a PostgreSQL connection string (keyword=value); "
                             f"give it as a URL, {POSTGRES_FORM}")
        return text
    scheme, after = match.group(1).lower(), text[match.end(1):].rstrip()  # `after`: from the scheme's colon on
    if scheme in POSTGRES_NAMES and after.startswith("://"):
        return scheme + after
    if scheme in POSTGRES_NAMES:
        problem = f"is not a PostgreSQL URL (two slashes after '{scheme}:')"
    elif scheme.partition("+")[0] in POSTGRES_NAMES:
        problem = f"names a driver ({scheme}); this tool connects with psycopg 3: give the URL without it"
    else:
        problem = (f"names a {scheme}: location, not a store this tool reads: give a file path (.jsonl: JSON lines, "
                   "else SQLite) or a PostgreSQL URL")
    raise ValueError(f"{masked(text.strip())} {problem}, {POSTGRES_FORM}")


@dataclass(frozen=True)
class ResultsLocation:
    """A `--results` value. `str()` shows it with any password replaced by ***; `value` is the one to connect to.
    `lock_timeout_s` (`--lock-timeout`): how long a writer or a reader waits for another process's lock (an SQLite
    file's write lock, a PostgreSQL table lock) before giving up. Made only from a text `store_text` accepts:
    raises ValueError (its text masked) for a URL of another kind."""

    value: str
    lock_timeout_s: float = field(default=LOCK_TIMEOUT_S, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", store_text(self.value))

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
    def secrets(self) -> tuple[str, ...]:
        """The password (and any other secret) a PostgreSQL URL holds, as written and decoded; () if none."""
        return url_secrets(self.value) if self.kind == "postgres" else ()

    def hide(self, text: str) -> str:
        """`text` (a driver's message) with every secret of this location replaced by ***."""
        for secret in sorted(self.secrets, key=len, reverse=True):  # a longer one may hold a shorter
            text = text.replace(secret, HIDDEN)
        return text

    def __str__(self) -> str:
        return masked(self.value)


# libpq's password file: one `host:port:database:user:password` line, `*` matching any, `:` and `\` in a field
# escaped with `\`; libpq ignores the file unless only its owner may read it (mode 0600).
PASSFILE_ANY = "*:*:*:*:"


def passfile_line(password: str) -> str:
    return PASSFILE_ANY + password.replace("\\", "\\\\").replace(":", "\\:") + "\n"


def without_passwords(url: str) -> tuple[str, str | None]:
    """A PostgreSQL URL without its password (the user part's, percent-decoded, or a `password` query parameter's,
    however its key is spelled) and that password; (url, None) when it holds none."""
    split = urlsplit(url)
    user_part, at, host_part = split.netloc.rpartition("@")
    user, colon, password = user_part.partition(":")
    found = unquote(password) if at and colon else None
    query = []
    for item in split.query.split("&") if split.query else []:
        key, _eq, value = item.partition("=")
        if re.fullmatch(spelled_any_way("password"), key.strip(), re.IGNORECASE):
            found = unquote(value)
        else:
            query.append(item)
    netloc = f"{user}@{host_part}" if at else host_part
    return split._replace(netloc=netloc, query="&".join(query)).geturl(), found


@contextmanager
def for_children(location: ResultsLocation) -> Iterator[ResultsLocation]:
    """The location to give a child process on its command line, which every user of the machine may read (`ps`):
    a PostgreSQL URL's password moves into a libpq password file (mode 0600, in a folder of its own, removed when
    the block ends) that the URL names with libpq's `passfile` parameter; any other location as it is."""
    url, password = without_passwords(location.value) if location.kind == "postgres" else (location.value, None)
    if password is None:
        yield location
        return
    folder = Path(tempfile.mkdtemp(prefix="jax-benchmarks-pass-"))  # mode 0700: only this user may look in
    passfile = folder / "pgpass"
    try:
        descriptor = os.open(passfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(passfile_line(password))
        separator = "&" if urlsplit(url).query else "?"
        yield replace(location, value=f"{url}{separator}passfile={quote(str(passfile), safe='/')}")
    finally:
        passfile.unlink(missing_ok=True)
        folder.rmdir()


def first_bytes(path: Path) -> bytes | None:
    """The first bytes of the regular file at `path` (enough to tell what it holds); None where there is no such
    file or it cannot be read."""
    try:
        if not path.is_file():
            return None
        with path.open("rb") as fh:
            return fh.read(SNIFF_BYTES)
    except OSError:
        return None


def starts_like_json_lines(path: Path) -> bool:
    """An existing regular file whose first non-blank byte opens a JSON object (an SQLite file starts
    with its header, "SQLite format 3")."""
    head = first_bytes(path)
    return head is not None and head.lstrip()[:1] == b"{"


# The first bytes of an SQLite write-ahead log (https://www.sqlite.org/fileformat.html#the_write_ahead_log).
WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
SIDE_FILES = ("-wal", "-shm", "-journal")  # what SQLite keeps beside a database file, named after it


def store_content(path: Path) -> str | None:
    """What results data the existing file at `path` holds, told by its first bytes whatever its name: an SQLite
    database, an SQLite log, or JSON lines whose first line is a record (a JSON object with a run id); None for
    anything else or no file."""
    head = first_bytes(path)
    if head is None:
        return None
    if head.startswith(SQLITE_HEADER):
        return "an SQLite database"
    if head.startswith(WAL_MAGIC):
        return "an SQLite write-ahead log"
    first = head.lstrip().partition(b"\n")[0]
    return "a JSON-lines results file" if first.startswith(b"{") and b'"run_id"' in first else None


def output_problem(path: Path, option: str, reads: Sequence[ResultsLocation], *, replaceable: Callable[[bytes], bool],
                   what: str, force: bool) -> str | None:
    """Why a command may not write its output (`what`, given as `option`) to `path`, checked before any work; None
    when it may. Never over a store it reads or appends to (`reads`: the file itself, however named or linked, its
    SQLite side files, the JSON-lines file an SQLite store imports), nor over any file that holds results data
    (`store_content`); over another existing file only where it is one of this command's own outputs
    (`replaceable(its first bytes)`), where it is empty (nothing in it to lose: `mktemp` makes one) or with
    `force` (--force)."""
    problem = regular_file_problem(path)
    if problem is not None:
        return problem
    target = path.absolute()
    for where in reads:
        if where.kind == "postgres":
            continue
        store = where.path.absolute()
        names = {store, legacy_jsonl(store), *(store.with_name(store.name + side) for side in SIDE_FILES)}
        same = target in names or target.resolve() in {name.resolve() for name in names}
        try:
            same = same or (path.exists() and where.path.exists() and os.path.samefile(path, where.path))
        except OSError:
            pass
        if same:
            return (f"{path} is the results store this command reads or appends to ({where.path}) or one of its "
                    f"files; an output never replaces it: give another {option}")
    content = store_content(path)
    database = next((path.with_name(path.name[:-len(side)]) for side in SIDE_FILES if path.name.endswith(side)), None)
    if content is None and database is not None and store_content(database) == "an SQLite database":
        content = f"a side file of the SQLite database {database} (by its name)"
    if content is not None:
        return f"{path} is {content}; an output never replaces results data: give another {option}"
    if not path.exists() or force:
        return None
    try:
        with path.open("rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    if not head or replaceable(head):
        return None
    return f"{path} exists and is not {what}; give --force to replace it, or another {option}"


def as_location(value: object) -> ResultsLocation:
    """A ResultsLocation from an option's text, a Path or a location. Raises ValueError with the reason, the text
    masked (naming $JAX_BENCHMARKS_RESULTS where the text is its value)."""
    if isinstance(value, ResultsLocation):
        return value
    if isinstance(value, (str, Path)) and str(value):
        try:
            location = ResultsLocation(str(value))
            if location.kind == "postgres":
                try:
                    urlsplit(location.value)
                except ValueError as exc:  # the URL's text is not shown: it may hold the password
                    raise ValueError(f"not a PostgreSQL URL ({exc}); the form is {POSTGRES_FORM}") from None
        except ValueError as exc:
            if os.environ.get(RESULTS_ENV) == str(value):
                raise ValueError(f"${RESULTS_ENV}: {exc}") from None
            raise
        return location
    raise ValueError("give a file path (.jsonl: JSON lines, else SQLite) or a postgresql:// URL")


# click 8.3 made ParamType generic; 8.2 (the low end pyproject.toml admits) cannot be subscripted at run time.
if TYPE_CHECKING:
    LocationParamBase = click.ParamType[ResultsLocation]
else:
    LocationParamBase = click.ParamType


class LocationParam(LocationParamBase):
    """A click option that names a results store (a file path or a postgresql:// URL) as a ResultsLocation:
    a URL stays a URL (not a path with its `//` collapsed) and is shown without its password."""

    name = "PATH|URL"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> ResultsLocation:
        try:
            return as_location(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class DefaultStoreOption(click.Option):
    """An option whose default is the default store (`default_text`): --help shows it as it is when --help runs
    (the working directory, $JAX_BENCHMARKS_RESULTS), masked (`shown_default`)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.show_default = shown_default()
        return super().get_help_record(ctx)


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


def default_text() -> str:
    """Where results go when --results is not given, as text, not yet checked: $JAX_BENCHMARKS_RESULTS, else
    `default_path` (a click option's default: its check is the option's, with the option's error)."""
    return os.environ.get(RESULTS_ENV) or str(default_path(Path.cwd()))


def default_location() -> ResultsLocation:
    """Where results go when --results is not given (`default_text`), checked."""
    return as_location(default_text())


def shown_default() -> str:
    """The default store as --help shows it: masked, whether or not it is a store this tool reads (a refused
    $JAX_BENCHMARKS_RESULTS is said when a command runs)."""
    return masked(default_text().strip())


def side_folder(location: ResultsLocation) -> Path:
    """The folder beside the store, where the files a command writes about its records go (a verdict's page and its
    rounds' log, a calibration's log, `--profile`'s traces): the store file's folder, as the location names it; for
    a PostgreSQL store, which has no folder, the working directory. Every such file is found from here
    (docs/store.md#files-beside-the-store)."""
    return Path.cwd() if location.kind == "postgres" else location.path.parent


def legacy_jsonl(path: Path) -> Path:
    """The JSON-lines file an SQLite store imports once: the same name, .jsonl (results.sqlite <- results.jsonl)."""
    return path.with_suffix(".jsonl")


def open_store(location: ResultsLocation | Path | str, *, create: bool = True,
               log: Callable[[str], None] = lambda _msg: None) -> ResultsStore:
    """The store at `location`. create=False (reading): the store is opened read-only and must exist and be
    one (nothing is written, no table made), unless an SQLite store is first made or completed from its
    JSON-lines file (the one write a reader does, once). Raises StoreError with a one-line reason."""
    where = as_location(location)
    if where.kind == "postgres":
        from jax_benchmarks.store.postgres import PostgresStore

        return PostgresStore(where.value, str(where), where.hide, create=create,
                             lock_timeout_s=where.lock_timeout_s)
    problem = regular_file_problem(where.path)
    if problem:
        raise StoreError(problem)
    if where.kind == "jsonl":
        if not create and not where.path.exists():
            raise NoResultsYet(f"{where.path} does not exist: no results yet")
        return JsonlStore(where.path)
    legacy = legacy_jsonl(where.path)
    if not legacy.is_file():
        return SqliteStore(where.path, create=create, lock_timeout_s=where.lock_timeout_s, log=log)
    mark = f"imported {legacy.resolve()}"
    if not create and where.path.is_file() and where.path.stat().st_size:
        reader = SqliteStore(where.path, create=False, lock_timeout_s=where.lock_timeout_s, log=log)
        if reader.meta(mark) is not None:
            return reader
        reader.close()
    store = SqliteStore(where.path, create=True, lock_timeout_s=where.lock_timeout_s, log=log)
    if store.meta(mark) is None:
        failures: tuple[type[Exception], ...] = (OSError, *store.driver_errors)
        try:
            note = store.import_jsonl(legacy)
        except failures as exc:
            store.close()
            raise StoreError(f"cannot import {legacy} into {where.path}: {store.reason(exc)}") from None
        if note is not None:
            log(note.text(str(where.path)))
    return store


def check_writable(location: ResultsLocation, log: Callable[[str], None] = lambda _msg: None) -> ResultsLocation:
    """Preflight before any work: records can be appended at `location`. A store that exists (a database,
    an SQLite file) is opened as its writer will open it (its header, schema, version, lock and
    writability checked; an SQLite store imports its JSON-lines file here, where it has one); a file that
    does not exist yet is not made, nor its folders: the folder it would be made in is checked. Raises
    ValueError with the reason."""
    if location.kind == "jsonl":
        check_results_path(location.path)
    elif location.kind == "postgres":
        _open_and_close(location, create=True, log=log)
    else:
        _check_sqlite_file(location.path)
        check_folder_writable(location.path)  # where SQLite makes the file, or its WAL's side files
        if location.path.is_file() and location.path.stat().st_size:
            try:
                os.close(os.open(location.path, os.O_RDWR | os.O_NONBLOCK))
            except OSError as exc:
                raise ValueError(f"cannot write {location.path}: {exc.strerror}") from None
            _open_and_close(location, create=True, log=log)
        require_free_space(location.path)
    return location


def check_readable(location: ResultsLocation) -> ResultsLocation:
    """Preflight of a store to read: it exists and is a results store this code reads, opened read-only
    (an SQLite store still to be made from its JSON-lines file is checked when it is made). Raises
    ValueError with the reason."""
    if location.kind == "postgres":
        return _open_and_close(location, create=False)
    if location.path.is_dir():
        raise ValueError(f"{location.path} is {file_kind(stat.S_IFDIR)}, not a results file")
    exists = location.path.exists() or (location.kind == "sqlite" and legacy_jsonl(location.path).is_file())
    if not exists:
        raise NoResultsYet(f"{location.path} does not exist: no results yet")
    if location.kind == "sqlite":
        _check_sqlite_file(location.path)
        if not legacy_jsonl(location.path).is_file():
            _open_and_close(location, create=False)
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


def _open_and_close(location: ResultsLocation, *, create: bool,
                    log: Callable[[str], None] = lambda _msg: None) -> ResultsLocation:
    try:
        open_store(location, create=create, log=log).close()
    except NoResultsYet:
        raise  # a ValueError already, keeping its hint
    except StoreError as exc:
        raise ValueError(str(exc)) from None
    return location


def saved_count(location: ResultsLocation, run_id: str | None) -> int:
    """How many records of run `run_id` (of every run: None) the store holds, read-only (0 where it cannot be
    read): what an interrupted run of several processes says it saved, counted where they saved it."""
    try:
        store = open_store(location, create=False)
    except StoreError:
        return 0
    try:
        with store_errors(store):
            return len(store.run_records(run_id)) if run_id is not None else sum(1 for _ in store.all_records())
    except (StoreError, OSError):
        return 0
    finally:
        store.close()


@contextmanager
def store_errors(store: ResultsStore) -> Iterator[None]:
    """A driver's error while reading (a server gone, a locked or damaged file) as a one-line StoreError."""
    try:
        yield
    except store.driver_errors as exc:
        raise StoreError(f"cannot read {store.location}: {store.reason(exc)}") from None
