"""fgx's import graph (read with ast, nothing imported) has no cycle.

Every ``import`` of an fgx module counts, the lazy ones inside functions as well: a lazy import
only defers a cycle to the first call that runs it. ``pytest -s tests/test_import_graph.py`` prints
the numbers (modules, packages, edges, cycles) that the docs quote."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def module_names(src: Path = SRC) -> dict[str, Path]:
    """{dotted name: file} of every module under src/fgx; a package is named by its __init__.py."""
    names = {}
    for path in sorted((src / "fgx").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(target: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``target`` names (``fgx.tasks.task_for`` -> ``fgx.tasks``)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def import_graph(src: Path = SRC) -> tuple[dict[str, set[str]], set[str]]:
    """({module: fgx modules it imports}, packages)."""
    known = module_names(src)
    packages = {name for name, path in known.items() if path.name == "__init__.py"}
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        base = name if name in packages else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                pkg = node.module or ""
                if node.level:
                    up = base.split(".")[:len(base.split(".")) - node.level + 1]
                    pkg = ".".join([*up, *([node.module] if node.module else [])])
                # `from fgx.tasks import strings` imports the module fgx.tasks.strings
                targets = [f"{pkg}.{a.name}" for a in node.names]
            for t in targets:
                hit = _resolve(t, known) if t.startswith("fgx") else None
                if hit is not None and hit != name:
                    graph[name].add(hit)
    return graph, packages


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle():
    # a finder that never reports one would let every later cycle pass
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_fgx_and_its_imports():
    graph, packages = import_graph()
    assert {"fgx", "fgx.tasks", "fgx.engines.torch"} <= packages
    assert "fgx.io" in graph["fgx.cli"]  # a lazy import inside a function counts
    assert "fgx.plan.paths" in graph["fgx.figures.rft_vs_rl"]  # `from fgx.plan import paths`


def test_fgx_has_no_import_cycle():
    graph, packages = import_graph()
    found = cycles(graph)
    edges = sum(map(len, graph.values()))
    print(f"\nfgx import graph: {len(graph) - len(packages)} modules, {len(packages)} packages, "
          f"{edges} import edges, {len(found)} cycles")
    assert found == [], "import cycles (each a set of modules that import each other): " + "; ".join(
        " <-> ".join(c) for c in found)


def by_name_imports() -> dict[str, set[str]]:
    """The imports fgx makes by name (importlib), read from what names them: the task families of the
    registry, their failure-mode classifiers and findings checks, and every figure's module."""
    from fgx.plan.figures import figure_modules
    from fgx.tasks.registry import FAMILIES, families

    figures = set(figure_modules().values())
    return {"fgx.tasks.registry": set(FAMILIES),
            "fgx.analysis.failures": {f.failure_modes for f in families() if f.failure_modes},
            "fgx.analysis.findings": {f.findings.check.partition(":")[0] for f in families() if f.findings},
            "fgx.dag.targets": figures, "fgx.figures.render": figures}


def test_imports_by_name_run_downhill_too():
    """With the imports made by name added, no module imports one that imports it, and no package of fgx
    (fgx.tasks, fgx.plan, fgx.figures, ...) imports one that imports it: a figure module is imported by name
    only from above the modules it imports (fgx.dag, fgx.figures.render), a task family only by the
    registry it does not import."""
    graph, _ = import_graph()
    extra = by_name_imports()
    assert "fgx.figures.countdown_transfer" in extra["fgx.dag.targets"] and "fgx.tasks.countdown" in extra[
        "fgx.tasks.registry"]
    for module, targets in extra.items():
        graph[module] |= {t for t in targets if t in graph}
    assert cycles(graph) == []

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    packages = {package(m): set() for m in graph}
    for module, targets in graph.items():
        packages[package(module)] |= {package(t) for t in targets} - {package(module)}
    found = cycles(packages)
    print(f"\nwith the imports by name: {sum(map(len, graph.values()))} module edges, "
          f"{sum(map(len, packages.values()))} edges between {len(packages)} top-level modules and packages")
    assert found == [], "packages that import each other: " + "; ".join(" <-> ".join(c) for c in found)


def reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for child in graph.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def test_a_task_family_imports_neither_the_registry_nor_another_family():
    """A family shares code through modules below the registry (fgx.tasks.family, .json_answer, .excluded),
    never through another family: no module of a family imports another family's or the registry, and
    nothing the family's package loads (what the registry imports by name) reaches either, directly or
    through a module that looks families up (fgx.tasks.contract's row check)."""
    from fgx.tasks.registry import FAMILIES

    graph, _ = import_graph()
    assert reach({"a": {"b"}, "b": {"c"}, "c": set()}, "a") == {"b", "c"}

    def family_of(module: str) -> str | None:
        return next((f for f in FAMILIES if module == f or module.startswith(f + ".")), None)

    def forbidden(own: str, targets) -> list[str]:
        return sorted(t for t in targets if t == "fgx.tasks.registry" or family_of(t) not in (None, own))

    found = [f"{m} imports {t}" for m in graph if family_of(m) for t in forbidden(family_of(m), graph[m])]
    found += [f"{f} loads {t}" for f in FAMILIES if f in graph for t in forbidden(f, reach(graph, f))]
    assert found == [], "a family reaches the registry or another family: " + "; ".join(found)
