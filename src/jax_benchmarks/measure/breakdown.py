"""Where a profiled step's time went, read from its Chrome trace (--profile): shares of the step, in percent.

The step is the trace's complete event named `STEP` (the annotation `measure/profile.py` wraps the call and its
sync in); its duration is the whole. Inside it, each complete event ("ph": "X", times in microseconds) is
counted where its kind is known, overlapping events once (a union of intervals):

* kernels: an XLA operation (JAX and Flax: an event whose args name its `hlo_op`) or a device kernel (PyTorch's
  category `kernel`);
* data movement: a copy between host and device (PyTorch's `gpu_memcpy` / `gpu_memset`; an event named like a
  transfer, `TRANSFER`);
* host: the time the step's own thread (the annotation's) spends in any event, outside kernels and data movement:
  Python, the framework's dispatch, and operators that compute on that thread (PyTorch on the CPU);
* idle: the time no event of any thread covers.

A share the trace has no events for is left out, never put at zero: PyTorch on the CPU has no kernel events (its
operators compute inside its `cpu_op` events, which also hold the dispatch), so its line has no kernel share; a
CPU trace has no copies, so none has a data-movement share. A trace without the step's annotation has no line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jax_benchmarks.store.record import Scalar

STEP = "jax_benchmarks step"
KERNEL_CATEGORIES = frozenset({"kernel"})
DATA_CATEGORIES = frozenset({"gpu_memcpy", "gpu_memset"})
TRANSFER = re.compile(r"memcpy|memset|TransferTo|TransferFrom|HostToDevice|DeviceToHost|CopyToDevice", re.I)
SHARES = ("kernels", "host", "data_movement", "idle")
PREFIX = "share_"

Interval = tuple[float, float]


def union_length(intervals: Iterable[Interval]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def clipped(intervals: Iterable[Interval], window: Interval) -> list[Interval]:
    low, high = window
    return [(max(a, low), min(b, high)) for a, b in intervals if b > low and a < high]


def step_event(events: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    steps = [e for e in events if e.get("ph") == "X" and e.get("name") == STEP and "dur" in e]
    return max(steps, key=lambda e: float(e["dur"])) if steps else None


def kind_of(event: Mapping[str, Any]) -> str | None:
    category = str(event.get("cat") or "")
    args = event.get("args")
    if category in KERNEL_CATEGORIES or (isinstance(args, Mapping) and "hlo_op" in args):
        return "kernels"
    if category in DATA_CATEGORIES or TRANSFER.search(str(event.get("name", ""))):
        return "data_movement"
    return None


def shares(trace: Mapping[str, Any]) -> dict[str, float] | None:
    """The step's shares (0..1) by kind, only those the trace has events for; None without the step's annotation."""
    events = [e for e in trace.get("traceEvents", []) if isinstance(e, Mapping)]
    step = step_event(events)
    if step is None or float(step["dur"]) <= 0:
        return None
    window = (float(step["ts"]), float(step["ts"]) + float(step["dur"]))
    total = window[1] - window[0]
    timed = [e for e in events if e is not step and e.get("ph") == "X" and "dur" in e and "ts" in e]
    spans = {id(e): (float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in timed}
    by_kind: dict[str, list[Interval]] = {"kernels": [], "data_movement": []}
    for event in timed:
        kind = kind_of(event)
        if kind is not None:
            by_kind[kind].append(spans[id(event)])
    device = clipped(by_kind["kernels"] + by_kind["data_movement"], window)
    own = clipped([spans[id(e)] for e in timed
                   if (e.get("pid"), e.get("tid")) == (step.get("pid"), step.get("tid"))], window)
    busy = clipped(spans.values(), window)
    found: dict[str, float] = {}
    for kind, intervals in by_kind.items():
        if intervals:
            found[kind] = union_length(clipped(intervals, window)) / total
    # The calling thread's time outside device work: its own events, less what overlaps kernels and copies.
    found["host"] = (union_length(own + device) - union_length(device)) / total
    found["idle"] = 1.0 - union_length(busy) / total
    found["step_s"] = total / 1e6
    return found


def breakdown_figures(trace: Mapping[str, Any]) -> dict[str, Scalar]:
    """The record's breakdown keys (`share_kernels`, ... in percent, `step_trace_s`), or why there is none."""
    found = shares(trace)
    if found is None:
        return {"breakdown_status": "unavailable: the trace has no step annotation"}
    figures: dict[str, Scalar] = {f"{PREFIX}{kind}": round(100 * found[kind], 1) for kind in SHARES if kind in found}
    figures["step_trace_s"] = found["step_s"]
    return figures


NAMES = {"kernels": "kernels", "host": "host", "data_movement": "data movement", "idle": "idle"}


def breakdown_line(who: str, profile: Mapping[str, Scalar]) -> str | None:
    """'jax: kernels 81.2 %, host 10.3 %, idle 8.5 % (no kernel/data movement events: left out)' for one
    record's profile; None where it has no breakdown."""
    present = [(kind, profile[f"{PREFIX}{kind}"]) for kind in SHARES if isinstance(profile.get(f"{PREFIX}{kind}"),
                                                                                     (int, float))]
    if not present:
        return None
    missing = [NAMES[kind] for kind in SHARES if f"{PREFIX}{kind}" not in profile]
    text = f"{who}: " + ", ".join(f"{NAMES[kind]} {value:.1f} %" for kind, value in present)
    return text + (f" ({', '.join(missing)}: no such events in the trace, left out)" if missing else "")
