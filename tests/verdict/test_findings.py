"""Findings on synthetic records with known answers: what is claimed, what is not, and what is missing."""

from __future__ import annotations

import pytest

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.against import machine_ratios
from jax_benchmarks.jit.findings import break_even, jit_findings
from jax_benchmarks.mnist.findings import training_findings
from jax_benchmarks.verdict.findings import all_findings, latest_runs, memory_findings, noise_findings
from jax_benchmarks.xla.findings import linear_algebra
from tests.verdict.fixtures import QUIET_DRIFT, RUN, epochs, figure, matmul, record


def test_a_two_fold_difference_is_found_with_its_interval() -> None:
    [finding] = linear_algebra(matmul(numpy_s=0.010, jax_s=0.005))
    assert finding.status == "found"
    assert "jax is fastest, 2.00× faster than numpy" in finding.sentence
    # The interval is printed and holds the true ratio (2): "99.9 % CI a–b×" with a < 2 < b.
    interval = finding.sentence.split("99.9 % CI ")[1].split("×")[0]
    low, high = (float(x) for x in interval.split("–"))
    assert low < 2.0 < high and high - low < 0.8
    assert finding.run_ids == (RUN,) and finding.cases == ("matmul_1000x1000_float64",)


def test_a_difference_within_noise_is_not_claimed() -> None:
    # 3 % apart, while 3 rounds drift by up to 5 %: neither faster nor provably within ±5 %.
    [finding] = linear_algebra(matmul(numpy_s=0.0100, jax_s=0.0103))
    assert finding.status == "undecided"
    assert "is not detectable here" in finding.sentence
    assert "faster" not in finding.sentence and "the same" not in finding.sentence


def test_a_small_difference_over_quiet_rounds_is_the_same_within_five_percent_the_difference_named() -> None:
    [finding] = linear_algebra(matmul(numpy_s=0.0100, jax_s=0.0103, rounds=8, drift=QUIET_DRIFT), margin_pct=5.0)
    assert finding.status == "same"
    assert "numpy and jax are the same within ±5 % (numpy faster by 2.5–3.5 %; ratio 1.03" in finding.sentence


def test_too_few_rounds_are_never_judged() -> None:
    [finding] = linear_algebra(matmul(numpy_s=0.010, jax_s=0.005, rounds=2))
    assert finding.status == "undecided"
    assert "undecided after 2 rounds: too few rounds to judge" in finding.sentence
    assert "faster than" not in finding.sentence


def test_the_third_framework_is_compared_too_and_the_library_named() -> None:
    [finding] = linear_algebra(matmul(numpy_s=0.010, jax_s=0.005, pytorch_s=0.040))
    assert "8.00× faster than pytorch" in finding.sentence
    # NumPy's BLAS and XLA's own kernels: the gap is not the framework alone.
    assert "different libraries" in finding.sentence and "openblas" in finding.sentence
    assert [row[0] for row in finding.rows] == ["jax", "numpy", "pytorch"]


def test_break_even_is_the_first_call_count_that_repays_the_compilation() -> None:
    # 1 s of compilation, 2 ms saved a call: 500 calls.
    assert break_even(1.0, 0.003, 0.001) == 500
    assert break_even(1.0, 0.0030, 0.0010001) == 501
    assert break_even(1.0, 0.001, 0.002) is None  # compiled is slower: never
    assert break_even(None, 0.003, 0.001) is None
    # Eager's own first call counts too (JAX's eager mode compiles each operation the first time): 0.4 s of it leaves
    # 0.6 s to repay; where it costs as much as the compile or more, compiled is ahead from the first call.
    assert break_even(1.0, 0.003, 0.001, eager_first_s=0.4) == 300
    assert break_even(1.0, 0.003, 0.001, eager_first_s=1.5) == 1


def test_jit_finding_gives_gain_compile_cost_and_break_even_per_size() -> None:
    records = (figure("jit", "jax", "f_10000_float32", 0.003, variant="eager")
               + figure("jit", "jax", "f_10000_float32", 0.001, variant="jit", compile_s=1.0)
               + figure("jit", "jax", "f_100000_float32", 0.010, variant="eager", rounds=8, drift=QUIET_DRIFT)
               + figure("jit", "jax", "f_100000_float32", 0.0101, variant="jit", compile_s=1.0, rounds=8,
                        drift=QUIET_DRIFT))
    [finding] = jit_findings(records)
    assert finding.status == "found"
    small, large = finding.rows
    assert small[0] == "f_10000_float32" and small[5] == "faster" and small[-1] == "500"
    assert small[-3] == "—"  # eager's first call not recorded here
    assert large[5] == "same" and large[-1] == "never"
    assert "3.00× faster than eager" in finding.sentence and "paid back after 500 calls" in finding.sentence
    assert "never pays off" in finding.sentence
    assert finding.headers[4] == "99.9 % CI"


