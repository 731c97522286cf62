"""Headless Chromium for the HTML report: the browser test and the README screenshot use it.

Standard library only. Chromium runs with a fresh profile, no sandbox (CI runs
as root), no GPU and nothing that reaches the network on its own.

    python tools/headless_chromium.py screenshot PAGE.html OUT.png [WIDTH HEIGHT]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NAMES = ("chromium", "chromium-browser")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)
TIMEOUT_S = 120


def find_chromium() -> str | None:
    """The path of Debian's `chromium` (or `chromium-browser`), None when neither is installed."""
    for name in NAMES:
        path = shutil.which(name)
        if path is not None:
            return path
    return None


def run_chromium(chromium: str, args: list[str], page: Path) -> subprocess.CompletedProcess[str]:
    """Open `page` (a local file) with `args` added to FLAGS, in a profile that is deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
        )


def screenshot(chromium: str, page: Path, out: Path, width: int = 1280, height: int = 2000) -> None:
    result = run_chromium(chromium, ["--hide-scrollbars", f"--window-size={width},{height}",
                                     f"--screenshot={out.resolve()}"], page)
    if result.returncode != 0 or not out.is_file():
        raise RuntimeError(f"chromium failed (exit {result.returncode}): {result.stderr[-2000:]}")


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 5) or argv[0] != "screenshot":
        print(__doc__, file=sys.stderr)
        return 2
    chromium = find_chromium()
    if chromium is None:
        print("chromium is not installed (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    size = (int(argv[3]), int(argv[4])) if len(argv) == 5 else (1280, 2000)
    screenshot(chromium, Path(argv[1]), Path(argv[2]), *size)
    print(f"screenshot: {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
