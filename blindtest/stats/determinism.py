"""Is one side of a triangle deterministic, or does it answer without reading the prompt?

The triangle needs its doubled side's two draws to be independent: a side that answers
deterministically (temperature ignored or 0, a cache) gives both the same text, and the odd
response is then found by equality without reading. Two separate checks, each saying whether
it fired:

**Determinism** (``deterministic``): an e-process over the side's twin pairs (two draws of one
prompt), the likelihood ratio of H1 "the side is deterministic" (its pairs come back identical
but for a share ``DETERMINISTIC_MISS``: a seeded server's best effort, a cache miss) against
H0 "the side samples", under which a second draw repeats an answer of ``w`` words with
probability at most ``chance_of_repeat(w)``: 1 for ``w <= FREE_WORDS`` (a one-word answer,
"Yes", "Paris", "B", may well be the only likely one at temperature 1), then
``AGREE_PER_WORD`` per further word, never below ``RAREST_REPEAT`` (a prompt with one right
wording repeats at any temperature). An identical pair multiplies the ratio by
``(1 - miss) / q(w)``, a pair that differs by ``miss``. Under H0 each factor has conditional
expectation at most 1, so by Ville's inequality (1939) a sampling side reaches
``STOP_EVIDENCE`` with probability at most its inverse, however often it is checked (the
mixture/likelihood-ratio e-process of the sequential test; Ramdas et al. 2023, "Game-theoretic
statistics and safe anytime-valid inference"). A text the side also gave to another prompt
(a canned answer) is weighed as a one-word answer (``q = 1``): canned refusals and constrained
formats repeat at any temperature, so their collisions are no evidence of determinism; they
are the second check's business.

Worked figures (``docs/statistics.md`` has the simulation): one-word answers never count
(factor 0.9, however many collide); a deterministic side answering 8-word sentences
(factor 0.9 / 0.8^7 = 4.3) is caught at 10 pairs, 3-word answers (1.4) at 41 pairs, answers of
42 words or more (9,000) at 2 pairs, though judged only once ``MIN_PAIRS`` pairs (or all the
design holds) are in; a sampling side whose answers collide no more often than H0 allows trips
with probability below 1e-6. A sampling side whose short answers collide far more often than
H0 allows (a 4-word answer repeated in 95% of pairs) does trip, after about 35 pairs: its twins
are then found by equality as a deterministic side's are.

**Prompt independence** (``prompt_independent``): a count, not evidence inside the test above.
It fires when one text (whitespace aside) of at least ``CANNED_MIN_WORDS`` words is the side's
answer to at least ``CANNED_MIN_PROMPTS`` distinct prompts and to at least ``CANNED_SHARE`` of
the prompts it answered: a gateway returning the same refusal or error sentence to every
prompt. One-word texts never count (a yes/no or multiple-choice workload repeats "No" and "B"
legitimately). A side answering every prompt "I cannot help with that." passed a 10-trial
triangle before this check; it fires here at 5 prompts.

Pure: counts and text keys in (digests, or the texts), a frozen result out.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from blindtest.stats.intervals import _check_int, result_to_dict

__all__ = [
    "AGREE_PER_WORD",
    "CANNED_MIN_PROMPTS",
    "CANNED_MIN_WORDS",
    "CANNED_SHARE",
    "DETERMINISTIC_MISS",
    "FREE_WORDS",
    "MIN_PAIRS",
    "RAREST_REPEAT",
    "STOP_EVIDENCE",
    "BoundedDeterminismTally",
    "DeterminismResult",
    "DeterminismTally",
    "chance_of_repeat",
    "determinism_check",
    "pair_evidence",
]

FREE_WORDS = 1
AGREE_PER_WORD = 0.8
RAREST_REPEAT = 1e-4
DETERMINISTIC_MISS = 0.1
STOP_EVIDENCE = 1e6
#: Judged once this many twin pairs are in (or all of them, in a smaller design): a workload
#: whose first prompts have one right wording does not stop the run before the rest speak.
MIN_PAIRS = 10
CANNED_MIN_PROMPTS = 5
CANNED_SHARE = 0.5
CANNED_MIN_WORDS = 2


def chance_of_repeat(words: int, *, canned: bool = False) -> float:
    """H0's bound on the chance that a sampling side's second draw repeats an answer of
    ``words`` words exactly; 1 for a canned text (one the side gave another prompt too)."""
    _check_int("words", words, 0)
    if canned or words <= FREE_WORDS:
        return 1.0
    return max(RAREST_REPEAT, AGREE_PER_WORD ** (words - FREE_WORDS))


def pair_evidence(words: int | None, *, canned: bool = False) -> float:
    """log10 of the factor one twin pair puts on the deterministic-side ratio: ``words`` is
    the identical answer's length, None a pair that differs."""
    if words is None:
        return math.log10(DETERMINISTIC_MISS)
    return math.log10((1.0 - DETERMINISTIC_MISS) / chance_of_repeat(words, canned=canned))