def test_the_break_even_counts_eager_s_own_first_call() -> None:
    """As recorded on a 2-core CPU (2026-11-28): JAX eager's first call of f took 0.26 s above its steady calls (each
    operation compiled on first use), jax.jit's compile 0.05 s: jit is ahead from the first call, not after 10."""
    eager = [r.model_copy(update={"metrics": {"first_call_s": 0.0224 + 0.26}})
             for r in figure("jit", "jax", "f_10000_float32", 0.0224, variant="eager")]
    records = eager + figure("jit", "jax", "f_10000_float32", 0.0127, variant="jit", compile_s=0.05)
    [finding] = jit_findings(records)
    [row] = finding.rows
    assert row[-3:] == ("260 ms", "50 ms", "1")
    assert ("compiling costs 50 ms against eager's first call 260 ms above its steady calls: ahead from the first "
            "call") in finding.sentence
    # Without eager's first call recorded, the compile alone: paid back after ceil(0.05 / 0.0097) = 6 calls.
    plain = figure("jit", "jax", "f_10000_float32", 0.0224, variant="eager") + records[len(eager):]
    [alone] = jit_findings(plain)
    assert "compiling costs 50 ms, paid back after 6 calls" in alone.sentence


def test_missing_groups_are_said_to_be_missing() -> None:
    findings = all_findings(latest_runs(matmul(numpy_s=0.010, jax_s=0.005)))
    missing = {f.key: f.sentence for f in findings if f.status == "missing"}
    for group in ("jit", "autograd", "scipy", "mnist"):
        assert f"missing-{group}" in missing and f"No {group} records" in missing[f"missing-{group}"]
    assert "missing-xla" not in missing
    assert missing["memory"] == "Memory not measured in these records."


def test_memory_is_reported_when_the_records_carry_it() -> None:
    records = figure("xla", "jax", "matmul_1000x1000_float64", 0.005, memory={"host_peak_bytes": 3 * 2**20})
    records += figure("xla", "numpy", "matmul_1000x1000_float64", 0.005, memory={"host_peak_bytes": 2**20})
    [finding] = memory_findings({"xla": records})
    assert finding.status == "measured"
    assert "numpy 1.0 MiB, jax 3.0 MiB" in finding.sentence


def test_on_a_gpu_the_device_peak_is_said_and_numpy_on_the_host_is_the_one_left_out() -> None:
    # As `xla all --device auto` records on a GPU machine: NumPy on the host, JAX and PyTorch on the GPU, where
    # the host's peak of a GPU case is a few KiB of Python objects and the device's is what the case takes.
    case, mib = "matmul_1000x1000_float64", 2**20

    def on_gpu(records: list[Record]) -> list[Record]:
        return [r.model_copy(update={"device": "gpu"}) for r in records]

    records = figure("xla", "numpy", case, 0.005, memory={"host_peak_bytes": 24 * mib})
    records += on_gpu(figure("xla", "jax", case, 0.001, memory={"host_peak_bytes": 4096,
                                                                "device_peak_bytes": 30 * mib}))
    records += on_gpu(figure("xla", "pytorch", case, 0.001, memory={"host_peak_bytes": 0,
                                                                    "device_peak_bytes": 24 * mib}))
    [finding] = memory_findings({"xla": records})
    assert finding.sentence.startswith(f"Device memory peak of {case}: pytorch @gpu 24.0 MiB, jax @gpu 30.0 MiB")
    assert "numpy not compared: they differ in device (gpu vs cpu)" in finding.sentence
    # A GPU framework without a device peak is named, not dropped.
    records = [r.model_copy(update={"memory": {"host_peak_bytes": 4096}}) if r.backend == "jax" else r
               for r in records]
    [finding] = memory_findings({"xla": records})
    assert "pytorch @gpu 24.0 MiB" in finding.sentence and "jax @gpu: no device peak recorded" in finding.sentence


def test_training_compares_frameworks_with_the_same_model() -> None:
    records = epochs("flax", 10.0, [0.95, 0.985]) + epochs("pytorch", 20.0, [0.97, 0.975])
    [finding] = training_findings(records)
    assert finding.status == "found"
    assert "flax trains 2.00× faster per step than pytorch" in finding.sentence


