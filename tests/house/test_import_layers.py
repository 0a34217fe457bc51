"""The layers are folders: where a module lives says what it may import.

Read from the source (``ast``), lazy imports included, not from what happens to load. From the
top: ``cli/`` > ``pipeline/`` (``blindtest run``, the chains of stages, the verifier, which
recomputes every stage) > the stages (``designing/``, ``generation/``, ``judging/``,
``auditing/``, ``analysis/``, ``planning/``) > ``transport/`` and ``present/`` > ``model/`` >
``rundir/`` >
``stats/`` > ``errors`` and ``version``. An import goes down, or stays inside its own folder;
never from one stage to another, never between ``transport/`` and ``present/``, never up.
``simulator/`` is a tool of its own (only the demos start it), and the package's face
(``blindtest/__init__.py``) hands the stage functions out lazily.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "blindtest"

#: Each top folder (or module) directly under blindtest/ and its layer, from the bottom.
LAYERS: dict[str, int] = {
    "errors": 0, "version": 0, "reportfmt": 0, "_moved": 0,
    "stats": 1,
    "rundir": 2,
    "model": 3,
    "transport": 4, "present": 4,
    "designing": 5, "generation": 5, "judging": 5, "auditing": 5, "analysis": 5, "planning": 5,
    "pipeline": 6,
    "cli": 7, "__main__": 8, "blindtest": 8,
    "simulator": 9,
}  # fmt: skip


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def folder(module: str) -> str:
    """The top folder (or top module) a module sits in: ``blindtest.model.rng`` -> ``model``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "blindtest"


def imported(tree: ast.AST, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """Every blindtest module an ``import`` names (at any depth, lazy ones too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield (full if full in known else node.module), node.lineno


def _typing_only(tree: ast.Module) -> ast.Module:
    """The package's ``__init__`` without its ``if TYPE_CHECKING:`` block: the names it shows
    type checkers (the stage functions) load lazily at run time, never on ``import
    blindtest``."""
    body = [
        node
        for node in tree.body
        if not (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        )
    ]
    return ast.Module(body=body, type_ignores=[])


def edges() -> set[tuple[str, str, str]]:
    """(importer, imported, where) for every import between blindtest modules."""
    known = modules()
    found = set()
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if name == "blindtest":
            tree = _typing_only(tree)
        for target, line in imported(tree, known):
            if target.split(".")[0] == "blindtest":
                found.add((name, target, f"{path.relative_to(PACKAGE.parent)}:{line}"))
    return found


def allowed(importer: str, target: str) -> bool:
    source, goal = folder(importer), folder(target)
    if source == goal:
        return True
    if goal == "simulator" or source == "simulator":
        # A tool of its own: the demos start it; it imports nothing of blindtest's.
        return source == "cli" and goal == "simulator"
    return LAYERS[goal] < LAYERS[source]


def test_every_folder_has_a_layer() -> None:
    for name in modules():
        assert folder(name) in LAYERS, f"{name}: put it in a folder of LAYERS"


def test_at_most_six_modules_sit_directly_under_the_package() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 6, top


def test_imports_run_down_the_layers_and_never_between_stages() -> None:
    wrong = [
        f"{where} imports {target}"
        for importer, target, where in sorted(edges())
        if not allowed(importer, target)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_rule_reads_the_source() -> None:
    found = {(a, b) for a, b, _ in edges()}
    assert ("blindtest.cli.design", "blindtest.designing.stage") in found
    assert ("blindtest.pipeline.recompute", "blindtest.auditing.build") in found
    assert not allowed("blindtest.auditing.build", "blindtest.generation.generate")
    assert not allowed("blindtest.model.slots", "blindtest.generation.generate")
    assert not allowed("blindtest.stats.pair", "blindtest.rundir.artifacts")
    assert not allowed("blindtest.present.render", "blindtest.transport.client")
    assert allowed("blindtest.cli.run", "blindtest.pipeline.chain")
    assert allowed("blindtest.pipeline.recompute", "blindtest.generation.generate")


def test_no_module_imports_the_package_top() -> None:
    # The package's face (``blindtest/__init__.py``) loads the stages lazily; a module below
    # it that imports it (for ``__version__``, say) points up at everything it exports.
    found = sorted(where for _, target, where in edges() if target == "blindtest")
    assert found == []


def test_the_package_top_scan_sees_what_it_must() -> None:
    known = modules()
    names = {t for t, _ in imported(ast.parse("from blindtest import __version__\n"), known)}
    assert names == {"blindtest"}
    names = {t for t, _ in imported(ast.parse("from blindtest import reportfmt\n"), known)}
    assert names == {"blindtest.reportfmt"}


def _top_imports(tree: ast.AST) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module, node.lineno
            for alias in node.names:
                yield f"{node.module}.{alias.name}", node.lineno


def test_no_library_module_imports_click() -> None:
    found = []
    for name, path in modules().items():
        if folder(name) == "cli":
            continue
        for target, line in _top_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if target.split(".")[0] == "click":
                found.append(f"{name}:{line}")
    assert found == []


#: What opens a network connection or a listening socket.
NETWORK = {
    "socket", "socketserver", "ssl", "aiohttp", "http.client", "http.server", "urllib.request",
    "asyncio.open_connection", "asyncio.start_server", "asyncio.open_unix_connection",
}  # fmt: skip
#: The clients (live and Batch API, and the one reading of aiohttp's errors), the simulator,
#: and the judging page.
NETWORK_ALLOWED = (
    "blindtest.transport.client",
    "blindtest.transport.batch_client",
    "blindtest.transport.failures",
    "blindtest.simulator",
    "blindtest.judging.web",
)


def _network_uses(tree: ast.AST) -> Iterator[tuple[str, int]]:
    for target, line in _top_imports(tree):
        if target in NETWORK or target.split(".")[0] in NETWORK:
            yield target, line
    for node in ast.walk(tree):  # asyncio.open_connection(...) without importing the name
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            continue
        if f"{node.value.id}.{node.attr}" in NETWORK:
            yield f"{node.value.id}.{node.attr}", node.lineno


def test_only_the_client_and_the_simulator_open_sockets() -> None:
    found = []
    for name, path in modules().items():
        if name.startswith(NETWORK_ALLOWED):
            continue
        for target, line in _network_uses(ast.parse(path.read_text(encoding="utf-8"))):
            found.append(f"{name}:{line} {target}")
    assert found == []


def test_the_socket_scan_sees_what_it_must() -> None:
    client = PACKAGE.joinpath("transport", "client.py").read_text()
    uses = {t for t, _ in _network_uses(ast.parse(client))}
    assert "aiohttp" in uses
    code = "import asyncio\nasync def f():\n    await asyncio.open_connection('h', 1)\n"
    assert {t for t, _ in _network_uses(ast.parse(code))} == {"asyncio.open_connection"}
    assert not list(_network_uses(ast.parse("from http import HTTPStatus\n")))


# --------------------------------------------------------------------------- no import circle


def import_graph() -> dict[str, set[str]]:
    """Importer -> imported, for every import between blindtest modules (lazy ones inside a
    function too; a package's ``if TYPE_CHECKING:`` names are left out as ``edges`` does)."""
    graph: dict[str, set[str]] = {name: set() for name in modules()}
    for importer, target, _ in edges():
        if target in graph and target != importer:
            graph[importer].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_circle_finder_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_anywhere_even_through_lazy_imports() -> None:
    found = circles(import_graph())
    assert found == [], "modules that import each other in a circle: " + "; ".join(
        " <-> ".join(group) for group in found
    )
