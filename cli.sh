#!/usr/bin/env bash
# ./cli.sh <group> <backend> [options]   run a benchmark (e.g. ./cli.sh mnist flax)
# ./cli.sh test [pytest args]            run the default test suite
#
# The first call creates .venv and installs the locked dependencies (pip shows
# progress); later calls start at once. Re-installs only when poetry.lock or
# pyproject.toml change. No poetry needed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"

has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }

pick_python() {
    for candidate in "${PYTHON:-}" python3.11 python3; do
        if [ -n "$candidate" ] && command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
            echo "$candidate"; return 0
        fi
    done
    echo "cli.sh: Python 3.11 is required (set PYTHON=/path/to/python3.11)" >&2
    return 1
}

install_torch() {
    # torch is pinned exactly (2.13.0). Never let a CPU-only machine download the
    # multi-GB CUDA build: take a CPU wheel found locally (pip's find-links) or
    # PyTorch's CPU index; with an NVIDIA GPU, take the regular (CUDA) build.
    local pin
    pin="$(grep -m1 '"torch==' "$ROOT/pyproject.toml" | sed -E 's/.*"(torch==[^"]+)".*/\1/')"
    if "$PY" -m pip show torch >/dev/null 2>&1; then return 0; fi
    if has_gpu; then
        "$PY" -m pip install "$pin"
    elif ! "$PY" -m pip install --no-index --no-deps "$pin" 2>/dev/null; then
        # (--no-deps: only the wheel itself is local; its dependencies come with the rest below)
        "$PY" -m pip install "$pin" --index-url "${TORCH_CPU_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
    fi
}

bootstrap() {
    local gpu="cpu" stamp hash
    has_gpu && gpu="gpu"
    hash="$(cat "$ROOT/poetry.lock" "$ROOT/pyproject.toml" | cksum | cut -d' ' -f1)-$gpu"
    stamp="$VENV/.installed"
    if [ -x "$PY" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$hash" ]; then return 0; fi

    echo "cli.sh: setting up $VENV with the locked dependencies ($gpu; first run only)..." >&2
    if [ ! -x "$PY" ]; then "$(pick_python)" -m venv "$VENV"; fi
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
