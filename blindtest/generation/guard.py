"""The deterministic-side guard: twin pairs of a triangle's doubled side, the e-process
that tells a deterministic endpoint from short answers colliding by chance, and what to say
of either."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
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

#: The deterministic-side guard. A side that answers deterministically (temperature ignored
#: or 0, or a cache) gives its two triangle draws the same text, and the triangle degenerates
#: into spot-the-twin: the odd response is found by equality, and the run measures that tell,
#: not the models. Short answers at a real temperature collide by chance ("Yes", "Paris."),
#: so the count of identical pairs alone cannot tell the two apart; their length can. The
#: guard keeps, per side, a likelihood ratio (an e-process) over that side's twin pairs:
#:
#: * H0, the side samples: a second independent draw reproduces a given answer of ``n`` words
#:   with probability at most ``q(n)`` (:func:`chance_of_repeat`): 1 up to ``FREE_WORDS``
#:   words (a short answer may well be the only likely one), then ``AGREE_PER_WORD`` per
#:   further word, and never below ``RAREST_REPEAT`` (a prompt with one right wording, a
#:   quotation or a listing, repeats at any temperature, so no single pair counts for more);
#: * H1, the side is deterministic: its pairs come back identical, but for a share
#:   ``DETERMINISTIC_MISS`` (a seeded server's best effort, a cache miss).
#:
#: An identical pair of ``n`` words multiplies the ratio by ``(1 - miss) / q(n)``, a pair that
#: differs by ``miss``. Under H0 each factor has expectation at most 1, so by Ville's
#: inequality a sampling side reaches ``STOP_EVIDENCE`` with probability at most its inverse
#: however often it is checked. Worked figures: one-word answers never count (the factor is
#: 0.9), however many collide; five identical pairs of 50 words or more reach ~10^19.7 (a
#: 10-trial design with one deterministic side is caught); one identical pair never reaches it
#: (at most 0.9 x 10^4), nor do two among a side's five pairs (10^7.9 x 10^-3).
FREE_WORDS = 5
AGREE_PER_WORD = 0.8
RAREST_REPEAT = 1e-4
DETERMINISTIC_MISS = 0.1
STOP_EVIDENCE = 1e6
#: Judged once this many twin pairs are in (or all of them, in a smaller design): a workload
#: whose first prompts have one right wording does not stop the run before the rest speak.
MIN_PAIRS = 10


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


def chance_of_repeat(words: int) -> float:
    """H0's bound on the chance that a sampling side's second draw repeats an answer of
    ``words`` words exactly (see ``STOP_EVIDENCE``)."""
    if words <= FREE_WORDS:
        return 1.0
    return max(RAREST_REPEAT, AGREE_PER_WORD ** (words - FREE_WORDS))


def pair_evidence(words: int | None) -> float:
    """log10 of the factor one twin pair puts on the deterministic-side ratio: ``words`` is
    the identical answer's length, None a pair that differs."""
    if words is None:
        return math.log10(DETERMINISTIC_MISS)
    return math.log10((1 - DETERMINISTIC_MISS) / chance_of_repeat(words))


@dataclass
class SideCollisions:
    """One side's twin pairs: how many are fetched, how many came back identical, the longest
    identical answer (words) and log10 of the deterministic-side ratio (``pair_evidence``)."""

    pairs: int = 0
    identical: int = 0
    longest: int = 0
    evidence: float = 0.0

    def take(self, words: int | None) -> None:
        self.pairs += 1
        if words is not None:
            self.identical += 1
            self.longest = max(self.longest, words)
        self.evidence += pair_evidence(words)


@dataclass
class DrawCollisions:
    """Triangle trials whose two same-model draws are both fetched (``pairs``) and of those,
    the ones that came back identical, whitespace aside (``identical``); per doubled side,
    the same and the evidence that it answers deterministically (``sides``).

    Fed each slot as it is first answered (:meth:`take`): the first twin of a trial leaves
    a hash of its text until the second arrives, so the guard costs O(1) per response and a
    few bytes per trial (``odd``: each trial's odd position, 0 outside a triangle).
    """

    odd: bytearray
    trials: int
    position: Callable[[int], int | None]
    pairs: int = 0
    identical: int = 0
    first: dict[int, tuple[int, int]] = field(default_factory=dict)
    sides: dict[str, SideCollisions] = field(
        default_factory=lambda: {side: SideCollisions() for side in TWO_SIDES}
    )

    @classmethod
    def empty(cls, design: DesignRecord) -> DrawCollisions:
        count = len(design["arrangement"])
        odd = bytearray(count)
        if protocol_of(design).repeats_side:  # the odd position says which two are twins
            odd = bytearray(int(p) for p in _arrangement_values(design, "odd_position"))
        sides = {side: SideCollisions() for side in candidates_of(design)}
        return cls(odd, count, trial_positions(design), sides=sides)

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
        """Count a trial once both of its twin draws are answered (call once per slot, when
        it is first answered)."""
        position = self.position(trial)
        if position is None or not self.odd[position] or slot == self.odd[position]:
            return
        text = " ".join(original_text(row).split())
        digest = hash(text)
        other = self.first.get(position)
        if other is None:
            self.first[position] = (slot, digest)
        elif other[0] != slot:
            del self.first[position]
            self.pairs += 1
            same = _same(other[1], digest)
            self.identical += same
            side = self.sides.get(str(row.get("side")))
            if side is not None:
                side.take(count_words(text) if same else None)

    def deterministic_sides(self) -> list[str]:
        """The sides whose twin pairs show them deterministic (``STOP_EVIDENCE``), once
        enough pairs are in to judge."""
        if self.pairs < min(MIN_PAIRS, self.trials):
            return []
        bar = math.log10(STOP_EVIDENCE)
        return [name for name, side in self.sides.items() if side.evidence >= bar]

    def deterministic(self) -> bool:
        """A side's identical twin pairs too long and too many to be chance."""
        return bool(self.deterministic_sides())


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


def deterministic_endpoint_error(design: DesignRecord, collisions: DrawCollisions) -> CheckFailed:
    names = collisions.deterministic_sides()
    counts = "; ".join(
        _side_count(name, collisions.sides[name], design["models"][name]["model"]) for name in names
    )
    endpoint = "the endpoint is" if len(names) == 1 else "the endpoints are"
    return CheckFailed(
        f"{collisions.identical} {_over(collisions)} got two identical answers from the same "
        f"model: {counts}; answers that long do not repeat by chance, so {endpoint} "
        "deterministic (temperature ignored or 0, or a cache), the odd response is found by "
        "the identical pair without reading, and the run would measure that, not the models; "
        f"use {option('protocol', 'pair')} for this endpoint"
    )


def collision_notice(collisions: DrawCollisions) -> str | None:
    """What to say when some same-model draws collide but no side is shown deterministic
    (short answers at a real temperature): the count, and what it does to the test."""
    if not collisions.identical or collisions.deterministic():
        return None
    k = collisions.identical
    trials = "trial" if k == 1 else "trials"
    longest = max(side.longest for side in collisions.sides.values())
    if longest > 2 * FREE_WORDS:
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
