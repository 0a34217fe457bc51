"""Facts about an endpoint's address that several stages need (the analysis names a local
demo, generate decides whether a key is needed). Pure: no socket, no aiohttp, so importing
the analysis stays free of the HTTP stack.

Proxies are chosen here as the openai SDK chooses them: ``HTTPS_PROXY``
for https URLs, ``HTTP_PROXY`` for http ones, ``ALL_PROXY`` for either, lower-case names too,
``NO_PROXY`` to bypass; a local endpoint never goes through a proxy. ``~/.netrc`` is never
read (aiohttp's ``trust_env`` would read it, so the client passes ``proxy=`` itself)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from blindtest.errors import BadInput

__all__ = ["DEFAULT_BASE_URL", "is_loopback", "proxy_for"]

#: Where a model is asked when no URL is given (the design records the URL it used).
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def is_loopback(base_url: str) -> bool:
    """Whether ``base_url`` names this machine (``localhost`` or a loopback address)."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """Proxy URLs by scheme from the environment (lower-case names win, as in urllib)."""
    proxies: dict[str, str] = {}
    for name, value in environ.items():
        lower = name.lower()
        if value and lower.endswith("_proxy") and lower != "no_proxy":
            scheme = lower[: -len("_proxy")]
            if name == lower or scheme not in proxies:
                proxies[scheme] = value
    no_proxy = environ.get("no_proxy") or environ.get("NO_PROXY")
    if no_proxy:
        proxies["no"] = no_proxy
    return proxies


def _bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` names the host: ``*``, the host or a parent domain (``.example.com``
    or ``example.com`` covers ``api.example.com``), ``host:port``, an IP address or network."""
    host = host.lower().rstrip(".")
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        name, _, entry_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if entry_port and entry_port.isdigit():
            if port is None or int(entry_port) != port:
                continue
            entry = name
        entry = entry.strip("[]").lstrip("*").lstrip(".")
        if host == entry or host.endswith("." + entry):
            return True
        try:
            if ipaddress.ip_address(host) in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def proxy_for(url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The proxy a request to ``url`` goes through, or None (direct): never for a local
    endpoint, nor a host ``NO_PROXY`` names. A proxy given without a scheme is taken as
    ``http://`` (as the openai SDK does); a SOCKS proxy is refused (BadInput naming the
    variable)."""
    if is_loopback(url):
        return None
    proxies = _proxies(os.environ if environ is None else environ)
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    if _bypassed(parts.hostname or "", parts.port, proxies.get("no", "")):
        return None
    if "://" not in proxy:
        proxy = "http://" + proxy
    if urlsplit(proxy).scheme not in ("http", "https"):
        variable = f"{parts.scheme.upper()}_PROXY"
        raise BadInput(
            f"{variable}: {urlsplit(proxy).scheme} proxies are not supported; give an http:// "
            "or https:// proxy, or add the host to NO_PROXY"
        )
    return proxy
