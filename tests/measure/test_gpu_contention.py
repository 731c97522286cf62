"""GPU contention: known answers from injected nvidia-smi output (no GPU on the test machine)."""

from __future__ import annotations

import pytest

from jax_benchmarks.measure.contention import Contention, busy_line, of_fields, unknown_line
from jax_benchmarks.measure.gpu_contention import APPS_QUERY, IDS_QUERY, GpuSeen, Runner, device_uuid, gpu_seen

IDS = "0, GPU-aaaa-1111\n1, GPU-bbbb-2222\n"
ME = 4242


def smi(apps: str | None, ids: str | None = IDS) -> dict[str, str | None]:
    return {IDS_QUERY[0]: ids, APPS_QUERY[0]: apps}


def runner(outputs: dict[str, str | None]) -> Runner:
    """nvidia-smi as a table of answers, by the query asked."""
    return lambda args: outputs[args[0]]


def test_other_processes_on_our_gpu_are_counted_with_their_memory() -> None:
    apps = (f"{ME}, GPU-aaaa-1111, 1500\n"          # this process
            "777, GPU-aaaa-1111, 2048\n"            # another process on our GPU
            "778, GPU-aaaa-1111, [N/A]\n"           # another, memory not reported
            "999, GPU-bbbb-2222, 8000\n")           # on the other GPU: not ours
    seen = gpu_seen(0, frozenset({ME}), runner(smi(apps)), None)
    assert seen == GpuSeen(0, 2, 2048.0)
    assert seen.busy and seen.sentence() == "2 other process(es) on GPU 0, 2048 MiB"
    assert seen.as_fields() == {"gpu_device": 0, "gpu_others": 2, "gpu_other_mib": 2048.0}
    alone = gpu_seen(0, frozenset({ME}), runner(smi(f"{ME}, GPU-aaaa-1111, 1500\n")), None)
    assert alone == GpuSeen(0, 0, 0.0) and not alone.busy


def test_cuda_visible_devices_maps_the_framework_device() -> None:
    uuids = {"0": "GPU-aaaa-1111", "1": "GPU-bbbb-2222"}
    assert device_uuid(0, "1", uuids) == "GPU-bbbb-2222"
    assert device_uuid(0, "GPU-bbbb", uuids) == "GPU-bbbb-2222"  # a UUID prefix, as CUDA accepts
    assert device_uuid(1, "0", uuids) is None  # only one device visible
    assert device_uuid(0, "MIG-1234", uuids) is None
    apps = f"{ME}, GPU-bbbb-2222, 100\n5, GPU-aaaa-1111, 100\n"
    assert gpu_seen(0, frozenset({ME}), runner(smi(apps)), "1") == GpuSeen(0, 0, 0.0)


@pytest.mark.parametrize(("outputs", "visible", "why"), [
    (smi(None, ids=None), None, "nvidia-smi is missing or failed"),
    (smi(None), None, "nvidia-smi is missing or failed"),
    (smi("777, GPU-aaaa-1111, 2048\n"), None, "nvidia-smi does not list this process on its GPU"),
    (smi(f"{ME}, GPU-aaaa-1111, 1\n"), "MIG-9", "device 0 is not one nvidia-smi lists"),
])
def test_absent_or_blind_nvidia_smi_is_unknown_never_a_guess(outputs: dict[str, str | None], visible: str | None,
                                                             why: str) -> None:
    seen = gpu_seen(0, frozenset({ME}), runner(outputs), visible)
    assert seen.others is None and not seen.busy and seen.unknown is not None and seen.unknown.startswith(why)
    assert seen.sentence().startswith("GPU 0 contention unknown: " + why)
    assert set(seen.as_fields()) == {"gpu_device", "gpu_unknown"}


def test_the_record_field_carries_the_gpu_beside_the_cpu() -> None:
    quiet_cpu = Contention(1.0, 2, 0.1, 0.0, gpu=GpuSeen(0, 1, 512.0))
    fields = quiet_cpu.as_fields()
    assert fields["busy"] is True and fields["gpu_others"] == 1 and fields["others_cores"] == 0.1
    back = of_fields(fields)
    assert back == quiet_cpu and back is not None and back.busy and not back.cpu_busy
    assert back.sentence() == "other processes took 0.1 of 2 cores; 1 other process(es) on GPU 0, 512 MiB"
    line = busy_line([back])
    assert line is not None and "(other processes took 0.5 cores or more, or ran on the figure's GPU)" in line
    unknown = of_fields(Contention(1.0, 2, 0.1, 0.0, gpu=GpuSeen(0, unknown="nvidia-smi is missing or failed"))
                        .as_fields())
    assert unknown is not None and not unknown.busy
    assert unknown_line([unknown]) == "GPU contention unknown for 1 of 1 figures: nvidia-smi is missing or failed"
    assert of_fields(Contention(1.0, 2, 0.1, 0.0).as_fields()) == Contention(1.0, 2, 0.1, 0.0)  # a CPU figure: no GPU


def test_a_gpu_target_watches_its_device_and_a_cpu_target_does_not() -> None:
    from jax_benchmarks.measure.contention import Sampler

    assert Sampler.of_this_machine("cpu").gpu is None
    watched = Sampler.of_this_machine("gpu").gpu
    assert watched is not None
    seen = watched()  # this machine: no GPU, or one nvidia-smi may or may not show this process on
    assert seen.device == 0 and (seen.unknown is not None or seen.others is not None)


def test_the_gpus_ids_are_asked_once_a_suite() -> None:
    from jax_benchmarks.measure.gpu_contention import ids_asked_once

    asked: list[str] = []
    outputs = smi(f"{ME}, GPU-aaaa-1111, 1\n")

    def counting(args: list[str]) -> str | None:
        asked.append(args[0])
        return outputs[args[0]]

    smi_once = ids_asked_once(counting)
    for _ in range(3):
        assert gpu_seen(0, frozenset({ME}), smi_once, None) == GpuSeen(0, 0, 0.0)
    assert asked.count(IDS_QUERY[0]) == 1 and asked.count(APPS_QUERY[0]) == 3
