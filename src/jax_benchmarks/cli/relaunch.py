"""How the program starts itself in a fresh process (`--rounds`, `smoke`, `--launch-local`).

The child runs the same interpreter and the same copy of the package as the parent, whether that copy
is installed in site-packages or is a checkout run through `main.py`: it is started as the package's
own `__main__.py` file, which puts the package's folder on the child's import path.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_MAIN = Path(__file__).resolve().parents[1] / "__main__.py"


def self_command() -> list[str]:
    """argv that starts this program; append the group, the command and its options."""
    return [sys.executable, str(PACKAGE_MAIN)]
