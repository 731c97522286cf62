"""typed_jit / typed_grad compute what jax.jit / jax.grad compute, and keep the types."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jax_benchmarks.frameworks.typed import typed_grad, typed_jit

REPO = Path(__file__).resolve().parents[2]


def f(x: "jax.Array") -> "jax.Array":  # noqa: F821 - resolved by jax at call time
    import jax.numpy as jnp

    return 0.2 * x + jnp.sin(x) + jnp.cos(2 * x)


def test_typed_jit_and_grad_match_jax() -> None:
    import jax
    import jax.numpy as jnp

    x = jnp.linspace(0.0, 4 * jnp.pi, 6)
    assert jnp.allclose(typed_jit(f)(x), jax.jit(f)(x))
    assert jnp.allclose(typed_jit(f)(x), f(x))
    g = typed_grad(f)(jnp.asarray(3.0))
    assert float(g) == pytest.approx(-0.2311615, abs=1e-6)
    static = typed_jit(lambda x, n: x * n, static_argnums=1)
    assert float(static(jnp.asarray(2.0), 3)) == 6.0


SNIPPET = textwrap.dedent(
    """
    import jax
    import jax.numpy as jnp
    from jax_benchmarks.frameworks.typed import typed_grad, typed_jit

    def scale(x: jax.Array, factor: float) -> jax.Array:
        return x * factor

    jitted = typed_jit(scale)
    reveal_type(jitted)
    ok: jax.Array = jitted(jnp.ones(3), 2.0)
    bad_arg = jitted(jnp.ones(3), "two")
    bad_result: str = jitted(jnp.ones(3), 2.0)
    grad = typed_grad(scale)
    bad_grad = grad(jnp.ones(3))
    """
)


@pytest.mark.typing
def test_mypy_sees_the_wrapped_signature(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mypy import api

    # The snippet lives outside the repo: tell mypy where `src` is, as source
    # (otherwise it finds it on sys.path as an untyped installed package).
    monkeypatch.setenv("MYPYPATH", str(REPO))
    snippet = tmp_path / "snippet.py"
    snippet.write_text(SNIPPET)
    stdout, _, _ = api.run([
        "--strict", "--no-error-summary", "--cache-dir", str(REPO / ".mypy_cache"),
        "--config-file", str(REPO / "pyproject.toml"), str(snippet),
    ])
    lines = stdout.splitlines()
    reveal = [line for line in lines if "Revealed type" in line]
    assert reveal and 'def (x: jax._src.basearray.Array, factor: float) -> jax._src.basearray.Array' in reveal[0], stdout
    errors = {int(line.split(":")[1]) for line in lines if ": error:" in line}
    # The three wrong calls, and only them, are errors:
    assert errors == {12, 13, 15}, stdout
