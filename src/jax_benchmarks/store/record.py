"""A record: one measured figure and everything needed to interpret it later, and how one is read back
from its JSON text (the same in every store: a JSON-lines file keeps a record's JSON whole, the SQL stores
keep its samples apart from the rest, `split_samples`).

Reading checks a record in full: anything corrupt, hostile or impossible (bad bytes, broken JSON, deep
nesting, huge numbers, negative / NaN / infinite times) is refused with a short reason.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, cast

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

SCHEMA_VERSION = 2  # 2: `memory`; records written before the field existed load as version 0
Scalar = float | int | str | bool | None
# A duration is finite, never negative and below ~32 years: anything else in a file is corrupt, not data.
MAX_SECONDS = 1e9
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]


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
    # What other processes took of the machine while the figure was timed
    # (src/jax_benchmarks/measure/contention.py: window_s, busy, cores, others_cores, steal_cores, or
    # unknown: why it cannot be told); empty in records written before it existed (they still read).
    contention: dict[str, Scalar] = Field(default_factory=dict)
    # --profile's untimed pass (src/jax_benchmarks/measure/profile.py): the trace file (relative to the store's
    # folder), its breakdown shares, a jitted case's compiled program (file, sha256, fusions, XLA flags).
    profile: dict[str, Scalar] = Field(default_factory=dict)
    # Memory figures (src/jax_benchmarks/measure/memory.py); empty in records of version 1 and before.
    memory: dict[str, Scalar] = Field(default_factory=dict)
    # Last: report's index-only read takes env from the end of each line (INDEX_HEAD, ENV_KEY).
    env: dict[str, Scalar] = Field(default_factory=dict)
    # Where the line is (file, byte offset, line number) while the record is index-only; see
    # `jax_benchmarks.store.jsonl.complete_records`.
    _source: tuple[Path, int, int] | None = PrivateAttr(default=None)


def of_operation(case: str, operation: str) -> bool:
    """Whether `case` is a case of `operation`: `{operation}_{shape}_{dtype}`, or `operation` alone, as the records
    written before the cases were named `{op}_{shape}_{dtype}` call it (mnist's first `train_epoch`, `validation`)."""
    return case == operation or case.startswith(f"{operation}_")


def first_call_extra_s(record: Record) -> float | None:
    """How much longer a figure's first call took than its steady calls (metric `first_call_s` above the median, at
    least 0): an eager figure's one-off cost, as `compile_s` is a compiled one's (JAX's eager mode compiles each
    operation the first time it runs it); None where not recorded."""
    first = record.metrics.get("first_call_s")
    if not isinstance(first, (int, float)) or isinstance(first, bool) or not record.median_s:
        return None
    return max(float(first) - record.median_s, 0.0)


def new_run_id() -> str:
    """Sortable and unique: UTC time plus a random suffix."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def _json(text: bytes | str) -> Any:
    try:
        return json.loads(text)
    except UnicodeDecodeError:
        raise ValueError("bytes that are not UTF-8") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and integers beyond Python's digit limit
        raise ValueError(str(exc).splitlines()[0][:120]) from None


def parse_record(line: bytes | str, samples: str | None = None) -> Record:
    """A record's JSON as a Record; ValueError (with a short reason) for anything that is not a valid record.
    `samples`: the JSON of its samples where they were kept apart (`split_samples`), checked as part of it."""
    data = _json(line)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if samples is not None:
        data["samples_s"] = _json(samples)
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


# In the JSON that `Record.model_dump_json` writes, the samples come between `repeats` and `compile_s`.
SAMPLES_KEY = '"samples_s"'
SAMPLES_START = ',"samples_s":['
SAMPLES_END = '],"compile_s":'


def split_samples(text: str) -> tuple[str, str | None]:
    """A record's JSON as (the JSON less its samples, the JSON list of its samples): a view that shows
    medians reads the first alone. The samples are ~100 numbers of a record's ~3.4 KB: two thirds of its
    text and three quarters of the time to parse and check it.

    Split only where the text is laid out as `Record.model_dump_json` writes it: compact, `samples_s` a
    list of numbers between `repeats` and `compile_s`, that key once in the text and in the outermost
    object (the braces before it balance to one), so that it is the record's own and not a key inside
    `params`. Any other text comes back whole, with None. (A dump always holds the record's own key: a
    text where the one key sits inside `params` is a hand-made one, and would also need a string with a
    lone "}" before it to be split.)"""
    start = text.find(SAMPLES_START)
    end = text.find(SAMPLES_END, start)
    if (start < 0 or end < 0 or text.count(SAMPLES_KEY) != 1 or "]" in text[start:end]
            or text.count("{", 0, start) - text.count("}", 0, start) != 1):
        return text, None
    return text[:start] + text[end + 1:], text[start + len(SAMPLES_START) - 1 : end + 1]


# ------------------------------------------------- fast path of reading ---
# Pydantic's validation costs ~30 µs a record, three times the JSON parsing: a line exactly as
# `Run.record` writes it (every field of its own type, durations finite and ≥ 0, no extra keys) is
# checked here with plain type tests and becomes a Record without it; anything else takes pydantic's
# way (coercion, or the reason it is refused).
REQUIRED_TEXT = ("run_id", "timestamp", "group", "backend", "case", "device")
OPTIONAL_TEXT = ("variant", "dtype")
DURATIONS = ("median_s", "iqr_s", "min_s", "compile_s")
SCALAR_MAPS = ("metrics", "checks", "memory", "contention", "profile", "env")
SCALAR_TYPES = frozenset({float, int, str, bool, type(None)})
NUMBER_TYPES = frozenset({float, int})
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
INDEXED_FIELDS = ("schema_version", "run_id", "timestamp", "group", "backend", "env")


def _are_durations(values: list[Any]) -> bool:
    """`_is_duration` of every value, in C loops (a record holds up to hundreds of samples): each an exact
    float or int, none below 0 or above MAX_SECONDS, and no NaN (a NaN makes the sum NaN; an infinity
    is above the maximum)."""
    if not values:
        return True
    if not NUMBER_TYPES.issuperset(map(type, values)):
        return False
    return min(values) >= 0 and max(values) <= MAX_SECONDS and math.isfinite(sum(values))


def _is_duration(value: object) -> bool:
    # NaN fails both comparisons; bool is excluded by the exact type test.
    return (type(value) is float or type(value) is int) and 0 <= value <= MAX_SECONDS


def with_defaults(values: dict[str, Any]) -> dict[str, Any]:
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
    if type(samples) is not list or not _are_durations(samples):
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
    values = with_defaults(data)
    return record_of({name: values[name] for name in FIELD_NAMES}, fields_set(data))


def fields_set(keys: Iterable[str]) -> set[str]:
    """The one fields-set object shared by records with these keys (only read by model_dump(exclude_unset=...))."""
    return _FIELD_SETS.setdefault(frozenset(keys), set(keys))


def record_of(fields: dict[str, Any], fields_set: set[str]) -> Record:
    """A Record from checked values: what pydantic's model_construct sets, without its per-field Python loop."""
    record: Record = Record.__new__(Record)
    object.__setattr__(record, "__dict__", fields)
    object.__setattr__(record, "__pydantic_fields_set__", fields_set)
    object.__setattr__(record, "__pydantic_extra__", {})
    object.__setattr__(record, "__pydantic_private__", {"_source": None})
    return record



@dataclass(frozen=True)
class Output:
    """What a case computed, next to its record, for a later step of the same run to read (e.g. the values
    `autograd all` compares across backends). Kept in memory on `Run.outputs`, never written to the file."""

    record: Record
    value: object
