"""The import paths the public names had before the package was laid out in folders, kept
working for one release: ``import blindtest.stages.design`` (or ``from blindtest.analyzing
import build_report``) gives the module that now holds those names, with a
``DeprecationWarning`` naming the new path (``blindtest.designing`` and ``blindtest.auditing``
are packages now: their ``build_*`` names are handed on the same way). Nothing in blindtest
imports an old path.

A meta-path finder answers only for the names below; every other import goes by as usual.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

#: Old module -> the module holding its public names now (docs/python-api.md lists them).
MOVED = {
    "blindtest.stages": "blindtest.pipeline",
    "blindtest.stages.design": "blindtest.designing.stage",
    "blindtest.stages.generate": "blindtest.generation.stage",
    "blindtest.stages.judge": "blindtest.judging.stage",
    "blindtest.stages.audit": "blindtest.auditing.stage",
    "blindtest.stages.analyze": "blindtest.analysis.stage",
    "blindtest.stages.verify": "blindtest.pipeline.verify",
    "blindtest.stages.plan": "blindtest.planning.stage",
    "blindtest.stages.run": "blindtest.pipeline.run",
    "blindtest.analyzing": "blindtest.analysis.api",
    "blindtest.verifying": "blindtest.pipeline.recompute",
    "blindtest.slots": "blindtest.model.slots",
}

#: Old names of a module that is a package now: ``blindtest.designing.build_design`` (the
#: package's ``__getattr__`` hands them on, through :func:`moved_name`).
MOVED_NAMES = {
    "blindtest.designing": ("blindtest.designing.build", ("build_arrangement", "build_design")),
    "blindtest.auditing": ("blindtest.auditing.build", ("build_audit",)),
}


class MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path and loads it as the module that holds its names now."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} has moved to {new}; the old path goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module was loaded under its new name; nothing more to run."""


def moved_name(package: str, name: str) -> object:
    """``package.name`` for a name the package's module held before it was a package."""
    home, names = MOVED_NAMES[package]
    if name not in names:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    warnings.warn(
        f"{package}.{name} has moved to {home}.{name}; the old path goes in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(home), name)


def install() -> None:
    """Answer for the old paths (once per interpreter)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedFinder())
