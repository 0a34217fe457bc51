"""Benchmark: blindtest's client against the ideal wall time and the official openai SDK.

200 prompts x 3 slots (600 requests, one seed per slot) against the simulator in its own
process, at 50 ms latency and concurrency 32:

1. clean: wall time against the ideal ceil(600/32) x 50 ms, and against AsyncOpenAI with
   asyncio.gather and a semaphore of 32, on the same server in the same run;
2. faults: the same with 10 % 429s and 5 % connection resets. The simulator draws faults per
   (slot, nth request of that slot), so both clients meet the same faults; under ours every
   slot must be answered exactly once;
3. the deterministic-endpoint guard's cost per response at 3,000 and 30,000 triangle trials
   (``bench_guard.py``): the ratio must stay near 1.

Each client is warmed up, then runs are interleaved (ours, SDK, ours, SDK, ...) and the
median is reported: of 5 runs each clean, of 15 under faults. A run under faults lasts as long
as its longest chain of retries (a reset waits 0.375 to 0.5 s before its first retry, drawn the
same way in both clients), so one run of either moves by 10 % or more: in three runs of 5
rounds on 2026-12-06 ours averaged 6 % under the SDK, and its median came out 0.90x, 0.98x and
1.005x the SDK's. Run with ``python tests/benchmarks/bench_generate.py [--rounds N]
[--fault-rounds N]``; it exits 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, cast

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bench_guard  # tests/benchmarks/, the script's own directory

from blindtest.transport.client import ChatClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.wire import ChatMessage

PROMPTS = 200
SLOTS = 3
CONCURRENCY = 32
LATENCY_MS = 50
MODEL = "sim-large"
FAULTS = "429=0.10,reset=0.05"

_TOPICS = (
    "tides", "vaccines", "compound interest", "sourdough", "password managers", "jet lag",
    "composting", "code review", "public speaking", "solar panels", "bird migration",
    "index funds", "sleep hygiene", "database indexes", "learning a language", "bicycle gears",
    "rainwater tanks", "team retrospectives", "chess openings", "coffee extraction",
)  # fmt: skip
_FRAMES = (
    "Explain {t} to a curious teenager.",
    "What are the most common mistakes people make with {t}?",
    "Give practical advice about {t}.",
    "How would you teach {t} in ten minutes?",
    "What should a beginner know about {t}?",
    "Summarise the trade-offs involved in {t}.",
    "Write a short guide to {t}.",
    "What questions should I ask before deciding on {t}?",
    "Describe how {t} works, briefly.",
    "What is overrated and what is underrated about {t}?",
)

Slot = tuple[list[ChatMessage], int]
Runner = Callable[[str, Sequence[Slot]], Coroutine[Any, Any, float]]


def build_slots() -> list[Slot]:
    prompts = [f.format(t=t) for t in _TOPICS for f in _FRAMES][:PROMPTS]
    return [
        ([{"role": "user", "content": prompt}], i * SLOTS + j)
        for i, prompt in enumerate(prompts)
        for j in range(SLOTS)
    ]


async def run_ours(base_url: str, slots: Sequence[Slot]) -> float:
    endpoint = Endpoint(base_url, MODEL, temperature=1.0, max_tokens=512)
    async with ChatClient({"A": endpoint}, concurrency=CONCURRENCY) as client:
        started = time.perf_counter()
        results = await asyncio.gather(
            *(client.complete("A", messages, seed=seed) for messages, seed in slots)
        )
        elapsed = time.perf_counter() - started
    failed = [r for r in results if not r.ok]
    if failed:
        raise SystemExit(f"our client: {len(failed)} slots failed, first: {failed[0].error}")
    return elapsed


async def run_sdk(base_url: str, slots: Sequence[Slot]) -> float:
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient

    # trust_env=False: no proxy from the environment between us and 127.0.0.1, as for ours.
    client = AsyncOpenAI(
        base_url=base_url,
        api_key="unused",
        max_retries=5,
        http_client=DefaultAsyncHttpxClient(trust_env=False),
    )
    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def one(messages: list[ChatMessage], seed: int) -> object:
        async with semaphore:
            return await client.chat.completions.create(
                model=MODEL,
                messages=cast(Any, messages),  # same dicts; the SDK types roles as literals
                seed=seed,
                temperature=1.0,
                max_tokens=512,
            )

    try:
        started = time.perf_counter()
        await asyncio.gather(*(one(messages, seed) for messages, seed in slots))
        return time.perf_counter() - started
    finally:
        await client.close()


class Server:
    """The simulator in its own process, so its CPU time is not charged to the client."""

    def __init__(self, *args: str) -> None:
        command = [sys.executable, "-m", "blindtest.simulator", "--port", "0", *args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http://127.0.0.1:"):
            self.close()
            raise SystemExit(f"simulator did not start: {self.base_url!r}")
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def admin(self, action: str) -> dict[str, Any]:
        root = self.base_url.removesuffix("/v1")
        method = "POST" if action == "reset" else "GET"
        request = urllib.request.Request(f"{root}/_sim/{action}", method=method)
        with self._opener.open(request, timeout=10) as response:
            data: dict[str, Any] = orjson.loads(response.read())
        return data

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


def measure(server: Server, runner: Runner, slots: Sequence[Slot]) -> tuple[float, dict[str, Any]]:
    server.admin("reset")
    seconds = asyncio.run(runner(server.base_url, slots))
    return seconds, server.admin("stats")


def phase(name: str, server: Server, slots: Sequence[Slot], rounds: int) -> dict[str, Any]:
    ours: list[float] = []
    sdk: list[float] = []
    exact = True
    for runner in (run_ours, run_sdk):  # warm-up: first connections, lazy imports, caches
        measure(server, runner, slots[: CONCURRENCY * 2])
    for _ in range(rounds):
        seconds, stats = measure(server, run_ours, slots)
        ours.append(seconds)
        exact &= (
            stats["slots"] == len(slots)
            and stats["answered"] == len(slots)
            and stats["answered_twice"] == 0
            and stats["after_answer"] == 0
        )
        sdk.append(measure(server, run_sdk, slots)[0])
    ideal = math.ceil(len(slots) / CONCURRENCY) * LATENCY_MS / 1000
    result: dict[str, Any] = {
        "phase": name,
        "ideal_s": ideal,
        "ours_s": statistics.median(ours),
        "sdk_s": statistics.median(sdk),
        "ours_runs": ours,
        "sdk_runs": sdk,
        "every_slot_answered_once": exact,
    }
    result["ours_vs_ideal"] = result["ours_s"] / ideal
    result["ours_vs_sdk"] = result["ours_s"] / result["sdk_s"]
    return result


def report(result: dict[str, Any]) -> None:
    runs = ", ".join(f"{s:.3f}" for s in result["ours_runs"])
    sdk_runs = ", ".join(f"{s:.3f}" for s in result["sdk_runs"])
    print(f"[{result['phase']}]")
    print(f"  ideal  {result['ideal_s']:.3f} s  (ceil(600/{CONCURRENCY}) x {LATENCY_MS} ms)")
    print(f"  ours   {result['ours_s']:.3f} s  median of [{runs}]")
    print(f"  sdk    {result['sdk_s']:.3f} s  median of [{sdk_runs}]")
    print(f"  ours / ideal = {result['ours_vs_ideal']:.3f}")
    print(f"  ours / sdk   = {result['ours_vs_sdk']:.3f}")
    if "every_slot_answered_once" in result:
        print(f"  every slot answered exactly once (ours): {result['every_slot_answered_once']}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs per client, clean")
    parser.add_argument(
        "--fault-rounds", type=int, default=15, help="runs per client, under faults"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    args = parser.parse_args(argv)
    slots = build_slots()
    import openai  # noqa: F401  (imported before the freeze below, as everything else is)

    # Both clients run in this process; the SDK's import alone leaves a large heap. Freezing
    # it keeps full garbage collections from landing at random inside one run or the other.
    gc.collect()
    gc.freeze()
    print(f"{len(slots)} requests ({PROMPTS} prompts x {SLOTS} slots), concurrency {CONCURRENCY}")
    results = []
    phases = (
        ("clean", (), args.rounds),
        ("faults " + FAULTS, ("--faults", FAULTS), args.fault_rounds),
    )
    for name, extra, rounds in phases:
        server = Server("--latency-ms", str(LATENCY_MS), *extra)
        try:
            results.append(phase(name, server, slots, rounds))
        finally:
            server.close()
        report(results[-1])
    clean, faulty = results
    guard = bench_guard.measure(rounds=3)
    bench_guard.report(guard)
    if args.json:
        everything = [*results, {"phase": "guard", **guard}]
        print(
            orjson.dumps(everything, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
        )
    missed = []
    if clean["ours_vs_ideal"] > 1.15:
        missed.append("clean run more than 15 % over the ideal")
    if clean["ours_vs_sdk"] > 1.0 or faulty["ours_vs_sdk"] > 1.0:
        missed.append("slower than the SDK")
    if not (clean["every_slot_answered_once"] and faulty["every_slot_answered_once"]):
        missed.append("a slot was not answered exactly once")
    if max(guard["fetch_ratio"], guard["guard_ratio"]) >= bench_guard.MAX_RATIO:
        missed.append("the deterministic guard's cost per response grows with the design")
    for line in missed:
        print(f"target missed: {line}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
