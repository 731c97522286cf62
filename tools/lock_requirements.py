"""Turn pyproject.toml + poetry.lock into pip inputs, with the standard library only.

    python tools/lock_requirements.py requirements [--cuda]  -> top-level requirements: the core, every
                                                                extra of EXTRAS, the dev group (+ cuda)
    python tools/lock_requirements.py constraints            -> every locked `name==version` (with the lock's
                                                                markers where a name is locked per Python)
    python tools/lock_requirements.py pin NAME               -> NAME's locked `name==version` for this Python
    python tools/lock_requirements.py lowest                 -> `name==low` for every range of the core and the
                                                                extras of EXTRAS: the oldest environment the
                                                                ranges admit (CI tests it)
    python tools/lock_requirements.py supports-python        -> exit 0 when this interpreter is in the
                                                                project's requires-python, else 1

cli.sh installs the requirements with the constraints, so pip installs exactly
the locked versions without poetry being installed.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The extras cli.sh installs (all of them: the frameworks, and what only some commands need); `cuda` is
# added on a GPU machine; `postgres` comes with the dev group.
EXTRAS = ("jax", "torch", "scipy", "mnist", "tracking")
REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9._-]+)(?P<extras>\[[^\]]*\])?\s*(?P<spec>[^;]*)(?P<marker>;.*)?$")


def project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def requirements(cuda: bool) -> list[str]:
    meta = project()
    extras = meta["optional-dependencies"]
    reqs = list(meta["dependencies"])
    for extra in EXTRAS:
        reqs += extras[extra]
    reqs += tomllib.loads((ROOT / "pyproject.toml").read_text()).get("dependency-groups", {}).get("dev", [])
    if cuda:
        reqs += extras["cuda"]
    return list(dict.fromkeys(reqs))


def _markers(package: dict[str, Any]) -> str | None:
    """The lock's markers of a package: one string, or one per dependency group (then any of them)."""
    markers = package.get("markers")
    if isinstance(markers, dict):
        unique = list(dict.fromkeys(markers.values()))
        return unique[0] if len(unique) == 1 else " or ".join(f"({m})" for m in unique)
    return markers if isinstance(markers, str) else None


def constraints() -> list[str]:
    lock = tomllib.loads((ROOT / "poetry.lock").read_text())
    packages = lock.get("package", [])
    counts = Counter(p["name"] for p in packages)
    lines = []
    for p in packages:
        pin = f"{p['name']}=={p['version']}"
        markers = _markers(p)
        if counts[p["name"]] > 1:
            # Locked once per Python (or platform): each pin applies where its markers say (pip evaluates them).
            if markers is None or "extra" in markers:
                # No markers that pip can tell the pins apart by (it knows no `extra` in a constraints
                # file): left to the requirements' ranges.
                continue
            pin += f" ; {markers}"
        lines.append(pin)
    return sorted(lines)


def pin(name: str) -> str:
    """NAME's locked pin for this interpreter (the first whose markers do not exclude this Python)."""
    for line in constraints():
        if line.split("==")[0] == name and _python_matches(line.partition(";")[2]):
            return line.partition(";")[0].strip()
    raise SystemExit(f"{name} is not in poetry.lock")


def _python_matches(markers: str) -> bool:
    """Evaluates the python_version clauses of a marker joined by `and` (all the lock's per-Python splits
    are written so); any other clause is taken as true."""
    for clause in markers.split(" and "):
        found = re.search(r'python_version\s*(>=|<=|==|!=|<|>)\s*"([0-9.]+)"', clause)
        if found and not _compare(sys.version_info[:2], found.group(1), _version(found.group(2))):
            return False
    return True


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _compare(have: tuple[int, ...], op: str, want: tuple[int, ...]) -> bool:
    have = have[:len(want)] if op in ("==", "!=") else have
    return {">=": have >= want, "<=": have <= want, "==": have == want, "!=": have != want,
            "<": have < want, ">": have > want}[op]


def supports_python() -> bool:
    """This interpreter against requires-python (comma-separated >=, <, <=, > clauses)."""
    for clause in project()["requires-python"].split(","):
        found = re.fullmatch(r"\s*(>=|<=|<|>|==|!=)\s*([0-9.]+)\s*", clause)
        if found is None or not _compare(sys.version_info[:3], found.group(1), _version(found.group(2))):
            return False
    return True


def lowest() -> list[str]:
    """`name[extras]==low` for each `>=low` range of the core and the extras of EXTRAS."""
    meta = project()
    reqs = list(meta["dependencies"])
    for extra in EXTRAS:
        reqs += meta["optional-dependencies"][extra]
    lines = []
    for req in dict.fromkeys(reqs):
        parsed = REQUIREMENT.match(req)
        low = re.search(r">=\s*([0-9][0-9.]*)", parsed.group("spec")) if parsed else None
        if parsed is None or low is None:
            lines.append(req)
            continue
        lines.append(f"{parsed.group('name')}{parsed.group('extras') or ''}=={low.group(1)}"
                     + (f" {parsed.group('marker')}" if parsed.group("marker") else ""))
    return lines


def main(argv: list[str]) -> int:
    if argv[:1] == ["requirements"]:
        print("\n".join(requirements(cuda="--cuda" in argv)))
    elif argv[:1] == ["constraints"]:
        print("\n".join(constraints()))
    elif argv[:1] == ["pin"] and len(argv) == 2:
        print(pin(argv[1]))
    elif argv[:1] == ["lowest"]:
        print("\n".join(lowest()))
    elif argv[:1] == ["supports-python"]:
        return 0 if supports_python() else 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
