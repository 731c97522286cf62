"""The compiled program behind a case (--profile): its text in a file, its hash and counts in the record.

Two compilers, two ways of getting their program:

* a jitted JAX case: the program it declares for its memory analysis (`Timed.program`, e.g. `memory.jax_program`:
  `jit(f).lower(*args).compile()`), obtained again after the timed samples (JAX's compilation cache makes it cheap).
  Its `as_text()` (XLA's optimized HLO) is written whole (`NAME.hlo.txt`); the hash is taken over the program
  alone: the source locations XLA keeps beside it (the FileNames ... StackFrames tables, each instruction's
  `metadata={...}`) change when a line of Python moves and are left out, so that "same code" means the same
  instructions. The record also counts its fusions and says the XLA flags in effect.
* a case compiled by torch.compile: its code cannot be asked for again, so the profiling pass watches what
  inductor generates while the case runs (a framework profiler's `watch`, frameworks/torch_compile.py) and gets a
  `GeneratedCode`: the Python modules inductor wrote (its wrapper, with the C++ or Triton kernels in it), written
  one after the other (`NAME.inductor.py`), and the graph breaks dynamo counted meanwhile. The hash leaves out what
  changes between two compiles of one program: comment lines (inductor's AOT ID counts the graphs compiled before
  in the process; kernel paths name its cache folder) and any path in inductor's cache folder.

`program_changes` is what `report --baseline` says of both alike (one `program_sha256` key): the cases whose hash
changed between the two runs ("the compiler produced different code") and those whose hash did not.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
# A Python comment line of inductor's code ("# AOT ID: ['0_inference']", "# kernel path: /tmp/..."); not a C++
# preprocessor line of its kernels ("#include", "#pragma omp ..."), which has no space after the '#'.
COMMENT_LINE = re.compile(r"^\s*#(\s.*)?$")
# A path in inductor's cache folder (`/tmp/torchinductor_USER/ab/cab...py`): its name is per user and per run.
CACHE_PATH = re.compile(r"\S*torchinductor_[^\s'\"]*")
# What separates two generated modules in a `.inductor.py` file (a comment: left out of the hash).
MODULE_SEPARATOR = "# ---- generated module {index} of {count} ----"


@dataclass(frozen=True)
class GeneratedCode:
    """What torch.compile's inductor generated while a case ran: the source of each Python module it generated or
    read back from its cache, in order, and the graph breaks dynamo counted meanwhile; `missing` says why no code
    was captured (then `sources` is empty and no hash is made)."""

    sources: tuple[str, ...]
    graph_breaks: int
    missing: str | None = None

    def text(self) -> str:
        """The file's text: each module after a comment line that numbers it."""
        count = len(self.sources)
        return "\n".join(f"{MODULE_SEPARATOR.format(index=i, count=count)}\n{source}"
                         for i, source in enumerate(self.sources, 1))


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


def generated_text(text: str) -> str:
    """Inductor's generated code less its comment lines and its cache paths: what the hash is taken over."""
    return "\n".join(CACHE_PATH.sub("<inductor cache>", line) for line in text.splitlines()
                     if not COMMENT_LINE.match(line))


def generated_hash(text: str) -> str:
    return hashlib.sha256(generated_text(text).encode()).hexdigest()


def fusion_count(text: str) -> int:
    return len(FUSION_CALL.findall(program_text(text)))


def program_figures(program: Callable[[], object], folder: Path, stem: str, relative_to: Path,
                    environ: Mapping[str, str], write: Callable[[Path, str], None]) -> dict[str, Scalar]:
    """The compiled program's text written by `write` to `folder/stem` with its suffix (`.hlo.txt`: XLA's HLO;
    `.inductor.py`: inductor's generated code); its file (relative to `relative_to`), hash and counts: XLA's fusions
    and the XLA flags in effect, or torch.compile's graph breaks and generated modules; or why there are none."""
    try:
        compiled = program()
        if isinstance(compiled, GeneratedCode):
            if compiled.missing is not None or not compiled.sources:
                return {"program_status": f"not captured: {compiled.missing or 'inductor generated no code'}",
                        "graph_breaks": compiled.graph_breaks}
            path, text = folder / f"{stem}.inductor.py", compiled.text()
            counts: dict[str, Scalar] = {HASH_KEY: generated_hash(text), "graph_breaks": compiled.graph_breaks,
                                         "generated_modules": len(compiled.sources)}
        else:
            as_text = getattr(compiled, "as_text", None)
            if as_text is None:
                return {"program_status": "unavailable: this compiler gives no program text"}
            path, text = folder / f"{stem}.hlo.txt", str(as_text())
            counts = {HASH_KEY: program_hash(text), "fusions": fusion_count(text),
                      "xla_flags": environ.get("XLA_FLAGS", "")}
        write(path, text)
    except Exception as exc:  # a program that cannot be obtained is a missing figure, not a failed case
        return {"program_status": f"unavailable: {type(exc).__name__}: {first_line(exc, 200)}"}
    return {"program_status": "measured", "program": path.relative_to(relative_to).as_posix(), **counts}


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
