"""The deterministic-side guard: twin pairs of a triangle's doubled side, the e-process
that tells a deterministic endpoint from short answers colliding by chance, and what to say
of either."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from blindtest import reportfmt
from blindtest.errors import CheckFailed, option
from blindtest.model.candidates import TWO_SIDES, candidates_of
from blindtest.model.normalize import count_words
from blindtest.model.protocols import protocol_of
from blindtest.model.slots import SlotState, original_text
from blindtest.rundir.artifacts import Columns
from blindtest.rundir.types import DesignRecord
from blindtest.stats.determinism import (
    AGREE_PER_WORD,
    CANNED_MIN_PROMPTS,
    DETERMINISTIC_MISS,
    MIN_PAIRS,
    RAREST_REPEAT,
    STOP_EVIDENCE,
    BoundedDeterminismTally,
    chance_of_repeat,
    pair_evidence,
)

__all__ = [
    "AGREE_PER_WORD",
    "CANNED_MIN_PROMPTS",
    "DETERMINISTIC_MISS",
    "MIN_PAIRS",
    "RAREST_REPEAT",
    "STOP_EVIDENCE",
    "DrawCollisions",
    "SideCollisions",
    "chance_of_repeat",
    "collision_notice",
    "deterministic_endpoint_error",
    "identical_draws",
    "pair_evidence",
    "text_key",
    "trial_positions",
]

#: The deterministic-side guard. A side that answers deterministically (temperature ignored
#: or 0, or a cache) gives its two triangle draws the same text, and the triangle degenerates
#: into spot-the-twin: the odd response is found by equality, and the run measures that tell,
#: not the models. Per doubled side the guard keeps :mod:`blindtest.stats.determinism`'s two
#: checks (:class:`~blindtest.stats.determinism.BoundedDeterminismTally`: memory grows with
#: the prompts, not the trials):
#:
#: * determinism, an e-process over the side's twin pairs: an identical pair of ``n`` words
#:   is evidence weighed by the chance that a sampling side repeats it (1 for a one-word
#:   answer, then ``AGREE_PER_WORD`` per further word, never below ``RAREST_REPEAT``), a pair
#:   that differs counts against; by Ville's inequality a sampling side reaches
#:   ``STOP_EVIDENCE`` with probability at most its inverse. A deterministic side answering
#:   8-word sentences is caught at 10 pairs; one-word answers never count;
#: * prompt independence, a count: one text of two or more words opening at least
#:   ``CANNED_MIN_PROMPTS`` of the side's prompts and at least half of them (a gateway's canned
#:   sentence). Its collisions are no evidence in the first check (canned texts repeat at
#:   any temperature), so each check says that it fired.
#:
#: A collision notice below this many words says that answers this short cannot tell a
#: deterministic endpoint from chance.
SHORT_ANSWER_WORDS = 10


def _same(first: object, second: object) -> bool:
    """Whether two draws came back identical, whitespace aside (by digests of their texts)."""
    return first == second


def _arrangement_values(design: DesignRecord, key: str) -> Iterator[Any]:
    arrangement: Any = design["arrangement"]
    if isinstance(arrangement, Columns):
        return (arrangement.value(i, key) for i in range(len(arrangement)))
    return (entry.get(key) for entry in arrangement)


def trial_positions(design: DesignRecord) -> Callable[[int], int | None]:
    """A trial number's position in the arrangement (None: no such trial); trials numbered
    1..n in order, as bt-design writes them, need no table."""
    count = len(design["arrangement"])
    numbers = _arrangement_values(design, "trial")
    if all(number == position for position, number in enumerate(numbers, start=1)):
        return lambda trial: trial - 1 if type(trial) is int and 0 < trial <= count else None
    table: dict[int, int] = {}
    for position, number in enumerate(_arrangement_values(design, "trial")):
        table.setdefault(number, position)
    return table.get


def _prompt_numbers(design: DesignRecord) -> Callable[[int], int]:
    """A trial position's prompt as the number the tallies keep. A design read by columns
    (bt-generate's) numbers it by its place in the design's prompts, from the index the fetch
    builds anyway to find a prompt's text (the same int objects: nothing new per prompt); a
    design held as lists, or a prompt not in the columns, is numbered in the order seen."""
    arrangement: Any = design["arrangement"]
    prompts: Any = design.get("prompts")
    numbers: dict[Hashable, int] = {}
    after = len(prompts) if isinstance(prompts, Columns) else 0

    def number_of(position: int) -> int:
        if isinstance(arrangement, Columns):
            prompt_id = arrangement.value(position, "prompt_id")
        else:
            prompt_id = arrangement[position].get("prompt_id")
        if isinstance(prompts, Columns):
            try:
                return prompts.position("id", prompt_id, last=True)
            except KeyError:
                pass
        number = numbers.get(prompt_id)
        if number is None:
            number = numbers[prompt_id] = after + len(numbers)
        return number

    return number_of


def text_key(text: str) -> int:
    """What the guard keeps of a text: 64 bits of its BLAKE2b digest. Python's ``hash`` is
    as wide but salted per process, and ties between equally common texts are broken by the
    key: with it, which text a refusal quotes changed from one run of bt-generate to the next."""
    data = text.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


@dataclass
class SideCollisions:
    """One doubled side's checks (:class:`BoundedDeterminismTally`) and, for the message, the
    text of its most common answer (only that one text is kept)."""

    tally: BoundedDeterminismTally = field(default_factory=BoundedDeterminismTally)
    common_text: str = ""

    @property
    def pairs(self) -> int:
        return self.tally.pairs

    @property
    def identical(self) -> int:
        return self.tally.identical

    @property
    def evidence(self) -> float:
        return self.tally.base + self.tally.extra_total

    @property
    def longest(self) -> int:
        """The longest identical answer that is not a canned text (words)."""
        return self.tally.result().longest

    def take(self, prompt: int, digest: int, text: str, words: int) -> None:
        """One answer of the side; remember its text when it is the side's most common."""
        before = self.tally.common
        self.tally.add_answer(prompt, digest, words)
        if self.tally.common == digest and before != digest:
            self.common_text = text


@dataclass
class DrawCollisions:
    """Triangle trials whose two same-model draws are both fetched (``pairs``) and of those,
    the ones that came back identical, whitespace aside (``identical``); per doubled side,
    its two checks (``sides``).

    Fed each slot as it is first answered (:meth:`take`): the first twin of a trial leaves
    a hash of its text until the second arrives, so the guard costs O(1) per response and a
    few bytes per pending trial, plus what each side's tally keeps per prompt (``odd``: each
    trial's odd position, 0 outside a triangle).
    """

    odd: bytearray
    trials: int
    position: Callable[[int], int | None]
    prompt_of: Callable[[int], int] = lambda position: position
    pairs: int = 0
    identical: int = 0
    first: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    sides: dict[str, SideCollisions] = field(
        default_factory=lambda: {side: SideCollisions() for side in TWO_SIDES}
    )

    @classmethod
    def empty(cls, design: DesignRecord) -> DrawCollisions:
        count = len(design["arrangement"])
        odd = bytearray(count)
        planned: dict[str, int] = {}
        if protocol_of(design).repeats_side:  # the odd position says which two are twins
            odd = bytearray(int(p) for p in _arrangement_values(design, "odd_position"))
            for side in _arrangement_values(design, "doubled"):
                planned[str(side)] = planned.get(str(side), 0) + 1
        sides = {
            side: SideCollisions(BoundedDeterminismTally(planned_pairs=planned.get(side, 0)))
            for side in candidates_of(design)
        }
        return cls(odd, count, trial_positions(design), _prompt_numbers(design), sides=sides)

    @classmethod
    def for_design(cls, design: DesignRecord, state: SlotState) -> DrawCollisions:
        collisions = cls.empty(design)
        for key in state.generated:
            collisions.add(state, key)
        return collisions

    def add(self, state: SlotState, key: tuple[int, int]) -> None:
        """:meth:`take` the row ``state`` holds for slot ``key``, if it is an answer."""
        row = state.generated.get(key)
        if row is not None and row["status"] == "ok":
            self.take(key[0], key[1], row)

    def take(self, trial: int, slot: int, row: Mapping[str, Any]) -> None:
        """Count a side's answer, and a trial once both of its twin draws are answered (call
        once per slot, when it is first answered)."""
        position = self.position(trial)
        if position is None or not self.odd[position]:
            return
        text = " ".join(original_text(row).split())
        digest, words = text_key(text), count_words(text)
        prompt = self.prompt_of(position)
        side = self.sides.get(str(row.get("side")))
        if side is not None:
            side.take(prompt, digest, text, words)
        if slot == self.odd[position]:
            return
        other = self.first.get(position)
        if other is None:
            self.first[position] = (slot, digest, words)
        elif other[0] != slot:
            del self.first[position]
            self.pairs += 1
            self.identical += _same(other[1], digest)
            if side is not None:
                side.tally.add_pair(prompt, other[1], digest, other[2])

    def fired(self, check: str) -> list[str]:
        """The sides for which ``check`` ("deterministic" or "prompt_independent") fired."""
        return [name for name, side in self.sides.items() if check in side.tally.fired()]

    def deterministic_sides(self) -> list[str]:
        """The sides whose twin pairs show them deterministic (``STOP_EVIDENCE``), once
        enough pairs are in to judge: ``MIN_PAIRS`` of the side's own (or all it has) and as
        many of the run's (or all of them), so that a stop speaks for both sides at once."""
        if self.pairs < min(MIN_PAIRS, self.trials):
            return []
        return self.fired("deterministic")

    def deterministic(self) -> bool:
        """A side's identical twin pairs too long and too many to be chance."""
        return bool(self.deterministic_sides())

    def refused(self) -> bool:
        """Either check fired for a side: the run stops (:func:`deterministic_endpoint_error`)."""
        return self.deterministic() or bool(self.fired("prompt_independent"))


def identical_draws(design: DesignRecord, state: SlotState) -> int:
    """Triangle trials whose two same-model draws came back identical (whitespace aside)."""
    return DrawCollisions.for_design(design, state).identical


def _over(collisions: DrawCollisions) -> str:
    if collisions.pairs == collisions.trials:
        return f"of all {collisions.trials} triangle trials"
    return f"of the {collisions.pairs} triangle trials fetched (of {collisions.trials})"


def _side_count(name: str, side: SideCollisions, model: str) -> str:
    return (
        f"side {name} ({model}) in {side.identical} of its {side.pairs}, up to "
        f"{reportfmt.count(side.longest, 'word')} long"
    )


def _quoted(text: str, limit: int = 80) -> str:
    return '"' + (text if len(text) <= limit else text[: limit - 3].rstrip() + "...") + '"'


def _deterministic_words(design: DesignRecord, collisions: DrawCollisions) -> str:
    names = collisions.deterministic_sides()
    counts = "; ".join(
        _side_count(name, collisions.sides[name], design["models"][name]["model"]) for name in names
    )
    endpoint = "the endpoint is" if len(names) == 1 else "the endpoints are"
    return (
        f"{collisions.identical} {_over(collisions)} got two identical answers from the same "
        f"model: {counts}; the determinism check fired (identical draws weighed by the chance "
        f"of a collision): answers that long do not repeat by chance, so {endpoint} "
        "deterministic (temperature ignored or 0, or a cache)"
    )


def _independent_words(design: DesignRecord, collisions: DrawCollisions) -> str:
    said = []
    for name in collisions.fired("prompt_independent"):
        side = collisions.sides[name]
        found = side.tally.result()
        said.append(
            f"side {name} ({design['models'][name]['model']}) gave the same answer, "
            f"{_quoted(side.common_text)} ({reportfmt.count(found.common_words, 'word')}), "
            f"to {found.common_prompts} of the {found.prompts} prompts it answered"
        )
    return (
        "; ".join(said) + "; the prompt-independence count fired: answers that do not depend "
        "on the prompt (a canned refusal, an error text or a gateway's placeholder) repeat at "
        "any temperature"
    )


def deterministic_endpoint_error(design: DesignRecord, collisions: DrawCollisions) -> CheckFailed:
    """Why the run stops: which of the two checks fired, for which side, and what to do."""
    said = []
    if collisions.deterministic_sides():
        said.append(_deterministic_words(design, collisions))
    if collisions.fired("prompt_independent"):
        said.append(_independent_words(design, collisions))
    fix = (
        f"use {option('protocol', 'pair')} for this endpoint"
        if collisions.deterministic_sides()
        else "look at what the endpoint answers (responses.jsonl) before running again"
    )
    return CheckFailed(
        "; and ".join(said) + "; the odd response is found by the identical pair without "
        f"reading, and the run would measure that, not the models; {fix}"
    )


def collision_notice(collisions: DrawCollisions) -> str | None:
    """What to say when some same-model draws collide but no side is refused (short answers
    at a real temperature): the count, and what it does to the test."""
    if not collisions.identical or collisions.refused():
        return None
    k = collisions.identical
    trials = "trial" if k == 1 else "trials"
    longest = max(side.longest for side in collisions.sides.values())
    if longest > SHORT_ANSWER_WORDS:
        why = (
            f"the longest {reportfmt.count(longest, 'word')}: chance, or prompts with one right "
            "wording"
        )
    elif k == collisions.pairs and k > 1:
        why = "every one; answers this short cannot tell a deterministic endpoint from chance"
    else:
        why = "short answers collide by chance"
    return (
        f"note: {k} {_over(collisions)} got two identical answers from the same model ({why}); "
        f"in {'that' if k == 1 else 'those'} {k} {trials} the odd one can be found by the "
        "identical pair without reading, and bt-audit's duplicate spotter will do so and "
        "report it as a tell"
    )
