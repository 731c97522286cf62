"""How much of the machine other processes took while a figure was measured.

A figure taken while other programs held the cores is slower, and more so with many threads (threads
that wait for a core someone else holds). This module tells, for a window of time (one timed case, one
round), how many of the cores this process may run on were busy with *other* work:

    others = (time the kernel counted busy on those CPUs) - (CPU time of this process and its children)

both over the window, divided by the window's length: "other processes took 1.6 of 2 cores".

* The kernel's count is `/proc/stat`: one line per CPU with the time spent in user, nice, system,
  irq and softirq (busy), idle and iowait (not busy), and steal (time the hypervisor gave this
  virtual CPU's turn to another guest: reported apart, it is contention too). Guest time is already
  inside user. Only the CPUs of this process's affinity mask are summed (a container pinned to 2 CPUs
  of 64 is contended by what runs on those 2).
* This process's own time is `time.process_time()` (every thread, nanosecond resolution) plus its
  children: the reaped ones (`getrusage(RUSAGE_CHILDREN)`) and the live ones (`/proc/<pid>/stat` of
  each descendant), so a worker process the benchmark started is not counted as someone else's.
* `/proc/stat` counts in ticks (`USER_HZ`, 100 a second): each CPU's count may be off by about one
  tick at each end of the window, so a window shorter than `MIN_RESOLUTION_FACTOR` times what that
  error could make look busy says "contention unknown", not a guess.
* "Contention unknown" also where `/proc/stat` cannot be read, or where a cgroup CPU quota limits this
  process (`/sys/fs/cgroup/cpu.max`, or cgroup v1's `cpu.cfs_quota_us`): there the CPUs' busy time
  includes work of other containers that this one never competes with for its quota, and what it does
  compete with (its own quota) the kernel does not report per window here.

Readings are plain data (`Reading`): the judge (`contention_between`) takes two of them and no global
state, so tests inject `/proc` texts and check the arithmetic. `BUSY_CORES` was chosen from
measurement (benchmarks/contention.py, docs/timing.md#contention).
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from jax_benchmarks.measure.gpu_contention import GpuSeen, gpu_of_fields, gpu_seen, ids_asked_once, run_nvidia_smi
from jax_benchmarks.store.record import Scalar

# Other processes took at least this many cores (steal included) during a window: the figure is
# "busy". Chosen from benchmarks/contention.py (docs/timing.md#contention): on this 2-core VM, other
# work beside a quiet run took at most ~0.3 cores, two CPU-bound processes beside it at least ~0.9.
BUSY_CORES = 0.5
# The tick error (one tick per CPU at each end) must be at most this share of BUSY_CORES, else the
# window is too short to tell busy from quiet.
MIN_RESOLUTION_FACTOR = 0.5
# /proc/stat's fields after the CPU name, in order (proc(5)).
BUSY_FIELDS = (0, 1, 2, 5, 6)  # user, nice, system, irq, softirq (guest is inside user)
STEAL_FIELD = 7


@dataclass(frozen=True)
class CpuTicks:
    """Counters of `/proc/stat` summed over the CPUs this process may run on, in seconds."""

    busy_s: float
    steal_s: float
    cpus: int


@dataclass(frozen=True)
class Reading:
    """What was read at one instant; `system` None: /proc/stat could not be read (`hidden` says why)."""

    wall_s: float
    own_cpu_s: float
    system: CpuTicks | None
    tick_s: float = 0.01
    quota_cores: float | None = None
    hidden: str | None = None


def parse_proc_stat(text: str, allowed: frozenset[int] | None, tick_s: float) -> CpuTicks | None:
    """Busy and steal seconds of the `cpuN` lines whose N is in `allowed` (every CPU where None);
    None where the text has no usable per-CPU line."""
    busy = steal = 0
    cpus = 0
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or not name[3:].isdigit():
            continue
        if allowed is not None and int(name[3:]) not in allowed:
            continue
        fields = [int(field) for field in rest.split()]
        if len(fields) < 4:
            return None
        busy += sum(fields[i] for i in BUSY_FIELDS if i < len(fields))
        steal += fields[STEAL_FIELD] if len(fields) > STEAL_FIELD else 0
        cpus += 1
    if cpus == 0:
        return None
    return CpuTicks(busy * tick_s, steal * tick_s, cpus)


def quota_of(cpu_max: str | None, cfs_quota_us: str | None, cfs_period_us: str | None) -> float | None:
    """The cgroup's CPU quota in cores, from cgroup v2's `cpu.max` ("max 100000": none; "150000 100000":
    1.5) or cgroup v1's `cpu.cfs_quota_us` (-1: none) and `cpu.cfs_period_us`; None: no quota."""
    if cpu_max is not None:
        parts = cpu_max.split()
        if len(parts) == 2 and parts[0] != "max":
            return int(parts[0]) / int(parts[1])
        return None
    if cfs_quota_us is not None and cfs_period_us is not None:
        quota = int(cfs_quota_us)
        return quota / int(cfs_period_us) if quota > 0 else None
    return None


