"""Benchmark: a design of 10 candidates through generation, a bot judge and the audit, at 100
and 1,000 prompts, with ``--pairs sample:3`` (300 and 3,000 comparisons) and ``--pairs all``
(4,500 and 45,000).

Each design is made by ``tests/candidate_runs.py`` (a bt-design preference design rewritten to
ten candidates on the simulator's two models, each with its own system prompt), then
``bt-generate`` (the simulator in its own process at 0 ms latency, ``--concurrency 32``),
``bt-judge --judge bot:length`` and ``bt-audit`` run as whole processes, each timed.
Generation asks one request per candidate and prompt that some comparison shows (the
simulator's count is checked against it), so its work grows with the answers, not the pairs.
Targets: each stage at 1,000 prompts at most 12x its time at 100 (linear), and bt-audit within
30 s at 45,000 comparisons. Exits 1 if a target is missed.

Run with ``python tests/benchmarks/bench_candidates.py [--prompts 100,1000] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: candidate_runs

from bench_generate import Server  # tests/benchmarks/, the script's own directory

HERE = Path(__file__).resolve().parent

BIN = Path(sys.executable).parent
HELPER = HERE.parent / "candidate_runs.py"
STAGES = ("generate", "judge", "audit")
MODES = ("sample:3", "all")
CANDIDATES = 10
LINEAR = 12.0
TIME_LIMIT = 30.0


def make_design(run: Path, prompts: int, mode: str, url: str) -> dict[str, Any]:
    """The design of ``CANDIDATES`` candidates over ``prompts`` prompts, written to RUN."""
    from candidate_runs import candidates_design, write_design
    from click.testing import CliRunner

    from blindtest import artifacts
    from blindtest.cli import cli

    source = run.parent / f"{run.name}-two-sided"
    prompt_path = run.parent / f"{run.name}-prompts.txt"
    prompt_path.write_text(
        "".join(f"Explain topic {i} in two sentences.\n" for i in range(prompts))
    )
    made = CliRunner().invoke(
        cli,
        [
            "design", str(source), "--prompts", str(prompt_path), "--protocol", "preference",
            "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url,
            "--trials", str(prompts), "--seed", "bench", "-q",
        ],
    )  # fmt: skip
    if made.exit_code != 0:
        sys.exit(f"bt-design: {made.stderr}")
    models = {
        f"c{i:02d}": {"model": "sim-large" if i % 2 else "sim-small", "system": f"You are {i}."}
        for i in range(CANDIDATES)
    }
    design = candidates_design(artifacts.load_design(source).design, models, mode)
    write_design(run, design)
    return design


def _argv(stage: str, run: Path) -> list[str]:
    extra = {
        "generate": ["--concurrency", "32"],
        "judge": ["--judge", "bot:length"],
        "audit": ["--force"],
    }[stage]
    return [sys.executable, str(HELPER), "accept", str(run), "--", stage, str(run), "-q", *extra]


def run_stages(prompts: int, mode: str, workdir: Path, server: Server) -> dict[str, float]:
    from blindtest.candidates import answer_owners

    run = workdir / f"run-{mode.replace(':', '')}-{prompts}"
    design = make_design(run, prompts, mode, server.base_url)
    answers = len(answer_owners(design))
    result: dict[str, float] = {"comparisons": len(design["arrangement"]), "answers": answers}
    env = dict(os.environ, OPENAI_API_KEY="sk-bench")
    server.admin("reset")
    for stage in STAGES:
        start = time.perf_counter()
        done = subprocess.run(_argv(stage, run), env=env, capture_output=True, text=True)
        result[stage] = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(
                f"bt-{stage} ({mode}, {prompts} prompts) exited {done.returncode}: {done.stderr}"
            )
    asked = server.admin("stats")["requests"]
    if asked != answers:
        sys.exit(f"{mode}, {prompts} prompts: {asked} requests for {answers} answers")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", default="100,1000")
    parser.add_argument("--keep", type=Path, help="keep the run directories here")
    options = parser.parse_args()
    sizes = [int(size) for size in options.prompts.split(",")]
    server = Server("--latency-ms", "0")
    try:
        with tempfile.TemporaryDirectory() as scratch:
            workdir = options.keep or Path(scratch)
            workdir.mkdir(parents=True, exist_ok=True)
            results = {
                (mode, size): run_stages(size, mode, workdir, server)
                for mode in MODES
                for size in sizes
            }
    finally:
        server.close()
    return report(results, sizes)


def report(results: dict[tuple[str, int], dict[str, float]], sizes: list[int]) -> int:
    """The table per mode, then one line per target: met or missed."""
    verdicts: list[tuple[bool, str]] = []
    for mode in MODES:
        rows = [results[(mode, size)] for size in sizes]
        comparisons = [int(row["comparisons"]) for row in rows]
        answers = [int(row["answers"]) for row in rows]
        print(
            f"{CANDIDATES} candidates, --pairs {mode}: prompts {sizes}, comparisons "
            f"{comparisons}, answers asked {answers}"
        )
        for stage in STAGES:
            values = [row[stage] for row in rows]
            ratio = values[-1] / values[0]
            cells = "".join(f"{value:>9.1f} s" for value in values)
            print(f"  {stage:<10}{cells}{ratio:>8.1f}x")
            growth = sizes[-1] / sizes[0]
            bound = LINEAR * growth / 10
            verdicts.append(
                (ratio <= bound, f"{mode} {stage}: {ratio:.1f}x for {growth:.0f}x the prompts")
            )
        audit = rows[-1]["audit"]
        verdicts.append(
            (
                audit <= TIME_LIMIT,
                f"{mode} audit at {int(rows[-1]['comparisons'])} comparisons: {audit:.1f} s",
            )
        )
    missed = 0
    for met, line in verdicts:
        print(f"{'met   ' if met else 'MISSED'} {line}")
        missed += not met
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
