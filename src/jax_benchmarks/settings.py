"""Settings shared by every benchmark command, validated by pydantic.

Each command's options are generated from a pydantic model, so the allowed
range of an option is written once (`Field(ge=..., le=..., description=...)`)
and both the `--help` text and the error message come from it.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import click
from click.core import ParameterSource
from pydantic import (
    BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator,
)
from pydantic.fields import FieldInfo

from jax_benchmarks.hardware.devices import ONE_DEVICE, DeviceKind, DeviceRequest, cpu_count, devices_to_time, resolve_device
from jax_benchmarks.errors import DataError, NoResultsYet, visible
from jax_benchmarks.hardware.gpu_policy import FLOAT32_POLICIES, MatmulPrecision
from jax_benchmarks.measure.timing import MIN_TIME_S
from jax_benchmarks.store.jsonl import regular_file_problem
from jax_benchmarks.store.sqlite import LOCK_TIMEOUT_S
from jax_benchmarks.store.location import (
    ResultsLocation, as_location, check_readable, check_writable, default_location, default_text, DefaultStoreOption,
)

M = TypeVar("M", bound=BaseModel)
# --results: a path or a URL, shown without its password (src/jax_benchmarks/store/location.py).
Results = Annotated[ResultsLocation, BeforeValidator(as_location)]
F = TypeVar("F", bound=Callable[..., Any])


def finite_number(number: float, allowed: str, param_type: click.ParamType[Any], param: click.Parameter | None,
                  ctx: click.Context | None) -> float:
    """`number` if it is finite; else the option's one-line error (NaN compares false with every bound, and an
    infinite budget or threshold means nothing), with what is allowed."""
    if math.isfinite(number):
        return number
    param_type.fail(f"{number:g} is not a finite number" + (f"; allowed: {allowed}" if allowed else ""), param, ctx)


class FiniteFloat(click.types.FloatParamType):
    """Every float option of a settings model: NaN and ±infinity refused, naming the option (exit 2)."""

    def __init__(self, allowed: str = "") -> None:
        self.allowed = allowed

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        return finite_number(super().convert(value, param, ctx), self.allowed, self, param, ctx)


class FiniteFloatRange(click.FloatRange):
    """A float option with bounds, declared on a click command (verdict --budget, calibrate
    --fail-on-regression): NaN, which every range check lets through, and ±infinity refused."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        low = "" if self.min is None else f"{self.min:g} {'<' if self.min_open else '≤'} "
        high = "" if self.max is None else f" {'<' if self.max_open else '≤'} {self.max:g}"
        return super().convert(finite_number(number, f"{low}value{high}", self, param, ctx), param, ctx)


class OptionError(ValueError):
    """A validation error that belongs to a specific option (for cross-field checks)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def results_field(what: str) -> Any:
    """The --results option of a command, `what` it does with the store (append, read) in front."""
    return Field(
        # Chosen when a command runs: the default store depends on the working directory (store/location.py).
        default_factory=default_location,
        description=f"{what}: a .jsonl file (JSON lines), a postgresql:// URL, or any other path (an SQLite "
                    "file); $JAX_BENCHMARKS_RESULTS, where set, replaces the default.",
        json_schema_extra={"metavar": "PATH|URL"},
    )


LOCK_TIMEOUT_HELP = ("How long to wait for another process's lock on the results store (an SQLite file's write "
                     "lock, said on stderr after 1 s; a PostgreSQL table lock) before giving up with one line.")
LOCK_TIMEOUT_MAX_S = 86_400


def lock_timeout_field() -> Any:
    """--lock-timeout: declared before --results, whose check (and every read and write) waits that long for a lock."""
    return Field(LOCK_TIMEOUT_S, ge=0, le=LOCK_TIMEOUT_MAX_S, json_schema_extra={"metavar": "SECONDS"},
                 description=LOCK_TIMEOUT_HELP)


def lock_timeout_option() -> Callable[[F], F]:
    """--lock-timeout of a command whose options are plain click options (verdict, calibrate): the same as
    `lock_timeout_field`'s, given to the command as `lock_timeout_s`."""
    return click.option("--lock-timeout", "lock_timeout_s", type=FiniteFloatRange(0, LOCK_TIMEOUT_MAX_S),
                        default=LOCK_TIMEOUT_S, show_default=True, metavar="SECONDS", help=LOCK_TIMEOUT_HELP)


