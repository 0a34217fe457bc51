"""the import graph read from the source (``ast``), not from what happens to load.

The layers, from the top: the click layer (``blindtest/cli/``) -> the modules above the stages
(the verifier, which recomputes every stage, and ``chain``, which says how far a chained run
got) -> the stages -> the shared modules -> ``blindtest/stats``. An import goes down, or
sideways between shared modules (or between the statistics modules, or inside one stage's own
package); never from one stage to another, never up.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "blindtest"

STAGES = ("design", "generate", "judge", "audit", "analyze", "verify", "plan")
#: Above the stages: they may import any stage (the verifier recomputes every stage; ``chain``
#: says how far a chained run got; ``stages.run`` chains the stage functions).
ABOVE = ("verifying", "chain")
#: ``blindtest run`` as a library function: it chains the stage functions (and ``chain``).
COMPOSE = ("stages.run",)
#: Shared concepts every stage may use (some named before they land, so the graph classifies
#: them the day they do).
SHARED = (
    "artifacts", "errors", "slots", "endpoints", "hints", "rng", "normalize", "census",
    "prompts", "outputs", "checks", "render", "scoring", "protocols",
    "artifact_types", "report", "provenance", "flow",
    "openai_wire", "reportfmt", "sides",
    "assignment", "markup", "reportpage", "identity", "screen", "oslock", "locking", "stages",
    "version", "render_candidates",
    "derived", "prompt_size", "preflight", "keynames",
    "pairing", "candidates",
)  # fmt: skip
#: The parts of the judging package other stages read: the registry of judge kinds (which
#: names the module making each kind and never imports it), the picks contract, the tell bots
#: (the audit replays them) and a machine judge's diagnostics and calibration (the analysis
#: reports them). The
#: rest of ``blindtest.judging`` is the judge stage.
SHARED_JUDGING = (
    "judging.kinds", "judging.picks", "judging.bots", "judging.llm.diagnostics",
    "judging.llm.calibration",
)  # fmt: skip
#: Modules and packages that belong to a stage (they import each other freely). The terminal
#: session is a judge the driver (``judging.driver``) asks, so it sits in the judge stage; so
#: does the LLM judge. Each stage's batch modes sit in that stage (they make its rows or its
#: picks).
STAGE_PACKAGES = {
    "designing": "design", "generating": "generate", "auditing": "audit",
    "analyzing": "analyze", "planning": "plan",
    "analysis": "analyze", "judging": "judge",
    "generation": "generate", "powersearch": "plan", "designrequest": "design",
    "candidateplan": "design", "sidesfile": "design",
}  # fmt: skip
#: The half of ``blindtest/generation/`` that every stage asking a model shares (the judge
#: stage's LLM judge too): how a request travels and what comes back. The rest of the package
#: is the generate stage's.
GENERATION_SHARED = (
    "client", "endpoint", "failures", "flow", "wire", "retry", "batch", "batch_client",
    "batch_run",
)  # fmt: skip
#: A tool of its own: it imports nothing of blindtest's but itself.
TOOLS = ("simulator",)

RANK = {"stats": 0, "shared": 1, "stage": 2, "above": 3, "compose": 3.5, "cli": 4, "tool": 4}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> tuple[str, str]:
    """(layer, unit): the unit is the stage a module belongs to, or the module's top name."""
    parts = module.split(".")
    if parts[0] != "blindtest":
        raise AssertionError(module)
    if len(parts) == 1:
        return "shared", "blindtest"  # the package: __version__ and lazy exports
    top = parts[1]
    if top == "stages" and len(parts) > 2:
        # A stage's library function sits in its stage (blindtest.stages.judge: the judge
        # stage; blindtest.stages.verify: the verifier's); the chain sits above them all.
        if f"stages.{parts[2]}" in COMPOSE:
            return "compose", f"stages.{parts[2]}"
        top = {"verify": "verifying"}.get(parts[2], parts[2])
    for shared in SHARED_JUDGING:
        if module == f"blindtest.{shared}" or module.startswith(f"blindtest.{shared}."):
            return "shared", shared
    if top == "generation" and len(parts) > 2 and parts[2] in GENERATION_SHARED:
        return "shared", f"generation.{parts[2]}"
    if top in ("cli", "__main__"):
        return "cli", "cli"
    if top == "stats":
        return "stats", "stats"
    if top in TOOLS:
        return "tool", top
    if top in ABOVE:
        return "above", top
    if top in STAGES:
        return "stage", top
    if top in STAGE_PACKAGES:
        return "stage", STAGE_PACKAGES[top]
    if top in SHARED:
        return "shared", top
    raise AssertionError(
        f"blindtest.{top} is in no layer: name it in STAGES, SHARED, ABOVE or TOOLS "
        "(tests/test_import_layers.py)"
    )


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


