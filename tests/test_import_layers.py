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

PACKAGE = Path(__file__).resolve().parent.parent / "blindtest"

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


def edges() -> set[tuple[str, str, str]]:
    """(importer, imported, where) for every import between blindtest modules."""
    known = modules()
    found = set()
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
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