@dataclass(frozen=True)
class Contention:
    """Other processes' share of this process's CPUs over a window; `unknown` says why it cannot be told."""

    window_s: float
    cores: int | None = None
    others_cores: float | None = None
    steal_cores: float | None = None
    unknown: str | None = None
    # Other processes on the GPU the figure ran on (measure/gpu_contention.py); None: a CPU figure.
    gpu: GpuSeen | None = None

    @property
    def taken_cores(self) -> float | None:
        """What others took: other processes on these CPUs plus the hypervisor's steal."""
        if self.others_cores is None:
            return None
        return self.others_cores + (self.steal_cores or 0.0)

    @property
    def cpu_busy(self) -> bool:
        taken = self.taken_cores
        return taken is not None and taken >= BUSY_CORES

    @property
    def busy(self) -> bool:
        """Others took BUSY_CORES or more of the CPUs, or ran on the figure's GPU."""
        return self.cpu_busy or (self.gpu is not None and self.gpu.busy)

    def sentence(self) -> str:
        """'other processes took 1.6 of 2 cores (0.2 of it stolen by the hypervisor)', or why unknown."""
        gpu = f"; {self.gpu.sentence()}" if self.gpu is not None else ""
        if self.unknown is not None or self.taken_cores is None:
            return f"contention unknown: {self.unknown}{gpu}"
        text = f"other processes took {self.taken_cores:.1f} of {self.cores} cores"
        if self.steal_cores and self.steal_cores >= 0.05:
            text += f" ({self.steal_cores:.1f} of it stolen by the hypervisor)"
        return text + gpu

    def as_fields(self) -> dict[str, Scalar]:
        """The record's `contention` (store/record.py)."""
        fields: dict[str, Scalar] = {"window_s": round(self.window_s, 6), "busy": self.busy}
        if self.unknown is not None:
            fields["unknown"] = self.unknown
        else:
            fields.update(cores=self.cores, others_cores=_rounded(self.others_cores),
                          steal_cores=_rounded(self.steal_cores))
        return fields | (self.gpu.as_fields() if self.gpu is not None else {})


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def contention_between(before: Reading, after: Reading) -> Contention:
    """What other processes took of this process's CPUs between two readings."""
    window = after.wall_s - before.wall_s
    quota = after.quota_cores
    if quota is not None:
        return Contention(window, unknown=f"a cgroup CPU quota of {quota:.3g} cores: /proc/stat counts "
                                          "the host's CPUs, not what this container's quota leaves it")
    if before.system is None or after.system is None:
        return Contention(window, unknown=after.hidden or before.hidden or "/proc/stat could not be read")
    cpus = after.system.cpus
    if cpus != before.system.cpus:
        return Contention(window, unknown="the CPUs this process may use changed during the window")
    resolution_cores = 2 * cpus * after.tick_s / window if window > 0 else float("inf")
    if resolution_cores > MIN_RESOLUTION_FACTOR * BUSY_CORES:
        return Contention(window, unknown=f"{window * 1e3:.0f} ms is too short for /proc/stat's "
                                          f"{after.tick_s * 1e3:.0f} ms ticks on {cpus} CPUs")
    busy = after.system.busy_s - before.system.busy_s
    own = after.own_cpu_s - before.own_cpu_s
    steal = after.system.steal_s - before.system.steal_s
    # Tick rounding can put others a little below 0 on a quiet machine: nobody took negative time.
    others = min(max(busy - own, 0.0) / window, float(cpus))
    return Contention(window, cores=cpus, others_cores=others, steal_cores=min(max(steal, 0.0) / window, float(cpus)))


# ------------------------------------------------------ reading /proc ---

