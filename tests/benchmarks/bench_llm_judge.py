"""Benchmark: the LLM judge's throughput against the latency-bound ideal (issue 13).

400 preference comparisons, judged with the position swap (800 calls), against the simulator
in its own process at 100 ms latency, concurrency 32: the ideal is ceil(800/32) x 100 ms; the
judge (bt-judge in process, less the time it takes to load the run, measured by
``--show-prompt``) must finish within 1.15x of it.
Run with ``python tests/benchmarks/bench_llm_judge.py``; exits 1 on a miss.
"""

from __future__ import annotations

import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from blindtest.cli import cli

COMPARISONS, CONCURRENCY, LATENCY_MS, TARGET = 400, 32, 100, 1.15


def _stage(*args: str) -> int:
    code = cli.main(list(args), prog_name="blindtest", standalone_mode=False)
    return code if isinstance(code, int) else 0


def main() -> int:
    server = subprocess.Popen(
        [sys.executable, "-m", "blindtest.simulator", "--latency-ms", str(LATENCY_MS)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            prompts = Path(tmp) / "prompts.txt"
            prompts.write_text("".join(f"Question number {i}: explain it.\n"
                                       for i in range(COMPARISONS)))  # fmt: skip
            run = Path(tmp) / "run"
            _stage("design", str(run), "--prompts", str(prompts), "--protocol", "preference",
                   "--trials", str(COMPARISONS), "--a", "sim-large", "--b", "sim-small",
                   "--a-url", url, "--b-url", url, "--seed", "bench")  # fmt: skip
            _stage("generate", str(run), "--quiet", "--concurrency", "64")
            # What the stage costs before its first request (reading the design and 400
            # trials): measured by printing a prompt, which loads the same and calls nothing.
            started = time.perf_counter()
            _stage("judge", str(run), "--judge", "llm:sim-judge-fair", "--show-prompt", "1")
            startup = time.perf_counter() - started
            started = time.perf_counter()
            _stage("judge", str(run), "--judge", "llm:sim-judge-fair", "--judge-url", url,
                   "--concurrency", str(CONCURRENCY), "--quiet")  # fmt: skip
            total = time.perf_counter() - started
            wall = total - startup
    finally:
        server.terminate()
        server.wait()
    ideal = math.ceil(2 * COMPARISONS / CONCURRENCY) * LATENCY_MS / 1000
    ratio = wall / ideal
    print(f"LLM judge: {COMPARISONS} comparisons x 2 passes at {LATENCY_MS} ms, concurrency "
          f"{CONCURRENCY}: {wall:.2f} s ({total:.2f} s less {startup:.2f} s loading), "
          f"ideal {ideal:.2f} s, ratio {ratio:.3f} (target <= {TARGET})")  # fmt: skip
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
