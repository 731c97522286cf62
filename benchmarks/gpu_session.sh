#!/usr/bin/env bash
# Everything the README shows from a GPU machine, in one device call of at most 8 minutes of command time, most
# valuable first (benchmarks/gpu_plan.py holds the steps, their order and each one's estimate on the GPU: its time on
# an H200 where it ran there; docs/gpu.md says how they were sized and how a later session resumes):
#   benchmarks/gpu_session.sh                            the whole plan on the GPU, within 480 s
#   benchmarks/gpu_session.sh --done benchmarks/gpu_done.tsv   skip the steps an earlier call's steps.tsv marks ok
#   benchmarks/gpu_session.sh --from crosscheck-float32  start at a step
#   benchmarks/gpu_session.sh --device cpu               the dry run on a CPU: GPU-only steps skipped, saying so
#   benchmarks/gpu_session.sh --list                     the plan and its estimates, nothing run
# Output goes to $OUT (default /tmp/gpu_out), appended as each step finishes: versions.txt, steps.tsv,
# session.log, results.jsonl, verdict.jsonl, verdict.md, verdict-<run id>.log.
# On a machine whose Python already holds the frameworks, the wheels of our other dependencies travel in .whl/
# (tools/gpu_wheels.sh downloads them; the device call names .whl in its carry); they are installed into
# /tmp/site first, and that time counts in the plan's budget.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PY:-python3}"
OUT="${OUT:-/tmp/gpu_out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 COLUMNS=150
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  echo "=== wheels: $(ls .whl/*.whl | wc -l) into /tmp/site" | tee -a "$OUT/session.log"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    >>"$OUT/session.log" 2>&1 && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  echo "=== wheels installed in ${SECONDS}s" | tee -a "$OUT/session.log"
fi
exec "$PY" benchmarks/gpu_plan.py --out "$OUT" --spent "$SECONDS" "$@"
