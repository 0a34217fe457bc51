"""``bt-generate RUN --check``: one small request per endpoint, one line per thing that can be
wrong (key, URL, model, context, parameters, cost), exit 0 when every endpoint is ready and 3
when any is not, and nothing written to the run (its listing and every mtime unchanged)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.simulator import Fault, Simulator

from conftest import Invoke, numbered_prompts


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "SIM_KEY", "SIMKEY", "BLINDTEST_A_KEY", "BLINDTEST_B_KEY"):
        monkeypatch.delenv(name, raising=False)


def closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def design(
    invoke: Invoke, tmp_path: Path, url: str, *extra: Any, prompts: list[str] | None = None
) -> Path:
    path = tmp_path / "prompts.txt"
    path.write_text("\n".join(prompts or numbered_prompts(6)) + "\n")
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", path, "--protocol", "preference", "--trials", 6,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "ck",
        "--max-tokens", 200, *extra,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    return run


def snapshot(run: Path) -> list[tuple[str, int, int]]:
    """Every entry of the run directory with its size and mtime, and the directory's own."""
    entries = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(run.iterdir())]
    return [(".", 0, run.stat().st_mtime_ns), *entries]


def lines_of(output: str, title: str) -> dict[str, tuple[str, str]]:
    """The aspect lines under an endpoint's heading: {aspect: (status, text)}."""
    found: dict[str, tuple[str, str]] = {}
    inside = False
    aspect = ""
    for line in output.splitlines():
        if not line.startswith(" "):
            inside = line.startswith(title)
            continue
        if not inside:
            continue
        if line[2:3] != " ":
            status, aspect, text = line.split(None, 2)
            found[aspect] = (status, text)
        else:  # a wrapped continuation
            status, text = found[aspect]
            found[aspect] = (status, text + " " + line.strip())
    return found


def test_a_ready_run_checks_each_side_with_one_request_and_writes_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulator.config.api_key = "simkey-0123456789abcdef"
    simulator.config.context = 8192
    monkeypatch.setenv("SIM_KEY", "simkey-0123456789abcdef")
    run = design(invoke, tmp_path, simulator.base_url, "--a-key-env", "SIM_KEY",
                 "--b-key-env", "SIM_KEY")  # fmt: skip
    before = snapshot(run)
    result = invoke("generate", run, "--check", "--price-a", "2.5,10", "--price-b", "0.15,0.6")
    assert result.exit_code == 0, result.output
    assert snapshot(run) == before
    assert len(simulator.requests) == 2  # one small completion per side
    for body in (orjson.loads(r.body) for r in simulator.requests):
        assert body["max_tokens"] == 16
        assert body["temperature"] == 1.0  # the side's own parameters
        assert "seed" in body
    a = lines_of(result.stdout, "side A: sim-large at ")
    assert a["key"] == ("ok", "SIM_KEY is set")
    assert a["url"] == ("ok", "reachable (GET /models answered HTTP 200)")
    assert a["model"] == ("ok", "sim-large is listed by the server; answers as sim-large")
    assert a["context"][0] == "ok"
    assert a["context"][1].startswith("longest prompt p")
    assert a["context"][1].endswith(" tokens + up to 200 out, context 8,192")
    assert a["params"] == ("ok", "accepted: temperature 1.0, max_tokens, seed")
    assert a["cost"][0] == "ok"
    assert a["cost"][1].startswith("about $0.01 for the whole run (~")
    assert "simkey-0123456789abcdef" not in result.output
    assert result.stdout.endswith("check: all 2 endpoints ready; nothing written\n")
    for line in result.stdout.splitlines():
        assert len(line) <= 80


