"""The SQL results store, one schema for SQLite and PostgreSQL (src/jax_benchmarks/store/sqlite.py, postgres.py).

Each record is kept as its JSON text, next to the few columns the views select on, so a field added to
Record later is stored and read back with no change here: its samples in `records.samples` and the rest
in `records.body` (`split_samples`; a text in another layout is kept whole in `body`, `samples` NULL).
A view that shows medians reads `body` alone. `runs` holds one row per
(group, run) (backend '') and one per (group, backend, run): the time of its last record, which orders runs,
and the environment of its last record, which tells its machine. The views read those rows through their
indexes and then only the records they show: their cost follows what they show, not the history.

Store schema versions (`meta.schema`): 1 = each record whole in `body`; 2 = `records.samples` added
(a store of version 1 gains the column when a writer opens it; its records stay whole, and read as before;
a reader reads it as it is). A record keeps its own `schema_version`. A reader changes nothing: it checks
the tables and the version (`check_readable`) and reads.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Protocol, cast

from jax_benchmarks.errors import NoResultsYet, ResultsWriteError, first_line
# Raised by every store; imported from here by their users too (re-exported).
from jax_benchmarks.errors import StoreError as StoreError
from jax_benchmarks.store.jsonl import BadLines, records_with_text
from jax_benchmarks.store.record import SCALAR_TYPES, Record, parse_record, split_samples
from jax_benchmarks.store.views import EarlierRun, Env, run_key

STORE_SCHEMA = 2
STORE_TABLES = frozenset({"meta", "envs", "records", "runs"})
INTERNAL_TABLE = "sqlite_"  # SQLite's own tables (sqlite_sequence, sqlite_stat1) start with it
LISTED_TABLES = 5  # tables named in the refusal of another program's database
ALL_BACKENDS = ""  # the `runs.backend` of the row that stands for a whole run of a group
FETCH_ROWS = 500  # rows taken from a cursor at a time where a view reads many
# Greater than any character: `prefix <= id < prefix + HIGHEST` is "id starts with prefix", on an index.
HIGHEST = "\U0010ffff"

# {text} is the text column type, {id} the auto-incremented key: they differ between SQLite and PostgreSQL.
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key {text} PRIMARY KEY, value {text} NOT NULL)",
    "CREATE TABLE IF NOT EXISTS envs (id {id}, digest {text} NOT NULL UNIQUE, env {text} NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records (id {id}, run_id {text} NOT NULL, timestamp {text} NOT NULL, "
    "grp {text} NOT NULL, backend {text} NOT NULL, env_id BIGINT NOT NULL, body {text} NOT NULL, samples {text})",
    "CREATE INDEX IF NOT EXISTS records_run ON records (run_id, id)",
    "CREATE INDEX IF NOT EXISTS records_group ON records (grp, id)",
    "CREATE TABLE IF NOT EXISTS runs (grp {text} NOT NULL, backend {text} NOT NULL, run_id {text} NOT NULL, "
    "last_ts {text} NOT NULL, last_id BIGINT NOT NULL, env_id BIGINT NOT NULL, PRIMARY KEY (grp, backend, run_id))",
    "CREATE INDEX IF NOT EXISTS runs_latest ON runs (grp, backend, last_ts, run_id)",
    "CREATE INDEX IF NOT EXISTS runs_time ON runs (backend, last_ts, run_id)",
    "CREATE INDEX IF NOT EXISTS runs_id ON runs (run_id)",
    "CREATE INDEX IF NOT EXISTS runs_groups ON runs (backend, grp)",
)
# A records row as `append` writes it (the database gives the id), and as an import writes it (ids given,
# in the order of the rows `insert_many` builds).
RECORD_FIELDS = ("run_id", "timestamp", "grp", "backend", "env_id", "body", "samples")
IMPORT_FIELDS = ("id", *RECORD_FIELDS)
IMPORT_COLUMNS = ", ".join(IMPORT_FIELDS)
INSERT_RECORD = f"INSERT INTO records ({', '.join(RECORD_FIELDS)}) VALUES ({', '.join('?' * len(RECORD_FIELDS))})"
INSERT_IMPORTED = f"INSERT INTO records ({IMPORT_COLUMNS}) VALUES ({', '.join('?' * len(IMPORT_FIELDS))})"
UPSERT_RUN = (
    "INSERT INTO runs (grp, backend, run_id, last_ts, last_id, env_id) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (grp, backend, run_id) DO UPDATE SET last_ts = {greatest}(runs.last_ts, excluded.last_ts), "
    "last_id = excluded.last_id, env_id = excluded.env_id"
)


@dataclass(frozen=True)
class ImportNote:
    """What an import of a JSON-lines file brought in."""

    path: Path
    records: int
    skipped: str | None  # the summary of the lines left out (corrupt), None when there were none

    def text(self, into: str) -> str:
        return (f"imported {self.records} records from {self.path} into {into} (once; the file is kept as it is)"
                + (f"; {self.skipped}" if self.skipped else ""))


class Cursor(Protocol):
    """What the views use of a DB-API cursor (sqlite3's and psycopg's)."""

    def execute(self, sql: Any, params: Sequence[Any] = ()) -> Any: ...

    def executemany(self, sql: Any, seq: Iterable[Sequence[Any]]) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchmany(self, size: int) -> Sequence[Any]: ...

    def fetchall(self) -> Sequence[Any]: ...


def env_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def env_text(env: Env) -> str:
    return json.dumps(env, sort_keys=True, separators=(",", ":"))


class SqlStore:
    """The views and writes of both SQL stores; a subclass connects, and says how its SQL differs."""

    driver_errors: tuple[type[Exception], ...] = ()
    placeholder = "?"
    text_type = "TEXT"
    id_type = "INTEGER PRIMARY KEY"
    greatest = "MAX"
    # Run in the transaction that creates the tables or brings them to STORE_SCHEMA.
    layout_statements: tuple[str, ...] = ()
    # The names of the tables of the database (or of its current schema); the store's are STORE_TABLES.
    tables_query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    # True: the database is the store's alone (an SQLite file), so a table of another name makes it another
    # program's; False: a database the store may share with other tables (PostgreSQL).
    owns_database = True

    def __init__(self, location: str) -> None:
        self._location = location
        self.bad = BadLines(location, unit="record id")
        self._envs: dict[int, Env] = {}  # env id -> env, read once
        self._env_ids: dict[str, int] = {}  # env digest -> id, of envs committed
        self.samples_column = "samples"  # what the views select for `records.samples` (NULL: schema 1)

    # -------------------------------------------------------- subclass ---
    def cursor(self) -> Cursor:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[Cursor]:
        """A write transaction that holds the store's write lock from its start, committed on leaving."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # ---------------------------------------------------------- common ---
    @property
    def location(self) -> str:
        return self._location

    def sql(self, text: str) -> str:
        return text.format(greatest=self.greatest).replace("?", self.placeholder)

    def stored_schema(self, cur: Cursor) -> int | None:
        """The schema version of the results store this database holds (read only, nothing changed); None
        when it holds none of the store's tables (a new database). Raises StoreError, naming the store and
        what is wrong, for another program's database (SQLite: a file is a store of its own, so any other
        table; PostgreSQL: some of the store's tables without the rest), a damaged `meta` row or a newer
        schema."""
        cur.execute(self.tables_query)
        tables = {str(row[0]) for row in cur.fetchall() if not str(row[0]).startswith(INTERNAL_TABLE)}
        ours = tables & STORE_TABLES
        if not ours and not (tables and self.owns_database):
            return None
        if ours != STORE_TABLES:
            listed = ", ".join(repr(name) for name in sorted(tables)[:LISTED_TABLES])
            raise StoreError(f"{self.location} is not a jax-benchmarks results store (its tables: {listed}); "
                             "give another --results")
        cur.execute(self.sql("SELECT value FROM meta WHERE key = ?"), ("schema",))
        row = cur.fetchone()
        value = None if row is None else str(row[0])
        # Written by this code as str(int): anything else is damage (a hand edit, a disk error).
        if value is None or not (value.isascii() and value.isdigit() and len(value) <= 6):
            shown = "is missing" if value is None else f"holds {value[:40]!r}, not a schema version"
            raise StoreError(f"{self.location} is damaged: its meta row 'schema' {shown}; "
                             "restore the store from a copy or give another --results")
        version = int(value)
        if version > STORE_SCHEMA:
            raise StoreError(f"{self.location} was written by a newer jax-benchmarks (store schema {version}; "
                             f"this one reads up to {STORE_SCHEMA}): update jax-benchmarks to read it")
        return version

    def check_readable(self, cur: Cursor) -> None:
        """A reader's check at opening (no write): the database holds a results store of a schema this code
        reads. One with none of the store's tables has no records yet: a StoreError, as an empty store is."""
        version = self.stored_schema(cur)
        if version is None:
            raise NoResultsYet(f"no benchmark records in {self.location}")
        self.samples_column = "samples" if version >= 2 else "NULL"  # schema 1 has no samples column

    def create_schema(self, cur: Cursor) -> bool:
        """Make the tables (in the caller's write transaction), bring a store of an earlier schema up to
        this one, or refuse another program's database, a damaged one or one of a newer schema. True when
        it changed the database."""
        version = self.stored_schema(cur)
        if version == STORE_SCHEMA:
            return False
        for statement in SCHEMA:
            cur.execute(statement.format(text=self.text_type, id=self.id_type))
        if version is not None and version < 2:
            cur.execute(f"ALTER TABLE records ADD COLUMN samples {self.text_type}")
        cur.execute(self.sql("DELETE FROM meta WHERE key = ?"), ("schema",))
        cur.execute(self.sql("INSERT INTO meta (key, value) VALUES (?, ?)"), ("schema", str(STORE_SCHEMA)))
        for statement in self.layout_statements:
            cur.execute(statement)
        return True

    def meta(self, key: str) -> str | None:
        cur = self.cursor()
        cur.execute(self.sql("SELECT value FROM meta WHERE key = ?"), (key,))
        row = cur.fetchone()
        return None if row is None else str(row[0])

    def _env_id(self, cur: Cursor, env: Env, new: dict[str, int]) -> int:
        text = env_text(env)
        digest = env_digest(text)
        known = self._env_ids.get(digest, new.get(digest))
        if known is not None:
            return known
        cur.execute(self.sql("INSERT INTO envs (digest, env) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING"),
                    (digest, text))
        cur.execute(self.sql("SELECT id FROM envs WHERE digest = ?"), (digest,))
        new[digest] = int(cur.fetchone()[0])
        return new[digest]

    def reason(self, exc: BaseException) -> str:
        """The driver's error in one line (its messages never hold the password)."""
        return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)

    def append(self, record: Record) -> None:
        """One record in one transaction: its row, its environment and its runs' rows, or nothing."""
        body, samples = split_samples(record.model_dump_json())
        new: dict[str, int] = {}
        try:
            with self.transaction() as cur:
                env_id = self._env_id(cur, record.env, new)
                cur.execute(self.sql(f"{INSERT_RECORD} RETURNING id"),
                            (record.run_id, record.timestamp, record.group, record.backend, env_id, body, samples))
                record_id = int(cur.fetchone()[0])
                upsert = self.sql(UPSERT_RUN)
                for backend in dict.fromkeys((ALL_BACKENDS, record.backend)):
                    cur.execute(upsert, (record.group, backend, record.run_id, record.timestamp, record_id, env_id))
        except self.driver_errors as exc:
            raise ResultsWriteError(self.location, self.reason(exc)) from None
        self._env_ids.update(new)  # only once committed: a rolled-back id may be taken by another writer

    def import_jsonl(self, path: Path) -> ImportNote | None:
        """Copy every valid record of a JSON-lines file into the store, once: the import and its mark in
        `meta` are one transaction (a killed import leaves nothing, and is done again at the next open).
        None when the file was imported before. The file itself is left as it is."""
        key = f"imported {path.resolve()}"
        with self.transaction() as cur:
            cur.execute(self.sql("SELECT value FROM meta WHERE key = ?"), (key,))
            if cur.fetchone() is not None:
                return None
            bad = BadLines(path)
            count = self.insert_many(cur, records_with_text(path, bad))
            note = ImportNote(path, count, bad.summary())
            mark = {"records": count, "skipped": len(bad.numbers), "bytes": path.stat().st_size,
                    "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
            cur.execute(self.sql("INSERT INTO meta (key, value) VALUES (?, ?)"), (key, json.dumps(mark)))
        return note

    def lock_for_import(self, cur: Cursor) -> None:
        """Be the only writer of `records` until the transaction ends (an import gives the ids itself)."""

    def after_import(self, cur: Cursor) -> None:
        """Whatever the database needs after ids were given explicitly."""

    def insert_rows(self, cur: Cursor, rows: list[tuple[Any, ...]]) -> None:
        """Bulk insert of (id, run_id, timestamp, grp, backend, env_id, body, samples) rows."""
        cur.executemany(self.sql(INSERT_IMPORTED), rows)

    def insert_many(self, cur: Cursor, records: Iterable[tuple[Record, str]]) -> int:
        """Bulk insert (an import) in the caller's transaction: each record with its JSON text as given (its
        samples apart where the line is as Run.record writes it: read index-only, `record._source`), ids
        given in order after the highest one; the runs' rows are gathered on the way and upserted once."""
        self.lock_for_import(cur)
        cur.execute("SELECT COALESCE(MAX(id), 0) FROM records")
        first_id = next_id = int(cur.fetchone()[0]) + 1
        new: dict[str, int] = {}
        # id(env) -> (env, its id): a file's records share their env objects (each kept here, so that no
        # other object takes its id while the import runs).
        env_ids: dict[int, tuple[Env, int]] = {}
        runs: dict[tuple[str, str, str], list[Any]] = {}  # (group, backend, run) -> [last ts, last id, env id]
        chunk: list[tuple[Any, ...]] = []
        for record, body in records:
            known = env_ids.get(id(record.env))
            env_id = known[1] if known else self._env_id(cur, record.env, new)
            env_ids[id(record.env)] = (record.env, env_id)
            for backend in dict.fromkeys((ALL_BACKENDS, record.backend)):
                run = runs.setdefault((record.group, backend, record.run_id), [record.timestamp, 0, 0])
                run[0] = max(run[0], record.timestamp)
                run[1:] = next_id, env_id
            parts = split_samples(body) if record._source is not None else (body, None)
            chunk.append((next_id, record.run_id, record.timestamp, record.group, record.backend, env_id, *parts))
            next_id += 1
            if len(chunk) == FETCH_ROWS:
                self.insert_rows(cur, chunk)
                chunk = []
        if chunk:
            self.insert_rows(cur, chunk)
        cur.executemany(self.sql(UPSERT_RUN), [(*key, *values) for key, values in runs.items()])
        self.after_import(cur)
        return next_id - first_id

    # ----------------------------------------------------------- views ---
    def _records(self, where: str, params: Sequence[Any], samples: bool = True) -> list[Record]:
        cur = self.cursor()
        cur.execute(self.sql(f"SELECT id, body, {self.samples_column if samples else 'NULL'} FROM records "
                             f"WHERE {where} ORDER BY id"), params)
        return list(self._parsed(cur))

    def _parsed(self, cur: Cursor) -> Iterator[Record]:
        # As in reading a JSON-lines file: each record makes container objects and none is garbage; the
        # cyclic collector, triggered every 700 of them, would rescan the growing list (40 % of the time).
        collecting = gc.isenabled()
        gc.disable()
        try:
            while rows := cur.fetchmany(FETCH_ROWS):
                for record_id, body, samples in rows:
                    try:
                        yield parse_record(body, samples)
                    except ValueError as exc:
                        self.bad.add(int(record_id), str(exc))
        finally:
            if collecting:
                gc.enable()

    def _env(self, env_id: int) -> Env:
        if env_id not in self._envs:
            cur = self.cursor()
            cur.execute(self.sql("SELECT env FROM envs WHERE id = ?"), (env_id,))
            row = cur.fetchone()
            self._envs[env_id] = {} if row is None else self._parsed_env(env_id, str(row[0]))
        return self._envs[env_id]

    def _parsed_env(self, env_id: int, text: str) -> Env:
        """An `envs` row's environment: a JSON object of scalars, or a StoreError naming the store and the row
        (the environment of every record of a run: a report cannot tell its machine without it)."""
        try:
            env = json.loads(text)
        except (ValueError, RecursionError) as exc:
            problem = f"is not JSON ({first_line(exc, 80)})"
        else:
            if type(env) is dict and SCALAR_TYPES.issuperset(map(type, env.values())):
                return cast(Env, env)
            problem = "is not a JSON object of names and values"
        raise StoreError(f"{self.location} is damaged: its envs row {env_id} {problem}; "
                         "restore the store from a copy or give another --results")

    def is_empty(self) -> bool:
        cur = self.cursor()
        cur.execute("SELECT 1 FROM records LIMIT 1")
        return cur.fetchone() is None

    def groups(self, backend: str | None) -> list[str]:
        cur = self.cursor()
        cur.execute(self.sql("SELECT DISTINCT grp FROM runs WHERE backend = ? ORDER BY grp"),
                    (backend or ALL_BACKENDS,))
        return [str(row[0]) for row in cur.fetchall()]

    def backends(self, group: str | None) -> list[str]:
        cur = self.cursor()
        where, params = ("backend <> ? AND grp = ?", (ALL_BACKENDS, group)) if group else ("backend <> ?", (ALL_BACKENDS,))
        cur.execute(self.sql(f"SELECT DISTINCT backend FROM runs WHERE {where} ORDER BY backend"), params)
        return [str(row[0]) for row in cur.fetchall()]

    def _run_of(self, run_id: str, group: str, backend: str | None) -> list[Record]:
        # Selected on the run alone, its few records filtered here: with more conditions a query planner
        # without statistics may take the group's index and read the whole group.
        return [r for r in self._records("run_id = ?", (run_id,))
                if r.group == group and (backend is None or r.backend == backend)]

    def latest_run(self, group: str, backend: str | None) -> list[Record]:
        cur = self.cursor()
        cur.execute(self.sql("SELECT run_id FROM runs WHERE grp = ? AND backend = ? "
                             "ORDER BY last_ts DESC, run_id DESC LIMIT 1"), (group, backend or ALL_BACKENDS))
        row = cur.fetchone()
        return [] if row is None else self._run_of(str(row[0]), group, backend)

    def run_ids(self, prefix: str) -> list[str]:
        cur = self.cursor()
        cur.execute(self.sql("SELECT run_id, MAX(last_ts) FROM runs WHERE backend = ? AND run_id >= ? "
                             "AND run_id < ? GROUP BY run_id"), (ALL_BACKENDS, prefix, prefix + HIGHEST))
        return [str(rid) for rid, _ in sorted(cur.fetchall(), key=lambda row: (row[1], row[0]))]

    def latest_run_ids(self, count: int) -> list[str]:
        cur = self.cursor()
        # A run of several groups has a row in each: enough rows for `count` runs of up to 8 groups.
        cur.execute(self.sql("SELECT run_id FROM runs WHERE backend = ? ORDER BY last_ts DESC, run_id DESC LIMIT ?"),
                    (ALL_BACKENDS, count * 8))
        return list(dict.fromkeys(str(row[0]) for row in cur.fetchall()))[:count]

    def run_records(self, run_id: str) -> list[Record]:
        return self._records("run_id = ?", (run_id,))

    def earlier_runs(self, current: Sequence[Record], backend: str | None) -> Iterator[EarlierRun]:
        group = current[0].group
        last_ts, run_id = run_key(current)
        cur = self.cursor()
        cur.execute(self.sql("SELECT run_id, env_id FROM runs WHERE grp = ? AND backend = ? AND (last_ts, run_id) < (?, ?) "
                             "ORDER BY last_ts DESC, run_id DESC"), (group, backend or ALL_BACKENDS, last_ts, run_id))
        while rows := cur.fetchmany(FETCH_ROWS):
            for earlier, env_id in rows:
                yield self._env(int(env_id)), partial(self._run_of, str(earlier), group, backend)

    def history(self, group: str | None, backend: str | None, *, samples: bool = True) -> list[Record]:
        conditions = [(column, value) for column, value in (("grp", group), ("backend", backend)) if value is not None]
        where = " AND ".join(f"{column} = ?" for column, _ in conditions) or "1 = 1"
        # Without samples: `body` alone (a record kept whole brings its samples all the same).
        return self._records(where, [value for _, value in conditions], samples)

    def all_records(self) -> Iterator[Record]:
        cur = self.cursor()
        cur.execute(f"SELECT id, body, {self.samples_column} FROM records ORDER BY id")
        yield from self._parsed(cur)

    def warnings(self) -> list[str]:
        summary = self.bad.summary()
        return [summary] if summary else []
