#!/usr/bin/env bash
# Re-resolve poetry.lock. Poetry's built-in PyPI source needs a per-release JSON
# API that some registries (and mirrors) do not serve; poetry-plugin-pypi-mirror
# lets it resolve through pip's own simple index instead, and the lock keeps no
# mirror entries. Needs: poetry >= 2 with poetry-plugin-pypi-mirror installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
POETRY="${POETRY:-poetry}"
POETRY_PYPI_MIRROR_URL="${POETRY_PYPI_MIRROR_URL:-$(python3 tools/pip_index_url.py)}"
export POETRY_PYPI_MIRROR_URL
"$POETRY" lock "$@"
"$POETRY" check --lock