PROC = "/proc"
CGROUP = "/sys/fs/cgroup"
# /proc/stat's per-CPU lines come first; what follows ("intr" with a count per interrupt) can be
# kilobytes long and is not read: reading it tripled the cost of a reading.
STAT_END = b"\nintr"
STAT_CHUNK = 8192


def _text(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as file:
            return file.read()
    except (OSError, ValueError):
        return None


def cpu_lines(path: str = f"{PROC}/stat") -> str | None:
    """The start of /proc/stat up to its per-CPU lines' end; None where it cannot be read."""
    try:
        with open(path, "rb", buffering=0) as file:
            text = b""
            while STAT_END not in text:
                chunk = file.read(STAT_CHUNK)
                if not chunk:
                    break
                text += chunk
    except OSError:
        return None
    return text.partition(STAT_END)[0].decode("ascii", "replace")


def _descendants(pid: int) -> list[int]:
    """Live descendants of `pid`, from /proc/<pid>/task/<tid>/children (Linux 3.5+)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"{PROC}/{parent}/task")
        except OSError:  # ended meanwhile
            continue
        for task in tasks:
            children = [int(child) for child in (_text(f"{PROC}/{parent}/task/{task}/children") or "").split()]
            found += children
            pending += children
    return found


def process_cpu_s(pid: int, tick_s: float) -> float | None:
    """CPU seconds of the live process `pid` (every thread) and of the children it has reaped, from /proc/<pid>/stat;
    None where it has ended. A short-lived child's time leaves the live tree when it exits and reappears in its
    parent's cutime and cstime once reaped (torch.compile's inductor runs the C++ compiler as such children, from
    its compile workers): without them it would read as another program's."""
    stat = _text(f"{PROC}/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rpartition(")")[2].split()
    # utime, stime, cutime and cstime are fields 14 to 17 of proc(5), the 12th to 15th after the name.
    return sum(int(value) for value in fields[11:15]) * tick_s


