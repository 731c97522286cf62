"""The default results store: one SQLite file (Python's own sqlite3) under data/results/.

WAL journal: readers never wait for a writer, and a writer's transaction is in the file whole or not at
all, whatever kills the process. Each write takes the write lock at its start (BEGIN IMMEDIATE) and waits
up to BUSY_TIMEOUT_S for another process's. synchronous=NORMAL: a commit is written to the WAL without
waiting for the disk (the WAL is synced at each checkpoint): a killed or crashed program loses nothing;
a power loss or an operating-system crash may lose the last commits, never leave a torn one. Syncing
every commit (FULL) made appending a run's 10 records take 90 ms instead of 17 ms here.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jax_benchmarks.store.sql import Cursor, SqlStore, StoreError

BUSY_TIMEOUT_S = 60.0
PAGE_SIZE = 16384
# The first bytes of every SQLite database file (https://www.sqlite.org/fileformat.html).
SQLITE_HEADER = b"SQLite format 3\0"


def sqlite_problem(path: Path) -> str | None:
    """Why an existing, non-empty file is not an SQLite database (None: it is one, or empty)."""
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_HEADER))
    return None if not head or head == SQLITE_HEADER else "not an SQLite database (nor a .jsonl file)"


class SqliteStore(SqlStore):
    driver_errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, path: Path, *, create: bool = True) -> None:
        super().__init__(str(path))
        self.path = path
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            elif not path.exists():
                raise StoreError(f"{path} does not exist: no results yet, run a benchmark first "
                                 "(e.g. `python main.py xla all`)")
            if path.exists() and (problem := sqlite_problem(path)):
                raise StoreError(f"{path} is {problem}; give another --results file")
            self.connect_when_free(path)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot use {path} as a results store: {self.reason(exc)}") from None

    def connect_when_free(self, path: Path) -> None:
        """Connect (`self.conn`), set the file up and make the tables, waiting up to BUSY_TIMEOUT_S for others.
        SQLite answers "database is locked" at once, without waiting, while another connection turns a
        new file to WAL or recovers its WAL index (two processes opening a new store together): try again."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
            try:
                # A record is a few KB: on 16 KiB pages (set before the first table; kept by an existing file)
                # most fit in one page, without a chain of overflow pages (an import took 30 % less time).
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                self.conn = conn  # what `transaction` writes through
                with self.transaction() as cur:
                    self.create_schema(cur)
                return
            except sqlite3.OperationalError as exc:
                conn.close()
                busy = (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def reason(self, exc: BaseException) -> str:
        if isinstance(exc, OSError) and exc.strerror:
            return exc.strerror
        return super().reason(exc)

    def cursor(self) -> Cursor:
        return self.conn.cursor()

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
            cur.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.rollback()
            raise

    def close(self) -> None:
        self.conn.close()
