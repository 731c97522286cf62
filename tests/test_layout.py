"""The package's layout: no import cycle anywhere in src/, lazy imports included."""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "jax_benchmarks"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.Module, lazy: bool) -> list[ast.Import | ast.ImportFrom]:
    """The module's import statements: those run at import time (at the top level, under `if` or `try`,
    `if TYPE_CHECKING:` included) and, with `lazy`, those inside functions too."""
    if lazy:
        return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If | ast.Try):
            pending += node.body + node.orelse + [s for h in getattr(node, "handlers", []) for s in h.body]
    return found


def import_graph(lazy: bool = True) -> dict[str, set[str]]:
    """Module -> the project's modules it imports (see `imports`): a lazy import is still a dependency."""
    modules = {module_name(path): path for path in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in imports(ast.parse(path.read_text(), str(path)), lazy):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from the module's package
                    base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                targets.add(origin)
                targets.update(f"{origin}.{alias.name}" for alias in node.names)  # `from pkg import module`
        graph[name] = {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def test_the_checker_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "jax_benchmarks.autodiff.graph" in graph["jax_benchmarks.autodiff.functions"]  # from x import y
    assert "jax_benchmarks.autodiff.functions" in graph["jax_benchmarks.autodiff"]  # a package's own modules
    assert len(graph) > 100


def test_src_has_no_import_cycle_at_import_time() -> None:
    cycle = find_cycle(import_graph(lazy=False))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_src_has_no_import_cycle_even_through_lazy_imports() -> None:
    cycle = find_cycle(import_graph(lazy=True))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# Modules that serve every group alike: what is particular to a group is declared in its own package (its
# `findings.py`) or on its entry in `jax_benchmarks.groups`, never in a branch on the group's name here.
GROUP_BLIND = ("verdict/findings.py", "verdict/scale.py", "report/plot.py")


@pytest.mark.parametrize("path", GROUP_BLIND)
def test_verdict_and_report_have_no_branch_on_a_group_name(path: str) -> None:
    from jax_benchmarks.groups import BENCHMARK_GROUPS

    tree = ast.parse((SRC / PACKAGE / path).read_text())
    named = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Compare)
             for side in (node.left, *node.comparators)
             if isinstance(side, ast.Constant) and side.value in BENCHMARK_GROUPS]
    assert named == [], f"{path} compares with a group's name on lines {named}"
    keyed = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Dict)
             for key in node.keys if isinstance(key, ast.Constant) and key.value in BENCHMARK_GROUPS]
    assert keyed == [], f"{path} keeps a table by group name on lines {keyed}"


