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

The key is a secret, and comet's own error paths print what they were given
(a key with a line break came back in full, twice, in an HTTP header error).
So, before comet is imported, a key of the wrong shape is refused (one line,
exit 2, the key not shown), and from then on every log record the process
creates, whatever its logger, has the key replaced with `KEY_HIDDEN` in its
message and in any traceback.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import click

from jax_benchmarks.frameworks.available import COMET, missing_libraries, unavailable_reason

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


# comet.ml API keys are letters and digits (25 of them today); '_' and '-' allowed for other deployments.
API_KEY_PATTERN = re.compile(r"[A-Za-z0-9_-]{8,128}")
KEY_HIDDEN = "[COMET_API_KEY hidden]"


class BadSecret(click.UsageError):
    """A secret of the wrong shape (exit 2); the message describes it and never contains it."""


def api_key_problem(key: str) -> str | None:
    """What is wrong with the shape of COMET_API_KEY, in words that do not reveal it (None: it looks right)."""
    if API_KEY_PATTERN.fullmatch(key):
        return None
    if any(c in key for c in "\r\n"):
        what = "contains a line break"
    elif any(c.isspace() for c in key):
        what = "contains white space"
    elif not 8 <= len(key) <= 128:
        what = f"is {len(key)} characters long (8–128 expected)"
    else:
        what = "contains characters other than letters, digits, '_' and '-'"
    return f"COMET_API_KEY {what}; it is not a comet.ml API key (its value is not shown); fix or unset it"


class SecretHidingRecords:
    """A log-record factory that replaces the secret in each record as it is created, in its message and
    any traceback or stack, before a logger's filters or any handler see it. Handlers that a library adds
    later (comet_ml adds its error-reporting handlers when an experiment starts) and records that a
    handler formats before another handler's filter ran get the hidden text too."""

    def __init__(self, secret: str, make: Callable[..., logging.LogRecord]) -> None:
        self.secret = secret
        self.make = make

    def hide(self, text: str) -> str:
        hidden = text.replace(self.secret, KEY_HIDDEN)
        # Each line of a multi-line key on its own (an error message may quote it line by line or escaped).
        for part in {*self.secret.splitlines(), repr(self.secret)[1:-1]}:
            if len(part) >= 4:
                hidden = hidden.replace(part, KEY_HIDDEN)
        return hidden

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: logging reports it when a handler emits
            message = f"{record.msg} {record.args!r}"
        record.msg, record.args = self.hide(message), None
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:  # also one that an inner factory (hiding another key) formatted already
            record.exc_text = self.hide(record.exc_text)
        if record.stack_info:
            record.stack_info = self.hide(record.stack_info)
        return record


def hide_in_logs(secret: str) -> None:
    """Every log record of this process, whatever logger or handler takes it, shows `secret` hidden."""
    factory = logging.getLogRecordFactory()
    while isinstance(factory, SecretHidingRecords):  # already hidden (a second run in the same process)
        if factory.secret == secret:
            return
        factory = factory.make
    logging.setLogRecordFactory(SecretHidingRecords(secret, logging.getLogRecordFactory()))


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
    missing = missing_libraries(COMET)
    if missing and mode == "auto":  # the key is set, but tracking was not asked for by name
        log(f"skip comet.ml initialization ({unavailable_reason(missing)})")
        return Tracker()
    if missing:
        raise click.UsageError(f"--comet {mode}: {unavailable_reason(missing)}")
    key = os.environ.get("COMET_API_KEY")
    if key is not None:
        problem = api_key_problem(key)
        if problem is not None:
            raise BadSecret(problem)
    if key:
        hide_in_logs(key)  # before comet_ml is imported: its import logs too
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
