"""`typed_jit` / `typed_grad`: jax.jit and jax.grad that keep the wrapped signature.

`jax.jit(f)` is typed as returning a generic wrapper, so mypy loses f's
parameter and return types. These helpers are typed
`Callable[P, T] -> Callable[P, T]`, so a call with wrong arguments is a mypy
error (tests/frameworks/test_typed.py proves it). Today's jax removed the
`abstracted_axes` option and rejects `reduce_axes`, so neither is forwarded.
jax is imported on first use: this module is safe to import from the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar, cast

P = ParamSpec("P")
T = TypeVar("T")


def typed_jit(
    fn: Callable[P, T],
    *,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
) -> Callable[P, T]:
    """`jax.jit(fn, ...)`, typed as `fn` itself."""
    import jax

    jitted = jax.jit(
        fn,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        donate_argnums=donate_argnums,
        donate_argnames=donate_argnames,
        keep_unused=keep_unused,
        inline=inline,
    )
    return cast(Callable[P, T], jitted)


def typed_grad(
    fn: Callable[P, T],
    *,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[P, T]:
    """`jax.grad(fn, ...)`, typed as `fn`.

    Exact for the common case this project uses, a scalar function of one
    array (the gradient has the argument's type, an array like the result).
    """
    import jax

    grad = jax.grad(fn, argnums=argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)
    return cast(Callable[P, T], grad)


def jit_cache_size(jitted: object) -> int:
    """Entries in a `jax.jit` function's compilation cache: one per distinct input signature compiled.

    `_cache_size()` is the method JAX's own tests use; it is not in jax's type stubs.
    """
    size: int = getattr(jitted, "_cache_size")()
    return size
