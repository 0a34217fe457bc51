"""the census, markdown stripping, word count and duplicate bot made fast
without changing one result.

The oracle is the implementation before the speed-up: ``tests/data/i15_census_corpus.json``
holds, for each text of a seeded corpus of tricky markdown (`corpus`), a digest of what it
gave (`outputs`): the stripped text, the census and the word count. Regenerate it only when a
definition changes on purpose (and then `NORMALIZERS_VERSION` changes too):
``.venv/bin/python tests/model/test_census_speed.py > tests/data/i15_census_corpus.json``.
"""

from __future__ import annotations

import difflib
import hashlib
import random
import re
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.model import bots
from blindtest.model.census import take_census
from blindtest.model.normalize import count_words, strip_formatting

CORPUS = Path(__file__).parents[1] / "data" / "i15_census_corpus.json"
SEED, SIZE = 15, 3000

# Fragments that exercise every rule: emphasis and its in-word exceptions, code spans and
# fences, every list and heading marker, quotes, tables, links, line breaks, typography, odd
# spaces and dashes, placeholder sentinels, emoji sequences, refusal phrases, line endings.
PIECES = (
    "**", "*", "__", "_", "~~", "***", "___", "`", "``", "```", "~~~", "# ", "## ", "###### ",
    "#", "- ", "* ", "+ ", "• ", "1. ", "2) ", "10. ", "> ", ">", "| ", " | ", "|", "---",
    "===", "--", " -- ", "\u2014", " \u2014 ", "\u2015", "\u2013", " \u2013 ", "[", "]", "(",
    ")", "[x] ", "[ ] ", "![", "](http://x.y/z)", "<br>", "<br/>", "<https://a.b>", "<a@b.co>",
    "[ref]: https://x", "\u201c", "\u201d", "\u2019", "\u2026", "\u00a0", "\u2009", "\u00ad",
    "\u200b", "\ufeff", "\ufdd0", "\ufdd1", "\t", "  ", "    ", " ", "\n", "\n\n", "\r\n",
    "\r", "\\", "\\|", "snake_case", "2*3*4", "**kwargs", "word", "Hello", "x", "42", "9.",
    "\U0001f600", "\U0001f44d\U0001f3fd", "\u2713", "\U0001f1eb\U0001f1f7", "1\ufe0f\u20e3",
    "\u200d", "I can't help with", "I\u2019m sorry, but I can\u2019t", ":---:", "|---|---|",
    "a", "b c", "\u65e5\u672c\u8a9e", "_x_", "*y*", "**z**", "~~w~~", "`code`", "\u3000",
    "\x0b", "=", "-", "_", ".",
)  # fmt: skip
BLOCKS = (
    "| a | b |\n|---|:-:|\n| 1 | `x|y` |\n",
    "```py\n# not a heading \u2014 code\n```\n",
    "    indented code -- here\n",
    "Title\n===\n",
    "Sub\n---\n",
    "> - **quoted** \u2014 item\n",
    "1. first\n   - nested *one*\n   - nested two\n2. second\n",
    "- [x] done\n- [ ] todo\n",
    "***\n",
    'Some **bold** and __strong__ text \u2014 with a [link](https://a.b/c "t").\n',
    "~~~\nunclosed fence",
)


def corpus() -> list[str]:
    """The seeded corpus: random runs of fragments, some with whole markdown blocks."""
    rng = random.Random(SEED)
    texts = []
    for _ in range(SIZE):
        parts = [rng.choice(PIECES) for _ in range(rng.randint(0, 40))]
        for _ in range(rng.randint(0, 3)):
            parts.insert(rng.randint(0, len(parts)), "\n" + rng.choice(BLOCKS))
        texts.append("".join(parts))
    return texts


def outputs(text: str) -> str:
    """A digest of every result the run's artifacts take from a text."""
    result = [strip_formatting(text), take_census(text).to_dict(), count_words(text)]
    return hashlib.sha256(orjson.dumps(result)).hexdigest()[:16]


def test_census_stripping_and_words_equal_the_implementation_before_the_speed_up() -> None:
    recorded: list[str] = orjson.loads(CORPUS.read_bytes())["digests"]
    texts = corpus()
    assert len(recorded) == len(texts)
    changed = [(i, text) for i, (text, digest) in enumerate(zip(texts, recorded, strict=True))
               if outputs(text) != digest]  # fmt: skip
    assert not changed, f"{len(changed)} texts give other results, first {changed[0]!r}"


def test_word_pattern_is_str_isalnum_for_every_code_point() -> None:
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert re.findall(r"[^\W_]", every) == [char for char in every if char.isalnum()]


def _near_copies(rng: random.Random) -> list[str]:
    words = [rng.choice(("alpha", "beta", "**gamma**", "- delta", "the", "a")) for _ in range(30)]
    base = " ".join(words)
    edited = words[:]
    for _ in range(rng.randint(0, 6)):
        edited[rng.randrange(len(edited))] = rng.choice(("zeta", "eta", ""))
    shorter = words[: rng.randint(1, 30)]
    options = [base, " ".join(edited), " ".join(shorter)]
    rng.shuffle(options)
    return options


class _Rng:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def randbelow(self, n: int) -> int:
        return self.random.randrange(n)


def test_audit_duplicate_pick_equals_the_bot_bt_judge_runs() -> None:
    rng = random.Random(6)
    fired = 0
    for seed in range(2000):
        options = _near_copies(rng)
        exact = bots.duplicate_bot(options, _Rng(seed))
        assert bots.duplicate_pick(options, _Rng(seed)) == (exact.pick, exact.fired), options
        fired += exact.fired
    assert 200 < fired < 1800  # both branches taken


@pytest.mark.parametrize("seed", range(5))
def test_ratio_bound_is_never_below_difflibs_ratio(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        first, second = (
            [rng.choice("abcde") for _ in range(rng.randint(0, 300))] for _ in range(2)
        )
        ratio = difflib.SequenceMatcher(None, first, second).ratio()
        assert bots._ratio_bound(first, second) >= ratio


def _record() -> dict[str, Any]:
    return {
        "about": "digests of (strip_formatting, take_census, count_words) per text of "
        "tests/model/test_census_speed.py corpus(), from the implementation before the issue-15 "
        "speed-up (commit b508ff0)",
        "digests": [outputs(text) for text in corpus()],
    }


if __name__ == "__main__":
    sys.stdout.write(orjson.dumps(_record(), option=orjson.OPT_INDENT_2).decode() + "\n")