def violation(importer: str, target: str) -> tuple[str, str] | None:
    """The (unit, unit) pair an import breaks the layering with, or None when it is fine."""
    (from_layer, from_unit), (to_layer, to_unit) = layer(importer), layer(target)
    if from_unit == to_unit:
        return None  # inside one module's own package
    if from_layer == "tool" or to_layer == "tool":
        ok = from_layer == "cli" and to_layer == "tool"  # the demo starts the simulator
        return None if ok else (from_unit, to_unit)
    if from_layer == to_layer and from_layer in ("cli", "shared", "stats"):
        return None
    if RANK[to_layer] < RANK[from_layer]:
        return None
    return from_unit, to_unit


def violations() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for importer, target, where in sorted(edges()):
        pair = violation(importer, target)
        if pair is not None:
            found.setdefault(pair, []).append(f"{where} imports {target}")
    return found


def test_done_when_every_module_sits_in_a_layer() -> None:
    for name in modules():
        layer(name)


def test_done_when_the_graph_is_read_from_the_source() -> None:
    # The reader sees what it must: the cli imports stages, stages import shared modules.
    found = {(a, b) for a, b, _ in edges()}
    assert ("blindtest.cli.design", "blindtest.designing") in found
    assert ("blindtest.generating", "blindtest.slots") in found
    assert ("blindtest.verifying", "blindtest.auditing") in found  # the verifier sits above
    assert violation("blindtest.auditing", "blindtest.generating") == ("audit", "generate")
    assert violation("blindtest.slots", "blindtest.generating") == ("slots", "generate")
    assert violation("blindtest.stats.pair", "blindtest.artifacts") == ("stats", "artifacts")
    assert violation("blindtest.cli.run", "blindtest.chain") is None
    assert violation("blindtest.verifying", "blindtest.generating") is None


def test_done_when_cli_stages_shared_stats_and_no_stage_imports_a_stage() -> None:
    found = violations()
    assert found == {}, "imports that go up or from stage to stage: " + "; ".join(
        w for ws in found.values() for w in ws
    )


def test_no_module_imports_the_package_top() -> None:
    # The package's face (``blindtest/__init__.py``) loads the stages lazily; a module below
    # it that imports it (for ``__version__``, say) points up at everything it exports.
    found = sorted(where for _, target, where in edges() if target == "blindtest")
    assert found == []


def test_the_package_top_scan_sees_what_it_must() -> None:
    known = modules()
    names = {t for t, _ in imported(ast.parse("from blindtest import __version__\n"), known)}
    assert names == {"blindtest"}
    names = {t for t, _ in imported(ast.parse("from blindtest import artifacts\n"), known)}
    assert names == {"blindtest.artifacts"}


# --------------------------------------------------------------------------- item 7


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
        if layer(name)[0] == "cli":
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
    "blindtest.generation.client",
    "blindtest.generation.batch_client",
    "blindtest.generation.failures",
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
    client = PACKAGE.joinpath("generation", "client.py").read_text()
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
