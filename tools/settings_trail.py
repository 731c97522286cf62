"""Follow call by call from mnist/flax_backend.py `suites` (building the suite, then running it: 1 epoch, dry
run, synthetic data): every call of a project function that receives the settings object as an argument
(methods of the settings object itself not counted), each function followed at its first call only; the
files of those calls in order, consecutive repeats collapsed. Counted: each arrival in a file the settings
had already left."""
import sys, os, tempfile
root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "src")); sys.path.insert(0, root)
os.chdir(tempfile.mkdtemp())
from jax_benchmarks.settings import BenchSettings
from jax_benchmarks.mnist.settings import FlaxSettings
import jax_benchmarks.mnist.flax_backend as fb
import jax_benchmarks.mnist.cases as cases
from jax_benchmarks.measure.harness import run_suite
from jax_benchmarks.store.results import Run
from tests.mnist.conftest import synthetic_data
cases.read_data = lambda settings, log: synthetic_data()

CARRIED = os.environ.get("CARRIED") == "1"
DEDUPE = os.environ.get("DEDUPE") == "1"
seen, files = set(), []
def tracer(frame, event, arg):
    if event != "call":
        return None
    code = frame.f_code
    if "jax_benchmarks" not in code.co_filename:
        return None
    names_ = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    vals = [frame.f_locals.get(n) for n in names_ if n != "self" or CARRIED]
    if any(isinstance(v, BenchSettings) or isinstance(getattr(v, "settings", None), BenchSettings) for v in vals):
        key = (code.co_filename, code.co_firstlineno)
        if DEDUPE is False or key not in seen:
            seen.add(key)
            files.append((code.co_filename.split("jax_benchmarks/")[1], code.co_name))
    return None

s = FlaxSettings(num_epochs=1, dry_run=True, train_batch_size=16, test_batch_size=32, repeats=1, comet="off",
                 device="cpu", results="r.jsonl")
sys.settrace(tracer)
[suite] = fb.suites(s)
run_suite(Run("mnist", s.results), suite, repeats=1)
sys.settrace(None)
seq = []
for f, n in files:
    if not seq or seq[-1][0] != f:
        seq.append((f, [n]))
    else:
        seq[-1][1].append(n)
left, back, prev = set(), 0, None
for f, names in seq:
    mark = ""
    if prev is not None:
        left.add(prev)
        if f in left:
            back += 1; mark = f"  <- back #{back}"
    print(f"{f}: {', '.join(names)}{mark}")
    prev = f
print("comes back to a file it had left:", back, "| visits to cases.py:", sum(f == "mnist/cases.py" for f, _ in seq))
