"""Mechanical judges: the tell bots behind ``bt-judge --judge bot:KIND`` and ``bt-audit``.

A bot sees exactly what a judge sees (the options of one trial, in display order) and never the
prompt, a side or a model. Its score beside a person's says how much of the discrimination a
strategy with no understanding at all gets for free (spec 000, "Tells"). Every function is
pure; randomness comes in as an ``rng`` with ``randbelow(n)`` (`blindtest.model.rng.DesignRng`), and
a bot draws exactly once when it has to guess and never otherwise, so a replay with the same
seed gives the same picks.

Length is measured in words (`blindtest.model.normalize.count_words`), the unit the length band and
the census use, so "the length bot went 15/20" and "answers in 80..120 words" speak of the same
quantity.

Triangle (picks are positions 1..3):

* `length_bot`: the position whose word count is least like the other two (largest summed
  absolute difference to them).
* `duplicate_bot`: when two options are near-identical (`similarity` >= `DUPLICATE_THRESHOLD`),
  the third; otherwise a seeded random pick recorded as not fired.
* `random_bot`: a seeded uniform pick, the chance baseline.

Preference (picks are "left", "right" or "tie"; option 1 is left): `length_preference_bot`
prefers the longer response, which is the verbosity bias of LLM judges made explicit, and
`random_preference_bot` flips a coin.

Pair (the pick is the nickname given to option 1): `length_pair_bot` gives the first nickname
("longer") to the longer response of every trial. If one model consistently writes more, that
labelling is consistent with the true mapping in every trial and the pair test calls the models
distinguished, by length. `random_pair_bot` names at random. A duplicate spotter has no pair or
preference form: two options come from two different models, so a near-duplicate exposes
nothing.

A bot as a judge: `bot_pick` turns one of these choices into a `Pick` that records how it was
made, `check_bot` refuses a bot the protocol has no form for (`BOT_KINDS`).
"""

from __future__ import annotations

import collections
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from blindtest.errors import BadInput
from blindtest.model.judge_kinds import BOT_KINDS
from blindtest.model.normalize import ClassifiedText, count_words, strip_formatting
from blindtest.model.picks import Pick, Trial
from blindtest.model.protocols import PROTOCOLS

__all__ = [
    "BOT_NICKNAMES",
    "DUPLICATE_THRESHOLD",
    "BotPick",
    "Preference",
    "RandBelow",
    "bot_pick",
    "bot_settings",
    "check_bot",
    "duplicate_bot",
    "duplicate_pick",
    "length_bot",
    "length_choice",
    "length_from_words",
    "length_pair_bot",
    "length_pair_choice",
    "length_preference_bot",
    "length_preference_choice",
    "random_bot",
    "random_pair_bot",
    "random_preference_bot",
    "similarity",
]

# Ratcliff-Obershelp ratio over words: 0.9 means at most about one word in ten differs.
# Two independent samples of a model at a useful temperature rarely come this close on
# anything longer than a one-liner; two draws from a deterministic endpoint score 1.0.
DUPLICATE_THRESHOLD = 0.9

Preference = Literal["left", "right", "tie"]


class RandBelow(Protocol):
    """What the bots need from a generator: a uniform integer in ``[0, n)``."""

    def randbelow(self, n: int) -> int: ...


@dataclass(frozen=True, slots=True)
class BotPick:
    """A duplicate-spotter pick: ``fired`` False means the pick was a seeded random guess.

    ``similarity`` is the highest pairwise `similarity` among the options, fired or not.
    """

    pick: int
    fired: bool
    similarity: float

    def to_dict(self) -> dict[str, int | bool | float]:
        return {"pick": self.pick, "fired": self.fired, "similarity": self.similarity}


def _check_options(options: Sequence[object], needed: int, protocol: str) -> None:
    if len(options) != needed:
        raise ValueError(f"{protocol} bots need {needed} options, got {len(options)}")


def _check_nicknames(nicknames: tuple[str, str]) -> None:
    first, second = nicknames
    if not first or not second or first == second:
        raise ValueError(f"pair bots need two distinct non-empty nicknames, got {nicknames!r}")
    reserved = {"left", "right", "tie"} & {first, second}
    if reserved:
        # picks.schema.json reads these words as preference picks.
        raise ValueError(f"pair nicknames cannot be {sorted(reserved)}; got {nicknames!r}")


#: How a length bot counts an option's words: ``count_words``, or a replay's memo of it.
WordCount = Callable[[str], int]


def _words(options: Sequence[str], count: WordCount = count_words) -> list[int]:
    return [count(option) for option in options]


def length_bot(options: Sequence[str], rng: RandBelow | None = None) -> int:
    """Triangle: the 1-based position whose word count is least like the other two.

    Ties (equally spaced counts, or all equal) go to ``rng`` uniformly among the tied
    positions; without an rng, to the lowest tied position. Under the null both rules are
    right 1/3 of the time, since the odd position is uniform and independent of the texts.
    """
    _check_options(options, 3, "triangle")
    return length_choice(_words(options), rng)


