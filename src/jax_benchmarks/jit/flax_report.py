"""What `jit flax` records and prints about its two modes: case name, params, metrics, checks, lines."""

from __future__ import annotations

from typing import Literal

from jax_benchmarks.measure.harness import Judgement
from jax_benchmarks.measure.relative import relative_error
from jax_benchmarks.store.record import Scalar
from jax_benchmarks.cli.tables import format_seconds
from jax_benchmarks.jit.batching import Batching
from jax_benchmarks.jit.data import DataShape
from jax_benchmarks.jit.epochs import ModeTraining, epoch_seconds
from jax_benchmarks.jit.jit_cache import describe_cache, explain_cache
from jax_benchmarks.jit.settings import JitTrainingSettings

DTYPE = "float32"
Mode = Literal["eager", "jit"]
EAGER_HOW = "the unjitted train step called directly (op-by-op dispatch)"
HEADINGS: dict[Mode, str] = {"eager": f"not jitted — {EAGER_HOW}:", "jit": "jitted — jax.jit of the same step:"}
# Both modes run the same float32 steps from the same start; XLA's fusion only
# reorders rounding. Training amplifies that drift over epochs (0.5 % after two
# CNN epochs here), so the check compares the first epoch's mean loss.
LOSS_RTOL = 1e-2


def case_name(model: str, shape: DataShape, batching: Batching) -> str:
    """`{model}_epoch_{examples}x{example shape}_float32`, e.g. mlp_epoch_8000x2_float32."""
    dims = "x".join(str(d) for d in (batching.used, *shape.example_shape))
    return f"{model}_epoch_{dims}_{DTYPE}"


def case_params(settings: JitTrainingSettings, shape: DataShape, batching: Batching,
                mode: Mode) -> dict[str, Scalar]:
    return {
        "model": settings.model, "data": shape.description, "epochs": settings.epochs,
        "batch_size": settings.batch_size, "learning_rate": settings.learning_rate,
        "drop_last": settings.drop_last, "train_examples": batching.used, "steps_per_epoch": batching.steps,
        "last_batch": batching.last_batch, "timed": "one epoch = every train step, synced at the end",
        **({"not_jitted": EAGER_HOW} if mode == "eager" else {}),
    }


def epoch_lines(mode: ModeTraining) -> list[str]:
    assert mode.measurement is not None
    lines = []
    for epoch, (seconds, loss) in enumerate(zip(epoch_seconds(mode.measurement), mode.losses)):
        note = ""
        if epoch == 0:
            note = " (includes compilation)" if mode.cache is not None else \
                " (includes compiling each operation on first use)"
        lines.append(f"  epoch {epoch + 1}: {format_seconds(seconds)} · mean loss {loss:.4f}{note}")
    return lines


def check_results(jitted: ModeTraining, eager: ModeTraining | None, batching: Batching) -> list[str]:
    """What went wrong, if anything: the modes' first epochs disagree, or jit compiled unexpectedly."""
    problems = []
    if eager is not None:
        diff = relative_error(jitted.losses[0], eager.losses[0])
        if not diff <= LOSS_RTOL:
            problems.append(
                f"epoch 1 mean loss jit {jitted.losses[0]:.6g} vs eager {eager.losses[0]:.6g}: "
                f"relative difference {diff:.3g} > {LOSS_RTOL:g}"
            )
    if jitted.cache is not None and jitted.cache.compilations != batching.expected_compilations:
        problems.append(
            f"jax.jit compiled the step {jitted.cache.compilations} time(s), expected "
            f"{batching.expected_compilations} for {batching.describe()}"
        )
    return problems


def judgement(mode: ModeTraining, eager: ModeTraining | None, batching: Batching) -> Judgement:
    """The mode's record (the jitted one compared with the eager one when it ran) and its printed lines."""
    assert mode.measurement is not None and mode.test_accuracy is not None
    metrics: dict[str, Scalar] = {
        "items_per_s": batching.used / mode.measurement.median_s,
        "final_loss": mode.losses[-1],
        "test_accuracy": mode.test_accuracy,
    }
    checks: dict[str, Scalar] = {}
    notes = [HEADINGS["jit" if mode.cache is not None else "eager"], *epoch_lines(mode)]
    failures: list[str] = []
    if mode.cache is not None:
        if eager is not None:
            checks["epoch_1_loss"] = mode.losses[0]
            checks["epoch_1_loss_eager"] = eager.losses[0]
            checks["epoch_1_loss_rel_diff_vs_eager"] = relative_error(mode.losses[0], eager.losses[0])
            checks["final_loss_eager"] = eager.losses[-1]
        metrics.update(
            cache_before=mode.cache.before,
            cache_after_step_1=mode.cache.after_step[0] if mode.cache.after_step else None,
            cache_after_epoch_1=mode.cache.after_epoch[0],
            compilations=mode.cache.compilations,
        )
        checks["expected_compilations"] = batching.expected_compilations
        notes += [describe_cache(mode.cache, batching), explain_cache(mode.cache, batching)]
        failures = check_results(mode, eager, batching)
    return Judgement(checks=checks, metrics=metrics, failures=failures, notes=notes)


def summary(eager: ModeTraining, jitted: ModeTraining) -> str:
    """One line: an epoch not jitted vs jitted, the compilation paid once, both test accuracies."""
    e, j = eager.measurement, jitted.measurement
    assert e is not None and j is not None
    compile_text = f", compilation {format_seconds(j.compile_s)} paid once" if j.compile_s is not None else ""
    return (
        f"one epoch: not jitted {format_seconds(e.median_s)}, jitted {format_seconds(j.median_s)} → "
        f"×{e.median_s / j.median_s:.1f} with jit{compile_text}; test accuracy "
        f"{eager.test_accuracy:.1%} / {jitted.test_accuracy:.1%}"
    )