def group_names_used(tree: ast.Module, groups: Collection[str]) -> list[tuple[int, str]]:
    """(line, how) of each group's name in `tree` as a string that is compared with, looked up by, handed to a call
    or kept in a module-level table: a side of a comparison, a dict key (or part of a tuple key), a subscript, a
    call's argument (a string's own startswith/endswith aside: a variant's name such as `jit` is tested that way),
    an element of a module-level assignment's value (a set of variant names aside). A docstring or a message that
    merely holds the name is not such a use."""
    def named(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and node.value in groups

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            found += [(node.lineno, "compared") for side in (node.left, *node.comparators) if named(side)]
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                parts = key.elts if isinstance(key, ast.Tuple) else [key]
                found += [(node.lineno, "a dict key") for part in parts if named(part)]
        elif isinstance(node, ast.Subscript) and named(node.slice):
            found.append((node.lineno, "looked up"))
        elif isinstance(node, ast.Call):
            string_test = isinstance(node.func, ast.Attribute) and node.func.attr in ("startswith", "endswith")
            arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
            found += [(node.lineno, "a call's argument") for arg in arguments if named(arg) and not string_test]
    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            in_sets = {id(n) for s in ast.walk(statement.value) if isinstance(s, ast.Set) for n in s.elts}
            found += [(n.lineno, "in a table") for n in ast.walk(statement.value) if named(n) and id(n) not in in_sets]
    return sorted(set(found))


def test_the_checker_finds_a_group_name_used_by_verdict_or_report() -> None:
    code = """
TABLE = (("mnist", "train_step_"),)
VARIANTS = frozenset({"jit", "xla"})
def f(chosen, r, store):
    \"\"\"The mnist findings.\"\"\"
    chosen.get("autograd"), chosen["scipy"], r.group != "mnist", store.history("mnist"), F(group="xla")
    return {("jit", "all"): 1.0}, r.variant.startswith("jit"), ("jit", r), "no mnist records"
"""
    assert group_names_used(ast.parse(code), ("xla", "jit", "autograd", "scipy", "mnist")) == [
        (2, "in a table"), (6, "a call's argument"), (6, "compared"), (6, "looked up"), (7, "a dict key")]


VERDICT_AND_REPORT = sorted(path.relative_to(SRC / PACKAGE).as_posix() for folder in ("verdict", "report")
                            for path in (SRC / PACKAGE / folder).glob("*.py"))


@pytest.mark.parametrize("path", VERDICT_AND_REPORT)
def test_no_group_name_is_tested_or_looked_up_in_verdict_or_report(path: str) -> None:
    """What verdict and report need of a group (its findings, memory case, agreement check, round times, training
    epochs) the group declares (jax_benchmarks.groups, its `GroupFindings`); they read the declarations and never
    test or look up a group's name."""
    from jax_benchmarks.groups import BENCHMARK_GROUPS

    used = group_names_used(ast.parse((SRC / PACKAGE / path).read_text()), BENCHMARK_GROUPS)
    assert used == [], f"{path} uses a group's name: {used}"


def test_the_measurement_core_imports_nothing_above_it() -> None:
    """measure/ is below the CLI and the run: it declares what it needs of a run (`harness.Recorder`) and
    never imports cli/ or run.py back, lazily neither."""
    above = (f"{PACKAGE}.cli", f"{PACKAGE}.run")
    graph = import_graph(lazy=True)
    found = {module: sorted(t for t in targets if t.startswith(above)) for module, targets in graph.items()
             if module.startswith(f"{PACKAGE}.measure")}
    assert len(found) > 5
    assert {module: targets for module, targets in found.items() if targets} == {}
    assert any(t.startswith(f"{PACKAGE}.measure") for t in graph[f"{PACKAGE}.run"])  # the one direction


def test_report_and_the_cli_import_nothing_of_the_verdict() -> None:
    """verdict/ stands on report/ and cli/ (it judges with the gate's statistics, starts its rounds through the one
    round loop, cli/rounds.py); neither imports verdict/ back, lazily neither: calibrate, which needs both the gate
    and the verdict's A/A rule, is the verdict's (verdict/calibrate.py)."""
    below = (f"{PACKAGE}.report", f"{PACKAGE}.cli")
    graph = import_graph(lazy=True)
    found = {module: sorted(t for t in targets if t.startswith(f"{PACKAGE}.verdict")) for module, targets in graph.items()
             if module.startswith(below)}
    assert len(found) > 20
    assert {module: targets for module, targets in found.items() if targets} == {}
    assert any(t.startswith(f"{PACKAGE}.report") for t in graph[f"{PACKAGE}.verdict.findings"])  # the one direction


def group_of(module: str, groups: tuple[str, ...]) -> str | None:
    """The benchmark group whose package holds `module`, or None (the core, the shared rooms, the tools)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == PACKAGE and parts[1] in groups else None


def group_crossings(graph: dict[str, set[str]], groups: tuple[str, ...]) -> list[str]:
    """Every import, lazy ones included, from one group's package into another's."""
    return sorted(f"{module} -> {target}" for module, targets in graph.items()
                  if (own := group_of(module, groups)) is not None
                  for target in targets if group_of(target, groups) not in (None, own))


def test_the_crossing_check_sees_a_group_importing_another() -> None:
    graph = {f"{PACKAGE}.jit.flax_backend": {f"{PACKAGE}.mnist.cases", f"{PACKAGE}.jit.plot", f"{PACKAGE}.training"},
             f"{PACKAGE}.training.cases": {f"{PACKAGE}.measure.harness"}}
    assert group_crossings(graph, ("jit", "mnist")) == [f"{PACKAGE}.jit.flax_backend -> {PACKAGE}.mnist.cases"]


def test_groups_stand_side_by_side() -> None:
    """A group is a room beside the others, standing on the core and the shared rooms (training/: the CNN, its
    data, trainers and training cases): no group imports another, lazily neither, and the shared rooms import
    no group."""
    from jax_benchmarks.groups import BENCHMARK_GROUPS

    graph = import_graph(lazy=True)
    assert group_crossings(graph, BENCHMARK_GROUPS) == []
    shared = {module: sorted(t for t in targets if group_of(t, BENCHMARK_GROUPS) is not None)
              for module, targets in graph.items() if module.startswith(f"{PACKAGE}.training")}
    assert len(shared) > 5
    assert {module: targets for module, targets in shared.items() if targets} == {}


LAUNCHER = "cli/relaunch.py"


def calls(tree: ast.Module) -> list[tuple[str, int]]:
    """Every call of an attribute or a name: ("subprocess.Popen", line), ("run_fresh", line)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                found.append((f"{node.func.value.id}.{node.func.attr}", node.lineno))
            elif isinstance(node.func, ast.Name):
                found.append((node.func.id, node.lineno))
    return found


def test_one_launcher_starts_every_fresh_process_of_the_program() -> None:
    """--rounds, smoke, verdict and --launch-local start the program through cli/relaunch.py alone: one
    round_argv, one place that calls Popen; a module that builds this program's argv starts no process itself."""
    launcher_names = {"self_command", "round_argv"}
    starters = {"subprocess.Popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
                "subprocess.check_output", "os.fork", "os.execv", "os.spawnv"}
    users = []
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        relative = path.relative_to(SRC / PACKAGE).as_posix()
        tree = ast.parse(path.read_text(), str(path))
        defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        called = calls(tree)
        if relative == LAUNCHER:
            assert launcher_names <= defined and "subprocess.Popen" in {name for name, _ in called}
            continue
        assert not defined & launcher_names, f"{relative} defines its own {defined & launcher_names}"
        assert "subprocess.Popen" not in {name for name, _ in called}, f"{relative} starts a process itself"
        if launcher_names & {name for name, _ in called}:
            users.append(relative)
            started = [f"{name} (line {line})" for name, line in called if name in starters]
            assert started == [], f"{relative} builds the program's argv but starts it itself: {started}"
    # verdict and calibrate start their rounds through the one round loop (cli/rounds.py), as --rounds does.
    assert set(users) >= {"cli/rounds.py", "cli/smoke.py", "mnist/cli.py"} and "verdict/cli.py" not in users
