"""The public API is pinned: a short sorted __all__, every name importable."""

from __future__ import annotations

import subprocess
import sys

import blindtest


def isort_order(names: list[str]) -> list[str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then everything else, each alphabetical."""
    return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert blindtest.__all__ == isort_order(blindtest.__all__)
    for name in blindtest.__all__:
        assert getattr(blindtest, name) is not None


def test_stats_all_is_sorted_and_complete() -> None:
    from blindtest import stats

    assert stats.__all__ == isort_order(stats.__all__)
    for name in stats.__all__:  # the package loads its submodules on first use
        getattr(stats, name)
    lazy_machinery = {"annotations", "importlib", "TYPE_CHECKING", "Any"}
    public = {n for n in vars(stats) if not n.startswith("_") and n not in lazy_machinery}
    modules = {n for n in public if type(getattr(stats, n)).__name__ == "module"}
    assert set(stats.__all__) == public - modules


def test_importing_blindtest_does_not_import_scipy() -> None:
    code = "import sys, blindtest, blindtest.cli; print('scipy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