def test_agreement_and_noise_sentences_carry_their_figures() -> None:
    parity = record("autograd", "parity", "parity_grad_100_float32", dtype="float32",
                    checks={"max_abs_diff_df": 2.4e-7, "tolerance": 1e-5, "passed": True})
    grads = figure("autograd", "jax", "grad_100_float32", 1e-5, variant="vmap+jit")
    findings = {f.key: f for f in all_findings({"autograd": [*grads, parity]})}
    assert findings["agreement-gradients"].sentence.startswith("Gradients agree across 1 implementations")
    assert "2.4e-07" in findings["agreement-gradients"].sentence
    [noise] = noise_findings({"xla": matmul(numpy_s=0.010, jax_s=0.005)})
    assert "between rounds a figure's median moves by" in noise.sentence


def test_agreement_findings_read_the_records_todays_harness_writes() -> None:
    # The checks exactly as `autograd all` and `scipy all` write them (backend `all`, `passed`, `tolerance`).
    grads = record("autograd", "all", "agreement_grad_100_float32", dtype="float32",
                   params={"compared": ["jax vmap @cpu", "jax vmap+jit @cpu", "numpy vectorised @cpu"]},
                   checks={"max_abs_diff_f": 2.4e-7, "max_abs_diff_df": 3.1e-7, "tolerance": 1e-5, "passed": True})
    fit = record("scipy", "all", "agreement_1000_float64",
                 checks={"max_rel_diff_slope": 2.6e-7, "slope_pair": "jax @cpu vs pytorch @cpu",
                         "max_rel_diff_offset": 7.4e-7, "offset_pair": "numpy @cpu vs pytorch @cpu",
                         "max_rel_diff": 7.4e-7, "tolerance": 1e-3, "passed": False})
    findings = {f.key: f for f in all_findings({"autograd": [grads], "scipy": [fit]})}
    assert findings["agreement-gradients"].sentence == (
        "Gradients agree across 3 implementations: max |Δf′| = 3.1e-07 (tolerance 1e-05, float32).")
    assert findings["agreement-optimizers"].sentence == (
        "The optimizers (SciPy BFGS, JAX BFGS, PyTorch L-BFGS) DISAGREE: largest relative difference of the "
        "fitted parameters 7.4e-07 (numpy @cpu vs pytorch @cpu; limit 0.001).")
    assert findings["agreement-optimizers"].status == "found"


def test_latest_runs_takes_each_figure_from_the_latest_run_that_has_it() -> None:
    old = figure("jit", "jax", "f_10000_float32", 0.003, variant="eager", run_id="20261101T000000Z-old")
    new_flax = figure("jit", "flax", "mlp_epoch", 0.5, variant="jit", run_id="20261102T000000Z-new")
    for r in new_flax:
        r.timestamp = "2026-11-25" + r.timestamp[10:]
    chosen = latest_runs([*old, *new_flax])
    assert {r.run_id for r in chosen["jit"]} == {"20261101T000000Z-old", "20261102T000000Z-new"}
    assert latest_runs([*old, *new_flax], "20261102T000000Z-new")["jit"] == new_flax


def test_against_gives_the_ratio_per_framework_between_machines() -> None:
    quiet = {"rounds": 8, "drift": QUIET_DRIFT}  # the same within ±5 % needs rounds that resolve it
    here = {"xla": matmul(numpy_s=0.010, jax_s=0.006, **quiet)}
    there_records: list[Record] = matmul(numpy_s=0.0025, jax_s=0.006, run_id="20261124T130000Z-bbbbbb", **quiet)
    ratios = {r.framework: r for r in machine_ratios(here, {"xla": there_records})}
    assert ratios["numpy"].geomean == pytest.approx(4.0, rel=0.05)
    assert ratios["numpy"].count("faster") == 1
    assert ratios["jax"].geomean == pytest.approx(1.0, rel=0.05)
    assert ratios["jax"].count("same") == 1
    assert "numpy ×4.0" in ratios["numpy"].text


