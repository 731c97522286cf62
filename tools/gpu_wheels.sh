#!/usr/bin/env bash
# Download, into .whl/, the wheels a GPU machine whose Python 3.12 already holds jax, torch, flax, optax,
# orbax, scipy, click and rich (but nothing else of ours) needs to run this project from source:
# our other direct dependencies at their locked versions, and what those need beyond such an image.
# benchmarks/gpu_session.sh installs whatever lies in .whl/ into /tmp/site before it runs. typing-extensions is
# among them because pydantic 2.14 needs >= 4.16, newer than such an image may hold.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PLATFORMS=(); for n in $(seq 17 39); do PLATFORMS+=(--platform "manylinux_2_${n}_x86_64"); done
PLATFORMS+=(--platform manylinux2014_x86_64 --platform manylinux1_x86_64)
locked() { python3 tools/lock_requirements.py constraints | grep -i "^$1==" ; }
mkdir -p .whl
for name in pydantic pydantic-core annotated-types typing-inspection typing-extensions datasets dill multiprocess mlxtend comet-ml \
            dulwich everett configobj python-box semantic-version sentry-sdk requests-toolbelt wurlitzer jsonschema \
            jsonschema-specifications referencing rpds-py fsspec; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" -d .whl "$(locked "$name" || echo "$name")"
done
ls .whl
