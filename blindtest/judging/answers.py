"""The one rule per protocol that turns what a person answered into a pick record: the
terminal session (``judging.terminal.session``) and the judging page (``judging.web.reviewer``)
both read the answer in their own way (keys typed at a prompt, the fields of a form) and both
build the ``Pick`` here, so the same answers give the same record on either screen, checked the
same way and refused in the same words.

What a person answers (``Answered``) is said in the protocol's terms, whatever the screen:

- a position (triangle): the option's label, ``"1"`` .. ``"3"``;
- a side (preference): ``"left"`` (option 1), ``"right"`` (option 2) or ``"tie"``, or
  ``"both_bad"`` (both responses are bad: an abstention, never a tie);
- a nickname (pair): which of the judge's two nicknames option 1 carries, by name or as
  ``"1"`` / ``"2"`` (the first or the second; a nickname can never be a digit), with the two
  nicknames (a pair judge chooses them before the first pick and keeps them: they are checked
  when chosen, ``naming``).

The protocol's ``prefers`` fact decides whether a reason and the design's extra questions
belong to the pick. An extra answer is yes or no: ``True`` / ``False`` or the words
``"yes"`` / ``"no"``, one per question asked once per comparison, ``{"left": ..., "right":
...}`` per question asked of each option (left is option 1).

Pure: no file, no screen, no clock (the caller passes ``at``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from blindtest.model.picks import OPTION_ANSWER_KEYS, ExtraAnswer, JudgeView, Pick, clean_text
from blindtest.model.protocols import BOTH_BAD, PREFERENCE_PICKS, PROTOCOLS, Protocol

__all__ = [
    "COMMAND_KEYS",
    "RESERVED_NICKNAMES",
    "Answered",
    "Refusal",
    "nickname_problem",
    "pick_from_answer",
    "unanswered",
]

#: Keys the terminal's question line gives a meaning of its own (u: take back; v: view; b:
#: back; h: the history of picks; s: skip; x: both bad). A nickname may be none of them on
#: either screen, so nicknames chosen on the page can be typed in the terminal.
COMMAND_KEYS = frozenset({"q", "v", "b", "u", "?", "h", "s", "x"})
#: Words a nickname may not be, because they are keys or preference answers.
RESERVED_NICKNAMES = frozenset({"1", "2", "3", *COMMAND_KEYS, *PREFERENCE_PICKS, BOTH_BAD})

#: What a yes/no answer may be, as a screen passes it.
YesNo = bool | str


@dataclass(frozen=True, slots=True)
class Answered:
    """What a person answered on one trial, in the protocol's terms (see the module)."""

    choice: str
    reason: str | None = None
    #: question -> yes/no (asked once per comparison) or {"left": yes/no, "right": yes/no}
    #: (asked of each option); a missing question is unanswered.
    extras: Mapping[str, YesNo | Mapping[str, YesNo]] = field(default_factory=dict)
    #: A pair judge's two nicknames, in the order chosen.
    nicknames: tuple[str, str] | None = None
    #: Whether the nicknames were chosen with this answer (checked as a new choice), rather
    #: than kept from the judge's earlier picks (taken as they were recorded).
    naming: bool = False


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an answer makes no pick: one sentence the screen shows before asking again, and
    what it is about (``field``: "pick", "nicknames", "reason" or an extra question's words),
    so a page can say it next to that."""

    message: str
    field: str | None = dataclasses.field(default=None, compare=False)


def unanswered(question: str, *, each: bool) -> str:
    """The words for an extra question left unanswered (asked of each option: ``each``)."""
    if each:
        return f"Answer yes or no for the left and the right: {question}"
    return f"Answer yes or no: {question}"


#: The words for a preference answered with no choice.
CHOOSE_SIDE = "Choose left, right, tie or both bad."
#: The words for a reason the design requires and the judge left out.
GIVE_REASON = "Give a one-line reason for your choice."


def nickname_problem(name: str, other: str | None) -> str | None:
    """Why ``name`` cannot be a pair judge's nickname (``other``: the first one, when this is
    the second), or None."""
    if not name:
        return "a nickname cannot be empty"
    if name.lower() in RESERVED_NICKNAMES:
        return f"{name!r} is a key in this session; choose a word such as fox or owl"
    if len(name) > 24:
        return "keep a nickname to 24 characters or fewer"
    if other is not None and name.lower() == other.lower():
        return "the two nicknames must differ"
    return None


def pick_from_answer(
    view: JudgeView, trial: int, judge: str, answered: Answered, *, at: str | None
) -> Pick | Refusal:
    """The pick record ``answered`` makes on ``trial`` of a run shown as ``view``, or the
    ``Refusal`` to show when the answer is incomplete or out of range."""
    rules = PROTOCOLS[view.protocol]
    value = _value(rules, answered)
    if isinstance(value, Refusal):
        return value
    nicknames = None
    if rules.pick_kind == "nickname":
        assert answered.nicknames is not None  # _value refused an answer without them
        nicknames = answered.nicknames
    reason: str | None = None
    answers: dict[str, ExtraAnswer] | None = None
    if rules.prefers:
        reason = clean_text(answered.reason or "") or None
        if view.require_reason and reason is None:
            return Refusal(GIVE_REASON, "reason")
        extras = _extras(view, answered.extras)
        if isinstance(extras, Refusal):
            return extras
        answers = extras or None
    return Pick(
        trial=trial,
        judge=judge,
        pick=value,
        reason=reason,
        at=at,
        nicknames=nicknames,
        answers=answers,
    )


def _value(rules: Protocol, answered: Answered) -> int | str | Refusal:
    """The pick's value for the protocol's kind of pick."""
    choice = answered.choice
    if rules.pick_kind == "position":
        if choice not in rules.labels:
            shown = f"{', '.join(rules.labels[:-1])} or {rules.labels[-1]}"
            return Refusal(f"Pick option {shown}.", "pick")
        return int(choice)
    if rules.pick_kind == "side":
        if choice not in PREFERENCE_PICKS and not (rules.prefers and choice == BOTH_BAD):
            return Refusal(CHOOSE_SIDE, "pick")
        return choice
    nicknames = answered.nicknames
    named = nicknames is not None and choice in nicknames
    if choice not in ("1", "2") and not named:
        return Refusal("Say which nickname option 1 carries.", "pick")
    if nicknames is None:
        return Refusal("Nicknames: give the two models nicknames first.", "nicknames")
    if answered.naming:
        first, second = nicknames
        problem = nickname_problem(first, None) or nickname_problem(second, first)
        if problem is not None:
            return Refusal(f"Nicknames: {problem}.", "nicknames")
    return choice if named else nicknames[int(choice) - 1]


def _extras(
    view: JudgeView, said: Mapping[str, YesNo | Mapping[str, YesNo]]
) -> dict[str, ExtraAnswer] | Refusal:
    """Every extra question the design asks, answered yes or no: those asked of each option
    first, then those asked once per comparison, in the design's order."""
    answers: dict[str, ExtraAnswer] = {}
    for question in view.extra_questions_per_option:
        given = said.get(question)
        each = (
            [_yes_no(given.get(name)) for name in OPTION_ANSWER_KEYS]
            if isinstance(given, Mapping)
            else [None, None]
        )
        left, right = each
        if left is None or right is None:
            return Refusal(unanswered(question, each=True), question)
        answers[question] = {"left": left, "right": right}
    for question in view.extra_questions:
        given = said.get(question)
        answer = None if isinstance(given, Mapping) else _yes_no(given)
        if answer is None:
            return Refusal(unanswered(question, each=False), question)
        answers[question] = answer
    return answers


def _yes_no(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    return {"yes": True, "no": False}.get(value) if isinstance(value, str) else None
