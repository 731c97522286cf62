"""What a framework's native code prints, kept off the terminal while a step that may fail runs.

C++ runtimes (gloo, JAX's coordination service, orbax's TensorStore threads,
PyTorch's c10d) write to file descriptors 1 and 2 directly, and Python
libraries log failures of their background threads as whole tracebacks: for
the length of a step whose failure the caller reports in one line (joining a
job, writing a checkpoint), both descriptors point at a log file instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO


@contextmanager
def native_output_kept(log: IO[bytes]) -> Iterator[None]:
    """File descriptors 1 and 2 go to `log` for the block: what the runtime's C++ code prints (connection
    lines, glog, stack frames) stays off the terminal and off stdout (which may carry --json)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
