"""The compiled program behind a jitted case (--profile): its text in a file, its hash and fusion count in the record.

The program is the one the case declares for its memory analysis (`Timed.program`, e.g. `memory.jax_program`:
`jit(f).lower(*args).compile()`), obtained again after the timed samples (JAX's compilation cache makes it cheap).
Its `as_text()` (XLA's optimized HLO) is written whole; the hash is taken over the program alone: the source
locations XLA keeps beside it (the FileNames ... StackFrames tables, each instruction's `metadata={...}`) change
when a line of Python moves and are left out, so that "same code" means the same instructions.

`program_changes` is what `report --baseline` says of it: the cases whose hash changed between the two runs
("the compiler produced different code") and those whose hash did not.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jax_benchmarks.errors import first_line
from jax_benchmarks.store.record import Scalar

if TYPE_CHECKING:
    from jax_benchmarks.store.record import Record

HASH_KEY = "program_sha256"
# An HLO instruction whose opcode is `fusion`: `%name = f32[100]{0} fusion(%x), kind=kLoop, calls=...`.
FUSION_CALL = re.compile(r"\sfusion\(")
METADATA = re.compile(r",\s*metadata=\{[^{}]*\}")
# The tables of source locations XLA prints before the computations (names, then indented or numbered rows).
LOCATION_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def program_text(text: str) -> str:
    """The HLO text less its source locations: what the hash is taken over."""
    kept: list[str] = []
    in_table = False
    for line in text.splitlines():
        if line.strip() in LOCATION_TABLES:
            in_table = True
            continue
        if in_table and (not line.strip() or line[:1].isdigit()):
            continue
        in_table = False
        kept.append(METADATA.sub("", line))
    return "\n".join(kept)


def program_hash(text: str) -> str:
    return hashlib.sha256(program_text(text).encode()).hexdigest()


def fusion_count(text: str) -> int:
    return len(FUSION_CALL.findall(program_text(text)))


def program_figures(program: Callable[[], object], path: Path, relative_to: Path, environ: Mapping[str, str],
                    write: Callable[[Path, str], None]) -> dict[str, Scalar]:
    """The compiled program's text written to `path` by `write`; its file (relative to `relative_to`), hash, fusion
    count and the XLA flags in effect, or why there are none (a program without text: torch.compile's)."""
    try:
        compiled = program()
        as_text = getattr(compiled, "as_text", None)
        if as_text is None:
            return {"program_status": "unavailable: this compiler gives no program text"}
        text = str(as_text())
        write(path, text)
    except Exception as exc:  # a program that cannot be obtained is a missing figure, not a failed case
        return {"program_status": f"unavailable: {type(exc).__name__}: {first_line(exc, 200)}"}
    return {"program_status": "measured", "program": path.relative_to(relative_to).as_posix(),
            HASH_KEY: program_hash(text), "fusions": fusion_count(text),
            "xla_flags": environ.get("XLA_FLAGS", "")}


def case_key(record: Record) -> tuple[str, str, str | None, str, str | None]:
    return (record.backend, record.case, record.variant, record.device, record.dtype)


def program_changes(current: Sequence[Record], baseline: Sequence[Record]) -> tuple[list[str], list[str]]:
    """(the cases whose compiled-program hash differs from the baseline's, those whose hash is the same), each
    named `backend case [variant] @device`; a case without a hash in either run is in neither."""
    before: dict[tuple[str, str, str | None, str, str | None], set[str]] = {}
    for record in baseline:
        value = record.profile.get(HASH_KEY)
        if isinstance(value, str):
            before.setdefault(case_key(record), set()).add(value)
    changed: dict[str, None] = {}
    same: dict[str, None] = {}
    for record in current:
        value = record.profile.get(HASH_KEY)
        key = case_key(record)
        if not isinstance(value, str) or key not in before:
            continue
        label = (f"{record.backend} {record.case}" + (f" [{record.variant}]" if record.variant else "")
                 + f" @{record.device}")
        if before[key] == {value}:
            same[label] = None
        else:
            changed[label] = None
    return list(changed), [label for label in same if label not in changed]


def program_note(current: Sequence[Record], baseline: Sequence[Record]) -> str | None:
    """The report's lines on compiled programs (runs made with --profile): which cases the compiler compiled to
    different code than in the baseline, and how many to the same code; None where neither run has a hash."""
    changed, same = program_changes(current, baseline)
    lines = []
    if changed:
        lines.append(f"the compiler produced different code (compiled-program hash changed) for {len(changed)} "
                     f"case(s): {', '.join(changed)}")
    if same:
        lines.append(f"same code (compiled-program hash unchanged): {len(same)} case(s)"
                     + ("" if changed else f": {', '.join(same)}"))
    return "\n".join(lines) if lines else None
