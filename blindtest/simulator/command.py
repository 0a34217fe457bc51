"""``python -m blindtest.simulator``: serve the simulator on 127.0.0.1 until SIGINT or SIGTERM,
printing the base URL first (a benchmark or ``make demo`` reads it)."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence

from blindtest.simulator.faults import FAULTS, FaultMix
from blindtest.simulator.server import HOST, MODELS, Simulator, SimulatorConfig


async def _serve_forever(simulator: Simulator) -> None:
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    async with simulator:
        print(simulator.base_url, flush=True)
        await done.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m blindtest.simulator``: serve on 127.0.0.1 and print the base URL."""
    parser = argparse.ArgumentParser(
        prog="python -m blindtest.simulator",
        description="Local OpenAI-compatible server for blindtest (binds 127.0.0.1 only).",
    )
    parser.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay per completion")
    parser.add_argument(
        "--require-key-env",
        metavar="NAME",
        help="require 'Authorization: Bearer $NAME' (the key is read from that variable)",
    )
    parser.add_argument("--capacity", type=int, help="answer 429 above this many in flight")
    parser.add_argument(
        "--faults",
        default="",
        metavar="MIX",
        help=f"random faults, e.g. 429=0.1,reset=0.05; names: {', '.join(FAULTS)}",
    )
    parser.add_argument("--fault-seed", type=int, default=0, help="seed of the fault mix")
    parser.add_argument(
        "--serve-as",
        choices=MODELS,
        help="answer every model name with this model, as a single-model server does",
    )
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="ignore temperature (answer as at 0), as some servers do",
    )
    parser.add_argument(
        "--deterministic-model",
        action="append",
        default=[],
        choices=MODELS,
        metavar="MODEL",
        help="ignore temperature for this model only (repeatable)",
    )
    parser.add_argument(
        "--canned-model",
        action="append",
        default=[],
        choices=MODELS,
        metavar="MODEL",
        help="answer every prompt to this model with --canned-text, as a gateway returning a "
        "refusal or an error sentence does (repeatable)",
    )
    parser.add_argument(
        "--canned-text",
        default="I cannot help with that.",
        metavar="TEXT",
        help="the answer of --canned-model (default: %(default)r)",
    )
    parser.add_argument(
        "--batch-delay", type=float, default=0.0, help="seconds a batch takes (Batch API)"
    )
    parser.add_argument(
        "--batch-fail-every", type=int, metavar="N", help="every Nth batch request fails (500)"
    )
    parser.add_argument(
        "--batch-expire-next",
        type=int,
        default=0,
        metavar="K",
        help="the next K batches expire half done",
    )
    parser.add_argument(
        "--refuse-response-format",
        action="store_true",
        help="answer requests with response_format by a 400 naming it (no structured output)",
    )
    parser.add_argument(
        "--grammar-fails",
        action="store_true",
        help="answer requests with response_format by llama.cpp's 400 'Failed to initialize "
        "samplers' (it names no field)",
    )
    parser.add_argument(
        "--fail-after",
        type=int,
        metavar="N",
        help="answer the first N chat requests, then every later one with --fail-with",
    )
    parser.add_argument(
        "--fail-with",
        default="401",
        choices=FAULTS,
        metavar="NAME",
        help="the fault after --fail-after N requests (default 401: a key revoked mid-run)",
    )
    parser.add_argument(
        "--context",
        type=int,
        metavar="TOKENS",
        help="every model's context: reported (GET /v1/models max_model_len, GET /props "
        "n_ctx) and enforced (a longer prompt gets vLLM's 400); default: none reported",
    )
    args = parser.parse_args(argv)
    key = None
    if args.require_key_env:
        key = os.environ.get(args.require_key_env)
        if not key:
            parser.error(f"environment variable {args.require_key_env} is not set")
    try:
        mix = FaultMix.parse(args.faults, args.fault_seed) if args.faults else None
    except ValueError as error:
        parser.error(str(error))
    config = SimulatorConfig(
        latency=args.latency_ms / 1000.0,
        api_key=key,
        capacity=args.capacity,
        mix=mix,
        serve_as=args.serve_as,
        deterministic=args.deterministic,
        deterministic_models=frozenset(args.deterministic_model),
        canned_models=frozenset(args.canned_model),
        canned_text=args.canned_text,
        batch_delay=args.batch_delay,
        batch_fail_every=args.batch_fail_every,
        batch_expire_next=args.batch_expire_next,
        refuse_response_format=args.refuse_response_format,
        grammar_fails=args.grammar_fails,
        fail_after=args.fail_after,
        fail_with=args.fail_with,
        context=args.context,
    )
    try:
        asyncio.run(_serve_forever(Simulator(config, port=args.port)))
    except OSError as error:
        print(f"simulator: cannot listen on {HOST}:{args.port}: {error.strerror}", file=sys.stderr)
        return 2
    return 0
