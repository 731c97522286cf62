"""What a group declares on its spec: its backends are the columns their records carry, and its other commands
(e.g. `mnist preprocess-images`) are declared apart, never as backends."""

from __future__ import annotations

import importlib
import json

import pytest

from jax_benchmarks.cli.commands import BackendSpec, GroupSpec
from jax_benchmarks.groups import BENCHMARK_GROUPS, GROUPS
from tests.conftest import invoke


def spec_of(group: str) -> GroupSpec:
    spec = importlib.import_module(GROUPS[group].module).SPEC
    assert isinstance(spec, GroupSpec)
    return spec


BACKENDS = [(group, name) for group in BENCHMARK_GROUPS for name in spec_of(group).backends]


@pytest.mark.parametrize(("group", "backend"), BACKENDS)
def test_a_backend_is_the_column_of_the_records_it_declares(group: str, backend: str) -> None:
    result = invoke(group, backend, "--quick", "--list", "--json")
    assert result.exit_code == 0, result.stderr
    columns = {case["backend"] for case in json.loads(result.stdout)}
    assert columns == {backend}


def test_the_other_commands_are_declared_apart_from_the_backends() -> None:
    mnist = spec_of("mnist")
    assert set(mnist.backends) == {"flax", "pytorch"}
    assert set(mnist.commands) == {"preprocess-images"}
    assert not any(isinstance(command, BackendSpec) for command in mnist.commands.values())
    listed = invoke("mnist", "preprocess-images", "--list", "--json")
    assert listed.exit_code == 0, listed.stderr
    assert {case["backend"] for case in json.loads(listed.stdout)} == {"data"}  # the column its records keep
    help_lines = [line.split()[0] for line in invoke("mnist", "--help").stdout.splitlines() if line.startswith("  ")]
    assert help_lines[-3:] == ["all", "evaluate", "preprocess-images"]
