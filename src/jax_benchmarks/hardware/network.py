"""Network facts of this machine that a multi-process job needs."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now (a job's coordinator binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
