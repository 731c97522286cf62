#!/usr/bin/env bash
# tools/check_pip_install.sh [PYTHON] [base]      (base: step 0 only)
#
# The "into an existing environment" install path, as a user with their own frameworks takes it:
#   0. the base install's weight: the wheel `pip install`ed into an environment that has NumPy only brings
#      at most 25 packages and 150 MB (printed; pyproject.toml's extras hold what only some commands need);
#   1. an environment that already has NumPy and PyTorch (torch from the local CPU wheel, the only CPU
#      build this machine has; Python 3.11) and no JAX;
#   2. the project built into a wheel (poetry-core) and `pip install`ed there: the `jax-benchmarks`
#      command appears and NumPy and PyTorch stay exactly as they were;
#   3. the numpy and pytorch backends run; the jax backend is refused in one line (exit 2) saying what
#      to install; `all` runs numpy and pytorch and says it skipped jax;
#   4. the user's own JAX stack, another release than the lock's (jax 0.9.2, inside the range; 0.11 and
#      later need Python 3.12) with the Flax pip picks for it, then `pip install 'wheel[jax]'`: JAX and
#      Flax stay the user's, and the jax backend runs. (JAX without Flax would not do: pip takes the newest
#      Flax, which may need a newer JAX, and upgrades JAX for it.)
# Prints each step; exits 1 at the first that fails.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${1:-python3}"
ONLY="${2:-}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
VENV="$WORK/venv"
BIN="$VENV/bin"
fail() { echo "check_pip_install: FAILED: $*" >&2; exit 1; }
step() { echo "== $*"; }
frameworks() { "$BIN/python" -m pip list --format freeze 2>/dev/null | grep -iE '^(numpy|torch|jax|jaxlib|flax)==' | sort; }

step "0. the base install into a $("$PYTHON" --version) environment with NumPy only"
"$PYTHON" -m venv "$WORK/lean"
"$WORK/lean/bin/pip" install -q "numpy==2.3.5"
"$WORK/lean/bin/pip" wheel -q --no-deps -w "$WORK/dist" "$ROOT"
wheel="$(ls "$WORK/dist"/jax_benchmarks-*.whl)"
packages() { "$1/bin/python" -m pip list --format freeze 2>/dev/null | sort; }
megabytes() { du -sm "$1" | cut -f1; }
before_packages="$(packages "$WORK/lean")"
before_mb="$(megabytes "$WORK/lean")"
began=$SECONDS
"$WORK/lean/bin/pip" install -q "$wheel"
added="$(comm -13 <(echo "$before_packages") <(packages "$WORK/lean") | wc -l)"
added_mb=$(( $(megabytes "$WORK/lean") - before_mb ))
echo "pip install <wheel> into NumPy $("$WORK/lean/bin/python" -c 'import numpy; print(numpy.__version__)'): $added packages added" \
     "(jax-benchmarks included), $added_mb MB, $(( SECONDS - began )) s"
[ "$added" -le 25 ] || fail "the base install brought $added packages (at most 25)"
[ "$added_mb" -le 150 ] || fail "the base install added $added_mb MB (at most 150)"
(cd "$WORK" && "$WORK/lean/bin/jax-benchmarks" xla numpy --quick --results "$WORK/lean.jsonl" > /dev/null) \
    || fail "xla numpy failed in the base install"
rm -rf "$WORK/lean"
if [ "$ONLY" = base ]; then echo "check_pip_install: step 0 passed"; exit 0; fi

step "1. a $("$PYTHON" --version) environment with NumPy and PyTorch only"
"$PYTHON" -m venv "$VENV"
"$BIN/pip" install -q "$("$PYTHON" "$ROOT/tools/lock_requirements.py" pin torch)" "numpy==2.3.5"
before="$(frameworks)"
echo "$before"

step "2. pip install the wheel"
"$BIN/pip" install -q "$wheel"
[ "$(frameworks)" = "$before" ] || fail "pip install replaced a framework: $(frameworks | tr '\n' ' ')"
cd "$WORK"  # away from the checkout: what runs is the installed package
"$BIN/jax-benchmarks" --version
echo "numpy and torch unchanged: $(frameworks | tr '\n' ' ')"

step "3. numpy and pytorch run; jax is unavailable"
"$BIN/jax-benchmarks" xla --help | grep -F "[unavailable: pip install 'jax-benchmarks[jax]']" \
    || fail "xla --help does not list jax as unavailable"
set +e
refusal="$("$BIN/jax-benchmarks" xla jax --quick 2>&1)"
code=$?
set -e
[ "$code" = 2 ] || fail "xla jax without JAX exited $code, not 2: $refusal"
[ "$refusal" = "Error: xla jax is unavailable: JAX is not installed (pip install 'jax-benchmarks[jax]')" ] \
    || fail "xla jax without JAX said: $refusal"
echo "$refusal (exit $code)"
"$BIN/jax-benchmarks" xla all --quick --results "$WORK/results.jsonl" > "$WORK/all.out" 2> "$WORK/all.err" \
    || fail "xla all failed: $(tail -3 "$WORK/all.err")"
# The line wraps at the console's width (80 columns into a file): read with its lines joined.
tr '\n' ' ' < "$WORK/all.err" | grep -qF "xla all: skipped jax: JAX is not installed" \
    || fail "xla all did not say it skipped jax"
for backend in numpy pytorch; do
    grep -q "\"backend\": *\"$backend\"" "$WORK/results.jsonl" || fail "xla all recorded no $backend figure"
done
grep -q '"backend": *"jax"' "$WORK/results.jsonl" && fail "xla all recorded a jax figure without JAX"
"$BIN/jax-benchmarks" autograd numpy --quick --results "$WORK/results.jsonl" > /dev/null \
    || fail "autograd numpy failed"
echo "xla all (numpy, pytorch) and autograd numpy ran: $(wc -l < "$WORK/results.jsonl") records"

step "4. the user's own JAX and Flax (not the lock's releases) are kept by pip install '<wheel>[jax]'"
"$BIN/pip" install -q "jax==0.9.2" "jaxlib==0.9.2" flax
before="$(frameworks)"
"$BIN/pip" install -q "$wheel[jax]"
[ "$(frameworks)" = "$before" ] || fail "pip install '[jax]' replaced a framework: $(frameworks | tr '\n' ' ')"
"$BIN/jax-benchmarks" xla jax --quick --results "$WORK/results.jsonl" > /dev/null || fail "xla jax on jax 0.9.2 failed"
echo "frameworks unchanged ($(frameworks | tr '\n' ' ')); xla jax ran on them"
echo "check_pip_install: 5 steps passed"
