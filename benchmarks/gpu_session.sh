#!/usr/bin/env bash
# Everything the README shows from a GPU machine, in stages; one call runs one or more of them within one
# time budget (BUDGET seconds, default 570, so that a call fits a 10-minute command):
#   installation   pytest -m installation (JAX and PyTorch compute on the GPU, the precision policy holds)
#   gpu            every group with --device gpu, mnist flax/pytorch alone, --devices all, a refused size
#   auto           every group with --device auto
#   crosscheck     benchmarks/crosscheck.py with both precision policies, and the contention sampler's cost
#                  with its GPU reader (benchmarks/contention.py)
#   suite          the default test suite
# e.g. benchmarks/gpu_session.sh installation gpu
# Logs go to $OUT (default /tmp/gpu_out): versions.txt, <stage>.log, results.jsonl.
# On a machine whose Python already has the frameworks, wheels for the other dependencies may be carried in
# .whl/ (tools/gpu_wheels.sh downloads them); they are installed into /tmp/site first.
set -u
STAGES="installation gpu auto crosscheck suite"
[ $# -ge 1 ] || { echo "usage: gpu_session.sh STAGE... ($STAGES)" >&2; exit 2; }
for STAGE in "$@"; do  # every name checked before any device time is spent
  case " $STAGES " in *" $STAGE "*) ;; *) echo "unknown stage $STAGE ($STAGES)" >&2; exit 2 ;; esac
done
OUT="${OUT:-/tmp/gpu_out}"; mkdir -p "$OUT"
PY="${PY:-python3}"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 COLUMNS=150
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
BUDGET="${BUDGET:-570}"
LOG=/dev/null
step() {  # step TIMEOUT_S CMD...: run with a time limit inside the budget, log output and exit code
  local t="$1"; shift; local left=$((BUDGET - SECONDS))
  if [ "$left" -lt 10 ]; then echo "=== skipped (budget spent): $*" | tee -a "$LOG"; return; fi
  [ "$t" -gt "$left" ] && t=$left
  echo "=== \$ $*" | tee -a "$LOG"; local start=$SECONDS
  timeout "$t" "$@" >>"$LOG" 2>&1; echo "=== rc=$? wall=$((SECONDS - start))s" | tee -a "$LOG"
}
{
  nvidia-smi; "$PY" --version
  "$PY" -c "import jax, torch, flax, optax, numpy; print('jax', jax.__version__, 'torch', torch.__version__, 'flax', flax.__version__, 'optax', optax.__version__, 'numpy', numpy.__version__); print(jax.devices()); print(torch.cuda.get_device_name(0), 'CUDA', torch.version.cuda, 'cuDNN', torch.backends.cudnn.version())"
} > "$OUT/versions.txt" 2>&1
R="$OUT/results.jsonl"
groups() {  # groups DEVICE: every group's `all` on DEVICE
  local dev="$1"
  step 120 "$PY" main.py xla all --device "$dev" --results "$R"
  step 60 "$PY" main.py xla all --device "$dev" --dtype float32 --results "$R"
  step 90 "$PY" main.py jit all --device "$dev" --results "$R"
  step 40 "$PY" main.py autograd all --device "$dev" --results "$R"
  step 40 "$PY" main.py scipy all --device "$dev" --results "$R"
  step 90 "$PY" main.py mnist all --device "$dev" --num-epochs 2 --results "$R"
}
for STAGE in "$@"; do
  LOG="$OUT/$STAGE.log"
  case "$STAGE" in
    installation)
      step 120 "$PY" -m pytest -p no:cacheprovider -m installation -v -rs ;;
    gpu)
      groups gpu
      step 60 "$PY" main.py mnist flax --device gpu --num-epochs 2 --results "$R"
      step 60 "$PY" main.py mnist pytorch --device gpu --num-epochs 2 --results "$R"
      step 60 "$PY" main.py mnist flax --device gpu --devices all --num-epochs 1 --results "$R"
      step 60 "$PY" main.py mnist pytorch --device gpu --devices all --num-epochs 1 --results "$R"
      step 30 "$PY" main.py xla jax --device gpu --matrix-size 200000 --results "$R" ;;  # must refuse: exit 2
    auto)
      groups auto ;;
    crosscheck)
      step 250 "$PY" benchmarks/crosscheck.py --device gpu --precision float32
      step 250 "$PY" benchmarks/crosscheck.py --device gpu --precision tf32
      step 60 "$PY" benchmarks/contention.py 10 ;;
    suite)
      step 560 "$PY" -m pytest -p no:cacheprovider -q -rs ;;
  esac
done
