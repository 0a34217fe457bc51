"""per-side transport (concurrency, rpm, headers from the environment)
and proxies (HTTPS_PROXY / HTTP_PROXY / NO_PROXY as httpx reads them, never for a local
endpoint, never ~/.netrc), checked through a real proxy on loopback."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from blindtest.errors import BadInput, EndpointFailed
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.transport.addresses import proxy_for
from blindtest.transport.client import ChatClient
from blindtest.transport.endpoint import Endpoint

from conftest import Invoke, numbered_prompts
from proxy_fixtures import LoopbackProxy, loopback_proxy  # noqa: F401  (fixture)

PROXY_VARS = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _no_proxy_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def _design(invoke: Invoke, run: Path, tmp_path: Path, url_a: str, url_b: str, *extra: str) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n".join(numbered_prompts(6)) + "\n")
    result = invoke(
        "design", run, "--prompts", prompts, "--a", "sim-large", "--b", "sim-small",
        "--a-url", url_a, "--b-url", url_b, "--trials", "6", "--seed", "t", "--protocol", "pair",
        *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr


def test_done_when_requests_go_through_a_loopback_proxy_when_the_proxy_is_set(
    invoke: Invoke,
    tmp_path: Path,
    simulator: Simulator,
    loopback_proxy: LoopbackProxy,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A host only the proxy can reach (it resolves every name to 127.0.0.1).
    port = simulator.base_url.split(":")[2].split("/")[0]
    remote = f"http://api.proxied.test:{port}/v1"
    monkeypatch.setenv("HTTP_PROXY", loopback_proxy.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    # ~/.netrc is never read: its password would otherwise become an Authorization header.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text("machine api.proxied.test login me password netrc-secret\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NETRC", str(home / ".netrc"))
    run = tmp_path / "run"
    _design(invoke, run, tmp_path, remote, remote)
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 0, result.stderr
    assert f"POST http://api.proxied.test:{port}/v1/chat/completions" in loopback_proxy.seen
    assert len(simulator.requests) == 12
    for request in simulator.requests:
        assert request.headers["authorization"] == "Bearer test-key-not-secret"
    # NO_PROXY names the host: direct, so the name does not resolve and nothing reaches it.
    monkeypatch.setenv("NO_PROXY", "localhost,.proxied.test")
    before = len(loopback_proxy.seen)
    again = tmp_path / "again"
    _design(invoke, again, tmp_path, remote, remote)
    failed = invoke("generate", again, "--quiet", "--max-retries", "0")
    assert failed.exit_code == 3
    assert len(loopback_proxy.seen) == before


def test_https_proxy_tunnels_with_connect(
    simulator: Simulator,
    loopback_proxy: LoopbackProxy,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = simulator.base_url.split(":")[2].split("/")[0]
    monkeypatch.setenv("HTTPS_PROXY", loopback_proxy.url)
    endpoint = Endpoint(f"https://api.proxied.test:{port}/v1", "sim-large")

    async def ask() -> None:
        async with ChatClient({"A": endpoint}) as client:
            completion = await client.complete("A", [{"role": "user", "content": "hi"}])
            assert not completion.ok  # TLS to a plain-http server cannot succeed

    with pytest.raises(EndpointFailed):
        asyncio.run(ask())
    assert loopback_proxy.seen[0] == f"CONNECT api.proxied.test:{port}"


def test_a_local_endpoint_never_goes_through_a_proxy(
    invoke: Invoke,
    tmp_path: Path,
    simulator: Simulator,
    loopback_proxy: LoopbackProxy,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, loopback_proxy.url)
    run = tmp_path / "run"
    _design(invoke, run, tmp_path, simulator.base_url, simulator.base_url)
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert loopback_proxy.seen == []
    assert len(simulator.requests) == 12


PROXY_TABLE: list[tuple[dict[str, str], str, str | None]] = [
    ({"HTTPS_PROXY": "http://p:3128"}, "https://api.openai.com/v1", "http://p:3128"),
    ({"HTTPS_PROXY": "http://p:3128"}, "http://gpu.lan:8000/v1", None),
    ({"HTTP_PROXY": "p:3128"}, "http://gpu.lan:8000/v1", "http://p:3128"),
    ({"https_proxy": "http://low", "HTTPS_PROXY": "http://up"}, "https://x.com", "http://low"),
    ({"ALL_PROXY": "http://all"}, "https://api.openai.com/v1", "http://all"),
    ({"HTTPS_PROXY": "http://p", "NO_PROXY": "openai.com"}, "https://api.openai.com/v1", None),
    ({"HTTPS_PROXY": "http://p", "NO_PROXY": ".openai.com"}, "https://api.openai.com", None),
    ({"HTTPS_PROXY": "http://p", "NO_PROXY": "*"}, "https://api.openai.com/v1", None),
    ({"HTTPS_PROXY": "http://p", "NO_PROXY": "10.0.0.0/8"}, "https://10.1.2.3/v1", None),
    ({"HTTPS_PROXY": "http://p", "NO_PROXY": "other.com"}, "https://api.openai.com", "http://p"),
    ({"HTTPS_PROXY": "http://p"}, "http://127.0.0.1:8000/v1", None),
    ({"HTTP_PROXY": "http://p"}, "http://localhost:11434/v1", None),
    ({"HTTP_PROXY": "http://p"}, "http://[::1]:8000/v1", None),
]


@pytest.mark.parametrize(("environ", "url", "proxy"), PROXY_TABLE)
def test_proxy_chosen_as_httpx_chooses_it(
    environ: dict[str, str], url: str, proxy: str | None
) -> None:
    assert proxy_for(url, environ) == proxy


def test_a_socks_proxy_is_refused_naming_the_variable() -> None:
    with pytest.raises(BadInput, match="HTTPS_PROXY: socks5 proxies are not supported"):
        proxy_for("https://api.openai.com/v1", {"HTTPS_PROXY": "socks5://p:1080"})


def test_header_env_is_sent_per_side_and_never_written(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    _design(invoke, run, tmp_path, simulator.base_url, simulator.base_url)
    header = ["--a-header-env", "X-Org:BT_TEST_ORG"]
    unset = invoke("generate", run, "--quiet", *header)
    assert unset.exit_code == 2
    assert "environment variable BT_TEST_ORG (for the X-Org header) is not set" in unset.stderr
    assert not (run / artifacts.RESPONSES).exists()
    monkeypatch.setenv("BT_TEST_ORG", "org-value-7f3a")
    assert invoke("generate", run, "--quiet", *header).exit_code == 0
    by_model: dict[str, set[Any]] = {}
    for request in simulator.requests:
        by_model.setdefault(request.json()["model"], set()).add(request.headers.get("x-org"))
    assert by_model == {"sim-large": {"org-value-7f3a"}, "sim-small": {None}}
    for path in run.iterdir():
        assert b"org-value-7f3a" not in path.read_bytes()
    bad = invoke("generate", run, "--quiet", "--b-header-env", "X-Org=BT_TEST_ORG")
    assert bad.exit_code == 2
    assert "--b-header-env: 'X-Org=BT_TEST_ORG' is not NAME:ENVVAR" in bad.stderr


def test_concurrency_per_side(invoke: Invoke, tmp_path: Path, simulator: Simulator) -> None:
    simulator.config.latency = 0.05
    run = tmp_path / "run"
    _design(invoke, run, tmp_path, simulator.base_url, simulator.base_url)
    result = invoke("generate", run, "--quiet", "--concurrency", "6", "--a-concurrency", "1")
    assert result.exit_code == 0, result.stderr
    assert simulator.max_in_flight["sim-large"] == 1
    assert simulator.max_in_flight["sim-small"] > 1


def test_rpm_per_side_reaches_the_client() -> None:
    a = Endpoint("http://127.0.0.1:9/v1", "m")
    client = ChatClient({"A": a, "B": a}, concurrency=4, rpm=None, side_rpm={"B": 30.0},
                        side_concurrency={"A": 2})  # fmt: skip
    assert (client.ceiling("A"), client.ceiling("B")) == (2, 4)
    assert client._rpms == {"A": None, "B": 30.0}
