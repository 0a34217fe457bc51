"""A local OpenAI-compatible chat-completions server, with switchable faults.

It owns ``POST /v1/chat/completions`` and ``GET /v1/models`` for three simulated models,
``sim-large`` (longer, headed, bulleted, em dashes), ``sim-small`` (short plain prose) and
``sim-launder`` (rewrites the last user message as plain prose), plus the faults a real
endpoint throws (429 with every kind of Retry-After, 5xx, HTML error pages, connection
resets, slow answers and slow reads, invalid JSON, empty ``choices``, refusals, 401, 404,
OpenAI's billing 429, and "prompt too long" as OpenAI, llama.cpp, vLLM, Ollama and LiteLLM
word it), the manners of some servers (a single-model server answering any model name, one
that ignores temperature), and a count of requests per slot (model, seed, messages). The
tests, ``make demo`` and the benchmark use it, in process (:class:`Simulator`,
:func:`running`) or as ``python -m blindtest.simulator --port N``.

The package: :mod:`.faults` (what goes wrong and how servers word it), :mod:`.text` (the
models' answers), :mod:`.server` (the HTTP server and :func:`running`), :mod:`.command` (the
command line). This module is its public face.

It must never bind anything but 127.0.0.1, open an outgoing connection, touch global random
state, or log a key. Sampling is a pure function of the request: at temperature 0 a prompt
always gets the same text; above 0, the ``seed`` field (or, without one, a request counter)
picks among variants, more freely the higher the temperature.
"""

from __future__ import annotations

from blindtest.simulator.command import main
from blindtest.simulator.faults import CONTEXT_BODIES, FAULTS, QUOTA_BODY, Fault, FaultMix
from blindtest.simulator.server import (
    MODELS,
    ReceivedRequest,
    Simulator,
    SimulatorConfig,
    SlotCount,
    running,
)
from blindtest.simulator.text import compose

__all__ = [
    "CONTEXT_BODIES",
    "FAULTS",
    "MODELS",
    "QUOTA_BODY",
    "Fault",
    "FaultMix",
    "ReceivedRequest",
    "Simulator",
    "SimulatorConfig",
    "SlotCount",
    "compose",
    "main",
    "running",
]
