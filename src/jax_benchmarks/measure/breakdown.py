"""Where a profiled step's time went, read from its Chrome trace (--profile): shares of the step, in percent.

The step is the trace's complete event named `STEP` (the annotation `measure/profile.py` wraps the call and its
sync in); its duration is the whole. Inside it, complete events ("ph": "X", times in microseconds) of a known kind
are counted, overlapping events once (a union of intervals):

* kernels: an XLA operation (JAX and Flax: an event whose args name its `hlo_op`) or a device kernel (PyTorch's
  category `kernel`);
* data movement: a copy between host and device (PyTorch's `gpu_memcpy` / `gpu_memset`; an event named like a
  transfer, `TRANSFER`), where no kernel runs;
* idle: the step's own thread (the annotation's) waits for a result (an event named like a wait, `WAIT`:
  `cudaDeviceSynchronize`, `CommonPjRtBuffer::Await`, `block_until_ready`) and no kernel or copy runs;
* host: the rest of the step: its thread runs Python, the framework's dispatch, or operators computed on that thread
  (PyTorch on the CPU), or waits inside a call that executes the program synchronously (JAX on the CPU).

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
WAIT = re.compile(r"Synchroniz|Await|block_until_ready|try_to_block|Wait for", re.I)
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

    def span(event: Mapping[str, Any]) -> Interval:
        return float(event["ts"]), float(event["ts"]) + float(event["dur"])

    kernels = clipped([span(e) for e in timed if kind_of(e) == "kernels"], window)
    copies = clipped([span(e) for e in timed if kind_of(e) == "data_movement"], window)
    waits = clipped([span(e) for e in timed if (e.get("pid"), e.get("tid")) == (step.get("pid"), step.get("tid"))
                     and WAIT.search(str(e.get("name", "")))], window)
    device = union_length(kernels + copies)
    found: dict[str, float] = {}
    if kernels:
        found["kernels"] = union_length(kernels) / total
    if copies:
        found["data_movement"] = (device - union_length(kernels)) / total
    idle = (union_length(waits + kernels + copies) - device) / total
    if waits:
        found["idle"] = idle
    found["host"] = 1.0 - device / total - idle
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


def profile_lines(records: Sequence[Any]) -> list[str]:
    """What --profile wrote, for the console: one line per profiled case (its breakdown where its trace has one, its
    trace file, or why there is none)."""
    lines = []
    for record in records:
        profile: Mapping[str, Scalar] = record.profile
        if not profile:
            continue
        who = f"{record.backend} {record.case}" + (f" [{record.variant}]" if record.variant else "")
        status = str(profile.get("profile_status", ""))
        if status != "measured":
            lines.append(f"{who}: {status}")
        else:
            lines.append(f"{breakdown_line(who, profile) or who}; trace {profile.get('trace')}")
    return lines


def breakdowns_of(records: Sequence[Any]) -> list[str]:
    """The breakdown lines of a comparison's records: one per backend (and variant) and case, from its latest record
    that has one (a verdict finding's frameworks side by side); empty where none was profiled."""
    latest: dict[tuple[str, str | None, str], str] = {}
    for record in records:
        who = f"{record.backend}" + (f" [{record.variant}]" if record.variant else "") + f" {record.case}"
        line = breakdown_line(who, record.profile)
        if line is not None:
            latest[(record.backend, record.variant, record.case)] = line
    return list(latest.values())
