"""Benchmark: the whole pipeline at 3,000 and 30,000 triangle trials.

A triangle design of N trials (3N slots) goes through ``bt-design``, ``bt-generate`` (against the
simulator in its own process at 0 ms latency, ``--concurrency 32``), ``bt-judge --judge
bot:length``, ``bt-audit``, ``bt-analyze`` and ``bt-verify``, each timed as the whole process a
user starts, and bt-generate's peak memory taken from ``resource.getrusage(RUSAGE_CHILDREN)``.
Targets: each stage at 30,000 trials at most 12x its time at 3,000 (linear); bt-audit,
bt-analyze and bt-verify within 30 s each at 30,000; bt-generate's peak memory grows by at most
1 MiB per 1,000 trials between the sizes. Exits 1 if a target is missed.

Run with ``python tests/benchmarks/bench_pipeline.py [--sizes 3000,30000] [--keep DIR]
[--protocol pair|preference]`` (the targets are the triangle's; another protocol is for
profiling its readers);
``--keep DIR --reuse`` times only bt-audit, bt-analyze and bt-verify again (with ``--force``) on
the runs an earlier ``--keep DIR`` left there, for work on those stages.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_generate import Server  # tests/benchmarks/, the script's own directory

BIN = Path(sys.executable).parent
STAGES = ("design", "generate", "judge", "audit", "analyze", "verify")
LINEAR = 12.0
TIME_LIMIT = 30.0
#: bt-generate's peak memory may grow by this many MiB per 1,000 trials (what it holds per
#: slot: the ledger's offsets, the columns of the design).
MIB_PER_1000_TRIALS = 1.0


def _prompts(path: Path, count: int) -> None:
    path.write_text("".join(f"Explain topic number {i} in two sentences.\n" for i in range(count)))


def _child_peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


READERS = ("audit", "analyze", "verify")


def _stage_argv(
    stage: str, run: Path, trials: int, prompts: Path, url: str, protocol: str = "triangle"
) -> list[str]:
    command = str(BIN / f"bt-{stage}")
    if stage == "design":
        return [
            command, str(run), "--prompts", str(prompts), "--a", "sim-large", "--b", "sim-small",
            "--a-url", url, "--b-url", url, "--trials", str(trials), "--seed", "bench", "-q",
            "--protocol", protocol,
        ]  # fmt: skip
    if stage == "generate":
        return [command, str(run), "--concurrency", "32", "-q"]
    if stage == "judge":
        return [command, str(run), "--judge", "bot:length", "-q"]
    if stage in ("audit", "analyze"):
        return [command, str(run), "-q", "--force"]  # --force: a reused run has them
    return [command, str(run), "-q"]


def run_pipeline(
    trials: int,
    workdir: Path,
    url: str,
    stages: tuple[str, ...] = STAGES,
    protocol: str = "triangle",
) -> dict[str, float]:
    """Seconds per stage, and ``generate_peak_mib`` (``workdir/run-<trials>``, with the
    protocol's name after the trials when it is not the triangle)."""
    prompts = workdir / f"prompts-{trials}.txt"
    _prompts(prompts, trials)
    run = workdir / (f"run-{trials}" if protocol == "triangle" else f"run-{trials}-{protocol}")
    env = dict(os.environ, OPENAI_API_KEY="sk-bench", BLINDTEST_A_KEY="sk-bench")
    env["BLINDTEST_B_KEY"] = "sk-bench"
    result: dict[str, float] = {}
    for stage in stages:
        argv = _stage_argv(stage, run, trials, prompts, url, protocol)
        if stage == "generate":
            # A child's peak is only seen by getrusage after it exits, and RUSAGE_CHILDREN keeps
            # the largest of all children: measure generate in a wrapper process of its own.
            argv = [sys.executable, __file__, "--peak-of", *argv]
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        result[stage] = time.perf_counter() - start
        if done.returncode not in (0, 1):
            sys.exit(f"bt-{stage} at {trials} trials exited {done.returncode}: {done.stderr}")
        if stage == "generate":
            result["generate_peak_mib"] = float(done.stdout.strip().splitlines()[-1]) / 1024
    return result


def _peak_of(argv: list[str]) -> int:
    done = subprocess.run(argv, check=False, stdout=subprocess.DEVNULL)
    print(_child_peak_kib())
    return done.returncode


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--peak-of":
        return _peak_of(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3000,30000")
    parser.add_argument("--keep", type=Path, help="keep the run directories here")
    parser.add_argument(
        "--reuse", action="store_true", help="with --keep: time only audit, analyze, verify"
    )
    parser.add_argument(
        "--protocol", default="triangle", choices=("triangle", "pair", "preference")
    )
    options = parser.parse_args()
    if options.reuse and options.keep is None:
        parser.error("--reuse needs --keep DIR")
    sizes = [int(size) for size in options.sizes.split(",")]
    stages = READERS if options.reuse else STAGES
    print(f"load average before: {_load()}")
    server = Server("--latency-ms", "0")
    try:
        with tempfile.TemporaryDirectory() as scratch:
            workdir = options.keep or Path(scratch)
            workdir.mkdir(parents=True, exist_ok=True)
            results = {
                size: run_pipeline(size, workdir, server.base_url, stages, options.protocol)
                for size in sizes
            }
    finally:
        server.close()
    print(f"load average after: {_load()}")
    return report(results, sizes, stages, options.protocol)


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _growth(key: str, first: float, last: float, small: int, large: int) -> tuple[bool, str]:
    """Whether ``key`` grows within its limit from ``small`` to ``large`` trials, in words."""
    if key.endswith("mib"):
        per = (last - first) / ((large - small) / 1000)
        return per <= MIB_PER_1000_TRIALS, (
            f"bt-generate's peak memory grows {per:.2f} MiB per 1,000 trials "
            f"(limit {MIB_PER_1000_TRIALS:.1f} MiB)"
        )
    ratio, limit = last / first, LINEAR * large / small / 10
    return ratio <= limit, (
        f"{key} time grows {ratio:.1f}x for {large / small:g}x the trials (limit {limit:.1f}x)"
    )


def report(
    results: dict[int, dict[str, float]],
    sizes: list[int],
    stages: tuple[str, ...],
    protocol: str = "triangle",
) -> int:
    """The table, then one line per target: met or missed. 1 when any target is missed."""
    print(f"pipeline, {protocol}, simulator at 0 ms, --concurrency 32; sizes {sizes}")
    print(f"{'stage':<10}" + "".join(f"{size:>10}" for size in sizes) + "     ratio")
    verdicts: list[tuple[bool, str]] = []
    small, large = sizes[0], sizes[-1]
    keys = (*stages, "generate_peak_mib") if "generate" in stages else stages
    for key in keys:
        values = [results[size][key] for size in sizes]
        ratio = values[-1] / values[0]
        unit = " MiB" if key.endswith("mib") else " s"
        cells = "".join(f"{value:>10.1f}" for value in values)
        print(f"{key:<10}{cells}{ratio:>9.1f}x{unit}")
        if len(sizes) > 1:
            verdicts.append(_growth(key, values[0], values[-1], small, large))
        if key in READERS:
            verdicts.append(
                (values[-1] <= TIME_LIMIT, f"bt-{key} {values[-1]:.1f} s at {large} trials "
                 f"(limit {TIME_LIMIT:.0f} s)")
            )  # fmt: skip
    for met, line in verdicts:
        print(("met     " if met else "MISSED  ") + line)
    return 0 if all(met for met, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
