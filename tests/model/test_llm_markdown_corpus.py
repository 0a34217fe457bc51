"""strip_formatting, the census and the word count give what they gave before each answer was
read once for every reader, on text shaped like what models write.

The oracle is the implementation before that change (commit 70e9aca):
``tests/data/llm_markdown_corpus.json`` holds, for each text of a seeded corpus (`corpus`), a
digest of what it gave (`outputs`). The corpus leans on what the faster reading treats apart:
texts with no markdown at all, hyphens and numbers inside prose ("trade-off", "in 2024."),
lines opening with a hyphen or a number, em dashes alone, in pairs, spaced and unspaced,
double hyphens, tabs, and the markdown models write around them (bold labels, headings,
numbered lists, tables, code, quotes, links, emoji, refusals). This module imports only what
that commit had, so the same file regenerates the digests there:
``.venv/bin/python tests/model/test_llm_markdown_corpus.py > tests/data/llm_markdown_corpus.json``
(run in a checkout of 70e9aca; only when a definition changes on purpose, and then
`NORMALIZERS_VERSION` changes too).
"""

from __future__ import annotations

import datetime
import hashlib
import random
import sys
from pathlib import Path
from typing import Any

import orjson

from blindtest.model.census import take_census
from blindtest.model.normalize import count_words, strip_formatting

CORPUS = Path(__file__).parents[1] / "data" / "llm_markdown_corpus.json"
SEED, SIZE = 35, 4000

WORDS = (
    "the", "budget", "trade-off", "well-known", "e.g.", "3.5", "in", "2024.", "version", "2.0",
    "step", "x-ray", "re-run", "1)", "(see", "below)", "rate:", "50%", "a-b-c", "don't",
    "it\u2019s", "\u201cquoted\u201d", "caf\u00e9", "na\u00efve", "\u65e5\u672c", "-x", "x-",
    "\u2014", "\u2013", "--", "---", "\u2015", "\u2014\u2014", "\u2026", "**bold**", "*it*",
    "_u_", "`code`", "[link](https://a.b/c)", "<br>", "\U0001f680", "\u2713", "1.", "10.",
    "#tag", "a|b", ">", "\u00a0", "I", "I'm", "can't", "cannot", "help", "with", "sorry,",
)  # fmt: skip
OPENERS = (
    "", "", "", "", "- ", "* ", "1. ", "2) ", "10. ", "## ", "### ", "> ", "- **Label** \u2014 ",
    "**Label:** ", "  - ", "    ", "\t", " ", "-", "2024 ", "3.5 ", "| ", "- [ ] ",
)  # fmt: skip
PLAIN = ("plain", "trade-off", "3.5", "in", "2024.", "x-ray", "I")
SEPARATORS = (" ", " ", " ", " ", " \u2014 ", "\u2014", " -- ", "  ", "\t", " \u2013 ", ", ")
LINES = (
    "I can't help with that.",
    "I\u2019m sorry, but I CANNOT do this.",
    "As an AI language model, I must decline.",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "```python",
    "print('x -- y')",
    "```",
    "---",
    "===",
    "***",
    "Title",
    "[ref]: https://x.y",
    "",
    "",
)


def _line(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(LINES)
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
    if rng.random() < 0.6:  # mostly plain words: the common prose line
        words = [rng.choice(("word", "plain", "text", "trade-off", "in", "2024.")) for _ in words]
    line = words[0]
    for word in words[1:]:
        line += rng.choice(SEPARATORS) + word
    return rng.choice(OPENERS) + line


def corpus() -> list[str]:
    """The seeded corpus: a quarter of the texts plain prose, the rest model-like markdown."""
    rng = random.Random(SEED)
    texts = []
    for index in range(SIZE):
        if index % 4 == 0:  # plain: words, hyphens, numbers, single spaces, line breaks
            lines = [
                " ".join(rng.choice(PLAIN) for _ in range(rng.randint(0, 9)))
                for _ in range(rng.randint(1, 5))
            ]
        else:
            lines = [_line(rng) for _ in range(rng.randint(1, 12))]
        end = rng.choice(("\n", "\n", "\r\n"))
        texts.append(end.join(lines) + rng.choice(("", "\n", end)))
    return texts


def outputs(text: str) -> str:
    """A digest of every result the run's artifacts take from a text."""
    result = [strip_formatting(text), take_census(text).to_dict(), count_words(text)]
    return hashlib.sha256(orjson.dumps(result)).hexdigest()[:16]


def test_readers_give_what_they_gave_before_each_answer_was_read_once() -> None:
    recorded: list[str] = orjson.loads(CORPUS.read_bytes())["digests"]
    texts = corpus()
    assert len(recorded) == len(texts)
    changed = [(i, text) for i, (text, digest) in enumerate(zip(texts, recorded, strict=True))
               if outputs(text) != digest]  # fmt: skip
    assert not changed, f"{len(changed)} texts give other results, first {changed[0]!r}"


def _record() -> dict[str, Any]:
    return {
        "about": "do not edit; regenerate with `.venv/bin/python "
        "tests/model/test_llm_markdown_corpus.py` in a checkout of commit 70e9aca (Python "
        f"{sys.version.split()[0]}, {datetime.date.today()}): digests of (strip_formatting, "
        "take_census, count_words) per text of its corpus(), from the implementation before "
        "each answer was read once",
        "digests": [outputs(text) for text in corpus()],
    }


if __name__ == "__main__":
    sys.stdout.write(orjson.dumps(_record(), option=orjson.OPT_INDENT_2).decode() + "\n")
