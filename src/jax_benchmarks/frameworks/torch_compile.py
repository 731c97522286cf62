"""torch.compile as this project runs it: its modes, whether inductor can build code here, what it raises when it
cannot, what dynamo counted (graph breaks, compilations of a compiled function), and the code inductor generated
while a case ran (--profile: `watch_generated_code`).

Imported only where PyTorch runs (it imports torch).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch

from jax_benchmarks.errors import first_line
from jax_benchmarks.measure.compiled import GeneratedCode

def execution_mode(compile_mode: str | None) -> str:
    """What a PyTorch record says ran: "eager", or "compile:<mode>"."""
    return "eager" if compile_mode is None else f"compile:{compile_mode}"


def inductor_refusal(device_kind: str) -> str | None:
    """Why torch.compile's inductor backend cannot build code on this device kind, in one phrase; None where it
    can. Asked before any work: inductor needs a supported Python, and a C++ compiler on the CPU (Triton on a
    GPU)."""
    from torch._dynamo.eval_frame import is_dynamo_supported

    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if not is_dynamo_supported():
        return f"torch.compile does not support Python {version} in torch {torch.__version__}"
    if device_kind == "gpu":
        from torch.utils._triton import has_triton

        return None if has_triton() else "inductor generates Triton kernels on a GPU, and Triton is not installed"
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler

        get_cpp_compiler()
    except Exception as exc:  # whatever the search raises: no compiler found, a broken one
        return f"inductor generates C++ on the CPU and finds no C++ compiler ({first_line(exc)})"
    return None


def compile_failures() -> tuple[type[Exception], ...]:
    """What torch.compile raises when it cannot build code here (compiler missing or failing, ...)."""
    import torch._dynamo.exc as dynamo_exc

    # RuntimeError/OSError: inductor's C++ build or a missing toolchain surface as these.
    return (dynamo_exc.TorchDynamoException, RuntimeError, OSError)


def graph_breaks_so_far() -> int:
    """Graph breaks dynamo has counted in this process (its counters are process-wide and never reset)."""
    from torch._dynamo.utils import counters

    return sum(counters["graph_break"].values())


class CompiledFunction:
    """`torch.compile(fn, mode=...)`, specialized per shape like jax.jit (no dynamic-shape graph), with what dynamo
    counted for it: its compilations (dynamo's cache entries for fn's code: the first compile and each
    recompilation; one per batch shape when nothing else changes) and the graph breaks since it was made.

    Dynamo's caches are reset first, so that the first call compiles cold (its time is the compile time) and the
    cache entries are this function's alone."""

    def __init__(self, fn: Callable[..., Any], mode: str) -> None:
        """`mode`: one of torch.compile's (the settings' `CompileMode`: default, reduce-overhead, max-autotune)."""
        import torch._dynamo

        torch._dynamo.reset()
        self.fn = fn
        self.compiled: Callable[..., Any] = torch.compile(fn, mode=mode, dynamic=False)
        self.breaks_before = graph_breaks_so_far()

    def __call__(self, *args: Any) -> Any:
        return self.compiled(*args)

    def counts(self) -> dict[str, int]:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list

        # A bound method's __code__ is its function's.
        compilations = len(_debug_get_cache_entry_list(self.fn.__code__))
        return {"compilations": compilations, "graph_breaks": graph_breaks_so_far() - self.breaks_before}


def watch_generated_code() -> Callable[[], GeneratedCode]:
    """Start watching what inductor generates in this process; the function returned stops watching and says what it
    generated since: the source of each Python module inductor compiled or read back from its cache (its wrapper,
    which holds the C++ or Triton kernels), as inductor hands it to `GraphLowering.save_output_code` (the hook its
    own `run_and_get_code` uses; called on a fresh compile and on a cache hit, also with its caches disabled), and
    the graph breaks dynamo counted since. Where this torch has no such hook it says why: never a hash of nothing.

    The hook is set from now until the function is called: inductor calls it only while it compiles, so the case's
    timed calls that compile nothing run as without it. A hook set before is called too, and comes back."""
    breaks_before = graph_breaks_so_far()
    try:
        from torch._inductor.graph import GraphLowering

        previous: Callable[[str], None] | None = GraphLowering.save_output_code
    except (ImportError, AttributeError) as exc:
        missing = (f"torch {torch.__version__} has no hook for inductor's generated code "
                   f"(torch._inductor.graph.GraphLowering.save_output_code: {type(exc).__name__})")
        return lambda: GeneratedCode((), graph_breaks_so_far() - breaks_before, missing)
    sources: list[str] = []

    def save(code: str) -> None:
        sources.append(code)
        if previous is not None:
            previous(code)

    GraphLowering.save_output_code = save

    def generated() -> GeneratedCode:
        if GraphLowering.save_output_code is save:  # not replaced since: put back what was there
            GraphLowering.save_output_code = previous
        breaks = graph_breaks_so_far() - breaks_before
        if not sources:
            return GeneratedCode((), breaks, "inductor generated no code while the case ran (dynamo ran it eagerly, "
                                             "or its code was compiled before the case started)")
        return GeneratedCode(tuple(sources), breaks)

    return generated
