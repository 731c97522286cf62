"""The default results store: one SQLite file (Python's own sqlite3) under data/results/.

WAL journal: readers never wait for a writer, and a writer's transaction is in the file whole or not at
all, whatever kills the process. Each write takes the write lock at its start (BEGIN IMMEDIATE) and waits
up to the location's lock timeout (`--lock-timeout`, LOCK_TIMEOUT_S by default) for another process's,
saying so after LOCK_NOTICE_S. synchronous=NORMAL: a commit is written to the WAL without waiting for the
disk (the WAL is synced at each checkpoint): a killed or crashed program loses nothing; a power loss or an
operating-system crash may lose the last commits, never leave a torn one. Syncing every commit (FULL) made
appending a run's 10 records take 90 ms instead of 17 ms here.

A reader (create=False) opens the file read-only (`mode=ro`, `query_only`): it makes no table, changes
no byte of the file and takes no write lock, so it never waits behind a writer. On a read-only file system
SQLite cannot make the WAL's side files a read-only connection needs; there nobody can write either, and
the file is read as `immutable`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from jax_benchmarks.errors import NoResultsYet
from jax_benchmarks.store.sql import Cursor, SqlStore, StoreError

LOCK_TIMEOUT_S = 60.0
LOCK_NOTICE_S = 1.0  # a wait for another process's lock is said after this long (well within 2 s)
PAGE_SIZE = 16384
# The first bytes of every SQLite database file (https://www.sqlite.org/fileformat.html).
SQLITE_HEADER = b"SQLite format 3\0"


def sqlite_problem(path: Path) -> str | None:
    """Why an existing, non-empty file is not an SQLite database (None: it is one, or empty)."""
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_HEADER))
    return None if not head or head == SQLITE_HEADER else "not an SQLite database (nor a .jsonl file)"


def is_busy(exc: BaseException) -> bool:
    """SQLite's "database is locked": another connection holds the lock this one needs."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    return isinstance(exc, sqlite3.OperationalError) and code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def read_only_uri(path: Path, *, immutable: bool = False) -> str:
    return f"file:{quote(str(path.absolute()))}?mode=ro" + ("&immutable=1" if immutable else "")


class SqliteStore(SqlStore):
    driver_errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, path: Path, *, create: bool = True, lock_timeout_s: float = LOCK_TIMEOUT_S,
                 log: Callable[[str], None] = lambda _msg: None) -> None:
        super().__init__(str(path))
        self.path = path
        self.lock_timeout_s = lock_timeout_s
        self.log = log
        try:
            if not path.exists() and not create:
                raise NoResultsYet(f"{path} does not exist: no results yet")
            if path.exists() and (problem := sqlite_problem(path)):
                raise StoreError(f"{path} is {problem}; give another --results file")
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.connect_when_free(path)
            else:
                self.connect_read_only(path)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot use {path} as a results store: {self.reason(exc)}") from None

    def connect_read_only(self, path: Path) -> None:
        """Connect for reading (`self.conn`): nothing is written, no lock is waited for (a WAL reader needs
        none), and the file must hold a results store this code reads."""
        if path.stat().st_size == 0:
            raise NoResultsYet(f"{path} is an empty file, not a results store: no results yet")
        try:
            conn = self._connect_read_only(path, immutable=False)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode != sqlite3.SQLITE_CANTOPEN:
                raise
            conn = self._connect_read_only(path, immutable=True)  # a read-only file system: see the docstring
        self.conn = conn
        try:
            self.check_readable(conn.cursor())
        except BaseException:
            conn.close()
            raise

    def _connect_read_only(self, path: Path, *, immutable: bool) -> sqlite3.Connection:
        conn = sqlite3.connect(read_only_uri(path, immutable=immutable), uri=True, timeout=self.lock_timeout_s,
                               isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA query_only = 1")
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens the file (and its WAL) now
        except BaseException:
            conn.close()
            raise
        return conn

    def connect_when_free(self, path: Path) -> None:
        """Connect for writing (`self.conn`), refuse another program's database before changing any of its
        bytes, set the file up and make the tables, waiting up to the lock timeout for other writers.
        SQLite answers "database is locked" at once, without waiting, while another connection turns a
        new file to WAL or recovers its WAL index (two processes opening a new store together): try again."""
        deadline = time.monotonic() + self.lock_timeout_s
        while True:
            conn = sqlite3.connect(path, timeout=self.lock_timeout_s, isolation_level=None, check_same_thread=False)
            try:
                self.conn = conn  # what `transaction` writes through
                self.stored_schema(conn.cursor())  # a read: the refusals come before the pragmas write
                # A record is a few KB: on 16 KiB pages (set before the first table; kept by an existing file)
                # most fit in one page, without a chain of overflow pages (an import took 30 % less time).
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                with self.transaction() as cur:
                    made = self.create_schema(cur)
                if made:
                    self.truncate_wal()
                return
            except sqlite3.OperationalError as exc:
                conn.close()
                if not is_busy(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
            except BaseException:
                conn.close()
                raise

    def reason(self, exc: BaseException) -> str:
        if isinstance(exc, OSError) and exc.strerror:
            return exc.strerror
        if is_busy(exc):
            return (f"another process holds its write lock and kept it for more than {self.lock_timeout_s:g} s "
                    "(--lock-timeout SECONDS waits longer)")
        return super().reason(exc)

    def cursor(self) -> Cursor:
        return self.conn.cursor()

    def begin(self, cur: sqlite3.Cursor) -> None:
        """BEGIN IMMEDIATE: take the write lock, waiting for another process's up to the lock timeout, and
        say so when the wait passes LOCK_NOTICE_S."""
        if self.lock_timeout_s <= LOCK_NOTICE_S:
            cur.execute("BEGIN IMMEDIATE")
            return
        self.conn.execute(f"PRAGMA busy_timeout = {int(LOCK_NOTICE_S * 1000)}")
        try:
            cur.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            self.log(f"waiting for {self.path}: another process holds its write lock "
                     f"(up to {self.lock_timeout_s:g} s, --lock-timeout)")
            self.conn.execute(f"PRAGMA busy_timeout = {int((self.lock_timeout_s - LOCK_NOTICE_S) * 1000)}")
            cur.execute("BEGIN IMMEDIATE")
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.lock_timeout_s * 1000)}")

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        cur = self.conn.cursor()
        self.begin(cur)
        try:
            yield cur
            cur.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:  # SQLite may have rolled back itself (a full disk: SQLITE_FULL)
                self.conn.rollback()
            self.truncate_wal()
            raise

    def truncate_wal(self) -> None:
        """Copy what the WAL holds into the file and empty it, without waiting for anyone: after a rollback the
        rolled-back pages would keep its disk space (on a full disk the next command would find no room); after
        the tables are made, a failing import then leaves an empty WAL. Best effort: another process that
        reads or writes keeps the WAL as it is (and empties it itself)."""
        try:
            self.conn.execute("PRAGMA busy_timeout = 0")
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.lock_timeout_s * 1000)}")
        except sqlite3.Error:
            pass

    def close(self) -> None:
        self.conn.close()
