"""Benchmark: a design of 10 candidates over 1,000 prompts, through every stage, at ``--pairs
sample:3`` (3,000 comparisons), ``--pairs sample:9`` (9,000) and ``--pairs all`` (45,000).

Each stage runs as the whole command a user starts (start-up counted): ``bt-design --sides
FILE --pairs MODE`` (10 candidates on the simulator's two models, each with its own system
prompt, at the design's default temperature as ``make demo-candidates`` uses), ``bt-generate``
(the simulator in its own process at 0 ms latency, ``--concurrency 32``), ``bt-judge --judge
bot:length``, ``bt-audit``, ``bt-analyze`` and ``bt-verify``. Generation must ask exactly one
request per answer (candidate and prompt some comparison shows; the simulator's count), and
bt-verify must say that everything recomputes.

Printed: each stage's wall seconds and CPU seconds (user + system of the command) at the three
sizes, and what each comparison added costs between them: from 3,000 to 9,000 comparisons and
from 9,000 to 45,000. Differences between sizes leave out what a command pays whatever the
size (imports, some 3 s for bt-audit, bt-analyze and bt-verify, mostly scipy), so no start-up
has to be measured apart. (A tiny run did that until 2026-12-06, but at 30 comparisons over 10
candidates the maximum-likelihood ranking does not exist and bt-analyze computes Firth's
profile bounds instead, about 1 s that no larger run spends: the tiny run cost bt-analyze more
CPU than the 3,000-comparison one, and the check compared 45,000 comparisons' work with a
floor.) bt-judge (a bot rewrites its picks file with ``--force``), bt-audit, bt-analyze and
bt-verify (which only rewrite their own output or read) are timed ``--repeat`` times at each
size, the fastest kept: one run of a stage whose work between two sizes is under a second
moved its ratio by a third.

Targets (exit 1 when one is missed):

- bt-analyze and bt-verify each under 30 s of wall time at 45,000 comparisons.
- No stage clearly faster than linear: the CPU each comparison adds from 9,000 to 45,000 under
  2x what each added from 3,000 to 9,000. Linear work adds the same per comparison in both
  (work that follows the answers adds less in the second: every candidate's answer to every
  prompt is asked by 9,000 comparisons, so bt-generate's requests stop growing there and only
  the blinded trials it writes do); n log n work (a sort) adds at most 1.2x more; for a term
  quadratic in the comparisons (c n^2 beside linear work b n), what a comparison adds is
  b + c (n1 + n2), so the ratio is (b + 54,000 c) / (b + 12,000 c), past 2x once the quadratic
  term is a tenth of the linear one at 3,000 comparisons (9 % of the work). Growth in the
  answers alone cannot be seen here (they stop growing): a benchmark that scales the prompts
  does that. CPU time, not wall time, because on a shared 2-core machine other work moves a
  command's wall time by a second or more, and its CPU time far less. A first step whose added
  work is under 0.2 s counts as 0.2 s (timer noise).

Run with ``python tests/benchmarks/bench_candidates.py [--keep DIR] [--repeat N]``; ``--keep
DIR --reuse`` times bt-audit, bt-analyze and bt-verify again on the runs an earlier ``--keep
DIR`` left.
"""

from __future__ import annotations

import argparse
import itertools
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
#: Stages that can run again on the same run and do the same work: timed ``--repeat`` times.
REPEATED = ("judge", *READERS)
CANDIDATES = 10
PROMPTS = 1000
#: (run name, prompts, --pairs): three sizes; what a comparison adds between the first two is
#: the baseline for what it adds between the last two.
SIZES = (
    ("sample3", PROMPTS, "sample:3"),
    ("sample9", PROMPTS, "sample:9"),
    ("all", PROMPTS, "all"),
)
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
        return [command, str(run), "--judge", "bot:length", "--force"]  # --force: timed again
    if stage in ("audit", "analyze"):
        return [command, str(run), "--force"]  # --force: a reused run has them
    return [command, str(run)]


def run_chain(
    name: str, mode: str, workdir: Path, server: Server, stages: tuple[str, ...], repeat: int
) -> dict[str, float]:
    """Seconds per stage (the fastest of ``repeat`` for those that can run again), and the
    design's comparisons and answers."""
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
        for _ in range(repeat if stage in REPEATED else 1):
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
    parser.add_argument(
        "--repeat", type=int, default=2, help="runs of the judge and each reader, fastest kept"
    )
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
    rows = [results[name] for name, _, _ in SIZES]
    large = rows[-1]
    runs = [
        f"--pairs {mode}, {row['comparisons']:,.0f} comparisons, {row['answers']:,.0f} answers"
        for (_, _, mode), row in zip(SIZES, rows, strict=True)
    ]
    print(f"{CANDIDATES} candidates, {PROMPTS:,} prompts: " + "; ".join(runs))
    counts = [row["comparisons"] for row in rows]
    sizes = "".join(f"{count:>8,.0f}" for count in counts)
    steps = [f"{a:,.0f}-{b:,.0f}" for a, b in itertools.pairwise(counts)]
    verdicts: list[tuple[bool, str]] = []
    for clock in ("wall", "cpu"):
        key = "" if clock == "wall" else "_cpu"
        print(
            f"\n{'wall seconds' if clock == 'wall' else 'CPU seconds (user + system)':<34}"
            "ms each comparison added"
        )
        print(f"{'stage':<10}{sizes}  {steps[0]:>12}{steps[1]:>13}{'ratio':>7}")
        for stage in stages:
            seconds = [row[stage + key] for row in rows]
            first = max(seconds[1] - seconds[0], NOISE) / (counts[1] - counts[0]) * 1000
            second = (seconds[2] - seconds[1]) / (counts[2] - counts[1]) * 1000
            ratio = second / first
            cells = "".join(f"{value:>8.1f}" for value in seconds)
            print(f"{stage:<10}{cells}  {first:>12.4f}{second:>13.4f}{ratio:>6.2f}x")
            if clock == "cpu":
                verdicts.append(
                    (ratio < SUPERLINEAR, f"{stage}: CPU each comparison added from "
                     f"{counts[1]:,.0f} to {counts[2]:,.0f} is {ratio:.2f}x what each added "
                     f"from {counts[0]:,.0f} to {counts[1]:,.0f} (limit {SUPERLINEAR:g}x)")
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
