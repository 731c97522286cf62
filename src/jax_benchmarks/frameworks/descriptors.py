"""One descriptor per framework: all that the shared modules know of a framework, in one entry.

A descriptor says how a framework is imported and installed, which distributions a record names with their
versions, how it is told its thread count and reports it, how it is seeded, where its devices are and how its
results are waited for, how its allocator's peak is read on a GPU, how NumPy arrays go to its device and back,
the GPU precision policy it is given, how the environment is prepared before it is imported, the keys of what
its records carry (threads, variables, settings), how its device's out-of-memory error looks, and whether the
verdict's plain answer counts it as "JAX". The shared modules (hardware/, measure/, report/, verdict/, the run
header, the CLI's steps before an import, errors.py) read `registered()` and name no framework;
a framework's own code (its backend modules, its `cli.py` entries, the helpers under frameworks/ that only its
backends import) is the only other place that does (tests/frameworks/test_descriptors.py greps src/ for it).

Every entry sits in this one module, in the order records list their versions: a new framework is one entry
here (and its backends), and nothing needs finding elsewhere. Every function imports its framework inside, on
first use: reading the descriptors (as `--help` does, through the run header's modules) loads no framework.
"""

from __future__ import annotations

import functools
import gzip
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jax_benchmarks.frameworks.arrays import DeviceArrays, Floats, NumpyArrays
from jax_benchmarks.frameworks.available import Framework
from jax_benchmarks.hardware.devices import DeviceKind
from jax_benchmarks.measure.breakdown import STEP
from jax_benchmarks.measure.profile import Profiler
from jax_benchmarks.measure.memory import MEASURED, DeviceMemory, DevicePeak, NoDevicePeak
from jax_benchmarks.measure.timing import Sync, no_sync
from jax_benchmarks.store.record import Scalar

if TYPE_CHECKING:
    from typing import TypeAlias

    import jax
    import torch

    # What RNG_Provider hands out (frameworks/rng.py), named here so that rng.py imports no framework.
    JaxKey: TypeAlias = jax.Array
    TorchGenerator: TypeAlias = torch.Generator

# What a run's environment records, by key (hardware/environment.py).
Env = dict[str, Scalar]


@dataclass(frozen=True)
class FrameworkDescriptor:
    """What the shared modules need of one framework. A field left at its default: the framework has no such
    thing (no thread control of its own, no global RNG, no device but the host, no allocator statistics)."""

    label: str  # as a user knows it: "PyTorch"
    imports: tuple[str, ...]  # its top-level import names; loaded when any is in sys.modules
    distributions: tuple[str, ...]  # version probe: the distributions whose versions every record carries
    needs: tuple[Framework, ...] = ()  # what a backend on it needs installed (empty: a core dependency)
    backends: tuple[str, ...] = ()  # the backend names the groups give it
    counts_as_jax: bool = False  # the verdict's plain answer: "is JAX worth it" asks of these backends
    version_in_header: bool = True  # the run header names its first distribution's version
    # Threads: environment variables it reads once, when it loads (`--threads N` sets them before the import),
    # and why a process that already loaded it keeps what it started with.
    thread_environment: Callable[[int, Mapping[str, str]], dict[str, str]] | None = None
    threads_fixed_when_loaded: str = ""
    pin_threads: Callable[[Any, int], list[str]] | None = None  # (its loaded module, N) -> notes on what stayed
    thread_state: Callable[[Any], Env] | None = None  # (its module or None) -> thread counts in effect
    thread_keys: tuple[str, ...] = ()  # the keys `thread_state` records, compared between runs (report/envdiff.py)
    # The environment variables it reads when it loads that every record carries as they are (read for each
    # record: a command may set them before it loads), as (record key, variable); compared between runs, and a
    # change labels a run in `report --history`.
    recorded_variables: tuple[tuple[str, str], ...] = ()
    loads_blas: bool = False  # it loads BLAS/OpenMP pools that threadpoolctl sees and limits
    seed: Callable[[int], object] | None = None  # seeds its global RNG (only once it is loaded)
    device: Callable[[DeviceKind], Any] | None = None  # its device object of a kind
    sync: Callable[[Any], Sync] = field(default=lambda _device: no_sync)  # waits for a result on that device
    device_memory: DeviceMemory | None = None  # its allocator's peak of a case on a GPU
    arrays: Callable[[DeviceKind], DeviceArrays[Any]] | None = None  # NumPy in, its arrays, NumPy out
    # The GPU policy's precision ("float32", "tf32", "bf16"; hardware/gpu_policy.py) applied while a block runs.
    precision: Callable[[str], AbstractContextManager[None]] | None = None
    loaded_settings: Callable[[Any], Env] | None = None  # (its loaded module) -> the settings a record carries
    # Before it is imported: sets in `environ` what it reads from the environment once, when it loads, and says
    # what is in effect (None: nothing to record). The CLI calls it for each framework a run will import
    # (`prepare_environments`); a run's records carry what it said under `prepared_setting`, which the run
    # header names `prepared_label` on a GPU machine.
    prepare_environment: Callable[[MutableMapping[str, str]], str | None] | None = None
    prepared_setting: str = ""
    prepared_label: str = ""
    # The keys of the settings a record carries of it (`prepared_setting`, then what `loaded_settings` records),
    # compared between runs (report/envdiff.py) in this order.
    setting_keys: tuple[str, ...] = ()
    profiler: Profiler | None = None  # --profile's tracer; None: Python's cProfile (NumPy, the engine)
    # Whether an exception is its device running out of memory (recognised by name: it need not be imported).
    out_of_memory: Callable[[BaseException], bool] | None = None

    def module(self) -> Any:
        """Its first import that is loaded in this process, or None. A name hidden with
        `sys.modules[name] = None` (as the tests of a missing framework do) is not loaded."""
        return next((sys.modules[name] for name in self.imports if sys.modules.get(name) is not None), None)

    def loaded(self) -> bool:
        return self.module() is not None


