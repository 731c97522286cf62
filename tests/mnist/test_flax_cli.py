"""`mnist flax` end to end on tiny synthetic data (its own file: JAX compiles take a while here)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import invoke
from tests.mnist.test_mnist_cli import check_dry_run_and_round_trip


def test_flax_dry_run_and_checkpoint_round_trip(results_path: Path) -> None:
    check_dry_run_and_round_trip("flax", results_path)


def test_flax_corrupt_checkpoint_is_one_line_exit_2(results_path: Path) -> None:
    folder = Path("data/checkpoints/flax_mnist")
    folder.mkdir(parents=True)
    (folder / "junk").write_bytes(b"\x00not an orbax checkpoint")
    Path("data/checkpoints/flax_mnist.json").write_text("{}")
    result = invoke("mnist", "evaluate", "flax", "--test-batch-size", "32", "--results", str(results_path))
    assert result.exit_code == 2, result.output
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "is corrupt or does not fit this model" in errors[0]
    assert "Traceback" not in result.output


SAVE_WITH_ORBAX = """
import sys
sys.path.insert(0, {repo!r})
from pathlib import Path
import jax.numpy as jnp
import orbax.checkpoint as ocp
from jax_benchmarks.mnist.checkpoints import save_atomically

class OrbaxTrainer:
    backend = "flax"
    def save(self, path):
        checkpointer = ocp.StandardCheckpointer()
        checkpointer.save(path, {{"w": jnp.full((256, 256), {value})}}, force=True)
        checkpointer.wait_until_finished()
        return path

for _ in range(3):
    save_atomically(OrbaxTrainer(), Path({final!r}))
print("saved")
"""


def test_two_flax_runs_in_one_folder_do_not_collide_on_orbax_temporaries(tmp_path: Path) -> None:
    """Two processes save the same checkpoint with orbax at once: both succeed, one whole checkpoint stays."""
    import subprocess
    import sys

    repo = str(Path(__file__).resolve().parents[2])
    final = tmp_path / "checkpoints" / "flax_mnist"
    children = [
        subprocess.Popen([sys.executable, "-c", SAVE_WITH_ORBAX.format(repo=repo, final=str(final), value=value)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for value in (1.0, 2.0)
    ]
    outputs = [child.communicate(timeout=120) for child in children]
    assert [child.returncode for child in children] == [0, 0], [err[-2000:] for _, err in outputs]
    assert [p.name for p in final.parent.iterdir()] == ["flax_mnist"]  # no temporary left behind

    import orbax.checkpoint as ocp

    restored = ocp.StandardCheckpointer().restore(final)
    assert float(restored["w"].min()) == float(restored["w"].max()) in (1.0, 2.0)  # one run's, whole
