"""What each protocol is, in one table: how many responses a trial shows, the chance a guess
scores, what a pick may be, what the options are called and which side fills each position.

Every module that needs one of these facts reads it here instead of branching on the
protocol's name (``3 if triangle else 2``, ``OPTION_COUNT``). Pure data; imports nothing of
blindtest's, so any module may import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PAIR",
    "PREFERENCE",
    "PREFERENCE_PICKS",
    "PROTOCOLS",
    "TRIANGLE",
    "Protocol",
    "protocol_of",
]

#: A preference pick: the option on the left, the one on the right, or neither.
PREFERENCE_PICKS = ("left", "right", "tie")


@dataclass(frozen=True, slots=True)
class Protocol:
    """The facts of one protocol.

    ``chance`` is the probability that a judge who sees no difference scores a trial: picks
    the odd one of three (triangle), gives option 1 the nickname consistent with the true
    mapping (pair), prefers A among untied comparisons (preference).
    """

    name: str
    #: Responses shown per trial (the slots of a trial).
    options: int
    chance: float
    #: What a pick may be: option numbers (triangle), a nickname (pair: any text), or a word.
    picks: tuple[int | str, ...] | None
    #: The options as a judge sees them, in position order.
    labels: tuple[str, ...]
    #: Whether the test is two-sided (inverted nicknames are discrimination too).
    two_sided: bool
    #: The arrangement entry field that decides the slot layout.
    layout_key: str

    def slot_sides(self, entry: Mapping[str, Any]) -> tuple[str, ...]:
        """The side ("A"/"B") at positions 1..options for one arrangement entry."""
        control = entry.get("control")
        if control is not None:  # a hidden control: every position from one side
            return (str(control),) * self.options
        if self.layout_key == "doubled":
            doubled = str(entry["doubled"])
            odd = _other(doubled)
            return tuple(
                odd if position == entry["odd_position"] else doubled
                for position in range(1, self.options + 1)
            )
        left = str(entry["left"])
        return (left, _other(left))


def _other(side: str) -> str:
    return "B" if side == "A" else "A"


TRIANGLE = Protocol(
    name="triangle",
    options=3,
    chance=1 / 3,
    picks=(1, 2, 3),
    labels=("1", "2", "3"),
    two_sided=False,
    layout_key="doubled",
)
PAIR = Protocol(
    name="pair",
    options=2,
    chance=0.5,
    picks=None,
    labels=("1", "2"),
    two_sided=True,
    layout_key="left",
)
PREFERENCE = Protocol(
    name="preference",
    options=2,
    chance=0.5,
    picks=PREFERENCE_PICKS,
    labels=("left", "right"),
    two_sided=True,
    layout_key="left",
)

PROTOCOLS: Mapping[str, Protocol] = {p.name: p for p in (TRIANGLE, PAIR, PREFERENCE)}


def protocol_of(design: Mapping[str, Any]) -> Protocol:
    """The protocol a design runs."""
    return PROTOCOLS[str(design["protocol"])]
