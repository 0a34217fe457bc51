"""The openai SDK baseline of ``bench_process.py``, run as its own process as a user's script
would be: read the requests (an OpenAI batch input file, the exact bodies bt-generate sends),
send them with ``AsyncOpenAI`` under a semaphore with ``asyncio.gather``, and append each answer
to a JSONL file. Usage: ``sdk_baseline.py REQUESTS BASE_URL CONCURRENCY OUT``."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from openai import AsyncOpenAI


async def main(requests: str, base_url: str, concurrency: int, out: str) -> None:
    with open(requests, encoding="utf-8") as lines:
        bodies: list[dict[str, Any]] = [json.loads(line)["body"] for line in lines if line.strip()]
    client = AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=5)
    gate = asyncio.Semaphore(concurrency)
    with open(out, "a", encoding="utf-8") as sink:

        async def one(body: dict[str, Any]) -> None:
            async with gate:
                completion = await client.chat.completions.create(**body)
            row = {"text": completion.choices[0].message.content, "usage": completion.usage}
            sink.write(json.dumps(row, default=lambda usage: usage.model_dump()) + "\n")

        await asyncio.gather(*(one(body) for body in bodies))
    await client.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))
