"""The gpu scale (issue 49, part 1, item 3): each of standard's steps has one round's time on a GPU, declared by its
group (`gpu_round_s`); the gpu scale runs those that fit its share of the 8-minute GPU plan, and each step it leaves
out says why where its group declares it (`gpu_left_out`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jax_benchmarks.verdict import scale
from jax_benchmarks.verdict.findings import GroupFindings, group_findings
from jax_benchmarks.verdict.scale import SCALES, gpu_round_times, gpu_steps
from tests.conftest import invoke


def declared(group: str) -> GroupFindings:
    found = group_findings(group)
    assert found is not None
    return found


def test_every_standard_step_has_a_gpu_round_time_and_each_left_out_says_why() -> None:
    times = gpu_round_times()
    assert [step.label for step, _ in times] == [step.label for step in SCALES["standard"].steps]
    for step, _ in times:
        assert step.round_s == declared(step.group).gpu_round_s[step.command] > 0, step.label
    for group in {step.group for step in SCALES["standard"].steps}:
        commands = {step.command for step in SCALES["standard"].steps if step.group == group}
        assert set(declared(group).gpu_left_out) <= commands, group  # a reason names a step standard runs
    assert [step.label for step in SCALES["gpu"].steps] == [step.label for step, why in times if not why]
    assert all(why.strip() for _, why in times if why)


def test_the_gpu_scale_asks_the_headline_questions_and_leaves_out_the_costly_ones() -> None:
    """matmul and inverse (xla), jit (f at three sizes), the BFGS fit (scipy); jit flax (its eager step's first call)
    and autograd (compared against the CPU's engine) out; mnist's CNN training out: its headline pair with
    torch.compile costs more than the verdict's whole share."""
    runs = {(step.group, step.command) for step in SCALES["gpu"].steps}
    assert runs == {("xla", "all"), ("jit", "all"), ("scipy", "all")}
    left_out = {(step.group, step.command): why for step, why in gpu_round_times() if why}
    assert set(left_out) == {("jit", "flax"), ("autograd", "all"), ("mnist", "all"), ("mnist", "pytorch")}
    assert "differ in device" in left_out[("autograd", "all")]
    assert "torch.compile" in left_out[("mnist", "all")]
    gpu = SCALES["gpu"]
    assert gpu.default_budget_s == gpu.budget_s == gpu.rounds * sum(step.round_s for step in gpu.steps)


def test_a_standard_step_without_a_gpu_round_time_stays_out_of_the_gpu_scale_saying_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def without_scipys(group: str) -> GroupFindings | None:
        found = group_findings(group)
        return replace(found, gpu_round_s={}) if found is not None and group == "scipy" else found

    monkeypatch.setattr(scale, "group_findings", without_scipys)
    why = dict((step.label, why) for step, why in gpu_round_times())
    assert why["scipy all"] == "no round time on a GPU declared (`gpu_round_s`)"
    assert "scipy all" not in [step.label for step in gpu_steps()]


def test_verdict_help_states_the_gpu_scales_budget_from_its_round_times() -> None:
    text = " ".join(invoke("verdict", "--help").output.split())
    gpu = SCALES["gpu"]
    assert f"gpu {gpu.default_budget_s:.0f}," in text  # --budget's default per scale
    assert "(gpu: on one H200, as measured on 2026-11-28; the others: on a quiet 2-core CPU)" in text
    assert "gpu (standard's xla all, jit all, scipy all, for one GPU)" in text
