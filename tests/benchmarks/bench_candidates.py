"""Benchmark: a design of 10 candidates over 1,000 prompts, through every stage, at ``--pairs
sample:3`` (3,000 comparisons) and ``--pairs all`` (45,000).

Each stage runs as the whole command a user starts (start-up counted): ``bt-design --sides
FILE --pairs MODE`` (10 candidates on the simulator's two models, each with its own system
prompt, at the design's default temperature as ``make demo-candidates`` uses), ``bt-generate``
(the simulator in its own process at 0 ms latency, ``--concurrency 32``), ``bt-judge --judge
bot:length``, ``bt-audit``, ``bt-analyze`` and ``bt-verify``. Generation must ask exactly one
request per answer (candidate and prompt some comparison shows; the simulator's count), and
bt-verify must say that everything recomputes.

A third, tiny run (10 prompts, ``--pairs sample:3``: 30 comparisons) measures each command's
start-up (imports, reading, writing: some 3 s for bt-audit, bt-analyze and bt-verify on a
shared 2-core machine, mostly importing scipy), which would otherwise hide how the work grows.

Printed: each stage's wall seconds and CPU seconds (user + system of the command) at the three
sizes, and its cost per comparison once the start-up is taken off (and per answer for
bt-generate, whose requests follow the answers: 5,668 at sample:3, 10,000 at all) at 3,000 and
45,000 comparisons, with the ratio of the two: the 3,000 run is the baseline, measured in the
same run. bt-audit, bt-analyze and bt-verify (which only rewrite their own output or read) are
timed ``--repeat`` times at each size, the fastest kept.

Targets (exit 1 when one is missed):

- bt-analyze and bt-verify each under 30 s of wall time at 45,000 comparisons.
- No stage clearly faster than linear: its CPU per comparison at 45,000 under 2x its CPU per
  comparison at 3,000. A stage's work follows the comparisons (15x from one size to the other),
  the answers (1.76x: bt-generate's requests) or both, so linear work grows at most as fast as
  the comparisons do: 1x per comparison (bt-generate's CPU per answer may rise well above 1x,
  from its per-comparison part, the blinded trials it writes). n log n work (a sort) gives at
  most log(45,000)/log(3,000) = 1.34x; a quadratic term in the comparisons worth 7 % of the
  baseline's own work gives 1 + 0.07 x 14 > 2x, so anything quadratic in them that matters is
  caught. Growth in the answers alone cannot be seen between these two sizes (they grow 1.76x;
  a quadratic in them stays inside the linear band): a benchmark that scales the prompts does
  that. CPU time, not wall time, because on a shared 2-core machine other work moves a
  command's wall time by a second or more, as much as a fast stage's whole work at 3,000, and
  its CPU time far less. A baseline whose work is under 0.2 s counts as 0.2 s (timer noise).

Run with ``python tests/benchmarks/bench_candidates.py [--keep DIR] [--repeat N]``; ``--keep
DIR --reuse`` times bt-audit, bt-analyze and bt-verify again on the runs an earlier ``--keep
DIR`` left.
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
READERS = ("audit", "analyze", "verify")
CANDIDATES = 10
PROMPTS = 1000
#: (run name, prompts, --pairs): the start-up run, the baseline, the target size.
SIZES = (("tiny", 10, "sample:3"), ("sample3", PROMPTS, "sample:3"), ("all", PROMPTS, "all"))
TIME_LIMIT = 30.0
SUPERLINEAR = 2.0
NOISE = 0.2
#: System prompts that move the simulator's style ("brief", "detailed") or leave it.
STYLES = ("", "Be brief. ", "Be detailed. ")


def write_inputs(workdir: Path, url: str) -> None:
    """A prompts file per size and the --sides file (one TOML table per candidate)."""
    for name, prompts, _ in SIZES:
        lines = (f"Explain topic number {i} in two sentences.\n" for i in range(prompts))
        (workdir / f"prompts-{name}.txt").write_text("".join(lines))
    tables = []
    for i in range(CANDIDATES):
        model = "sim-large" if i % 2 == 0 else "sim-small"
        system = f"{STYLES[i % 3]}You are assistant number {i}."
        tables.append(f'[c{i:02d}]\nmodel = "{model}"\nbase_url = "{url}"\nsystem = "{system}"\n')
    (workdir / "sides.toml").write_text("\n".join(tables))


def stage_argv(stage: str, run: Path, mode: str, prompts: Path, sides: Path) -> list[str]:
    command = str(BIN / f"bt-{stage}")
    if stage == "design":
        return [
            command, str(run), "--prompts", str(prompts), "--sides", str(sides),
            "--pairs", mode, "--seed", "bench",
        ]  # fmt: skip
    if stage == "generate":
        return [command, str(run), "--concurrency", "32"]
    if stage == "judge":
        return [command, str(run), "--judge", "bot:length"]
    if stage in ("audit", "analyze"):
        return [command, str(run), "--force"]  # --force: a reused run has them
    return [command, str(run)]


def run_chain(
    name: str, mode: str, workdir: Path, server: Server, stages: tuple[str, ...], repeat: int
) -> dict[str, float]:
    """Seconds per stage (the fastest of ``repeat`` for the readers), and the design's
    comparisons and answers."""
    from blindtest.model.candidates import answer_owners
    from blindtest.rundir import artifacts

    prompts, sides = workdir / f"prompts-{name}.txt", workdir / "sides.toml"
    run = workdir / f"run-{name}"
    env = dict(os.environ, OPENAI_API_KEY="sk-bench")
    result: dict[str, float] = {}
    for stage in stages:
        if stage == "generate":
            server.admin("reset")
        times, cpus = [], []
        for _ in range(repeat if stage in READERS else 1):
            before = _children_cpu()
            start = time.perf_counter()
            done = subprocess.run(
                stage_argv(stage, run, mode, prompts, sides),
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            times.append(time.perf_counter() - start)
            cpus.append(_children_cpu() - before)
            # bt-analyze exits 1 when a gate fails: the report is written and verifiable.
            if done.returncode != 0 and not (stage == "analyze" and done.returncode == 1):
                sys.exit(f"bt-{stage} ({name}) exited {done.returncode}: {done.stderr[-2000:]}")
            if stage == "verify" and "everything recomputes" not in done.stdout + done.stderr:
                sys.exit(f"bt-verify ({name}) did not say that everything recomputes")
        result[stage] = min(times)
        result[f"{stage}_cpu"] = min(cpus)
        if stage == "generate":
            asked = server.admin("stats")["requests"]
            wanted = len(answer_owners(artifacts.load_design(run).design))
            if asked != wanted:
                sys.exit(f"{name}: bt-generate asked {asked} requests for {wanted} answers")
    design = artifacts.load_design(run).design
    result["comparisons"] = len(design["arrangement"])
    result["answers"] = len(answer_owners(design))
    return result


def _children_cpu() -> float:
    """User and system seconds of every child waited for so far (a command's CPU time is the
    difference across its run)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the run directories here")
    parser.add_argument(
        "--reuse", action="store_true", help="with --keep: time only audit, analyze, verify"
    )
    parser.add_argument("--repeat", type=int, default=2, help="runs of each reader, fastest kept")
    options = parser.parse_args()
    if options.reuse and options.keep is None:
        parser.error("--reuse needs --keep DIR")
    stages = READERS if options.reuse else STAGES
    print(f"load average before: {_load()}  ({os.cpu_count()} CPUs)")
    server = Server("--latency-ms", "0")
    try:
        with tempfile.TemporaryDirectory() as scratch:
            workdir = options.keep or Path(scratch)
            workdir.mkdir(parents=True, exist_ok=True)
            if not options.reuse:
                write_inputs(workdir, server.base_url)
            results = {
                name: run_chain(name, mode, workdir, server, stages, max(1, options.repeat))
                for name, _, mode in SIZES
            }
    finally:
        server.close()
    print(f"load average after: {_load()}")
    return report(results, stages)


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def report(results: dict[str, dict[str, float]], stages: tuple[str, ...]) -> int:
    """The table, then one line per target: met or missed. 1 when any target is missed."""
    tiny, small, large = (results[name] for name, _, _ in SIZES)
    (_, few, tiny_mode), (_, _, small_mode), (_, _, large_mode) = SIZES
    print(
        f"{CANDIDATES} candidates. Start-up: {few} prompts, --pairs {tiny_mode}, "
        f"{tiny['comparisons']:,.0f} comparisons. {PROMPTS:,} prompts: --pairs {small_mode}, "
        f"{small['comparisons']:,.0f} comparisons, {small['answers']:,.0f} answers; --pairs "
        f"{large_mode}, {large['comparisons']:,.0f} comparisons, {large['answers']:,.0f} answers"
    )
    sizes = f"{small['comparisons']:>8,.0f}{large['comparisons']:>8,.0f}"
    verdicts: list[tuple[bool, str]] = []
    for clock in ("wall", "cpu"):
        key = "" if clock == "wall" else "_cpu"
        print(
            f"\n{'wall seconds' if clock == 'wall' else 'CPU seconds (user + system)':<34}"
            f"ms per unit, less start-up"
        )
        print(f"{'stage':<10}{'start-up':>8}{sizes}  {'unit':<10}{sizes}{'ratio':>7}")
        for stage in stages:
            # Every stage per comparison (the faster-growing of the two drivers); bt-generate
            # per answer too, as its requests follow the answers.
            units = ("comparison", "answer") if stage == "generate" else ("comparison",)
            for unit in units:
                counts = [row[f"{unit}s"] for row in (small, large)]
                work = [max(row[stage + key] - tiny[stage + key], NOISE) for row in (small, large)]
                per = [seconds / count * 1000 for seconds, count in zip(work, counts, strict=True)]
                ratio = per[1] / per[0]
                cells = (
                    f"{tiny[stage + key]:>8.1f}{small[stage + key]:>8.1f}{large[stage + key]:>8.1f}"
                    if unit == "comparison"
                    else " " * 24
                )
                print(
                    f"{stage if unit == 'comparison' else '':<10}{cells}  {unit:<10}"
                    f"{per[0]:>8.3f}{per[1]:>8.3f}{ratio:>6.2f}x"
                )
                if clock == "cpu" and unit == "comparison":
                    verdicts.append(
                        (ratio < SUPERLINEAR, f"{stage}: CPU per comparison at "
                         f"{counts[1]:,.0f}, less start-up, is {ratio:.2f}x that at "
                         f"{counts[0]:,.0f} (limit {SUPERLINEAR:g}x)")
                    )  # fmt: skip
            if clock == "wall" and stage in ("analyze", "verify"):
                verdicts.append(
                    (large[stage] < TIME_LIMIT, f"bt-{stage} {large[stage]:.1f} s at "
                     f"{large['comparisons']:,.0f} comparisons (limit {TIME_LIMIT:.0f} s)")
                )  # fmt: skip
    for met, line in verdicts:
        print(("met     " if met else "MISSED  ") + line)
    return 0 if all(met for met, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
