"""What `./cli.sh` would install on a Linux x86_64 GPU machine, resolved by pip without installing anything.

    python tools/gpu_resolution.py [--python-version 3.11]

Runs `pip install --dry-run --report` for torch (the pinned regular build) and the `cuda` extra of
pyproject.toml, for manylinux x86_64, with pip's own index (`--isolated`: no local CPU wheels), then
prints the CUDA libraries it chose. Exits 1 when they come from two CUDA major versions (two cuDNNs in
one process), 0 when one CUDA stack serves both frameworks.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# manylinux_2_N tags are matched exactly by pip: list every glibc level a current wheel may carry.
PLATFORMS = [f"manylinux_2_{n}_x86_64" for n in range(5, 40)] + ["manylinux2014_x86_64", "manylinux1_x86_64"]
CUDA_PACKAGE = re.compile(r"^(nvidia-|cuda-|jax-cuda|torch$|triton$)")


def requested() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    torch = next(d for d in project["dependencies"] if d.startswith("torch=="))
    jax = [d for d in project["dependencies"] if d.startswith(("jax>", "jaxlib>"))]
    return [torch, *jax, *project["optional-dependencies"]["cuda"]]


def cuda_majors(names: list[str]) -> set[str]:
    """CUDA major versions named by the packages: nvidia-cudnn-cu13 → 13; unsuffixed nvidia-* packages are
    CUDA 13's (NVIDIA dropped the suffix with CUDA 13)."""
    majors = set()
    for name in names:
        if not name.startswith("nvidia-"):
            continue
        match = re.search(r"-cu(\d+)$", name)
        majors.add(match.group(1) if match else "13")
    return majors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python-version", default="3.11")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        command = [
            sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--quiet", "--ignore-installed",
            "--only-binary=:all:", "--python-version", options.python_version, "--implementation", "cp",
            *[arg for platform in PLATFORMS for arg in ("--platform", platform)],
            "--target", str(Path(tmp) / "target"), "--report", str(report), *requested(),
        ]
        print("$", " ".join(command[:4]), "... --report report.json", " ".join(requested()))
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 2
        chosen = sorted(
            (item["metadata"]["name"], item["metadata"]["version"]) for item in json.loads(report.read_text())["install"]
        )
    cuda = [(name, version) for name, version in chosen if CUDA_PACKAGE.match(name)]
    for name, version in cuda:
        print(f"  {name}=={version}")
    majors = cuda_majors([name for name, _ in cuda])
    print(f"{len(chosen)} packages; CUDA libraries from CUDA {', '.join(sorted(majors))}")
    return 1 if len(majors) > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