def length_choice(words: Sequence[int], rng: RandBelow | None = None) -> int:
    """`length_bot`'s pick from the three options' word counts, for a reader that has counted
    them already (bt-audit's census counts every answer's words)."""
    scores = [sum(abs(mine - other) for other in words) for mine in words]
    best = max(scores)
    tied = [position for position, score in enumerate(scores, start=1) if score == best]
    if len(tied) == 1 or rng is None:
        return tied[0]
    return tied[rng.randbelow(len(tied))]


def _tokens(text: str | ClassifiedText) -> list[str]:
    return strip_formatting(text).casefold().split()


def similarity(first: str, second: str) -> float:
    """How alike two responses read, from 0.0 to 1.0.

    ``difflib.SequenceMatcher.ratio`` (Ratcliff and Obershelp) over the casefolded words of the
    formatting-stripped texts, in that argument order (the ratio is not always symmetric; the
    bots compare the lower position first). Two empty texts are identical (1.0).
    """
    # difflib's popularity heuristic stays on: past 200 words it stops very common words from
    # seeding matches, which leaves near-identical texts near 1.0 (matches still run through
    # those words) and keeps repetitive long answers from costing seconds per pair.
    return difflib.SequenceMatcher(None, _tokens(first), _tokens(second)).ratio()


def duplicate_bot(options: Sequence[str], rng: RandBelow) -> BotPick:
    """Triangle: the third option when two are near-identical, else a seeded random guess.

    Fires when at least one pair reaches `DUPLICATE_THRESHOLD` but not all three (three
    near-identical options expose nothing); the pick is the option outside the most similar
    pair, with exact ties between pairs broken by ``rng``.
    """
    _check_options(options, 3, "triangle")
    # Each option's words once, not once per pair it is in (the bot's cost at scale).
    words = [_tokens(option) for option in options]
    scores = {
        pair: difflib.SequenceMatcher(None, words[pair[0] - 1], words[pair[1] - 1]).ratio()
        for pair in _PAIRS
    }
    return _duplicate_choice(scores, rng)


#: Each pair of triangle positions, and the position outside it.
_PAIRS = {(1, 2): 3, (1, 3): 2, (2, 3): 1}


def _duplicate_choice(scores: dict[tuple[int, int], float], rng: RandBelow) -> BotPick:
    best = max(scores.values())
    above = [pair for pair, score in scores.items() if score >= DUPLICATE_THRESHOLD]
    if not above or len(above) == len(_PAIRS):
        return BotPick(pick=rng.randbelow(3) + 1, fired=False, similarity=best)
    thirds = [_PAIRS[pair] for pair in above if scores[pair] == best]
    pick = thirds[0] if len(thirds) == 1 else thirds[rng.randbelow(len(thirds))]
    return BotPick(pick=pick, fired=True, similarity=best)


def _ratio_bound(first: list[str], second: list[str]) -> float:
    """An upper bound of ``SequenceMatcher(None, first, second).ratio()``, computed the same
    way from the words the two have in common (difflib's ``quick_ratio``; matched words are
    common words), shorter lists first checked by length alone (``real_quick_ratio``)."""
    length = len(first) + len(second)
    if not length:
        return 1.0
    bound = 2.0 * min(len(first), len(second)) / length
    if bound < DUPLICATE_THRESHOLD:
        return bound
    common = collections.Counter(first) & collections.Counter(second)
    return 2.0 * sum(common.values()) / length


def duplicate_pick(options: Sequence[str | ClassifiedText], rng: RandBelow) -> tuple[int, bool]:
    """`duplicate_bot`'s pick and whether it fired, without its similarity: a pair whose upper
    bound (`_ratio_bound`) is under `DUPLICATE_THRESHOLD` can change neither, so its exact
    ratio is not computed (bt-audit records no similarity; most pairs stop here). An option
    may come classified (`blindtest.model.normalize.classify_text`): bt-audit reads each
    answer once for this bot and the census."""
    _check_options(options, 3, "triangle")
    words = [_tokens(option) for option in options]
    scores: dict[tuple[int, int], float] = {}
    for pair in _PAIRS:
        first, second = words[pair[0] - 1], words[pair[1] - 1]
        bound = _ratio_bound(first, second)
        # Below the threshold the bound stands in for the ratio: neither is "above", and the
        # best score matters only among pairs that are.
        scores[pair] = (
            bound
            if bound < DUPLICATE_THRESHOLD
            else difflib.SequenceMatcher(None, first, second).ratio()
        )
    made = _duplicate_choice(scores, rng)
    return made.pick, made.fired


def random_bot(options: Sequence[str], rng: RandBelow) -> int:
    """Triangle: a uniform position 1..3 (the chance baseline)."""
    _check_options(options, 3, "triangle")
    return rng.randbelow(3) + 1


def length_preference_bot(options: Sequence[str], count: WordCount = count_words) -> Preference:
    """Preference: the response with more words; "tie" when the counts are equal. ``count``:
    ``count_words`` or a memo of it (a replay meets each answer in several comparisons)."""
    _check_options(options, 2, "preference")
    return length_preference_choice(_words(options, count))


