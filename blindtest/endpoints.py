"""Facts about an endpoint's address that several stages need (the analysis names a local
demo, generate decides whether a key is needed). Pure: no socket, no aiohttp, so importing
the analysis stays free of the HTTP stack."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = ["DEFAULT_BASE_URL", "is_loopback"]

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
