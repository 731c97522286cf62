"""Follow the settings call by call from `mnist/flax_backend.py` `suites`, and count how often they come back to
a file they had left.

Builds `mnist flax`'s suite and runs it (one dry-run epoch on synthetic images, tracking off, on the CPU, in a
temporary folder), tracing every call of a project function that receives the settings object as an argument
(the settings' own methods and properties are not counted). The files of those calls, in order, consecutive
calls in one file collapsed, are printed; each arrival in a file the settings had already left is marked and
counted.

    python tools/settings_trail.py [CHECKOUT]           # default: this checkout
    python tools/settings_trail.py --first-call-only    # each function counted at its first call only
    python tools/settings_trail.py --carried            # also objects holding the settings (`.settings`)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", nargs="?", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--first-call-only", action="store_true")
    parser.add_argument("--carried", action="store_true")
    args = parser.parse_args()
    sys.path[:0] = [os.path.join(args.checkout, "src"), args.checkout]
    os.chdir(tempfile.mkdtemp())

    from jax_benchmarks.measure.harness import run_suite
    from jax_benchmarks.mnist import flax_backend
    from jax_benchmarks.mnist.settings import FlaxSettings
    from jax_benchmarks.settings import BenchSettings
    from jax_benchmarks.run import Run
    from jax_benchmarks.training import cases
    from tests.mnist.conftest import synthetic_data

    setattr(cases, "read_data", lambda settings, log: synthetic_data())

    def holds_settings(value: object) -> bool:
        return isinstance(value, BenchSettings) or (
            args.carried and isinstance(getattr(value, "settings", None), BenchSettings))

    seen: set[tuple[str, int]] = set()
    calls: list[tuple[str, str]] = []

    def tracer(frame: FrameType, event: str, _arg: Any) -> None:
        code = frame.f_code
        if event != "call" or "jax_benchmarks" not in code.co_filename:
            return
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if any(holds_settings(frame.f_locals.get(n)) for n in names if n != "self" or args.carried):
            key = (code.co_filename, code.co_firstlineno)
            if not args.first_call_only or key not in seen:
                seen.add(key)
                calls.append((code.co_filename.split("jax_benchmarks/")[1], code.co_name))

    settings = FlaxSettings.model_validate({"num_epochs": 1, "dry_run": True, "train_batch_size": 16,
                                            "test_batch_size": 32, "repeats": 1, "comet": "off", "device": "cpu",
                                            "results": Path("results.jsonl")})
    sys.settrace(tracer)
    try:
        [suite] = flax_backend.suites(settings)
        run_suite(Run("mnist", settings.results), suite, repeats=1)
    finally:
        sys.settrace(None)

    trail: list[tuple[str, list[str]]] = []
    for file, function in calls:
        if trail and trail[-1][0] == file:
            trail[-1][1].append(function)
        else:
            trail.append((file, [function]))
    left: set[str] = set()
    back = 0
    for i, (file, functions) in enumerate(trail):
        mark = ""
        if i:
            left.add(trail[i - 1][0])
            if file in left:
                back += 1
                mark = f"  <- back #{back}"
        print(f"{file}: {', '.join(functions)}{mark}")
    print(f"comes back to a file it had left: {back} | visits to training/cases.py: "
          f"{sum(file == 'training/cases.py' for file, _ in trail)}")


if __name__ == "__main__":
    main()
