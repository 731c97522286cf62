"""Full disks and huge claims: a checkpoint that cannot be written, an IDX file claiming more than memory.

The end-to-end checkpoint case mounts a 1 MiB tmpfs over data/checkpoints in a user and mount namespace of
its own (`unshare -rm`), where the kernel allows it; the rest needs nothing special.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jax_benchmarks.errors import DataError
from jax_benchmarks.mnist.checkpoints import CheckpointNotSaved, save_atomically
from jax_benchmarks.training.data.idx import IMAGES_MAGIC, find_idx_files, memory_problem, read_idx_files
from tests.conftest import read_jsonl
from tests.mnist.fixtures import tiny_raw, write_idx

REPO = Path(__file__).resolve().parents[2]
TINY = ("--device", "cpu", "--data-source", "local", "--dry-run", "--train-batch-size", "16",
        "--test-batch-size", "32", "--repeats", "1", "--comet", "off", "--num-epochs", "1")


class FillsTheDisk:
    """A trainer whose save writes part of a checkpoint and then meets a full disk."""

    def save(self, path: Path) -> Path:
        target = path.with_suffix(".pt")
        with target.open("wb") as fh:
            fh.write(b"x" * 1000)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))


def test_a_save_on_a_full_disk_says_so_and_keeps_the_earlier_checkpoint(tmp_path: Path) -> None:
    earlier = tmp_path / "pytorch_mnist.pt"
    earlier.write_bytes(b"earlier")
    with pytest.raises(CheckpointNotSaved) as caught:
        save_atomically(FillsTheDisk(), tmp_path / "pytorch_mnist")
    message = caught.value.format_message()
    assert message.startswith(f"checkpoint not saved to {tmp_path / 'pytorch_mnist'}: the disk holding {tmp_path} "
                               "is full")
    assert "the earlier checkpoint there is unchanged" in message and "\n" not in message
    assert caught.value.exit_code == 1
    assert earlier.read_bytes() == b"earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pytorch_mnist.pt"]  # no half-written temporary


def can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt 2>/dev/null || "
                            "mount -t tmpfs -o size=1m tmpfs /tmp"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not can_mount_tmpfs(), reason="needs `unshare -rm` and tmpfs mounts in a user namespace")
# e2e: a fresh interpreter that trains in a namespace; twin (in process):
# test_a_save_on_a_full_disk_says_so_and_keeps_the_earlier_checkpoint
@pytest.mark.parametrize("backend", [pytest.param("pytorch", marks=pytest.mark.e2e),
                                     pytest.param("flax", marks=pytest.mark.slow)])
def test_a_training_run_whose_checkpoint_disk_is_full(tmp_path: Path, backend: str) -> None:
    write_idx(tmp_path / "data" / "mnist", tiny_raw(96, 40))
    checkpoints = tmp_path / "data" / "checkpoints"
    checkpoints.mkdir(parents=True)
    earlier = "pytorch_mnist.pt" if backend == "pytorch" else "flax_mnist/earlier"
    command = " ".join([sys.executable, str(REPO / "main.py"), "mnist", backend, *TINY, "--results", "r.jsonl"])
    script = (f"mount -t tmpfs -o size=1m tmpfs {checkpoints} && mkdir -p {checkpoints / 'flax_mnist'} && "
              f"printf earlier > {checkpoints / earlier} && {command}; code=$?; "
              f"cat {checkpoints / earlier} > {tmp_path / 'after'}; exit $code")
    result = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                            timeout=600, env={k: v for k, v in os.environ.items() if k != "XLA_FLAGS"})
    assert result.returncode == 1, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr[-3000:]  # no traceback, no "unexpected pos", no orbax log
    assert lines[0].startswith(f"Error: checkpoint not saved to {checkpoints / (backend + '_mnist')}: the disk "
                               f"holding {checkpoints} is full")
    assert (tmp_path / "after").read_text() == "earlier"
    records = read_jsonl(tmp_path / "r.jsonl")
    assert any(r["case"].startswith("train_epoch") for r in records)


# ------------------------------------------------------------- huge claims ---

def test_memory_refusal_counts_the_decoded_and_normalized_copies() -> None:
    assert memory_problem(1000, 5000, "f") is None
    problem = memory_problem(1001, 5000, "f")
    assert problem is not None and "declares 1,001 bytes of data" in problem and "refused before reading" in problem
    assert memory_problem(10**15, None, "f") is None  # free memory unknown: nothing refused


def test_an_idx_file_claiming_more_than_memory_is_refused_before_reading(tmp_path: Path) -> None:
    folder = tmp_path / "mnist"
    write_idx(folder, tiny_raw(96, 40))
    images = folder / "train-images-idx3-ubyte"
    count = 2**32 - 1  # the largest count a header holds: 3.4 TB of 28×28 images
    with images.open("wb") as fh:
        fh.write(IMAGES_MAGIC.to_bytes(4, "big") + count.to_bytes(4, "big") + (28).to_bytes(4, "big") * 2)
        fh.truncate(16 + count * 28 * 28)  # sparse: header and size agree, no disk used
    files = find_idx_files(folder)
    assert files is not None
    began = time.monotonic()
    with pytest.raises(DataError) as caught:
        read_idx_files(files)
    assert time.monotonic() - began < 5
    message = str(caught.value)
    assert message.startswith(f"{images}: the IDX header declares {count * 784:,} bytes of data")
    assert "free on this host; refused before reading it" in message
