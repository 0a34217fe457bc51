"""Benchmark: start-up of every command as a whole process.

Times ``--help`` of ``blindtest`` and every ``bt-*`` script, and ``bt-plan`` with its default
table, as the processes a user starts, against ``python -c pass`` in the same run (medians of
interleaved rounds). Targets: every ``--help`` under 0.25 s, ``bt-plan`` under 0.5 s, on the
machine it runs on; also printed as a ratio to ``python -c pass``. Exits 1 if a target is
missed. Run with ``python tests/benchmarks/bench_startup.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]
HELP_LIMIT = 0.25
PLAN_LIMIT = 0.5

COMMANDS: list[tuple[str, list[str], float]] = [
    ("blindtest --help", [str(BIN / "blindtest"), "--help"], HELP_LIMIT),
    *(
        (f"bt-{stage} --help", [str(BIN / f"bt-{stage}"), "--help"], HELP_LIMIT)
        for stage in ("design", "generate", "judge", "audit", "analyze", "verify", "plan")
    ),
    ("bt-plan", [str(BIN / "bt-plan")], PLAN_LIMIT),
]


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    # As pip does for an installed package: a checkout run under PYTHONDONTWRITEBYTECODE
    # would otherwise compile blindtest's modules again in every process timed.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "blindtest")], check=True)
    baseline_argv = [sys.executable, "-c", "pass"]
    times: dict[str, list[float]] = {name: [] for name, _, _ in COMMANDS}
    baseline: list[float] = []
    for argv in (baseline_argv, *(argv for _, argv, _ in COMMANDS)):
        _time(argv)  # warm the page cache and the .pyc files
    for _ in range(rounds):
        baseline.append(_time(baseline_argv))
        for name, argv, _ in COMMANDS:
            times[name].append(_time(argv))
    base = statistics.median(baseline)
    print(f"start-up, medians of {rounds} rounds; python -c pass = {base * 1000:.0f} ms")
    print(f"{'command':<22} {'ms':>6} {'x pass':>7} {'limit':>7}")
    missed = []
    for name, _, limit in COMMANDS:
        value = statistics.median(times[name])
        verdict = "ok" if value <= limit else "MISSED"
        print(f"{name:<22} {value * 1000:6.0f} {value / base:7.1f} {limit * 1000:5.0f}ms {verdict}")
        if value > limit:
            missed.append(name)
    if missed:
        print("missed: " + ", ".join(missed), file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
