"""What each protocol is, in one table: how many responses a trial shows, the chance a guess
scores, what a pick may be and how it scores, what a judge is asked, what the options are
called, which side fills each position, and which options of the other stages apply.

Every module that needs one of these rules reads it here instead of branching on the
protocol's name (``3 if triangle else 2``, ``if protocol == "preference"``): a new protocol is
one more `Protocol` below, and the modules that show a pick form key their screens by its
``pick_kind`` (three today), not by its name. Pure data and pure functions; imports nothing of
blindtest's, so any module may import it. Two rules stay with their layer, each in one table
keyed by the protocol's name: the analysis entry point (``analysis.report.ANALYSES``, which
imports the whole analysis) and the statistics (``blindtest.stats`` takes the protocol's name
as the name of its model, and sits below this module).
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from blindtest.model.candidates import comparison_sides

__all__ = [
    "BOTH_BAD",
    "DEFAULT_PROTOCOL",
    "PAIR",
    "PREFERENCE",
    "PREFERENCE_PICKS",
    "PROTOCOLS",
    "TRIANGLE",
    "JudgePrompt",
    "PickKind",
    "Protocol",
    "protocol_of",
    "refuse_abstention",
]

#: A preference pick: the option on the left, the one on the right, or neither.
PREFERENCE_PICKS = ("left", "right", "tie")

#: The judge says both responses are bad (a protocol that ``prefers``): an abstention, never a
#: tie (a tie in Davidson's model says the two are equally strong, which "both bad" does not).
#: It is a pick record of its own; the picks reader keeps it out of the picks it hands on for
#: tallying (``PicksFile.picks``) and counts it apart (``PicksFile.abstentions``), and scoring
#: one refuses, so no estimate can fold it into the wins, losses or ties unawares.
BOTH_BAD = "both_bad"

#: What a pick is: an option's position (1..options), a nickname for option 1, or a side word
#: (`PREFERENCE_PICKS`). The screens (terminal, web) key their answer forms by it.
PickKind = Literal["position", "nickname", "side"]

#: How an LLM judge is asked the trials: each alone, as the turns of one conversation that
#: holds its earlier answers (pair: the nicknames must stay the same), or in one or two
#: passes with the positions swapped (preference).
Asking = Literal["alone", "conversation", "passes"]


@dataclass(frozen=True, slots=True, eq=False)
class JudgePrompt:
    """What an LLM judge of a protocol is sent and must answer; `blindtest.judging.llm.judge`
    builds the requests and the verdict's JSON schema from it (the common fields, confidence,
    justification and identity leakage, are its own). Compared by identity, so a `Protocol`
    stays hashable although the schema pieces are dicts."""

    #: The bundled templates its prompts are made from, in order (``judge_<name>.txt``; their
    #: SHA-256 is part of the judge's settings).
    templates: tuple[str, ...]
    asking: Asking
    #: The verdict field that holds the pick (a position, option 1's nickname, A/B/TIE).
    verdict: str
    #: The JSON-schema properties of the verdict's own fields, before the common ones, and
    #: after them.
    fields: Mapping[str, Any]
    required: tuple[str, ...]
    after: Mapping[str, Any] = dataclasses.field(default_factory=dict)


#: How one pick scores against its arrangement entry: True when it counts for the test
#: (found the odd one; consistent with option 1 = ``first``; prefers A), False when it counts
#: against, None when it leaves the test (a tie, a hidden control).
Tally = Callable[[Mapping[str, Any], "int | str", "str | None"], "bool | None"]


@dataclass(frozen=True, slots=True)
class Protocol:
    """The facts and rules of one protocol.

    ``chance`` is the probability that a judge who sees no difference scores a trial: picks
    the odd one of three (triangle), gives option 1 the nickname consistent with the true
    mapping (pair), prefers A among untied comparisons (preference).
    """

    name: str
    #: The name of its statistical model in `blindtest.stats` (power rows, similarity, the
    #: exact tests): bt-plan asks stats for this model's power.
    model: str
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
    pick_kind: PickKind
    #: How a pick scores (see `Tally`); `tally` calls it with the trial's entry.
    scores: Tally
    #: What an LLM judge is sent and answers.
    llm: JudgePrompt
    #: The judge's question the design writes when --question is not given.
    question: str
    #: The task in the judge's help text (terminal), one paragraph.
    task: str
    #: The protocol as a page title or a judge's session line names it.
    title: str
    #: What the terminal adds when a typed answer is not one ("; guess if unsure").
    unsure: str
    #: The chance in words, as the diagnostics and the report page write it.
    chance_words: str
    #: The plan's header: "exact binomial against chance {plan_chance}".
    plan_chance: str
    #: What a scored pick is called: in a power table's "reject at" column, and in the
    #: report's technical figures ("12 of 20 correct").
    unit: str
    unit_words: str
    #: bt-plan's default alternatives (Pc, or a win rate) when --pc is not given.
    default_pcs: tuple[str, ...]
    #: Terminal columns from which the options stand side by side (about 65 each).
    side_by_side_from: int
    #: Two of the responses shown come from one side: identical same-side responses give the
    #: answer away (refused at temperature 0, checked by the duplicate spotter).
    repeats_side: bool
    #: A sequential (e-process) design is defined for it.
    sequential: bool
    #: A proportion of discriminators (pd) is defined: --pd grids, --similarity, d'.
    similarity: bool
    #: The judge names which side is better rather than telling the two apart: the result is
    #: A's win rate with ties left out (Wilson-gated verdict), the judge gives a reason and may
    #: answer extra questions, a design may hide controls, an LLM judge may read a template
    #: with prompt fields and swap positions.
    prefers: bool

    def slot_sides(self, entry: Mapping[str, Any]) -> tuple[str, ...]:
        """The side ("A"/"B") at positions 1..options for one arrangement entry."""
        control = entry.get("control")
        if control is not None:  # a hidden control: every position from one side
            return (str(control),) * self.options
        planted = entry.get("planted")
        if planted is not None:  # the champion's answer and a copy made from it
            return (str(planted["side"]),) * self.options
        if self.layout_key == "doubled":
            doubled = str(entry["doubled"])
            odd = _other(doubled)
            return tuple(
                odd if position == entry["odd_position"] else doubled
                for position in range(1, self.options + 1)
            )
        return comparison_sides(entry)  # names both when the design has candidates

    @property
    def alternative(self) -> Literal["greater", "two-sided"]:
        """The alternative of the exact binomial test against ``chance``."""
        return "two-sided" if self.two_sided else "greater"

    def tally(
        self, entry: Mapping[str, Any], pick: int | str, first: str | None = None
    ) -> bool | None:
        """Whether ``pick`` counts for the test on the trial of ``entry`` (None: left out).
        ``first`` is the nickname taken to mean A (pair)."""
        return self.scores(entry, pick, first)

    def pick_problem(self, pick: int | str) -> str | None:
        """Why ``pick`` is out of range for the protocol, or None when it is in range."""
        if self.pick_kind == "position":
            # bool is an int in Python, but JSON true is not a position; 2.0 is not written by
            # any judge that means 2.
            if type(pick) is int and 1 <= pick <= self.options:
                return None
            return (
                f"pick {_shown(pick)} is out of range for a {self.name} run "
                f"({_either(self.labels)})"
            )
        if self.pick_kind == "side":
            if pick in PREFERENCE_PICKS or (self.prefers and pick == BOTH_BAD):
                return None
            allowed = (*PREFERENCE_PICKS, BOTH_BAD) if self.prefers else PREFERENCE_PICKS
            return f"pick {_shown(pick)} is out of range for a {self.name} run ({_either(allowed)})"
        if isinstance(pick, str) and pick and pick not in (*PREFERENCE_PICKS, BOTH_BAD):
            if has_control(pick):
                return f"pick {pick!r} holds a control character; a nickname is a plain word"
            return None
        return (
            f"pick {_shown(pick)} is out of range for a {self.name} run (a nickname for option 1)"
        )


def has_control(text: str) -> bool:
    """True when ``text`` holds a control or format character (Unicode Cc or Cf)."""
    return any(unicodedata.category(ch) in ("Cc", "Cf") for ch in text)


def _shown(value: object) -> str:
    # As the JSON said it: 'fox', 4, 2.0, true.
    return repr(value) if isinstance(value, str) else str(value).lower()


def _either(words: tuple[str, ...]) -> str:
    return f"{', '.join(words[:-1])} or {words[-1]}"


def _other(side: str) -> str:
    return "B" if side == "A" else "A"


def _odd_found(entry: Mapping[str, Any], pick: int | str, _first: str | None) -> bool:
    return bool(pick == entry["odd_position"])


def _consistent(entry: Mapping[str, Any], pick: int | str, first: str | None) -> bool:
    """Pair: whether the nickname given to option 1 follows the mapping ``first`` = A."""
    return (pick == first) == (str(entry["left"]) == "A")


def refuse_abstention(pick: int | str) -> None:
    """Scoring a "both bad" pick is a mistake of the caller: it is an abstention, which the
    picks reader keeps apart (``PicksFile.abstentions``); it must not count as a tie or a side."""
    if pick == BOTH_BAD:
        raise ValueError(
            "a 'both_bad' pick is an abstention, not a preference: leave it out of the tally "
            "(PicksFile.picks does) and count it (PicksFile.abstentions)"
        )


def _prefers_a(entry: Mapping[str, Any], pick: int | str, _first: str | None) -> bool | None:
    refuse_abstention(pick)
    # A hidden control shows one side twice; a planted comparison one answer and its copy.
    if pick == "tie" or "control" in entry or "planted" in entry:
        return None
    left = str(entry["left"])
    return (left if pick == "left" else _other(left)) == "A"


TRIANGLE = Protocol(
    name="triangle",
    model="triangle",
    options=3,
    chance=1 / 3,
    picks=(1, 2, 3),
    labels=("1", "2", "3"),
    two_sided=False,
    layout_key="doubled",
    pick_kind="position",
    scores=_odd_found,
    llm=JudgePrompt(
        templates=("triangle",),
        asking="alone",
        verdict="odd",
        fields={"odd": {"enum": [1, 2, 3]}},
        required=("odd",),
    ),
    question="Which one is different?",
    task="Two of the three responses come from one model and one from the other. "
    "Pick the one that is different. If you are unsure, guess: every trial needs an "
    "answer, and guesses are priced into the analysis.",
    title="triangle test",
    unsure="; guess if unsure",
    chance_words="1/3",
    plan_chance="1/3, one-sided",
    unit="correct",
    unit_words="correct",
    default_pcs=("0.6", "0.7"),
    side_by_side_from=210,
    repeats_side=True,
    sequential=True,
    similarity=True,
    prefers=False,
)
PAIR = Protocol(
    name="pair",
    model="pair",
    options=2,
    chance=0.5,
    picks=None,
    labels=("1", "2"),
    two_sided=True,
    layout_key="left",
    pick_kind="nickname",
    scores=_consistent,
    llm=JudgePrompt(
        templates=("pair_system", "pair_trial"),
        asking="conversation",
        verdict="output_1",
        fields={
            "nicknames": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 2,
                "maxItems": 2,
            },
            "output_1": {"type": "string", "minLength": 1},
        },
        required=("nicknames", "output_1"),
    ),
    question="Which nickname belongs to option 1?",
    task="Option 1 and option 2 come from different models. You give the two models "
    "nicknames at the first trial (that first choice is arbitrary), then say each time "
    "which nickname option 1 carries. What is scored is whether you are consistent.",
    title="pair test",
    unsure="",
    chance_words="50%",
    plan_chance="1/2, two-sided",
    unit="consistent",
    unit_words="consistent with one mapping",
    default_pcs=("0.7", "0.8"),
    side_by_side_from=160,
    repeats_side=False,
    sequential=False,
    similarity=True,
    prefers=False,
)
PREFERENCE = Protocol(
    name="preference",
    model="preference",
    options=2,
    chance=0.5,
    picks=PREFERENCE_PICKS,
    labels=("left", "right"),
    two_sided=True,
    layout_key="left",
    pick_kind="side",
    scores=_prefers_a,
    llm=JudgePrompt(
        templates=("preference",),
        asking="passes",
        verdict="preference",
        fields={"preference": {"enum": ["A", "B", "TIE"]}},
        required=("preference",),
        after={"tie_reason": {"type": ["string", "null"]}},
    ),
    question="Which would you rather use?",
    task="Say which response you would rather use, t for a tie, or x when both are bad (not a "
    "tie: it is counted apart), then give a "
    "one-line reason and answer any extra yes/no questions (a question about each response "
    "is answered for option 1, then option 2). Option 1 is the left one when they stand "
    "side by side.",
    title="preference",
    unsure="",
    chance_words="50%",
    plan_chance="1/2, two-sided",
    unit="wins",
    unit_words="wins",
    default_pcs=("0.7", "0.8"),
    side_by_side_from=160,
    repeats_side=False,
    sequential=False,
    similarity=False,
    prefers=True,
)

PROTOCOLS: Mapping[str, Protocol] = {p.name: p for p in (TRIANGLE, PAIR, PREFERENCE)}
#: The protocol bt-design and bt-plan run when --protocol is not given.
DEFAULT_PROTOCOL = TRIANGLE.name


def protocol_of(design: Mapping[str, Any]) -> Protocol:
    """The protocol a design runs."""
    return PROTOCOLS[str(design["protocol"])]