def length_preference_choice(words: Sequence[int]) -> Preference:
    """`length_preference_bot`'s pick from the two options' word counts."""
    left, right = words
    if left == right:
        return "tie"
    return "left" if left > right else "right"


def random_preference_bot(options: Sequence[str], rng: RandBelow) -> Preference:
    """Preference: "left" or "right" with equal probability (never "tie")."""
    _check_options(options, 2, "preference")
    return "left" if rng.randbelow(2) == 0 else "right"


def length_pair_bot(
    options: Sequence[str],
    rng: RandBelow | None = None,
    nicknames: tuple[str, str] = ("longer", "shorter"),
) -> str:
    """Pair: the nickname for option 1 when the longer response gets ``nicknames[0]``.

    Equal word counts go to ``rng``; without one, option 1 gets ``nicknames[0]``.
    """
    _check_options(options, 2, "pair")
    _check_nicknames(nicknames)
    return length_pair_choice(_words(options), rng, nicknames)


def length_pair_choice(
    words: Sequence[int],
    rng: RandBelow | None = None,
    nicknames: tuple[str, str] = ("longer", "shorter"),
) -> str:
    """`length_pair_bot`'s nickname for option 1 from the two options' word counts."""
    first, second = words
    if first != second:
        return nicknames[0] if first > second else nicknames[1]
    return nicknames[0] if rng is None else nicknames[rng.randbelow(2)]


def random_pair_bot(
    options: Sequence[str], rng: RandBelow, nicknames: tuple[str, str] = ("X", "Y")
) -> str:
    """Pair: a uniformly random nickname for option 1."""
    _check_options(options, 2, "pair")
    _check_nicknames(nicknames)
    return nicknames[rng.randbelow(2)]


# --------------------------------------------------------------------------- a bot as a judge

#: The nicknames a pair bot gives: ``length`` names option 1 by whether it is the longer one.
BOT_NICKNAMES = {"length": ("longer", "shorter"), "random": ("X", "Y")}


def check_bot(kind: str, protocol: str) -> None:
    """Refuse a bot the protocol has no form for, before anything is written."""
    if kind not in BOT_KINDS:
        raise BadInput(f"unknown bot {kind!r}; use one of {', '.join(BOT_KINDS)}")
    if kind == "duplicate" and not PROTOCOLS[protocol].repeats_side:
        raise BadInput(
            f"bot:duplicate needs a triangle run: in a {protocol} run the two options come "
            "from two different models, so a near-duplicate exposes nothing; use bot:length "
            "or bot:random"
        )


def bot_settings(kind: str, protocol: str) -> dict[str, object]:
    """What makes a bot's picks besides the trial and the design seed, recorded on each pick
    as its ``judge_settings``: its kind, and the duplicate spotter's threshold."""
    settings: dict[str, object] = {"bot": kind}
    if kind == "duplicate" and PROTOCOLS[protocol].repeats_side:
        settings["duplicate_threshold"] = DUPLICATE_THRESHOLD
    return settings


def length_from_words(protocol: str, words: Sequence[int], rng: RandBelow) -> int | str:
    """The length bot's pick (`bot_pick`'s, kind ``length``) from the options' word counts,
    for a reader that has counted them already (bt-audit's census counts every answer's
    words): drawing from ``rng`` exactly when `bot_pick` would."""
    pick_kind = PROTOCOLS[protocol].pick_kind
    if pick_kind == "position":
        return length_choice(words, rng)
    if pick_kind == "side":
        return length_preference_choice(words)
    return length_pair_choice(words, rng, BOT_NICKNAMES["length"])


def bot_pick(
    kind: str, protocol: str, trial: Trial, rng: RandBelow, count: WordCount = count_words
) -> Pick:
    """One mechanical pick, with ``bot`` recording how it was made (judge left empty);
    ``count``: how the preference length bot counts words (``count_words`` or a memo)."""
    options = trial.options
    pick_kind = PROTOCOLS[protocol].pick_kind  # each kind of pick has its bots
    if pick_kind == "position":
        if kind == "duplicate":
            made = duplicate_bot(options, rng)
            how = {"name": "duplicate", "fired": made.fired, "similarity": made.similarity}
            return Pick(trial=trial.number, judge="", pick=made.pick, bot=how)
        value = length_bot(options, rng) if kind == "length" else random_bot(options, rng)
        return Pick(trial=trial.number, judge="", pick=value, bot={"name": kind})
    if pick_kind == "side":
        choice = (
            length_preference_bot(options, count)
            if kind == "length"
            else random_preference_bot(options, rng)
        )
        return Pick(trial=trial.number, judge="", pick=choice, bot={"name": kind})
    names = BOT_NICKNAMES[kind]
    nickname = (
        length_pair_bot(options, rng, names)
        if kind == "length"
        else random_pair_bot(options, rng, names)
    )
    return Pick(trial=trial.number, judge="", pick=nickname, nicknames=names, bot={"name": kind})