def registered() -> tuple[FrameworkDescriptor, ...]:
    """Every framework, in the order records list their versions."""
    return DESCRIPTORS


def thread_keys() -> tuple[str, ...]:
    """The thread counts the frameworks' records carry (`thread_state`'s keys), in the registry's order."""
    return tuple(key for descriptor in registered() for key in descriptor.thread_keys)


def variable_keys() -> tuple[str, ...]:
    """The record keys of the environment variables the frameworks' records carry (`recorded_variables`)."""
    return tuple(key for descriptor in registered() for key, _ in descriptor.recorded_variables)


def variables_in(environ: Mapping[str, str]) -> Env:
    """The variables the frameworks' records carry (`recorded_variables`), as `environ` has them (None: unset)."""
    return {key: environ.get(variable)
            for descriptor in registered() for key, variable in descriptor.recorded_variables}


def setting_keys() -> tuple[str, ...]:
    """The frameworks' settings their records carry (`setting_keys`), in the registry's order."""
    return tuple(key for descriptor in registered() for key in descriptor.setting_keys)


def prepared_settings() -> tuple[str, ...]:
    """The keys under which a run's records carry what its frameworks were prepared with before their import."""
    return tuple(descriptor.prepared_setting for descriptor in registered() if descriptor.prepared_setting)


def prepare_environments(imports: Iterable[str], environ: MutableMapping[str, str]) -> Env:
    """Each framework that a run will import (one of `imports` is its import name) prepares `environ` before it
    loads (its `prepare_environment`); what each said is in effect, under its `prepared_setting`."""
    will_import = set(imports)
    prepared: Env = {}
    for descriptor in registered():
        if descriptor.prepare_environment is None or not will_import & set(descriptor.imports):
            continue
        said = descriptor.prepare_environment(environ)
        if said is not None and descriptor.prepared_setting:
            prepared[descriptor.prepared_setting] = said
    return prepared


def is_out_of_memory(exc: BaseException) -> bool:
    """A framework's device out-of-memory error, as its descriptor recognises it (without importing it)."""
    return any(d.out_of_memory is not None and d.out_of_memory(exc) for d in registered())


def version_keys() -> tuple[str, ...]:
    """The distributions whose versions every record carries (env keys; None: not installed)."""
    return tuple(dist for descriptor in registered() for dist in descriptor.distributions)


def header_versions() -> tuple[str, ...]:
    """The distributions the run header names with their versions."""
    return tuple(d.distributions[0] for d in registered() if d.version_in_header and d.distributions)


def profiler_of(backend: str) -> Profiler | None:
    """The profiler of the framework a backend runs on (None: cProfile's, for NumPy and the engine)."""
    return next((d.profiler for d in registered() if backend in d.backends), None)


def jax_backends() -> tuple[str, ...]:
    """The backends the plain answer counts as "JAX", in the registry's order."""
    return tuple(name for d in registered() if d.counts_as_jax for name in d.backends)


# ------------------------------------------------------------------ NumPy ---