@dataclass(frozen=True, slots=True)
class DeterminismResult:
    """One side's two checks (see the module docstring).

    ``pairs`` twin pairs, ``identical`` of them the same text, ``identical_canned`` of those a
    text the side gave another prompt too; ``longest`` the longest identical non-canned answer
    (words); ``evidence`` log10 of the deterministic-side ratio; ``deterministic`` when it
    reaches ``log10(STOP_EVIDENCE)`` with at least ``min(MIN_PAIRS, planned_pairs)`` pairs in.
    ``prompts`` distinct prompts the side answered; ``common_prompts`` how many of them its
    most common text (``common_words`` words) answered; ``prompt_independent`` when that
    crosses the count rule. ``fired`` names the checks that fired, in that order."""

    pairs: int
    identical: int
    identical_canned: int
    longest: int
    evidence: float
    deterministic: bool
    prompts: int
    common_prompts: int
    common_words: int
    prompt_independent: bool
    fired: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _canned(
    answers: Sequence[tuple[Hashable, Hashable, int]],
) -> tuple[dict[Hashable, int], dict[Hashable, int], int]:
    """Per text: the distinct prompts it answered, and its length; and the distinct prompts."""
    prompts_of: dict[Hashable, set[Hashable]] = {}
    words_of: dict[Hashable, int] = {}
    seen: set[Hashable] = set()
    for index, (prompt, text, words) in enumerate(answers):
        _check_int(f"answers[{index}] words", words, 0)
        prompts_of.setdefault(text, set()).add(prompt)
        words_of[text] = words
        seen.add(prompt)
    return {t: len(p) for t, p in prompts_of.items()}, words_of, len(seen)


def _rank(prompts: int, words: int, text: Hashable) -> tuple[int, int, str]:
    """The most common text is the smallest by this: most prompts, then most words, then the
    smallest key (a stable choice among equals)."""
    return -prompts, -words, repr(text)