def children_cpu_s(tick_s: float) -> float:
    """CPU seconds of this process's children: the reaped ones and the live descendants (with those they reaped)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    for pid in _descendants(os.getpid()):
        total += process_cpu_s(pid, tick_s) or 0.0  # ended meanwhile: counted once reaped
    return total


def process_tree_cpu_s(pid: int, tick_s: float) -> float | None:
    """CPU seconds of another live process and its descendants, the children each has reaped included
    (`process_cpu_s`), as `children_cpu_s` counts this process's (a process of the same round taken in turns:
    jax_benchmarks.measure.turns); None where it has ended."""
    own = process_cpu_s(pid, tick_s)
    if own is None:
        return None
    return own + sum(process_cpu_s(child, tick_s) or 0.0 for child in _descendants(pid))


def threads_run_s(pid: int) -> float | None:
    """Seconds every live thread of `pid` has run on a CPU, from /proc/<pid>/task/<tid>/schedstat (its first field:
    the scheduler's own count in nanoseconds, where /proc/<pid>/stat counts whole clock ticks of 10 ms); None where
    the process has ended or the kernel keeps no schedstat. The scheduler brings a running thread's count up to date
    at each of its ticks (every 4 ms at 250 Hz) and when the thread stops, so a reading lags a running thread by up to
    a tick: a thread spinning through a window of a few ticks shows."""
    try:
        tasks = os.listdir(f"{PROC}/{pid}/task")
    except OSError:
        return None
    total = 0
    for task in tasks:
        fields = (_text(f"{PROC}/{pid}/task/{task}/schedstat") or "").split()
        if not fields:  # the thread ended meanwhile, or no schedstat in this kernel
            if not os.path.exists(f"{PROC}/{pid}/task/{task}"):
                continue
            return None
        total += int(fields[0])
    return total / 1e9


def tree_threads_run_s(pid: int) -> dict[int, float]:
    """`threads_run_s` of `pid` and of each of its live descendants (torch.compile's compile workers), by pid; the
    ones that cannot be read (ended meanwhile, no schedstat) left out."""
    return {each: run for each in (pid, *_descendants(pid)) if (run := threads_run_s(each)) is not None}


@dataclass(frozen=True)
class Sampler:
    """Reads this machine: what holds for a whole suite (clock tick, CPU quota, the CPUs this process may
    use) is read once when it is made, so that a reading opens only what changes (~0.1 ms, mostly the
    opening of /proc files)."""

    tick_s: float
    quota_cores: float | None
    allowed: frozenset[int] | None
    # Reads the other processes on the figure's GPU (once a case, after its timed calls); None on a CPU.
    gpu: Callable[[], GpuSeen] | None = None

    @classmethod
    def of_this_machine(cls, device: str = "cpu") -> Sampler:
        """`device`: the target's ("cpu", "gpu" or "gpu:N"); on a GPU the framework's device N (0 for "gpu")
        is watched with nvidia-smi."""
        quota = quota_of(_text(f"{CGROUP}/cpu.max"), _text(f"{CGROUP}/cpu/cpu.cfs_quota_us"),
                         _text(f"{CGROUP}/cpu/cpu.cfs_period_us"))
        allowed = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        kind, _, index = device.partition(":")
        gpu = None
        if kind == "gpu":
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            number = int(index) if index.isdigit() else 0
            smi = ids_asked_once(run_nvidia_smi)
            gpu = lambda: gpu_seen(number, frozenset({os.getpid(), *_descendants(os.getpid())}),  # noqa: E731
                                   smi, visible)
        return cls(1.0 / os.sysconf("SC_CLK_TCK"), quota, allowed, gpu)

    def read(self) -> Reading:
        """This instant's reading (see the module's docstring)."""
        wall = time.perf_counter()
        own = time.process_time() + children_cpu_s(self.tick_s)
        text = cpu_lines()
        system = None if text is None else parse_proc_stat(text, self.allowed, self.tick_s)
        hidden = None if system is not None else "/proc/stat is hidden on this machine"
        return Reading(wall, own, system, self.tick_s, self.quota_cores, hidden)


def busy_fields(fields: Mapping[str, Scalar]) -> bool:
    """Whether a record's `contention` says it was taken while other processes held the machine."""
    return fields.get("busy") is True


def of_fields(fields: Mapping[str, Scalar]) -> Contention | None:
    """A record's `contention` read back; None where the record has none (written before it existed)."""
    window = fields.get("window_s")
    if not isinstance(window, (int, float)) or isinstance(window, bool):
        return None
    unknown = fields.get("unknown")
    gpu = gpu_of_fields(fields)
    if isinstance(unknown, str):
        return Contention(float(window), unknown=unknown, gpu=gpu)
    cores, others, steal = fields.get("cores"), fields.get("others_cores"), fields.get("steal_cores")
    if type(cores) is not int or not isinstance(others, (int, float)):
        return Contention(float(window), unknown="the record's contention fields are incomplete", gpu=gpu)
    return Contention(float(window), cores, float(others), float(steal) if isinstance(steal, (int, float)) else None,
                      gpu=gpu)


def fitting_threads(seen: Contention) -> int | None:
    """The thread count that fits the cores other processes left (at least 1): more threads than that
    wait for cores others hold (oversubscription). None where contention is unknown."""
    if seen.cores is None or seen.taken_cores is None:
        return None
    return max(1, round(seen.cores - seen.taken_cores))


def busy_line(seen: Sequence[Contention]) -> str | None:
    """One line for a set of figures: how many were taken on a busy machine, the worst of it and the
    --threads that fits what others left then; None where none was busy."""
    busy = [c for c in seen if c.busy]
    if not busy:
        return None
    worst = max(busy, key=lambda c: c.taken_cores or 0.0)
    gpu = ", or ran on the figure's GPU" if any(c.gpu is not None and c.gpu.busy for c in busy) else ""
    return (f"{len(busy)} of {len(seen)} figures taken on a busy machine (other processes took "
            f"{BUSY_CORES} cores or more{gpu}); at worst {worst.sentence()}: threads beyond what is left wait for "
            f"cores, --threads {fitting_threads(worst)} fits")


def unknown_line(seen: Sequence[Contention]) -> str | None:
    """One line for the figures whose contention could not be told, with the first reason."""
    unknown = [c for c in seen if c.unknown is not None]
    gpu_unknown = [c.gpu for c in seen if c.gpu is not None and c.gpu.unknown is not None]
    lines = [f"contention unknown for {len(unknown)} of {len(seen)} figures: {unknown[0].unknown}"] if unknown else []
    if gpu_unknown:
        lines.append(f"GPU contention unknown for {len(gpu_unknown)} of {len(seen)} figures: {gpu_unknown[0].unknown}")
    return "; ".join(lines) or None
