"""Benchmark: does every file `--profile` wrote open in its format, and does every timed finding show its lines?

    .venv/bin/python benchmarks/profile_files.py PROFILES_FOLDER [PAGE.md]

PROFILES_FOLDER is `profiles/RUN_ID/` beside a store (a `verdict --profile` run's, or any command's). Each file is
read as the tool a user opens it in would read it:
* `*.trace.json` (JAX's and PyTorch's Chrome / Perfetto trace): JSON that parses, whose events hold the step's
  annotation (`jax_benchmarks step`);
* `*.profile.txt` (cProfile, NumPy and the project's engine): pstats text that lists the step's function calls;
* `*.hlo.txt` (a jitted JAX step's compiled program): XLA's HLO text (`HloModule`);
* `*.inductor.py` (torch.compile's generated code): Python that parses.
With PAGE.md (the verdict's markdown page), it also counts the breakdown lines of each question in its "Where the
step's time went" table. It prints one line a kind and exits 1 if any file does not open.
"""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path

STEP = "jax_benchmarks step"  # the annotation measure/profile.py wraps the profiled step in


def opens(path: Path) -> str | None:
    """None where the file opens as its kind says, else why not."""
    text = path.read_text()
    if path.name.endswith(".trace.json"):
        data = json.loads(text)
        events = data["traceEvents"] if isinstance(data, dict) else data
        return None if any(STEP in str(event.get("name", "")) for event in events) else f"no '{STEP}' event"
    if path.name.endswith(".profile.txt"):
        return None if "function calls" in text and "ncalls" in text else "no pstats table"
    if path.name.endswith(".hlo.txt"):
        return None if "HloModule" in text else "no HloModule"
    if path.name.endswith(".inductor.py"):
        ast.parse(text)
        return None
    return "a file of no known kind"


def kind_of(path: Path) -> str:
    return "".join(path.suffixes[-2:])


def breakdown_lines(page: Path) -> Counter[str]:
    """Per question, the rows of the page's breakdown table."""
    rows: Counter[str] = Counter()
    inside = False
    for line in page.read_text().splitlines():
        if line.startswith("### "):
            inside = "Where the step's time went" in line
        elif inside and line.startswith("| ") and not line.startswith(("| question", "|---")):
            rows[line.split(" | ")[0].lstrip("| ")] += 1
    return rows


def main() -> None:
    folder = Path(sys.argv[1])
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    failed: list[str] = []
    kinds: Counter[str] = Counter()
    for path in files:
        kinds[kind_of(path)] += 1
        try:
            why = opens(path)
        except (ValueError, SyntaxError, KeyError, UnicodeDecodeError) as exc:
            why = f"{type(exc).__name__}: {exc}"
        if why is not None:
            failed.append(f"{path.relative_to(folder)}: {why}")
    size = sum(p.stat().st_size for p in files) / 2**20
    print(f"{len(files)} files ({size:.0f} MiB) in {folder}; {len(files) - len(failed)} open in their format")
    for kind, count in sorted(kinds.items()):
        print(f"  {count:4d}  {kind}")
    for line in failed:
        print(f"  does not open: {line}")
    if len(sys.argv) > 2:
        rows = breakdown_lines(Path(sys.argv[2]))
        print(f"breakdown lines per question on {sys.argv[2]}:")
        for question, count in rows.items():
            print(f"  {count:4d}  {question}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
