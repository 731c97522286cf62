"""Turn pyproject.toml + poetry.lock into pip inputs, with the standard library only.

    python tools/lock_requirements.py requirements [--cuda]  -> top-level requirements
    python tools/lock_requirements.py constraints            -> every locked `name==version`

cli.sh installs the requirements with the constraints, so pip installs exactly
the locked versions without poetry being installed.
"""

from __future__ import annotations

import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def requirements(cuda: bool) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = list(project["project"]["dependencies"])
    reqs += project.get("dependency-groups", {}).get("dev", [])
    if cuda:
        reqs += project["project"]["optional-dependencies"]["cuda"]
    return reqs


def constraints() -> list[str]:
    lock = tomllib.loads((ROOT / "poetry.lock").read_text())
    packages = lock.get("package", [])
    counts = Counter(p["name"] for p in packages)
    # A name locked twice (different versions per platform) is left to the
    # requirements' own ranges rather than given two conflicting pins.
    return sorted(f"{p['name']}=={p['version']}" for p in packages if counts[p["name"]] == 1)


def main(argv: list[str]) -> int:
    if argv[:1] == ["requirements"]:
        print("\n".join(requirements(cuda="--cuda" in argv)))
    elif argv[:1] == ["constraints"]:
        print("\n".join(constraints()))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
