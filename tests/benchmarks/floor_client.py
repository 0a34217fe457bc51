"""The floor of ``bench_process.py``: the least any Python client can do, run as its own process.
A bare aiohttp session sends the same requests (an OpenAI batch input file's bodies) at the same
concurrency, reads each answer and keeps nothing: no retries, no checks, no files. What it takes
beyond the ideal is the interpreter, aiohttp's import and the server and machine themselves, so
it tells how much of bt-generate's distance from the ideal is bt-generate's.
Usage: ``floor_client.py REQUESTS BASE_URL CONCURRENCY``."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import aiohttp


async def main(requests: str, base_url: str, concurrency: int) -> None:
    with open(requests, encoding="utf-8") as lines:
        bodies: list[dict[str, Any]] = [json.loads(line)["body"] for line in lines if line.strip()]
    gate = asyncio.Semaphore(concurrency)
    headers = {"Authorization": "Bearer sk-bench"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(body: dict[str, Any]) -> None:
            async with gate, session.post(f"{base_url}/chat/completions", json=body) as answer:
                answer.raise_for_status()
                await answer.read()

        await asyncio.gather(*(one(body) for body in bodies))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
