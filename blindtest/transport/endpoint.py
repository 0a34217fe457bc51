"""Where and how to ask one model (:class:`Endpoint`): its address, model and sampling
parameters, and the *name* of its key's variable. The key (and any header a side names) is
read from the environment each time a request is built (:func:`_read_key`), never stored,
logged or put into a message. Pure: no socket, no aiohttp.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from blindtest.errors import BadInput, option
from blindtest.model.sides import RESERVED_PARAMS
from blindtest.transport.wire import (
    ChatMessage,
    TokenField,
    request_body,
)

__all__ = ["Endpoint"]


def _bad(condition: bool, message: str) -> None:
    if condition:
        raise BadInput(message)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how to ask one model. Holds the *name* of the key's variable, never a key.

    ``base_url`` includes the API prefix (``https://api.openai.com/v1``). Sampling parameters
    left at ``None`` are not sent, so the server's defaults apply. ``max_tokens_field`` picks
    the body field for the token cap: ``"max_tokens"`` (default) is what every
    OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio, LiteLLM) reads; OpenAI's own
    reasoning models refuse it and need ``"max_completion_tokens"``.
    """

    base_url: str
    model: str
    key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    max_tokens_field: TokenField = "max_tokens"
    #: Body fields set last (a side's ``--a-param``; ``None`` removes the field).
    extra: Mapping[str, object] | None = field(default=None, hash=False, compare=True)
    #: Extra headers as (header NAME, environment variable): the value is read when a
    #: request is sent, never stored (``--a-header-env NAME:ENVVAR``).
    header_env: tuple[tuple[str, str], ...] = ()
    #: The key variable named for this endpoint but unset, when no key is needed to try (a
    #: local server, ``key_env`` then None): nothing is sent, and a 401/403 names it.
    unset_key_env: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        _bad(
            parts.scheme not in ("http", "https") or not parts.hostname,
            f"base URL {self.base_url!r} must start with http:// or https:// and name a host",
        )
        _bad(not self.model.strip(), "model name is empty")
        _bad(self.key_env is not None and not self.key_env.strip(), "key_env is empty")
        _bad(
            self.unset_key_env is not None and not self.unset_key_env.strip(),
            "unset_key_env is empty",
        )
        t = self.temperature
        _bad(
            t is not None and not (0.0 <= t <= 2.0),
            f"temperature must be in [0, 2], got {t}",
        )
        p = self.top_p
        _bad(p is not None and not (0.0 <= p <= 1.0), f"top_p must be in [0, 1], got {p}")
        n = self.max_tokens
        _bad(n is not None and n < 1, f"max_tokens must be >= 1, got {n}")
        nested = (self.extra or {}).get("extra_body")
        fields = nested if isinstance(nested, Mapping) else {}
        owned = sorted(RESERVED_PARAMS.intersection(fields))
        _bad(bool(owned), f"extra_body sets {', '.join(owned)}, which blindtest sets itself")
        _bad(
            self.max_tokens_field not in ("max_tokens", "max_completion_tokens"),
            f"max_tokens_field must be max_tokens or max_completion_tokens, "
            f"got {self.max_tokens_field!r}",
        )

    @property
    def url(self) -> str:
        """The chat-completions URL (a query string, as Azure uses, stays at the end)."""
        parts = urlsplit(self.base_url)
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))

    @property
    def origin(self) -> str:
        """``scheme://host[:port]`` only: no user info, path or query (where keys may hide)."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")

    def request_body(
        self,
        messages: Sequence[ChatMessage],
        *,
        seed: int | None = None,
        response_format: Mapping[str, object] | None = None,
    ) -> dict[str, object]:
        """The chat-completions body for ``messages`` at this endpoint's model and sampling
        parameters (:func:`blindtest.transport.wire.request_body`)."""
        return request_body(
            self.model,
            messages,
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            token_field=self.max_tokens_field,
            seed=seed,
            extra=self.extra,
            response_format=response_format,
        )

    def check_key(self, side: str) -> None:
        """Raise :class:`BadInput` now if the named key variable (or a header's variable) is
        unset (nothing is read out)."""
        _read_key(side, self)
        _read_headers(side, self)


def _role(side: str) -> str:
    """How a message names whoever is asked: ``side A``, ``the LLM judge``, ``the launderer``."""
    return _ROLES.get(side, f"side {side}")


_ROLES = {"judge": "the LLM judge", "launder": "the launderer"}


def _read_key(side: str, endpoint: Endpoint) -> str | None:
    if endpoint.key_env is None:
        return None
    key = os.environ.get(endpoint.key_env, "")
    if not key:
        raise BadInput(
            f"{_role(side)}: environment variable {endpoint.key_env} is not set; "
            f"export it with the API key for {endpoint.model}"
        )
    return key


def _read_headers(side: str, endpoint: Endpoint) -> dict[str, str]:
    headers = {}
    for name, env in endpoint.header_env:
        value = os.environ.get(env, "")
        if not value:
            raise BadInput(
                f"{_role(side)}: environment variable {env} (for the {name} header) is not set; "
                f"export it, or drop the {option(f'{side.lower()}_header_env')} option"
            )
        headers[name] = value
    return headers
