"""The simulator's text: the answers of its three models, a pure function of the request.

``sim-large`` writes longer, headed, bulleted answers with em dashes; ``sim-small`` short plain
prose; both name themselves first when a prompt asks who they are ("Who are you?").
``sim-launder`` rewrites the last user message as neutral prose. Both writing styles
draw from shared templates, so they overlap; a length band asked for in the messages ("120-180
words") is met by whole sentences. At temperature 0 a prompt always gets the same text; above
0, the ``draw`` generator picks among variants, more freely the higher the temperature.
No socket, no clock, no global random state.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import orjson

T = TypeVar("T")

_STOPWORDS = frozenset((
    "about", "above", "after", "again", "against", "also", "among", "answer", "because", "been",
    "before", "being", "below", "between", "both", "briefly", "could", "describe", "does",
    "doing", "down", "during", "each", "explain", "from", "further", "give", "have", "having",
    "here", "into", "just", "like", "make", "more", "most", "much", "name", "once", "only",
    "other", "over", "please", "quick", "same", "short", "should", "some", "such", "tell",
    "than", "that", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "under", "until", "very", "what", "when", "where", "which", "while", "whom",
    "will", "with", "would", "write", "your", "yours"
))  # fmt: skip
_OPENERS = (
    "{Topic} comes down to a few practical choices.",
    "The short answer: {topic} depends on what you optimise for.",
    "There are several ways to think about {topic}.",
    "{Topic} is easier to reason about once the goal is clear.",
    "It helps to split {topic} into smaller questions.",
    "Most of the difficulty with {topic} is in the details.",
    "A good place to start with {topic} is the constraint that matters most.",
    "With {topic}, the honest answer is that it depends.",
)
_POINTS = (
    "Start with {term}, since everything else builds on it.",
    "{Term} matters more than it first appears.",
    "Keep {term} simple until there is evidence it needs more.",
    "Measure {term} before changing it.",
    "Weigh {term} against the cost in time and money.",
    "Write down what {term} means in your case.",
    "Look for the smallest change to {term} that helps.",
    "Check {term} early, and again at the end.",
    "Treat {term} as a trade-off rather than a rule.",
    "Ask who depends on {term} before you change it.",
    "{Term} tends to fail quietly, so keep an eye on it.",
    "Compare two or three options for {term} side by side.",
)
_ASIDES = (
    "and the details matter",
    "though not every rule applies everywhere",
    "especially when time is short",
    "which is easy to overlook",
)
_CLOSINGS = (
    "In short, get {term} right first and adjust as you learn.",
    "Taken together, these steps make {topic} manageable.",
    "The rest follows from getting {term} right.",
    "Start small, check the results, and iterate.",
)
_TERMS = (
    "the main goal", "clear priorities", "the budget", "the timeline", "the audience",
    "quality", "consistency", "feedback", "the first draft", "the evidence", "the risks",
    "maintenance",
)  # fmt: skip
_HEADINGS = ("## {Title}", "## Overview", "### Key points", "**{Title}**")
_LEADS = (
    "Here is how I would approach it:",
    "Key considerations:",
    "A practical breakdown:",
    "The main points:",
)
#: A fault directive in a prompt: ``[sim:NAME]`` or ``[sim:NAME*N]`` (the first N requests).
DIRECTIVE = re.compile(r"\[sim:([a-z0-9-]+)(?:\*(\d+))?\]")
_BAND = re.compile(r"(\d+)\s*(?:-|–|to|and)\s*(\d+)\s*words", re.IGNORECASE)
#: One word and the space after it (the token cap counts these).
WORD = re.compile(r"\S+\s*")
_PLAIN_QUOTES = str.maketrans("“”‘’", "\"\"''")


def seeded_random(*parts: object) -> random.Random:
    """A generator seeded by SHA-256 of ``parts``: the same parts, the same draws."""
    digest = hashlib.sha256(orjson.dumps([repr(p) for p in parts])).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class _Sampler:
    """Choices as a model would make them: a preferred option per prompt, and a temperature.

    Each choice has a mode, drawn from the weights by the prompt's own generator, so it is
    fixed for a prompt. At temperature 0 the mode is always taken; above 0, with probability
    ``min(1, temperature / 1.5)`` the draw generator samples the weights afresh instead.
    """

    def __init__(self, prompt: random.Random, draw: random.Random, temperature: float) -> None:
        self._prompt = prompt
        self._draw = draw
        self._variety = min(1.0, max(0.0, temperature) / 1.5)

    def pick(self, options: Sequence[T], weights: Sequence[float] | None = None) -> T:
        mode = self._prompt.choices(options, weights)[0]
        if self._variety and self._draw.random() < self._variety:
            return self._draw.choices(options, weights)[0]
        return mode


def _prompt_text(messages: Sequence[Mapping[str, Any]], role: str = "user") -> str:
    for message in reversed(messages):
        if message.get("role") == role and isinstance(message.get("content"), str):
            return DIRECTIVE.sub("", str(message["content"])).strip()
    return ""


def _keywords(text: str) -> list[str]:
    seen: list[str] = []
    for word in re.findall(r"[A-Za-z][A-Za-z'-]{3,}", text):
        w = word.lower().strip("'-")
        if w not in _STOPWORDS and w not in seen:
            seen.append(w)
    return seen


class _Writer:
    def __init__(self, sampler: _Sampler, keywords: list[str]) -> None:
        self.s = sampler
        # The longest content word is a fair guess at the subject ("vegetables", "vaccines").
        self.topic = max(keywords, key=len) if keywords else "this"
        self.terms = [f"the {k}" for k in keywords[:4] if k != self.topic] + list(_TERMS)

    def fill(self, template: str) -> str:
        term = self.s.pick(self.terms)
        return template.format(
            topic=self.topic,
            Topic=self.topic[:1].upper() + self.topic[1:],
            Title=self.topic.title(),
            term=term,
            Term=term[:1].upper() + term[1:],
        )

    def sentence(self, templates: Sequence[str]) -> str:
        return self.fill(self.s.pick(templates))

    # Both styles return units: pieces of text that each end with their own separator, so
    # a length band can be met by keeping a prefix of whole sentences, bullets and headings.

    def large(self, points: int) -> list[str]:
        s = self.s
        units = []
        if s.pick([True, False], [0.85, 0.15]):
            units.append(self.fill(s.pick(_HEADINGS)) + "\n\n")
        opener = self.sentence(_OPENERS)
        units.append(f"{opener[:-1]} — {s.pick(_ASIDES)}.\n\n")
        if s.pick([True, False], [0.8, 0.2]):
            bullet = s.pick(["- **{Term}** — {point}", "- {point}", "{n}. **{Term}**: {point}"])
            units.append(s.pick(_LEADS) + "\n\n")
            for n in range(1, points + 1):
                term = s.pick(self.terms)
                capital = term[:1].upper() + term[1:]
                units.append(bullet.format(n=n, Term=capital, point=self.sentence(_POINTS)) + "\n")
        else:
            units.extend(self.sentence(_POINTS) + " " for _ in range(points))
        units[-1] = units[-1].rstrip() + "\n\n"
        units.append(self.sentence(_CLOSINGS))
        return units

    def small(self, points: int) -> list[str]:
        s = self.s
        opener = self.sentence(_OPENERS)
        body = [self.sentence(_POINTS) for _ in range(points)]
        if s.pick([False, True], [0.85, 0.15]):
            return [opener + "\n\n", *(f"- {p}\n" for p in body)]
        if s.pick([False, True], [0.9, 0.1]):
            body[0] = f"{body[0][:-1]} — {s.pick(_ASIDES)}."
        closing = [self.sentence(_CLOSINGS)] if s.pick([False, True], [0.6, 0.4]) else []
        return [f"{sentence} " for sentence in [opener, *body, *closing]]


def _launder(text: str, sampler: _Sampler) -> str:
    """Neutral prose: no headings, bullets, labels, emphasis, em dashes or smart quotes."""
    sentences = []
    for raw in text.splitlines():
        if re.match(r"^\s*#", raw) or re.fullmatch(r"\s*\*\*[^*]+\*\*\s*", raw):
            continue  # headings are structure, not prose
        line = re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", raw)
        line = re.sub(r"^\*\*[^*]+\*\*\s*(—|–|:)\s*", "", line)  # "**Label** — " bullets
        line = re.sub(r"(\*\*|__|\*|`)", "", line).strip()
        line = re.sub(r"\s*[—–]\s*", ", ", line)
        line = line.translate(_PLAIN_QUOTES)
        if not line or line.endswith(":"):
            continue  # lead-ins to lists read oddly once the list is prose
        sentences.append(line if line[-1] in ".!?" else line + ".")
    out = sentences[:1]
    for sentence in sentences[1:]:
        joiner = sampler.pick(["", "Also, ", "In addition, "], [0.8, 0.1, 0.1])
        out.append(joiner + sentence[:1].lower() + sentence[1:] if joiner else sentence)
    return " ".join(out) if out else "There is nothing to rewrite."


#: A prompt asking who answers: the simulated models then name themselves, as real ones do
#: (what identity stripping is for).
_WHO = re.compile(
    r"\b(who are you|introduce yourself|what model are you|which model are you)\b", re.IGNORECASE
)
#: How each model names itself: a self-identification phrase, its own name and a maker.
_INTRODUCTIONS = {
    "sim-large": "As an AI language model, I am sim-large, built by Simulated Labs.",
    "sim-small": "I'm sim-small, an AI assistant.",
}


_BRIEF = re.compile(r"\b(brief|briefly|concise|concisely|short|terse|plain)\b", re.IGNORECASE)
_DETAILED = re.compile(r"\b(detailed|thorough|markdown|headings|bullets?)\b", re.IGNORECASE)


def _style(model: str, system: str) -> bool:
    """True for the large model's style. A system prompt moves any model's style, so two
    system prompts on one model can be told apart: "be brief" writes small, "be detailed"
    writes large."""
    if _BRIEF.search(system):
        return False
    if _DETAILED.search(system):
        return True
    return model == "sim-large"


def compose(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    temperature: float,
    draw: random.Random,
) -> str:
    """The simulated answer of ``model`` to ``messages`` (no faults, no token cap)."""
    prompt = _prompt_text(messages)
    prompt_key = orjson.dumps([dict(m) for m in messages], option=orjson.OPT_SORT_KEYS)
    seed = draw.getrandbits(64)

    def sampler() -> _Sampler:
        # Fresh generators per composition: the same (prompt, draw) always gives the same text.
        return _Sampler(seeded_random(model, prompt_key), random.Random(seed), temperature)

    if model == "sim-launder":
        return _launder(prompt, sampler())
    bands = (_BAND.search(str(m.get("content", ""))) for m in messages)
    band = next((found for found in bands if found is not None), None)
    large = _style(model, _prompt_text(messages, "system"))
    s = sampler()
    writer = _Writer(s, _keywords(prompt))
    intro = _INTRODUCTIONS.get(model, "") if _WHO.search(prompt) else ""
    if band is None:
        points = s.pick([3, 4, 5, 6], [1, 2, 2, 1]) if large else s.pick([1, 2, 3], [1, 2, 1])
        text = "".join(writer.large(points) if large else writer.small(points)).strip()
        return f"{intro} {text}" if intro else text
    lo, hi = sorted((int(band.group(1)), int(band.group(2))))
    # Mostly inside the band (large near the top, small near the bottom), sometimes outside,
    # so that out-of-band counting has something to count.
    share = (
        s.pick([0.7, 0.5, 0.3, 1.3], [4, 2, 1, 1])
        if large
        else s.pick([0.3, 0.5, 0.7, -0.3], [4, 2, 1, 1])
    )
    target = lo + share * (hi - lo)
    points = max(3, int(target / 8))  # more than enough: about 10 words a point
    units = writer.large(points) if large else writer.small(points)
    totals = list(itertools.accumulate(len(unit.split()) for unit in units))
    cut = min(range(len(units)), key=lambda i: abs(totals[i] - target))
    kept = units[: cut + 1]
    if len(kept) > 1 and kept[-1].rstrip().endswith(":"):
        kept.pop()  # a lead-in with nothing after it
    text = "".join(kept).strip()
    return f"{intro} {text}" if intro else text