def _seed_numpy(seed: int) -> None:
    np.random.seed(seed % 2**32)


NUMPY = FrameworkDescriptor(
    label="NumPy", imports=("numpy",), distributions=("numpy",), backends=("numpy",),
    loads_blas=True, seed=_seed_numpy, arrays=lambda _kind: NumpyArrays(),
)

# SciPy runs as the scipy group's `numpy` backend (NumPy's name), on the CPU only.
SCIPY = FrameworkDescriptor(
    label="SciPy", imports=("scipy",), distributions=("scipy",), needs=(Framework("scipy", "SciPy", "scipy"),),
    version_in_header=False,
)


# -------------------------------------------------------------------- JAX ---

XLA_POOL_VARIABLE = "NPROC"
EIGEN_MULTI_THREAD = "--xla_cpu_multi_thread_eigen"
# jax_default_matmul_precision names: 'float32' is near full float32, 'tensorfloat32' is TF32.
JAX_PRECISION: dict[str, str] = {"float32": "float32", "tf32": "tensorfloat32", "bf16": "float32"}


def merged_xla_flags(existing: str, threads: int) -> str:
    """`existing` XLA_FLAGS with the Eigen multi-threading flag set for `threads` (other flags kept)."""
    from jax_benchmarks.hardware.xla_flags import merged

    return merged(existing, {EIGEN_MULTI_THREAD: "false" if threads == 1 else None})


def _xla_thread_environment(threads: int, environ: Mapping[str, str]) -> dict[str, str]:
    """XLA sizes its CPU thread pools once, when JAX creates its CPU client, from NPROC if set (read by XLA's
    `DefaultThreadPoolSize`; the name is in jaxlib's libjax_common.so), else from the CPU affinity mask. With one
    thread, `--xla_cpu_multi_thread_eigen=false` also keeps Eigen's kernels on the calling thread."""
    env = {XLA_POOL_VARIABLE: str(threads)}
    flags = merged_xla_flags(environ.get("XLA_FLAGS", ""), threads)
    if flags or "XLA_FLAGS" in environ:
        env["XLA_FLAGS"] = flags
    return env


PREALLOCATE_VAR = "XLA_PYTHON_CLIENT_PREALLOCATE"


def prepare_jax_gpu_memory(environ: MutableMapping[str, str]) -> str:
    """Make JAX allocate GPU memory on demand unless the user chose otherwise; describe what is in effect.

    JAX preallocates 75 % of the GPU's memory when its GPU client starts, which leaves PyTorch (in `xla all`,
    `mnist all`) too little. XLA reads these variables once, when that client starts, so this runs before a
    backend imports JAX (the CLI does it); setting them later changes nothing.
    """
    environ.setdefault(PREALLOCATE_VAR, "false")
    chosen = {
        name: environ[name]
        for name in (PREALLOCATE_VAR, "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR")
        if name in environ
    }
    if chosen == {PREALLOCATE_VAR: "false"}:
        return "on demand"
    return ", ".join(f"{name}={value}" for name, value in chosen.items())


def _prepare_jax_environment(environ: MutableMapping[str, str]) -> str:
    """JAX starts its GPU client whenever a GPU is visible, also for `--device cpu`, so its GPU memory is set
    whenever nvidia-smi lists a GPU."""
    from jax_benchmarks.hardware.devices import gpu_names

    return prepare_jax_gpu_memory(environ) if gpu_names() else "no GPU"


def _xla_thread_state(_jax: Any) -> Env:
    import os

    text = os.environ.get(XLA_POOL_VARIABLE)
    try:
        return {"xla_threads": int(text) if text is not None else None}
    except ValueError:
        return {"xla_threads": None}


def jax_device(kind: DeviceKind) -> jax.Device:
    """The first JAX device of the kind; explains the fix when JAX cannot see the GPU."""
    import jax

    if kind == "gpu":
        try:
            return jax.devices("gpu")[0]
        except RuntimeError as exc:
            raise RuntimeError(
                "a GPU is visible but JAX cannot use it: install the CUDA plugin "
                "(`pip install -U 'jax[cuda13]'`, which ./cli.sh does when nvidia-smi works)"
            ) from exc
    return jax.devices("cpu")[0]


def jax_sync(value: object) -> None:
    """Wait until every array in `value` (any pytree) is computed (JAX dispatches asynchronously)."""
    import jax

    jax.block_until_ready(value)  # type: ignore[no-untyped-call]


