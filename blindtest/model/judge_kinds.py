"""The one registry of judge kinds: every ``bt-judge --judge`` choice (``human``, ``web``,
``bot:KIND``, ``llm:MODEL``, ``replay:PATH``, ``verdicts:PATH``), the module that makes it,
and the picks contract each kind of record carries (``PICK_KINDS``: the pool it is analysed
in, how many records one judge writes per trial).

A new judge kind is one module and one entry here. The module names a function
``judge_kind(name: str) -> blindtest.judging.driver.JudgeKind`` that makes the kind from its
``--judge`` value; :func:`blindtest.judging.driver.judge_kind` loads it only when that kind is
chosen, so listing the kinds (``bt-judge --help``) imports no judge, and this module, which the
picks contract and the analysis read, imports no part of the judge stage.

Pure data: no click, no file opened.
"""

from __future__ import annotations

from dataclasses import dataclass

from blindtest.errors import BadInput

__all__ = ["BOT_KINDS", "JUDGE_KINDS", "KINDS", "PICK_KINDS", "Kind", "judge_help", "kind_of"]

#: The tell bots ``--judge bot:KIND`` offers and ``bt-audit`` replays
#: (:mod:`blindtest.model.bots`).
BOT_KINDS = ("length", "duplicate", "random")

_SWAP = (
    "pass 1 is the trial as shown; pass 2 the same comparison with the two options' positions "
    "swapped, its pick given in the trial's own order"
)


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of judge.

    ``name`` is the ``--judge`` value, or what comes before its colon (``llm`` for
    ``llm:MODEL``; ``arg`` names what follows, ``choices`` lists it when it is one of a few).
    ``records_as`` is the ``judge_kind`` its picks carry (None: the copied judge's own). An
    entry whose ``name`` is its ``records_as`` also says that record kind's contract: ``pool``
    (kinds in different pools are never analysed together) and ``passes`` (how many records
    one judge of this kind writes per trial, told apart by ``"pass"``, 1 when the field is
    absent; ``passes_mean`` says what they are; a correction is something else: it replaces a
    record of the same pass). ``module`` makes the kind (None: picks another tool wrote, read
    with ``bt-judge --check``, never a ``--judge`` choice); ``says`` is its words in
    ``--help``.
    """

    name: str
    records_as: str | None
    module: str | None = None
    says: str = ""
    arg: str | None = None
    choices: tuple[str, ...] = ()
    pool: str = ""
    passes: int = 1
    passes_mean: str = ""

    @property
    def offered(self) -> tuple[str, ...]:
        """The ``--judge`` values this kind answers to, as ``--help`` lists them."""
        if self.module is None:
            return ()
        if self.choices:
            return tuple(f"{self.name}:{choice}" for choice in self.choices)
        return (f"{self.name}:{self.arg}",) if self.arg is not None else (self.name,)


_J = "blindtest.judging"
_VERDICTS = (
    "blind-panel verdicts imported for a design with candidates, one --judge-id per run; "
    "left and right are options 1 and 2 as trials.jsonl shows each comparison"
)

#: Every kind of judge, one line each, in the order ``--help`` lists them: name, records as,
#: module, words, argument, choices, pool, passes, what the passes mean.
# fmt: off
REGISTRY = (
    Kind("human", "human", f"{_J}.terminal.session", "a person in this terminal", pool="people"),
    Kind("web", "human", f"{_J}.web.server", "a person on a local web page"),
    Kind("bot", "bot", f"{_J}.bot_judge", "a tell bot", "KIND", BOT_KINDS, pool="bots"),
    Kind("llm", "llm", f"{_J}.llm.judge", "a model at --judge-url", "MODEL", (), "llm", 2, _SWAP),
    Kind("replay", None, f"{_J}.replay", "another run's picks, copied", "PATH"),
    Kind("verdicts", "external", f"{_J}.verdicts", _VERDICTS, "PATH"),
    Kind("external", "external", pool="people"),  # picks another tool wrote: bt-judge --check
)
# fmt: on
KINDS = {kind.name: kind for kind in REGISTRY}
#: The ``judge_kind`` values a pick record may carry (picks.schema.json), and their contract.
PICK_KINDS = {kind.name: kind for kind in REGISTRY if kind.name == kind.records_as}
#: Every ``--judge`` value, as ``--help`` and an unknown kind's message list them.
JUDGE_KINDS = tuple(value for kind in REGISTRY for value in kind.offered)


def kind_of(value: str) -> Kind:
    """The registered kind a ``--judge`` value names (``llm:gpt-4o``: ``llm``); ``BadInput``
    listing every kind when none does."""
    name, colon, rest = value.partition(":")
    kind = KINDS.get(name)
    fits = kind is not None and kind.module is not None
    if fits and kind is not None:
        fits = (kind.arg is not None) == bool(colon) and (not kind.choices or rest in kind.choices)
    if not fits or kind is None:
        raise BadInput(f"unknown judge {value!r}; use one of {', '.join(JUDGE_KINDS)}")
    return kind


def judge_help() -> str:
    """``--judge``'s help: each kind in its own words."""
    parts = []
    for kind in REGISTRY:
        if kind.module is None:
            continue
        label = f"{kind.name}:{kind.arg}" if kind.arg is not None else kind.name
        also = f": {', '.join(kind.choices)}" if kind.choices else ""
        parts.append(f"{label} ({kind.says}{also})")
    return "Who judges: " + "; ".join(parts) + "."
