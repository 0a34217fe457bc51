"""The simulator speaks OpenAI's chat-completions API faithfully enough to stand in for one:
the shapes of its answers and errors (checked against the official schema), sampling that
depends on temperature and seed, two styles that differ but overlap, usage counts, every
fault it can throw, its per-slot counts, and its command line.

These tests talk to it with a bare aiohttp session, to see the raw bytes a client would.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import random
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from blindtest.simulator import (
    FAULTS,
    MODELS,
    Fault,
    FaultMix,
    Simulator,
    SimulatorConfig,
    compose,
    running,
)

from endpoint_fixtures import *  # noqa: F403

Exchange = tuple[int, dict[str, str], bytes]
USER = [{"role": "user", "content": "How do tides work?"}]
TOPICS = ("tides", "vaccines", "sourdough", "jet lag", "composting", "solar panels")
FRAMES = (
    "Explain {} to a curious teenager.",
    "What are common mistakes with {}?",
    "Give practical advice about {}.",
    "What should a beginner know about {}?",
    "Write a short guide to {}.",
)
PROMPTS = [frame.format(topic) for topic in TOPICS for frame in FRAMES]


RESPONSE_SCHEMA = validator_for("CreateChatCompletionResponse")  # noqa: F405
ERROR_SCHEMA = validator_for("ErrorResponse")  # noqa: F405


def check_against_the_schema(status: int, payload: bytes) -> None:
    """Every JSON answer the simulator gives is a valid completion or error body (except the
    one fault whose point is to be invalid JSON)."""
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return
    (RESPONSE_SCHEMA if status == 200 else ERROR_SCHEMA).validate(data)


def exchange(
    simulator: Simulator,
    requests: Sequence[dict[str, Any] | bytes],
    *,
    headers: dict[str, str] | None = None,
    url: str | None = None,
    together: bool = False,
) -> list[Exchange]:
    """POST each body (one after another, or all at once) and return (status, headers, body)."""

    async def one(session: aiohttp.ClientSession, body: dict[str, Any] | bytes) -> Exchange:
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        target = url or simulator.base_url + "/chat/completions"
        async with session.post(target, data=data, headers=headers) as r:
            payload = await r.read()
            if url is None and r.content_type == "application/json":
                check_against_the_schema(r.status, payload)
            return r.status, dict(r.headers), payload

    async def go() -> list[Exchange]:
        async with aiohttp.ClientSession() as session:
            if together:
                return list(await asyncio.gather(*(one(session, b) for b in requests)))
            return [await one(session, body) for body in requests]

    return asyncio.run(go())


def answer(simulator: Simulator, body: dict[str, Any], **options: Any) -> dict[str, Any]:
    [(status, _, payload)] = exchange(simulator, [body], **options)
    assert status == 200, payload
    data: dict[str, Any] = orjson.loads(payload)
    return data


def text_of(simulator: Simulator, body: dict[str, Any]) -> str:
    content: str = answer(simulator, body)["choices"][0]["message"]["content"]
    return content


def draw(model: str, prompt: str, temperature: float, seed: int) -> str:
    messages = [{"role": "user", "content": prompt}]
    return compose(model, messages, temperature=temperature, draw=random.Random(seed))


# --------------------------------------------------------------------------------------------
# Shapes


def test_an_answer_has_exactly_openais_shape(simulator: Simulator, response_validator: Any) -> None:
    before = int(time.time())
    data = answer(simulator, {"model": "sim-large", "messages": USER, "seed": 1})
    after = time.time()
    response_validator.validate(data)
    assert list(data) == [
        "id",
        "object",
        "created",
        "model",
        "choices",
        "usage",
        "system_fingerprint",
    ]
    assert data["object"] == "chat.completion"
    assert data["model"] == "sim-large"
    assert before <= data["created"] <= after  # the time it answered, in whole seconds
    [choice] = data["choices"]
    assert choice["index"] == 0
    assert choice["logprobs"] is None
    assert choice["finish_reason"] == "stop"
    assert list(choice["message"]) == ["role", "content", "refusal"]
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["refusal"] is None


def test_usage_counts_words_as_tokens(simulator: Simulator) -> None:
    messages = [{"role": "system", "content": "Be brief."}, *USER]
    data = answer(simulator, {"model": "sim-small", "messages": messages})
    words = len(data["choices"][0]["message"]["content"].split())
    assert data["usage"] == {
        "prompt_tokens": (2 + 3) + (4 + 3),
        "completion_tokens": words,
        "total_tokens": 12 + words,
    }


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_the_token_cap_cuts_with_finish_reason_length(
    simulator: Simulator, response_validator: Any, field: str
) -> None:
    data = answer(simulator, {"model": "sim-large", "messages": USER, field: 6})
    response_validator.validate(data)
    assert data["choices"][0]["finish_reason"] == "length"
    assert len(data["choices"][0]["message"]["content"].split()) == 6
    assert data["usage"]["completion_tokens"] == 6


def test_a_refusal_has_null_content_and_a_refusal_string(
    simulator: Simulator, response_validator: Any
) -> None:
    simulator.inject("refusal")
    data = answer(simulator, {"model": "sim-small", "messages": USER})
    response_validator.validate(data)
    message = data["choices"][0]["message"]
    assert message["content"] is None
    assert message["refusal"].startswith("I'm sorry")


@pytest.mark.parametrize(
    ("body", "status", "message", "param"),
    [
        (b"{not json", 400, "We could not parse the JSON body of your request.", None),
        ({"messages": USER}, 400, "you must provide a model parameter", "model"),
        ({"model": "sim-large", "messages": []}, 400, "'messages' must be a non-empty", "messages"),
        ({"model": "sim-large", "messages": [{"content": "x"}]}, 400, "Invalid message at", None),
        ({"model": "sim-large", "messages": USER, "temperature": 3}, 400, "between 0 and 2", None),
        ({"model": "sim-large", "messages": USER, "top_p": "all"}, 400, "expected a number", None),
        ({"model": "sim-large", "messages": USER, "max_tokens": 2.5}, 400, "an integer", None),
        ({"model": "sim-large", "messages": USER, "stream": True}, 400, "does not stream", None),
        ({"model": "gpt-4o", "messages": USER}, 404, "The model `gpt-4o` does not exist", None),
    ],
)
def test_bad_requests_get_openai_style_errors(
    simulator: Simulator,
    error_validator: Any,
    body: dict[str, Any] | bytes,
    status: int,
    message: str,
    param: str | None,
) -> None:
    [(got, headers, payload)] = exchange(simulator, [body])
    assert got == status
    assert headers["Content-Type"].startswith("application/json")
    error = orjson.loads(payload)
    error_validator.validate(error)
    assert message in error["error"]["message"]
    if param is not None:
        assert error["error"]["param"] == param


def test_a_configured_key_is_required_and_never_echoed_whole(
    simulator: Simulator, error_validator: Any
) -> None:
    simulator.config.api_key = "simkey-0123456789abcdef"
    body = {"model": "sim-small", "messages": USER}
    missing, wrong, right = (
        exchange(simulator, [body], headers=h)[0]
        for h in (
            None,
            {"Authorization": "Bearer simkey-wrong-0123456789"},
            {"Authorization": "Bearer simkey-0123456789abcdef"},
        )
    )
    assert missing[0] == wrong[0] == 401
    assert right[0] == 200
    for _, _, payload in (missing, wrong):
        error_validator.validate(orjson.loads(payload))
    assert b"You didn't provide an API key" in missing[2]
    assert b"Incorrect API key provided: sim***89" in wrong[2]
    assert b"simkey-wrong-0123456789" not in wrong[2]


def test_the_models_endpoint_lists_the_simulated_models(simulator: Simulator) -> None:
    async def go() -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as session,
            session.get(simulator.base_url + "/models") as response,
        ):
            return response.status, orjson.loads(await response.read())

    status, data = asyncio.run(go())
    assert status == 200
    assert data["object"] == "list"
    assert (
        [m["id"] for m in data["data"]][:3]
        == list(MODELS)
        == ["sim-large", "sim-small", "sim-launder"]
    )


# --------------------------------------------------------------------------------------------
# Sampling


def test_temperature_zero_gives_one_text_whatever_the_seed(simulator: Simulator) -> None:
    bodies = [
        {"model": "sim-large", "messages": USER, "temperature": 0, **seed}
        for seed in ({}, {}, {"seed": 1}, {"seed": 2}, {"seed": 99})
    ]
    texts = {
        orjson.loads(p)["choices"][0]["message"]["content"]
        for _, _, p in exchange(simulator, bodies)
    }
    assert len(texts) == 1


def test_above_zero_a_seed_reproduces_a_draw_and_other_seeds_vary(simulator: Simulator) -> None:
    def text(seed: int) -> str:
        return text_of(
            simulator, {"model": "sim-small", "messages": USER, "temperature": 1, "seed": seed}
        )

    assert text(7) == text(7)
    assert len({text(seed) for seed in range(10)}) >= 5


def test_without_a_seed_every_call_is_a_fresh_draw(simulator: Simulator) -> None:
    body = {"model": "sim-large", "messages": USER, "temperature": 1.0}
    texts = {
        orjson.loads(p)["choices"][0]["message"]["content"]
        for _, _, p in exchange(simulator, [body] * 8)
    }
    assert len(texts) >= 5


def test_higher_temperatures_stray_further_from_the_preferred_answer() -> None:
    prompt = "Explain tides to a curious teenager."

    def overlap(temperature: float) -> float:
        mode = set(draw("sim-large", prompt, 0.0, 0).split())
        scores = []
        for seed in range(30):
            words = set(draw("sim-large", prompt, temperature, seed).split())
            scores.append(len(words & mode) / len(words | mode))
        return statistics.mean(scores)

    assert overlap(0.0) == 1.0
    assert 1.0 > overlap(0.3) > overlap(1.0) > overlap(2.0)


def test_the_two_styles_differ_but_overlap() -> None:
    def census(model: str) -> tuple[float, float, float]:
        texts = [draw(model, prompt, 1.0, i) for i, prompt in enumerate(PROMPTS)]
        words = statistics.mean(len(t.split()) for t in texts)
        markdown = statistics.mean(bool(re.search(r"^(#|- |\d+\. )|\*\*", t, re.M)) for t in texts)
        dashes = statistics.mean("—" in t for t in texts)
        return words, markdown, dashes

    large, small = census("sim-large"), census("sim-small")
    assert large[0] > 1.8 * small[0]  # longer
    assert large[1] > 0.8
    assert 0.0 < small[1] < 0.3
    assert large[2] > 0.8
    assert small[2] < 0.3


def test_a_length_band_in_the_prompt_is_mostly_followed() -> None:
    for model in ("sim-large", "sim-small"):
        inside = []
        for i, prompt in enumerate(PROMPTS):
            messages = [
                {"role": "system", "content": "Answer in 40 to 80 words."},
                {"role": "user", "content": prompt},
            ]
            text = compose(model, messages, temperature=1.0, draw=random.Random(i))
            inside.append(40 <= len(text.split()) <= 80)
        assert 0.65 <= statistics.mean(inside) < 1.0, model  # mostly, not always


def test_the_launderer_rewrites_structure_into_plain_prose(simulator: Simulator) -> None:
    original = draw("sim-large", "Give practical advice about composting.", 1.0, 3)
    assert re.search(r"^(#|- |\d+\. )|\*\*|—", original, re.M)
    messages = [
        {"role": "system", "content": "Rewrite the user's text as neutral plain prose."},
        {"role": "user", "content": original},
    ]
    laundered = text_of(simulator, {"model": "sim-launder", "messages": messages, "seed": 1})
    assert not re.search(r"^(#|- |\d+\. )|\*\*|—|–", laundered, re.M)
    assert "\n" not in laundered
    assert laundered.endswith(".")


# --------------------------------------------------------------------------------------------
# Faults


def test_rate_limit_faults_carry_each_kind_of_retry_header(simulator: Simulator) -> None:
    body = {"model": "sim-large", "messages": USER}
    for name in ("429", "429-seconds", "429-date", "429-bare"):
        simulator.inject(name)
    before = time.time()
    short, seconds, date, bare = exchange(simulator, [body] * 4)
    after = time.time()
    assert [x[0] for x in (short, seconds, date, bare)] == [429] * 4
    assert short[1]["retry-after-ms"] == "20"
    assert seconds[1]["Retry-After"] == "1"
    when = email.utils.parsedate_to_datetime(date[1]["Retry-After"]).timestamp()
    # A date in the near future, to the second (an HTTP-date has no fractions): bounded by
    # the clock around the exchange, not by how fast a loaded machine runs it.
    assert int(before) <= when <= after + 2
    assert "Retry-After" not in bare[1]
    assert "retry-after-ms" not in bare[1]


def test_an_html_fault_is_an_html_error_page(simulator: Simulator) -> None:
    simulator.inject("html")
    simulator.inject("html-200")
    (status, headers, page), (ok_status, _, ok_page) = exchange(
        simulator, [{"model": "sim-large", "messages": USER}] * 2
    )
    assert status == 502
    assert headers["Content-Type"].startswith("text/html")
    assert page.startswith(b"<!DOCTYPE html>")
    assert b"<title>502 Bad Gateway</title>" in page
    assert ok_status == 200
    assert ok_page.startswith(b"<!DOCTYPE html>")


def test_invalid_json_and_empty_choices_come_with_status_200(simulator: Simulator) -> None:
    simulator.inject("invalid-json")
    simulator.inject("empty-choices")
    simulator.inject("no-content")
    broken, empty, blank = exchange(simulator, [{"model": "sim-large", "messages": USER}] * 3)
    assert broken[0] == empty[0] == blank[0] == 200
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(broken[2])
    assert orjson.loads(empty[2])["choices"] == []
    assert orjson.loads(blank[2])["choices"][0]["message"]["content"] is None


def test_held_answers_wait_until_they_are_let_go(simulator: Simulator) -> None:
    simulator.config.hold = True
    answers: list[dict[str, Any]] = []
    asking = threading.Thread(
        target=lambda: answers.append(answer(simulator, {"model": "sim-large", "messages": USER}))
    )
    asking.start()
    while not simulator.requests:  # arrived
        time.sleep(0.001)
    assert _answered(simulator) == 0  # held, however long the machine takes
    simulator.config.hold = False
    asking.join()
    assert _answered(simulator) == 1
    assert answers[0]["model"] == "sim-large"


def _answered(simulator: Simulator) -> int:
    return sum(slot.answered for slot in simulator.slots.values())


@pytest.mark.parametrize("fault", ["reset", "truncate"])
def test_resets_break_the_connection(simulator: Simulator, fault: str) -> None:
    simulator.inject(fault)
    with pytest.raises(aiohttp.ClientError):
        exchange(simulator, [{"model": "sim-large", "messages": USER}])
    assert exchange(simulator, [{"model": "sim-large", "messages": USER}])[0][0] == 200


def test_latency_and_slow_faults_delay_the_answer(simulator: Simulator) -> None:
    # Lower bounds (sleeps: a loaded machine only adds to them), and the fault used once.
    simulator.config.latency = 0.05
    simulator.inject(Fault("slow", delay=0.1))
    started = time.perf_counter()
    exchange(simulator, [{"model": "sim-large", "messages": USER}])
    slow = time.perf_counter() - started
    assert simulator.pending() == 0  # the first request took the fault
    started = time.perf_counter()
    exchange(simulator, [{"model": "sim-large", "messages": USER}])
    plain = time.perf_counter() - started
    assert slow >= 0.15
    assert plain >= 0.05


def test_faults_by_header_by_directive_and_by_model(simulator: Simulator) -> None:
    large = {"model": "sim-large", "messages": USER}
    [(status, _, _)] = exchange(simulator, [large], headers={"x-sim-fault": "503"})
    assert status == 503
    once = {"model": "sim-large", "messages": [{"role": "user", "content": "Hi [sim:500*1]"}]}
    always = {"model": "sim-small", "messages": [{"role": "user", "content": "[sim:refusal] Hi"}]}
    statuses = [s for s, _, _ in exchange(simulator, [once, once, once])]
    assert statuses == [500, 200, 200]
    for _, _, payload in exchange(simulator, [always, always]):
        assert orjson.loads(payload)["choices"][0]["message"]["refusal"]
    simulator.inject("500", model="sim-small")
    small = {"model": "sim-small", "messages": USER}
    assert [s for s, _, _ in exchange(simulator, [large, small])] == [200, 500]
    assert simulator.pending() == 0


def test_over_capacity_the_server_answers_429(simulator: Simulator) -> None:
    simulator.config.capacity = 1
    simulator.config.hold = True  # the first in flight until all three have arrived
    letting_go = threading.Thread(target=_let_go_once_arrived, args=(simulator, 3))
    letting_go.start()
    bodies = [{"model": "sim-large", "messages": USER, "seed": i} for i in range(3)]
    statuses = sorted(s for s, _, _ in exchange(simulator, bodies, together=True))
    letting_go.join()
    assert statuses == [200, 429, 429]


def _let_go_once_arrived(simulator: Simulator, count: int) -> None:
    while len(simulator.requests) < count:
        time.sleep(0.001)
    simulator.config.hold = False


def test_a_fault_mix_depends_on_slot_and_attempt_not_on_arrival_order() -> None:
    mix = FaultMix({"429": 0.10, "reset": 0.05}, seed=1)
    picks = [mix.choose(f"slot{i}", nth) for i in range(4000) for nth in range(2)]
    assert picks == [mix.choose(f"slot{i}", nth) for i in range(4000) for nth in range(2)]
    assert 0.09 < picks.count(FAULTS["429"]) / len(picks) < 0.11
    assert 0.04 < picks.count(FAULTS["reset"]) / len(picks) < 0.06
    other_seed = FaultMix({"429": 0.10, "reset": 0.05}, seed=2)
    assert picks != [other_seed.choose(f"slot{i}", nth) for i in range(4000) for nth in range(2)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("429", "should look like NAME=SHARE"),
        ("teapot=0.1", "unknown fault names ['teapot']"),
        ("429=0.7,reset=0.5", "sum to <= 1"),
        ("429=-0.1", "must be in [0, 1]"),
    ],
)
def test_a_bad_fault_mix_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        FaultMix.parse(text)


def test_slots_count_requests_and_answers(simulator: Simulator) -> None:
    simulator.inject("500")
    body = {"model": "sim-small", "messages": USER, "seed": 5}
    exchange(simulator, [body, body, body, {**body, "seed": 6}])
    counts = sorted(
        (s.seed, s.received, s.answered, s.after_answer) for s in simulator.slots.values()
    )
    assert counts == [(5, 3, 2, 1), (6, 1, 1, 0)]
    assert simulator.stats() == {
        "requests": 4,
        "slots": 2,
        "answered": 3,
        "answered_twice": 1,
        "after_answer": 1,
        "unanswered": 0,
        "max_in_flight": {"sim-small": 1},
    }
    reset = f"http://127.0.0.1:{simulator.port}/_sim/reset"
    [(status, _, payload)] = exchange(simulator, [b""], url=reset)
    assert status == 200
    assert orjson.loads(payload)["requests"] == 0
    assert simulator.slots == {}


# --------------------------------------------------------------------------------------------
# Running it


def test_it_listens_on_loopback_only(simulator: Simulator) -> None:
    assert simulator.base_url == f"http://127.0.0.1:{simulator.port}/v1"
    with socket.create_connection(("127.0.0.1", simulator.port)) as connection:
        connection.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert connection.recv(12) == b"HTTP/1.1 200"


def test_a_busy_port_is_reported_by_running() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError), running(SimulatorConfig(), port=taken.getsockname()[1]):
            pass


def test_it_can_be_served_in_process_on_the_callers_loop(response_validator: Any) -> None:
    async def go() -> Any:
        async with (
            Simulator(SimulatorConfig(latency=0.01)) as simulator,
            aiohttp.ClientSession() as session,
        ):
            body = orjson.dumps({"model": "sim-small", "messages": USER})
            async with session.post(simulator.base_url + "/chat/completions", data=body) as r:
                return orjson.loads(await r.read())

    response_validator.validate(asyncio.run(go()))


def test_the_command_line_prints_its_base_url_and_serves_until_terminated() -> None:
    command = [sys.executable, "-m", "blindtest.simulator", "--port", "0", "--latency-ms", "5"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().strip()
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", base_url)
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(base_url + "/models") as response:
                assert orjson.loads(response.read())["data"][0]["id"] == "sim-large"
        finally:
            process.terminate()
            assert process.wait() == 0


def test_the_command_line_refuses_a_bad_fault_mix() -> None:
    command = [sys.executable, "-m", "blindtest.simulator", "--faults", "teapot=1"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "unknown fault names ['teapot']" in result.stderr


def test_the_schema_is_the_copy_recorded_in_the_data_readme() -> None:
    schema = Path(__file__).parents[1] / "data" / "openai-chat-completions.schema.json"
    digest = hashlib.sha256(schema.read_bytes()).hexdigest()
    readme = (schema.parent / "README.md").read_text(encoding="utf-8")
    assert digest in readme