def jax_keys(seed: int) -> Iterator[jax.Array]:
    """Fresh JAX keys split off one seed's key, never the same twice (RNG_Provider.get)."""
    import jax

    state = jax.random.key(seed)
    while True:
        state, key = jax.random.split(state)
        yield key


@dataclass
class JaxPeak(DevicePeak):
    """XLA's allocator on JAX's first GPU: `peak_bytes_in_use` never resets, so it is the case's peak
    only when the case raised it."""

    device: Any
    held: int = 0
    peak_before: int | None = None

    def _peak(self) -> int:
        return int((self.device.memory_stats() or {}).get("peak_bytes_in_use", 0))

    def before_timing(self) -> None:
        # The timed calls are the same call on the same inputs as the pass: the peak before them is the
        # one to beat, and a case that raises it during its samples or its pass is measured.
        self.peak_before = self._peak()

    def start(self, settle: bool) -> None:
        stats = self.device.memory_stats() or {}
        self.held = int(stats.get("bytes_in_use", 0))
        if self.peak_before is None:
            self.peak_before = int(stats.get("peak_bytes_in_use", 0))

    def stop(self) -> dict[str, Scalar]:
        stats = self.device.memory_stats()
        if not stats or "peak_bytes_in_use" not in stats:
            return {"device_status": f"unavailable: {self.device.platform} reports no memory statistics"}
        peak = int(stats["peak_bytes_in_use"])
        figures: dict[str, Scalar] = {"device_held_bytes": self.held}
        reserved = stats.get("bytes_reserved") or stats.get("pool_bytes") or stats.get("bytes_limit")
        if reserved is not None:
            figures["device_reserved_bytes"] = int(reserved)
        if "bytes_limit" in stats:
            figures["device_limit_bytes"] = int(stats["bytes_limit"])
        if self.peak_before is not None and peak > self.peak_before:
            return {"device_status": MEASURED, "device_peak_bytes": peak - self.held, **figures}
        return {"device_status": (f"unavailable: the process's peak ({self.peak_before} bytes) was set before the "
                                  "case, and JAX cannot reset peak_bytes_in_use"), **figures}


def jax_device_memory() -> DevicePeak:
    """XLA's allocator on JAX's first GPU."""
    import jax

    try:
        gpus = jax.local_devices(backend="gpu")
    except RuntimeError:  # no GPU backend in this jaxlib (no CUDA plugin)
        gpus = []
    return JaxPeak(gpus[0]) if gpus else NoDevicePeak("JAX sees no GPU")


class JaxArrays(DeviceArrays["jax.Array"]):
    """JAX: `jax.device_put` on the kind's device; results are waited for with `jax_sync`."""

    @functools.cached_property
    def device(self) -> jax.Device:
        return jax_device(self.kind)

    def to_device(self, x: Floats) -> jax.Array:
        import jax

        moved: jax.Array = jax.device_put(x, self.device)
        return moved

    def to_numpy(self, x: jax.Array) -> Floats:
        return np.asarray(x)

    @property
    def sync(self) -> Sync:
        return jax_sync


def _jax_precision(precision: str) -> AbstractContextManager[None]:
    """The matmul/convolution precision of everything traced inside the block."""
    import jax

    context: AbstractContextManager[None] = jax.default_matmul_precision(JAX_PRECISION[precision])
    return context


def _jax_settings(jax: Any) -> Env:
    if not hasattr(jax, "config"):
        return {}
    precision = jax.config.jax_default_matmul_precision
    return {"jax_matmul_precision": None if precision is None else str(precision)}


def jax_trace(step: Callable[[], None], scratch: Path) -> dict[str, Any]:
    """The step under jax.profiler, as the Perfetto trace JSON it writes."""
    import jax

    with jax.profiler.trace(str(scratch), create_perfetto_trace=True):
        with jax.profiler.TraceAnnotation(STEP):
            step()
    found = sorted(scratch.rglob("perfetto_trace.json.gz"))
    if not found:
        raise RuntimeError("jax.profiler wrote no perfetto_trace.json.gz")
    loaded: dict[str, Any] = json.loads(gzip.decompress(found[-1].read_bytes()))
    return loaded


JAX_PROFILER = Profiler("jax", jax_trace)


def jax_out_of_memory(exc: BaseException) -> bool:
    """XLA's RESOURCE_EXHAUSTED, in jaxlib's runtime error (jax.errors.JaxRuntimeError in jax 0.10; XlaRuntimeError
    in older releases)."""
    return type(exc).__name__ in ("XlaRuntimeError", "JaxRuntimeError") and "RESOURCE_EXHAUSTED" in str(exc)


