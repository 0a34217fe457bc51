"""Prompts too large to be asked: bt-design warns (it does not refuse) when a prompt the
design uses is larger than servers take in one request, since its trial would then fail on
every run (HTTP 413, or a context error) and strand the answers fetched for the others.
Also the token estimate bt-generate --check sets against a model's context. Pure.

The rule, and why: a prompt (every turn of a conversation) over :data:`LARGE_PROMPT_BYTES`
(1 MiB) of UTF-8. That is the request-body limit of aiohttp's server (and the order of
nginx's default, 1 MB, in front of many deployments), and about 260,000 tokens of English:
beyond the context of most models served today (128k to 200k tokens). A larger context
exists (1M to 2M tokens), behind a server that takes larger bodies, so this is a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from blindtest.model.normalize import count_words

__all__ = ["LARGE_PROMPT_BYTES", "estimated_tokens", "large_prompt_warnings", "prompt_bytes"]

LARGE_PROMPT_BYTES = 1024 * 1024
#: Tokens per word of English for an estimate (the same as bt-generate's cost estimate).
TOKENS_PER_WORD = 4 / 3


def prompt_text_of(prompt: Mapping[str, Any]) -> str:
    """Everything a prompt sends: every turn of a conversation, else its text."""
    turns = prompt.get("messages")
    if turns:
        return "\n".join(str(turn.get("content", "")) for turn in turns)
    return str(prompt.get("text", ""))


def prompt_bytes(prompt: Mapping[str, Any]) -> int:
    return len(prompt_text_of(prompt).encode("utf-8"))


def estimated_tokens(text: str) -> int:
    """A rough token count: words x 4/3, and never fewer than bytes / 4 (text without spaces,
    code, other scripts)."""
    return max(round(count_words(text) * TOKENS_PER_WORD), len(text.encode("utf-8")) // 4)


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def large_prompt_warnings(prompts: Iterable[Mapping[str, Any]], used: Iterable[str]) -> list[str]:
    """One warning line per prompt the design uses that is over :data:`LARGE_PROMPT_BYTES`."""
    wanted = set(used)
    lines = []
    for prompt in prompts:
        if prompt["id"] not in wanted:
            continue
        size = prompt_bytes(prompt)
        if size <= LARGE_PROMPT_BYTES:
            continue
        tokens = estimated_tokens(prompt_text_of(prompt))
        wanted.discard(prompt["id"])
        lines.append(
            f"warning: prompt {prompt['id']} is {_megabytes(size)} (~{tokens:,} tokens), more "
            "than most servers take in one request (1 MiB) and than most models' context; "
            "its trial may fail on every run (HTTP 413 or a context error): shorten it, or "
            "leave it out (a run already under way: bt-design NEW --from RUN --drop-trial N)"
        )
    return lines


#: Characters that reorder or hide the text around them (bidi embeddings, overrides and
#: isolates, the invisible direction marks): a prompt holding one may read differently to a
#: judge, a model and a reviewer of the run (the "Trojan Source" trick).
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def bidi_warnings(prompts: Iterable[Mapping[str, Any]], used: Iterable[str]) -> list[str]:
    """One warning line per prompt the design uses that holds a bidi control character
    (:data:`BIDI_CONTROLS`): judges are shown it as an escape such as ``\\u202e``."""
    wanted = set(used)
    lines = []
    for prompt in prompts:
        if prompt["id"] not in wanted:
            continue
        found = sorted({ch for ch in prompt_text_of(prompt) if ch in BIDI_CONTROLS})
        if not found:
            continue
        wanted.discard(prompt["id"])
        names = ", ".join(f"U+{ord(ch):04X}" for ch in found)
        lines.append(
            f"warning: prompt {prompt['id']} holds bidi control characters ({names}), which "
            "reorder how the text around them is shown; judges see each as an escape such as "
            "\\u202e: remove them unless they are what the prompt tests"
        )
    return lines
