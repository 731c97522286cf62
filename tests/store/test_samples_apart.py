"""The SQL stores keep a record's samples apart from the rest of its JSON (`split_samples`), so that a
history of medians reads no samples; a text in another layout is kept whole and reads as before; a store
of schema 1 (every record whole) gains the column when opened and reads as it did."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jax_benchmarks.store.location import open_store
from jax_benchmarks.store.record import parse_record, split_samples
from jax_benchmarks.store.sql import STORE_SCHEMA, SqlStore
from tests.report.fixtures import all_records


def sql_store(location: str) -> SqlStore:
    store = open_store(location)
    assert isinstance(store, SqlStore)
    return store


def execute(store: SqlStore, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with store.transaction() as cur:
        cur.execute(store.sql(statement), params)
        return list(cur.fetchall()) if statement.startswith("SELECT") else []


def test_a_records_json_splits_into_its_samples_and_the_rest() -> None:
    record = all_records()[0]
    text = record.model_dump_json()
    body, samples = split_samples(text)
    assert samples is not None and json.loads(samples) == record.samples_s
    assert "samples_s" not in body and json.loads(body) == {k: v for k, v in json.loads(text).items() if k != "samples_s"}
    assert parse_record(body, samples) == record
    assert parse_record(body) == record.model_copy(update={"samples_s": []})
    empty = record.model_copy(update={"samples_s": []}).model_dump_json()
    assert split_samples(empty) == (empty.replace(',"samples_s":[]', ""), "[]")


@pytest.mark.parametrize("text", [
    # another layout: spaces (json.dumps), the samples elsewhere, first, or last
    json.dumps(json.loads(all_records()[0].model_dump_json())),
    '{"samples_s":[1.0],"compile_s":null,"run_id":"r"}',
    '{"run_id":"r","compile_s":null,"samples_s":[1.0]}',
    # the key twice (once inside params): which one is the record's is not told by the layout
    '{"params":{"samples_s":[2.0]},"repeats":1,"samples_s":[1.0],"compile_s":null}',
    # the key only inside params, followed by what follows the record's own
    '{"params":{"x":1,"samples_s":[2.0],"compile_s":null},"repeats":0}',
    # a list inside the list: not a list of numbers
    '{"repeats":1,"samples_s":[[1.0]],"compile_s":null}',
])
def test_a_text_in_another_layout_is_kept_whole(text: str) -> None:
    assert split_samples(text) == (text, None)


def test_a_history_of_medians_reads_no_samples(location: str) -> None:
    records = all_records()
    store = sql_store(location)
    try:
        for record in records:
            store.append(record)
        apart = execute(store, "SELECT COUNT(*) FROM records WHERE samples IS NOT NULL")[0][0]
        full = store.history(None, None)
        lean = store.history(None, None, samples=False)
    finally:
        store.close()
    assert apart == len(records) and full == records and all(r.samples_s for r in records)
    assert lean == [r.model_copy(update={"samples_s": []}) for r in records]


def test_records_kept_whole_or_odd_read_as_in_every_view(location: str) -> None:
    """A record kept whole (its samples in its body), one whose JSON holds a NaN (Python writes them; an
    import keeps the text), one with a corrupt body and one with corrupt samples."""
    whole, nan, corrupt, bad_samples = all_records()[:4]
    store = sql_store(location)
    try:
        for record in (whole, nan, corrupt, bad_samples):
            store.append(record)
        execute(store, "UPDATE records SET body = ?, samples = NULL WHERE id = 1", (whole.model_dump_json(),))
        nan_body = split_samples(nan.model_copy(update={"metrics": {"loss": 1.0}}).model_dump_json())[0]
        execute(store, "UPDATE records SET body = ? WHERE id = 2", (nan_body.replace('"loss":1.0', '"loss":NaN'),))
        execute(store, "UPDATE records SET body = ? WHERE id = 3", ('{"run_id": "torn',))
        execute(store, "UPDATE records SET samples = ? WHERE id = 4", ("[0.1, NaN]",))
        full = store.history(None, None)
        full_bad = sorted(store.bad.numbers)
        store.bad.numbers.clear()
        lean = store.history(None, None, samples=False)
        lean_bad = sorted(store.bad.numbers)
    finally:
        store.close()
    assert len(full) == 2 and full[0] == whole and whole.samples_s  # whole: its samples come from its body
    assert full[1].samples_s == nan.samples_s and full[1].metrics["loss"] != full[1].metrics["loss"]
    assert full_bad == [3, 4]  # a torn body; samples that are not durations
    assert len(lean) == 3 and lean[0] == whole  # kept whole: a view of medians gets its samples all the same
    assert lean[1].samples_s == [] and lean[1].metrics["loss"] != lean[1].metrics["loss"]
    assert lean[2] == bad_samples.model_copy(update={"samples_s": []})  # its samples are not read
    assert lean_bad == [3]


def test_a_store_of_schema_1_gains_the_column_and_reads_as_before(location: str) -> None:
    records = all_records()
    old, new = records[:6], records[6:]
    store = sql_store(location)
    try:  # schema 1, as the version before this one wrote it: no samples column, every record whole
        for record in old:
            store.append(record)
        for number, record in enumerate(old, start=1):
            execute(store, "UPDATE records SET body = ? WHERE id = ?", (record.model_dump_json(), number))
        execute(store, "ALTER TABLE records DROP COLUMN samples")
        execute(store, "UPDATE meta SET value = '1' WHERE key = 'schema'")
    finally:
        store.close()
    store = sql_store(location)
    try:
        assert store.meta("schema") == str(STORE_SCHEMA) == "2"
        for record in new:
            store.append(record)
        nulls = execute(store, "SELECT id FROM records WHERE samples IS NULL ORDER BY id")
        full = store.history(None, None)
        lean = store.history(None, None, samples=False)
    finally:
        store.close()
    assert [row[0] for row in nulls] == list(range(1, len(old) + 1))  # the old records stay whole
    assert full == records
    assert lean == old + [r.model_copy(update={"samples_s": []}) for r in new]
    reopened = sql_store(location)  # opened again: nothing more to change
    try:
        assert reopened.meta("schema") == "2" and reopened.history(None, None) == records
    finally:
        reopened.close()
