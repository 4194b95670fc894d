"""The import graph between prefeval_core's packages and root modules (docs/architecture.md).

Usage: ``python scripts/import_graph.py [--mermaid] [--layers]``. A *unit* is a subpackage
(``data``, ``protocol``, ...) or a root module (``counts``, ``session``, ...). Every
``import prefeval_core.X...`` / ``from prefeval_core.X... import`` / relative import in a unit's
files is an edge unit -> X (imports inside ``if TYPE_CHECKING:`` are left out: they do not run).
Prints the edges with the files behind them, the cycles (strongly connected components), and
with ``--layers`` the imports that go upward against the intended layering of
docs/architecture.md. Reads the source only; imports nothing from the project.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "prefeval_core"


def contract_layers() -> list[list[str]]:
    """The layers of the import contract (pyproject.toml, contract ``layers``), lowest first, and the
    package's entry modules on top: one place states the layering; this script draws it and
    ``lint-imports`` enforces it."""
    config = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c.get("id") == "layers"]
    return [*([name.strip() for name in layer.split("|")] for layer in reversed(contract["layers"])), ["__main__", "__init__"]]


# a unit may import units of its own layer or below; the package's entry modules sit on top
LAYERS: dict[str, int] = {name: level for level, names in enumerate(contract_layers()) for name in names}
LAYER_NAMES = [" | ".join(names) for names in contract_layers()]


def unit_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                for sub in ast.walk(child):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def imported_units(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    package = (
        path.relative_to(ROOT.parent).with_suffix("").parts[:-1] if path.is_relative_to(ROOT) else ()
    )  # e.g. ("prefeval_core", "data")
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        targets: list[tuple[str, ...]] = []
        if isinstance(node, ast.Import):
            targets = [tuple(alias.name.split(".")) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = tuple(node.module.split(".")) if node.module else ()
                full = base + module
                targets = [full] if module else [(*full, alias.name) for alias in node.names]
            elif node.module:
                module = tuple(node.module.split("."))
                targets = [(*module, alias.name) for alias in node.names] if module == ("prefeval_core",) else [module]
        for target in targets:
            if len(target) >= 2 and target[0] == "prefeval_core":
                name = target[1]
                if (ROOT / name).is_dir() or (ROOT / f"{name}.py").exists():
                    found.add(name)
    return found


def graph() -> dict[str, dict[str, set[str]]]:
    """unit -> imported unit -> the files (relative to prefeval_core/) that import it."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in sorted(ROOT.rglob("*.py")):
        source = unit_of(path)
        edges[source]  # every unit appears, even without imports
        for target in imported_units(path):
            if target != source:
                edges[source][target].add(str(path.relative_to(ROOT)))
    return edges


def cycles(edges: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Strongly connected components with more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def shell_imports() -> dict[str, set[str]]:
    """Units of prefeval_core imported by the dashboard (app.py, pages/, ui/), per shell."""
    top = ROOT.parent
    found: dict[str, set[str]] = defaultdict(set)
    for path in [top / "app.py", *sorted((top / "pages").glob("*.py")), *sorted((top / "ui").rglob("*.py"))]:
        if path.exists():
            shell = "app" if path.name == "app.py" else path.relative_to(top).parts[0]
            found[shell] |= imported_units(path)
    return found


def _node(unit: str) -> str:
    """A mermaid node id for a unit (``__init__`` -> ``init``)."""
    return unit.strip("_")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mermaid", action="store_true", help="print a mermaid flowchart of the unit graph")
    parser.add_argument("--layers", action="store_true", help="print the imports that go upward against the intended layering")
    args = parser.parse_args()
    edges = graph()
    if args.mermaid:
        print("flowchart BT")
        by_layer: dict[int, list[str]] = defaultdict(list)
        for unit in sorted(edges):
            by_layer[LAYERS.get(unit, len(LAYER_NAMES))].append(unit)
        for level in sorted(by_layer):
            title = LAYER_NAMES[level] if level < len(LAYER_NAMES) else "unplaced"
            print(f'    subgraph L{level}["{level} {title}"]')
            print("        " + " & ".join(_node(u) for u in by_layer[level]))
            print("    end")
        for source in sorted(edges):
            for target in sorted(edges[source]):
                upward = LAYERS.get(target, 0) > LAYERS.get(source, 0)
                print(f"    {_node(source)} {'-. upward .->' if upward else '-->'} {_node(target)}")
        return
    for source in sorted(edges):
        print(f"{source}: {', '.join(sorted(edges[source])) or '-'}")
    print("\ncycles (strongly connected components):")
    for component in cycles(edges):
        print("  " + " <-> ".join(component))
    print("\ndashboard shells:")
    for shell, units in sorted(shell_imports().items()):
        print(f"  {shell}: {', '.join(sorted(units))}")
    if args.layers:
        print("\nupward imports (unit in layer L imports a unit of a higher layer):")
        for source in sorted(edges):
            for target in sorted(edges[source]):
                ls, lt = LAYERS.get(source), LAYERS.get(target)
                if ls is None or lt is None:
                    print(f"  ? {source} -> {target} (unit not in LAYERS)")
                elif lt > ls:
                    files = ", ".join(sorted(edges[source][target]))
                    print(f"  {source} ({LAYER_NAMES[ls]}) -> {target} ({LAYER_NAMES[lt]}): {files}")


if __name__ == "__main__":
    main()
