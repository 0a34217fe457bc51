"""A tiny HTTP proxy on 127.0.0.1 for tests: ``CONNECT host:port`` tunnels and
absolute-form requests (``POST http://host:port/path HTTP/1.1``), every host resolved to
127.0.0.1, so a test can name an endpoint ``http://api.proxied.test:PORT/v1`` that only the
proxy can reach. It records what it was asked (``proxy.seen``: request lines). Served from its
own thread and event loop, like the simulator fixture."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

__all__ = ["LoopbackProxy", "loopback_proxy"]


class LoopbackProxy:
    def __init__(self) -> None:
        self.seen: list[str] = []
        self._writers: list[asyncio.StreamWriter] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        future.result()

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        for writer in self._writers:
            writer.transport.abort()
        self._loop.run_until_complete(asyncio.sleep(0))
        self._loop.close()

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        request_line, _, rest = head.partition(b"\r\n")
        method, target, version = request_line.decode("latin-1").split(" ", 2)
        self.seen.append(f"{method} {target}")
        if method == "CONNECT":
            _host, _, port = target.rpartition(":")
            upstream = await asyncio.open_connection("127.0.0.1", int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            first = b""
        else:
            parts = urlsplit(target)
            upstream = await asyncio.open_connection("127.0.0.1", parts.port or 80)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            first = f"{method} {path} {version}\r\n".encode("latin-1") + rest
        up_reader, up_writer = upstream
        self._writers.append(up_writer)
        up_writer.write(first)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        with contextlib.suppress(ConnectionError, OSError):
            writer.close()


@pytest.fixture
def loopback_proxy() -> Iterator[LoopbackProxy]:
    proxy = LoopbackProxy()
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
