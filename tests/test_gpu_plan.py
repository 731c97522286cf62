"""benchmarks/gpu_plan.py: one GPU call of at most 8 minutes, most valuable first, resumable, and what travels fits.

The steps themselves need a GPU; these check the plan's order and sizing, its bookkeeping (each step's line in
steps.tsv as it finishes, skips said with their reason, resuming) and the carry check, with stand-in steps."""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path
import time
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
H200_RUN = ROOT / "benchmarks" / "gpu_runs" / "2026-11-28-h200"  # the plan's first GPU run: its files, as returned


def load_plan() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_plan", ROOT / "benchmarks" / "gpu_plan.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


plan = load_plan()


def test_one_call_holds_issue_49s_order_within_8_minutes() -> None:
    parts = [step.part for step in plan.STEPS]
    assert parts == sorted(parts) and set(parts) == set("abcde")
    inside = [step.name for step in plan.within_one_call()]
    assert inside == ["versions", "installation", "verdict", "verdict-on-gpu", "crosscheck-float32",
                      "crosscheck-tf32", "mnist-flax", "mnist-pytorch"]
    assert plan.cumulative(plan.STEPS)[len(inside) - 1] <= plan.GPU_BUDGET_S < plan.cumulative(plan.STEPS)[len(inside)]
    assert all(step.estimate_s > 0 and step.basis for step in plan.STEPS)
    lines = plan.plan_lines(plan.STEPS)
    line = next(i for i, text in enumerate(lines) if text.startswith("---- 8 minutes"))
    assert "mnist-pytorch " in lines[line - 1] and "mnist-pytorch-compile" in lines[line + 1]


def test_the_verdict_runs_the_gpu_scale_within_its_estimate() -> None:
    from jax_benchmarks.verdict.scale import SCALES

    verdict = next(step for step in plan.STEPS if step.name == "verdict")
    assert "gpu" in verdict.args and verdict.estimate_s >= SCALES["gpu"].budget_s
    # standard's commands and cases, so the GPU column stands beside the CPU headline's: every group, and each of
    # its steps one of standard's (a standard step without an H100 estimate stays out until it has one)
    standard = [s.label for s in SCALES["standard"].steps]
    assert all(s.label in standard for s in SCALES["gpu"].steps)


