"""The base install's weight (issue 38): the wheel `pip install`ed into an environment that has NumPy only.

tools/check_pip_install.sh step 0 builds the wheel, installs it into a fresh NumPy-only venv, counts the
packages it added and the megabytes, and runs `xla numpy --quick` there. It takes about 2.5 minutes on a
busy 2-core machine (pip resolves and unpacks about 20 wheels), so it is marked slow:
`pytest -m slow tests/test_pip_install.py`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIGURES = re.compile(r"pip install <wheel> into NumPy \S+: (?P<packages>\d+) packages added .*?, (?P<mb>\d+) MB")


@pytest.mark.slow
def test_the_base_install_into_a_numpy_only_environment_is_small(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(ROOT / "tools" / "check_pip_install.sh"), sys.executable, "base"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    found = FIGURES.search(done.stdout)
    assert found is not None, done.stdout
    assert 1 <= int(found["packages"]) <= 25
    assert 0 < int(found["mb"]) <= 150
