"""tools/lock_requirements.py: what cli.sh installs from the lock, and the low-end environment CI builds."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tools import lock_requirements

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
LOCK = tomllib.loads((ROOT / "poetry.lock").read_text())


def test_requirements_are_the_core_every_extra_but_the_gpu_and_the_dev_group() -> None:
    reqs = lock_requirements.requirements(cuda=False)
    extras = PROJECT["optional-dependencies"]
    for req in [*PROJECT["dependencies"], *extras["jax"], *extras["torch"], *extras["scipy"], *extras["mnist"],
                *extras["tracking"]]:
        assert req in reqs
    # cli.sh's set-up installs everything `[all]` brings
    assert set(extras["all"]) <= set(reqs)
    assert any(req.startswith("pytest") for req in reqs) and len(reqs) == len(set(reqs))
    assert not any(req.startswith("jax[cuda13]") for req in reqs)
    assert [req for req in lock_requirements.requirements(cuda=True) if req not in reqs] == extras["cuda"]


def test_every_locked_package_is_pinned_once_for_this_python() -> None:
    pins = [line for line in lock_requirements.constraints()
            if lock_requirements._python_matches(line.partition(";")[2])]
    names = [line.split("==")[0] for line in pins]
    assert len(names) == len(set(names))
    locked = {p["name"]: p["version"] for p in LOCK["package"]}
    assert lock_requirements.pin("torch") == f"torch=={locked['torch']}"
    assert f"numpy=={locked['numpy']}" in pins


def test_the_lock_covers_the_supported_pythons() -> None:
    assert LOCK["metadata"]["python-versions"] == PROJECT["requires-python"]
    assert lock_requirements.supports_python()  # the interpreter running the suite


@pytest.mark.parametrize(("have", "op", "want", "expected"), [
    ((3, 13, 0), "<", (3, 14), True), ((3, 14, 0), "<", (3, 14), False), ((3, 10, 13), ">=", (3, 11), False),
    ((3, 12), "==", (3, 12), True), ((3, 12), "!=", (3, 11), True),
])
def test_version_comparison(have: tuple[int, ...], op: str, want: tuple[int, ...], expected: bool) -> None:
    assert lock_requirements._compare(have, op, want) is expected


def test_lowest_pins_the_low_end_of_every_range() -> None:
    lowest = lock_requirements.lowest()
    for pin in ("numpy==2.0", "jax==0.8.1", "jaxlib==0.8.1", "flax==0.12.0", "torch==2.9", "click==8.2.1",
                "scipy==1.13", "datasets==3.0", "mlxtend==0.23.1", "comet-ml==3.44"):
        assert pin in lowest
    assert all("==" in line and ">" not in line and "<" not in line for line in lowest), lowest
