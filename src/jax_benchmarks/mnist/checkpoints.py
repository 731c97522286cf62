"""Where trained parameters are saved, and how: atomically, so a reader never sees half a checkpoint."""

from __future__ import annotations

import errno
import logging
import os
import resource
import secrets
import shutil
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

import click

from jax_benchmarks.errors import Failed
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


def unique_job_sibling(path: Path, run_id: str) -> Path:
    """A name next to `path` that every process of one job computes alike (they share the run id)."""
    return path.with_name(f".{path.name}-tmp-{run_id}")


def write_atomically(path: Path, data: bytes) -> None:
    tmp = unique_sibling(path)
    tmp.write_bytes(data)
    os.replace(tmp, path)


# Less free space than this on the checkpoint's file system after a failed save: the disk is full (PyTorch's
# zip writer reports a short write as "unexpected pos", orbax through several layers, neither with an errno).
NEARLY_FULL_BYTES = 16 * 2**20
FULL_DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


class CheckpointNotSaved(Failed):
    """The checkpoint could not be written (full disk, file size limit, I/O error): exit 1, one line; the
    earlier checkpoint is untouched (the new one was written under another name) and the records are on disk."""


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def why_not_saved(exc: BaseException, folder: Path) -> str:
    """The cause of a failed save in a few words: a full disk, the file size limit, or the error's first line."""
    chain = _chain(exc)
    codes = {getattr(e, "errno", None) for e in chain}
    try:
        free: int | None = shutil.disk_usage(folder).free
    except OSError:
        free = None
    room = f" ({free:,} bytes free)" if free is not None else ""
    if codes & set(FULL_DISK_ERRNOS) or any("No space left on device" in str(e) for e in chain):
        return f"the disk holding {folder} is full{room}"
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if errno.EFBIG in codes or soft != resource.RLIM_INFINITY:
        return f"a file reached this process's file size limit (ulimit -f: {soft:,} bytes)" \
            if soft != resource.RLIM_INFINITY else "a file grew beyond the largest size allowed"
    if free is not None and free < NEARLY_FULL_BYTES:
        return f"the disk holding {folder} is full{room}"
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class LogsOff:
    """Python logging off while any thread is inside `block()`. `logging.disable` is one setting for the
    whole process: the level from before the first thread entered comes back when the last one leaves
    (saves in several threads, each restoring the level it saw, left logging off for good)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.before = logging.NOTSET

    @contextmanager
    def block(self) -> Iterator[None]:
        with self.lock:
            if self.inside == 0:
                self.before = logging.root.manager.disable
                logging.disable(logging.CRITICAL)
            self.inside += 1
        try:
            yield
        finally:
            with self.lock:
                self.inside -= 1
                if self.inside == 0:
                    logging.disable(self.before)


# One for the process, as logging's own setting is.
FRAMEWORK_LOGS = LogsOff()


def framework_logs_off() -> AbstractContextManager[None]:
    """Python logging off for the block: orbax logs each failed write of its threads as a whole traceback
    (over 200 lines for one full disk) before it raises; the caller says the cause once."""
    return FRAMEWORK_LOGS.block()


def save_atomically(trainer: Saves, path: Path, temporary: Path | None = None) -> Path:
    """Save under a unique temporary name, then rename it into place: two runs in one folder never share
    a temporary (orbax's own temporary folder is named after ours), and a reader never sees half a checkpoint.
    `temporary`: the name, where several processes write one checkpoint together (unique to their job).
    A save that fails (a full disk) leaves the earlier checkpoint as it was and ends in CheckpointNotSaved."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary or unique_sibling(path)
    try:
        try:
            with framework_logs_off():
                saved_tmp = trainer.save(tmp)  # a folder (orbax) or tmp.pt (torch)
        except Exception as exc:
            raise CheckpointNotSaved(
                f"checkpoint not saved to {path}: {why_not_saved(exc, path.parent)}; the earlier checkpoint there "
                "is unchanged and the run's records are saved"
            ) from None
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
