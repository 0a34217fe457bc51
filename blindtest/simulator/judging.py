"""The simulator's judge models: answers to blindtest's LLM-judge prompts with known behaviour,
so a test can show each bias being detected. A pure function of the request (and of how many
times the same request was asked, for the model that fails its first answers).

- ``sim-judge-first``: always prefers the first output shown (Output A, Output 1).
- ``sim-judge-longer``: always prefers the longer output.
- ``sim-judge-fair``: judges the content, whatever its position or length, with some noise.
- ``sim-judge-leaning``: judges the content as the fair judge does, except where the two
  outputs are close in content (about half the comparisons): there it prefers the first output
  shown. A position lean, not a judge that reads nothing else.
- ``sim-judge-malformed``: fair, but its first two answers to every request are not JSON, and
  some comparisons never get valid JSON.
- ``sim-judge-leaky``: fair, but for about a third of the inputs names a model in its
  justification and flags leakage.
- ``sim-judge-unsure``: fair, with confidence 0.4.

The prompt is read by its section headers (``## OUTPUT A`` ... ``## INPUT CONTEXT``), which
the bundled templates use; with ``response_format`` in the request the answer is bare JSON,
without it a sentence and a fenced block, as chat models answer.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

JUDGE_MODELS = (
    "sim-judge-first",
    "sim-judge-longer",
    "sim-judge-fair",
    "sim-judge-leaning",
    "sim-judge-malformed",
    "sim-judge-leaky",
    "sim-judge-unsure",
)
_SECTION = re.compile(r"^## (OUTPUT [AB123]|INPUT CONTEXT[^\n]*|TRIAL \d+)\n", re.MULTILINE)
_PAIR_NAMES = ("Ash", "Birch")
#: Two content scores this close (of the 2^32 range) are a close call for sim-judge-leaning:
#: 1 - 0.7^2 = 51% of pairs of independent scores.
_CLOSE = int(0.3 * 2**32)


def _sections(text: str) -> dict[str, str]:
    found = list(_SECTION.finditer(text))
    parts = {}
    # A prompt without sections (a pre-flight check's "reply with one word") has none.
    for here, after in zip(found, [*found[1:], None][: len(found)], strict=True):
        end = after.start() if after is not None else len(text)
        body = text[here.end() : end]
        name = here.group(1).split(" (")[0]
        if not name.startswith("OUTPUT"):
            # The input ends at the next header of any kind (## SOURCE MATERIAL ...); an output
            # may hold markdown headings of its own, so it ends only at a known header.
            body = re.split(r"^## ", body, maxsplit=1, flags=re.MULTILINE)[0]
        parts[name] = body.strip()
    return parts


def _input(prompt: str) -> str:
    """The input the outputs answer (the same on both passes of a swap)."""
    return _sections(prompt).get("INPUT CONTEXT", "")


def _score(text: str) -> int:
    """A content score that knows nothing of position or length."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _odd_one(outputs: Sequence[str]) -> int:
    """The output least like the other two (word overlap): a fair triangle judge."""

    def like(i: int, j: int) -> float:
        a, b = _words(outputs[i]), _words(outputs[j])
        return len(a & b) / max(1, len(a | b))

    closest = max(((0, 1), (0, 2), (1, 2)), key=lambda pair: like(*pair))
    return next(i for i in range(3) if i not in closest) + 1


def _common(model: str, prompt: str) -> dict[str, Any]:
    common: dict[str, Any] = {
        "confidence": 0.4 if model == "sim-judge-unsure" else 0.9,
        "justification": "The preferred output answers the input more accurately.",
        "key_differentiators": ["accuracy", "completeness"],
        "identity_leakage_detected": False,
        "identity_leakage_details": "None detected.",
    }
    leaks = int(hashlib.sha256(_input(prompt).encode()).hexdigest(), 16) % 3 == 0
    if model == "sim-judge-leaky" and leaks:
        common["justification"] = "Output 1 reads like sim-large, which answers more accurately."
        common["identity_leakage_detected"] = True
        common["identity_leakage_details"] = "The wording is typical of sim-large."
    return common


def _better(model: str, one: str, two: str, noisy: bool) -> bool:
    """Whether the first of two outputs wins for judge ``model``."""
    if model == "sim-judge-first":
        return True
    if model == "sim-judge-longer":
        return len(one) >= len(two)
    if model == "sim-judge-leaning" and abs(_score(one) - _score(two)) < _CLOSE:
        return True
    return (_score(one) > _score(two)) != noisy


def _odd(model: str, outputs: Sequence[str], draw: random.Random, noisy: bool) -> int:
    if model == "sim-judge-first":
        return 1
    if model == "sim-judge-longer":
        mean = sum(len(o) for o in outputs) / 3
        return max(range(3), key=lambda i: abs(len(outputs[i]) - mean)) + 1
    return _odd_one(outputs) if not noisy else draw.randint(1, 3)


def verdict(model: str, prompt: str, draw: random.Random) -> dict[str, Any]:
    """The verdict of judge ``model`` for one judge prompt."""
    parts = _sections(prompt)
    noisy = draw.random() < 0.1
    common = _common(model, prompt)
    if "OUTPUT A" in parts:
        a, b = parts["OUTPUT A"], parts.get("OUTPUT B", "")
        choice = "A" if _better(model, a, b, noisy) else "B"
        return {"preference": choice, **common, "tie_reason": None}
    outputs = [parts.get(f"OUTPUT {i}", "") for i in (1, 2, 3)]
    if outputs[2]:
        return {"odd": _odd(model, outputs, draw, noisy), **common}
    name = _PAIR_NAMES[0] if _better(model, outputs[0], outputs[1], False) else _PAIR_NAMES[1]
    return {"nicknames": list(_PAIR_NAMES), "output_1": name, **common}


def judge_text(
    model: str, messages: Sequence[Mapping[str, Any]], body: Mapping[str, Any], nth: int
) -> str:
    """The answer text of judge ``model``; ``nth`` counts earlier requests with the same body."""
    prompt = str(messages[-1].get("content", ""))
    key = orjson.dumps([dict(m) for m in messages], option=orjson.OPT_SORT_KEYS)
    draw = random.Random(hashlib.sha256(key).digest())
    if model == "sim-judge-malformed":
        never = hashlib.sha256(prompt.encode()).digest()[0] % 4 == 0
        if never or nth < 2:
            return 'Sure! Here is my verdict: {"preference": A, confidence: high'
    found = verdict(model, prompt, draw)
    text = orjson.dumps(found, option=orjson.OPT_INDENT_2).decode()
    if body.get("response_format") is not None:
        return text
    return f"Here is my evaluation.\n\n```json\n{text}\n```\n"
