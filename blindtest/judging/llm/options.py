"""What ``bt-judge --judge llm:MODEL`` was given (:class:`LlmOptions`: the model, its URL and key
variable, temperature, concurrency, prices, template, swap and confidence rules), the settings
its picks record, and the checks of its key before anything is asked.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from blindtest.errors import BadInput, option
from blindtest.judging.llm import prompts
from blindtest.model.protocols import PROTOCOLS
from blindtest.transport.addresses import is_loopback
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.keynames import check_key_names
from blindtest.transport.retry import DEFAULT_POLICY

DEFAULT_KEY_ENVS = ("BLINDTEST_JUDGE_KEY", "OPENAI_API_KEY")


DEFAULT_URL = "https://api.openai.com/v1"


def parse_price(text: str | None) -> tuple[float, float] | None:
    """``--price IN,OUT`` (dollars per million tokens) as two numbers, or None."""
    if text is None:
        return None
    try:
        parts = [float(p) for p in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) != 2 or not all(math.isfinite(p) and p >= 0 for p in parts):
        raise BadInput(
            f"{option('llm.price')}: expected IN,OUT dollars per million tokens (two finite "
            f"numbers >= 0), e.g. 2.5,10; got {text!r}"
        )
    return parts[0], parts[1]


@dataclass(frozen=True, slots=True)
class LlmOptions:
    """What ``bt-judge --judge llm:MODEL`` was given (the key's variable name, never a key)."""

    model: str
    base_url: str = DEFAULT_URL
    key_env: str | None = None
    temperature: float = 0.0
    concurrency: int = 8
    rpm: float | None = None
    timeout: float = 120.0
    max_retries: int = DEFAULT_POLICY.max_retries
    price: tuple[float, float] | None = None
    template: prompts.JudgeTemplate | None = None
    swap: bool = True
    min_confidence: float = 0.7
    inconsistent: str = "tie"
    context_tokens: int = 128_000

    def settings(self, protocol: str) -> dict[str, object]:
        """What makes this judge's verdicts, recorded on each of its picks (``judge_settings``)
        so a resume with other settings is refused: the model, the URL (scheme, host, port and
        path; no user info or query, where keys may hide: a key in the query may rotate), the
        temperature, the SHA-256 of the prompt templates the protocol uses,
        ``--min-confidence``, and for preference the swap and ``--inconsistent``. Not the key
        (nor its variable), the concurrency, the rate, timeouts, retries or price: they change
        no verdict."""
        parts = urlsplit(self.base_url)
        settings: dict[str, object] = {
            "model": self.model,
            "url": self.endpoint().origin + parts.path.rstrip("/"),
            "temperature": float(self.temperature),
            "template_sha256": _templates_sha256(self.template, protocol),
            "min_confidence": float(self.min_confidence),
        }
        if PROTOCOLS[protocol].llm.asking == "passes":
            settings["swap"] = self.swap
            settings["inconsistent"] = self.inconsistent
        return settings

    def endpoint(self) -> Endpoint:
        """The judge's endpoint; with no key variable set, a 401/403 names the first default."""
        return Endpoint(
            base_url=self.base_url,
            model=self.model,
            key_env=self.key_env,
            temperature=self.temperature,
            unset_key_env=DEFAULT_KEY_ENVS[0] if self.key_env is None else None,
        )


def _templates_sha256(template: prompts.JudgeTemplate | None, protocol: str) -> str:
    """SHA-256 of the template texts this judge's prompts are made from, in order."""
    form = PROTOCOLS[protocol].llm
    if template is not None and form.asking == "passes":
        texts = [template.text]
    else:
        texts = [prompts.bundled(name) for name in form.templates]
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def check_key(options: LlmOptions) -> None:
    """Refuse (exit 2) a judge whose key variable is named but unset, or a remote judge with
    no key variable set at all; nothing needs the run, so ``blindtest run`` asks this before
    it designs or generates anything. As in bt-generate, only a local server is asked
    without a key."""
    endpoint = options.endpoint()
    check_key_names({"judge": endpoint})  # a misspelt variable named, with what is set
    endpoint.check_key("judge")
    if options.key_env is None and not is_loopback(options.base_url):
        raise BadInput(
            f"the LLM judge ({options.model} at {endpoint.origin}) needs a key: export "
            f"{' or '.join(DEFAULT_KEY_ENVS)} with it, or name its variable with "
            f"{option('llm.key_env')}"
        )


def check_judge_key(kind: str, url: str | None, key_env: str | None) -> None:
    """``blindtest run --judge llm:MODEL``: the judge's key (:func:`check_key`) from its
    options alone, before the design is written or a side is asked (the judge comes last: a
    missing key found there would leave the answers paid for and the chain stopped)."""
    model = kind.removeprefix("llm:").strip()
    if not model:
        raise BadInput(
            f"{option('kind', 'llm:MODEL')}: name the judge model, e.g. "
            f"{option('kind', 'llm:gpt-4o')}"
        )
    base_url = url or DEFAULT_URL
    check_key(LlmOptions(model, base_url, resolve_key_env(key_env, os.environ)))


def resolve_key_env(given: str | None, environ: Mapping[str, str]) -> str | None:
    """``--judge-key-env``, else the first of :data:`DEFAULT_KEY_ENVS` that is set, else None
    (a local server that needs no key)."""
    if given is not None:
        return given
    return next((name for name in DEFAULT_KEY_ENVS if environ.get(name)), None)
