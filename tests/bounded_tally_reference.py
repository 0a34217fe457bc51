"""The deterministic-side guard's bounded tally as first written (three dicts per text, a
dict of prompts), kept only to check that the compact one in ``blindtest.stats.determinism``
fires and counts exactly as it did, on the same answer streams."""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field

from blindtest.stats.determinism import (
    CANNED_MIN_PROMPTS,
    CANNED_MIN_WORDS,
    CANNED_SHARE,
    MIN_PAIRS,
    STOP_EVIDENCE,
    DeterminismResult,
    _rank,
    pair_evidence,
)
from blindtest.stats.intervals import _check_int


@dataclass
class ReferenceBoundedTally:
    """The tally as b6bec59 wrote it (see the module docstring)."""

    planned_pairs: int | None = None
    pairs: int = 0
    identical: int = 0
    base: float = 0.0
    extra_total: float = 0.0
    first_of: dict[Hashable, Hashable] = field(default_factory=dict)  # prompt -> first text
    opened: dict[Hashable, int] = field(default_factory=dict)  # text -> prompts it opened
    owner: dict[Hashable, Hashable] = field(default_factory=dict)  # tracked text -> a prompt
    words_of: dict[Hashable, int] = field(default_factory=dict)
    canned: set[Hashable] = field(default_factory=set)  # tracked texts seen at two prompts
    extra: dict[Hashable, float] = field(default_factory=dict)
    pair_count: dict[Hashable, int] = field(default_factory=dict)
    pair_words: dict[Hashable, int] = field(default_factory=dict)
    common: Hashable | None = None

    def _track(self, prompt: Hashable, text: Hashable, words: int) -> None:
        """Follow ``text`` from now on; it is canned once seen at a second prompt."""
        seen = self.owner.setdefault(text, prompt)
        self.words_of.setdefault(text, words)
        if seen != prompt and text not in self.canned:
            self.canned.add(text)
            self.extra_total -= self.extra.get(text, 0.0)

    def add_answer(self, prompt: Hashable, text: Hashable, words: int) -> None:
        """One answer of the side (either twin, or the side's answer as the odd one)."""
        _check_int("words", words, 0)
        if prompt not in self.first_of:
            self.first_of[prompt] = text
            self.opened[text] = self.opened.get(text, 0) + 1
            self._track(prompt, text, words)
            if words >= CANNED_MIN_WORDS and (
                self.common is None
                or _rank(self.opened[text], words, text)
                < _rank(self.opened[self.common], self.words_of[self.common], self.common)
            ):
                self.common = text
        elif text in self.owner:
            self._track(prompt, text, words)

    def add_pair(self, prompt: Hashable, first: Hashable, second: Hashable, words: int) -> None:
        """One twin pair of ``prompt``: the two draws' text keys and the first's length."""
        _check_int("words", words, 0)
        self.pairs += 1
        if first != second:
            self.base += pair_evidence(None)
            return
        self.identical += 1
        self.base += pair_evidence(words, canned=True)
        self._track(prompt, first, words)
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
        common = self.opened[self.common] if self.common is not None else 0
        prompts = len(self.first_of)
        return common, common >= CANNED_MIN_PROMPTS and common >= CANNED_SHARE * prompts

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
            prompts=len(self.first_of),
            common_prompts=common_prompts,
            common_words=self.words_of[self.common] if self.common is not None else 0,
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
