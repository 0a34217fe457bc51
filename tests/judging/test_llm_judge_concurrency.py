"""Every comparison of both
passes in flight at once (up to --concurrency), a verdict's quick check never accepting what
jsonschema refuses, and an LLM judge's picks synced in groups (kill -9 loses nothing written;
a power loss at most the last group)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from blindtest.judging.llm.verdicts import _quick_valid, _validator, validate_verdict
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def make_run(invoke: Invoke, url: str, run: Path, trials: int) -> Path:
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", trials,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "i13s",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    return run


def test_bench_both_passes_of_every_comparison_in_flight_at_once(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=12)
    simulator.config.latency = 0.2
    judged = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--judge-url",
                    simulator.base_url, "--concurrency", "64")  # fmt: skip
    assert judged.exit_code == 0, judged.output
    # 24 calls, none waiting for another: the two passes are not run one after the other,
    # nor a comparison after the previous one
    assert simulator.stats()["max_in_flight"]["sim-judge-fair"] == 24


_GOOD: dict[str, list[Any]] = {
    "preference": ["A", "B", "TIE"], "odd": [1, 2, 3], "nicknames": [["a", "b"]],
    "output_1": ["a"], "confidence": [0, 0.5, 1], "justification": ["j", ""],
    "key_differentiators": [[], ["x"]], "identity_leakage_detected": [True, False],
    "identity_leakage_details": ["d"], "tie_reason": [None, "t"], "extra": [1],
}  # fmt: skip
_BAD: list[Any] = [None, True, 1, 1.0, 0.5, -1, 2, 1.5, "A", "x", "", [], ["a"], ["a", ""],
                   {}, [1, 2], ["a", "b", "c"]]  # fmt: skip


@pytest.mark.parametrize("protocol", ["preference", "triangle", "pair"])
def test_bench_quick_verdict_check_never_accepts_what_jsonschema_refuses(
    protocol: str,
) -> None:
    rng = random.Random(13)
    quick = 0
    for _ in range(5000):
        verdict: dict[str, Any] = {}
        for name, values in _GOOD.items():
            roll = rng.random()
            if roll < 0.85:
                verdict[name] = rng.choice(values)
            elif roll < 0.95:
                verdict[name] = rng.choice(_BAD)
        if _quick_valid(protocol, verdict):
            quick += 1
            assert _validator(protocol).is_valid(verdict), verdict
    assert quick > 500  # the quick path is the common one
    found, problem = validate_verdict(protocol, '{"confidence": 2}')
    assert found is None
    assert problem.startswith("invalid verdict at /")


def test_bench_llm_picks_synced_in_groups_not_per_pick(
    invoke: Invoke, simulator: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=12)
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(artifacts.JsonlAppender, "SYNC_SECONDS", 3600.0)
    judged = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--judge-url",
                    simulator.base_url)  # fmt: skip
    assert judged.exit_code == 0, judged.output
    picks = (run / "picks.jsonl").read_bytes().splitlines()
    assert len(picks) == 24
    assert 1 <= len(synced) <= 3  # the closing sync (and the file's creation), not 24
