"""reasoning models. A 400 refusing a sampling parameter ends with one line
naming the option to change; reasoning (``reasoning_content``, ``<think>`` blocks) is never
shown to the judge and is recorded apart in responses.jsonl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.rundir import artifacts
from blindtest.simulator import Fault, Simulator
from blindtest.transport.wire import ServerError, parameter_fix, parse_completion

from conftest import Invoke, numbered_prompts

# OpenAI's words for its reasoning models (o1, o3, gpt-5), as returned by the API.
TEMPERATURE_BODY = (
    '{"error": {"message": "Unsupported value: \'temperature\' does not support 0.7 with this '
    'model. Only the default (1) value is supported.", "type": "invalid_request_error", '
    '"param": "temperature", "code": "unsupported_value"}}'
)
MAX_TOKENS_BODY = (
    '{"error": {"message": "Unsupported parameter: \'max_tokens\' is not supported with this '
    'model. Use \'max_completion_tokens\' instead.", "type": "invalid_request_error", '
    '"param": "max_tokens", "code": "unsupported_parameter"}}'
)


def _design(invoke: Invoke, run: Path, tmp_path: Path, simulator: Simulator, *extra: str) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n".join(numbered_prompts(4)) + "\n")
    result = invoke(
        "design", run, "--prompts", prompts, "--a", "sim-large", "--b", "sim-small",
        "--a-url", simulator.base_url, "--b-url", simulator.base_url,
        "--trials", "4", "--seed", "r", *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(
    ("body", "model", "extra", "fix"),
    [
        (TEMPERATURE_BODY, "sim-large", ["--a-temperature", "0.7"], "--a-temperature 1"),
        (MAX_TOKENS_BODY, "sim-small", ["--max-tokens", "300"], "--b-param max_tokens=null"),
    ],
)
def test_a_refused_sampling_parameter_names_the_option_to_change(
    invoke: Invoke,
    tmp_path: Path,
    simulator: Simulator,
    body: str,
    model: str,
    extra: list[str],
    fix: str,
) -> None:
    run = tmp_path / "run"
    _design(invoke, run, tmp_path, simulator, *extra)
    simulator.inject(Fault("status", status=400, body=body), times=100, model=model)
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert fix in lines[0]
    assert "Unsupported" in lines[0]  # the server's own words stay


PARAMETER_FIXES: list[tuple[ServerError, str, str | None]] = [
    (ServerError("x", "unsupported_value", None, "temperature"), "B", "--b-temperature 1"),
    (ServerError("x", "unsupported_parameter", None, "max_tokens"), "A", "max_tokens=null"),
    (
        ServerError("x", "unsupported_parameter", None, "max_completion_tokens"),
        "A",
        "--a-param max_completion_tokens=null (and --a-param max_tokens=N",
    ),
    (ServerError("x", "unsupported_parameter", None, "top_p"), "A", "--a-param top_p=null"),
    # Wording alone, as servers without structured errors say it:
    (ServerError("temperature is not supported for this model"), "A", "--a-temperature 1"),
    # Not a parameter problem, or not a side's:
    (ServerError("x", "unsupported_parameter", None, "seed"), "A", None),
    (ServerError("Invalid model name"), "A", None),
    (ServerError("x", "unsupported_value", None, "temperature"), "launder", None),
]


@pytest.mark.parametrize(("said", "side", "expected"), PARAMETER_FIXES)
def test_parameter_fix_table(said: ServerError, side: str, expected: str | None) -> None:
    fix = parameter_fix(400, said, side)
    if expected is None:
        assert fix is None
    else:
        assert fix is not None
        assert expected in fix


def _body(message: dict[str, Any]) -> bytes:
    return orjson.dumps(
        {"id": "x", "model": "m", "choices": [{"message": message, "finish_reason": "stop"}]}
    )


@pytest.mark.parametrize(
    ("message", "text", "reasoning"),
    [
        ({"role": "assistant", "content": "Hi.", "reasoning_content": "Plan."}, "Hi.", "Plan."),
        ({"role": "assistant", "content": "Hi.", "reasoning": "Plan."}, "Hi.", "Plan."),
        ({"role": "assistant", "content": "<think>\nPlan.\n</think>\n\nHi."}, "Hi.", "Plan."),
        ({"role": "assistant", "content": "Plan.\n</think>\n\nHi."}, "Hi.", "Plan."),
        ({"role": "assistant", "content": "Use <think> tags like </think> this."}, None, None),
        ({"role": "assistant", "content": "Hi."}, "Hi.", None),
    ],
)
def test_reasoning_is_kept_out_of_the_answer(
    message: dict[str, Any], text: str | None, reasoning: str | None
) -> None:
    parsed = parse_completion(_body(message))
    assert parsed.text == (text if text is not None else message["content"])
    assert parsed.reasoning == reasoning


def test_think_blocks_never_reach_the_judge_and_are_recorded_apart(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blindtest.simulator import server

    plain = server.compose  # type: ignore[attr-defined]  # the name the server calls

    def thinking(model: str, messages: Any, **kw: Any) -> str:
        answer = plain(model, messages, **kw)
        return f"<think>\nSECRET-PLAN for {model}\n</think>\n\n{answer}"

    monkeypatch.setattr(server, "compose", thinking)
    run = tmp_path / "run"
    _design(invoke, run, tmp_path, simulator)
    assert invoke("generate", run, "--quiet").exit_code == 0
    rows = artifacts.read_jsonl(run / artifacts.RESPONSES, "responses").records
    assert rows
    for row in rows:
        assert row["reasoning"] == f"SECRET-PLAN for {row['model']}"
        assert "SECRET-PLAN" not in row["text"]
        assert "<think>" not in row["text"]
    assert b"SECRET-PLAN" not in (run / artifacts.TRIALS).read_bytes()
