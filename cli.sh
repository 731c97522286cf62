#!/usr/bin/env bash
# ./cli.sh <group> <backend> [options]   run a benchmark (e.g. ./cli.sh mnist flax)
# ./cli.sh test [pytest args]            run the default test suite
#
# The first call creates .venv and installs the locked dependencies (pip shows
# progress); later calls start at once. Re-installs only when poetry.lock or
# pyproject.toml change. No poetry needed.
#
# Python: $PYTHON if set, else the first supported one on PATH (3.11, 3.12 or 3.13; pyproject.toml
# requires-python). JAX_BENCHMARKS_VENV puts the environment elsewhere than .venv (one per Python).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${JAX_BENCHMARKS_VENV:-$ROOT/.venv}"
PY="$VENV/bin/python"

has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }

version_of() { "$1" -c 'import sys; print(*sys.version_info[:2], sep=".")' 2>/dev/null || echo "none"; }

supported() { "$1" "$ROOT/tools/lock_requirements.py" supports-python 2>/dev/null; }

pick_python() {
    # $PYTHON if set, else the first supported one found: python3, then the newest python3.X.
    local candidate
    if [ -n "${PYTHON:-}" ]; then
        if supported "$PYTHON"; then echo "$PYTHON"; return 0; fi
        echo "cli.sh: PYTHON=$PYTHON is not a supported Python (pyproject.toml requires-python" \
             "$(grep -m1 '^requires-python' "$ROOT/pyproject.toml" | cut -d'"' -f2))" >&2
        return 1
    fi
    for candidate in python3 python3.13 python3.12 python3.11; do
        if command -v "$candidate" >/dev/null 2>&1 && supported "$candidate"; then
            echo "$candidate"; return 0
        fi
    done
    echo "cli.sh: no supported Python found (3.11, 3.12 or 3.13; set PYTHON=/path/to/python3.X)" >&2
    return 1
}

install_torch() {
    # The locked torch. Never let a CPU-only machine download the multi-GB CUDA build when a CPU build
    # can be had: a CPU wheel found locally (pip's find-links), else PyTorch's CPU index. Only when
    # neither has one for this Python does PyPI's regular build come, with its CUDA libraries (several
    # GB), and cli.sh says so first. With an NVIDIA GPU, the regular (CUDA) build.
    local pin
    pin="$("$PY" "$ROOT/tools/lock_requirements.py" pin torch)"
    if "$PY" -m pip show torch >/dev/null 2>&1; then return 0; fi
    if has_gpu; then
        "$PY" -m pip install "$pin"
    elif "$PY" -m pip install --no-index --no-deps "$pin" 2>/dev/null; then
        : # (--no-deps: only the wheel itself is local; its dependencies come with the rest below)
    elif "$PY" -m pip install --retries 1 --timeout 15 "$pin" \
            --index-url "${TORCH_CPU_INDEX_URL:-https://download.pytorch.org/whl/cpu}"; then
        :
    else
        echo "cli.sh: no CPU build of $pin for Python $(version_of "$PY")" \
             "found (local wheels, PyTorch's CPU index): installing PyPI's regular build, which brings" \
             "its CUDA libraries (about 4.7 GB installed; unused on this CPU machine)" >&2
        "$PY" -m pip install "$pin"
    fi
}

bootstrap() {
    local gpu="cpu" stamp hash python
    has_gpu && gpu="gpu"
    if [ -f "$VENV/.installed" ] && [ -n "${PYTHON:-}" ] && [ "$(version_of "$PY")" != "$(version_of "$PYTHON")" ]; then
        echo "cli.sh: $VENV has Python $(version_of "$PY"), PYTHON=$PYTHON is $(version_of "$PYTHON"): making it anew" >&2
        rm -rf "$VENV"
    fi
    hash="$(cat "$ROOT/poetry.lock" "$ROOT/pyproject.toml" | cksum | cut -d' ' -f1)-$gpu"
    stamp="$VENV/.installed"
    if [ -x "$PY" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$hash" ]; then return 0; fi

    if [ ! -x "$PY" ]; then
        python="$(pick_python)"
        "$python" -m venv "$VENV"
    fi
    echo "cli.sh: setting up $VENV (Python $(version_of "$PY")) with the locked dependencies ($gpu; first run only)..." >&2
    "$PY" "$ROOT/tools/lock_requirements.py" constraints > "$VENV/constraints.txt"
    local extra=()
    [ "$gpu" = "gpu" ] && extra=(--cuda)
    "$PY" "$ROOT/tools/lock_requirements.py" requirements "${extra[@]}" > "$VENV/requirements.txt"
    install_torch
    "$PY" -m pip install -c "$VENV/constraints.txt" -r "$VENV/requirements.txt"
    # The project itself, editable and without dependencies (they are the locked ones above): puts the
    # `jax-benchmarks` console script in .venv/bin (pyproject.toml [project.scripts]).
    "$PY" -m pip install --no-deps -e "$ROOT"
    echo "$hash" > "$stamp"
    echo "cli.sh: setup done." >&2
}

bootstrap 1>&2
if [ "${1:-}" = "test" ]; then
    shift
    cd "$ROOT"
    exec "$PY" -m pytest "$@"
fi
exec "$PY" "$ROOT/main.py" "$@"
