"""Benchmark: the deterministic-endpoint guard costs O(1) per response.

A triangle design of N trials (3N responses) is fetched by ``run_generation`` through a client
that answers at once, in process and without sockets, so what is timed is the stage's own work
per response: the row, the resume state, and the guard (one comparison when a trial's second
same-model draw arrives). The guard alone (``DrawCollisions.add`` and ``deterministic`` after
every response) is timed too. Time per response at 3,000 and at 30,000 trials, and their ratio:
about 1 when the cost per response does not grow with the design (a rescan of the whole
arrangement per response, as before, would make it about 10).

Run with ``python tests/benchmarks/bench_guard.py`` (``make bench`` runs it after the client
benchmark); it exits 1 if either ratio is 2 or more.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from blindtest.generation.fetch import run_generation
from blindtest.generation.guard import DrawCollisions
from blindtest.model.slots import SlotState, plan_slots
from blindtest.rundir.artifacts import schema_tag
from blindtest.rundir.types import DesignRecord
from blindtest.transport.client import ChatClient, Completion
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.wire import ChatMessage

SIZES = (3_000, 30_000)
MAX_RATIO = 2.0


def triangle_design(trials: int) -> DesignRecord:
    """The parts of a triangle design that fetching reads, with a balanced arrangement."""
    return {  # type: ignore[typeddict-item]  # the parts fetching reads
        "protocol": "triangle",
        "seed": "bench",
        "system": None,
        "source": {"kind": "endpoints"},
        "normalization": {
            "launder": None,
            "length_band": None,
            "strip_formatting": False,
            "truncate_match": False,
        },
        "models": {
            side: {
                "model": model,
                "base_url": "http://127.0.0.1:1/v1",  # never dialled: InstantClient answers
                "key_env": "OPENAI_API_KEY",
                "params": {"temperature": 1.0, "max_tokens": None},
            }
            for side, model in (("A", "sim-large"), ("B", "sim-small"))
        },
        "prompts": [{"id": "p001", "text": "Explain tides."}],
        "arrangement": [
            {
                "trial": t,
                "prompt_id": "p001",
                "doubled": "AB"[t % 2],
                "odd_position": 1 + t % 3,
            }
            for t in range(1, trials + 1)
        ],
    }


class InstantClient:
    """Answers every request at once with a text of its own (so no two draws are the same
    and the guard never stops the run)."""

    sides = ("A", "B")

    def __init__(self) -> None:
        self._endpoints = {s: Endpoint("http://127.0.0.1:9/v1", f"m-{s}") for s in self.sides}

    def endpoint(self, side: str) -> Endpoint:
        return self._endpoints[side]

    def sends_seed(self, side: str) -> bool:
        return True

    def ceiling(self, side: str) -> int:
        """No per-side limit of its own: the run's --concurrency decides."""
        return 0

    async def complete(
        self, side: str, messages: Sequence[ChatMessage], *, seed: int | None = None
    ) -> Completion:
        return Completion(side, "ok", f"answer {seed}", "stop", None, 0.0, 1, 200, seed=seed)


def per_response_fetch(trials: int) -> float:
    """Seconds per response of ``run_generation`` over a whole triangle of ``trials``."""
    design = triangle_design(trials)
    client = cast(ChatClient, InstantClient())
    written: list[object] = []
    gc.collect()
    started = time.perf_counter()
    asyncio.run(run_generation(design, client, SlotState({}, {}), written.append, concurrency=8))
    elapsed = time.perf_counter() - started
    assert len(written) == 3 * trials
    return elapsed / len(written)


def per_response_guard(trials: int) -> tuple[float, float]:
    """Seconds per response of the guard alone, fed the responses one by one; and of one
    rescan of the whole arrangement, the cost per response of the old guard."""
    design = triangle_design(trials)
    state = SlotState({}, {})
    collisions = DrawCollisions.for_design(design, state)
    rows: list[dict[str, Any]] = [
        {
            "schema": schema_tag("responses"),
            "trial": slot.trial,
            "slot": slot.slot,
            "side": slot.side,
            "stage": "generate",
            "status": "ok",
            "text": f"answer {slot.trial}.{slot.slot}",
        }
        for slot in plan_slots(design)
    ]
    gc.collect()
    started = time.perf_counter()
    for row in rows:
        state.record(row)
        collisions.add(state, (row["trial"], row["slot"]))
        if collisions.deterministic():
            raise AssertionError("no two answers are the same")
    seconds = (time.perf_counter() - started) / len(rows)
    started = time.perf_counter()
    DrawCollisions.for_design(design, state)  # what a rescan per response would cost each time
    return seconds, time.perf_counter() - started


def measure(rounds: int) -> dict[str, Any]:
    """Best of ``rounds`` per size (the least disturbed run), and the ratios."""
    fetch = {n: min(per_response_fetch(n) for _ in range(rounds)) for n in SIZES}
    guard, rescan = {}, {}
    for n in SIZES:
        guard[n], rescan[n] = (
            min(runs) for runs in zip(*(per_response_guard(n) for _ in range(rounds)), strict=True)
        )
    small, large = SIZES
    return {
        "trials": list(SIZES),
        "fetch_us_per_response": {n: fetch[n] * 1e6 for n in SIZES},
        "guard_us_per_response": {n: guard[n] * 1e6 for n in SIZES},
        "rescan_us_per_response": {n: rescan[n] * 1e6 for n in SIZES},
        "fetch_ratio": fetch[large] / fetch[small],
        "guard_ratio": guard[large] / guard[small],
    }


def report(result: dict[str, Any]) -> None:
    small, large = result["trials"]
    fetch, guard = result["fetch_us_per_response"], result["guard_us_per_response"]
    rescan = result["rescan_us_per_response"]
    print("[deterministic guard: time per response, triangle, no network]")
    print(
        f"  {'trials':>8}  {'responses':>9}  {'run_generation':>15}  {'guard alone':>12}"
        f"  {'a rescan instead':>16}"
    )
    for n in (small, large):
        print(
            f"  {n:>8,}  {3 * n:>9,}  {fetch[n]:>12.2f} us  {guard[n]:>9.3f} us"
            f"  {rescan[n] / 1000:>13.1f} ms"
        )
    print(
        f"  ratio {large:,} / {small:,} trials: run_generation {result['fetch_ratio']:.2f}, "
        f"guard alone {result['guard_ratio']:.2f} (O(1) per response: about 1)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs per size (best is kept)")
    args = parser.parse_args(argv)
    result = measure(args.rounds)
    report(result)
    if max(result["fetch_ratio"], result["guard_ratio"]) >= MAX_RATIO:
        print("target missed: the guard's cost per response grows with the design", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
