"""Re-lock poetry.lock for a pyproject.toml change that keeps the package set, offline, with Poetry's code.

    <python with poetry 2.x> tools/relock_offline.py [REV]      (REV: the commit whose pyproject.toml
                                                                 poetry.lock was made for; default HEAD)

For a change such as a requirement moved from the base into an extra, or an extra added: `poetry lock` would
re-resolve against the index (the CUDA wheels make that take over 25 minutes). Here Poetry's own solver runs
over a repository holding only the packages poetry.lock already pins (their dependencies and files as
locked), once for REV's pyproject.toml and once for the working one. A package whose entry the two solutions
give alike keeps poetry.lock's entry word for word (the solver over the lock alone writes some CUDA markers in
another, equivalent, form than the full resolve did); a package whose entry the change alters (optional, its
markers) takes the new solution's. [extras] and the content-hash are Poetry's for the working pyproject.toml,
so `poetry check --lock` agrees (checked before it ends). A change that needs a package or version the lock does not hold fails here:
that needs a real `poetry lock`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from cleo.io.null_io import NullIO
from poetry.core.packages.package import Package
from poetry.factory import Factory
from poetry.packages.locker import Locker
from poetry.puzzle.solver import Solver
from poetry.repositories import Repository, RepositoryPool
from tomlkit import TOMLDocument

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "poetry.lock"
# One [[package]] entry of a lock file: from its header to the next table of the top level.
ENTRY = re.compile(r'^\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"\n.*?(?=^\[\[package\]\]|^\[extras\]|^\[metadata\])',
                   re.MULTILINE | re.DOTALL)


def _lock_data(root: Package, locker: Locker, locked: Repository) -> TOMLDocument:
    """What `poetry lock` would write for ROOT when the locked packages are the whole index."""
    solver = Solver(root, RepositoryPool([locked]), [], locked.packages, NullIO())
    solved = solver.solve().get_solved_packages()
    return locker._compute_lock_data(root, solved)  # Poetry's own lock layout


def _entries(document: TOMLDocument) -> dict[tuple[str, str], Any]:
    return {(str(p["name"]), str(p["version"])): p.unwrap() for p in document["package"]}


def _entry_texts(text: str) -> dict[tuple[str, str], str]:
    return {(m.group(1), m.group(2)): m.group(0) for m in ENTRY.finditer(text)}


def main(argv: list[str]) -> int:
    rev = argv[0] if argv else "HEAD"
    poetry = Factory().create_poetry(ROOT)
    locked = poetry.locker.locked_repository()
    with tempfile.TemporaryDirectory() as tmp:
        # REV's pyproject.toml beside the same lock (README and src linked: Poetry checks they exist).
        old = Path(tmp)
        (old / "pyproject.toml").write_text(
            subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:pyproject.toml"], check=True,
                           capture_output=True, text=True).stdout)
        (old / "poetry.lock").write_bytes(LOCK.read_bytes())
        for name in ("README.md", "src"):
            (old / name).symlink_to(ROOT / name)
        before = Factory().create_poetry(old)
        if not before.locker.is_fresh():
            print(f"relock_offline: poetry.lock was not made for {rev}'s pyproject.toml (its content-hash "
                  "differs): name the commit it was made for", file=sys.stderr)
            return 2
        was = _entries(_lock_data(before.package, before.locker, locked))
    solved = _lock_data(poetry.package, poetry.locker, locked)
    now = _entries(solved)
    original = _entry_texts(LOCK.read_text())
    if set(was) != set(original) or set(now) != set(original):
        print("relock_offline: the package set would change: run `poetry lock` instead", file=sys.stderr)
        return 1
    poetry.locker._write_lock_data(solved)
    text = LOCK.read_text()
    written = _entry_texts(text)
    unchanged = [key for key in now if now[key] == was[key]]
    for key in unchanged:
        text = text.replace(written[key], original[key])
    LOCK.write_text(text)
    if not Factory().create_poetry(ROOT).locker.is_fresh():  # what `poetry check --lock` asks
        print("relock_offline: poetry.lock written but not fresh for pyproject.toml", file=sys.stderr)
        return 1
    print(f"relock_offline: poetry.lock written: {len(now) - len(unchanged)} packages' entries changed, "
          f"{len(unchanged)} kept as locked")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