JAX = FrameworkDescriptor(
    label="JAX", imports=("jax", "jaxlib"), distributions=("jax", "jaxlib"), needs=(Framework("jax", "JAX", "jax"),),
    backends=("jax",), counts_as_jax=True,
    thread_environment=_xla_thread_environment,
    threads_fixed_when_loaded="its XLA thread pools keep the size they started with",
    thread_state=_xla_thread_state, thread_keys=("xla_threads",), recorded_variables=(("xla_flags", "XLA_FLAGS"),),
    prepare_environment=_prepare_jax_environment, prepared_setting="jax_gpu_memory", prepared_label="JAX GPU memory",
    setting_keys=("jax_gpu_memory", "jax_matmul_precision"),
    device=jax_device, sync=lambda _device: jax_sync, device_memory=jax_device_memory, arrays=JaxArrays,
    precision=_jax_precision, loaded_settings=_jax_settings, profiler=JAX_PROFILER, out_of_memory=jax_out_of_memory,
)

# Flax runs on JAX (its devices, sync, threads and policy are JAX's), trained with optax; mnist's saves its
# checkpoints with orbax.
FLAX_LIBRARY = Framework("flax", "Flax", "jax")
OPTAX_LIBRARY = Framework("optax", "Optax", "jax")
FLAX_STACK = (*JAX.needs, FLAX_LIBRARY, OPTAX_LIBRARY, Framework("orbax.checkpoint", "Orbax", "jax"))
FLAX = FrameworkDescriptor(
    label="Flax", imports=("flax",), distributions=("flax", "optax"), needs=FLAX_STACK, backends=("flax",),
    counts_as_jax=True, device=jax_device, sync=lambda _device: jax_sync, device_memory=jax_device_memory,
    arrays=JaxArrays, profiler=JAX_PROFILER, out_of_memory=jax_out_of_memory,
)


# ---------------------------------------------------------------- PyTorch ---

# torch.backends.{cuda.matmul,cudnn.conv}.fp32_precision values (torch ≥ 2.9; the older allow_tf32
# flags must not be mixed with them: torch raises when both APIs were used in one process).
TORCH_PRECISION: dict[str, str] = {"float32": "ieee", "tf32": "tf32", "bf16": "ieee"}


def torch_device(kind: DeviceKind) -> torch.device:
    """The PyTorch device of the kind; explains the fix when torch is a CPU build."""
    import torch

    if kind == "gpu":
        if not torch.cuda.is_available():
            raise RuntimeError(
                "a GPU is visible but PyTorch cannot use it: this torch is a CPU build "
                f"({torch.__version__}); reinstall torch with CUDA support"
            )
        return torch.device("cuda")
    return torch.device("cpu")


def torch_sync(device: Any) -> Sync:
    """A sync for a torch device: waits for CUDA kernels, nothing to do on CPU."""
    import torch

    if torch.device(device).type == "cuda":
        def _sync(_: object) -> None:
            torch.cuda.synchronize(device)
        return _sync
    return no_sync


def torch_generator(seed: int) -> torch.Generator:
    """Seed PyTorch's global RNG and return a generator with the same seed."""
    import torch

    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def _pin_torch_threads(torch: Any, threads: int) -> list[str]:
    """`torch.set_num_threads` (intra-op) at any time; `torch.set_num_interop_threads` only before its first
    inter-op work, so a refusal is said rather than hidden."""
    torch.set_num_threads(threads)
    if torch.get_num_interop_threads() != threads:
        try:
            torch.set_num_interop_threads(threads)
        except RuntimeError:  # inter-op pool already started: PyTorch allows no change
            return [f"PyTorch's inter-op pool had already started with {torch.get_num_interop_threads()} threads"]
    return []


def _torch_thread_state(torch: Any) -> Env:
    if torch is None or not hasattr(torch, "get_num_threads"):
        return {}
    return {"torch_threads": torch.get_num_threads(), "torch_interop_threads": torch.get_num_interop_threads()}


@dataclass
class TorchPeak(DevicePeak):
    """PyTorch's caching allocator on the current CUDA device."""

    held: int = 0

    def start(self, settle: bool) -> None:
        import torch

        torch.cuda.synchronize()
        if settle:
            torch.cuda.empty_cache()
        self.held = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()

    def stop(self) -> dict[str, Scalar]:
        import torch

        torch.cuda.synchronize()
        return {"device_status": MEASURED, "device_peak_bytes": torch.cuda.max_memory_allocated() - self.held,
                "device_held_bytes": self.held, "device_reserved_bytes": torch.cuda.max_memory_reserved()}