def test_a_misspelt_key_variable_fails_its_line_and_sends_no_completion(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulator.config.api_key = "simkey-0123456789abcdef"
    monkeypatch.setenv("SIMKEY", "simkey-0123456789abcdef")
    run = design(invoke, tmp_path, simulator.base_url, "--a-key-env", "SIM_KEY",
                 "--b-key-env", "SIM_KEY")  # fmt: skip
    before = snapshot(run)
    result = invoke("generate", run, "--check")
    assert result.exit_code == 3
    assert snapshot(run) == before
    assert simulator.requests == []
    a = lines_of(result.stdout, "side A: ")
    assert a["key"] == (
        "FAIL",
        "environment variable SIM_KEY is not set, but SIMKEY is (a misspelling?); export "
        'SIM_KEY="$SIMKEY", or design again with --a-key-env SIMKEY',
    )
    assert a["params"] == ("--", "not tried")
    assert a["cost"][1].startswith("unknown: no price (--price-a IN,OUT); ~")
    assert result.stderr == (
        "blindtest: error: check failed (side A: key; side B: key); nothing was written to the "
        "run\n"
    )
    assert "simkey-0123456789abcdef" not in result.output


def test_nothing_listening_fails_the_url_line(invoke: Invoke, tmp_path: Path) -> None:
    url = closed_url()
    run = design(invoke, tmp_path, url)
    before = snapshot(run)
    result = invoke("generate", run, "--check")
    assert result.exit_code == 3
    assert snapshot(run) == before
    a = lines_of(result.stdout, "side A: ")
    assert a["url"] == (
        "FAIL",
        "connection refused, nothing listens there; start the server, or check the base URL",
    )
    assert a["key"][0] == "note"  # a local server is asked without a key
    assert a["context"][1].endswith("context not reported by the server")


def test_a_prompt_longer_than_the_reported_context_fails_the_context_line(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.context = 4096
    prompts = numbered_prompts(6)
    prompts[4] = "Summarise: " + "word " * 9000
    run = design(invoke, tmp_path, simulator.base_url, prompts=prompts)
    result = invoke("generate", run, "--check")
    assert result.exit_code == 3
    a = lines_of(result.stdout, "side A: ")
    status, text = a["context"]
    assert status == "FAIL"
    assert text.startswith("longest prompt p005 ~12,")
    assert text.endswith(
        ", context 4,096: too long for the model; shorten or leave out that prompt, or give "
        "the server a larger context"
    )
    assert a["params"][0] == "ok"  # the small request itself fits


def test_a_refused_parameter_fails_the_params_line_with_the_fix(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = design(invoke, tmp_path, simulator.base_url)
    refusal = Fault(
        "status",
        status=400,
        body='{"error": {"message": "Unsupported value: \'temperature\' does not support 1.0 '
        'with this model. Only the default (1) value is supported.", '
        '"type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}',
    )
    simulator.inject(refusal, model="sim-small")
    result = invoke("generate", run, "--check")
    assert result.exit_code == 3
    b = lines_of(result.stdout, "side B: ")
    status, text = b["params"]
    assert status == "FAIL"
    assert "HTTP 400" in text
    assert text.endswith("design again with --b-temperature 1 (or --b-param temperature=null "
                         "to send none)")  # fmt: skip
    assert lines_of(result.stdout, "side A: ")["params"][0] == "ok"


def test_a_model_the_server_does_not_serve_fails_the_model_line(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = design(invoke, tmp_path, simulator.base_url, "--b", "sim-nope")
    result = invoke("generate", run, "--check")
    assert result.exit_code == 3
    b = lines_of(result.stdout, "side B: sim-nope at ")
    assert b["model"][0] == "FAIL"
    assert "HTTP 404" in b["model"][1]
    assert "check the model name and base URL" in b["model"][1]
    served = b["model"][1].rpartition("the server lists: ")[2]  # the names to pick from
    assert "sim-large" in served.split(", ")


def test_a_base_url_missing_its_api_prefix_says_so(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    bare = simulator.base_url.removesuffix("/v1")
    run = design(invoke, tmp_path, bare)
    result = invoke("generate", run, "--check")
    assert result.exit_code == 3
    a = lines_of(result.stdout, "side A: ")
    assert a["url"][0] == "FAIL"
    assert a["url"][1] == (
        f"GET {bare}/models answered HTTP 404: the base URL lacks the API prefix; try {bare}/v1"
    )


def test_a_single_model_server_answering_another_name_is_a_note_not_a_failure(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.serve_as = "sim-large"
    run = design(invoke, tmp_path, simulator.base_url)
    result = invoke("generate", run, "--check")
    assert result.exit_code == 0, result.output
    b = lines_of(result.stdout, "side B: ")
    assert b["model"] == (
        "note",
        "sim-small asked, sim-large answers (a server of one model answers any name)",
    )


def test_check_on_a_directory_without_a_design_is_bad_input(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("generate", tmp_path / "none", "--check")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "none").exists()
    assert not os.listdir(tmp_path)


def generated_run(invoke: Invoke, tmp_path: Path, simulator: Simulator) -> Path:
    run = design(invoke, tmp_path, simulator.base_url)
    assert invoke("generate", run, "--quiet").exit_code == 0
    simulator.reset()
    return run


def test_bt_judge_check_asks_the_llm_judge_once_with_structured_output_and_writes_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.context = 8192
    run = generated_run(invoke, tmp_path, simulator)
    before = snapshot(run)
    result = invoke(
        "judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", simulator.base_url,
        "--check", "--price", "2.5,10",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert snapshot(run) == before  # no picks file, no lock
    assert len(simulator.requests) == 1
    assert "response_format" in orjson.loads(simulator.requests[0].body)
    judge = lines_of(result.stdout, "LLM judge: sim-judge-fair at ")
    assert judge["model"][0] == "ok"
    assert judge["context"][0] == "ok"
    assert judge["context"][1].endswith(", context 8,192")
    assert judge["params"] == ("ok", "accepted: temperature 0.0, max_tokens, response_format")
    assert judge["cost"][1].startswith("about $")
    assert result.stdout.endswith("check: the endpoint is ready; nothing written\n")


def test_bt_judge_check_notes_a_refused_response_format_as_the_run_would_handle_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = generated_run(invoke, tmp_path, simulator)
    simulator.config.refuse_response_format = True
    result = invoke(
        "judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", simulator.base_url, "--check"
    )
    assert result.exit_code == 0, result.output
    status, text = lines_of(result.stdout, "LLM judge: ")["params"]
    assert status == "note"
    assert text.endswith("response_format refused: the judge asks in plain text, as a run does")
    assert len(simulator.requests) == 2


def test_bt_judge_check_without_a_file_needs_an_llm_judge(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = generated_run(invoke, tmp_path, simulator)
    result = invoke("judge", run, "--judge", "bot:length", "--check")
    assert result.exit_code == 2
    assert "give --check FILE to validate an external judge's picks" in result.stderr
    assert not (run / "picks.jsonl").exists()


def test_blindtest_run_check_covers_both_sides_and_the_llm_judge_and_makes_no_directory(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--protocol", "preference", "--trials", 6,
        "--a-url", url, "--b-url", url, "--judge", "llm:sim-judge-fair", "--judge-url", url,
        "--run-dir", tmp_path / "run", "--check",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert os.listdir(tmp_path) == []  # no run directory, no default one either
    assert len(simulator.requests) == 3
    for title in ("side A: sim-large at ", "side B: sim-small at ", "LLM judge: sim-judge-fair"):
        assert lines_of(result.stdout, title)["params"][0] == "ok"
    assert result.stdout.endswith("check: all 3 endpoints ready; nothing written\n")


def test_blindtest_run_check_fails_with_exit_3_when_a_side_is_not_ready(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--protocol", "preference", "--trials", 6,
        "--a-url", simulator.base_url, "--b-url", closed_url(), "--judge", "bot:length",
        "--check",
    )  # fmt: skip
    assert result.exit_code == 3
    assert lines_of(result.stdout, "side B: ")["url"][0] == "FAIL"
    assert result.stderr.startswith("blindtest: error: check failed (side B: url); ")
    assert os.listdir(tmp_path) == []