def test_an_interval_excluding_one_but_not_the_margin_is_undecided() -> None:
    from jax_benchmarks.report.compare import Comparison, LogRatio
    from jax_benchmarks.verdict.decide import decide
    from jax_benchmarks.verdict.findings import Contrast

    records = matmul(numpy_s=0.010, jax_s=0.008)
    comparison = Comparison(baseline_run_id=RUN, baseline_median_s=0.010, baseline_iqr_s=0.0, change_pct=-20.0,
                            verdict="unchanged", method="welch-rounds", p_value=0.06, rounds=3, baseline_rounds=3,
                            log_ratio=LogRatio(-0.12, 0.03, 4.0))
    contrast = Contrast("jax", "numpy", tuple(records[3:]), tuple(records[:3]), comparison, decide([comparison])[0])
    low, high = contrast.interval or (0.0, 0.0)
    assert low < 1 < 1.1 < high  # the 99.9 % interval holds 1 and reaches beyond the margin
    phrase = contrast.phrase()  # neither beyond ±10 % nor inside it, nor off 1: undecided, the detectable change named
    assert "undecided after 3 rounds: a difference below 33.2 % is not detectable here" in phrase
    assert "margin ±10 %," in phrase
    assert "the same" not in phrase and "faster" not in phrase


def test_against_finding_names_each_shared_figure_and_both_machines() -> None:
    from jax_benchmarks.verdict.against import against_finding

    here = {"xla": matmul(numpy_s=0.010, jax_s=0.006, rounds=8, drift=QUIET_DRIFT)}
    there = {"xla": matmul(numpy_s=0.0025, jax_s=0.006, run_id="20261124T130000Z-bbbbbb", rounds=8,
                           drift=QUIET_DRIFT, env={"cpu": "Big CPU", "cpu_cores": 64, "gpu": "NVIDIA H100"})}
    finding = against_finding(here, there)
    assert "(Big CPU (64 cores), NVIDIA H100 against Test CPU (2 cores), no GPU)" in finding.sentence
    assert [(row[0], row[1], row[4]) for row in finding.rows] == [
        ("numpy", "matmul_1000x1000_float64", "faster"), ("jax", "matmul_1000x1000_float64", "same")]
    assert finding.run_ids == (RUN, "20261124T130000Z-bbbbbb")
    nothing_shared = against_finding(here, {"jit": figure("jit", "jax", "f_10000_float32", 0.001, variant="jit")})
    assert nothing_shared.status == "missing" and "no figure was measured on both machines" in nothing_shared.sentence


def test_each_group_declares_its_findings_and_one_without_any_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """verdict loops over the groups: each declares what it concludes on its entry in jax_benchmarks.groups
    (`findings`: where its `GroupFindings` is); a group whose entry declares none gets one line saying its records
    are not judged, never silence."""
    from jax_benchmarks.groups import BENCHMARK_GROUPS, GROUPS, GroupEntry
    from jax_benchmarks.verdict import findings

    for group in BENCHMARK_GROUPS:
        declared = findings.group_findings(group)
        assert isinstance(declared, findings.GroupFindings) and declared.topic and callable(declared.findings)
        assert GROUPS[group].findings == f"jax_benchmarks.{group}.findings:DECLARED"
    monkeypatch.setattr(findings, "BENCHMARK_GROUPS", ("fft",))
    monkeypatch.setitem(GROUPS, "fft", GroupEntry("jax_benchmarks.fft.cli", "Fast Fourier transforms."))
    fft = record("fft", "numpy", "fft_1024_complex64")
    [said, *_] = all_findings({"fft": [fft]})
    assert said.key == "no-findings-fft" and said.status == "missing"
    assert said.sentence == "The fft group declares no findings: its records are not judged."