def test_each_step_that_ran_on_the_h200_is_estimated_at_its_time_there() -> None:
    """Sized from figures: a step that ran to its end on the H200 (ok, or failed on its own check) is estimated at
    the time it took (rounded up by at most a second); the verdict, stopped at the budget's end, is sized by its
    rounds (below)."""
    rows = [line.split("\t") for line in (H200_RUN / "steps.tsv").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    ran = {row[0]: float(row[2]) for row in rows if row[1] == "ok" or row[1].startswith("failed (exit")}
    assert set(ran) == {"versions", "installation", "crosscheck-float32", "crosscheck-tf32", "mnist-flax",
                        "mnist-pytorch", "mnist-flax-bf16", "auto-xla"}
    estimates = {step.name: step.estimate_s for step in plan.STEPS}
    for name, seconds in ran.items():
        assert seconds <= estimates[name] <= seconds + 1, name
        assert "H200" in next(step.basis for step in plan.STEPS if step.name == name), name
    wheels = [line for line in (H200_RUN / "session.log").read_text().splitlines() if "wheels installed in" in line]
    assert wheels and all(float(line.rsplit(" ", 1)[1].rstrip("s")) <= plan.WHEELS_S for line in wheels)


def test_the_gpu_scales_round_times_are_the_h200s_and_its_3_rounds_fit_the_8_minute_plan() -> None:
    """Each group's gpu_round_s is the mean of its rounds on the H200 (the verdict's records, first record to the
    next round's first), and at those times the gpu scale's 3 rounds, the steps before them and the cross-check and
    mnist runs after them, (a) to (d), fit the 480 s; each step the gpu scale leaves out would not."""
    from jax_benchmarks.verdict.scale import SCALES, gpu_round_times

    times = plan.round_times((H200_RUN / "verdict.jsonl").read_text())
    measured = {t.step.label: statistics.fmean(t.rounds_s) for t in times if len(t.rounds_s) == 3}
    assert [label.split()[:2] for label in measured] == [["xla", "all"], ["jit", "all"], ["jit", "flax"],
                                                          ["autograd", "all"]]
    for t in times:
        if t.step.label in measured:
            assert abs(t.step.round_s - measured[t.step.label]) <= 0.5, t.step.label
    gpu = SCALES["gpu"]
    at_h200 = gpu.rounds * sum(measured.get(step.label, step.round_s) for step in gpu.steps)
    verdict = next(step for step in plan.STEPS if step.name == "verdict")
    assert verdict.estimate_s >= at_h200 + 5  # the verdict's own start (3 s before its first record there) and page
    names = [step.name for step in plan.STEPS]
    through_d = plan.cumulative(plan.STEPS)[names.index("mnist-pytorch")]
    assert through_d <= plan.GPU_BUDGET_S
    left_out = [(step, why) for step, why in gpu_round_times() if why]
    assert left_out and all(through_d + gpu.rounds * step.round_s > plan.GPU_BUDGET_S for step, _ in left_out)


def test_round_times_follow_the_scales_order_and_stop_at_an_added_round(tmp_path: Path) -> None:
    def record(run: str, group: str, index: int, second: int) -> str:
        return json.dumps({"run_id": run, "group": group, "round_index": index,
                           "timestamp": f"2026-11-28T01:{second // 60:02d}:{second % 60:02d}+00:00"})

    rounds = [("xla", 0, 0), ("xla", 0, 2), ("xla", 1, 10), ("xla", 2, 20), ("jit", 0, 30), ("jit", 1, 45),
              ("jit", 2, 60), ("jit", 0, 75), ("jit", 1, 100), ("xla", 3, 130), ("jit", 3, 140)]
    text = "\n".join([record("older", "xla", 0, 0), *(record("latest", g, i, t) for g, i, t in rounds)]) + "\n"
    times = {t.step.group + " " + t.step.command: t for t in plan.round_times(text)}
    assert times["xla all"].rounds_s == (10, 10, 10) and times["xla all"].started == 3
    assert times["jit all"].rounds_s == (15, 15, 15)
    # jit flax: round 0 to round 1, round 1 to the added round's first record; the added rounds are not matched
    assert times["jit flax"].rounds_s == (25, 30) and times["jit flax"].started == 2
    assert times["scipy all"].started == 0 and times["scipy all"].rounds_s == ()
    lines = plan.round_lines(list(times.values()))
    assert any(line.startswith("jit flax") and "25, 30" in line and "27.5" in line for line in lines)


def test_resume_skips_the_steps_marked_ok_and_starts_where_asked() -> None:
    tsv = "# step\tstatus\tseconds\testimate_s\nversions\tok\t3.0\t8\ninstallation\tfailed (exit 1, expected 0)\t9\t25\n"
    done = plan.done_steps(tsv)
    assert done == {"versions"}
    assert [s.name for s in plan.to_run(plan.STEPS, None, done)][:2] == ["installation", "verdict"]
    assert [s.name for s in plan.to_run(plan.STEPS, "suite", ())] == ["suite"]
    with pytest.raises(ValueError, match="--from: no step 'nope'"):
        plan.to_run(plan.STEPS, "nope", ())


def test_round_times_of_a_file_that_is_no_verdict_store_is_one_error_line(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"note": 1}\n')
    assert plan.main(["--round-times", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: --round-times: {bad} is not a readable verdict store") and err.count("\n") == 1


def test_the_list_with_done_shows_what_a_resumed_call_runs_and_where_its_8_minutes_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = tmp_path / "done.tsv"
    done.write_text("# step\tstatus\tseconds\testimate_s\nversions\tok\t11.0\t11\ninstallation\tok\t31.2\t31\n")
    assert plan.main(["--list", "--done", str(done)]) == 0
    rows = [line.split()[1] for line in capsys.readouterr().out.splitlines()[1:] if line.startswith("(")]
    assert rows[:3] == ["wheels", "verdict", "verdict-on-gpu"] and "versions" not in rows
    verdict = next(step for step in plan.STEPS if step.name == "verdict")
    assert plan.plan_lines(plan.to_run(plan.STEPS, None, {"versions", "installation"}))[2].split()[4] == (
        f"{plan.WHEELS_S + verdict.estimate_s:.0f}")


def stand_in(name: str, part: str, code: str, estimate: float = 1, **fields: object) -> object:
    return plan.Step(name, part, ("{py}", "-c", code), estimate, "a stand-in", **fields)


def test_each_step_is_written_as_it_finishes_and_every_skip_says_why(tmp_path: Path) -> None:
    steps = (
        stand_in("first", "a", "print('first ran')"),
        stand_in("gpu-only", "b", "print('never')", gpu_only="it needs the GPU"),
        stand_in("too-long", "c", "print('never')", estimate=1000),
        stand_in("refused", "d", "raise SystemExit(2)", expect_rc=2),
        stand_in("broken", "e", "raise SystemExit(3)"),
    )
    code = plan.main(["--device", "cpu", "--budget", "60", "--out", str(tmp_path)], steps)
    assert code == 1  # one step failed
    rows = [line.split("\t") for line in (tmp_path / "steps.tsv").read_text().splitlines()[1:]]
    assert [(row[0], row[1]) for row in rows] == [
        ("first", "ok"), ("gpu-only", "skipped: needs a GPU (it needs the GPU)"),
        ("too-long", rows[2][1]), ("refused", "ok"), ("broken", "failed (exit 3, expected 0)")]
    assert rows[2][1].startswith("skipped: needs about 1000 s on the GPU")
    log = (tmp_path / "session.log").read_text()
    assert "first ran" in log and "=== (b) gpu-only: skipped: needs a GPU" in log and "never" not in log.replace(
        "print('never')", "")
    # the next call resumes from the returned steps.tsv: only what did not finish ok runs
    code = plan.main(["--device", "cpu", "--out", str(tmp_path / "again"), "--done", str(tmp_path / "steps.tsv")],
                     steps)
    again = [line.split("\t")[0] for line in (tmp_path / "again" / "steps.tsv").read_text().splitlines()[1:]]
    assert again == ["gpu-only", "too-long", "broken"]


def test_a_step_whose_option_is_missing_is_skipped_with_a_clear_line() -> None:
    step = next(s for s in plan.STEPS if s.name == "mnist-pytorch-compile")
    assert plan.missing_option(step, "  --compile / --no-compile  torch.compile the step") is None
    assert plan.missing_option(step, "  --precision [float32|tf32]") == (
        "`mnist pytorch` has no --compile option in this checkout (issue 52 adds it)")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_the_carry_check_counts_what_travels_and_only_that(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(".whl/\nbig/\n")
    data = tmp_path / plan.EMBEDDED_DATA
    data.mkdir(parents=True)
    (data / "digits.npz").write_bytes(b"d" * 1000)
    (tmp_path / "main.py").write_bytes(b"m" * 100)  # untracked, not ignored: travels
    (tmp_path / ".whl").mkdir()
    (tmp_path / ".whl" / "a.whl").write_bytes(b"w" * 5000)  # ignored, carried by name
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "blob").write_bytes(b"b" * 9000)  # ignored, not carried: stays
    git(tmp_path, "add", ".gitignore", plan.EMBEDDED_DATA)
    sizes = plan.carry_sizes(tmp_path, [".whl"])
    assert list(sizes.values()) == [len(".whl/\nbig/\n") + 100, 1000, 5000]
    lines, fits = plan.carry_report(sizes, limit=6000)
    assert not fits and "DOES NOT FIT" in lines[-1]
    assert plan.carry_report(sizes)[1]


def test_this_tree_leaves_room_for_the_wheels() -> None:
    """The code, docs and embedded data leave 16 MiB for the carried wheels (8.6 MiB on 2026-11-27:
    `benchmarks/gpu_plan.py --carry` after tools/gpu_wheels.sh)."""
    sizes = plan.carry_sizes(ROOT, [])
    assert sum(sizes.values()) <= plan.CARRY_LIMIT_BYTES - 16 * 2**20


def test_the_gpu_scales_times_are_said_to_be_the_h200s(tmp_path: Path) -> None:
    from tests.conftest import invoke

    result = invoke("verdict", "--scale", "gpu", "--budget", "10", "--results", str(tmp_path / "r.jsonl"))
    assert result.exit_code == 2
    from jax_benchmarks.verdict.scale import SCALES

    one_round = SCALES["gpu"].one_round_s
    assert (f"too small for even one round of --scale gpu (about {one_round:.0f} s on one H200, as measured on "
            "2026-11-28)") in result.stderr


def gone(pid: int, within_s: float = 5.0) -> bool:
    """No such process, or a zombie nobody reaped yet (it holds nothing), within `within_s`: a killed process
    ends when the kernel next schedules it, which on a loaded 2-core machine can be after the plan returned."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            if Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, IndexError):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_a_step_past_its_limit_is_stopped_with_every_process_it_started(tmp_path: Path) -> None:
    """A verdict's rounds are its children: past the step's limit none of them may keep running into the next step."""
    pid_file = tmp_path / "child.pid"
    # -S: no site-packages (this environment's .pth files), so both interpreters start in tens of milliseconds.
    code = ("import subprocess, sys, time; "
            "child = subprocess.Popen([sys.executable, '-S', '-c', 'import time; time.sleep(60)']); "
            f"open({str(pid_file)!r}, 'w').write(str(child.pid)); time.sleep(60)")
    # 3 s: a bare Python (no imports beyond subprocess) starts its child and writes its pid in well under a
    # second, even on a loaded 2-core machine; the step is stopped at the budget's end.
    steps = (plan.Step("hangs", "b", ("{py}", "-S", "-c", code), 1, "a stand-in"),)
    assert plan.main(["--device", "cpu", "--budget", "3", "--out", str(tmp_path)], steps) == 1
    status = (tmp_path / "steps.tsv").read_text().splitlines()[1].split("\t")[1]
    assert status.startswith("timed out after")
    assert gone(int(pid_file.read_text()))


def test_the_plan_trains_issue_52s_table_of_modes_on_the_gpu() -> None:
    """Issue 52's GPU table: one (d) step for each framework × mode × precision (Flax's jitted step; PyTorch eager
    and torch.compile'd), float32, TF32 and bf16, all with the same training options, so that `verdict --from
    results.jsonl` sets them in one table of modes (mnist/findings.py pools no runs of different settings)."""
    trained: dict[tuple[str, bool, str], tuple[str, ...]] = {}
    for step in plan.STEPS:
        if step.part == "d":
            args = list(step.args)
            backend = args[args.index("mnist") + 1]
            precision = "float32"
            if "--precision" in args:  # the rest of the options, without the mode and the precision
                at = args.index("--precision")
                precision = args.pop(at + 1)
                del args[at]
            trained[(backend, "--compile" in args, precision)] = tuple(
                a for a in args[args.index("mnist") + 2:] if a != "--compile")
    wanted = {(backend, compiled, precision) for backend, compiled in (("flax", False), ("pytorch", False),
                                                                       ("pytorch", True))
              for precision in ("float32", "tf32", "bf16")}
    assert set(trained) == wanted
    assert len(set(trained.values())) == 1  # one setting: the same epochs, data, device and store in every step