def determinism_check(
    twins: Sequence[tuple[Hashable, Hashable, int]],
    answers: Sequence[tuple[Hashable, Hashable, int]],
    *,
    planned_pairs: int | None = None,
) -> DeterminismResult:
    """The two checks for one side. ``twins`` holds each twin pair fetched so far as
    ``(first text key, second text key, words of the first)``; ``answers`` every answer of the
    side so far as ``(prompt id, text key, words)`` (both twins, and its answers as the odd
    one). Text keys compare texts whitespace aside (digests are fine). ``planned_pairs`` is
    how many twin pairs the design holds for the side (None: judge from ``MIN_PAIRS``)."""
    if planned_pairs is not None:
        _check_int("planned_pairs", planned_pairs, 0)
    prompts_per_text, words_of, prompts = _canned(answers)
    evidence = 0.0
    identical = canned_pairs = longest = 0
    for index, (first, second, words) in enumerate(twins):
        _check_int(f"twins[{index}] words", words, 0)
        if first != second:
            evidence += pair_evidence(None)
            continue
        canned = prompts_per_text.get(first, 0) >= 2
        identical += 1
        canned_pairs += canned
        if not canned:
            longest = max(longest, words)
        evidence += pair_evidence(words, canned=canned)
    needed = MIN_PAIRS if planned_pairs is None else min(MIN_PAIRS, planned_pairs)
    deterministic = len(twins) >= max(needed, 1) and evidence >= math.log10(STOP_EVIDENCE)
    counted = [t for t in prompts_per_text if words_of[t] >= CANNED_MIN_WORDS]
    # The most common text; among equals, the longest, then the smallest key (a stable choice).
    common = min(counted, key=lambda t: _rank(prompts_per_text[t], words_of[t], t), default=None)
    common_prompts = prompts_per_text[common] if common is not None else 0
    independent = common_prompts >= CANNED_MIN_PROMPTS and common_prompts >= CANNED_SHARE * prompts
    fired = tuple(
        name
        for name, flag in (("deterministic", deterministic), ("prompt_independent", independent))
        if flag
    )
    return DeterminismResult(
        pairs=len(twins),
        identical=identical,
        identical_canned=canned_pairs,
        longest=longest,
        evidence=evidence,
        deterministic=deterministic,
        prompts=prompts,
        common_prompts=common_prompts,
        common_words=words_of[common] if common is not None else 0,
        prompt_independent=independent,
        fired=fired,
    )


@dataclass
class DeterminismTally:
    """The two checks kept up to date in O(1) per answer, for a guard that asks after every
    response (``determinism_check`` over the lists would cost O(n) per question). Feed every
    answer of the side (``add_answer``) and every twin pair once both draws are in
    (``add_pair``), in any order; :meth:`result` equals ``determinism_check`` over the same
    data. Mutable, unlike the results: it is the guard's running state, not a result."""

    planned_pairs: int | None = None
    pairs: int = 0
    identical: int = 0
    base: float = 0.0  # every pair weighed as if its text were canned (a differing pair: miss)
    extra: dict[Hashable, float] = field(default_factory=dict)  # per text, gain while not canned
    extra_total: float = 0.0
    pair_count: dict[Hashable, int] = field(default_factory=dict)  # identical pairs per text
    pair_words: dict[Hashable, int] = field(default_factory=dict)
    prompts_of: dict[Hashable, set[Hashable]] = field(default_factory=dict)
    words_of: dict[Hashable, int] = field(default_factory=dict)
    prompts: set[Hashable] = field(default_factory=set)
    common: Hashable | None = None

    def add_answer(self, prompt: Hashable, text: Hashable, words: int) -> None:
        """One answer of the side (either twin, or the side's answer as the odd one)."""
        _check_int("words", words, 0)
        seen = self.prompts_of.setdefault(text, set())
        before = len(seen)
        seen.add(prompt)
        self.words_of[text] = words
        self.prompts.add(prompt)
        if before < 2 <= len(seen):  # the text just became canned: its pairs stop counting
            self.extra_total -= self.extra.get(text, 0.0)
        if words >= CANNED_MIN_WORDS and (
            self.common is None
            or _rank(len(seen), words, text)
            < _rank(len(self.prompts_of[self.common]), self.words_of[self.common], self.common)
        ):
            self.common = text

    def add_pair(self, first: Hashable, second: Hashable, words: int) -> None:
        """One twin pair: the two draws' text keys and the first's length in words."""
        _check_int("words", words, 0)
        self.pairs += 1
        if first != second:
            self.base += pair_evidence(None)
            return
        self.identical += 1
        self.base += pair_evidence(words, canned=True)
        gain = pair_evidence(words) - pair_evidence(words, canned=True)
        self.extra[first] = self.extra.get(first, 0.0) + gain
        self.pair_count[first] = self.pair_count.get(first, 0) + 1
        self.pair_words[first] = max(self.pair_words.get(first, 0), words)
        if len(self.prompts_of.get(first, ())) < 2:
            self.extra_total += gain

    def result(self) -> DeterminismResult:
        """The checks as they stand (the same as `determinism_check` over the same data)."""
        canned = {t for t in self.pair_count if len(self.prompts_of.get(t, ())) >= 2}
        evidence = self.base + self.extra_total
        needed = MIN_PAIRS if self.planned_pairs is None else min(MIN_PAIRS, self.planned_pairs)
        deterministic = self.pairs >= max(needed, 1) and evidence >= math.log10(STOP_EVIDENCE)
        common_prompts = len(self.prompts_of[self.common]) if self.common is not None else 0
        independent = common_prompts >= CANNED_MIN_PROMPTS and common_prompts >= CANNED_SHARE * len(
            self.prompts
        )
        fired = tuple(
            name
            for name, flag in (
                ("deterministic", deterministic),
                ("prompt_independent", independent),
            )
            if flag
        )
        return DeterminismResult(
            pairs=self.pairs,
            identical=self.identical,
            identical_canned=sum(self.pair_count[t] for t in canned),
            longest=max(
                (self.pair_words[t] for t in self.pair_count if t not in canned), default=0
            ),
            evidence=evidence,
            deterministic=deterministic,
            prompts=len(self.prompts),
            common_prompts=common_prompts,
            common_words=self.words_of[self.common] if self.common is not None else 0,
            prompt_independent=independent,
            fired=fired,
        )


