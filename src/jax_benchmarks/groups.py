"""The CLI's groups: name -> the module holding its click command, a one-line help, the commands a
smoke test runs, and where it declares what `verdict` and `report` read of it (its findings, its training epochs). Framework-free and import-free, so that `--help` (src/jax_benchmarks/cli/root.py) and `report` (which orders
its tables by group) read the one list without loading any group."""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args

# The groups whose commands measure and record; `report` reads their records.
BenchmarkGroup = Literal["xla", "jit", "autograd", "scipy", "mnist"]
BENCHMARK_GROUPS: tuple[BenchmarkGroup, ...] = get_args(BenchmarkGroup)


class GroupEntry(NamedTuple):
    module: str  # holds a click command called `cli`
    help: str
    # Subcommands `smoke` runs with --quick, one fresh process each (every case of the group between them).
    smoke: tuple[str, ...] = ()
    # `report --plot` draws compiled and eager figures in two panels on one time axis (a backend keeps its colour
    # from one to the other), so that the speed-up of compiling reads at a glance; otherwise one panel.
    compiled_apart: bool = False
    # Where the group declares what `verdict` concludes from its records: "module:NAME", a
    # jax_benchmarks.verdict.findings.GroupFindings (None: it declares none, and the page says so in one line).
    findings: str | None = None
    # The operation of the group's training-epoch cases, whose images/s `report --scaling` compares across process
    # counts (store.record.of_operation); None: the group trains nothing.
    training_epochs: str | None = None


GROUPS: dict[str, GroupEntry] = {
    "xla": GroupEntry("jax_benchmarks.xla.cli", "Linear algebra (random matrices, matmul, inverse) per backend.", ("all",),
                      findings="jax_benchmarks.xla.findings:DECLARED"),
    "jit": GroupEntry("jax_benchmarks.jit.cli", "Compiled vs eager execution; training with and without jit.", ("all", "flax"),
                      compiled_apart=True, findings="jax_benchmarks.jit.findings:DECLARED"),
    "autograd": GroupEntry("jax_benchmarks.autograd.cli", "Gradients: JAX, PyTorch and the project's own engine.", ("all",),
                           findings="jax_benchmarks.autograd.findings:DECLARED"),
    "scipy": GroupEntry("jax_benchmarks.scipy.cli", "Sensor-calibration fit: SciPy, JAX and PyTorch optimizers.", ("all",),
                        findings="jax_benchmarks.scipy.findings:DECLARED"),
    "mnist": GroupEntry("jax_benchmarks.mnist.cli", "CNN training on MNIST in Flax and PyTorch.", ("all",),
                        findings="jax_benchmarks.mnist.findings:DECLARED", training_epochs="train_epoch"),
    "report": GroupEntry("jax_benchmarks.report.cli", "Tables, regressions and charts from the results file."),
}

# Root commands that are not groups, loaded the same lazy way.
TOOLS: dict[str, GroupEntry] = {
    "smoke": GroupEntry("jax_benchmarks.cli.smoke", "Every group with --quick, each in a fresh process: a fast end-to-end check."),
    "verdict": GroupEntry("jax_benchmarks.verdict.cli", "Every group at a named scale, then one page of findings "
                          "(or --from RESULTS: the page only)."),
    "calibrate": GroupEntry("jax_benchmarks.verdict.calibrate", "A/A rounds of chosen groups on this machine: the "
                            "regression gate's false-alarm rate and the smallest change it detects here."),
}
COMMANDS: dict[str, GroupEntry] = {**GROUPS, **TOOLS}
