"""Where trained parameters are saved, and how: atomically, so a reader never sees half a checkpoint."""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from pathlib import Path
from typing import Protocol

from jax_benchmarks.mnist.settings import CHECKPOINTS_DIR


class Saves(Protocol):
    def save(self, path: Path) -> Path:
        """Write the parameters at `path` (a folder, or a file with the framework's suffix); return it."""


def checkpoint_path(backend: str, dataset: str, root: Path = CHECKPOINTS_DIR) -> Path:
    """Where a backend's trained parameters live (a directory for orbax, a file for torch)."""
    return (root / f"{backend}_{dataset}").absolute()


def metadata_path(path: Path) -> Path:
    """The JSON next to a checkpoint: what it was trained on and its test accuracy."""
    return path.with_name(path.name + ".json")


def unique_sibling(path: Path) -> Path:
    """A fresh name next to `path` (same file system, so a rename is atomic), unique per process and call."""
    return path.with_name(f".{path.name}-tmp-{os.getpid()}-{secrets.token_hex(4)}")


def write_atomically(path: Path, data: bytes) -> None:
    tmp = unique_sibling(path)
    tmp.write_bytes(data)
    os.replace(tmp, path)


def save_atomically(trainer: Saves, path: Path) -> Path:
    """Save under a unique temporary name, then rename it into place: two runs in one folder never share
    a temporary (orbax's own temporary folder is named after ours), and a reader never sees half a checkpoint."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = unique_sibling(path)
    try:
        saved_tmp = trainer.save(tmp)  # a folder (orbax) or tmp.pt (torch)
        final = path.with_name(path.name + saved_tmp.name[len(tmp.name):])
        if saved_tmp.is_dir():
            replace_folder(saved_tmp, final)
        else:
            os.replace(saved_tmp, final)
    finally:
        for leftover in path.parent.glob(tmp.name + "*"):
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
    return final


def replace_folder(new: Path, final: Path, attempts: int = 10) -> None:
    """rename() cannot replace a non-empty folder: move the old one aside (unique name), rename the new
    one in, delete the old. Another run doing the same at once only makes us try again."""
    for _ in range(attempts):
        aside = unique_sibling(final)
        try:
            os.replace(final, aside)
        except FileNotFoundError:
            pass
        try:
            os.rename(new, final)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            continue  # another run put its checkpoint there in between: move that aside too
        finally:
            shutil.rmtree(aside, ignore_errors=True)
        return
    raise OSError(errno.EBUSY, f"could not rename {new} to {final}: other runs keep replacing it")
