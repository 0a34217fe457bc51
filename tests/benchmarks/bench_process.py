"""Benchmark: the whole ``bt-generate RUN`` process against the openai SDK.

As a user meets it: the whole ``bt-generate RUN`` process (start-up, design checks, writing
responses.jsonl and trials.jsonl) against ``sdk_baseline.py`` (AsyncOpenAI, a semaphore,
``asyncio.gather``, one answer appended per line) run as its own process, making the same
requests (the batch input file ``bt-generate --batch-export`` writes: the exact bodies) at the
same total concurrency against the same simulator (its own process), in the same run, rounds
interleaved, medians reported. Two workloads: 900 requests at 100 ms latency with 16 in flight
per side (32 in all), and 9,000 requests at 0 ms with 64 in flight per side (128 in all).
Targets: no slower than the SDK in either; at 900 @100 ms within 1.20x of the ideal
ceil(900/32) x 100 ms. Exits 1 if one is missed. Beside them, the floor (floor_client.py: a
bare aiohttp process sending the same bodies, keeping nothing) shows how far from the ideal
the interpreter, the server and the machine alone are.

Run with ``python tests/benchmarks/bench_process.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_generate import Server  # tests/benchmarks/, the script's own directory

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]
#: (requests, latency in ms, in flight per side)
WORKLOADS = ((900, 100, 16), (9_000, 0, 64))
IDEAL_LIMIT = 1.20
ENV = dict(os.environ, OPENAI_API_KEY="sk-bench")


def _run(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=ENV, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _design(work: Path, url: str, requests: int) -> tuple[Path, Path]:
    trials = requests // 3
    prompts = work / "prompts.txt"
    prompts.write_text("".join(f"Explain topic number {i} briefly.\n" for i in range(trials)))
    run = work / "design-only"
    subprocess.run(
        [
            str(BIN / "bt-design"), str(run), "--prompts", str(prompts), "--a", "sim-large",
            "--b", "sim-small", "--a-url", url, "--b-url", url, "--trials", str(trials),
            "--seed", "bench", "-q",
        ],
        env=ENV,
        check=True,
    )  # fmt: skip
    batch = work / "requests.jsonl"
    subprocess.run(
        [str(BIN / "bt-generate"), str(run), "--batch-export", str(batch), "-q"],
        env=ENV,
        check=True,
    )
    return run, batch


def workload(requests: int, latency: int, per_side: int, rounds: int) -> dict[str, float]:
    server = Server("--latency-ms", str(latency))
    try:
        with tempfile.TemporaryDirectory() as scratch:
            work = Path(scratch)
            design, batch = _design(work, server.base_url, requests)
            ours: list[float] = []
            sdk: list[float] = []
            floor: list[float] = []
            for number in range(rounds + 1):  # round 0 warms the page cache and the server
                run = work / f"run-{number}"
                shutil.copytree(design, run)
                out = work / f"sdk-{number}.jsonl"
                mine = _run(
                    [str(BIN / "bt-generate"), str(run), "--concurrency", str(per_side), "-q"]
                )
                theirs = _run(
                    [sys.executable, str(HERE / "sdk_baseline.py"), str(batch),
                     server.base_url, str(2 * per_side), str(out)]
                )  # fmt: skip
                bare = _run(
                    [sys.executable, str(HERE / "floor_client.py"), str(batch), server.base_url,
                     str(2 * per_side)]
                )  # fmt: skip
                lines = len((run / "responses.jsonl").read_bytes().splitlines())
                assert lines == requests, f"bt-generate wrote {lines} rows, expected {requests}"
                if number:
                    ours.append(mine)
                    sdk.append(theirs)
                    floor.append(bare)
    finally:
        server.close()
    ideal = math.ceil(requests / (2 * per_side)) * latency / 1000
    return {
        "ours": statistics.median(ours),
        "sdk": statistics.median(sdk),
        "floor": statistics.median(floor),
        "ideal": ideal,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    missed: list[str] = []
    # As pip does for an installed package: a checkout run under PYTHONDONTWRITEBYTECODE
    # would otherwise compile blindtest's modules again in every process timed.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "blindtest")], check=True)
    print(f"whole bt-generate process vs the openai SDK process, medians of {rounds} rounds")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    print(
        f"{'workload':<28}{'bt-generate':>12}{'SDK':>8}{'floor':>8}{'ideal':>8}{'/SDK':>7}"
        f"{'/ideal':>8}{'floor/ideal':>12}"
    )
    for requests, latency, per_side in WORKLOADS:
        result = workload(requests, latency, per_side, rounds)
        to_sdk = result["ours"] / result["sdk"]
        to_ideal = result["ours"] / result["ideal"] if result["ideal"] else math.nan
        name = f"{requests} req @{latency} ms, {per_side}/side"
        floor_ideal = result["floor"] / result["ideal"] if result["ideal"] else math.nan
        print(
            f"{name:<28}{result['ours']:>11.2f}s{result['sdk']:>7.2f}s{result['floor']:>7.2f}s"
            f"{result['ideal']:>7.2f}s{to_sdk:>7.2f}{to_ideal:>8.2f}{floor_ideal:>12.2f}"
        )
        verdicts = [(f"{name}: {to_sdk:.2f}x the SDK (target <= 1.00)", to_sdk <= 1.0)]
        if latency:
            verdicts.append(
                (f"{name}: {to_ideal:.2f}x the ideal (target <= {IDEAL_LIMIT:.2f})",
                 to_ideal <= IDEAL_LIMIT)
            )  # fmt: skip
        for text, met in verdicts:
            print(f"  {'met' if met else 'MISSED'}: {text}")
            if not met:
                missed.append(text)
    for line in missed:
        print("missed: " + line, file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
