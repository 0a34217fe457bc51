"""Pytest fixtures for anything that calls an endpoint: the simulator on 127.0.0.1, a key that
must never leak, endpoints pointing at the simulator, and the OpenAI schema validators.

Use from any test module with ``from endpoint_fixtures import *`` (``tests/conftest.py`` does).

* ``simulator``: a running :class:`blindtest.simulator.Simulator`, served from its own thread
  and event loop, so both ``asyncio.run(...)`` in a test and a CLI command that runs its own
  loop can call it. Faults: ``simulator.inject("429", times=2)``, ``simulator.config.latency``,
  ``simulator.config.capacity``, ``[sim:NAME]`` directives in prompts. Counts:
  ``simulator.slots``, ``simulator.stats()``, ``simulator.requests``.
* ``sim_key``: puts a fresh secret in ``$BLINDTEST_SIM_KEY`` and makes the simulator demand
  it; returns the secret, so a test can assert it appears nowhere.
* ``sim_endpoint``: ``sim_endpoint("sim-small", temperature=0.7)`` -> an ``Endpoint`` on the
  simulator (``key_env="BLINDTEST_SIM_KEY"`` when ``sim_key`` is in use).
* ``request_validator`` / ``response_validator``: jsonschema validators for
  ``CreateChatCompletionRequest`` / ``CreateChatCompletionResponse`` from
  ``tests/data/openai-chat-completions.schema.json``; ``error_validator`` for error bodies.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from blindtest.simulator import Simulator, SimulatorConfig, running
from blindtest.transport.batch_client import BatchClient
from blindtest.transport.endpoint import Endpoint

__all__ = [
    "SIM_KEY_ENV",
    "error_validator",
    "request_validator",
    "response_validator",
    "sim_endpoint",
    "sim_key",
    "simulator",
    "through_batch_api",
    "validator_for",
]

SIM_KEY_ENV = "BLINDTEST_SIM_KEY"
SCHEMA_PATH = Path(__file__).parent / "data" / "openai-chat-completions.schema.json"


def validator_for(definition: str) -> Draft202012Validator:
    """A validator for one ``$defs`` entry of the OpenAI chat-completions schema."""
    schema = orjson.loads(SCHEMA_PATH.read_bytes())
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(root)


@pytest.fixture(scope="session")
def request_validator() -> Draft202012Validator:
    return validator_for("CreateChatCompletionRequest")


@pytest.fixture(scope="session")
def response_validator() -> Draft202012Validator:
    return validator_for("CreateChatCompletionResponse")


@pytest.fixture(scope="session")
def error_validator() -> Draft202012Validator:
    return validator_for("ErrorResponse")


@pytest.fixture
def simulator() -> Iterator[Simulator]:
    with running(SimulatorConfig()) as sim:
        yield sim


@pytest.fixture
def sim_key(simulator: Simulator, monkeypatch: pytest.MonkeyPatch) -> str:
    # Not shaped like a real provider key (no "sk-" prefix), so no scanner mistakes it for one.
    secret = "simkey-" + secrets.token_hex(16)
    monkeypatch.setenv(SIM_KEY_ENV, secret)
    simulator.config.api_key = secret
    return secret


@pytest.fixture
def sim_endpoint(simulator: Simulator, request: pytest.FixtureRequest) -> Callable[..., Endpoint]:
    keyed = "sim_key" in request.fixturenames

    def make(model: str = "sim-large", **options: Any) -> Endpoint:
        options.setdefault("key_env", SIM_KEY_ENV if keyed else None)
        return Endpoint(simulator.base_url, model, **options)

    return make


def through_batch_api(simulator: Simulator, data: bytes) -> tuple[bytes, bytes]:
    """A batch input file through the simulator's Batch API: upload, create the batch, poll
    until it ends, download; its output and error files (empty when it has none)."""

    async def cycle() -> tuple[bytes, bytes]:
        async with BatchClient(Endpoint(simulator.base_url, "any")) as api:
            uploaded = await api.upload("input.jsonl", data)
            batch = await api.create(str(uploaded["id"]))
            while batch["status"] not in ("completed", "expired", "failed", "cancelled"):
                await asyncio.sleep(0.02)
                batch = await api.retrieve(str(batch["id"]))
            out = batch["output_file_id"]
            err = batch["error_file_id"]
            return (
                await api.content(str(out)) if out else b"",
                await api.content(str(err)) if err else b"",
            )

    return asyncio.run(cycle())
