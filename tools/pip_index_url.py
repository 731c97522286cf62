"""Print the index URL pip itself uses (its config, PIP_INDEX_URL, or pip's default).

Used by tools/relock.sh so that no registry host is written into the repo.
"""

import subprocess
import sys

out = subprocess.run(
    [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
    capture_output=True, text=True,
)
if out.returncode == 0 and out.stdout.strip():
    print(out.stdout.strip())
else:
    from pip._internal.models.index import PyPI  # pip's built-in default index

    print(PyPI.simple_url)
