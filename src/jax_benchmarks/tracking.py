"""Experiment tracking with comet.ml, optional and framework-free.

`start_tracking(mode, ...)` returns a `Tracker`:
* `online` (or `auto` with COMET_API_KEY set): a comet_ml.Experiment; comet
  reads the key, COMET_PROJECT_NAME and COMET_WORKSPACE from the environment
  itself, so the key is never held, printed or recorded by this project;
* `offline`: a comet_ml.OfflineExperiment writing a zip archive under
  `data/comet/` (no network needed; `comet upload <zip>` sends it later);
* otherwise a tracker that does nothing, after logging
  "skip comet.ml initialization".

comet_ml is imported only when an experiment is started (it takes about a
second to import), so `--help` and untracked runs never load it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

TrackingMode = Literal["auto", "off", "online", "offline"]
COMET_DIR = Path("data/comet")
DEFAULT_PROJECT = "jax-benchmarks"

# Everything comet would collect on its own is off: we log what we choose,
# and capturing stdout would copy our tables into the experiment twice.
_QUIET: dict[str, Any] = dict(
    log_code=False, log_graph=False, auto_param_logging=False, auto_metric_logging=False,
    parse_args=False, auto_output_logging=None, log_env_details=False, log_git_metadata=False,
    log_git_patch=False, display_summary_level=0,
)


class Tracker:
    """No-op tracker; `CometTracker` overrides every method."""

    archive: Path | None = None

    def log_parameters(self, params: Mapping[str, Any]) -> None:
        """Settings of the run."""

    def log_metrics(self, metrics: Mapping[str, float], *, step: int | None = None, epoch: int | None = None) -> None:
        """Per-step or per-epoch figures."""

    def log_text(self, text: str) -> None:
        """Free text, e.g. the model summary."""

    def end(self) -> Path | None:
        """Finish the experiment; the offline archive's path when there is one."""
        return None


class CometTracker(Tracker):
    def __init__(self, experiment: Any, archive: Path | None) -> None:
        self.experiment = experiment
        self.archive = archive

    def log_parameters(self, params: Mapping[str, Any]) -> None:
        self.experiment.log_parameters(dict(params))

    def log_metrics(self, metrics: Mapping[str, float], *, step: int | None = None, epoch: int | None = None) -> None:
        self.experiment.log_metrics(dict(metrics), step=step, epoch=epoch)

    def log_text(self, text: str) -> None:
        self.experiment.log_text(text)

    def end(self) -> Path | None:
        self.experiment.end()  # an offline experiment fills its zip archive here
        return self.archive


def resolve_mode(mode: TrackingMode) -> Literal["off", "online", "offline"]:
    """auto = online when COMET_API_KEY is set, else off."""
    if mode == "auto":
        return "online" if os.environ.get("COMET_API_KEY") else "off"
    return mode


def start_tracking(
    mode: TrackingMode,
    *,
    name: str,
    log: Callable[[str], None],
    directory: Path = COMET_DIR,
) -> Tracker:
    """Start an experiment as `mode` asks; see the module docstring."""
    resolved = resolve_mode(mode)
    if resolved == "off":
        log("skip comet.ml initialization" + ("" if mode == "off" else " (COMET_API_KEY not set)"))
        return Tracker()
    os.environ.setdefault("COMET_DISABLE_AUTO_LOGGING", "1")
    import comet_ml

    project = os.environ.get("COMET_PROJECT_NAME", DEFAULT_PROJECT)
    experiment: Any
    if resolved == "offline":
        directory.mkdir(parents=True, exist_ok=True)
        before = set(directory.glob("*.zip"))
        experiment = comet_ml.OfflineExperiment(
            project_name=project, workspace=os.environ.get("COMET_WORKSPACE"),
            offline_directory=str(directory), **_QUIET,
        )
        # The experiment creates its (empty) archive at once; end() fills it.
        created = sorted(set(directory.glob("*.zip")) - before)
        log(f"comet.ml offline experiment: archive under {directory}/")
        tracker = CometTracker(experiment, created[-1] if created else None)
    else:
        experiment = comet_ml.Experiment(project_name=project, workspace=os.environ.get("COMET_WORKSPACE"), **_QUIET)
        log(f"comet.ml experiment in project {project}")
        tracker = CometTracker(experiment, None)
    experiment.set_name(name)
    return tracker
