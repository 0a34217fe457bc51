"""A failure that would repeat for every request (nothing listens at the URL, the key is refused
or unset) stops bt-generate and bt-judge at once with one line naming the endpoint and the fix,
after a handful of requests at most; what was already answered stays on disk and a rerun
carries on. A server that refuses structured output in its own words is asked without it."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.simulator import FaultMix, Simulator
from blindtest.transport import client as client_module


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BLINDTEST_JUDGE_KEY", "OPENAI_API_KEY", "SIM_KEY", "SIMKEY"):
        monkeypatch.delenv(name, raising=False)


def closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def design(invoke: Any, run: Path, url: str, *extra: Any, trials: int = 12) -> None:
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", trials,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "ff",
        *extra,
    )  # fmt: skip
    assert made.exit_code == 0, made.output


def rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def judged_run(invoke: Any, simulator: Simulator, run: Path, trials: int = 12) -> Path:
    design(invoke, run, simulator.base_url, trials=trials)
    assert invoke("generate", run, "--quiet").exit_code == 0
    simulator.reset()
    return run


def test_generate_stops_at_the_first_refused_connection_with_one_line(
    invoke: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = closed_url()
    run = tmp_path / "run"
    design(invoke, run, url, trials=30)
    waits: list[int] = []  # a retry's wait is asked of next_delay (there were 55 s of them)

    def no_wait(attempt: int, *_: Any, **__: Any) -> float:
        waits.append(attempt)
        return 0.0

    monkeypatch.setattr(client_module, "next_delay", no_wait)
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 3
    origin = url.removesuffix("/v1")
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("blindtest: error: side ")
    assert result.stderr.endswith(
        f" at {origin}): connection refused, nothing listens there; start the server, or "
        "check the base URL\n"
    )
    assert waits == []  # stopped at once: no retry
    assert rows(run / "responses.jsonl") == []  # no failure rows: nothing was answered


def test_a_misspelt_key_variable_is_named_before_any_request_never_its_value(
    invoke: Any, simulator: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulator.config.api_key = "sk-sim-0123456789"
    monkeypatch.setenv("SIMKEY", "sk-sim-0123456789")  # misspelt: the design names SIM_KEY
    run = tmp_path / "run"
    design(invoke, run, simulator.base_url, "--a-key-env", "SIM_KEY", "--b-key-env", "SIM_KEY")
    result = invoke("generate", run, "--quiet", "--concurrency", 4)
    assert result.exit_code == 2
    assert result.stderr == (
        "blindtest: error: side A: environment variable SIM_KEY is not set, but SIMKEY is (a "
        'misspelling?); export SIM_KEY="$SIMKEY", or design again with --a-key-env SIMKEY\n'
    )
    assert "sk-sim" not in result.output
    assert simulator.requests == []  # nothing was sent
    assert not (run / "responses.jsonl").exists()


def test_a_local_server_is_tried_without_an_unset_key_and_a_401_names_the_variable(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    simulator.config.api_key = "sk-sim-0123456789"  # nothing similar to SIM_KEY is exported
    run = tmp_path / "run"
    design(invoke, run, simulator.base_url, "--a-key-env", "SIM_KEY", "--b-key-env", "SIM_KEY")
    result = invoke("generate", run, "--quiet", "--concurrency", 4)
    assert result.exit_code == 3
    assert result.stderr.count("\n") == 1
    assert "SIM_KEY is not set, and the server answered HTTP 401 Unauthorized" in result.stderr
    assert result.stderr.endswith("; export SIM_KEY with the API key\n")
    assert len(simulator.requests) <= 8  # at most the first requests in flight, per side
    assert rows(run / "responses.jsonl") == []


def test_judge_stops_at_the_first_refused_connection_writing_no_failure_rows(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = judged_run(invoke, simulator, tmp_path / "run")
    url = closed_url()
    result = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", url)
    assert result.exit_code == 3
    assert result.stderr == (
        f"blindtest: error: the LLM judge (sim-judge-fair at {url.removesuffix('/v1')}): "
        "connection refused, nothing listens there; start the server, or check the base URL\n"
    )
    assert rows(run / "picks.jsonl") == []


def test_judge_refuses_a_remote_url_with_no_key_variable_set_before_any_call(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = judged_run(invoke, simulator, tmp_path / "run")
    before = sorted(p.name for p in run.iterdir())
    url = "https://judge.example.invalid/v1"
    result = invoke("judge", run, "--judge", "llm:gpt-4o", "--judge-url", url)
    assert result.exit_code == 2
    assert result.stderr == (
        "blindtest: error: the LLM judge (gpt-4o at https://judge.example.invalid) needs a "
        "key: export BLINDTEST_JUDGE_KEY or OPENAI_API_KEY with it, or name its variable "
        "with --judge-key-env\n"
    )
    assert sorted(p.name for p in run.iterdir()) == before


def test_judge_stopped_by_a_401_records_the_answers_received_and_a_rerun_finishes(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = judged_run(invoke, simulator, tmp_path / "run", trials=20)
    simulator.config.mix = FaultMix({"401": 0.2}, seed=1)
    args = ("judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", simulator.base_url,
            "--no-swap", "--concurrency", 2)  # fmt: skip
    stopped = invoke(*args)
    assert stopped.exit_code == 3
    assert stopped.stderr.count("\n") == 1
    assert "HTTP 401" in stopped.stderr
    kept = rows(run / "picks.jsonl")
    answered = sum(s.answered for s in simulator.slots.values())
    assert 0 < len(simulator.requests) < 20
    assert len(kept) == answered  # one request per trial without the swap: none lost
    assert not any(r.get("failed") for r in kept)
    simulator.config.mix = None
    assert invoke(*args).exit_code == 0
    assert sorted(r["trial"] for r in rows(run / "picks.jsonl")) == list(range(1, 21))


def test_judge_asks_once_without_response_format_when_the_grammar_fails(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = judged_run(invoke, simulator, tmp_path / "run", trials=4)
    simulator.config.grammar_fails = True  # llama.cpp's 400, which names no field
    result = invoke(
        "judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", simulator.base_url
    )
    assert result.exit_code == 0, result.output
    bodies = [orjson.loads(r.body) for r in simulator.requests]
    assert "response_format" in bodies[0]
    assert "response_format" not in bodies[-1]
    assert sum("response_format" in b for b in bodies) <= 8  # the first wave in flight
    assert len(rows(run / "picks.jsonl")) == 8
    closing = " ".join(result.stdout.split())
    assert (
        "the endpoint refused structured output (HTTP 400: Failed to initialize samplers: "
        "failed to parse grammar), so verdicts were asked as plain text"
    ) in closing


def test_run_with_a_remote_llm_judge_and_no_key_stops_before_any_generation_request(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--protocol", "preference",
        "--a-url", url, "--b-url", url, "--judge", "llm:gpt-4o",
        "--judge-url", "https://judge.example.invalid/v1", "--run-dir", run,
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == (
        "blindtest: error: the LLM judge (gpt-4o at https://judge.example.invalid) needs a "
        "key: export BLINDTEST_JUDGE_KEY or OPENAI_API_KEY with it, or name its variable "
        "with --judge-key-env\n"
    )
    assert simulator.requests == []  # the sides were never asked
    assert not run.exists()  # nothing written, not even the design


def test_run_with_the_judge_key_variable_named_but_unset_stops_before_anything(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--protocol", "preference",
        "--a-url", url, "--b-url", url, "--judge", "llm:sim-judge-fair", "--judge-url", url,
        "--judge-key-env", "SIM_KEY", "--run-dir", run,
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "SIM_KEY is not set" in result.stderr
    assert simulator.requests == []
    assert not run.exists()


def test_a_remote_endpoints_unset_key_names_a_similar_exported_variable(
    invoke: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("my_api_key", "secret-value-1")
    run = tmp_path / "run"
    url = "https://api.example.invalid/v1"
    design(invoke, run, url, "--a-key-env", "MY_API_KEY", "--b-key-env", "MY_API_KEY")
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 2
    assert "MY_API_KEY is not set, but my_api_key is (a misspelling?)" in result.stderr
    assert "secret-value-1" not in result.output
    monkeypatch.delenv("my_api_key")
    plain = invoke("generate", run, "--quiet")
    assert plain.stderr == (
        "blindtest: error: side A: environment variable MY_API_KEY is not set; export it with "
        "the API key for sim-large\n"
    )


def test_similar_names_are_case_and_separator_misspellings_or_one_edit_away() -> None:
    from blindtest.transport.keynames import similar_name

    environ = {"SIMKEY": "x", "PATH": "/bin", "OPENAI_API_KEYS": "y", "EMPTY_KEY": ""}
    assert similar_name("SIM_KEY", environ) == "SIMKEY"
    assert similar_name("OPENAI_API_KEY", environ) == "OPENAI_API_KEYS"
    assert similar_name("EMPTYKEY", environ) is None  # set but empty is not set
    assert similar_name("ANTHROPIC_API_KEY", environ) is None


def test_an_llm_judges_misspelt_key_variable_is_named_before_any_call(
    invoke: Any, simulator: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = judged_run(invoke, simulator, tmp_path / "run", trials=4)
    monkeypatch.setenv("JUDGEKEY", "judge-secret-123")
    result = invoke(
        "judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", simulator.base_url,
        "--judge-key-env", "JUDGE_KEY",
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == (
        "blindtest: error: the LLM judge: environment variable JUDGE_KEY is not set, but "
        'JUDGEKEY is (a misspelling?); export JUDGE_KEY="$JUDGEKEY", or give --judge-key-env '
        "JUDGEKEY\n"
    )
    assert simulator.requests == []
    assert not (run / "picks.jsonl").exists()