def torch_device_memory() -> DevicePeak:
    """PyTorch's caching allocator on the current CUDA device."""
    import torch

    return TorchPeak() if torch.cuda.is_available() else NoDevicePeak("PyTorch sees no CUDA device")


class TorchArrays(DeviceArrays["torch.Tensor"]):
    """PyTorch: a tensor on the kind's device (sharing NumPy's memory on the CPU); CUDA results are waited
    for with `torch.cuda.synchronize`."""

    @functools.cached_property
    def device(self) -> torch.device:
        return torch_device(self.kind)

    def to_device(self, x: Floats) -> torch.Tensor:
        import torch

        return torch.from_numpy(np.ascontiguousarray(x)).to(self.device)

    def to_numpy(self, x: torch.Tensor) -> Floats:
        return np.asarray(x.detach().cpu().numpy())

    @property
    def sync(self) -> Sync:
        return torch_sync(self.device)


@contextmanager
def _torch_precision(precision: str) -> Iterator[None]:
    """float32 matmul and cuDNN convolution precision, and cuDNN autotuning, while the block runs; the previous
    values come back afterwards, so nothing leaks into later work."""
    import torch

    fp32_precision = TORCH_PRECISION[precision]
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    conv = torch.backends.cudnn.conv  # type: ignore[attr-defined]  # exists at run time, not in the stubs
    saved = (matmul.fp32_precision, conv.fp32_precision, cudnn.benchmark)
    matmul.fp32_precision = fp32_precision
    conv.fp32_precision = fp32_precision
    cudnn.benchmark = True  # autotuned convolutions, as XLA's are by default
    try:
        yield
    finally:
        matmul.fp32_precision, conv.fp32_precision, cudnn.benchmark = saved


def _torch_settings(torch: Any) -> Env:
    if not hasattr(torch, "backends"):
        return {}
    # The fp32_precision settings, not torch.get_float32_matmul_precision(): torch raises from that
    # getter once the newer per-backend API has been used (`_torch_precision` sets it).
    env: Env = {
        "torch_matmul_precision": str(torch.backends.cuda.matmul.fp32_precision),
        "torch_conv_precision": str(torch.backends.cudnn.conv.fp32_precision),
        "torch_cuda": torch.version.cuda,
    }
    if torch.cuda.is_available():
        env["cudnn"] = str(torch.backends.cudnn.version())
    return env


def torch_trace(step: Callable[[], None], scratch: Path) -> dict[str, Any]:
    """The step under torch.profiler (CPU, and CUDA where available), as its Chrome trace JSON."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=activities) as profiler:
        with record_function(STEP):
            step()
    path = scratch / "torch.trace.json"
    profiler.export_chrome_trace(str(path))
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def watch_torch_code() -> Callable[[], object]:
    """What torch.compile's inductor generates for a compiled case (frameworks/torch_compile.py imports torch)."""
    from jax_benchmarks.frameworks.torch_compile import watch_generated_code

    return watch_generated_code()


TORCH = FrameworkDescriptor(
    label="PyTorch", imports=("torch",), distributions=("torch",), needs=(Framework("torch", "PyTorch", "torch"),),
    backends=("pytorch",), pin_threads=_pin_torch_threads, thread_state=_torch_thread_state,
    thread_keys=("torch_threads", "torch_interop_threads"), loads_blas=True,
    seed=torch_generator, device=torch_device, sync=torch_sync, device_memory=torch_device_memory,
    arrays=TorchArrays, precision=_torch_precision, loaded_settings=_torch_settings,
    setting_keys=("torch_matmul_precision", "torch_conv_precision", "torch_cuda", "cudnn"),
    # Kineto prints a start and a stop line (its level USDT, 5, its highest) on stderr at every trace unless its
    # log level, read at its first trace in a process, is above them.
    profiler=Profiler("torch", torch_trace, watch=watch_torch_code, environment={"KINETO_LOG_LEVEL": "6"}),
    # torch.OutOfMemoryError (its CUDA caching allocator)
    out_of_memory=lambda exc: type(exc).__name__ == "OutOfMemoryError",
)


DESCRIPTORS: tuple[FrameworkDescriptor, ...] = (NUMPY, SCIPY, JAX, FLAX, TORCH)