@dataclass
class BoundedDeterminismTally:
    """The two checks for a long generation, in memory that grows with the prompts, not with
    the answers: O(1) per answer and per question (:meth:`fired`), and a byte per prompt
    answered plus one dict entry per text it tracks (first answers and identical-pair texts:
    about one per prompt). The unbounded :class:`DeterminismTally` keeps every distinct text
    with the set of prompts it answered, which at tens of thousands of trials is the largest
    thing bt-generate holds.

    Prompts are numbered (``prompt``: an int >= 0, a prompt's place in the design's list);
    a text key names one text, so its ``words`` are the same each time it is given (the guard
    counts the words of the text it digests).

    What it keeps instead, and where that differs from :func:`determinism_check`:

    * which prompts were answered, and each prompt's *first* answer counted once for its
      text; the prompt-independence count is over first answers (the most common first
      answer and how many prompts it opened), so a side that answers every prompt with one
      text counts the same, and a side whose canned text is only ever a later answer is not
      counted;
    * the prompt of each text it tracks (first answers and identical-pair texts): a tracked
      text seen at a second prompt is canned from then on (its pairs stop counting, as in the
      unbounded tally). A text's sightings before it was tracked are not known, so a text
      given to another prompt only before it first came back as an identical pair and never
      as a first answer is weighed as not canned.

    Per tracked text one entry: ``owner`` (the prompt it was first seen at, the caller's int)
    while it is not canned, else ``canned`` (how many prompts it opened); a text in ``owner``
    opened its prompt unless it is in ``unopened`` (tracked as an identical pair only): a
    text that opens a second prompt is canned by then.

    Feed answers and pairs as :class:`DeterminismTally` takes them; ``add_pair`` also takes
    the prompt. Mutable: it is the guard's running state, not a result."""

    planned_pairs: int | None = None
    pairs: int = 0
    identical: int = 0
    base: float = 0.0
    extra_total: float = 0.0
    answered: bytearray = field(default_factory=bytearray)  # per prompt: 1 once answered
    prompts: int = 0  # prompts answered
    owner: dict[Hashable, int] = field(default_factory=dict)  # tracked, not canned -> prompt
    unopened: set[Hashable] = field(default_factory=set)  # of those, no prompt's first answer
    canned: dict[Hashable, int] = field(default_factory=dict)  # seen at two prompts -> opened
    extra: dict[Hashable, float] = field(default_factory=dict)
    pair_count: dict[Hashable, int] = field(default_factory=dict)
    pair_words: dict[Hashable, int] = field(default_factory=dict)
    common: Hashable | None = None
    common_words: int = 0

    def _opened(self, text: Hashable) -> int:
        """How many prompts ``text`` was the first answer of."""
        opened = self.canned.get(text)
        if opened is not None:
            return opened
        return int(text in self.owner and text not in self.unopened)

    def _first_answer(self, prompt: int) -> bool:
        """Whether ``prompt`` is answered for the first time (and mark it answered)."""
        _check_int("prompt", prompt, 0)
        answered = self.answered
        if prompt >= len(answered):
            answered.extend(bytes(prompt + 1 - len(answered)))
        elif answered[prompt]:
            return False
        answered[prompt] = 1
        self.prompts += 1
        return True

    def _track(self, prompt: int, text: Hashable, opens: bool) -> None:
        """Follow ``text`` from now on, seen at ``prompt`` (``opens``: as its first answer);
        it is canned once seen at a second prompt."""
        opened = self.canned.get(text)
        if opened is not None:
            self.canned[text] = opened + opens
            return
        seen = self.owner.get(text)
        if seen is None:
            self.owner[text] = prompt
            if not opens:
                self.unopened.add(text)
        elif seen == prompt:
            if opens:
                self.unopened.discard(text)
        else:
            self.canned[text] = self._opened(text) + opens
            del self.owner[text]
            self.unopened.discard(text)
            self.extra_total -= self.extra.get(text, 0.0)

    def add_answer(self, prompt: int, text: Hashable, words: int) -> None:
        """One answer of the side (either twin, or the side's answer as the odd one)."""
        _check_int("words", words, 0)
        if self._first_answer(prompt):
            self._track(prompt, text, True)
            if words >= CANNED_MIN_WORDS and (
                self.common is None
                or _rank(self._opened(text), words, text)
                < _rank(self._opened(self.common), self.common_words, self.common)
            ):
                self.common, self.common_words = text, words
        elif text in self.owner or text in self.canned:
            self._track(prompt, text, False)

    def add_pair(self, prompt: int, first: Hashable, second: Hashable, words: int) -> None:
        """One twin pair of ``prompt``: the two draws' text keys and the first's length."""
        _check_int("words", words, 0)
        self.pairs += 1
        if first != second:
            self.base += pair_evidence(None)
            return
        self.identical += 1
        self.base += pair_evidence(words, canned=True)
        self._track(prompt, first, False)
        self.pair_count[first] = self.pair_count.get(first, 0) + 1
        self.pair_words[first] = max(self.pair_words.get(first, 0), words)
        gain = pair_evidence(words) - pair_evidence(words, canned=True)
        if gain > 0:
            self.extra[first] = self.extra.get(first, 0.0) + gain
            if first not in self.canned:
                self.extra_total += gain

    def _deterministic(self) -> bool:
        needed = MIN_PAIRS if self.planned_pairs is None else min(MIN_PAIRS, self.planned_pairs)
        evidence = self.base + self.extra_total
        return self.pairs >= max(needed, 1) and evidence >= math.log10(STOP_EVIDENCE)

    def _independent(self) -> tuple[int, bool]:
        common = self._opened(self.common) if self.common is not None else 0
        return common, common >= CANNED_MIN_PROMPTS and common >= CANNED_SHARE * self.prompts

    def fired(self) -> tuple[str, ...]:
        """The checks that fire as things stand, in O(1): ``deterministic``,
        ``prompt_independent``, both or neither."""
        flags = (("deterministic", self._deterministic()),
                 ("prompt_independent", self._independent()[1]))  # fmt: skip
        return tuple(name for name, flag in flags if flag)

    def result(self) -> DeterminismResult:
        """The checks as they stand, with their counts (O(texts tracked): for messages)."""
        common_prompts, independent = self._independent()
        deterministic = self._deterministic()
        return DeterminismResult(
            pairs=self.pairs,
            identical=self.identical,
            identical_canned=sum(n for t, n in self.pair_count.items() if t in self.canned),
            longest=max((w for t, w in self.pair_words.items() if t not in self.canned), default=0),
            evidence=self.base + self.extra_total,
            deterministic=deterministic,
            prompts=self.prompts,
            common_prompts=common_prompts,
            common_words=self.common_words if self.common is not None else 0,
            prompt_independent=independent,
            fired=tuple(
                name
                for name, flag in (
                    ("deterministic", deterministic),
                    ("prompt_independent", independent),
                )
                if flag
            ),
        )