def with_lock_timeout(location: ResultsLocation, info: ValidationInfo) -> ResultsLocation:
    """The --results location carrying the command's --lock-timeout (validated before it)."""
    timeout = info.data.get("lock_timeout", LOCK_TIMEOUT_S)
    return dataclasses.replace(location, lock_timeout_s=float(timeout))


class BenchSettings(BaseModel):
    """Options every benchmark command takes."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    # `--quick`: the option values of a smoke test (small sizes, few repeats), applied by `parse_settings`
    # to every option not given explicitly. Each group's settings extend it with their own sizes.
    QUICK: ClassVar[Mapping[str, Any]] = {"repeats": 2}
    # The values a command takes for a Literal option, where it takes fewer than the type allows: a command
    # timing one device has no `--device all`; one timing several (jit's sweep, autograd) sets MULTI_DEVICE.
    CHOICES: ClassVar[Mapping[str, Sequence[str]]] = {"device": ONE_DEVICE, "precision": FLOAT32_POLICIES}

    device: DeviceRequest = Field(
        "auto", description="Where to run: auto = the GPU when one is visible, else the CPU (in every group); "
                            "all (where offered) = every visible device, one after the other.")
    repeats: int = Field(5, ge=1, le=1000, description="Minimum timed repeats per figure.")
    min_time: float = Field(
        MIN_TIME_S, ge=0.01, le=60.0, json_schema_extra={"metavar": "SECONDS"},
        description="Minimum seconds of timed samples per figure (more samples until both this and --repeats are "
                    "reached). Longer makes a round's fastest sample steadier where the CPU's speed varies from "
                    "one tenth of a second to the next (a shared host); see docs/timing.md.")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed for NumPy, PyTorch and JAX.")
    precision: MatmulPrecision = Field(
        "float32",
        description="float32 matrix products and convolutions on NVIDIA GPUs, the same in JAX and PyTorch: "
        "float32 = IEEE float32; tf32 = TensorFloat-32 tensor cores (JAX's GPU default). CPUs: IEEE either way. "
        "bf16 (training: mnist, jit flax): bfloat16 mixed precision on any device, float32 parameters.",
    )
    lock_timeout: float = lock_timeout_field()
    results: Results = results_field("Where the records are appended")
    json_output: bool = Field(
        False,
        description="Print only the JSON array of this run's records on stdout.",
        json_schema_extra={"option": "--json"},
    )

    case: str | None = Field(
        None, min_length=1, max_length=500,
        description="Run only the cases whose name contains PATTERN or matches it as a glob "
                    "(e.g. matmul, 'f_1000*'); several patterns separated by commas. `list` shows the names.",
        json_schema_extra={"short": "-k", "metavar": "PATTERN"},
    )
    threads: int | None = Field(
        None, ge=1, le=1024,
        description="Threads for NumPy's BLAS/LAPACK, PyTorch and XLA alike (default: each library's own; "
                    "at most the cores this process may use).",
    )
    verbose: bool = Field(
        False, description="Print every sanity check and skipped case on a line of its own (default: one line "
                           "each for the checks that passed and for the cases -k did not select).",
        json_schema_extra={"short": "-v"},
    )
    list_cases: bool = Field(
        False, description="Print the cases this command would run with these options (target, case, variant; "
                           "-k applies) and exit: nothing is computed or recorded.",
        json_schema_extra={"option": "--list"},
    )
    quick: bool = Field(
        False,
        description="Smoke-test preset: small sizes and few repeats, so that the command ends in seconds "
                    "(not a measurement to compare); options given explicitly win over it.",
    )
    @property
    def quick_sizes(self) -> bool:
        """Whether these settings measure what --quick measures (every value of its preset; a --rounds round gets
        those values, not --quick itself): a smoke test's figures, recorded as such (`quick` in a record's env)."""
        return all(getattr(self, name) == value for name, value in self.QUICK.items())

    memory: bool = Field(
        True,
        description="Record each case's peak host (and GPU) memory and its compiled program's bytes, taken in one "
                    "untimed call after the timed samples (around the timed work for epochs and solves); "
                    "--no-memory makes no extra call.",
    )
    profile: bool = Field(
        False,
        description="After each case's timed samples, one more untimed call under the framework's profiler (JAX: "
                    "jax.profiler, PyTorch: torch.profiler, NumPy and the engine: cProfile), its trace (and a jitted "
                    "JAX case's compiled program) written to profiles/RUN_ID/ beside the results; see docs/profile.md.",
    )
    rounds: int = Field(
        1, ge=1, le=100,
        description="Run the command this many times, each round in a fresh process; every round is recorded "
                    "under one run id, so `report --baseline` can judge the variation between runs.",
    )
    # Set by the parent of --rounds for each child process; not for users (hidden from --help).
    run_id: str | None = Field(None, pattern=r"^[0-9A-Za-z-]+$", json_schema_extra={"hidden": True},
                               description="Run id to record under (a round of --rounds).")
    round_index: int | None = Field(None, ge=0, json_schema_extra={"hidden": True},
                                    description="Index of this round (a round of --rounds).")
    # Set by `verdict --turns` for each framework's process of a round taken in turns (jax_benchmarks.measure.turns):
    # the Unix socket of the round's arbiter; not for users (hidden from --help).
    turns: str | None = Field(None, json_schema_extra={"hidden": True},
                              description="The socket of the round's turns (a round taken in turns).")

    @field_validator("threads")
    @classmethod
    def _threads_available(cls, value: int | None) -> int | None:
        cores = cpu_count()
        if value is not None and value > cores:
            raise ValueError(f"{value} threads requested but this process may use {cores} core(s); "
                             f"allowed: 1–{cores}")
        return value

    @field_validator("turns")
    @classmethod
    def _turns_socket(cls, value: str | None) -> str | None:
        # Set by verdict --turns to its round's arbiter: a Unix socket that exists while the round runs.
        if value is not None and not Path(value).is_socket():
            raise ValueError(f"{value!r} is not the socket of a running round's turns (verdict --turns sets it)")
        return value

    @field_validator("case")
    @classmethod
    def _some_pattern(cls, value: str | None) -> str | None:
        # `-k ',,,'` would select every case, as no -k does: refused like an empty -k.
        if value is not None and not patterns_of(value):
            raise ValueError("has no pattern (only commas and blanks); give one or more case names or globs "
                             "separated by commas, e.g. -k matmul,'f_1000*'")
        return value

    @model_validator(mode="after")
    def _round_of_a_run(self) -> BenchSettings:
        # A round joins its parent's run; --run-id alone also joins a run (a process of a multi-process job).
        if self.round_index is not None and self.run_id is None:
            raise OptionError("--round-index", "--round-index needs --run-id (both are set by --rounds)")
        if self.round_index is not None and self.round_index >= self.rounds:
            raise OptionError("--round-index", f"{self.round_index} is not below --rounds {self.rounds}")
        if self.turns is not None and self.round_index is None:
            raise OptionError("--turns", "--turns needs --round-index (both are set by verdict --turns)")
        return self

    @model_validator(mode="after")
    def _profile_folder_writable(self) -> BenchSettings:
        # --profile's traces go beside the store: a folder that cannot take them is refused before any work (--list
        # writes nothing: no folder is made for it).
        if self.profile and not self.list_cases:
            writable_profiles(self.results)
        return self

    @property
    def case_patterns(self) -> tuple[str, ...]:
        """The --case/-k patterns; none selects every case."""
        return patterns_of(self.case or "")

    @property
    def is_round(self) -> bool:
        """This process is one round of a --rounds run (started by its parent)."""
        return self.round_index is not None

    @field_validator("device")
    @classmethod
    def _device_present(cls, value: DeviceRequest) -> DeviceRequest:
        if value not in cls.CHOICES["device"]:
            raise ValueError(f"{value!r} is not allowed for this command (it times one device); "
                             f"allowed: {', '.join(cls.CHOICES['device'])}")
        devices_to_time(value)  # raises for gpu without a GPU
        return value

    @field_validator("results")
    @classmethod
    def _results_writable(cls, value: ResultsLocation, info: ValidationInfo) -> ResultsLocation:
        return writable_file(with_lock_timeout(value, info))

    @property
    def device_kind(self) -> DeviceKind:
        """The one device of a command that times one (not for `--device all`: see devices_to_time)."""
        return resolve_device(self.device)


def patterns_of(case: str) -> tuple[str, ...]:
    """The comma-separated patterns of a -k value, blanks around each removed, empty ones left out."""
    return tuple(p.strip() for p in case.split(",") if p.strip())


def writable_file(location: ResultsLocation | Path) -> ResultsLocation:
    """Refuse, before any work is done, a results location we could not append records to (a wait for another
    process's lock is said on stderr)."""
    return check_writable(as_location(location), log=lambda message: click.echo(visible(message), err=True))


def writable_profiles(results: ResultsLocation) -> None:
    """--profile's folder beside the store (measure/profile.py), refused before any work (OptionError) where it cannot
    take files: the check of a command's settings and of a measuring verdict alike."""
    from jax_benchmarks.measure.profile import profiles_root

    try:
        writable_dir(profiles_root(results), "profiles")
    except DataError as exc:
        raise OptionError("--profile", str(exc)) from None


def writable_dir(path: Path, what: str) -> Path:
    """Refuse, before any work, a folder that `what` (checkpoints, plots) could not be written to: the
    check writes and removes a file there (os.access would say yes to root on a read-only mount)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise DataError(f"cannot write {what} to {path}: {exc.strerror or exc}; "
                        "make it writable (or run from another folder) before starting") from None
    return path


def readable_store(location: ResultsLocation) -> ResultsLocation:
    """Refuse, before any work, a results store that cannot be read: absent, not a store, damaged, of a newer
    schema, a file that cannot be read (opened read-only: nothing is written to it)."""
    check_readable(location)
    if location.kind != "postgres" and location.path.exists():
        readable_path(location.path)
    return location


def readable_path(path: Path) -> Path:
    """Refuse a path that does not exist, cannot be read, or is not a regular file (a FIFO would hang)."""
    if not path.exists():
        raise ValueError(f"{path} does not exist")
    problem = regular_file_problem(path)
    if problem:
        raise ValueError(problem)
    if not os.access(path, os.R_OK):
        raise ValueError(f"{path} is not readable")
    return path


# ---------------------------------------------------------------- options ---

def option_name(model: type[BaseModel], field: str) -> str:
    extra = model.model_fields[field].json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("option"), str):
        return str(extra["option"])
    return "--" + field.replace("_", "-")


# `json_schema_extra={"aliases": ["--old-name"]}` keeps an old option name working, hidden from
# --help; `{"hidden": True}` hides the option itself. An alias's value reaches the command under
# ALIAS_PREFIX + field and `parse_settings` moves it onto the field.
ALIAS_PREFIX = "alias__"


def option_aliases(info: FieldInfo) -> list[str]:
    extra = info.json_schema_extra
    aliases = extra.get("aliases") if isinstance(extra, dict) else None
    return [str(a) for a in aliases] if isinstance(aliases, list) else []


def short_option(info: FieldInfo) -> list[str]:
    """`json_schema_extra={"short": "-k"}`: a one-letter spelling shown next to the option."""
    extra = info.json_schema_extra
    short = extra.get("short") if isinstance(extra, dict) else None
    return [short] if isinstance(short, str) else []


def option_spellings(model: type[BaseModel], field: str) -> tuple[str, ...]:
    """Every spelling a command takes for `field`'s option: its name, its short form and its hidden aliases
    ('--case', '-k')."""
    info = model.model_fields[field]
    return (option_name(model, field), *short_option(info), *option_aliases(info))


def metavar(info: FieldInfo) -> str | None:
    extra = info.json_schema_extra
    value = extra.get("metavar") if isinstance(extra, dict) else None
    return value if isinstance(value, str) else None


def is_hidden(info: FieldInfo) -> bool:
    extra = info.json_schema_extra
    return isinstance(extra, dict) and extra.get("hidden") is True


def allowed_text(info: FieldInfo) -> str:
    """'1 ≤ value ≤ 1000' style text from a field's ge/gt/le/lt constraints."""
    low = high = ""
    for meta in info.metadata:
        for attr, fmt in (("ge", "{} ≤ "), ("gt", "{} < ")):
            if getattr(meta, attr, None) is not None:
                low = fmt.format(getattr(meta, attr))
        for attr, fmt in (("le", " ≤ {}"), ("lt", " < {}")):
            if getattr(meta, attr, None) is not None:
                high = fmt.format(getattr(meta, attr))
    choices = _choices(info.annotation)
    if choices:
        return "one of " + ", ".join(choices)
    return f"{low}value{high}" if (low or high) else ""


def model_choices(model: type[BaseModel], field: str) -> list[str]:
    """The values a settings model narrows a Literal field to (`BenchSettings.CHOICES`); [] if it does not."""
    choices = getattr(model, "CHOICES", {}).get(field, ())
    return [str(c) for c in choices]


def _unwrap_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _choices(annotation: Any) -> list[str]:
    annotation = _unwrap_optional(annotation)
    if typing.get_origin(annotation) is Literal:
        return [str(a) for a in typing.get_args(annotation)]
    return []


def _click_type(annotation: Any, allowed: str = "") -> Any:
    annotation = _unwrap_optional(annotation)
    choices = _choices(annotation)
    if choices:
        return click.Choice(choices)
    if annotation is Path:
        return click.Path(path_type=Path)
    if annotation is float:
        return FiniteFloat(allowed)
    if annotation in (int, str):
        return annotation
    return str


def optional_value(info: FieldInfo) -> dict[str, Any]:
    """`json_schema_extra={"flag_value": V}`: the option's value may be left out, and is then V (`--compile` alone
    is `--compile default`)."""
    extra = info.json_schema_extra
    value = extra.get("flag_value") if isinstance(extra, dict) else None
    return {} if value is None else {"is_flag": False, "flag_value": value}


# torch.compile's modes (its documented ones); `--compile` alone is "default".
CompileMode = Literal["default", "reduce-overhead", "max-autotune"]


def compile_field(what: str) -> Any:
    """`--compile [MODE]` of a command that times PyTorch: `what` torch.compile compiles (inductor)."""
    return Field(None, description=f"PyTorch: compile {what} with torch.compile (inductor) in this mode; --compile "
                                   "alone: default.",
                 json_schema_extra={"option": "--compile", "flag_value": "default"})


def settings_options(model: type[BaseModel], exclude: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Decorate a click command with one option per field of `model`."""

    def decorate(fn: F) -> F:
        # Command-specific options first, then the shared ones (click keeps this order).
        base = set(BenchSettings.model_fields)
        fields = sorted(model.model_fields.items(), key=lambda item: item[0] in base)
        for name, info in fields:
            if name in exclude:
                continue
            help_ = info.description or ""
            allowed = allowed_text(info)
            if allowed and not _choices(info.annotation):
                help_ += f" [{allowed}]"
            hidden = is_hidden(info)
            narrowed = model_choices(model, name)
            if info.annotation is bool:
                opt = option_name(model, name)
                decls = [f"{opt}/--no-{opt[2:]}"] if info.default else [opt, *short_option(info)]
                fn = click.option(*decls, name, is_flag=True, default=info.default, help=help_, hidden=hidden)(fn)
                for alias in option_aliases(info):
                    fn = click.option(alias, ALIAS_PREFIX + name, is_flag=True, default=None, hidden=True)(fn)
            else:
                default: Any = info.default
                shown: Any = info.default is not None
                option_class: type[click.Option] = click.Option
                if info.default_factory is default_location:
                    # The default store, chosen when the command runs, given whole; --help shows it as it is
                    # then, without its password.
                    default, option_class = default_text, DefaultStoreOption
                fn = click.option(
                    option_name(model, name), *short_option(info), name, cls=option_class,
                    type=click.Choice(narrowed) if narrowed else _click_type(info.annotation, allowed),
                    default=default, show_default=shown, help=help_, hidden=hidden, metavar=metavar(info),
                    **optional_value(info),
                )(fn)
                for alias in option_aliases(info):
                    fn = click.option(alias, ALIAS_PREFIX + name, type=_click_type(info.annotation, allowed),
                                      default=None, hidden=True)(fn)
        return fn

    return decorate


# Options a started process never gets: --quick's values are in the settings and passed on themselves;
# --list never starts one.
NOT_PASSED_ON = frozenset({"quick", "list_cases"})


def command_line(settings: BaseModel, skip: Collection[str] = ()) -> list[str]:
    """Command-line options that rebuild `settings` in another process (a --rounds round, a process of a
    multi-process job): every field but those in `skip`, left out where it has its default or is None."""
    model = type(settings)
    args: list[str] = []
    for name, info in model.model_fields.items():
        value = getattr(settings, name)
        # A default chosen when the command runs (the results store) is the same in the started process.
        default = info.get_default(call_default_factory=True) if info.default_factory is not None else info.default
        if name in skip or name in NOT_PASSED_ON or value is None or value == default:
            continue
        option = option_name(model, name)
        if isinstance(value, bool):
            args.append(option if value else f"--no-{option[2:]}")
        else:
            args += [option, option_text(value)]
    return args


def option_text(value: object) -> str:
    """The text that gives `value` back on a command line: a results location whole, password included
    (its str() hides the password, for printing)."""
    return value.value if isinstance(value, ResultsLocation) else str(value)


def parse_settings(model: type[M], values: Mapping[str, Any]) -> M:
    """Build the settings; turn the first validation error into a one-line click error."""
    fields = dict(values)
    used_aliases: dict[str, str] = {}  # field -> the alias option the user typed
    for key in [k for k in fields if k.startswith(ALIAS_PREFIX)]:
        value, name = fields.pop(key), key.removeprefix(ALIAS_PREFIX)
        if value is None:
            continue
        info = model.model_fields[name]
        alias = option_aliases(info)[0]
        if name in fields and fields[name] != info.default:
            raise click.BadParameter(f"{alias} is the old name of {option_name(model, name)}; give only one of them",
                                     param_hint=f"'{alias}'")
        fields[name] = value
        used_aliases[name] = alias
    if fields.get("quick") and issubclass(model, BenchSettings):
        fields.update({name: value for name, value in model.QUICK.items()
                       if not given_explicitly(model, name, fields.get(name), used_aliases)})
    try:
        return model(**fields)
    except ValidationError as exc:
        raise _to_click_error(model, exc, used_aliases) from None


def given_explicitly(model: type[BaseModel], name: str, value: Any, used_aliases: Mapping[str, str]) -> bool:
    """Whether the user gave option `name` (so a preset must not replace it): typed on the command line
    (click says so, also when the value equals the default), under its old name, or, outside a click
    command, a value other than the default."""
    if name in used_aliases:
        return True
    context = click.get_current_context(silent=True)
    source = context.get_parameter_source(name) if context is not None else None
    if source is not None:
        return source is not ParameterSource.DEFAULT
    return bool(value != model.model_fields[name].default)


def _to_click_error(model: type[BaseModel], exc: ValidationError,
                    used_aliases: Mapping[str, str] | None = None) -> click.UsageError:
    error = exc.errors()[0]
    cause = (error.get("ctx") or {}).get("error")
    field = str(error["loc"][0]) if error["loc"] else ""
    if isinstance(cause, NoResultsYet) and field in model.model_fields:
        return cause.for_option((used_aliases or {}).get(field) or option_name(model, field))
    if isinstance(cause, OptionError):
        return click.BadParameter(str(cause), param_hint=f"'{cause.option}'")
    info = model.model_fields.get(field)
    message = str(error["msg"]).removeprefix("Value error, ")
    if info is not None:
        allowed = allowed_text(info)
        if allowed and error["type"] != "value_error":
            message = f"{error['input']!r} is not allowed; allowed: {allowed}"
        hint = (used_aliases or {}).get(field) or option_name(model, field)
        return click.BadParameter(message, param_hint=f"'{hint}'")
    return click.BadParameter(message)
