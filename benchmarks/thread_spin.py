"""How long each framework's worker threads keep running after a call returns (issue 48: the gap between turns).

A round taken in turns (jax_benchmarks.measure.turns) must not start one process's timed window while another
process's threads still spin after its last call: they would take its cores. This script starts one process per
framework, lets it call a 1000×1000 float64 matmul on request, and after each call reads the process's threads' run
time (`threads_run_s`: /proc/<pid>/task/<tid>/schedstat) every 2 ms for 0.4 s; it prints, per call, how long after the
call the threads last ran (the first 2 ms step from which they stay below 0.2 ms a step) and what they ran in all.

    .venv/bin/python benchmarks/thread_spin.py --calls 5
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from jax_benchmarks.measure.contention import threads_run_s  # noqa: E402

STEP_S = 0.002
WATCH_S = 0.4
QUIET_STEP_S = 0.0002

# Each child warms its call up, then calls it once per line read, answering a line when done.
CHILD = {
    "numpy": "import numpy as np\na = np.random.rand(1000, 1000)\ncall = lambda: a @ a\n",
    "pytorch": "import torch\na = torch.rand(1000, 1000, dtype=torch.float64)\ncall = lambda: a @ a\n",
    "jax": ("import jax\njax.config.update('jax_enable_x64', True)\nimport jax.numpy as jnp\n"
            "a = jnp.ones((1000, 1000))\nf = jax.jit(lambda x: x @ x)\ncall = lambda: f(a).block_until_ready()\n"),
}
LOOP = ("import sys\ncall()\nprint('ready', flush=True)\n"
        "for _ in sys.stdin:\n    call()\n    print('done', flush=True)\n")


def spin_after_calls(framework: str, calls: int) -> list[tuple[float, float]]:
    """Per call: (seconds after the call's return until the threads last ran, seconds they ran in that time)."""
    child = subprocess.Popen([sys.executable, "-c", CHILD[framework] + LOOP], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    child.stdout.readline()
    time.sleep(1.0)  # the warm-up's threads asleep
    out = []
    try:
        for _ in range(calls):
            child.stdin.write("\n")
            child.stdin.flush()
            child.stdout.readline()
            steps, last = [], threads_run_s(child.pid) or 0.0
            began = time.monotonic()
            while time.monotonic() - began < WATCH_S:
                time.sleep(STEP_S)
                now = threads_run_s(child.pid) or last
                steps.append(now - last)
                last = now
            busy = len(steps)
            while busy > 0 and steps[busy - 1] < QUIET_STEP_S:
                busy -= 1
            out.append((busy * STEP_S, sum(steps[:busy])))
            time.sleep(0.5)
    finally:
        child.stdin.close()
        child.wait()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("frameworks", nargs="*", default=list(CHILD))
    args = parser.parse_args()
    for framework in args.frameworks:
        seen = spin_after_calls(framework, args.calls)
        print(f"{framework}: threads ran until " + ", ".join(f"{after * 1e3:.0f} ms" for after, _ in seen)
              + " after the call (ran " + ", ".join(f"{ran * 1e3:.0f}" for _, ran in seen) + " ms of CPU)",
              flush=True)


if __name__ == "__main__":
    main()
