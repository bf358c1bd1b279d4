"""No import circles: no module of ``calibrate_app``, ``judges`` or ``labels`` imports itself back.

The graph is grimp's (the library under import-linter), with every import it finds: at module
level, inside functions, and under ``if TYPE_CHECKING:``. A circle is a strongly connected
component of more than one module; each one found is printed as a path that closes on itself,
with the line of every import on it, so the message says which import to move.
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