@pytest.mark.parametrize(("where", "said"), [
    ("jax_benchmarks.xla.finding:DECLARED", "there is no module jax_benchmarks.xla.finding"),
    ("jax_benchmarks.xla.findings:DECLARE", "jax_benchmarks.xla.findings has no GroupFindings called 'DECLARE'"),
    ("jax_benchmarks.xla.findings:TOPIC", "has no GroupFindings called 'TOPIC'"),
])
def test_a_misnamed_declaration_is_an_error_never_no_findings(where: str, said: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from jax_benchmarks.groups import GROUPS
    from jax_benchmarks.verdict import findings

    monkeypatch.setitem(GROUPS, "xla", GROUPS["xla"]._replace(findings=where))
    with pytest.raises(findings.UndeclaredFindings, match=said):
        all_findings({"xla": matmul(0.010, 0.005)})


def test_the_engines_cnn_step_is_judged_against_pytorch_eager_with_its_images_per_second() -> None:
    case = "cnn_train_step_128x28x28_float32"
    engine = figure("autograd", "numpy", case, 2.0, variant="train step", metrics={"images_per_s": 64.0})
    torch = figure("autograd", "pytorch", case, 1.0, variant="train step", metrics={"images_per_s": 128.0})
    findings = {f.key: f for f in all_findings({"autograd": [*engine, *torch]})}
    finding = findings[f"autograd-{case}"]
    assert finding.status == "found"
    assert "in plain NumPy (the project's autodiff engine) trains at 64 images/s against PyTorch eager's 128" \
        in finding.sentence
    assert "PyTorch eager is 2.00× faster than the project's engine" in finding.sentence
    assert [row[2] for row in finding.rows] == ["64", "128"]


def test_the_engines_cnn_step_has_flaxs_jitted_step_beside_it() -> None:
    case = "cnn_train_step_128x28x28_float32"
    engine = figure("autograd", "numpy", case, 2.0, variant="train step", metrics={"images_per_s": 64.0})
    torch = figure("autograd", "pytorch", case, 1.0, variant="train step", metrics={"images_per_s": 128.0})
    flax = figure("autograd", "jax", case, 0.5, variant="train step", metrics={"images_per_s": 256.0})
    finding = {f.key: f for f in all_findings({"autograd": [*engine, *torch, *flax]})}[f"autograd-{case}"]
    assert ("trains at 64 images/s against PyTorch eager's 128 and Flax (jit)'s 256: "
            "PyTorch eager is 2.00× faster than the project's engine") in finding.sentence
    assert "Flax (jit) is 4.00× faster than the project's engine" in finding.sentence
    assert [row[2] for row in finding.rows] == ["64", "128", "256"]
    assert {r.backend for r in finding.records} == {"numpy", "pytorch", "jax"}


def test_the_engines_cnn_step_against_flax_alone_is_compared() -> None:
    case = "cnn_train_step_128x28x28_float32"
    engine = figure("autograd", "numpy", case, 2.0, variant="train step", metrics={"images_per_s": 64.0})
    flax = figure("autograd", "jax", case, 0.5, variant="train step", metrics={"images_per_s": 256.0})
    finding = {f.key: f for f in all_findings({"autograd": [*engine, *flax]})}[f"autograd-{case}"]
    assert finding.status == "found"
    assert "against Flax (jit)'s 256: Flax (jit) is 4.00× faster than the project's engine" in finding.sentence


def test_the_engines_cnn_step_alone_is_measured_not_compared() -> None:
    case = "cnn_train_step_16x28x28_float32"
    engine = figure("autograd", "numpy", case, 2.0, variant="train step", metrics={"images_per_s": 8.0})
    [finding] = [f for f in all_findings({"autograd": engine}) if f.key == f"autograd-{case}"]
    assert finding.status == "measured"
    assert "not compared" in finding.sentence


def long_lower_tail(records: list[Record]) -> list[Record]:
    """The same rounds with each round's fastest sample 12 % below its median: the judged ratio (fastest samples)
    then differs from the medians' ratio."""
    out = []
    for r in records:
        assert r.median_s is not None and r.samples_s is not None
        samples = [r.median_s * 0.88, *r.samples_s[1:]]
        out.append(r.model_copy(update={"samples_s": samples, "min_s": min(samples)}))
    return out


@pytest.mark.parametrize("group", ["xla", "autograd"])
def test_the_table_gives_the_ratio_the_sentence_judges(group: str) -> None:
    """Issue 38: a finding's table shows the ratio its sentence states (the rounds' fastest samples), not another
    one from the medians; the slowest's multiple in the sentence is the table's too."""
    if group == "xla":
        made = matmul(numpy_s=0.030, jax_s=0.010, pytorch_s=0.020)
        finding = linear_algebra([*long_lower_tail([r for r in made if r.backend == "pytorch"]),
                                  *[r for r in made if r.backend != "pytorch"]])[0]
    else:
        case = "grad_1000_float32"
        finding = {f.key: f for f in all_findings({"autograd": [
            *figure("autograd", "jax", case, 0.001, variant="vmap+jit"),
            *long_lower_tail(figure("autograd", "numpy", case, 0.002, variant="vectorised")),
            *figure("autograd", "numpy", case, 0.030, variant="loop")]})}[f"autograd-{case}"]
    ratios = [float(row[2]) for row in finding.rows]
    assert finding.headers[2] == "× the fastest's time" and ratios[0] == 1.00
    # the runner-up's ratio: 2 / 0.98 with the medians; (0.88 · 2) / 0.98 from the fastest samples, as judged
    assert ratios[1] == pytest.approx(0.88 * 2 / 0.98, abs=0.006)
    assert f"{ratios[1]:.2f}× faster than" in finding.sentence
    if group == "autograd":  # the slowest's multiple is the table's
        assert f"takes {ratios[2]:.0f}× the fastest's time" in finding.sentence
