"""The several-candidates benchmark's verdicts: judged by what each comparison adds between
sizes (so a command's start-up, however large, drops out), linear work passes, n log n work
passes, a quadratic term that matters fails, and bt-analyze or bt-verify at 30 s or more at
45,000 comparisons fails (synthetic figures; no benchmark is run)."""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _bench() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_candidates", BENCHMARKS / "bench_candidates.py"
        )
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


def _results(seconds: Callable[[str, float], float]) -> dict[str, dict[str, float]]:
    """Figures for the three sizes: ``seconds(stage, units)`` is a stage's time, wall and CPU."""
    sizes = {"sample3": (3000, 5668), "sample9": (9000, 10000), "all": (45000, 10000)}
    results: dict[str, dict[str, float]] = {}
    for name, (comparisons, answers) in sizes.items():
        row = {"comparisons": float(comparisons), "answers": float(answers)}
        for stage in ("design", "generate", "judge", "audit", "analyze", "verify"):
            units = answers if stage == "generate" else comparisons
            row[stage] = row[f"{stage}_cpu"] = seconds(stage, units)
        results[name] = row
    return results


def test_linear_work_behind_a_large_start_up_passes(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    results = _results(lambda stage, units: 3.0 + units * 0.0003)
    assert bench.report(results, bench.STAGES) == 0
    assert "MISSED" not in capsys.readouterr().out


def test_n_log_n_work_behind_a_large_start_up_passes(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    results = _results(lambda stage, units: 3.0 + units * math.log(units) * 3e-5)
    assert bench.report(results, bench.STAGES) == 0
    assert "MISSED" not in capsys.readouterr().out


def test_a_quadratic_term_fails_even_behind_the_start_up(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = _bench()
    # At 3,000 comparisons the quadratic term is 15 % of the audit's linear work (13 % of its
    # own work, 0.135 of 1.035 s): each comparison adds 0.00048 s from 3,000 to 9,000 and
    # 0.00111 s from 9,000 to 45,000, 2.31x.
    results = _results(
        lambda stage, units: 3.0 + units * 0.0003 + (1.5e-8 * units**2 if stage == "audit" else 0)
    )
    assert bench.report(results, bench.STAGES) == 1
    missed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("MISSED")]
    assert len(missed) == 1
    assert "audit: CPU each comparison added from 9,000 to 45,000 is 2.31x" in missed[0]


def test_a_quadratic_term_too_small_to_matter_passes(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    # 5 % of the linear work at 3,000 comparisons: (0.0003 + 0.00027) / (0.0003 + 0.00006).
    results = _results(
        lambda stage, units: 3.0 + units * 0.0003 + (5e-9 * units**2 if stage == "audit" else 0)
    )
    assert bench.report(results, bench.STAGES) == 0
    assert "audit: CPU each comparison added from 9,000 to 45,000 is 1.58x" in (
        capsys.readouterr().out
    )


def test_analysis_at_thirty_seconds_fails(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    results = _results(
        lambda stage, units: 3.0 + units * (0.00062 if stage == "analyze" else 0.0001)
    )
    assert results["all"]["analyze"] >= 30
    assert bench.report(results, bench.STAGES) == 1
    missed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("MISSED")]
    assert len(missed) == 1
    assert missed[0].startswith("MISSED  bt-analyze 30.9 s at 45,000 comparisons")


def test_generation_linear_in_answers_and_comparisons_passes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """bt-generate's requests follow the answers and the trials it writes the comparisons;
    the answers stop growing at 9,000 comparisons, so each comparison adds less after."""
    bench = _bench()

    def seconds(stage: str, units: float) -> float:
        return 0.5 + units * 0.0001

    results = _results(seconds)
    for row in results.values():
        row["generate"] = row["generate_cpu"] = (
            0.4 + row["answers"] * 3e-4 + row["comparisons"] * 1e-4
        )
    assert bench.report(results, bench.STAGES) == 0
    out = capsys.readouterr().out
    assert "MISSED" not in out
    generate = [line for line in out.splitlines() if line.startswith("generate ")]
    assert len(generate) == 2  # wall and CPU
    assert all(float(line.split()[-1].rstrip("x")) < 1 for line in generate)
