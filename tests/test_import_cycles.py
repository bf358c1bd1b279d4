"""No import circles, and no arrow back up, in ``calibrate_app``, ``judges`` and ``labels``.

The graph is grimp's (the library under import-linter), with every import it finds: at module
level, inside functions, and under ``if TYPE_CHECKING:``. A circle is a strongly connected
component of more than one module; each one found is printed as a path that closes on itself,
with the line of every import on it, so the message says which import to move.

An arrow back up is a circle that shows only when each subpackage is seen as one room: within
every package, its modules and its subpackages (each squashed to one node) are siblings, and
the siblings must import each other in one direction only, so that they stack into floors (the
same rule as import-linter's ``acyclic_siblings`` contract). ``judges.reporting`` importing
``judges.alignment.store`` while ``judges.alignment.dev`` imported ``judges.reporting.inputs``
was one: no two files formed a circle, but the two folders stood each above the other.
"""

from __future__ import annotations

import itertools

import grimp

PACKAGES = ("calibrate_app", "judges", "labels")


def _components(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _circle(graph: grimp.ImportGraph, component: list[str]) -> str:
    """One path through ``component`` back to where it started, each import with its line."""
    start, members = component[0], set(component)
    path, seen = [start], {start}
    while True:
        nexts = sorted(graph.find_modules_directly_imported_by(path[-1]) & members)
        if start in nexts and len(path) > 1:
            path.append(start)
            break
        step = next((m for m in nexts if m not in seen), start)
        path.append(step)
        if step == start or step in seen:
            break
        seen.add(step)
    steps = []
    for importer, imported in itertools.pairwise(path):
        lines = [d["line_number"] for d in graph.get_import_details(importer=importer,
                                                                    imported=imported)]
        steps.append(f"  {importer} -> {imported} (line {', '.join(map(str, lines))})")
    return f"{len(component)} modules: {', '.join(component)}\n" + "\n".join(steps)


def test_the_three_packages_have_no_import_circle() -> None:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False)
    internal = {m for m in graph.modules if m.split(".")[0] in PACKAGES}
    edges = {m: graph.find_modules_directly_imported_by(m) & internal for m in internal}
    circles = _components(edges)
    assert not circles, "import circles:\n" + "\n".join(_circle(graph, c) for c in circles)


def test_the_search_finds_a_circle() -> None:
    # The check above is only as good as the search: a made-up graph with one circle.
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _components(edges) == [["a", "b", "c"]]


def _sibling_edges(graph: grimp.ImportGraph, package: str) -> dict[str, set[str]]:
    """Imports between the children of ``package``, each subpackage squashed into one node."""

    def sibling(module: str) -> str:
        return f"{package}.{module[len(package) + 1:].split('.')[0]}"

    edges: dict[str, set[str]] = {child: set() for child in graph.find_children(package)}
    for importer in graph.find_descendants(package):
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported.startswith(f"{package}.") and sibling(imported) != sibling(importer):
                edges[sibling(importer)].add(sibling(imported))
    return edges


def _arrows_back_up(graph: grimp.ImportGraph) -> list[str]:
    """Each circle among the siblings of any package, with the module imports that make it."""
    packages = sorted(m for m in graph.modules
                      if m.split(".")[0] in PACKAGES and graph.find_children(m))
    found = []
    for package in packages:
        edges = _sibling_edges(graph, package)
        for component in _components(edges):
            members = set(component)
            imports = sorted(
                f"    {importer} -> {imported}"
                for node in component for other in sorted(edges[node] & members)
                for importer in sorted({node} | graph.find_descendants(node))
                for imported in sorted(graph.find_modules_directly_imported_by(importer))
                if imported == other or imported.startswith(f"{other}.")
            )
            found.append(f"in {package}: {', '.join(component)}\n" + "\n".join(imports))
    return found


def test_no_arrow_runs_back_up() -> None:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False)
    back_up = _arrows_back_up(graph)
    assert not back_up, "subpackages that import each other (move the shared piece down):\n" + (
        "\n".join(back_up))


def test_the_search_finds_an_arrow_back_up() -> None:
    # Two subpackages whose files import each other's only one way round: no module circle,
    # but the folders stand each above the other.
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.a.x", "p.b", "p.b.y", "p.b.z", "p.c"):
        graph.add_module(module)
    graph.add_import(importer="p.a.x", imported="p.b.y")
    graph.add_import(importer="p.b.z", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a.x")
    assert _components(_sibling_edges(graph, "p")) == [["p.a", "p.b"]]
